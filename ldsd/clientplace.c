/*
 * clientplace.c - messages from links reassembled straight in the ring
 * ldsd writes to a client (ring 1), and kept there until it took them;
 * see client.h.
 *
 * Without this, a message from a peer is reassembled in a buffer of
 * ldsd's and copied into the client's ring once whole.  Here, when its
 * header arrives and the ring holds nothing unwritten before it, the
 * DELIVER frame's header is written at the ring's end and the message's
 * blocks are read and opened straight after it (recvbuf.h, place); once
 * whole, the frame is published.  The client cannot write that ring
 * (shmring.h), so the bytes stay what the peer sent until the client's
 * TAKEN covers them, however far it has read: ldsd keeps them from being
 * written over (shmring_keep) and, if the process goes before it took
 * them, moves them into buffers of its own for the next process on the
 * name, as it would have kept them before.
 *
 * A frame being reassembled holds back everything else for that client
 * (nothing can be written after it before it is published): one that
 * something else waits behind after PLACE_WAIT_NS, or that a tick finds
 * older than PLACE_HOLD_NS (its link slow or stalled), is moved into a
 * buffer of its own, and the client's other frames go on.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "client.h"
#include "clock.h"
#include "log.h"

/* Smaller messages are copied: their copy costs little beside the frame's
 * other work, and they would hold the ring back more often. */
#define PLACE_MIN (64u << 10)
#define PLACE_MAX 64u       /* messages kept in one ring at once */
/* How long a message being reassembled may hold back frames that wait
 * for the same client (on a fast link a 1 MiB message takes a few ms),
 * and how long it may hold the ring's end at all (its link stalled). */
#define PLACE_WAIT_NS (20 * 1000000ull)
#define PLACE_HOLD_NS ((uint64_t)CS_TICK_MS * 1000000)

struct placed {
	struct rb_msg *m;         /* NULL: released */
	uint64_t pos;             /* where its frame starts in the ring */
};

struct clientplace {
	struct rb_store store;
	struct client *c;
	/* Kept in the ring, oldest first: head .. head + n - 1, at
	 * q[i % PLACE_MAX]. */
	struct placed q[PLACE_MAX];
	uint32_t head, n;
	struct rb_msg *rsv;       /* being reassembled at the ring's end, unpublished */
	size_t rsv_frame;         /* its frame's length */
	uint64_t rsv_ns;          /* when it was begun */
};

/* Drops released entries from the front; the oldest message still kept
 * bounds where ldsd may write. */
static void place_trim(struct clientplace *p)
{
	struct shmring *r = clientshm_out_ring(p->c);

	while (p->n > 0 && p->q[p->head % PLACE_MAX].m == NULL) {
		p->head++;
		p->n--;
	}
	if (r == NULL)
		return; /* broken: the client is closed next */
	if (p->n > 0)
		shmring_keep(r, p->q[p->head % PLACE_MAX].pos);
	else
		shmring_unkeep(r);
}

/* m no longer lies in the ring (released or moved): its bytes may be
 * written over, and if it was being reassembled, what waited behind it
 * may be written (the caller's to do). */
static void place_forget(struct clientplace *p, struct rb_msg *m)
{
	for (uint32_t i = 0; i < p->n; i++) {
		struct placed *e = &p->q[(p->head + i) % PLACE_MAX];

		if (e->m == m) {
			e->m = NULL;
			break;
		}
	}
	if (p->rsv == m)
		p->rsv = NULL;
	place_trim(p);
}

/* Writes waiting for room or behind m go on at the next turn. */
static void place_kick(struct clientplace *p)
{
	if (p->c->want_write)
		clientshm_kick(p->c, 1);
}

static void place_release(struct rb_store *st, struct rb_msg *m)
{
	struct clientplace *p = (struct clientplace *)st;

	place_forget(p, m);
	place_kick(p);
}

/* Moves m's bytes into a buffer of its own.  0, or -1: out of memory. */
static int place_move(struct clientplace *p, struct rb_msg *m)
{
	uint8_t *buf = malloc(m->rec.len);

	if (buf == NULL)
		return -1;
	memcpy(buf, m->data, m->rec.len);
	m->data = buf;
	m->store = NULL;
	p->c->cs->placed_moved_bytes += m->rec.len;
	place_forget(p, m);
	return 0;
}

uint8_t *clientplace_start(struct client *c, struct rb_msg *m, const uint8_t *hdr, size_t hl)
{
	struct shmring *r = clientshm_out_ring(c);
	struct clientplace *p = c->place;
	size_t space;

	if (r == NULL || m->rec.len < PLACE_MIN)
		return NULL;
	if (p == NULL) {
		p = c->place = calloc(1, sizeof(*p));
		if (p == NULL)
			return NULL;
		p->store.release = place_release;
		p->c = c;
	}
	if (p->rsv || p->n == PLACE_MAX || shmring_space(r, &space) < 0 || space < hl + m->rec.len)
		return NULL;
	memcpy(shmring_wptr(r), hdr, hl);
	p->q[(p->head + p->n++) % PLACE_MAX] = (struct placed){ m, r->prod };
	place_trim(p);
	p->rsv = m;
	p->rsv_frame = hl + m->rec.len;
	p->rsv_ns = clock_now_ns();
	m->store = &p->store;
	return shmring_wptr(r) + hl;
}

/* The message being reassembled, if begun more than limit_ns ago, is
 * moved out.  Returns 1 if one is (still) being reassembled in the ring. */
static int place_expire(struct clientplace *p, uint64_t limit_ns)
{
	if (p == NULL || p->rsv == NULL)
		return 0;
	if (clock_now_ns() - p->rsv_ns < limit_ns)
		return 1;
	if (place_move(p, p->rsv) < 0) {
		log_warnx("client %s: out of memory moving a message out of its ring; it waits there", p->c->peer);
		return 1;
	}
	return 0;
}

int clientplace_busy(struct client *c)
{
	/* A slow link's message is not worth the others' wait. */
	return place_expire(c->place, PLACE_WAIT_NS);
}

void clientplace_publish(struct client *c, struct rb_msg *m)
{
	struct shmring *r = clientshm_out_ring(c);
	struct clientplace *p = c->place;

	p->rsv = NULL;
	if (r == NULL)
		return;
	shmring_commit(r, p->rsv_frame);
	c->cs->placed_bytes += m->rec.len;
	clientshm_wake_reader(c);
}

void clientplace_tick(struct client *c)
{
	struct clientplace *p = c->place;

	if (p != NULL && p->rsv != NULL && !place_expire(p, PLACE_HOLD_NS))
		place_kick(p);
}

void clientplace_free(struct client *c)
{
	struct clientplace *p = c->place;

	if (p == NULL)
		return;
	/* What the process did not take goes to the next one on the name:
	 * its bytes must outlive the ring. */
	while (p->n > 0) {
		struct rb_msg *m = p->q[p->head % PLACE_MAX].m;

		if (m && place_move(p, m) < 0)
			fatalx("client %s: out of memory moving %" PRIu32 " bytes of a message it did not take out of its ring",
			       c->peer, m->rec.len);
		place_trim(p);
	}
	free(p);
	c->place = NULL;
}
