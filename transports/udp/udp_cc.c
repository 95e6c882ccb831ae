/* udp_cc.c - the model-based congestion controller; see udp_cc.h. */
#include <string.h>

#include "udp_cc.h"

const char *const udp_cc_state_names[] = { "startup", "drain", "probe_bw", "probe_rtt" };

#define HIGH_GAIN 2.885             /* 2/ln 2: doubles the rate each round */
#define FULL_BW_GROWTH 1.25
#define FULL_BW_ROUNDS 3
static const double cycle_gains[UDP_CC_CYCLE_LEN] = { 1.25, 0.75, 1, 1, 1, 1, 1, 1 };

void udp_cc_init(struct udp_cc *cc, uint32_t mss, uint64_t rate_max, uint64_t now_ns)
{
	memset(cc, 0, sizeof(*cc));
	cc->mss = mss;
	cc->rate_max = rate_max;
	cc->state = UDP_CC_STARTUP;
	cc->pacing_gain = cc->cwnd_gain = HIGH_GAIN;
	cc->cwnd = (uint64_t)UDP_CC_INITIAL_CWND_PKTS * mss;
	cc->delivered_ns = cc->first_sent_ns = now_ns;
	cc->min_rtt_stamp = now_ns;
	cc->pacing_rate = (uint64_t)(HIGH_GAIN * (double)cc->cwnd * 1e9 / (double)UDP_INITIAL_RTT_NS);
	if (cc->rate_max && cc->pacing_rate > cc->rate_max)
		cc->pacing_rate = cc->rate_max;
}

void udp_cc_on_send(struct udp_cc *cc, struct udp_sent *p, uint64_t in_flight, uint64_t now_ns)
{
	if (in_flight == 0)
		cc->first_sent_ns = cc->delivered_ns = now_ns;
	p->delivered = cc->delivered;
	p->delivered_ns = cc->delivered_ns;
	p->first_sent_ns = cc->first_sent_ns;
	p->app_limited = cc->app_limited != 0;
}

void udp_cc_on_acked(struct udp_cc *cc, const struct udp_sent *p, uint64_t now_ns)
{
	cc->delivered += p->size;
	cc->delivered_ns = now_ns;
	cc->acked_now += p->size;
	if (p->time_ns >= cc->slow_from && p->time_ns < cc->slow_to)
		cc->slow_total += p->size;
	if (cc->sample == NULL || p->delivered >= cc->sample_copy.delivered) {
		cc->sample_copy = *p;
		cc->sample = &cc->sample_copy;
		cc->first_sent_ns = p->time_ns;
	}
}

void udp_cc_on_lost(struct udp_cc *cc, const struct udp_sent *p)
{
	cc->losses++;
	if (p->time_ns >= cc->slow_from && p->time_ns < cc->slow_to) {
		cc->slow_lost += p->size;
		cc->slow_total += p->size;
	}
}

void udp_cc_app_limited(struct udp_cc *cc, uint64_t in_flight)
{
	cc->app_limited = cc->delivered + in_flight ? cc->delivered + in_flight : 1;
}

uint64_t udp_cc_bdp(const struct udp_cc *cc)
{
	if (cc->bw == 0 || cc->min_rtt == 0)
		return (uint64_t)UDP_CC_INITIAL_CWND_PKTS * cc->mss;
	return (uint64_t)((double)cc->bw * (double)cc->min_rtt / 1e9);
}

/* The rate sample of this ACK, into the 10-round max filter. */
static void update_bw(struct udp_cc *cc)
{
	const struct udp_sent *p = cc->sample;
	uint64_t send_ns, ack_ns, iv, rate;

	cc->round_start = 0;
	if (p->delivered >= cc->next_round_delivered) {
		cc->next_round_delivered = cc->delivered;
		cc->round++;
		cc->round_start = 1;
		cc->bw_round[cc->round % UDP_CC_BW_ROUNDS] = 0;
	}
	if (cc->app_limited && cc->delivered > cc->app_limited)
		cc->app_limited = 0;
	send_ns = p->time_ns - p->first_sent_ns;
	ack_ns = cc->delivered_ns - p->delivered_ns;
	iv = send_ns > ack_ns ? send_ns : ack_ns;
	/* Shorter than the path's RTT: acks compressed, not the path's rate. */
	if (iv == 0 || (cc->min_rtt && iv < cc->min_rtt))
		return;
	rate = (uint64_t)((double)(cc->delivered - p->delivered) * 1e9 / (double)iv);
	if (p->app_limited && rate <= cc->bw)
		return;
	if (rate > cc->bw_round[cc->round % UDP_CC_BW_ROUNDS])
		cc->bw_round[cc->round % UDP_CC_BW_ROUNDS] = rate;
	cc->bw = 0;
	for (int i = 0; i < UDP_CC_BW_ROUNDS; i++)
		if (cc->bw_round[i] > cc->bw)
			cc->bw = cc->bw_round[i];
}

/* PROBE_RTT's window: half the BDP (as BBR v2), not BBR v1's 4 packets,
 * which emptied a long fat path and cost a second of its rate every 10 s
 * at 200 ms; half still drains the queue that a gain of 2 builds. */
static uint64_t probe_rtt_cwnd(const struct udp_cc *cc)
{
	uint64_t half = udp_cc_bdp(cc) / 2, min_cwnd = (uint64_t)UDP_CC_MIN_CWND_PKTS * cc->mss;

	return half > min_cwnd ? half : min_cwnd;
}

static void enter_probe_bw(struct udp_cc *cc, uint64_t now_ns)
{
	cc->state = UDP_CC_PROBE_BW;
	cc->cwnd_gain = 2;
	cc->cycle = 2;                  /* a cruising phase: the next probe comes one cycle on */
	cc->cycle_stamp = now_ns;
	cc->pacing_gain = cycle_gains[cc->cycle];
}

/* The pipe is full once the bandwidth grew less than 25 % in 3 rounds.
 * A round the core left idle (app-limited) says nothing of the path -
 * unless packets were lost in it: then the path is full or lossy, and
 * doubling again only adds loss (a conn held by its window or the core
 * stayed in STARTUP for good, sending its bursts at 2.885x the path's
 * rate, and lost a sixth of its packets on a 1 % lossy path). */
static void check_full_pipe(struct udp_cc *cc)
{
	int lossy;

	if (cc->filled_pipe || !cc->round_start)
		return;
	lossy = cc->losses > cc->round_losses;
	cc->round_losses = cc->losses;
	if (cc->sample->app_limited && !lossy)
		return;
	if ((double)cc->bw >= (double)cc->full_bw * FULL_BW_GROWTH) {
		cc->full_bw = cc->bw;
		cc->full_bw_count = 0;
		return;
	}
	if (++cc->full_bw_count >= FULL_BW_ROUNDS)
		cc->filled_pipe = 1;
}

static void update_state(struct udp_cc *cc, uint64_t rtt_ns, uint64_t in_flight, uint64_t now_ns)
{
	uint64_t bdp;
	int expired;

	/* A sample within 1/32 of min_rtt shows the queue drained (PROBE_BW's
	 * 0.75 phase does it each cycle): min_rtt still holds, and PROBE_RTT,
	 * which halves the window for 200 ms and a round (2 % of the rate at
	 * 200 ms), would learn nothing.  Exact equality, all BBR v1 takes,
	 * almost never comes with ACK delays of a few ms. */
	if (rtt_ns && cc->min_rtt && rtt_ns <= cc->min_rtt + cc->min_rtt / UDP_CC_MIN_RTT_SLACK)
		cc->min_rtt_stamp = now_ns;
	expired = now_ns - cc->min_rtt_stamp > UDP_CC_MIN_RTT_WIN_NS;

	if (rtt_ns && (cc->min_rtt == 0 || rtt_ns <= cc->min_rtt || expired)) {
		cc->min_rtt = rtt_ns;
		cc->min_rtt_stamp = now_ns;
	}
	check_full_pipe(cc);
	bdp = udp_cc_bdp(cc);
	if (cc->state == UDP_CC_STARTUP && cc->filled_pipe) {
		cc->state = UDP_CC_DRAIN;
		cc->pacing_gain = 1 / HIGH_GAIN;
	}
	if (cc->state == UDP_CC_DRAIN && in_flight <= bdp)
		enter_probe_bw(cc, now_ns);
	if (cc->state == UDP_CC_PROBE_BW) {
		int next = now_ns - cc->cycle_stamp > cc->min_rtt;

		/* Probing up lasts until the queue is there; down until it is gone. */
		if (cc->pacing_gain > 1 && in_flight < (uint64_t)(cc->pacing_gain * (double)bdp))
			next = next && cc->losses > cc->cycle_losses;
		if (cc->pacing_gain < 1 && in_flight <= bdp)
			next = 1;
		if (next) {
			cc->cycle = (cc->cycle + 1) % UDP_CC_CYCLE_LEN;
			cc->cycle_stamp = now_ns;
			cc->cycle_losses = cc->losses;
			cc->pacing_gain = cycle_gains[cc->cycle];
		}
	}
	if (cc->state != UDP_CC_PROBE_RTT && expired) {
		cc->state = UDP_CC_PROBE_RTT;
		cc->pacing_gain = 1;
		cc->probe_rtt_done = 0;
	}
	if (cc->state == UDP_CC_PROBE_RTT) {
		if (cc->probe_rtt_done == 0 && in_flight <= probe_rtt_cwnd(cc))
			cc->probe_rtt_done = now_ns + UDP_CC_PROBE_RTT_NS;
		if (cc->probe_rtt_done && now_ns >= cc->probe_rtt_done) {
			cc->min_rtt_stamp = now_ns;
			if (cc->filled_pipe) {
				enter_probe_bw(cc, now_ns);
			} else {
				cc->state = UDP_CC_STARTUP;
				cc->pacing_gain = cc->cwnd_gain = HIGH_GAIN;
			}
		}
	}
}

/* Random loss, measured on the packets sent while pacing below the
 * model's rate (PROBE_BW's 0.75 phase, DRAIN): the queue shrinks then, so
 * what they lose is the path's, not an overflow that faster sending would
 * make worse (measured on every packet, the losses of a shallow queue in
 * the probing phase raised the pacing, which raised them: 11 % of packets
 * lost behind a queue of 2 % of the BDP).  A phase's packets are settled
 * long before the next such phase (six cruising phases between), which
 * adds them to the decaying sums, unless they lost more than twice the most
 * paced for (an outage).  A standing queue (a round's least RTT 1/16
 * above the minimum) ends the compensation; within 1/32 it comes back. */
static void update_loss(struct udp_cc *cc, uint64_t rtt_ns, uint64_t now_ns)
{
	int slow = cc->pacing_gain < 1;

	if (slow && cc->slow_to != UINT64_MAX) {
		if (cc->slow_total >= 16ull * cc->mss &&
		    (double)cc->slow_lost <= 2 * UDP_CC_LOSS_COMP_MAX * (double)cc->slow_total) {
			cc->loss_lost = cc->loss_lost * 7 / 8 + (double)cc->slow_lost;
			cc->loss_total = cc->loss_total * 7 / 8 + (double)cc->slow_total;
		}
		cc->slow_lost = cc->slow_total = 0;
		cc->slow_from = now_ns;
		cc->slow_to = UINT64_MAX;
	} else if (!slow && cc->slow_to == UINT64_MAX) {
		cc->slow_to = now_ns;
	}
	if (cc->round_start && cc->round_rtt_min && cc->min_rtt) {
		if (cc->round_rtt_min > cc->min_rtt + cc->min_rtt / 16)
			cc->no_queue = 0;
		else if (cc->round_rtt_min <= cc->min_rtt + cc->min_rtt / 32)
			cc->no_queue = 1;
	}
	if (cc->round_start)
		cc->round_rtt_min = 0;
	if (rtt_ns && (cc->round_rtt_min == 0 || rtt_ns < cc->round_rtt_min))
		cc->round_rtt_min = rtt_ns;
}

/* What pacing multiplies the model's rate by: 1 / (1 - random loss) in
 * PROBE_BW while the path holds no queue, else 1. */
static double loss_gain(const struct udp_cc *cc)
{
	double p;

	if (cc->state != UDP_CC_PROBE_BW || cc->pacing_gain > 1 || !cc->no_queue ||
	    cc->loss_total < UDP_CC_LOSS_SAMPLE_PKTS * (double)cc->mss)
		return 1;
	p = cc->loss_lost / cc->loss_total;
	return 1 / (1 - (p < UDP_CC_LOSS_COMP_MAX ? p : UDP_CC_LOSS_COMP_MAX));
}

static void update_controls(struct udp_cc *cc, uint64_t srtt_ns)
{
	uint64_t min_cwnd = (uint64_t)UDP_CC_MIN_CWND_PKTS * cc->mss;
	double gain = cc->cwnd_gain;
	uint64_t target;
	uint64_t rate;

	/* The 0.75 phase drains our own queue, so one that stands is other
	 * flows', most often a buffer filler's (cubic): a window of 2 BDPs
	 * would take most of that buffer from it. */
	if (cc->state == UDP_CC_PROBE_BW && !cc->no_queue && gain > UDP_CC_QUEUE_CWND_GAIN)
		gain = UDP_CC_QUEUE_CWND_GAIN;
	target = (uint64_t)(gain * (double)udp_cc_bdp(cc)) + 3ull * cc->mss;

	if (cc->filled_pipe)
		cc->cwnd = cc->cwnd + cc->acked_now < target ? cc->cwnd + cc->acked_now : target;
	else if (cc->cwnd < target || cc->delivered < (uint64_t)UDP_CC_INITIAL_CWND_PKTS * cc->mss)
		cc->cwnd += cc->acked_now;
	if (cc->cwnd < min_cwnd)
		cc->cwnd = min_cwnd;
	if (cc->state == UDP_CC_PROBE_RTT && cc->cwnd > probe_rtt_cwnd(cc))
		cc->cwnd = probe_rtt_cwnd(cc);
	if (cc->bw)
		rate = (uint64_t)(cc->pacing_gain * loss_gain(cc) * (double)cc->bw);
	else
		rate = (uint64_t)(cc->pacing_gain * (double)cc->cwnd * 1e9 / (double)(srtt_ns ? srtt_ns : 1));
	/* STARTUP only raises it: one slow sample must not stop the climb. */
	if (cc->filled_pipe || rate > cc->pacing_rate)
		cc->pacing_rate = rate;
	if (cc->rate_max && cc->pacing_rate > cc->rate_max)
		cc->pacing_rate = cc->rate_max;
}

void udp_cc_on_ack_end(struct udp_cc *cc, uint64_t rtt_ns, uint64_t srtt_ns, uint64_t in_flight, uint64_t now_ns)
{
	if (cc->sample == NULL)
		return;
	update_bw(cc);
	update_state(cc, rtt_ns, in_flight, now_ns);
	update_loss(cc, rtt_ns, now_ns);
	update_controls(cc, srtt_ns);
	cc->sample = NULL;
	cc->acked_now = 0;
}
