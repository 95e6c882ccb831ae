/*
 * mw_proto.h - the runtime's messages between master and workers.
 *
 * Every message is one MPI message of MPI_BYTE on the runtime's own
 * communicator: a 24-byte header, little endian, then len payload bytes.
 *
 *   HELLO   worker -> master  aux = prefetch depth wanted; payload = host
 *   TASK    master -> worker  id; payload = the serialized task
 *   RESULT  worker -> master  id; aux = ns spent in task_run; payload = result
 *   STOP    master -> worker  no more tasks; drop what is queued.  To a CM
 *                             aux = MW_STOP_EXCUSED: its cluster did not join
 *                             a calibration run in time and gets no task
 *   BYE     worker -> master  aux = its execution time in ns, id = its CPU time
 *                                 in ns (user + system); last message
 *   FAIL    worker -> master  id; payload = why a callback failed
 *   AWAY    CM -> master      its remote cluster was silent past its deadline:
 *                             every task the CM holds is forfeited
 *   BACK    CM -> master      the remote cluster answers again
 *   STATS   CM -> master      id = WAN bytes sent, aux = WAN bytes received;
 *                             payload = MW_STATS_LEN bytes, struct mw_cm_stats
 *   PING    CM -> CM          over the WAN: "still here", every second;
 *           worker -> master  the same, every WorkerTimeout / 4 of silence
 *                             (WorkerFailure = "continue")
 *   JOINED  CM -> master      its remote cluster answered (the CMs linked)
 *
 * Between clusters (communication managers over liblds) the same header
 * and types travel as one liblds message each.  A TASK or RESULT there
 * is coarse: its id numbers the coarse task, aux counts its items, and
 * its payload is that many items, each a 20-byte item header (id, aux,
 * len) and len bytes: the fine tasks (aux 0) or their results (aux = ns
 * in task_run).  HELLO's id there is MW_HELLO_CM.  A fine task whose item
 * aux has MW_ITEM_RECIPE set is not the task's bytes but a recipe that
 * rebuilds them from the sub-master's data cache (mw_cache.h).
 *
 * Pure encode/decode with bounds checks: unit-tested.
 */
#ifndef MW_PROTO_H
#define MW_PROTO_H

#include <stddef.h>
#include <stdint.h>

#define MW_HDR_LEN 24
#define MW_ITEM_LEN 20
/* HELLO id of a communication manager (workers send 0): the master
 * names it so in its report. */
#define MW_HELLO_CM 1
/* STOP's aux to a CM left out of a calibration run. */
#define MW_STOP_EXCUSED 1

enum mw_msg_type {
	MW_MSG_HELLO = 1,
	MW_MSG_TASK,
	MW_MSG_RESULT,
	MW_MSG_STOP,
	MW_MSG_BYE,
	MW_MSG_FAIL,
	MW_MSG_AWAY,
	MW_MSG_BACK,
	MW_MSG_STATS,
	MW_MSG_PING,
	MW_MSG_JOINED,
	MW_MSG_GONE,            /* mwlaunch -> main CM: the remote cluster ended; payload: why */
	MW_MSG_MAX
};

struct mw_hdr {
	uint32_t type;
	uint32_t len;           /* payload bytes after the header */
	uint64_t id;
	uint64_t aux;
};

extern const char *const mw_msg_names[MW_MSG_MAX];

void mw_hdr_encode(unsigned char out[MW_HDR_LEN], const struct mw_hdr *h);

/* Decodes a whole message of n bytes.  0, or -EBADMSG when it is shorter
 * than a header, of an unknown type, or its length disagrees with n. */
int mw_hdr_decode(const unsigned char *msg, size_t n, struct mw_hdr *h);

#define MW_ITEM_RECIPE 1

/* What a main-side CM tells the master about its link (STATS), all
 * counted since the start: bytes of runtime messages over the WAN, task
 * bytes the data cache did not have to send, late results dropped
 * because their tasks were forfeited (AWAY) and run elsewhere, and the
 * bytes its gateway's link to the remote cluster carried each way,
 * block by block (both 0 while the gateway has not said: an older ldsd). */
struct mw_cm_stats {
	uint64_t wan_out, wan_in, cache_saved, late, link_out, link_in;
};
#define MW_STATS_LEN 32

void mw_stats_msg_encode(unsigned char out[MW_STATS_LEN], const struct mw_cm_stats *s);
/* h and its payload into s: 0, or -EBADMSG when the payload is short. */
int mw_stats_msg_decode(const struct mw_hdr *h, const unsigned char *p, struct mw_cm_stats *s);

/* Little-endian integers of n bytes, for the runtime's own formats. */
void mw_put_le(unsigned char *p, uint64_t v, int n);
uint64_t mw_get_le(const unsigned char *p, int n);

/* One item of a coarse payload; data points into the payload. */
struct mw_item {
	uint64_t id;
	uint64_t aux;
	uint32_t len;
	const unsigned char *data;
};

/* Appends an item to a coarse payload: 0 or -ENOMEM (mw_buf from mw.h). */
struct mw_buf;
int mw_item_put(struct mw_buf *b, uint64_t id, uint64_t aux, const void *data, uint32_t len);
/* The item at *off of a payload of n bytes, advancing *off: 1, 0 at the
 * end, or -EBADMSG when an item runs past the end. */
int mw_item_next(const unsigned char *p, size_t n, size_t *off, struct mw_item *it);

#endif
