/*
 * mw_cache.h - the sub-master's cache of data already received (thesis
 * 000, section 2.3), so that bytes several tasks share cross the WAN once.
 *
 * The application names the shared ranges of a packed task (its
 * task_blocks hook, struct mw_block).  The main cluster's communication
 * manager keeps a mirror of what the remote sub-master holds (struct
 * mw_cache_tx) and encodes each task as a recipe: bytes of its own sent
 * inline, a block the remote does not hold sent once and stored there, a
 * block it holds named by its slot.  The sub-master (struct mw_cache_rx)
 * rebuilds the task's bytes from the recipe, so workers and task_run see
 * the task as packed.  Both sides stay within the same byte budget: the
 * sender evicts the least recently used blocks and says so in the recipe
 * (DROP), and the receiver refuses a recipe that would store more.  The
 * sender stores into a free slot if there is one, else into the next new
 * one; the receiver holds it to that, so that a lying recipe cannot make
 * it allocate slots beyond the blocks it holds.
 *
 * Recipe: segments, each a 9-byte header (kind, slot, len; little
 * endian) followed by len bytes for INLINE and STORE:
 *   INLINE  bytes of the task                       slot 0
 *   STORE   a block: keep it in slot, and use it
 *   USE     the block kept in slot (len checked)
 *   DROP    forget slot (no bytes of the task)
 * Pure, no MPI: unit-tested.
 */
#ifndef MW_CACHE_H
#define MW_CACHE_H

#include <stddef.h>
#include <stdint.h>

#include "launcher/mw.h"

#define MW_SEG_LEN 9
#define MW_CACHE_MAX_SLOTS (1u << 24)

enum mw_seg_kind { MW_SEG_INLINE = 1, MW_SEG_STORE, MW_SEG_USE, MW_SEG_DROP };

struct mw_cache_entry;

/* The main side's mirror of one remote cluster's cache. */
struct mw_cache_tx {
	size_t budget, used;           /* bytes */
	struct mw_cache_entry *e;      /* entry i is slot i */
	uint32_t ne, cap;
	uint32_t *table;               /* open addressing: entry index + 1, 0 free */
	uint32_t tcap;
	uint32_t free_head;            /* free entries, linked through next; 0 none */
	uint32_t lru, mru;             /* entry index + 1; 0 none */
	uint64_t hits, saved;          /* blocks and bytes not sent again */
};

void mw_cache_tx_init(struct mw_cache_tx *c, size_t budget);
void mw_cache_tx_free(struct mw_cache_tx *c);

/* Appends task (len bytes; its shared ranges b[0..nb-1], sorted by
 * offset, not overlapping) to out as a recipe.  0, -EINVAL when the
 * ranges are not inside the task in order, -ENOMEM. */
int mw_cache_encode(struct mw_cache_tx *c, const void *task, size_t len, const struct mw_block *b, size_t nb,
		    struct mw_buf *out);

/* The sub-master's cache. */
struct mw_cache_rx {
	size_t budget, used;
	struct mw_buf *slot;
	uint32_t nslots;         /* allocated */
	uint32_t opened, live;   /* slots ever stored into; holding a block now */
};

void mw_cache_rx_init(struct mw_cache_rx *c, size_t budget);
void mw_cache_rx_free(struct mw_cache_rx *c);

/* Rebuilds a task from its recipe into out (appended).  0, or -EBADMSG
 * (malformed, an empty or mismatched slot, over the budget) with why in
 * err, or -ENOMEM. */
int mw_cache_decode(struct mw_cache_rx *c, const unsigned char *recipe, size_t len, struct mw_buf *out,
		    char *err, size_t errlen);

#endif
