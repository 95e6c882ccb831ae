/*
 * udp_pmtu.h - path MTU discovery by the transport itself (DPLPMTUD,
 * RFC 8899, simplified).  Data packets start at the configured safe size
 * (`udp_mtu`); probes - a PING padded to a larger size, no stream data, one
 * at a time - try sizes up to `udp_mtu_max`: an acknowledged probe raises
 * the size data packets use, a size lost UDP_PMTU_TRIES times (or refused
 * by the socket as too big) is one the path does not carry.  The first
 * probe tries the largest size (most paths carry it), then a binary search
 * narrows to within UDP_PMTU_STEP bytes.  A black hole - UDP_PMTU_PTOS
 * probe timeouts in a row while data packets are larger than the safe
 * size: a route that changed - falls back to the safe size and searches
 * again; a finished search below the largest size starts again after
 * UDP_PMTU_RAISE_NS (a path may have grown).  ICMP is not used: it may
 * be filtered or forged.  Pure: the time is a parameter.
 */
#ifndef LDS_UDP_PMTU_H
#define LDS_UDP_PMTU_H

#include <stdint.h>

#define UDP_PMTU_STEP 32
#define UDP_PMTU_TRIES 3
#define UDP_PMTU_PTOS 3
#define UDP_PMTU_RAISE_NS 600000000000ull

struct udp_pmtu {
	unsigned base, max;       /* the safe size and the largest to try */
	unsigned cur;             /* what data packets use */
	unsigned lo, hi;          /* the search: lo is carried; above hi failed; lo == hi: done */
	unsigned cand;            /* the size to try next */
	unsigned probe;           /* the size of the probe in flight; 0: none */
	unsigned tries;           /* probes of cand lost so far */
	uint64_t raise_ns;        /* a done search starts again then; 0: not yet timed */
	uint64_t probes, lost;    /* sent, lost or refused */
};

void udp_pmtu_init(struct udp_pmtu *m, unsigned base, unsigned max);
/* The size of the probe to send now, 0 if none. */
unsigned udp_pmtu_next(struct udp_pmtu *m, uint64_t now_ns);
/* The probe of that size went out. */
void udp_pmtu_sent(struct udp_pmtu *m, unsigned size);
/* The probe in flight was acknowledged / lost; too_big: the socket
 * refused the probe udp_pmtu_next gave (larger than the interface; it
 * never left, udp_pmtu_sent was not called), no need to try again.  Both
 * return the size data packets use from now on. */
unsigned udp_pmtu_acked(struct udp_pmtu *m);
unsigned udp_pmtu_lost(struct udp_pmtu *m, int too_big);
/* The probe timeout fired, ptos in a row; returns the size data packets
 * use from now on (the safe size after a black hole). */
unsigned udp_pmtu_on_pto(struct udp_pmtu *m, unsigned ptos);

#endif
