/* link.c - one peer gateway: its session, stream slots, reconnects; see link.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "auth.h"
#include "clock.h"
#include "handshake.h"
#include "link_int.h"
#include "log.h"

/* A stream takes new blocks only while its socket holds less than this
 * not yet sent.  Without a limit the kernel queues megabytes per socket
 * on a long path, and a block given to a stream that then slows down
 * (a loss, a smaller share of the bottleneck) waits behind them while
 * the receiver holds everything after it: measured on 100 ms with 0.1 %
 * loss, 2 MB queued in one socket, and 10 % less goodput with 8 streams
 * (docs/BENCHMARKS.md).  Blocks not yet given out go to whichever stream
 * can send first. */
#define LINK_UNSENT_MAX (128u * 1024)
/* ... but a stream that sends fast may hold what it sends in
 * LINK_UNSENT_NS, up to LINK_UNSENT_FAST: on loopback 128 KiB is a fifth
 * of a millisecond, and the wake-ups at that pace cost a fifth of the
 * sending gateway's CPU (docs/BENCHMARKS.md, issue 21).  Under 25 MB/s a
 * stream (a WAN path of 200 Mb/s and less, whatever the stream count)
 * keeps LINK_UNSENT_MAX. */
#define LINK_UNSENT_NS (5ull * 1000000)
#define LINK_UNSENT_FAST (1024u * 1024)
/* An up link repeats its ACK at least this often: ACKs lost with a broken
 * stream are made good, and the peer's silence test (linkpath.c) counts
 * on hearing something. */
#define ACK_REFRESH_NS (200ull * 1000000)
/* The least sendbuf defer_ahead of a link that defers: a batch per
 * stream of the default four. */
#define LINK_DEFER_MIN (4u * STREAM_BATCH)

static void link_reconnect_later(struct link *l, int idx, uint64_t started_ns);
static void link_path_back(struct link *l, const struct stream *s);
static void link_connect_failed(struct stream *s, const char *why);
static void link_dial_ready(void *arg);
static void link_connect_slot(struct link *l, unsigned idx);

const char *link_name(const struct link *l)
{
	return l->cfg->cluster;
}

/* The transport options this link's streams use. */
static struct lds_tp_opts link_tp_opts(const struct link *l)
{
	struct lds_tp_opts o = { .connect_timeout = l->cfg->connect_timeout, .conf = l->cfg->tp_conf };

	o.unsent_max = LINK_UNSENT_MAX;
	return o;
}

struct link *link_find(struct daemon *d, const char *cluster)
{
	for (size_t i = 0; i < d->nlinks; i++)
		if (strcmp(d->links[i]->cfg->cluster, cluster) == 0)
			return d->links[i];
	return NULL;
}

size_t link_recv_memory(const struct link *l)
{
	return l->cfg->recv_memory;
}

int link_idle(const struct link *l)
{
	return sendbuf_idle(&l->sb);
}

/* ---- ACKs -------------------------------------------------------------- */

/* Queues an ACK with the link's receiving state on s. */
static int link_queue_ack(struct stream *s)
{
	struct wire_ack a;
	uint8_t buf[WIRE_HDR_LEN + 32 + 32 * WIRE_MAX_RANGES];
	size_t n;

	recvbuf_ack(&s->link->rb, &a);
	n = wire_encode_ack(buf, sizeof(buf), &a);
	if (n == 0 || stream_queue(s, buf, n) < 0)
		return -ENOBUFS;
	s->link->acks_sent++;
	return 0;
}

static int link_send_ack(struct stream *s)
{
	struct link *l = s->link;

	if (link_queue_ack(s) < 0)
		return -ENOBUFS;
	l->ack_pending = 0;
	l->deliv_unreported = 0;
	l->last_ack_ns = clock_now_ns();
	return 0;
}

/* ---- upcalls from the handshake ----------------------------------------- */

/* Peer instance check after authentication: a new instance lost its state. */
static void link_hs_authentic(struct stream *keep, uint64_t instance)
{
	struct link *l = keep->link;

	if (l->peer_instance == instance)
		return;
	if (l->peer_instance != 0) {
		log_warnx("link %s: peer gateway restarted (instance %016" PRIx64 " -> %016" PRIx64
			  "); resetting the session, unacknowledged messages are reported lost",
			  link_name(l), l->peer_instance, instance);
		for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++)
			if (l->streams[i] && l->streams[i] != keep)
				stream_close(l->streams[i], "peer restarted", 0);
		sendbuf_reset(&l->sb, linkmsg_lost, l);
		recvbuf_reset(&l->rb);
		lostrep_reset(&l->lr);
		l->resets++;
		l->d->sink.space(l->d->sink.arg, l);
	}
	l->peer_instance = instance;
}

/* An accepted conn gets the transport options the link's streams use. */
static void link_hs_identified(struct stream *s)
{
	struct link *l = s->link;
	struct lds_tp_opts o;
	int r;

	if (s->ops->set_opts == NULL)
		return;
	o = link_tp_opts(l);
	r = s->ops->set_opts(s->conn, &o);
	if (r < 0)
		log_warnx("link %s: connection from %s keeps some of the kernel's defaults: cannot apply its %s "
			  "settings: %s", link_name(l), s->peer_addr, s->ops->name, strerror(-r));
}

/* Puts an authenticated stream into its slot, replacing a stale one. */
static void link_hs_attach(struct stream *s, unsigned idx, unsigned nstreams)
{
	struct link *l = s->link;

	if (nstreams > l->nstreams)
		l->nstreams = nstreams;
	if (l->streams[idx] && l->streams[idx] != s)
		stream_close(l->streams[idx], "replaced by a new connection", 0);
	s->idx = (int)idx;
	l->streams[idx] = s;
	if (s->peer_max_msg)
		l->peer_max_msg = s->peer_max_msg;
}

static const struct hs_upcalls link_hs = {
	.identify = link_find,
	.identified = link_hs_identified,
	.authentic = link_hs_authentic,
	.queue_ack = link_queue_ack,
	.attach = link_hs_attach,
};

/* ---- upcalls from the streams ------------------------------------------- */

static void on_pong(struct link *l, uint64_t t)
{
	uint64_t now = clock_now_ns(), us;

	if (t > now)
		return;
	us = (now - t) / 1000;
	/* RFC 6298 smoothing, alpha 1/8. */
	l->srtt_us = l->rtt_samples++ ? (7 * l->srtt_us + us) / 8 : us;
}

/* Handles one frame: the handshake's until the stream is up. */
static int link_stream_frame(struct stream *s, const struct wire_frame *f)
{
	struct link *l = s->link;

	if (s->st != ST_UP || f->type == WIRE_REFUSE)
		return hs_frame(&link_hs, s, f);
	switch (f->type) {
	case WIRE_DATA: {
		uint64_t seq;
		const uint8_t *data;
		uint32_t len;
		int r;

		if (wire_decode_data(f, &seq, &data, &len) < 0)
			return -1;
		r = recvbuf_block(&l->rb, seq, data, len, linkmsg_received, l);
		if (r < 0) {
			log_warnx("link %s: stream %d: block %" PRIu64 " rejected (%s): peer is misbehaving",
				  link_name(l), s->idx, seq, r == -EPROTO ? "outside the window or malformed records"
									  : strerror(-r));
			return -1;
		}
		l->ack_pending = 1;
		return 0;
	}
	case WIRE_ACK: {
		struct wire_ack a;

		if (wire_decode_ack(f, &a) < 0 || sendbuf_ack(&l->sb, &a, linkmsg_acked, l) < 0) {
			log_warnx("link %s: stream %d: impossible ACK from %s: peer is misbehaving", link_name(l),
				  s->idx, s->peer_addr);
			return -1;
		}
		l->acks_received++;
		l->kick_pending = 1;
		l->d->sink.space(l->d->sink.arg, l);
		return 0;
	}
	case WIRE_PING:
	case WIRE_PONG: {
		uint64_t t;

		if (wire_decode_ping(f, &t) < 0)
			return -1;
		if (f->type == WIRE_PING)
			stream_ping(s, WIRE_PONG, t);
		else
			on_pong(l, t);
		return 0;
	}
	case WIRE_BYE:
		return -1;
	default:
		log_warnx("link %s: stream %d: unexpected %s frame", link_name(l), s->idx,
			  f->type < WIRE_TYPE_MAX ? wire_type_names[f->type] : "unknown");
		return -1;
	}
}

static uint8_t *link_stream_place(struct stream *s, uint64_t seq, uint32_t len)
{
	return recvbuf_place(&s->link->rb, seq, len);
}

static int link_stream_wait_turn(struct stream *s, uint64_t seq)
{
	return linkturn_wait(s->link, seq);
}

static int link_stream_placed(struct stream *s, uint64_t seq, uint32_t len)
{
	struct link *l = s->link;

	if (recvbuf_placed(&l->rb, seq, len, linkmsg_received, l) < 0) {
		log_warnx("link %s: stream %d: block %" PRIu64 " rejected (malformed records): peer is misbehaving",
			  link_name(l), s->idx, seq);
		return -1;
	}
	l->ack_pending = 1;
	return 0;
}

/* Streams beyond the count wanted take no new blocks (linkauto_retire). */
static int link_stream_may_take(const struct stream *s)
{
	return !s->link->shutting_down && (unsigned)s->idx < s->link->nstreams;
}

static void link_stream_up(struct stream *s)
{
	struct link *l = s->link;

	l->up++;
	l->backoff[s->idx] = l->cfg->reconnect_min;
	if (l->down_since > 0) {
		l->downtime += clock_wall_s() - l->down_since;
		l->down_since = 0;
	}
	faillog_up(l, s->idx);
	l->refused_logged = 0;
	log_info("link %s: stream %d up (%s), %u of %u streams up", link_name(l), s->idx, s->peer_addr, l->up,
		 l->nstreams);
	/* The peer needs our window before it can send anything.  Nothing is
	 * written yet: link_flush writes it, with the first blocks, once the
	 * frames that came with the handshake's last one are read, among
	 * them the peer's ACK (ldsd sends it with READY).  Blocks picked
	 * before it could start with those the peer received while its ACKs
	 * were lost (up to a round trip of them after an outage), each one
	 * ahead of the lowest block the peer waits for in a new connection's
	 * small window. */
	link_send_ack(s);
	l->kick_pending = 1;
}

static void link_stream_down(struct stream *s, const char *why, int level_warn)
{
	struct link *l = s->link;
	size_t lost = 0;

	hs_unpend(s, why);
	if (l == NULL) {
		log_debug("connection from %s closed before it was identified: %s", s->peer_addr, why);
		return;
	}
	if (s->idx >= 0 && l->streams[s->idx] == s) {
		l->streams[s->idx] = NULL;
		if (s->st == ST_UP) {
			lost = sendbuf_stream_lost(&l->sb, s->idx, stream_unseal_block, s);
			linkturn_stop(l);
			l->up--;
			if (l->up == 0)
				l->down_since = clock_wall_s();
			if (!s->retired)
				faillog_open(l, s->idx, why, lost);
			l->kick_pending = 1;
			l->ack_pending = 1;
		}
		if (!l->shutting_down)
			link_reconnect_later(l, s->idx, s->created_ns);
	}
	if (s->st == ST_UP) {
		if (level_warn)
			log_warnx("link %s: stream %d to %s broken (%s); %zu blocks to resend, %u streams up",
				  link_name(l), s->idx, s->peer_addr, why, lost, l->up);
		else
			log_info("link %s: stream %d to %s closed (%s)", link_name(l), s->idx, s->peer_addr, why);
	} else {
		log_debug("link %s: stream %d (%s) failed: %s", link_name(l), s->idx, stream_state_names[s->st], why);
		snprintf(l->last_error, sizeof(l->last_error), "%s: %s", stream_state_names[s->st], why);
	}
}

static const struct stream_upcalls link_stream_upcalls = {
	.frame = link_stream_frame,
	.place = link_stream_place,
	.placed = link_stream_placed,
	.wait_turn = link_stream_wait_turn,
	.may_take = link_stream_may_take,
	.up = link_stream_up,
	.down = link_stream_down,
};

/* ---- transport upcalls ----------------------------------------------- */

static void transport_connected(struct lds_tp_conn *c, int err, void *ud)
{
	struct stream *s = ud;

	if (err < 0) {
		s->conn = NULL; /* already gone, per transport.h */
		link_connect_failed(s, strerror(-err));
		return;
	}
	dial_up(&s->link->dial, s->peer_addr);
	if (s->ops->query) {
		struct lds_tp_info info;

		if (s->ops->query(c, &info) == 0)
			snprintf(s->peer_addr, sizeof(s->peer_addr), "%s", info.peer);
	}
	s->last_rx_ns = clock_now_ns();
	if (hs_dispatch(&link_hs, s, HS_EV_CONNECTED, NULL) < 0) {
		stream_close(s, "cannot build HELLO", 1);
		return;
	}
	stream_flush(s);
	if (stream_failed(s))
		return;
	if (probe_active(&s->link->probe))
		link_path_back(s->link, s);
}

const struct lds_tp_upcalls link_upcalls = {
	.connected = transport_connected,
	.readable = stream_readable,
	.writable = stream_writable,
	.sent = stream_sent,
	.released = stream_released,
	.closed = stream_closed,
};

void link_accept(struct daemon *d, const struct lds_transport_ops *ops, struct lds_transport *tp,
		 struct lds_tp_conn *c)
{
	struct stream *s = stream_new(d, ops, tp, &link_stream_upcalls, ST_WAIT_HELLO);

	if (s == NULL) {
		ops->set_userdata(c, NULL);
		ops->close(c);
		return;
	}
	hs_accept(s, c);
}

/* The back-off counts from when the failed attempt started: an attempt
 * that timed out has waited long enough already. */
static void link_reconnect_later(struct link *l, int idx, uint64_t started_ns)
{
	double b = l->backoff[idx];

	if (l->cfg->role != CONFIG_ROLE_CONNECT || (unsigned)idx >= l->nstreams)
		return;
	if (probe_active(&l->probe)) {
		l->next_try_ns[idx] = probe_next(&l->probe, (unsigned)idx, started_ns);
		return;
	}
	l->next_try_ns[idx] = started_ns + (uint64_t)(b * 1e9);
	b *= 2;
	l->backoff[idx] = b > l->cfg->reconnect_max ? l->cfg->reconnect_max : b;
}

/* ---- link lifetime ------------------------------------------------------ */

int link_new_session(struct link *l)
{
	uint64_t v = 0;

	while (v == 0 || v == l->d->instance)
		if (auth_random(&v, sizeof(v)) < 0)
			return -EIO;
	l->instance = v;
	return 0;
}

/* Payloads may stay at their source (sendbuf_defer) where the streams seal
 * blocks in place: sealed, over a byte stream.  Message kinds seal into a
 * queue of their own and would only copy them later. */
static int link_defers(const struct link *l)
{
	return l->sb.no_hdr && (l->ops->caps.flags & LDS_TP_CAP_STREAM);
}

struct link *link_new(struct daemon *d, const struct config_peer *cfg, const struct lds_transport_ops *ops,
		      struct lds_transport *tp)
{
	struct link *l = calloc(1, sizeof(*l));

	if (l == NULL) {
		log_warnx("link %s: out of memory", cfg->cluster);
		return NULL;
	}
	l->d = d;
	l->cfg = cfg;
	l->instance = d->instance;
	l->lost_why = "peer gateway restarted and lost its state";
	l->ops = ops;
	l->tp = tp;
	dial_init(&l->dial, d->resolver, cfg->cluster, cfg->address, cfg->port, link_dial_ready, l);
	credit_init(&l->credit, cfg->recv_memory / 4);
	l->nstreams = cfg->role == CONFIG_ROLE_CONNECT ? cfg->streams : 0;
	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++)
		l->backoff[i] = cfg->reconnect_min;
	/* streams = "auto": the fixed default is the first guess. */
	if (cfg->role == CONFIG_ROLE_CONNECT && cfg->streams == 0 && linkauto_first(l) < 0) {
		link_free(l);
		return NULL;
	}
	if (sendbuf_init(&l->sb, cfg->block_size, cfg->send_memory) < 0 ||
	    recvbuf_init(&l->rb, cfg->block_size, cfg->recv_memory) < 0) {
		log_warnx("link %s: cannot allocate buffers (send_memory %zu, recv_memory %zu)", cfg->cluster,
			  cfg->send_memory, cfg->recv_memory);
		link_free(l);
		return NULL;
	}
	l->sb.no_hdr = cfg->encryption == CONFIG_ENC_AEAD;
	l->sb.defer_min = link_defers(l) ? LINK_DEFER_MIN : 0;
	l->rb.place = linkmsg_place;
	l->rb.place_arg = l;
	stream_reg_sendbuf(l->ops, l->tp, &l->sb);
	l->down_since = clock_wall_s();
	return l;
}

void link_free(struct link *l)
{
	if (l == NULL)
		return;
	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++)
		if (l->streams[i])
			stream_close(l->streams[i], "shutting down", 0);
	dial_fini(&l->dial);
	if (l->tp)
		stream_dereg_sendbuf(l->ops, l->tp, &l->sb);
	sendbuf_free(&l->sb);
	recvbuf_free(&l->rb);
	lostrep_free(&l->lr);
	credit_free(&l->credit);
	free(l->as);
	free(l);
}

/* A lookup the slots waited for has ended (called from the loop): they
 * connect now, counted as reconnections already if they are. */
static void link_dial_ready(void *arg)
{
	struct link *l = arg;

	for (unsigned i = 0; i < l->nstreams && !l->shutting_down; i++)
		if (l->streams[i] == NULL && l->next_try_ns[i] == UINT64_MAX)
			link_connect_slot(l, i);
}

/* An attempt of s failed: the next address gets its turn at once, or the
 * slot waits its back-off (stream_close). */
static void link_connect_failed(struct stream *s, const char *why)
{
	struct link *l = s->link;
	int idx = s->idx, next = dial_failed(&l->dial, s->peer_addr, why, clock_now_ns());

	stream_close(s, why, 0);
	if (next && l->streams[idx] == NULL)
		l->next_try_ns[idx] = clock_now_ns();
}

static void link_connect_slot(struct link *l, unsigned idx)
{
	struct lds_tp_opts o = link_tp_opts(l);
	struct resolve_addr a;
	struct stream *s;
	const char *step = "connect";
	int r = dial_pick(&l->dial, clock_now_ns(), &a);

	if (r <= 0) {
		/* Waiting for the lookup, or the name does not resolve. */
		l->next_try_ns[idx] = UINT64_MAX;
		if (r < 0) {
			snprintf(l->last_error, sizeof(l->last_error), "%.239s", l->dial.lookup_error);
			link_reconnect_later(l, (int)idx, clock_now_ns());
		}
		return;
	}
	s = stream_new(l->d, l->ops, l->tp, &link_stream_upcalls, ST_CONNECTING);
	if (s == NULL)
		return;
	stream_bind(s, l, l->cfg->cluster, &l->sb, l->cfg->block_size);
	s->idx = (int)idx;
	snprintf(s->peer_addr, sizeof(s->peer_addr), "%s", a.text);
	l->streams[idx] = s;
	r = l->ops->connect(l->tp, a.host, l->cfg->port, &o, s, &s->conn, &step);
	if (r < 0) {
		char why[160];

		if (strcmp(step, "connect") == 0)
			snprintf(why, sizeof(why), "%s", strerror(-r));
		else
			snprintf(why, sizeof(why), "%s: %s", step, strerror(-r));
		s->conn = NULL;
		link_connect_failed(s, why);
	}
}

/* Connects slot idx now; counts it as a reconnection unless the slot is
 * new (link_resize). */
static void link_try_slot(struct link *l, unsigned idx)
{
	l->reconnects += l->next_try_ns[idx] != 0;
	link_connect_slot(l, idx);
}

/*
 * A connection of a link that was probing for its lost path has been
 * answered: the path is back.  The other slots' attempts that started
 * before this one sent their SYNs into the black hole and would each wait
 * out its SYN wait, or its next turn on the grid, up to a period: they
 * start over now, one round trip behind s, instead of coming up one by
 * one over the next second.
 */
static void link_path_back(struct link *l, const struct stream *s)
{
	log_info("link %s: stream %d connected: path back, connecting the other streams now", link_name(l), s->idx);
	probe_stop(&l->probe);
	for (unsigned i = 0; i < l->nstreams; i++) {
		struct stream *o = l->streams[i];

		if (o && o->st == ST_CONNECTING && o->created_ns < s->created_ns)
			stream_close(o, "path back: starting over", 0);
		if (l->streams[i] == NULL)
			link_try_slot(l, i);
	}
}

void link_start(struct link *l)
{
	if (l->cfg->role != CONFIG_ROLE_CONNECT)
		return;
	log_info("link %s: connecting to %s:%u with %u streams", link_name(l), l->cfg->address, l->cfg->port,
		 l->nstreams);
	for (unsigned i = 0; i < l->nstreams; i++)
		link_connect_slot(l, i);
}

size_t link_unsent_limit(uint64_t bytes, uint64_t ns)
{
	double want = ns > 0 ? (double)bytes * (double)LINK_UNSENT_NS / (double)ns : 0;
	size_t step = 64u * 1024;

	if (want <= LINK_UNSENT_MAX)
		return LINK_UNSENT_MAX;
	if (want >= LINK_UNSENT_FAST)
		return LINK_UNSENT_FAST;
	/* In steps, so that a rate that wavers does not reset it each tick. */
	return ((size_t)want + step - 1) / step * step;
}

/* Sets s's unsent limit from what its transport sent since the last tick. */
static void link_tune_unsent(struct stream *s, uint64_t now)
{
	struct lds_tp_info info;

	if (s->ops->tx_unsent == NULL || !stream_query(s, &info))
		return;
	if (s->tx_mark_ns != 0 && now > s->tx_mark_ns && info.bytes_sent >= s->tx_mark)
		stream_tx_unsent(s, link_unsent_limit(info.bytes_sent - s->tx_mark, now - s->tx_mark_ns));
	s->tx_mark = info.bytes_sent;
	s->tx_mark_ns = now;
}

static void link_tick_stream(struct stream *s, uint64_t now)
{
	struct link *l = s->link;
	double limit = s->st == ST_UP ? l->cfg->inactivity_timeout : l->cfg->connect_timeout;
	const char *what = s->st == ST_UP ? "no data for %.1f s" : "handshake took over %.1f s";
	double syn = s->st == ST_CONNECTING ? linkpath_syn_wait(s) : limit;

	if (syn < limit) {
		limit = syn;
		what = "no answer within %.1f s";
	}
	/* A handshake is bounded from its start, not from the last byte,
	 * which a peer could send one at a time. */
	if ((double)(now - (s->st == ST_UP ? s->last_rx_ns : s->created_ns)) / 1e9 > limit) {
		char why[80];

		snprintf(why, sizeof(why), what, limit);
		if (s->st == ST_CONNECTING)
			link_connect_failed(s, why);
		else
			stream_close(s, why, 1);
		return;
	}
	stream_rx_expire(s, now);
	if (s->st == ST_UP)
		link_tune_unsent(s, now);
	if (s->st == ST_UP && (double)(now - s->last_ping_ns) / 1e9 >= l->cfg->keepalive) {
		s->last_ping_ns = now;
		stream_ping(s, WIRE_PING, now);
		stream_failed(s);
	}
}

void link_tick(struct link *l, uint64_t now)
{
	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++)
		if (l->streams[i])
			link_tick_stream(l->streams[i], now);
	linkturn_tick(l, now);
	if (!l->shutting_down)
		linkpath_check_silence(l, now);
	if (l->as && !l->shutting_down)
		linkauto_tick(l, now);
	if (!l->shutting_down)
		linkauto_retire(l);
	if (l->cfg->role == CONFIG_ROLE_CONNECT && !l->shutting_down) {
		for (unsigned i = 0; i < l->nstreams; i++)
			if (l->streams[i] == NULL && now >= l->next_try_ns[i])
				link_try_slot(l, i);
	}
	sendbuf_defer_tick(&l->sb);
	/* Every block queued again after a failure has gone out once more. */
	if (l->sb.resend_pending == 0)
		faillog_resent(l);
	/* ACKs can be lost with a broken stream; repeating the latest state
	 * now and then makes sure the sender never waits on a lost window. */
	if (l->up > 0 && now - l->last_ack_ns > ACK_REFRESH_NS)
		l->ack_pending = 1;
}

void link_tick_pending(uint64_t now, double timeout)
{
	hs_tick_pending(now, timeout);
}

void link_close_pending(struct daemon *d)
{
	hs_close_pending(d);
}

void link_flush(struct link *l)
{
	linkturn_release(l);
	if (lostrep_pending(&l->lr))
		linkmsg_send_reports(l);
	if (l->ack_pending && l->up > 0) {
		for (unsigned k = 0; k < l->nstreams && l->ack_pending; k++) {
			struct stream *s = l->streams[(l->rr + k) % l->nstreams];

			if (s && s->st == ST_UP && link_send_ack(s) == 0) {
				l->rr = (l->rr + k + 1) % l->nstreams;
				stream_flush(s);
				stream_failed(s);
			}
		}
	}
	if (l->kick_pending) {
		l->kick_pending = 0;
		for (unsigned i = 0; i < l->nstreams; i++) {
			struct stream *s = l->streams[i];

			if (s && s->st == ST_UP && !s->blocked) {
				stream_flush(s);
				stream_failed(s);
			}
		}
	}
}

void link_drain(struct link *l)
{
	l->rb.frozen = 1;
	l->ack_pending = 1;
}

int link_drained(const struct link *l)
{
	/* Repeat ACKs (ack_pending) need not hold us; only deliveries the peer
	 * has not heard of, which would make it report them lost. */
	if (!sendbuf_idle(&l->sb) || l->deliv_unreported)
		return 0;
	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++) {
		const struct stream *s = l->streams[i];

		if (s && s->st == ST_UP && s->ctl_len > s->ctl_off)
			return 0;
	}
	return 1;
}

void link_shutdown(struct link *l)
{
	l->shutting_down = 1;
	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++) {
		struct stream *s = l->streams[i];

		if (s == NULL)
			continue;
		/* Sealed, a BYE goes behind the blocks taken (nonce order). */
		if (s->st == ST_UP && (s->aead || s->nout == 0))
			stream_bye(s, WIRE_REFUSE_SHUTDOWN);
		stream_close(s, "shutting down", 0);
	}
}

void link_retire(struct link *l, const char *why)
{
	log_info("link %s: closing: %s", link_name(l), why);
	link_shutdown(l);
	dial_fini(&l->dial);
	l->conf = *l->cfg;
	explicit_bzero(l->conf.key, sizeof(l->conf.key));
	l->conf.key_len = 0;
	l->cfg = &l->conf;
	l->lost_why = why;
	sendbuf_reset(&l->sb, linkmsg_lost, l);
	l->d->sink.space(l->d->sink.arg, l);
}

void link_reconfigure(struct link *l, const struct config_peer *p)
{
	int streams = p->streams != l->cfg->streams || p->streams_min != l->cfg->streams_min ||
		      p->streams_max != l->cfg->streams_max;

	l->cfg = p;
	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++)
		if (l->backoff[i] < p->reconnect_min || l->backoff[i] > p->reconnect_max)
			l->backoff[i] = p->reconnect_min;
	if (streams && p->role == CONFIG_ROLE_CONNECT && link_set_stream_count(l, p->streams) < 0)
		log_warnx("link %s: out of memory: keeps %u streams", link_name(l), l->nstreams);
}

int link_fault_break(struct link *l, int idx)
{
	int n = 0;

	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++) {
		if (l->streams[i] && l->streams[i]->st == ST_UP && (idx < 0 || (unsigned)idx == i)) {
			stream_close(l->streams[i], "fault injected by ldsctl", 1);
			n++;
		}
	}
	return n;
}

int link_fault_stall(struct link *l, int idx)
{
	int n = 0;

	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++) {
		struct stream *s = l->streams[i];

		if (s && s->st == ST_UP && !s->stalled && (idx < 0 || (unsigned)idx == i)) {
			log_warnx("link %s: stream %d stalled by ldsctl: no byte in or out from now on", link_name(l),
				  s->idx);
			stream_stall(s);
			n++;
		}
	}
	return n;
}

