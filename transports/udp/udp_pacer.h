/*
 * udp_pacer.h - spreads a conn's packets at the congestion controller's
 * pacing rate: a token bucket refilled at the rate, holding at most 8 ms
 * of it (the host timer's resolution is a millisecond, and a busy host
 * runs it late: with 2 ms, every later millisecond was rate lost for
 * good) and never less than a few packets.  Pure.
 */
#ifndef LDS_UDP_PACER_H
#define LDS_UDP_PACER_H

#include <stdint.h>

#define UDP_PACER_BURST_NS 8000000ull
#define UDP_PACER_BURST_MIN_PKTS 4

struct udp_pacer {
	uint64_t rate;            /* bytes/s */
	uint64_t burst;           /* bytes: the bucket's size */
	uint64_t tokens;          /* bytes that may leave now */
	uint64_t last_ns;         /* when tokens were last added */
};

void udp_pacer_init(struct udp_pacer *p, uint64_t rate, uint32_t mss, uint64_t now_ns);
void udp_pacer_set_rate(struct udp_pacer *p, uint64_t rate, uint32_t mss);
/* Refills for the time since the last call; returns whether size bytes may leave now. */
int udp_pacer_allow(struct udp_pacer *p, uint64_t size, uint64_t now_ns);
void udp_pacer_spend(struct udp_pacer *p, uint64_t size);
/* Nanoseconds until size bytes may leave (0: now). */
uint64_t udp_pacer_wait_ns(const struct udp_pacer *p, uint64_t size);

#endif
