/*
 * udp_demux.c - what the sockets receive, handed on: each packet to its
 * conn by destination conn id, and the listener's side of the handshake
 * (INIT, RETRY with a token, INIT with the token, ACCEPT).  Packets from
 * another address than the conn's peer are dropped (no migration).
 * udp_sock.c reports each datagram here through tp->ev.
 */
#include <errno.h>
#include <string.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "udp.h"

static int same_host(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (a->ss_family != b->ss_family)
		return 0;
	if (a->ss_family == AF_INET6)
		return memcmp(&((const struct sockaddr_in6 *)a)->sin6_addr, &((const struct sockaddr_in6 *)b)->sin6_addr,
			      16) == 0;
	return ((const struct sockaddr_in *)a)->sin_addr.s_addr == ((const struct sockaddr_in *)b)->sin_addr.s_addr;
}

static int same_addr(const struct sockaddr_storage *a, const struct sockaddr_storage *b)
{
	if (!same_host(a, b))
		return 0;
	if (a->ss_family == AF_INET6)
		return ((const struct sockaddr_in6 *)a)->sin6_port == ((const struct sockaddr_in6 *)b)->sin6_port;
	return ((const struct sockaddr_in *)a)->sin_port == ((const struct sockaddr_in *)b)->sin_port;
}

static void send_retry(struct udp_sock *s, const struct sockaddr_storage *from, socklen_t fl, uint64_t cid,
		       uint64_t now)
{
	uint8_t buf[UDP_HDR_LEN + 2 + UDP_TOKEN_LEN];
	struct udp_hdr h = { .type = UDP_PKT_RETRY, .dcid = cid };
	struct udp_wr w = { buf + UDP_HDR_LEN, buf + sizeof(buf), 0 };
	uint8_t token[UDP_TOKEN_LEN];

	udp_token_make(s->tp->secret, from, cid, now / 1000000000ull / UDP_TOKEN_EPOCH_S, token);
	udp_hdr_write(buf, &h);
	udp_wr_u16be(&w, UDP_TOKEN_LEN);
	udp_wr_bytes(&w, token, UDP_TOKEN_LEN);
	udp_pkt_seal(buf, sizeof(buf));
	s->tp->stats.retries++;
	(void)sendto(s->fd, buf, sizeof(buf), MSG_DONTWAIT, (const struct sockaddr *)from, fl);
}

/* Conns this address holds here, and the one it asks again for (its
 * ACCEPT was lost), if any. */
static size_t source_conns(struct udp_sock *s, const struct sockaddr_storage *from, uint64_t rcid,
			   struct lds_tp_conn **again)
{
	size_t n = 0;

	*again = NULL;
	for (int b = 0; b < UDP_SOCK_BUCKETS; b++)
		for (struct lds_tp_conn *c = s->bucket[b]; c; c = c->hnext) {
			if (!same_host(&c->peer, from))
				continue;
			n++;
			if (c->rcid == rcid && same_addr(&c->peer, from))
				*again = c;
		}
	return n;
}

static void take_init(struct udp_sock *s, const struct sockaddr_storage *from, socklen_t fl, const struct udp_hdr *h,
		      struct udp_rd *r, size_t len, uint64_t now)
{
	struct lds_transport *tp = s->tp;
	struct lds_tp_listener *l = s->l;
	struct lds_tp_conn *c;
	struct udp_conf ac;
	struct udp_frames f;
	uint64_t tl = udp_rd_u16be(r);
	const uint8_t *token = udp_rd_bytes(r, (size_t)tl);

	if (r->bad || len < UDP_INIT_MIN || (tl != 0 && tl != UDP_TOKEN_LEN) || h->scid == 0 ||
	    udp_frames_parse(r, &f) < 0) {
		tp->stats.bad++;
		return;
	}
	if (l == NULL || l->paused) {
		tp->stats.refused++;
		return;
	}
	if (tl == 0) {
		send_retry(s, from, fl, h->scid, now);
		return;
	}
	if (udp_token_check(tp->secret, from, h->scid, now / 1000000000ull, token) < 0) {
		tp->stats.bad_tokens++;
		return;
	}
	if (source_conns(s, from, h->scid, &c) >= UDP_CONNS_PER_SOURCE || s->nconns >= UDP_CONNS_PER_LISTENER) {
		if (c == NULL) {
			tp->stats.refused++;
			return;
		}
	}
	if (c) {
		if (c->state == UDP_ST_OPEN)
			udp_conn_send_hs(c, UDP_PKT_ACCEPT, now);
		return;
	}
	/* The smallest ring until set_opts grows it to the link's window. */
	ac = l->conf;
	ac.window = UDP_WINDOW_MIN;
	c = udp_conn_new(tp, s, &ac, l->unsent_max);
	if (c == NULL) {
		tp->up.accept_failed(l, -ENOMEM, l->ud);
		return;
	}
	c->accepted = 1;
	c->rcid = h->scid;
	c->peer = *from;
	c->peer_len = fl;
	udp_peer_name(from, c->peer_name, sizeof(c->peer_name));
	c->state = UDP_ST_OPEN;
	/* Unknown to the core yet: a small window, so that a source with
	 * tokens cannot make it hold much before the core's handshake. */
	udp_recvq_open(&c->rq, UDP_WINDOW_PREAUTH);
	if (f.has_max_data)
		c->sq.peer_max = f.max_data;
	udp_conn_send_hs(c, UDP_PKT_ACCEPT, now);
	tp->up.accepted(l, c, l->ud);
}

static void take_retry(struct lds_tp_conn *c, struct udp_rd *r, uint64_t now)
{
	uint64_t tl = udp_rd_u16be(r);
	const uint8_t *token = udp_rd_bytes(r, (size_t)tl);

	if (r->bad || tl != UDP_TOKEN_LEN || c->state != UDP_ST_CONNECTING) {
		c->tp->stats.bad++;
		return;
	}
	memcpy(c->token, token, UDP_TOKEN_LEN);
	c->have_token = 1;
	udp_conn_send_hs(c, UDP_PKT_INIT, now);
}

/* One datagram from the socket. */
struct lds_tp_conn *udp_demux_packet(struct udp_sock *s, const uint8_t *buf, size_t len,
				     const struct sockaddr_storage *from, socklen_t fl, uint64_t now)
{
	struct udp_hdr h;
	struct udp_rd r;
	struct udp_frames f;
	struct lds_tp_conn *c;

	if (udp_pkt_open(buf, len, &h, &r, &f) < 0) {
		s->tp->stats.bad++;
		return NULL;
	}
	if (h.type == UDP_PKT_INIT) {
		take_init(s, from, fl, &h, &r, len, now);
		return NULL;
	}
	c = h.dcid ? udp_sock_lookup(s, h.dcid) : NULL;
	/* A client's socket is connected: the kernel checked the address.
	 * DATA carries no source conn id (the short header). */
	if (c == NULL || (c->accepted && !same_addr(&c->peer, from)) ||
	    (h.type != UDP_PKT_DATA && c->state != UDP_ST_CONNECTING && h.scid != c->rcid)) {
		s->tp->stats.unknown++;
		return NULL;
	}
	if (h.type == UDP_PKT_RETRY) {
		take_retry(c, &r, now);
		return NULL;
	}
	udp_conn_input(c, &h, &r, &f, now);
	return c;
}

void udp_demux_settle(struct lds_tp_conn **touched, size_t n, uint64_t now)
{
	for (size_t i = 0; i < n; i++)
		udp_conn_nudge(touched[i], now);
	for (size_t i = 0; i < n; i++)
		udp_conn_upcalls(touched[i]);
}
