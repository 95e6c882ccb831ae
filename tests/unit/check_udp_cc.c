/*
 * check_udp_cc.c - the UDP transport's loss recovery, congestion control
 * and pacing on a fake clock: RTT estimates, loss by packet and by time
 * threshold, the probe timeout and its back-off; the controller's states
 * on a simulated bottleneck (10 MB/s, 50 ms), its rate under 5 % random
 * loss before and after the bottleneck's queue, no runaway behind a
 * shallow queue, PROBE_RTT, and its model kept through an outage; the pacer's rate.
 */
#include <check.h>
#include <stdlib.h>
#include <string.h>

#include "suites.h"
#include "transports/udp/udp_cc.h"
#include "transports/udp/udp_pacer.h"
#include "transports/udp/udp_recovery.h"

#define MS 1000000ull

static unsigned nacked, nlost;
static uint64_t lost_pns[64];

static void cb_acked(void *arg, const struct udp_sent *p, uint64_t now)
{
	nacked++;
}

static void cb_lost(void *arg, const struct udp_sent *p)
{
	if (nlost < 64)
		lost_pns[nlost] = p->off / 1000;
	nlost++;
}

static const struct udp_rec_cb cbs = { cb_acked, cb_lost, NULL };

static void send_pkts(struct udp_recovery *rec, int n, uint64_t t0)
{
	for (int i = 0; i < n; i++) {
		uint64_t pn;
		struct udp_sent *p = udp_rec_next(rec, &pn);

		ck_assert_ptr_nonnull(p);
		p->time_ns = t0 + (uint64_t)i * MS;
		p->off = pn * 1000;
		p->len = 1000;
		p->size = 1032;
		p->flags = UDP_SENT_ELICITING | UDP_SENT_INFLIGHT;
		udp_rec_commit(rec, p);
	}
}

static struct udp_frames ack_of(const uint64_t (*r)[2], size_t n)
{
	struct udp_frames f;

	memset(&f, 0, sizeof(f));
	f.has_ack = 1;
	f.ack_largest = r[0][1] - 1;
	for (size_t i = 0; i < n; i++) {
		f.ranges[i].lo = r[i][0];
		f.ranges[i].hi = r[i][1];
	}
	f.nranges = n;
	return f;
}

/* Packet 3 is missing behind 4 and 5: not lost by count (2 newer), lost
 * by time once 9/8 of the RTT has passed; 6..9 never come, and the
 * probe timeout fires, backing off to at most half a second. */
START_TEST(test_loss_time_threshold)
{
	struct udp_recovery rec;
	static const uint64_t r1[][2] = { { 4, 6 }, { 0, 3 } };
	struct udp_frames f = ack_of(r1, 2);
	uint64_t dl, pto1;

	nacked = nlost = 0;
	ck_assert_int_eq(udp_rec_init(&rec, 0), 0);
	send_pkts(&rec, 10, 0);
	ck_assert_uint_eq(rec.in_flight, 10 * 1032);
	ck_assert_uint_eq(udp_rec_on_ack(&rec, &f, 100 * MS, &cbs), 5);
	ck_assert_uint_eq(nacked, 5);
	ck_assert(rec.have_rtt);
	ck_assert_uint_eq(rec.latest_rtt, 95 * MS);               /* from packet 5, sent at 5 ms */
	ck_assert_uint_eq(rec.srtt, 95 * MS);
	ck_assert_uint_eq(rec.min_rtt, 95 * MS);
	ck_assert_uint_eq(nlost, 0);
	ck_assert_uint_eq(rec.loss_time, 3 * MS + 95 * MS * 9 / 8);
	ck_assert_uint_eq(udp_rec_deadline(&rec), rec.loss_time);
	ck_assert_int_eq(udp_rec_on_timeout(&rec, rec.loss_time - 1, &cbs), 0);
	ck_assert_uint_eq(nlost, 0);
	ck_assert_int_eq(udp_rec_on_timeout(&rec, rec.loss_time, &cbs), 0);
	ck_assert_uint_eq(nlost, 1);
	ck_assert_uint_eq(lost_pns[0], 3);
	ck_assert_uint_eq(rec.in_flight, 4 * 1032);
	/* Nothing more comes: the probe timeout, doubling, capped. */
	dl = udp_rec_deadline(&rec);
	pto1 = udp_rec_pto(&rec);
	ck_assert_uint_eq(dl, 9 * MS + pto1);
	ck_assert_int_eq(udp_rec_on_timeout(&rec, dl, &cbs), 1);
	ck_assert_uint_eq(udp_rec_pto(&rec), 2 * pto1 < UDP_PTO_MAX_NS ? 2 * pto1 : UDP_PTO_MAX_NS);
	ck_assert_uint_lt(pto1, UDP_PTO_MAX_NS);
	for (int i = 0; i < 10; i++)
		ck_assert_int_eq(udp_rec_on_timeout(&rec, udp_rec_deadline(&rec), &cbs), 1);
	ck_assert_uint_eq(udp_rec_pto(&rec), UDP_PTO_MAX_NS);
	ck_assert_ptr_nonnull(udp_rec_oldest(&rec));
	ck_assert_uint_eq(udp_rec_oldest(&rec)->off, 6000);
	udp_rec_free(&rec);
}
END_TEST

/* Three newer packets acknowledged: lost at once.  Acks of packets never
 * sent are ignored; the ring grows past its first size. */
START_TEST(test_loss_packet_threshold)
{
	struct udp_recovery rec;
	static const uint64_t r1[][2] = { { 4, 8 }, { 0, 2 } };
	static const uint64_t bogus[][2] = { { 5000, 900000 } };
	struct udp_frames f = ack_of(r1, 2);

	nacked = nlost = 0;
	ck_assert_int_eq(udp_rec_init(&rec, 0), 0);
	send_pkts(&rec, 1000, 0);
	ck_assert_uint_eq(udp_rec_on_ack(&rec, &f, 50 * MS, &cbs), 6);
	ck_assert_uint_eq(nlost, 2);                              /* 2 and 3: 7 >= 3 + 3 */
	ck_assert_uint_eq(lost_pns[0], 2);
	ck_assert_uint_eq(lost_pns[1], 3);
	f = ack_of(bogus, 1);
	ck_assert_uint_eq(udp_rec_on_ack(&rec, &f, 60 * MS, &cbs), 0);
	ck_assert_uint_eq(rec.largest_acked, 7);
	udp_rec_free(&rec);
}
END_TEST

/* A discrete-time path: a FIFO bottleneck of rate bytes/s, a base RTT,
 * random loss before the bottleneck's queue (as netem: a lost packet
 * never used the link) or after it (loss_after: it did); every packet
 * acknowledged on arrival. */
struct sim {
	struct udp_recovery rec;
	struct udp_cc cc;
	struct udp_pacer pacer;
	uint64_t now, link_free, rtt;
	double rate;
	unsigned loss_ppm, seed;
	int loss_after;
	int outage;
	double app_rate;        /* bytes/s the core hands over, in bursts of APP_BURST; 0: always data */
	double app_credit;
	int bursting;           /* handing over a burst until the credit is spent */
	uint64_t qlimit;        /* the bottleneck's queue in bytes; 0: unbounded */
	uint64_t delivered;
	uint64_t qdrops;        /* packets the full queue dropped */
	uint64_t rate_peak;     /* the highest pacing rate since sim_peak_reset */
	struct { uint64_t pn, at; } q[200000];
	size_t qh, qt;
};

#define MSS 1200
#define APP_BURST 400000

static void sim_init(struct sim *s, double rate, uint64_t rtt, unsigned loss_ppm)
{
	memset(s, 0, sizeof(*s));
	s->rate = rate;
	s->rtt = rtt;
	s->loss_ppm = loss_ppm;
	s->seed = 1;
	ck_assert_int_eq(udp_rec_init(&s->rec, 0), 0);
	udp_cc_init(&s->cc, MSS, 0, 0);
	udp_pacer_init(&s->pacer, s->cc.pacing_rate, MSS, 0);
}

static void sim_ack_cb(void *arg, const struct udp_sent *p, uint64_t now)
{
	struct sim *s = arg;

	s->delivered += p->size;
	udp_cc_on_acked(&s->cc, p, now);
}

static void sim_lost_cb(void *arg, const struct udp_sent *p)
{
	struct sim *s = arg;

	udp_cc_on_lost(&s->cc, p);
}

static void sim_send(struct sim *s)
{
	uint64_t pn;
	struct udp_sent *p = udp_rec_next(&s->rec, &pn);
	int lost;

	p->time_ns = s->now;
	p->size = MSS;
	p->len = MSS;
	p->flags = UDP_SENT_ELICITING | UDP_SENT_INFLIGHT;
	udp_cc_on_send(&s->cc, p, s->rec.in_flight, s->now);
	udp_rec_commit(&s->rec, p);
	udp_pacer_spend(&s->pacer, MSS);
	if (s->app_rate)
		s->app_credit -= MSS;
	if (s->outage)
		return;
	lost = (unsigned)rand_r(&s->seed) % 1000000 < s->loss_ppm;
	if (lost && !s->loss_after)
		return;
	if (s->qlimit && s->link_free > s->now && (double)(s->link_free - s->now) * s->rate / 1e9 > (double)s->qlimit) {
		s->qdrops++;
		return;
	}
	s->link_free = (s->link_free > s->now ? s->link_free : s->now) + (uint64_t)(MSS * 1e9 / s->rate);
	if (lost)
		return;
	ck_assert_uint_lt(s->qt, sizeof(s->q) / sizeof(s->q[0]));
	s->q[s->qt].pn = pn;
	s->q[s->qt].at = s->link_free + s->rtt;
	s->qt++;
}

static void sim_run(struct sim *s, uint64_t until)
{
	struct udp_rec_cb cb = { sim_ack_cb, sim_lost_cb, s };

	for (; s->now < until; s->now += 100000) {
		while (s->qh < s->qt && s->q[s->qh].at <= s->now) {
			struct udp_frames f;

			memset(&f, 0, sizeof(f));
			f.has_ack = 1;
			f.ack_largest = s->q[s->qh].pn;
			f.ranges[0].lo = f.ack_largest;
			f.ranges[0].hi = f.ack_largest + 1;
			f.nranges = 1;
			if (udp_rec_on_ack(&s->rec, &f, s->now, &cb))
				udp_cc_on_ack_end(&s->cc, s->rec.rtt_new ? s->rec.latest_rtt : 0, s->rec.srtt,
						  s->rec.in_flight, s->now);
			s->qh++;
		}
		if (udp_rec_deadline(&s->rec) && udp_rec_on_timeout(&s->rec, s->now, &cb))
			sim_send(s);
		udp_pacer_set_rate(&s->pacer, s->cc.pacing_rate, MSS);
		if (s->cc.pacing_rate > s->rate_peak)
			s->rate_peak = s->cc.pacing_rate;
		if (s->app_rate) {
			s->app_credit += s->app_rate * 1e-4;
			if (s->app_credit >= APP_BURST)
				s->bursting = 1;
			if (s->app_credit < MSS)
				s->bursting = 0;
		}
		while (s->rec.in_flight + MSS <= s->cc.cwnd && udp_pacer_allow(&s->pacer, MSS, s->now) &&
		       (s->app_rate == 0 || (s->bursting && s->app_credit >= MSS)))
			sim_send(s);
		/* As udp_conn_flush: nothing to send with room to spare. */
		if (s->app_rate && !(s->bursting && s->app_credit >= MSS) && s->rec.in_flight + MSS <= s->cc.cwnd)
			udp_cc_app_limited(&s->cc, s->rec.in_flight);
	}
}

static struct sim sim;

/* STARTUP finds the bottleneck, DRAIN empties the queue, PROBE_BW holds
 * the rate; the model matches the path. */
START_TEST(test_cc_states)
{
	uint64_t d0;

	sim_init(&sim, 10e6, 50 * MS, 0);
	ck_assert_int_eq(sim.cc.state, UDP_CC_STARTUP);
	sim_run(&sim, 3000 * MS);
	ck_assert_int_eq(sim.cc.state, UDP_CC_PROBE_BW);
	ck_assert(sim.cc.filled_pipe);
	ck_assert_uint_ge(sim.cc.bw, 9e6);
	ck_assert_uint_le(sim.cc.bw, 11e6);
	ck_assert_uint_ge(sim.cc.min_rtt, 50 * MS);
	ck_assert_uint_le(sim.cc.min_rtt, 52 * MS);
	/* cwnd about twice the BDP (500 kB), not more. */
	ck_assert_uint_le(sim.cc.cwnd, 2 * 520000 + 3 * MSS);
	d0 = sim.delivered;
	sim_run(&sim, 5000 * MS);
	ck_assert_uint_ge(sim.delivered - d0, (uint64_t)(0.95 * 10e6 * 2));
	udp_rec_free(&sim.rec);
}
END_TEST

/* Runs a sim from 2 s to 10 s of its clock: the share of the link's rate
 * delivered, and of the packets sent that the full queue dropped. */
static void sim_measure(double *goodput, double *qdrops)
{
	uint64_t d0, sent0, q0;

	sim_run(&sim, 2000 * MS);
	d0 = sim.delivered;
	sent0 = sim.rec.next;
	q0 = sim.qdrops;
	sim.rate_peak = 0;
	sim_run(&sim, 10000 * MS);
	*goodput = (double)(sim.delivered - d0) / (sim.rate * 8);
	*qdrops = (double)(sim.qdrops - q0) / (double)(sim.rec.next - sent0);
}

/* 5 % random loss before the bottleneck (a lossy hop in front of it, as
 * netem): the model does not shrink, and pacing for what the loss takes
 * keeps the bottleneck busy (0.956 of it when the conn paced at the
 * delivery rate: 5 % of the link idle). */
START_TEST(test_cc_random_loss)
{
	double goodput, qdrops;

	sim_init(&sim, 10e6, 50 * MS, 50000);
	sim.qlimit = 500000;
	sim_measure(&goodput, &qdrops);
	ck_assert_uint_gt(sim.cc.losses, 1000);
	ck_assert_uint_ge(sim.cc.bw, 9.5e6);
	ck_assert_double_ge(goodput, 0.98);
	ck_assert_double_eq(qdrops, 0);
	ck_assert_uint_le(sim.rate_peak, 1.25 * 10e6 * 1.01);
	udp_rec_free(&sim.rec);
}
END_TEST

/* 5 % random loss after the bottleneck (a lost packet used the link): at
 * most 0.95 of the link can arrive; the conn gets it (0.916 before), and
 * the queue never overflows. */
START_TEST(test_cc_random_loss_wire)
{
	double goodput, qdrops;

	sim_init(&sim, 10e6, 50 * MS, 50000);
	sim.qlimit = 500000;
	sim.loss_after = 1;
	sim_measure(&goodput, &qdrops);
	ck_assert_double_ge(goodput, 0.94);
	ck_assert_double_le(qdrops, 0.001);
	ck_assert_uint_le(sim.rate_peak, 1.25 * 10e6 * 1.01);
	udp_rec_free(&sim.rec);
}
END_TEST

/* Behind a queue of a fifth of the BDP and of 2 % of it, always data or a
 * core feeding bursts, with and without random loss before or after the
 * queue: the queue's own losses must not be taken for random ones and
 * paced for (the pacing then rose with them: 11 % of packets dropped
 * behind the 20 kB queue with no random loss, where BBR's probing alone
 * drops 3 %).  Bounds: at most 2 % (100 kB) and 4 % (20 kB) of packets
 * dropped by the queue, 1.25x the link's rate at most, and the goodput of
 * the path (0.84 of it for the core's 9 MB/s, less the random loss). */
START_TEST(test_cc_shallow_queue)
{
	static const struct {
		uint64_t qlimit;
		unsigned loss_ppm;
		int after;
		double app_rate, goodput, qdrops;
	} cases[] = {
		{ 100000, 0, 0, 0, 0.98, 0.02 },     { 100000, 10000, 0, 0, 0.98, 0.02 },
		{ 100000, 10000, 1, 0, 0.97, 0.02 }, { 100000, 50000, 0, 0, 0.95, 0.02 },
		{ 100000, 50000, 1, 0, 0.92, 0.02 }, { 20000, 0, 0, 0, 0.97, 0.04 },
		{ 20000, 50000, 0, 0, 0.93, 0.04 },  { 100000, 0, 0, 9e6, 0.84, 0.04 },
		{ 100000, 50000, 0, 9e6, 0.82, 0.02 }, { 100000, 50000, 1, 9e6, 0.82, 0.02 },
	};

	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		double goodput, qdrops;

		sim_init(&sim, 10e6, 50 * MS, cases[i].loss_ppm);
		sim.qlimit = cases[i].qlimit;
		sim.loss_after = cases[i].after;
		sim.app_rate = cases[i].app_rate;
		sim_measure(&goodput, &qdrops);
		ck_assert_msg(qdrops <= cases[i].qdrops && goodput >= cases[i].goodput &&
				      sim.rate_peak <= 1.25 * 10e6 * 1.01,
			      "case %zu: queue drops %.4f of packets, goodput %.4f, pacing up to %.3f of the link", i,
			      qdrops, goodput, sim.rate_peak / 10e6);
		udp_rec_free(&sim.rec);
	}
}
END_TEST

/* A core that hands over data in bursts, a little below the path's rate
 * (every round app-limited), into a bottleneck with a small queue: STARTUP
 * must end once rounds lose packets, or its 2.885x bursts overflow the
 * queue for good (it never ended: a conn held by its window lost a sixth
 * of its packets on a 1 % lossy path). */
START_TEST(test_cc_app_limited_startup)
{
	uint64_t lost0, sent0;

	sim_init(&sim, 10e6, 50 * MS, 0);
	sim.app_rate = 9e6;
	sim.qlimit = 100000;
	sim_run(&sim, 3000 * MS);
	ck_assert_int_ne(sim.cc.state, UDP_CC_STARTUP);
	ck_assert(sim.cc.filled_pipe);
	lost0 = sim.cc.losses;
	sent0 = sim.rec.next;
	sim_run(&sim, 8000 * MS);
	ck_assert_uint_le(sim.cc.pacing_rate, 1.25 * 10e6 * 1.01);
	/* Queue overflow only in the probing phases and bursts: under 5 % of
	 * the packets (61 % while STARTUP never ended). */
	ck_assert_uint_le((sim.cc.losses - lost0) * 20, sim.rec.next - sent0);
	ck_assert_uint_ge(sim.delivered, (uint64_t)(0.8 * 9e6 * 8));
	udp_rec_free(&sim.rec);
}
END_TEST

/* A 3 s outage: probes go out at least every half second, and once the path
 * returns the old rate comes back within a second. */
START_TEST(test_cc_outage)
{
	uint64_t bw, d0, sent0;

	sim_init(&sim, 10e6, 50 * MS, 0);
	sim_run(&sim, 3000 * MS);
	bw = sim.cc.bw;
	sim.outage = 1;
	sent0 = sim.rec.next;
	sim_run(&sim, 6000 * MS);
	ck_assert_uint_ge(sim.rec.next - sent0, 6);               /* probes through the outage */
	ck_assert_uint_ge(sim.cc.bw, bw / 2);
	sim.outage = 0;
	sim_run(&sim, 7000 * MS);
	d0 = sim.delivered;
	sim_run(&sim, 8000 * MS);
	ck_assert_uint_ge(sim.delivered - d0, (uint64_t)(0.8 * 10e6));
	udp_rec_free(&sim.rec);
}
END_TEST

/* min_rtt not seen again for 10 s: PROBE_RTT with half the BDP, 200 ms,
 * then back; whether or not the ACK that finds it expired brings an RTT
 * sample (_i 1: a queued one, as every ACK of a busy conn does; the
 * expired minimum was replaced by it and PROBE_RTT never came, so a
 * standing queue stayed for good). */
/* A conn cruising in PROBE_BW at 10 MB/s whose min_rtt was last seen 11 s
 * before t; p a packet of MSS bytes for its ACKs. */
static void cruising(struct udp_cc *cc, struct udp_sent *p, uint64_t min_rtt, uint64_t t)
{
	udp_cc_init(cc, MSS, 0, 0);
	cc->filled_pipe = 1;
	cc->state = UDP_CC_PROBE_BW;
	cc->cycle = 2;
	cc->pacing_gain = 1;
	cc->cwnd_gain = 2;
	cc->bw = 10e6;
	for (int i = 0; i < UDP_CC_BW_ROUNDS; i++)
		cc->bw_round[i] = cc->bw;
	cc->min_rtt = min_rtt;
	cc->cwnd = 2 * udp_cc_bdp(cc);                          /* PROBE_BW's: twice the BDP */
	cc->min_rtt_stamp = t - 11000 * MS;
	memset(p, 0, sizeof(*p));
	p->size = MSS;
}

START_TEST(test_cc_probe_rtt)
{
	uint64_t first_rtt = _i ? 60 * MS : 0;
	struct udp_cc cc;
	struct udp_sent p;
	uint64_t t = 20000 * MS;

	cruising(&cc, &p, 50 * MS, t);
	p.time_ns = t - 60 * MS;
	p.first_sent_ns = p.delivered_ns = t - 200 * MS;
	udp_cc_on_acked(&cc, &p, t);
	udp_cc_on_ack_end(&cc, first_rtt, 60 * MS, 100 * MSS, t);
	ck_assert_int_eq(cc.state, UDP_CC_PROBE_RTT);
	ck_assert_uint_eq(cc.cwnd, 10e6 * (_i ? 0.060 : 0.050) / 2);  /* half of 10 MB/s x min_rtt */
	udp_cc_on_acked(&cc, &p, t + MS);
	udp_cc_on_ack_end(&cc, 70 * MS, 60 * MS, 2 * MSS, t + MS);
	ck_assert_int_eq(cc.state, UDP_CC_PROBE_RTT);
	udp_cc_on_acked(&cc, &p, t + 202 * MS);
	udp_cc_on_ack_end(&cc, 0, 60 * MS, 2 * MSS, t + 202 * MS);
	ck_assert_int_eq(cc.state, UDP_CC_PROBE_BW);
	ck_assert_uint_eq(cc.min_rtt, _i ? 60 * MS : 70 * MS);   /* the expired minimum replaced */
}
END_TEST

/* Samples within 1/32 of min_rtt (the queue drained, ACK delays on top)
 * renew its window: 11 s on, no PROBE_RTT, min_rtt kept.  Samples 1/4
 * above do not (here after the renewal, and test_cc_probe_rtt). */
START_TEST(test_cc_min_rtt_renewed)
{
	struct udp_cc cc;
	struct udp_sent p;
	uint64_t t = 20000 * MS;

	cruising(&cc, &p, 64 * MS, t);
	p.first_sent_ns = p.delivered_ns = t - 1000 * MS;
	for (int i = 0; i < 11; i++) {
		p.time_ns = t - 70 * MS;
		udp_cc_on_acked(&cc, &p, t);
		udp_cc_on_ack_end(&cc, i == 0 ? 66 * MS : 80 * MS, 70 * MS, 100 * MSS, t);
		ck_assert_int_eq(cc.state, UDP_CC_PROBE_BW);
		t += 1000 * MS;
	}
	ck_assert_uint_eq(cc.min_rtt, 64 * MS);
	/* 10 s after the last sample within 1/32: PROBE_RTT. */
	p.time_ns = t - 70 * MS;
	udp_cc_on_acked(&cc, &p, t);
	udp_cc_on_ack_end(&cc, 80 * MS, 70 * MS, 100 * MSS, t);
	ck_assert_int_eq(cc.state, UDP_CC_PROBE_RTT);
}
END_TEST

/* One round of a cruising conn (udp_cc_on_ack_end on a round start) whose
 * ACK brings size bytes and an RTT sample of rtt. */
static void cruise_round(struct udp_cc *cc, struct udp_sent *p, uint16_t size, uint64_t rtt, uint64_t t)
{
	p->size = size;
	p->delivered = cc->delivered;
	p->time_ns = t - rtt;
	p->first_sent_ns = p->delivered_ns = t - 1000 * MS;
	udp_cc_on_acked(cc, p, t);
	udp_cc_on_ack_end(cc, rtt, rtt, 100 * MSS, t);
	ck_assert_int_eq(cc->state, UDP_CC_PROBE_BW);
}

/* A queue that stands (a round's least RTT 1/4 above min_rtt, as beside a
 * cubic flow filling the buffer) holds the window to 1.5 BDPs; once it
 * drains, 2 BDPs again. */
START_TEST(test_cc_standing_queue_window)
{
	struct udp_cc cc;
	struct udp_sent p;
	uint64_t t = 20000 * MS, bdp;

	cruising(&cc, &p, 50 * MS, t);
	cc.min_rtt_stamp = t;
	cc.no_queue = 1;
	bdp = udp_cc_bdp(&cc);
	cruise_round(&cc, &p, 60000, 50 * MS, t);
	ck_assert_uint_eq(cc.cwnd, 2 * bdp + 3 * MSS);
	/* Judged at the next round's start, from the round's least RTT. */
	for (int i = 0; i < 2; i++, t += 100 * MS)
		cruise_round(&cc, &p, MSS, 63 * MS, t);
	ck_assert_uint_eq(cc.cwnd, (uint64_t)(UDP_CC_QUEUE_CWND_GAIN * (double)bdp) + 3 * MSS);
	/* Drained: the window grows back by what is acknowledged. */
	for (int i = 0; i < 6; i++, t += 100 * MS)
		cruise_round(&cc, &p, 60000, 50 * MS, t);
	ck_assert_uint_eq(cc.cwnd, 2 * bdp + 3 * MSS);
	ck_assert_uint_eq(udp_cc_bdp(&cc), bdp);
}
END_TEST

/* 1 MB/s with 1000-byte packets: 1000 a second after the first burst. */
START_TEST(test_pacer)
{
	struct udp_pacer p;
	unsigned sent = 0;

	udp_pacer_init(&p, 1000000, 1000, 0);
	ck_assert_uint_eq(p.burst, 8000);                         /* 8 ms at 1 MB/s */
	for (uint64_t t = 0; t <= 1000 * MS; t += 100000)
		while (udp_pacer_allow(&p, 1000, t)) {
			udp_pacer_spend(&p, 1000);
			sent++;
		}
	ck_assert_uint_ge(sent, 1000);
	ck_assert_uint_le(sent, 1008);                            /* and the first burst */
	ck_assert_uint_eq(udp_pacer_wait_ns(&p, 1000), 1000000 - p.tokens * 1000 + 1);
	udp_pacer_set_rate(&p, 1e9, 1000);
	ck_assert_uint_eq(p.burst, 8000000);                      /* 8 ms at 1 GB/s */
}
END_TEST

Suite *make_udp_cc_suite(void)
{
	Suite *s = suite_create("udp_cc");
	TCase *tc = tcase_create("udp_cc");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, test_loss_time_threshold);
	tcase_add_test(tc, test_loss_packet_threshold);
	tcase_add_test(tc, test_cc_states);
	tcase_add_test(tc, test_cc_random_loss);
	tcase_add_test(tc, test_cc_random_loss_wire);
	tcase_add_test(tc, test_cc_shallow_queue);
	tcase_add_test(tc, test_cc_app_limited_startup);
	tcase_add_test(tc, test_cc_outage);
	tcase_add_loop_test(tc, test_cc_probe_rtt, 0, 2);
	tcase_add_test(tc, test_cc_min_rtt_renewed);
	tcase_add_test(tc, test_cc_standing_queue_window);
	tcase_add_test(tc, test_pacer);
	suite_add_tcase(s, tc);
	return s;
}
