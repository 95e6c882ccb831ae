/*
 * udp_cc.h - congestion control from a model of the path, in the spirit
 * of BBR (v1): the delivery rate measured per acknowledged packet (the
 * bottleneck bandwidth is its windowed maximum over 10 rounds) and the
 * minimum RTT (over 10 s) give the path's bandwidth-delay product; the
 * sender paces at a gain times the bandwidth and keeps at most a gain
 * times the BDP in flight.  Random loss does not shrink the model, which
 * is why it holds its rate on lossy long paths (docs/udp.md explains the
 * choice and its fairness).  States: STARTUP (doubling per round until
 * the bandwidth stops growing), DRAIN (empties the queue STARTUP built),
 * PROBE_BW (a cycle of gains 1.25, 0.75, then 1) and PROBE_RTT (half the
 * BDP in flight for 200 ms every 10 s, to see the path without the queue).
 * In PROBE_BW, while the RTT shows no standing queue, it paces at the
 * rate over (1 - the random loss rate), so that what the loss leaves
 * fills the bottleneck (a lossy hop before it) instead of (1 - loss) of it.
 * Pure: the time is always a parameter.
 */
#ifndef LDS_UDP_CC_H
#define LDS_UDP_CC_H

#include <stdint.h>

#include "udp_recovery.h"

enum udp_cc_state { UDP_CC_STARTUP, UDP_CC_DRAIN, UDP_CC_PROBE_BW, UDP_CC_PROBE_RTT };
extern const char *const udp_cc_state_names[];

#define UDP_CC_BW_ROUNDS 10
#define UDP_CC_MIN_RTT_WIN_NS 10000000000ull
#define UDP_CC_PROBE_RTT_NS 200000000ull
/* RTT samples within min_rtt / this renew min_rtt's window (no PROBE_RTT). */
#define UDP_CC_MIN_RTT_SLACK 32
#define UDP_CC_INITIAL_CWND_PKTS 32
#define UDP_CC_MIN_CWND_PKTS 4
#define UDP_CC_CYCLE_LEN 8
/* The most random loss paced for: 10 %, at most 1.11x the delivery rate. */
#define UDP_CC_LOSS_COMP_MAX 0.10
/* Packets the loss rate is measured on (decaying) before it is paced for. */
#define UDP_CC_LOSS_SAMPLE_PKTS 500
/* PROBE_BW's window gain while a queue stands (BBR's is 2). */
#define UDP_CC_QUEUE_CWND_GAIN 1.5

struct udp_cc {
	enum udp_cc_state state;
	uint32_t mss;
	uint64_t rate_max;          /* bytes/s, 0: no cap */
	/* Delivery rate sampling (draft-cheng-iccrg-delivery-rate-estimation). */
	uint64_t delivered, delivered_ns, first_sent_ns;
	uint64_t app_limited;       /* delivered count until which samples are app-limited; 0 none */
	const struct udp_sent *sample;  /* this ACK's most recently sent packet */
	struct udp_sent sample_copy;
	uint64_t acked_now;         /* bytes this ACK acknowledged */
	/* The model. */
	uint64_t bw_round[UDP_CC_BW_ROUNDS];
	uint64_t bw;                /* bytes/s: max of bw_round */
	uint64_t round, next_round_delivered;
	int round_start;
	uint64_t min_rtt, min_rtt_stamp;
	uint64_t full_bw;
	unsigned full_bw_count;
	uint64_t round_losses;      /* losses when the round began */
	int filled_pipe;
	unsigned cycle;
	uint64_t cycle_stamp;
	uint64_t cycle_losses;      /* losses when the phase began */
	uint64_t probe_rtt_done;    /* when PROBE_RTT may end; 0: not yet timed */
	double pacing_gain, cwnd_gain;
	/* What the sender obeys. */
	uint64_t cwnd;              /* bytes */
	uint64_t pacing_rate;       /* bytes/s */
	uint64_t losses;
	/* Random loss compensation (docs/udp.md): the share of bytes lost of
	 * those sent while pacing below the model's rate (no queue can
	 * overflow then), and whether the path holds a standing queue. */
	uint64_t slow_from, slow_to;             /* send times of the last such phase */
	uint64_t slow_lost, slow_total;          /* its bytes lost; lost or acknowledged */
	double loss_lost, loss_total;            /* decaying sums over the phases before */
	uint64_t round_rtt_min;     /* this round's least RTT sample; 0: none yet */
	int no_queue;               /* no standing queue: pace for random loss, a window of 2 BDPs */
};

void udp_cc_init(struct udp_cc *cc, uint32_t mss, uint64_t rate_max, uint64_t now_ns);
/* Before p is sent: stamps it with the rate sample state. */
void udp_cc_on_send(struct udp_cc *cc, struct udp_sent *p, uint64_t in_flight, uint64_t now_ns);
/* Each packet an ACK acknowledges (recovery's acked callback). */
void udp_cc_on_acked(struct udp_cc *cc, const struct udp_sent *p, uint64_t now_ns);
/* A packet declared lost: counted (and its bytes, for the random loss
 * rate); the model does not shrink for it. */
void udp_cc_on_lost(struct udp_cc *cc, const struct udp_sent *p);
/* After an ACK's packets: the rate sample, the model, state, cwnd, pacing.
 * rtt_ns: the RTT sample this ACK gave, 0 if none. */
void udp_cc_on_ack_end(struct udp_cc *cc, uint64_t rtt_ns, uint64_t srtt_ns, uint64_t in_flight, uint64_t now_ns);
/* The sender had nothing to send with room to spare: samples until what
 * is in flight now is delivered do not speak for the path. */
void udp_cc_app_limited(struct udp_cc *cc, uint64_t in_flight);
uint64_t udp_cc_bdp(const struct udp_cc *cc);

#endif
