/*
 * udp_ack.h - acknowledgements: the packet numbers a conn has received,
 * kept as ranges, written as a QUIC-style ACK frame (largest, delay, then
 * ranges downwards as gap/length pairs).  Reading one is the frame
 * parser's (udp_packet.c): this file uses the packet's writer, not the
 * other way round.
 */
#ifndef LDS_UDP_ACK_H
#define LDS_UDP_ACK_H

#include <stdint.h>

#include "udp_packet.h"
#include "udp_ranges.h"

#define UDP_RX_RANGES_MAX 64        /* received packet number ranges kept */

/* The received side: packet numbers seen, and what the next ACK owes. */
struct udp_rx {
	struct idset seen;
	uint64_t floor;             /* packets below were forgotten: taken as duplicates */
	uint64_t largest;
	uint64_t largest_ns;        /* when largest arrived, for the ack delay */
	unsigned unacked;           /* ack-eliciting packets since the last ACK */
	uint64_t first_unacked_ns;  /* when the first of them arrived */
	uint64_t last_ack_ns;       /* when the last ACK was written */
	int now;                    /* acknowledge at once: a gap or reordering */
};

void udp_rx_init(struct udp_rx *rx);
void udp_rx_free(struct udp_rx *rx);
/* The whole packet number of a DATA packet whose header carried its low
 * 32 bits: the one nearest the next expected (RFC 9000, A.3).  A sender
 * never has 2^31 packets unacknowledged, so the nearest is the one sent. */
uint64_t udp_rx_pn(const struct udp_rx *rx, uint32_t low);
/* pn was received before (or is too old to tell). */
int udp_rx_seen(const struct udp_rx *rx, uint64_t pn);
/* Records pn; the oldest ranges are forgotten when they are too many.
 * Returns 0 or -ENOMEM. */
int udp_rx_record(struct udp_rx *rx, uint64_t pn, int eliciting, uint64_t now_ns);
/* Writes an ACK frame for what was received (as many ranges as fit in w)
 * and clears what is owed. */
void udp_ack_encode(struct udp_rx *rx, struct udp_wr *w, uint64_t now_ns);

#endif
