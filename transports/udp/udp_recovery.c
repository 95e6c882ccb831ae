/* udp_recovery.c - RTT, loss detection, probe timeout; see udp_recovery.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "udp_recovery.h"

#define RING_MIN 256

int udp_rec_init(struct udp_recovery *rec, uint64_t max_ack_delay_ns)
{
	memset(rec, 0, sizeof(*rec));
	rec->ring = calloc(RING_MIN, sizeof(*rec->ring));
	if (rec->ring == NULL)
		return -ENOMEM;
	rec->cap = RING_MIN;
	rec->max_ack_delay = max_ack_delay_ns;
	rec->srtt = UDP_INITIAL_RTT_NS;
	rec->rttvar = UDP_INITIAL_RTT_NS / 2;
	return 0;
}

void udp_rec_free(struct udp_recovery *rec)
{
	free(rec->ring);
	rec->ring = NULL;
}

static struct udp_sent *slot(const struct udp_recovery *rec, uint64_t pn)
{
	return &rec->ring[pn % rec->cap];
}

struct udp_sent *udp_rec_next(struct udp_recovery *rec, uint64_t *pn)
{
	struct udp_sent *p;

	if (rec->next - rec->base == rec->cap) {
		/* Doubling keeps every packet at pn % cap; no allocation per packet. */
		size_t nc = rec->cap * 2;
		struct udp_sent *nr = malloc(nc * sizeof(*nr));

		if (nr == NULL)
			return NULL;
		for (uint64_t i = rec->base; i < rec->next; i++)
			nr[i % nc] = *slot(rec, i);
		free(rec->ring);
		rec->ring = nr;
		rec->cap = nc;
	}
	*pn = rec->next;
	p = slot(rec, rec->next);
	memset(p, 0, sizeof(*p));
	return p;
}

/* Moves base past packets that are done. */
static void advance(struct udp_recovery *rec)
{
	while (rec->base < rec->next && (slot(rec, rec->base)->flags & UDP_SENT_DONE))
		rec->base++;
}

void udp_rec_commit(struct udp_recovery *rec, struct udp_sent *p)
{
	rec->next++;
	if (p->flags & UDP_SENT_INFLIGHT)
		rec->in_flight += p->size;
	else
		p->flags |= UDP_SENT_DONE;  /* nothing waits for an ACK-only packet's fate */
	if (p->flags & UDP_SENT_ELICITING)
		rec->last_eliciting_ns = p->time_ns;
	advance(rec);
}

static void retire(struct udp_recovery *rec, struct udp_sent *p)
{
	if (p->flags & UDP_SENT_INFLIGHT)
		rec->in_flight -= p->size;
	p->flags |= UDP_SENT_DONE;
}

const struct udp_sent *udp_rec_unsend(struct udp_recovery *rec, uint64_t pn)
{
	struct udp_sent *p;

	if (pn < rec->base || pn >= rec->next)
		return NULL;
	p = slot(rec, pn);
	if (p->flags & UDP_SENT_DONE)
		return NULL;
	retire(rec, p);
	advance(rec);
	return p;
}

static void rtt_update(struct udp_recovery *rec, uint64_t sample, uint64_t ack_delay)
{
	rec->latest_rtt = sample;
	rec->rtt_new = 1;
	if (!rec->have_rtt) {
		rec->have_rtt = 1;
		rec->min_rtt = rec->srtt = sample;
		rec->rttvar = sample / 2;
		return;
	}
	if (sample < rec->min_rtt)
		rec->min_rtt = sample;
	if (ack_delay > rec->max_ack_delay)
		ack_delay = rec->max_ack_delay;
	/* The peer's delay counts only where it does not undercut the path. */
	if (sample >= rec->min_rtt + ack_delay)
		sample -= ack_delay;
	{
		uint64_t d = rec->srtt > sample ? rec->srtt - sample : sample - rec->srtt;

		rec->rttvar = (3 * rec->rttvar + d) / 4;
		rec->srtt = (7 * rec->srtt + sample) / 8;
	}
}

static uint64_t loss_delay(const struct udp_recovery *rec)
{
	uint64_t r = rec->latest_rtt > rec->srtt ? rec->latest_rtt : rec->srtt;

	r = r * 9 / 8;
	return r > UDP_GRANULARITY_NS ? r : UDP_GRANULARITY_NS;
}

static void detect_lost(struct udp_recovery *rec, uint64_t now_ns, const struct udp_rec_cb *cb)
{
	uint64_t delay = loss_delay(rec);

	rec->loss_time = 0;
	if (!rec->any_acked)
		return;
	for (uint64_t pn = rec->base; pn < rec->next && pn < rec->largest_acked; pn++) {
		struct udp_sent *p = slot(rec, pn);

		if (p->flags & UDP_SENT_DONE)
			continue;
		if (rec->largest_acked >= pn + UDP_PKT_THRESHOLD || p->time_ns + delay <= now_ns) {
			retire(rec, p);
			rec->lost++;
			if (cb->lost)
				cb->lost(cb->arg, p);
		} else if (rec->loss_time == 0 || p->time_ns + delay < rec->loss_time) {
			rec->loss_time = p->time_ns + delay;
		}
	}
	advance(rec);
}

size_t udp_rec_on_ack(struct udp_recovery *rec, const struct udp_frames *f, uint64_t now_ns,
		      const struct udp_rec_cb *cb)
{
	size_t acked = 0;
	int rtt_from_largest = 0;
	uint64_t largest_sent_ns = 0;

	rec->rtt_new = 0;

	/* Ascending: the ranges come largest first. */
	for (size_t i = f->nranges; i-- > 0;) {
		uint64_t lo = f->ranges[i].lo > rec->base ? f->ranges[i].lo : rec->base;
		uint64_t hi = f->ranges[i].hi < rec->next ? f->ranges[i].hi : rec->next;

		for (uint64_t pn = lo; pn < hi; pn++) {
			struct udp_sent *p = slot(rec, pn);

			if (p->flags & UDP_SENT_DONE)
				continue;
			if (pn == f->ack_largest && (p->flags & UDP_SENT_ELICITING)) {
				rtt_from_largest = 1;
				largest_sent_ns = p->time_ns;
			}
			retire(rec, p);
			acked++;
			if (cb->acked)
				cb->acked(cb->arg, p, now_ns);
		}
	}
	if (acked == 0)
		return 0;
	if (f->ack_largest < rec->next && (!rec->any_acked || f->ack_largest > rec->largest_acked)) {
		rec->largest_acked = f->ack_largest;
		rec->any_acked = 1;
	}
	if (rtt_from_largest && now_ns > largest_sent_ns)
		rtt_update(rec, now_ns - largest_sent_ns, f->ack_delay_us * 1000);
	rec->pto_count = 0;
	detect_lost(rec, now_ns, cb);
	return acked;
}

uint64_t udp_rec_pto(const struct udp_recovery *rec)
{
	uint64_t v = 4 * rec->rttvar > UDP_GRANULARITY_NS ? 4 * rec->rttvar : UDP_GRANULARITY_NS;
	uint64_t pto = rec->srtt + v + rec->max_ack_delay;

	for (unsigned i = 0; i < rec->pto_count && pto < UDP_PTO_MAX_NS; i++)
		pto *= 2;
	return pto < UDP_PTO_MAX_NS ? pto : UDP_PTO_MAX_NS;
}

const struct udp_sent *udp_rec_oldest(const struct udp_recovery *rec)
{
	for (uint64_t pn = rec->base; pn < rec->next; pn++) {
		const struct udp_sent *p = slot(rec, pn);

		if (!(p->flags & UDP_SENT_DONE) && (p->flags & UDP_SENT_ELICITING))
			return p;
	}
	return NULL;
}

uint64_t udp_rec_deadline(const struct udp_recovery *rec)
{
	if (rec->loss_time)
		return rec->loss_time;
	if (udp_rec_oldest(rec) == NULL)
		return 0;
	return rec->last_eliciting_ns + udp_rec_pto(rec);
}

int udp_rec_on_timeout(struct udp_recovery *rec, uint64_t now_ns, const struct udp_rec_cb *cb)
{
	if (rec->loss_time) {
		if (now_ns >= rec->loss_time)
			detect_lost(rec, now_ns, cb);
		return 0;
	}
	if (udp_rec_deadline(rec) == 0 || now_ns < udp_rec_deadline(rec))
		return 0;
	rec->pto_count++;
	/* The probe restarts the clock (udp_rec_commit), not this call. */
	rec->last_eliciting_ns = now_ns;
	return 1;
}
