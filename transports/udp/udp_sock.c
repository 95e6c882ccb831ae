/*
 * udp_sock.c - the UDP transport's sockets: opening them, receiving in
 * batches (recvmmsg, GRO), sending in batches (sendmmsg, GSO), and each
 * socket's table of conns by conn id.  What arrives is reported up
 * through tp->ev (udp_demux.c's, set by udp.c).
 *
 * A listener's conns share its socket; a client conn has a socket of its
 * own, connected to the peer.
 */
#include <errno.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/udp.h>

#include "transports/tp_addr.h"
#include "udp.h"

static unsigned bucket_of(uint64_t cid)
{
	return (unsigned)((cid * 0x9E3779B97F4A7C15ull) >> 58) % UDP_SOCK_BUCKETS;
}

void udp_sock_add_conn(struct udp_sock *s, struct lds_tp_conn *c)
{
	unsigned b = bucket_of(c->lcid);

	c->hnext = s->bucket[b];
	s->bucket[b] = c;
	s->nconns++;
	s->refs++;
}

void udp_sock_del_conn(struct udp_sock *s, struct lds_tp_conn *c)
{
	for (struct lds_tp_conn **pp = &s->bucket[bucket_of(c->lcid)]; *pp; pp = &(*pp)->hnext)
		if (*pp == c) {
			*pp = c->hnext;
			s->nconns--;
			return;
		}
}

struct lds_tp_conn *udp_sock_lookup(struct udp_sock *s, uint64_t cid)
{
	for (struct lds_tp_conn *c = s->bucket[bucket_of(cid)]; c; c = c->hnext)
		if (c->lcid == cid)
			return c;
	return NULL;
}

void udp_peer_name(const struct sockaddr_storage *ss, char *buf, size_t len)
{
	char host[INET6_ADDRSTRLEN] = "?", port[8] = "?";

	getnameinfo((const struct sockaddr *)ss, sizeof(*ss), host, sizeof(host), port, sizeof(port),
		    NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(buf, len, ss->ss_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
}

void udp_sock_unref(struct udp_sock *s)
{
	if (--s->refs > 0)
		return;
	for (struct udp_sock **pp = &s->tp->socks; *pp; pp = &(*pp)->next)
		if (*pp == s) {
			*pp = s->next;
			break;
		}
	s->tp->host.unwatch(s->tp->host.ctx, s->fd);
	close(s->fd);
	free(s);
}

/* Packets i.. that one UDP GSO send can carry: equal sizes, the last
 * possibly shorter, within the kernel's 64 segments and 64 KiB. */
static size_t gso_run(const struct lds_transport *tp, size_t i, size_t n)
{
	size_t k = i + 1, total = tp->olen[i];

	if (tp->no_gso)
		return 1;
	while (k < n && k - i < UDP_GSO_SEGS && total + tp->olen[k] <= UDP_GSO_BYTES && tp->olen[k] <= tp->olen[i]) {
		total += tp->olen[k];
		if (tp->olen[k++] < tp->olen[i])
			break;
	}
	return k - i;
}

int udp_sock_send(struct lds_tp_conn *c, size_t n)
{
	struct lds_transport *tp = c->tp;
	struct mmsghdr mm[UDP_BATCH];
	struct iovec iov[UDP_BATCH * (1 + UDP_OUT_REFS)];
	size_t count[UDP_BATCH], first[UDP_BATCH + 1], ne = 0, done = 0;
	union {
		struct cmsghdr h;
		uint8_t b[CMSG_SPACE(sizeof(uint16_t))];
	} cm[UDP_BATCH];
	int r;

	memset(mm, 0, n * sizeof(mm[0]));
	/* Packet i is iov[first[i]] to iov[first[i + 1]]: its head, then
	 * its STREAM data where it lies. */
	first[0] = 0;
	for (size_t i = 0; i < n; i++) {
		size_t k = first[i] + 1, head = tp->olen[i];

		for (int j = 0; j < tp->onref[i]; j++) {
			iov[k++] = tp->oref[i][j];
			head -= tp->oref[i][j].iov_len;
		}
		iov[first[i]] = (struct iovec){ tp->obuf[i], head };
		first[i + 1] = k;
	}
	/* Runs of equal packets go as one send each: the kernel cuts them
	 * (UDP GSO), one pass down the stack instead of one per packet. */
	for (size_t i = 0; i < n; i += count[ne++]) {
		struct msghdr *h = &mm[ne].msg_hdr;

		count[ne] = gso_run(tp, i, n);
		h->msg_iov = &iov[first[i]];
		h->msg_iovlen = first[i + count[ne]] - first[i];
		/* A listener's socket is shared: name the peer; a client's is connected. */
		if (c->accepted) {
			h->msg_name = &c->peer;
			h->msg_namelen = c->peer_len;
		}
		if (count[ne] > 1) {
			uint16_t seg = (uint16_t)tp->olen[i];

			memset(&cm[ne], 0, sizeof(cm[ne]));
			h->msg_control = cm[ne].b;
			h->msg_controllen = sizeof(cm[ne].b);
			cm[ne].h.cmsg_level = IPPROTO_UDP;
			cm[ne].h.cmsg_type = UDP_SEGMENT;
			cm[ne].h.cmsg_len = CMSG_LEN(sizeof(seg));
			memcpy(CMSG_DATA(&cm[ne].h), &seg, sizeof(seg));
		}
	}
	do
		r = sendmmsg(c->sock->fd, mm, (unsigned)ne, MSG_DONTWAIT);
	while (r < 0 && errno == EINTR);
	if (r >= 0) {
		for (int e = 0; e < r; e++)
			done += count[e];
		c->sock->win_pkts += done;
		return (int)done;
	}
	/* A device without segmentation offload or its software fallback:
	 * one packet a send from now on; these go again. */
	if ((errno == EIO || errno == EINVAL) && !tp->no_gso && ne < n) {
		tp->no_gso = 1;
		return 0;
	}
	/* A full buffer, or an ICMP error from an earlier packet (the path, not the conn). */
	if (errno == EAGAIN || errno == EWOULDBLOCK || errno == ENOBUFS || errno == EHOSTUNREACH ||
	    errno == ENETUNREACH || errno == EMSGSIZE || errno == EPERM)
		return 0;
	return c->accepted ? 0 : -errno;
}

/* A client INIT with no token: answer with one, keep nothing. */
/* The segment size of a datagram the kernel coalesced (UDP GRO); 0 if
 * it is one packet. */
static size_t gro_size(const struct msghdr *h)
{
	for (struct cmsghdr *cm = CMSG_FIRSTHDR(h); cm; cm = CMSG_NXTHDR((struct msghdr *)h, cm))
		if (cm->cmsg_level == IPPROTO_UDP && cm->cmsg_type == UDP_GRO && cm->cmsg_len >= CMSG_LEN(sizeof(int))) {
			int v;

			memcpy(&v, CMSG_DATA(cm), sizeof(v));
			return v > 0 ? (size_t)v : 0;
		}
	return 0;
}

static void sock_event(int fd, unsigned events, void *arg)
{
	struct udp_sock *s = arg;
	struct lds_transport *tp = s->tp;
	struct mmsghdr mm[UDP_BATCH];
	struct iovec iov[UDP_BATCH];
	struct sockaddr_storage from[UDP_BATCH];
	union {
		struct cmsghdr h;
		uint8_t b[CMSG_SPACE(sizeof(int))];
	} cm[UDP_BATCH];
	struct lds_tp_conn *touched[UDP_BATCH * UDP_GSO_SEGS];

	s->refs++;              /* an upcall may close the last conn on it */
	/* Bounded so that one busy socket cannot starve the loop. */
	for (int round = 0; round < 8; round++) {
		uint64_t now = clock_now_ns();
		size_t nt = 0;
		int n;

		for (int i = 0; i < UDP_BATCH; i++) {
			iov[i] = (struct iovec){ tp->rbuf[i], UDP_RBUF };
			mm[i].msg_hdr = (struct msghdr){ .msg_name = &from[i], .msg_namelen = sizeof(from[i]),
							 .msg_iov = &iov[i], .msg_iovlen = 1,
							 .msg_control = cm[i].b, .msg_controllen = sizeof(cm[i].b) };
		}
		n = recvmmsg(fd, mm, UDP_BATCH, MSG_DONTWAIT, NULL);
		if (n <= 0) {
			/* A client's ICMP refusal or unreachability (its socket is
			 * connected): the peer is gone, as after a TCP reset. */
			if (n < 0 && errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR && s->l == NULL) {
				int err = -errno;

				for (int b = 0; b < UDP_SOCK_BUCKETS; b++)
					for (struct lds_tp_conn *c = s->bucket[b]; c; c = c->hnext)
						if (c->state == UDP_ST_CONNECTING || c->state == UDP_ST_OPEN)
							tp->ev.failed(c, err);
			}
			break;
		}
		for (int i = 0; i < n; i++) {
			size_t len = mm[i].msg_len, seg = gro_size(&mm[i].msg_hdr);

			if (mm[i].msg_hdr.msg_flags & MSG_TRUNC) {
				tp->stats.bad++;
				continue;
			}
			if (seg == 0 || seg > len)
				seg = len;
			for (size_t off = 0; off < len; off += seg) {
				size_t pl = len - off < seg ? len - off : seg;
				struct lds_tp_conn *c = tp->ev.packet(s, tp->rbuf[i] + off, pl, &from[i],
								      mm[i].msg_hdr.msg_namelen, now);

				s->win_pkts++;
				if (c == NULL)
					continue;
				c->bytes_recv += pl;
				if ((nt == 0 || touched[nt - 1] != c) && nt < sizeof(touched) / sizeof(touched[0]))
					touched[nt++] = c;
			}
		}
		tp->ev.settle(touched, nt, now);
		if (n < UDP_BATCH)
			break;
	}
	udp_sock_unref(s);
}

void udp_sock_set_polled(struct udp_sock *s, int polled)
{
	if (polled == s->polled)
		return;
	if (s->tp->host.watch(s->tp->host.ctx, s->fd, polled ? 0 : TP_EV_READ, sock_event, s) == 0)
		s->polled = polled;
}

/* Every conn on s has measured a path of at least UDP_POLL_MIN_RTT_NS. */
static int long_paths(const struct udp_sock *s)
{
	for (int b = 0; b < UDP_SOCK_BUCKETS; b++)
		for (const struct lds_tp_conn *c = s->bucket[b]; c; c = c->hnext)
			if (c->path_rtt_min < UDP_POLL_MIN_RTT_NS)
				return 0;
	return s->nconns > 0;
}

/* Polled or watched by the rate of the window that ended. */
static void poll_mode(struct udp_sock *s, uint64_t now)
{
	uint64_t pps;

	if (now - s->win_ns < UDP_POLL_WINDOW_NS)
		return;
	pps = s->win_pkts * 1000000000ull / (now - s->win_ns);
	s->win_ns = now;
	s->win_pkts = 0;
	/* Without the tick nothing would read it. */
	udp_sock_set_polled(s, s->tp->timer_id > 0 && long_paths(s) &&
				       pps >= (s->polled ? UDP_POLL_LEAVE_PPS : UDP_POLL_ENTER_PPS));
}

void udp_sock_poll(struct lds_transport *tp, uint64_t now)
{
	struct udp_sock *s;

	tp->round++;
	/* From the head after each socket: a read's upcalls may close sockets. */
	do {
		for (s = tp->socks; s && s->polled_round == tp->round; s = s->next)
			;
		if (s == NULL)
			break;
		s->polled_round = tp->round;
		poll_mode(s, now);
		if (s->polled) {
			tp->tick_reads++;
			tp->tick_reads_client += s->l == NULL;
			sock_event(s->fd, TP_EV_READ, s);
		}
	} while (1);
}

int udp_sock_open(struct lds_transport *tp, const char *host, uint16_t port, int passive, const struct udp_conf *uc,
		  struct udp_sock **out, struct sockaddr_storage *peer, socklen_t *peer_len, const char **step)
{
	struct addrinfo *res;
	struct udp_sock *s;
	int fd, r, buf = (int)uc->buffer;

	*step = "address";
	r = tp_addr_resolve(host, port, SOCK_DGRAM, passive, &res);
	if (r < 0)
		return r;
	*step = "socket";
	fd = socket(res->ai_family, SOCK_DGRAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		r = -errno;
		freeaddrinfo(res);
		return r;
	}
	/* Larger buffers ride out bursts between the loop's rounds; the
	 * kernel caps them at net.core.[rw]mem_max without a word. */
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &buf, sizeof(buf));
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &buf, sizeof(buf));
	/* Coalesced receives where the kernel offers them (sock_event splits them). */
	(void)setsockopt(fd, IPPROTO_UDP, UDP_GRO, &(int){ 1 }, sizeof(int));
	/* Don't fragment, and no size from the kernel's PMTU cache (ICMP):
	 * the transport finds the path's size itself (udp_pmtu.h), and a
	 * probe fragmented on the way would prove nothing. */
	if (res->ai_family == AF_INET6)
		(void)setsockopt(fd, IPPROTO_IPV6, IPV6_MTU_DISCOVER, &(int){ IPV6_PMTUDISC_PROBE }, sizeof(int));
	else
		(void)setsockopt(fd, IPPROTO_IP, IP_MTU_DISCOVER, &(int){ IP_PMTUDISC_PROBE }, sizeof(int));
	*step = passive ? "bind" : "connect";
	if (passive ? bind(fd, res->ai_addr, res->ai_addrlen) : connect(fd, res->ai_addr, res->ai_addrlen))
		r = -errno;
	if (r == 0 && peer) {
		memcpy(peer, res->ai_addr, res->ai_addrlen);
		*peer_len = res->ai_addrlen;
	}
	freeaddrinfo(res);
	s = r == 0 ? calloc(1, sizeof(*s)) : NULL;
	if (r == 0 && s == NULL)
		r = -ENOMEM;
	if (r == 0) {
		s->tp = tp;
		s->fd = fd;
		s->refs = 0;
		*step = "watch";
		r = tp->host.watch(tp->host.ctx, fd, TP_EV_READ, sock_event, s);
	}
	if (r == 0) {
		s->next = tp->socks;
		tp->socks = s;
	}
	if (r < 0) {
		close(fd);
		free(s);
		return r;
	}
	*out = s;
	return 0;
}
