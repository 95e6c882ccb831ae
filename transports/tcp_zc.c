/* tcp_zc.c - MSG_ZEROCOPY sends and their completions; see tcp_zc.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <netinet/in.h>
#include <linux/errqueue.h>

#include "tcp_zc.h"

#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif
#ifndef MSG_ZEROCOPY
#define MSG_ZEROCOPY 0x4000000
#endif

int tcp_zc_enable(struct tcp_zc *z, int fd, size_t min)
{
	int one = 1;

	if (setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) < 0)
		return -errno;
	z->on = 1;
	z->min = min;
	return 0;
}

/* Room for one more held send at q[head + n]: the live ones moved to the
 * front, or the array doubled. */
static int zc_room(struct tcp_zc *z)
{
	struct tcp_zc_send *q;

	if (z->head + z->n < z->cap)
		return 0;
	if (z->head > 0) {
		memmove(z->q, z->q + z->head, z->n * sizeof(*z->q));
		z->head = 0;
		return 0;
	}
	q = realloc(z->q, (z->cap ? 2 * z->cap : 64) * sizeof(*q));
	if (q == NULL)
		return -ENOMEM;
	z->q = q;
	z->cap = z->cap ? 2 * z->cap : 64;
	return 0;
}

ssize_t tcp_zc_sendmsg(struct tcp_zc *z, int fd, struct msghdr *mh, int flags, int *held)
{
	size_t total = 0;
	int zc = 0;
	ssize_t n;

	*held = 0;
	for (size_t i = 0; i < mh->msg_iovlen; i++)
		total += mh->msg_iov[i].iov_len;
	/* Room to note the send before it is made: a send the kernel holds
	 * must never go unrecorded. */
	if (z->on && zc_room(z) < 0)
		return -ENOMEM;
	if (z->on && total >= z->min) {
		do
			n = sendmsg(fd, mh, flags | MSG_ZEROCOPY);
		while (n < 0 && errno == EINTR);
		if (n >= 0)
			zc = 1;
		else if (errno == ENOBUFS)
			z->refused++;
		else
			return -errno;
	}
	if (!zc) {
		do
			n = sendmsg(fd, mh, flags);
		while (n < 0 && errno == EINTR);
		if (n < 0)
			return -errno;
	}
	/* A copied send needs holding only behind a zero-copy one. */
	if (zc || z->n > 0) {
		z->q[z->head + z->n++] = (struct tcp_zc_send){ .id = zc ? z->next_id : 0, .zc = zc, .bytes = (size_t)n };
		*held = 1;
	}
	if (zc) {
		z->next_id++;
		z->sends++;
	}
	return n;
}

/* Marks the zero-copy sends numbered lo..hi (wrapping) complete. */
static void zc_complete(struct tcp_zc *z, uint32_t lo, uint32_t hi, int copied)
{
	for (size_t i = 0; i < z->n; i++) {
		struct tcp_zc_send *s = &z->q[z->head + i];

		if (s->zc && !s->done && (uint32_t)(s->id - lo) <= (uint32_t)(hi - lo)) {
			s->done = 1;
			z->completed++;
			z->copied += copied != 0;
		}
	}
}

int tcp_zc_drain(struct tcp_zc *z, int fd)
{
	int notices = 0;

	/* Bounded: each notice covers a range of sends. */
	for (int k = 0; k < 64; k++) {
		char ctl[CMSG_SPACE(sizeof(struct sock_extended_err) + sizeof(struct sockaddr_in6))];
		struct msghdr mh = { .msg_control = ctl, .msg_controllen = sizeof(ctl) };

		if (recvmsg(fd, &mh, MSG_ERRQUEUE | MSG_DONTWAIT) < 0)
			break;
		for (struct cmsghdr *cm = CMSG_FIRSTHDR(&mh); cm; cm = CMSG_NXTHDR(&mh, cm)) {
			const struct sock_extended_err *ee = (const struct sock_extended_err *)CMSG_DATA(cm);

			if (!((cm->cmsg_level == SOL_IP && cm->cmsg_type == IP_RECVERR) ||
			      (cm->cmsg_level == SOL_IPV6 && cm->cmsg_type == IPV6_RECVERR)) ||
			    ee->ee_origin != SO_EE_ORIGIN_ZEROCOPY || ee->ee_errno != 0)
				continue;
			zc_complete(z, ee->ee_info, ee->ee_data, ee->ee_code & SO_EE_CODE_ZEROCOPY_COPIED);
			notices++;
		}
	}
	return notices;
}

size_t tcp_zc_release(struct tcp_zc *z)
{
	struct tcp_zc_send *s = &z->q[z->head];

	if (z->n == 0 || (s->zc && !s->done))
		return 0;
	z->head = --z->n > 0 ? z->head + 1 : 0;
	return s->bytes;
}

void tcp_zc_free(struct tcp_zc *z)
{
	free(z->q);
	memset(z, 0, sizeof(*z));
}
