/*
 * udp_recovery.h - loss recovery in the manner of RFC 9002: packets sent
 * and not yet acknowledged, RTT estimates (smoothed, variation, minimum),
 * loss by packet threshold (3 newer packets acknowledged) and by time
 * threshold (9/8 of the RTT), and the probe timeout that sends again when
 * acknowledgements stop.  Pure: the time is always a parameter.
 */
#ifndef LDS_UDP_RECOVERY_H
#define LDS_UDP_RECOVERY_H

#include <stddef.h>
#include <stdint.h>

#include "udp_packet.h"

#define UDP_SENT_ELICITING 0x1u   /* carries frames that ask for an ACK */
#define UDP_SENT_INFLIGHT  0x2u   /* counts against the congestion window */
#define UDP_SENT_DONE      0x4u   /* acknowledged, lost or forgotten */
#define UDP_SENT_PMTU      0x8u   /* a path MTU probe (udp_pmtu.h): its loss is no congestion */
#define UDP_SENT_WINDOW    0x10u  /* carries MAX_DATA: if lost, the window is told again */

#define UDP_PKT_THRESHOLD 3
#define UDP_GRANULARITY_NS 1000000ull
#define UDP_INITIAL_RTT_NS 100000000ull
#define UDP_PTO_MAX_NS 500000000ull   /* probes at least every 0.5 s: back within 1 s of the path */

struct udp_sent {
	uint64_t time_ns;
	uint64_t off;             /* stream bytes carried: [off, off + len) */
	uint32_t len;
	uint16_t size;            /* bytes on the wire */
	uint8_t flags;            /* UDP_SENT_* */
	uint8_t app_limited;      /* udp_cc's rate sample state when sent */
	uint64_t delivered, delivered_ns, first_sent_ns;
};

struct udp_rec_cb {
	void (*acked)(void *arg, const struct udp_sent *p, uint64_t now_ns);
	void (*lost)(void *arg, const struct udp_sent *p);
	void *arg;
};

struct udp_recovery {
	struct udp_sent *ring;    /* packet pn at ring[pn % cap], for base <= pn < next */
	size_t cap;
	uint64_t base, next;      /* oldest packet not done; next packet number */
	uint64_t largest_acked;
	int any_acked;
	uint64_t srtt, rttvar, min_rtt, latest_rtt;  /* ns */
	int have_rtt;
	int rtt_new;              /* the last udp_rec_on_ack took an RTT sample */
	uint64_t in_flight;       /* bytes */
	unsigned pto_count;
	uint64_t loss_time;       /* when a packet passes the time threshold; 0 none */
	uint64_t last_eliciting_ns;
	uint64_t max_ack_delay;   /* ns: the peer's promise */
	uint64_t lost, retransmits;
};

int udp_rec_init(struct udp_recovery *rec, uint64_t max_ack_delay_ns);
void udp_rec_free(struct udp_recovery *rec);
/* A slot for the next packet, its number in *pn; the caller fills it and
 * calls udp_rec_commit.  NULL: no memory. */
struct udp_sent *udp_rec_next(struct udp_recovery *rec, uint64_t *pn);
void udp_rec_commit(struct udp_recovery *rec, struct udp_sent *p);
/* A packet that never left (the socket refused it): done, out of flight,
 * not a loss.  Returns it for the caller to send its data again. */
const struct udp_sent *udp_rec_unsend(struct udp_recovery *rec, uint64_t pn);
/* An ACK frame: acknowledged packets (cb->acked, ascending), the RTT from
 * the largest if newly acknowledged, then loss detection (cb->lost).
 * Ranges naming packets never sent are ignored.  Returns the packets
 * newly acknowledged. */
size_t udp_rec_on_ack(struct udp_recovery *rec, const struct udp_frames *f, uint64_t now_ns,
		      const struct udp_rec_cb *cb);
/* When udp_rec_on_timeout is due: 0 if nothing is armed. */
uint64_t udp_rec_deadline(const struct udp_recovery *rec);
/* The timer fired: declares losses by time, or is a probe timeout: then
 * returns 1 and the caller sends an ack-eliciting probe. */
int udp_rec_on_timeout(struct udp_recovery *rec, uint64_t now_ns, const struct udp_rec_cb *cb);
/* The probe timeout now, back-off included. */
uint64_t udp_rec_pto(const struct udp_recovery *rec);
/* The oldest ack-eliciting packet in flight, NULL if none: what a probe
 * sends again. */
const struct udp_sent *udp_rec_oldest(const struct udp_recovery *rec);

#endif
