/*
 * tcp_zc.h - MSG_ZEROCOPY sends of the TCP transport (setting zerocopy):
 * which sends the kernel still reads from, and its completions, read from
 * the socket's error queue.  Private to transports/tcp*.c.
 *
 * A send of at least min bytes goes with MSG_ZEROCOPY: the kernel pins
 * the pages and sends from them, until it reports the send complete
 * (after the peer acknowledged the data, on a real NIC).  Sends are
 * numbered as the kernel numbers them (one per successful call), held in
 * order, and given back oldest first once complete: a copied send queued
 * behind a zero-copy one is held too, since the core gives its buffer
 * back in order.  Where the kernel refuses (ENOBUFS: the socket's optmem
 * is spent) the send is copied; where it delivers locally (loopback) it
 * copies at delivery and says so (SO_EE_CODE_ZEROCOPY_COPIED).
 */
#ifndef LDS_TCP_ZC_H
#define LDS_TCP_ZC_H

#include <stddef.h>
#include <stdint.h>
#include <sys/socket.h>

struct tcp_zc_send {
	uint32_t id;        /* the kernel's number for a zero-copy send */
	int zc;             /* 0: copied, held only behind a zero-copy send */
	int done;           /* its completion came */
	size_t bytes;
};

struct tcp_zc {
	int on;                     /* SO_ZEROCOPY is set */
	size_t min;                 /* smaller sends are copied */
	uint32_t next_id;           /* the number the kernel gives the next zero-copy send */
	struct tcp_zc_send *q;      /* held sends: q[head .. head + n), oldest first; cap allocated */
	size_t head, n, cap;
	uint64_t sends, completed, copied, refused;
};

/* Sets SO_ZEROCOPY on fd: 0, or -errno (the kernel lacks it; z stays off). */
int tcp_zc_enable(struct tcp_zc *z, int fd, size_t min);
/* sendmsg with flags, zero-copy if z is on and the send large enough.
 * Returns bytes taken (*held: 1 if held until tcp_zc_release gives it
 * back) or -errno. */
ssize_t tcp_zc_sendmsg(struct tcp_zc *z, int fd, struct msghdr *mh, int flags, int *held);
/* Reads the completions waiting in fd's error queue.  Returns how many
 * notices it read (0: none waited). */
int tcp_zc_drain(struct tcp_zc *z, int fd);
/* The bytes of the oldest held send if it may be given back now (and
 * forgets it), else 0. */
size_t tcp_zc_release(struct tcp_zc *z);
void tcp_zc_free(struct tcp_zc *z);

#endif
