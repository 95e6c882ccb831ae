/*
 * shmring.h - the shared-memory path between liblds and ldsd: two
 * single-producer/single-consumer byte rings in one memfd, and their
 * doorbells.  Internal to LDS: the daemon and the library both link
 * shmring.c.  docs/protocol.md ("Shared-memory rings") describes the layout.
 *
 * Two memfds: the first holds a header page (the rings' positions and
 * waiting flags) and then SHMRING_C2D's bytes, the second SHMRING_D2C's.
 * The creator (ldsd) seals the second against writing once it has mapped
 * it (F_SEAL_FUTURE_WRITE), so the other side can only read it: ldsd
 * reassembles messages there and keeps them until they are taken, and no
 * client can change one under it.  Each ring is mapped twice, back to
 * back, so that size bytes starting anywhere in the first copy are
 * contiguous: a frame that wraps is still read and written in place.
 *
 * The rings carry the client protocol's frames as the socket would, as a
 * byte stream: SHMRING_C2D from the client to ldsd, SHMRING_D2C back.
 * Positions are 64-bit byte counts that only grow; the producer owns prod,
 * the consumer cons.  Each side keeps its own position privately and reads
 * the other's from shared memory, checking it: the other side may be an
 * untrusted process, and a position out of bounds or going back is
 * -EPROTO, never a read or write outside the ring.
 *
 * Doorbells: a side that is about to sleep sets its waiting flag, fences,
 * and looks once more (shmring_*_sleep); the other side, after moving its
 * position, rings the sleeper's eventfd only if that flag was set
 * (shmring_wake_*).  So no system call is made per frame while both sides
 * are busy.
 */
#ifndef LDS_SHMRING_H
#define LDS_SHMRING_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#define SHMRING_HDR_SIZE 4096u
#define SHMRING_MIN      (64u << 10)
#define SHMRING_MAX      (1u << 30)
#define SHMRING_MAGIC    0x4c445352u   /* "LDSR" */

enum { SHMRING_C2D = 0, SHMRING_D2C = 1 };

/* The header page (docs/protocol.md): u32 magic, u32 version, u64 size,
 * then from SHMRING_CTL_OFF(i) ring i's u64 prod, u64 cons (with u64
 * taken beside it), u32 consumer waiting (with u64 until beside it), u32
 * producer waiting, each on its own 64-byte line. */
#define SHMRING_CTL_OFF(i)    (64u + 256u * (unsigned)(i))
#define SHMRING_PROD_OFF(i)   (SHMRING_CTL_OFF(i) + 0u)
#define SHMRING_CONS_OFF(i)   (SHMRING_CTL_OFF(i) + 64u)
#define SHMRING_TAKEN_OFF(i)  (SHMRING_CTL_OFF(i) + 72u)
#define SHMRING_CWAIT_OFF(i)  (SHMRING_CTL_OFF(i) + 128u)
#define SHMRING_CUNTIL_OFF(i) (SHMRING_CTL_OFF(i) + 136u)
#define SHMRING_PWAIT_OFF(i)  (SHMRING_CTL_OFF(i) + 192u)

struct shmring_ctl;

struct shmring {
	struct shmring_ctl *ctl;  /* in the shared header */
	uint8_t *data;            /* 2 * size bytes: the ring mapped twice */
	size_t size;
	uint64_t prod, cons;      /* ours, or the other side's last valid one */
	/* The consumer still uses the bytes from hold_pos on (a message read
	 * in place): they are not given back, though read, until unheld. */
	int hold;
	uint64_t hold_pos;
	/* The producer still needs the bytes from keep_pos on (messages it
	 * keeps there until the consumer says they were taken): not written
	 * over, though the consumer gave them back, until unkept. */
	int keep;
	uint64_t keep_pos;
};

/* One mapping of a memfd: the header and both rings. */
struct shmmap {
	void *hdr;
	void *area[2];            /* each ring's 2 * size reservation */
	size_t size;
	struct shmring r[2];
};

/* A ring size for the request: 0 stays 0 (off), others are rounded up to
 * a multiple of the page size within SHMRING_MIN..SHMRING_MAX. */
size_t shmring_round(size_t want);
/* Creates the two sealed memfds for rings of size bytes (size from
 * shmring_round): their lengths cannot change any more, so a mapping of
 * them can never fault.  *fd: the header and SHMRING_C2D; *dfd:
 * SHMRING_D2C.  Returns 0 or -errno. */
int shmring_create(size_t size, int *fd, int *dfd);
/* Maps fd and dfd (as shmring_create made them), whose rings are size
 * bytes, into m.  init: the creator, which fills in the header, maps
 * SHMRING_D2C writable and then seals dfd against any other writable
 * mapping.  The other side checks the files' lengths and the header, and
 * maps SHMRING_D2C read-only.  Returns 0 or -errno (-EPROTO: not ring
 * files of that size). */
int shmring_map(struct shmmap *m, int fd, int dfd, size_t size, int init);
void shmring_unmap(struct shmmap *m);

/* ---- producer ---- */
/* Free bytes in *space.  0 or -EPROTO (the consumer's position is out of
 * bounds or went back). */
int shmring_space(struct shmring *r, size_t *space);
/* Where the next byte goes: contiguous for shmring_space bytes. */
static inline uint8_t *shmring_wptr(const struct shmring *r)
{
	return r->data + r->prod % r->size;
}
/* Makes n more bytes visible to the consumer. */
void shmring_commit(struct shmring *r, size_t n);
/* Copies as much of iov as fits and commits it.  Returns the bytes copied
 * (0: full) or -EPROTO. */
ssize_t shmring_writev(struct shmring *r, const struct iovec *iov, int n);
/* Keeps the bytes from pos (at most prod) on from being written over,
 * however far the consumer gives them back, until shmring_unkeep or a
 * later shmring_keep. */
void shmring_keep(struct shmring *r, uint64_t pos);
void shmring_unkeep(struct shmring *r);

/* ---- consumer ---- */
/* Bytes waiting in *avail.  0 or -EPROTO (the producer's position is out
 * of bounds or went back). */
int shmring_avail(struct shmring *r, size_t *avail);
/* Where the next unread byte is: contiguous for shmring_avail bytes. */
static inline const uint8_t *shmring_rptr(const struct shmring *r)
{
	return r->data + r->cons % r->size;
}
/* Gives n read bytes back to the producer (unless held). */
void shmring_release(struct shmring *r, size_t n);
/* Keeps the bytes from the next unread one on until shmring_unhold,
 * however far reading goes. */
void shmring_hold(struct shmring *r);
void shmring_unhold(struct shmring *r);
/* Held: the bytes before pos (read, at or after the hold's start) go back
 * to the producer; those from pos on stay held. */
void shmring_hold_move(struct shmring *r, uint64_t pos);
/* Copies up to len bytes out and releases them.  Returns the bytes copied
 * (0: empty) or -EPROTO. */
ssize_t shmring_read(struct shmring *r, void *buf, size_t len);
/* Publishes how many of the messages read from the ring the application
 * has taken (as the TAKEN frame counts them), for the producer to see
 * before that frame arrives. */
void shmring_set_taken(struct shmring *r, uint64_t n);
/* ---- producer: the consumer's count, as it wrote it (unchecked) ---- */
uint64_t shmring_taken(const struct shmring *r);

/* ---- doorbells ---- */
/* The consumer found the ring empty and means to sleep: sets its flag and
 * looks again.  Returns 1 if bytes arrived meanwhile (do not sleep), 0,
 * or -EPROTO. */
int shmring_consumer_sleep(struct shmring *r);
/* As shmring_consumer_sleep, waiting for need bytes: 1 if they are there
 * now; else the producer rings once they are (a frame written in parts),
 * not at each commit before. */
int shmring_consumer_wait(struct shmring *r, size_t need);
/* The producer needs need bytes of space and means to sleep: as above,
 * 1 if they are free now. */
int shmring_producer_sleep(struct shmring *r, size_t need);
/* After a commit (release): 1 if the consumer (producer) was asleep and
 * its eventfd must be rung; the flag is cleared. */
int shmring_wake_consumer(struct shmring *r);
int shmring_wake_producer(struct shmring *r);
/* Rings an eventfd; drains one.  Both ignore EAGAIN. */
void shmring_ring(int efd);
void shmring_drain(int efd);

#endif
