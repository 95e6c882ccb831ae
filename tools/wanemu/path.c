/* path.c - one direction of an emulated link: outages, MTU, a rate limited
 * bottleneck with a bounded queue, loss, delay, jitter, reordering and
 * duplication; see the pipeline in wanemu.h.
 *
 * The bottleneck queue is virtual: the direction remembers until when its
 * sender is busy, which gives each packet's exit time and the queue's
 * backlog in bytes without holding packets twice.  Packets then wait in a
 * FIFO for their due time (jitter never lets one overtake another), or in
 * a short sorted list when reordering holds them back. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "wanemu.h"

/* No direction may hold more than this in flight, whatever the settings. */
#define PATH_MAX_IN_FLIGHT (256ull << 20)
/* Smallest default queue: a BDP of a short path is a few packets only. */
#define PATH_MIN_QUEUE (64ull << 10)

void path_init(struct dir *d, uint64_t seed, uint64_t t0)
{
	rng_seed(&d->rng, seed, (uint64_t)d->from * WE_MAX_SITES + (uint64_t)d->to);
	d->t0 = t0;
	d->busy_until = d->last_due = t0;
}

static int path_down_at(const struct dir *d, uint64_t t)
{
	unsigned n = d->nctl_down < WE_MAX_OUTAGES ? d->nctl_down : WE_MAX_OUTAGES;

	if (d->down && t >= d->down_since)
		return 1;
	for (int i = 0; i < d->conf.noutage; i++) {
		uint64_t s = d->t0 + d->conf.outage[i].start_ns;

		if (t >= s && t < s + d->conf.outage[i].len_ns)
			return 1;
	}
	for (unsigned i = 0; i < n; i++)
		if (t >= d->ctl_down[i][0] && t < d->ctl_down[i][1])
			return 1;
	return 0;
}

void path_set_down(struct dir *d, int down, uint64_t now)
{
	if (down && !d->down) {
		d->down = 1;
		d->down_since = now;
	} else if (!down && d->down) {
		unsigned i = d->nctl_down++ % WE_MAX_OUTAGES;

		d->ctl_down[i][0] = d->down_since;
		d->ctl_down[i][1] = now;
		d->down = 0;
	}
}

static uint64_t path_queue_limit(const struct dir *d)
{
	double bdp;

	if (d->conf.queue_bytes)
		return d->conf.queue_bytes;
	bdp = d->conf.queue_bdp * (double)d->conf.rate_bps * (double)d->rtt_ns / 8e9;
	return bdp > PATH_MIN_QUEUE ? (uint64_t)bdp : PATH_MIN_QUEUE;
}

/* Losses that act on single packets, so super-packets must be split. */
static int path_per_packet(const struct dirconf *c)
{
	return c->loss > 0 || c->ge_p > 0 || c->ge_good > 0 || c->rate_bps || c->reorder > 0 || c->dup > 0;
}

static int path_lost(struct dir *d)
{
	int lost = rng_chance(&d->rng, d->conf.loss);

	if (d->conf.ge_p > 0 || d->conf.ge_good > 0) {
		lost |= rng_chance(&d->rng, d->ge_bad ? d->conf.ge_bad : d->conf.ge_good);
		d->ge_bad = d->ge_bad ? !rng_chance(&d->rng, d->conf.ge_r) : rng_chance(&d->rng, d->conf.ge_p);
	}
	return lost;
}

static void path_insert_held(struct dir *d, struct pkt *p)
{
	struct pkt **pp = &d->held;

	while (*pp != NULL && (*pp)->due_ns <= p->due_ns)
		pp = &(*pp)->next;
	p->next = *pp;
	*pp = p;
}

static void path_append(struct dir *d, struct pkt *p)
{
	p->next = NULL;
	if (d->tail)
		d->tail->next = p;
	else
		d->head = p;
	d->tail = p;
}

static struct pkt *path_pkt_new(struct dir *d, const unsigned char *data, size_t len, unsigned segs)
{
	struct pkt *p;

	if (d->in_flight_bytes + len > PATH_MAX_IN_FLIGHT)
		return NULL;
	p = malloc(sizeof(*p) + len);
	if (p == NULL)
		return NULL;
	memcpy(p->data, data, len);
	p->len = (uint32_t)len;
	p->segs = segs;
	d->in_flight_bytes += len;
	return p;
}

/* A wire packet (or a super-packet on a link without per-packet
 * impairments) enters the bottleneck. */
static int path_admit(struct dir *d, const unsigned char *data, size_t len, unsigned segs, size_t wire,
		      uint64_t now)
{
	const struct dirconf *c = &d->conf;
	uint64_t exit = now, due;
	struct pkt *p;
	int held, copies;

	if (c->mtu && wire > c->mtu) {
		d->st.drop_mtu += segs;
		return 0;
	}
	/* Lost before the queue (netem's order): it never used the bottleneck. */
	if (c->loss_enqueue && path_lost(d)) {
		d->st.drop_loss += segs;
		return 0;
	}
	if (c->rate_bps) {
		uint64_t backlog = d->busy_until > now ? (uint64_t)((double)(d->busy_until - now) * (double)c->rate_bps / 8e9) : 0;
		uint64_t bytes = len - WE_VNET_LEN;

		if (backlog + bytes > path_queue_limit(d)) {
			d->st.drop_queue += segs;
			return 0;
		}
		if (backlog + bytes > d->st.queue_peak)
			d->st.queue_peak = backlog + bytes;
		d->busy_until = (d->busy_until > now ? d->busy_until : now) + (uint64_t)((double)bytes * 8e9 / (double)c->rate_bps);
		exit = d->busy_until;
	}
	/* Lost after the queue: a packet lost on the wire used the bottleneck. */
	if (!c->loss_enqueue && path_lost(d)) {
		d->st.drop_loss += segs;
		return 0;
	}
	due = exit + c->delay_ns;
	if (c->jitter_ns) {
		double j = (2 * rng_unit(&d->rng) - 1) * (double)c->jitter_ns;

		due = j < 0 && (uint64_t)-j > due - exit ? exit : (uint64_t)((double)due + j);
	}
	held = rng_chance(&d->rng, c->reorder);
	if (held)
		due += c->reorder_ns;
	else if (due < d->last_due)
		due = d->last_due;
	copies = 1 + rng_chance(&d->rng, c->dup);
	for (int copy = 0; copy < copies; copy++) {
		p = path_pkt_new(d, data, len, segs);
		if (p == NULL) {
			d->st.drop_queue += segs;
			return copy ? 0 : -ENOMEM;
		}
		p->due_ns = due;
		p->exit_ns = exit;
		if (held) {
			path_insert_held(d, p);
			d->st.reordered += copy ? 0 : segs;
		} else {
			path_append(d, p);
			d->last_due = due;
		}
		d->st.dup += copy ? segs : 0;
	}
	return 0;
}

struct path_seg_ctx {
	struct dir *d;
	uint64_t now;
	int err;
};

static void path_emit_segment(const unsigned char *pkt, size_t len, void *arg)
{
	struct path_seg_ctx *ctx = arg;
	int r = path_admit(ctx->d, pkt, len, 1, len - WE_VNET_LEN, ctx->now);

	if (r < 0)
		ctx->err = r;
}

int path_input(struct dir *d, const unsigned char *pkt, size_t len, uint64_t now)
{
	size_t wire;
	unsigned segs;
	int super = gso_is_super(pkt, len, &segs, &wire);

	if (path_down_at(d, now)) {
		d->st.drop_outage += segs;
		return 0;
	}
	if (super && path_per_packet(&d->conf)) {
		struct path_seg_ctx ctx = { d, now, 0 };

		if (gso_segment(pkt, len, path_emit_segment, &ctx) == 0)
			return ctx.err;
	}
	return path_admit(d, pkt, len, segs, wire, now);
}

uint64_t path_next_due(const struct dir *d)
{
	uint64_t a = d->head ? d->head->due_ns : UINT64_MAX;
	uint64_t b = d->held ? d->held->due_ns : UINT64_MAX;

	return a < b ? a : b;
}

struct pkt *path_pop_due(struct dir *d, uint64_t now)
{
	for (;;) {
		struct pkt **from = NULL, *p;

		if (d->head && d->head->due_ns <= now)
			from = &d->head;
		if (d->held && d->held->due_ns <= now && (from == NULL || d->held->due_ns < d->head->due_ns))
			from = &d->held;
		if (from == NULL)
			return NULL;
		p = *from;
		*from = p->next;
		if (from == &d->head && d->head == NULL)
			d->tail = NULL;
		/* A cut link also loses what was on its way through the queue. */
		if (path_down_at(d, p->exit_ns)) {
			d->st.drop_outage += p->segs;
			d->in_flight_bytes -= p->len;
			free(p);
			continue;
		}
		return p;
	}
}

void path_delivered(struct dir *d, const struct pkt *p, int ok)
{
	d->in_flight_bytes -= p->len;
	if (ok) {
		d->st.fwd_pkts += p->segs;
		d->st.fwd_bytes += p->len - WE_VNET_LEN;
	} else {
		d->st.drop_write += p->segs;
	}
}

static void path_free_list(struct pkt *p)
{
	while (p != NULL) {
		struct pkt *next = p->next;

		free(p);
		p = next;
	}
}

void path_flush(struct dir *d)
{
	path_free_list(d->head);
	path_free_list(d->held);
	d->head = d->tail = d->held = NULL;
	d->in_flight_bytes = 0;
}
