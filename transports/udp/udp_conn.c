/*
 * udp_conn.c - one conn of the UDP transport: packets in (frames to the
 * receive queue, ACKs to loss recovery and the congestion controller),
 * packets out (ACKs, window updates, stream bytes within the congestion
 * window and the pacer's budget), its timers (handshake, loss, probes,
 * keepalive, idle, linger) and the upcalls it owes.  Nothing here makes
 * an upcall while a packet is half built: input only records, and
 * udp_conn_upcalls runs after the batch.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "udp.h"

struct lds_tp_conn *udp_conn_new(struct lds_transport *tp, struct udp_sock *s, const struct udp_conf *uc,
				 size_t unsent_max)
{
	struct lds_tp_conn *c = calloc(1, sizeof(*c));
	uint64_t now = clock_now_ns();

	if (c == NULL)
		return NULL;
	c->tp = tp;
	c->conf = *uc;
	c->unsent_max = unsent_max ? unsent_max : UDP_UNSENT_DEFAULT;
	udp_rx_init(&c->rx);
	udp_sendq_init(&c->sq);
	if (udp_recvq_init(&c->rq, uc->window, UDP_MSG_MAX) < 0 || udp_rec_init(&c->rec, UDP_MAX_ACK_DELAY_NS) < 0 ||
	    getrandom(&c->lcid, sizeof(c->lcid), 0) != sizeof(c->lcid)) {
		udp_conn_free(c);
		return NULL;
	}
	c->lcid |= 1;                   /* 0 names no conn (an INIT's destination) */
	udp_cc_init(&c->cc, uc->mtu, uc->rate_max, now);
	udp_pacer_init(&c->pacer, c->cc.pacing_rate, uc->mtu, now);
	udp_pmtu_init(&c->pmtu, uc->mtu, uc->mtu_max);
	c->last_recv_ns = c->last_eliciting_ns = now;
	c->sock = s;
	udp_sock_add_conn(s, c);
	c->next = tp->conns;
	tp->conns = c;
	tp->nconns++;
	tp->ev.timer_need(tp);
	return c;
}

void udp_conn_free(struct lds_tp_conn *c)
{
	if (c->sock) {
		udp_sock_del_conn(c->sock, c);
		udp_sock_unref(c->sock);
	}
	udp_rx_free(&c->rx);
	udp_recvq_free(&c->rq);
	udp_sendq_free(&c->sq);
	udp_rec_free(&c->rec);
	free(c);
}

void udp_conn_fail(struct lds_tp_conn *c, int err)
{
	if (c->state == UDP_ST_FAILED)
		return;
	if (c->state == UDP_ST_CONNECTING)
		c->connected_owed = 1;
	c->state = UDP_ST_FAILED;
	c->err = err;
	c->end_ns = clock_now_ns();
}

/* ---- packet size -------------------------------------------------------- */

/* Data packets of this size from now on (the path MTU search's word). */
static void set_mtu(struct lds_tp_conn *c, unsigned mtu)
{
	if (mtu == c->conf.mtu)
		return;
	c->conf.mtu = mtu;
	c->cc.mss = mtu;
	udp_pacer_set_rate(&c->pacer, c->cc.pacing_rate, mtu);
}

/* The link's sizes (an accepted conn was made with its listener's). */
void udp_conn_mtu_conf(struct lds_tp_conn *c, unsigned mtu, unsigned mtu_max)
{
	if (c->pmtu.base == mtu && c->pmtu.max == mtu_max)
		return;
	udp_pmtu_init(&c->pmtu, mtu, mtu_max);
	set_mtu(c, mtu);
}

/* ---- packets in ------------------------------------------------------- */

static void on_acked(void *arg, const struct udp_sent *p, uint64_t now_ns)
{
	struct lds_tp_conn *c = arg;

	if (p->len && udp_sendq_acked(&c->sq, p->off, p->len) < 0)
		udp_conn_fail(c, -ENOMEM);
	if (p->flags & UDP_SENT_PMTU)
		set_mtu(c, udp_pmtu_acked(&c->pmtu));
	udp_cc_on_acked(&c->cc, p, now_ns);
}

/* What a packet lost or refused by the socket carried goes again: its
 * stream bytes, and the window if it told it (no later packet may: the
 * window moves only as the application reads, and a sender blocked on it
 * sends nothing that would make us answer, so both sides would wait). */
static void requeue(struct lds_tp_conn *c, const struct udp_sent *p)
{
	if (p->flags & UDP_SENT_WINDOW)
		c->window_owed = 1;
	if (p->len && udp_sendq_lost(&c->sq, p->off, p->len) < 0)
		udp_conn_fail(c, -ENOMEM);
}

static void on_lost(void *arg, const struct udp_sent *p)
{
	struct lds_tp_conn *c = arg;

	if (p->flags & UDP_SENT_PMTU) {
		set_mtu(c, udp_pmtu_lost(&c->pmtu, 0));
		return;
	}
	requeue(c, p);
	udp_cc_on_lost(&c->cc, p);
}

static void take_ack(struct lds_tp_conn *c, const struct udp_frames *f, uint64_t now)
{
	struct udp_rec_cb cb = { on_acked, on_lost, c };

	if (udp_rec_on_ack(&c->rec, f, now, &cb) == 0)
		return;
	/* The peer's ACK delay out (its timers, its reading on the tick):
	 * what the path itself takes, for udp_sock_poll. */
	if (c->rec.rtt_new) {
		uint64_t d = f->ack_delay_us * 1000, path = c->rec.latest_rtt > d ? c->rec.latest_rtt - d : 0;

		if (c->path_rtt_min == 0 || path < c->path_rtt_min)
			c->path_rtt_min = path ? path : 1;
	}
	udp_cc_on_ack_end(&c->cc, c->rec.rtt_new ? c->rec.latest_rtt : 0, c->rec.srtt, c->rec.in_flight, now);
}

/* A CLOSE: what was received whole is still handed up, then the end. */
static void take_close(struct lds_tp_conn *c, struct udp_rd *r)
{
	uint64_t code = udp_rd_u8(r);

	if (r->bad) {
		c->tp->stats.bad++;
		return;
	}
	c->peer_closed = code == 0 ? 1 : 2;
	if (c->state == UDP_ST_OPEN || c->state == UDP_ST_CONNECTING)
		udp_conn_fail(c, code == 0 ? -EPIPE : -ECONNRESET);
	else if (c->state == UDP_ST_LINGER || c->state == UDP_ST_CLOSING)
		c->end_ns = clock_now_ns();
}

void udp_conn_input(struct lds_tp_conn *c, const struct udp_hdr *h, struct udp_rd *payload,
		    const struct udp_frames *f, uint64_t now)
{
	uint64_t pn;
	int r;

	if (h->type == UDP_PKT_CLOSE) {
		take_close(c, payload);
		return;
	}
	if (c->state == UDP_ST_FAILED)
		return;
	if (c->state == UDP_ST_CLOSING) {
		c->answer_close = 1;
		return;
	}
	if (h->type != UDP_PKT_DATA && h->type != UDP_PKT_ACCEPT) {
		c->tp->stats.bad++;
		return;
	}
	if (c->state == UDP_ST_CONNECTING && h->type == UDP_PKT_DATA) {
		/* Data that overtook the ACCEPT, which names the server's conn
		 * id: it comes again, and the ACCEPT with the next INIT. */
		c->tp->stats.unknown++;
		return;
	}
	c->last_recv_ns = now;
	if (c->state == UDP_ST_CONNECTING) {
		c->rcid = h->scid;
		c->state = UDP_ST_OPEN;
		c->connected_owed = 1;
	}
	if (f->has_max_data && f->max_data > c->sq.peer_max)
		c->sq.peer_max = f->max_data;
	if (h->type == UDP_PKT_ACCEPT)
		return;             /* outside the packet number space */
	pn = udp_rx_pn(&c->rx, (uint32_t)h->pn);
	if (pn >= 1ull << 62) {
		c->tp->stats.bad++;
		return;
	}
	if (udp_rx_seen(&c->rx, pn)) {
		c->tp->stats.replayed++;
		c->rx.now = 1;      /* our ACK may have been lost */
		return;
	}
	if (f->has_stream) {
		r = udp_recvq_insert(&c->rq, f->stream_off, f->stream_data, f->stream_len);
		if (r == -EMSGSIZE || r == -ENOSPC) {
			c->dropped++;   /* not acknowledged: it comes again */
			return;
		}
		if (r < 0) {
			udp_conn_fail(c, r);
			return;
		}
	}
	if (udp_rx_record(&c->rx, pn, udp_frames_eliciting(f), now) < 0) {
		udp_conn_fail(c, -ENOMEM);
		return;
	}
	if (f->has_ack)
		take_ack(c, f, now);
}

/* ---- packets out ------------------------------------------------------ */

static size_t hdr(struct lds_tp_conn *c, uint8_t *buf, uint8_t type, uint64_t pn)
{
	struct udp_hdr h = { .type = type, .dcid = c->rcid, .scid = c->lcid, .pn = pn };

	return udp_hdr_write(buf, &h);
}

void udp_conn_send_hs(struct lds_tp_conn *c, uint8_t type, uint64_t now)
{
	uint8_t *buf = c->tp->obuf[0];
	struct udp_wr w = { buf + hdr(c, buf, type, 0), buf + c->conf.mtu, 0 };

	if (type == UDP_PKT_INIT) {
		udp_wr_u16be(&w, c->have_token ? UDP_TOKEN_LEN : 0);
		if (c->have_token)
			udp_wr_bytes(&w, c->token, UDP_TOKEN_LEN);
	}
	if (type == UDP_PKT_CLOSE) {
		udp_wr_u8(&w, c->state == UDP_ST_CLOSING && udp_sendq_empty(&c->sq) ? 0 : 1);
	} else {
		c->advertised = udp_recvq_limit(&c->rq);
		udp_wr_varint(&w, UDP_FR_MAX_DATA);
		udp_wr_varint(&w, c->advertised);
	}
	/* A RETRY answers an INIT that is at least as large: no amplification. */
	while (type == UDP_PKT_INIT && w.p < buf + UDP_INIT_MIN)
		*w.p++ = UDP_FR_PADDING;
	c->tp->olen[0] = (size_t)(w.p - buf);
	c->tp->onref[0] = 0;
	udp_pkt_seal(buf, c->tp->olen[0]);
	(void)udp_sock_send(c, 1);
}

/* How long ACKs may wait for more packets (0: ack every UDP_ACK_EVERY). */
static uint64_t ack_interval(const struct lds_tp_conn *c)
{
	uint64_t d = c->path_rtt_min / 8;

	if (!c->sock->polled || c->path_rtt_min < UDP_POLL_MIN_RTT_NS)
		return 0;
	return d < UDP_ACK_INTERVAL_MAX_NS ? d : UDP_ACK_INTERVAL_MAX_NS;
}

/* Owes the peer an ACK now. */
static int ack_due(const struct lds_tp_conn *c, uint64_t now)
{
	const struct udp_rx *rx = &c->rx;
	uint64_t every;

	if (rx->seen.n == 0 || (!rx->now && rx->unacked == 0))
		return 0;
	every = ack_interval(c);
	if (every)
		return rx->unacked >= UDP_ACK_BULK || now - rx->last_ack_ns >= every;
	return rx->now || rx->unacked >= UDP_ACK_EVERY || now - rx->first_unacked_ns >= UDP_MAX_ACK_DELAY_NS;
}

/* The granted window moved a quarter since the peer was last told, the
 * last telling was lost, or a probe goes (a keepalive or a probe timeout's:
 * whatever else was lost, the window heals with it). */
static int window_due(const struct lds_tp_conn *c)
{
	return c->window_owed || c->probe || udp_recvq_limit(&c->rq) - c->advertised >= c->rq.open / 4;
}

/* Gives the DATA packet of size bytes built in obuf[i] (carrying len
 * stream bytes from offset off, at its end) the next packet number,
 * seals it and records it for loss recovery and, if in flight, the
 * congestion controller.  0, or -1 when the conn failed. */
static int stamp(struct lds_tp_conn *c, size_t i, size_t size, uint64_t off, size_t len, uint8_t flags, uint64_t now,
		 uint64_t *pn)
{
	struct udp_sent *p = udp_rec_next(&c->rec, pn);

	if (p == NULL) {
		udp_conn_fail(c, -ENOMEM);
		return -1;
	}
	hdr(c, c->tp->obuf[i], UDP_PKT_DATA, *pn);
	c->tp->olen[i] = size;
	udp_pkt_seal(c->tp->obuf[i], size - len);
	p->time_ns = now;
	p->off = off;
	p->len = (uint32_t)len;
	p->size = (uint16_t)c->tp->olen[i];
	p->flags = flags;
	if (flags & UDP_SENT_INFLIGHT)
		udp_cc_on_send(&c->cc, p, c->rec.in_flight, now);
	udp_rec_commit(&c->rec, p);
	return 0;
}

#define BUILT 1          /* a packet is in tp->obuf[i] */
#define HELD 2           /* data was held back by the congestion window or the pacer */

/* Builds one packet in tp->obuf[i]: what is owed and what may go.
 * Returns BUILT, HELD, both or neither (0: nothing to send). */
static int build(struct lds_tp_conn *c, size_t i, uint64_t now, uint64_t *pn_out)
{
	uint8_t *buf = c->tp->obuf[i];
	struct udp_wr w = { buf + UDP_DATA_HDR_LEN, buf + c->conf.mtu, 0 };
	int eliciting = 0, held = 0, retx = 0, window = 0, nref = 0;
	uint64_t off = 0;
	size_t len = 0;

	if (ack_due(c, now))
		udp_ack_encode(&c->rx, &w, now);
	if (window_due(c)) {
		c->advertised = udp_recvq_limit(&c->rq);
		c->window_owed = 0;
		udp_wr_varint(&w, UDP_FR_MAX_DATA);
		udp_wr_varint(&w, c->advertised);
		eliciting = window = 1;
	}
	if (c->probe || (c->rec.in_flight + c->conf.mtu <= c->cc.cwnd && udp_pacer_allow(&c->pacer, c->conf.mtu, now))) {
		size_t room = (size_t)(w.end - w.p);
		size_t over = 1 + udp_varint_len(c->sq.end);  /* type, offset */

		if (room > over + 16 && udp_sendq_next(&c->sq, room - over, &off, &len, &retx)) {
			udp_wr_varint(&w, UDP_FR_STREAM);
			udp_wr_varint(&w, off);
			/* In place where it lies in a few pieces: the kernel's
			 * copy is the only one, as over TCP. */
			nref = udp_sendq_refs(&c->sq, off, len, c->tp->oref[i], UDP_OUT_REFS);
			if (nref < 0) {
				udp_sendq_gather(&c->sq, off, w.p, len);
				w.p += len;
				nref = 0;
			}
			udp_sendq_sent(&c->sq, off, len, retx);
			eliciting = 1;
		}
	} else if (c->sq.retx.n || (c->sq.next < c->sq.end && c->sq.next < c->sq.peer_max)) {
		held = 1;
	}
	if (c->probe && !eliciting) {
		udp_wr_varint(&w, UDP_FR_PING);
		eliciting = 1;
	}
	if (w.p == buf + UDP_DATA_HDR_LEN)
		return held ? HELD : 0;
	c->tp->onref[i] = nref;
	if (stamp(c, i, (size_t)(w.p - buf) + (nref ? len : 0), off, len,
		  (eliciting ? UDP_SENT_ELICITING | UDP_SENT_INFLIGHT : 0) | (window ? UDP_SENT_WINDOW : 0), now, pn_out) < 0)
		return 0;
	if (eliciting) {
		udp_pacer_spend(&c->pacer, c->tp->olen[i]);
		c->last_eliciting_ns = now;
		if (c->probe)
			c->probe--;
	}
	if (retx)
		c->rec.retransmits++;
	return held ? BUILT | HELD : BUILT;
}

/* A path MTU probe: a PING padded to size, in a send of its own, so that
 * the socket's EMSGSIZE (larger than the interface) speaks of it only. */
static void send_pmtu_probe(struct lds_tp_conn *c, unsigned size, uint64_t now)
{
	uint8_t *buf = c->tp->obuf[0];
	struct udp_wr w = { buf + UDP_DATA_HDR_LEN, buf + size, 0 };
	uint64_t pn;
	int r, err;

	udp_wr_varint(&w, UDP_FR_PING);
	memset(w.p, UDP_FR_PADDING, (size_t)(w.end - w.p));
	c->tp->onref[0] = 0;
	if (stamp(c, 0, size, 0, 0, UDP_SENT_ELICITING | UDP_SENT_INFLIGHT | UDP_SENT_PMTU, now, &pn) < 0)
		return;
	r = udp_sock_send(c, 1);
	err = errno;
	if (r == 1) {
		udp_pmtu_sent(&c->pmtu, size);
		udp_pacer_spend(&c->pacer, size);
		c->bytes_sent += size;
		return;
	}
	(void)udp_rec_unsend(&c->rec, pn);
	if (r < 0)
		udp_conn_fail(c, r);
	else if (err == EMSGSIZE)
		set_mtu(c, udp_pmtu_lost(&c->pmtu, 1));
}

/* Sends the batch built so far; what the socket refused goes again. */
static int send_batch(struct lds_tp_conn *c, size_t n, const uint64_t *pns)
{
	int sent = udp_sock_send(c, n);

	if (sent < 0) {
		udp_conn_fail(c, sent);
		return -1;
	}
	for (size_t i = (size_t)sent; i < n; i++) {
		const struct udp_sent *p = udp_rec_unsend(&c->rec, pns[i]);

		if (p)
			requeue(c, p);
	}
	for (size_t i = 0; i < (size_t)sent; i++)
		c->bytes_sent += c->tp->olen[i];
	return (size_t)sent < n ? -1 : 0;
}

void udp_conn_flush(struct lds_tp_conn *c, uint64_t now)
{
	uint64_t pns[UDP_BATCH];
	size_t n = 0;
	unsigned probe;
	int r = 1;

	if (c->state != UDP_ST_OPEN && c->state != UDP_ST_LINGER)
		return;
	if (c->pacer.rate != c->cc.pacing_rate)
		udp_pacer_set_rate(&c->pacer, c->cc.pacing_rate, c->conf.mtu);
	/* Probes only while acknowledgements flow: one lost in an outage
	 * says nothing of its size. */
	probe = udp_pmtu_next(&c->pmtu, now);
	if (probe && c->rec.pto_count == 0 && c->rec.have_rtt && c->rec.in_flight + probe <= c->cc.cwnd)
		send_pmtu_probe(c, probe, now);
	/* Bounded: a fast path yields to the loop every few batches. */
	for (int k = 0; k < 4 * UDP_BATCH && c->state != UDP_ST_FAILED; k++) {
		r = build(c, n, now, &pns[n]);
		if (!(r & BUILT))
			break;
		/* Built, even when its data was held back: an ACK or a window
		 * that goes alone must go, or a peer that waits for it while
		 * its own window is full waits for ever. */
		if (++n == UDP_BATCH) {
			if (send_batch(c, n, pns) < 0)
				return;
			n = 0;
		}
		if (r & HELD)
			break;
	}
	if (n && send_batch(c, n, pns) < 0)
		return;
	/* Nothing held back and room to spare: the core, not the path, is the limit. */
	if (r == 0 && c->rec.in_flight + c->conf.mtu <= c->cc.cwnd)
		udp_cc_app_limited(&c->cc, c->rec.in_flight);
}

/* What the pacer allows in one tick of the timer (at least a packet). */
static uint64_t tick_bytes(const struct lds_tp_conn *c)
{
	uint64_t b = c->pacer.rate / 1000 * c->tp->tick_ms;

	if (b > c->pacer.burst)
		b = c->pacer.burst;
	return b > c->conf.mtu ? b : c->conf.mtu;
}

void udp_conn_nudge(struct lds_tp_conn *c, uint64_t now)
{
	if (c->tp->tick_ms > UDP_TICK_MS && !ack_due(c, now) && !window_due(c) && !c->probe &&
	    !udp_pacer_allow(&c->pacer, tick_bytes(c), now))
		return;
	udp_conn_flush(c, now);
}

/* ---- timers ------------------------------------------------------------ */

static void close_now(struct lds_tp_conn *c, uint64_t now)
{
	c->state = UDP_ST_CLOSING;
	c->end_ns = now + UDP_ZOMBIE_NS;
	c->close_sends = 1;
	c->close_next_ns = now + udp_rec_pto(&c->rec);
	udp_conn_send_hs(c, UDP_PKT_CLOSE, now);
}

static void tick_connecting(struct lds_tp_conn *c, uint64_t now)
{
	if (now >= c->hs_deadline_ns) {
		udp_conn_fail(c, -ETIMEDOUT);
		return;
	}
	if (now < c->hs_next_ns)
		return;
	udp_conn_send_hs(c, UDP_PKT_INIT, now);
	c->hs_interval_ns = c->hs_interval_ns * 2 < UDP_PTO_MAX_NS ? c->hs_interval_ns * 2 : UDP_PTO_MAX_NS;
	c->hs_next_ns = now + c->hs_interval_ns;
}

void udp_conn_tick(struct lds_tp_conn *c, uint64_t now)
{
	uint64_t idle = (uint64_t)(c->conf.idle_timeout * 1e9), dl;
	struct udp_rec_cb cb = { on_acked, on_lost, c };

	switch (c->state) {
	case UDP_ST_CONNECTING:
		tick_connecting(c, now);
		return;
	case UDP_ST_CLOSING:
		if (c->close_sends < UDP_CLOSE_SENDS && now >= c->close_next_ns) {
			c->close_sends++;
			c->close_next_ns = now + udp_rec_pto(&c->rec);
			c->answer_close = 1;
		}
		if (c->answer_close)
			udp_conn_send_hs(c, UDP_PKT_CLOSE, now);
		c->answer_close = 0;
		return;
	case UDP_ST_FAILED:
		return;
	case UDP_ST_OPEN:
	case UDP_ST_LINGER:
		break;
	}
	if (now - c->last_recv_ns > idle) {
		udp_conn_fail(c, -ETIMEDOUT);
		return;
	}
	dl = udp_rec_deadline(&c->rec);
	if (dl && now >= dl && udp_rec_on_timeout(&c->rec, now, &cb)) {
		const struct udp_sent *old = udp_rec_oldest(&c->rec);

		/* The probe carries the oldest data again, or a PING. */
		if (old && old->len && udp_sendq_lost(&c->sq, old->off, old->len) < 0)
			udp_conn_fail(c, -ENOMEM);
		c->probe = 1;
		set_mtu(c, udp_pmtu_on_pto(&c->pmtu, c->rec.pto_count));
	}
	if (now - c->last_eliciting_ns >= idle / 3)
		c->probe = 1;       /* keepalive */
	if (c->state == UDP_ST_LINGER) {
		if (udp_sendq_empty(&c->sq) || now >= c->end_ns || c->peer_closed) {
			close_now(c, now);
			return;
		}
	}
	udp_conn_flush(c, now);
}

void udp_conn_close(struct lds_tp_conn *c, uint64_t now)
{
	switch (c->state) {
	case UDP_ST_OPEN:
		if (!udp_sendq_empty(&c->sq) && !c->peer_closed && udp_sendq_own(&c->sq) == 0) {
			c->state = UDP_ST_LINGER;
			c->end_ns = now + UDP_LINGER_MAX_NS;
			return;
		}
		close_now(c, now);
		return;
	case UDP_ST_CONNECTING:
		c->state = UDP_ST_FAILED;
		c->end_ns = now;
		return;
	default:
		return;
	}
}

int udp_conn_finished(const struct lds_tp_conn *c, uint64_t now)
{
	if (!c->core_closed || c->dead_listed)
		return 0;
	return (c->state == UDP_ST_FAILED || c->state == UDP_ST_CLOSING) && now >= c->end_ns;
}

/* ---- upcalls ----------------------------------------------------------- */

int udp_conn_upcalls(struct lds_tp_conn *c)
{
	struct lds_transport *tp = c->tp;
	void *ctx;
	int made = 0;

	if (c->core_closed)
		return 0;
	if (c->connected_owed) {
		c->connected_owed = 0;
		if (c->state == UDP_ST_FAILED) {
			/* The conn never reached the core: ours to free. */
			c->core_closed = 1;
			tp->up.connected(NULL, c->err, c->ud);
			return 1;
		}
		tp->up.connected(c, 0, c->ud);
		made = 1;
	}
	while (!c->core_closed && udp_sendq_pop_done(&c->sq, &ctx)) {
		if (tp->up.sent)
			tp->up.sent(c, ctx, c->ud);
		made = 1;
	}
	if (!c->core_closed && !c->no_read && !c->rq.held &&
	    (udp_recvq_ready(&c->rq) || (c->state == UDP_ST_FAILED && !c->err_told))) {
		tp->up.readable(c, c->ud);
		made = 1;
	}
	if (!c->core_closed && c->want_w && c->state == UDP_ST_OPEN && c->sq.end - c->sq.next < c->unsent_max) {
		tp->up.writable(c, c->ud);
		made = 1;
	}
	return made;
}
