/* handshake.c - the handshake's state machine and unauthenticated conns; see handshake.h. */
#include <errno.h>
#include <stdarg.h>
#include <string.h>

#include "admission.h"
#include "auth.h"
#include "clock.h"
#include "handshake.h"
#include "link_int.h"
#include "log.h"
#include "seal.h"

const char *const hs_event_names[HS_EV_COUNT] = { "connected", "HELLO", "CHALLENGE", "AUTH", "READY", "REFUSE",
						  "other frame" };

static struct stream *pending_streams; /* accepted, not yet authenticated */

uint8_t hs_encryption(const struct link *l)
{
	return l->cfg->encryption == CONFIG_ENC_AEAD ? WIRE_ENC_AEAD : WIRE_ENC_NONE;
}

const char *hs_encryption_name(uint8_t e)
{
	return e == WIRE_ENC_AEAD ? "aead" : "none";
}

/* What a link offers the peer as its largest message. */
static uint32_t hs_max_msg(const struct link *l)
{
	return (uint32_t)(l->cfg->recv_memory / 2 > WIRE_MAX_MSG ? WIRE_MAX_MSG : l->cfg->recv_memory / 2);
}

/* The handshake of s failed for a reason its link's status and clients
 * should see (lds_peer): kept as the stream's reason to close, and logged. */
static void hs_log_refused(struct stream *s, uint64_t code, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void hs_log_refused(struct stream *s, uint64_t code, const char *fmt, ...)
{
	struct link *l = s->link;
	char msg[768];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	snprintf(s->close_why, sizeof(s->close_why), "%.199s", msg);
	/* Repeated refusals while reconnecting would flood the log: say it
	 * once per distinct reason until the link comes up again. */
	if (l->refused_logged == code)
		return;
	l->refused_logged = code;
	log_warnx("link %s: %s", s->name, msg);
}

/* The listener refuses an unauthenticated stream: reason goes to the peer,
 * why to the log, through admission's rate limit. */
static void hs_refuse(struct stream *s, enum wire_refuse code, const char *reason, const char *why)
{
	stream_refuse(s, code, reason);
	hs_unpend(s, why);
}

/* ---- actions -------------------------------------------------------- */

/* Connector, connected: HELLO. */
static int hs_send_hello(const struct hs_upcalls *up, struct stream *s, const struct wire_frame *unused)
{
	struct link *l = s->link;
	struct wire_hello h = { 0 };
	uint8_t buf[WIRE_HDR_LEN + HELLO_MAX];
	size_t n;

	if (auth_random(h.nonce, sizeof(h.nonce)) < 0)
		return -EIO;
	h.stream_idx = (uint16_t)s->idx;
	h.nstreams = (uint16_t)l->nstreams;
	h.max_msg = hs_max_msg(l);
	h.instance = l->instance;
	h.encryption = hs_encryption(l);
	snprintf(h.from, sizeof(h.from), "%s", l->d->cfg->cluster);
	snprintf(h.to, sizeof(h.to), "%s", l->cfg->cluster);
	n = wire_encode_hello(buf, sizeof(buf), &h);
	if (n == 0)
		return -EIO;
	/* Kept for the transcript hash (auth.h). */
	s->hello_len = n - WIRE_HDR_LEN;
	memcpy(s->hello, buf + WIRE_HDR_LEN, s->hello_len);
	s->aead = h.encryption == WIRE_ENC_AEAD;
	if (stream_queue(s, buf, n) < 0)
		return -EIO;
	return 0;
}

/* Listener, HELLO: identifies the link, checks the claims, CHALLENGE. */
static int hs_on_hello(const struct hs_upcalls *up, struct stream *s, const struct wire_frame *f)
{
	struct daemon *d = s->d;
	struct wire_hello h;
	struct wire_challenge c = { 0 };
	const struct config_peer *pc;
	struct link *l;
	uint8_t buf[WIRE_HDR_LEN + 128 + WIRE_NAME_MAX];
	size_t n;

	if (wire_decode_hello(f, &h) < 0) {
		hs_refuse(s, WIRE_REFUSE_PROTOCOL, "malformed HELLO", "malformed HELLO; refused");
		return -1;
	}
	l = up->identify(d, h.from);
	pc = l ? l->cfg : NULL;
	if (pc == NULL || pc->role != CONFIG_ROLE_LISTEN || strcmp(h.to, d->cfg->cluster) != 0) {
		char why[3 * WIRE_NAME_MAX + CONFIG_PATH_MAX + 128];

		snprintf(why, sizeof(why), "refused: cluster \"%s\" asking for \"%s\" is not a listen peer of "
			 "cluster \"%s\" in %s", h.from, h.to, d->cfg->cluster, d->cfg->file);
		hs_refuse(s, WIRE_REFUSE_CLUSTER, "unknown cluster", why);
		return -1;
	}
	stream_bind(s, l, pc->cluster, &l->sb, pc->block_size);
	if (h.nstreams == 0 || h.nstreams > CONFIG_MAX_STREAMS || h.stream_idx >= h.nstreams) {
		char why[96];

		snprintf(why, sizeof(why), "refused: stream %u of %u is out of range", h.stream_idx, h.nstreams);
		hs_refuse(s, WIRE_REFUSE_STREAMS, "stream index out of range", why);
		return -1;
	}
	if (h.encryption != hs_encryption(l)) {
		char why[CONFIG_PATH_MAX + 160], reason[128];

		snprintf(why, sizeof(why), "refused: the peer has encryption = \"%s\", this gateway \"%s\" (%s): set the "
			 "same on both gateways", hs_encryption_name(h.encryption), hs_encryption_name(hs_encryption(l)),
			 d->cfg->file);
		snprintf(reason, sizeof(reason), "encryption mismatch: you have \"%s\", %s has \"%s\"",
			 hs_encryption_name(h.encryption), d->cfg->cluster, hs_encryption_name(hs_encryption(l)));
		hs_refuse(s, WIRE_REFUSE_ENCRYPTION, reason, why);
		return -1;
	}
	s->aead = h.encryption == WIRE_ENC_AEAD;
	up->identified(s);
	s->peer_instance = h.instance;
	s->peer_max_msg = h.max_msg;
	s->peer_idx = h.stream_idx;
	s->peer_nstreams = h.nstreams;
	if (auth_random(c.nonce, sizeof(c.nonce)) < 0)
		return -1;
	c.max_msg = hs_max_msg(l);
	c.instance = l->instance;
	c.encryption = h.encryption;
	snprintf(c.from, sizeof(c.from), "%s", d->cfg->cluster);
	/* MAC_L covers the whole transcript: the CHALLENGE is encoded once
	 * without it to be hashed, then again with it. */
	n = wire_encode_challenge(buf, sizeof(buf), &c);
	if (n == 0 || auth_transcript(f->payload, f->len, buf + WIRE_HDR_LEN, n - WIRE_HDR_LEN, s->th) < 0 ||
	    auth_mac(AUTH_LISTENER, pc->key, pc->key_len, s->th, c.mac) < 0)
		return -1;
	n = wire_encode_challenge(buf, sizeof(buf), &c);
	if (n == 0 || stream_queue(s, buf, n) < 0)
		return -1;
	stream_flush(s);
	return 0;
}

/* Connector, CHALLENGE: verifies the listener, AUTH (with our ACK). */
static int hs_on_challenge(const struct hs_upcalls *up, struct stream *s, const struct wire_frame *f)
{
	struct link *l = s->link;
	struct daemon *d = s->d;
	struct wire_challenge c;
	struct wire_auth a;
	uint8_t buf[WIRE_HDR_LEN + WIRE_MAC_LEN];
	size_t n;

	if (wire_decode_challenge(f, &c) < 0) {
		log_warnx("link %s: malformed CHALLENGE from %s", s->name, s->peer_addr);
		return -1;
	}
	if (strcmp(c.from, l->cfg->cluster) != 0) {
		hs_log_refused(s, 1000, "%s answered as cluster \"%s\"; check address/port in %s", s->peer_addr, c.from,
			       d->cfg->file);
		stream_refuse(s, WIRE_REFUSE_CLUSTER, "unexpected cluster name");
		return -1;
	}
	if (c.encryption != hs_encryption(l)) {
		hs_log_refused(s, 1003, "%s answered with encryption = \"%s\", this gateway has \"%s\" (%s): set the "
			       "same on both gateways", s->peer_addr, hs_encryption_name(c.encryption),
			       hs_encryption_name(hs_encryption(l)), d->cfg->file);
		stream_refuse(s, WIRE_REFUSE_ENCRYPTION, "encryption mismatch");
		return -1;
	}
	if (auth_transcript(s->hello, s->hello_len, f->payload, f->len, s->th) < 0 ||
	    !auth_verify(AUTH_LISTENER, l->cfg->key, l->cfg->key_len, s->th, c.mac)) {
		hs_log_refused(s, 1001, "%s failed authentication (wrong key? compare %s on both gateways; else the "
			       "handshake was altered on the way)", s->peer_addr, l->cfg->key_file);
		/* Tell the listener, so that both logs say what is wrong. */
		stream_refuse(s, WIRE_REFUSE_AUTH, "authentication failed: your proof does not verify with our key");
		return -1;
	}
	if (auth_mac(AUTH_CONNECTOR, l->cfg->key, l->cfg->key_len, s->th, a.mac) < 0)
		return -1;
	n = wire_encode_auth(buf, sizeof(buf), &a);
	if (n == 0 || stream_queue(s, buf, n) < 0)
		return -1;
	/* Everything after AUTH is sealed (docs/protocol.md, "Sealed frames"). */
	if (s->aead && seal_init(&s->sq.seal, AUTH_CONNECTOR, l->cfg->key, l->cfg->key_len, s->th) < 0)
		return -1;
	s->peer_max_msg = c.max_msg;
	/* The listener is authentic: a new instance there lost its state, and
	 * our session is reset before the ACK below describes it. */
	up->authentic(s, c.instance);
	/* Our ACK goes with AUTH (docs/protocol.md, Handshake), so that the
	 * listener knows our window and what we hold before its first block:
	 * a round trip sooner than after READY, and without resending first
	 * what we received while its ACKs were lost.  It only reports state,
	 * so the flags that make link_flush send ACKs stay as they are in
	 * case the listener refuses. */
	if (up->queue_ack(s) < 0)
		return -1;
	stream_flush(s);
	return 0;
}

/* Listener, AUTH: verifies the connector, READY, up. */
static int hs_on_auth(const struct hs_upcalls *up, struct stream *s, const struct wire_frame *f)
{
	struct link *l = s->link;
	struct wire_auth a;
	uint8_t buf[WIRE_HDR_LEN];
	size_t n;

	if (wire_decode_auth(f, &a) < 0 || !auth_verify(AUTH_CONNECTOR, l->cfg->key, l->cfg->key_len, s->th, a.mac)) {
		char why[CONFIG_PATH_MAX + 96];

		snprintf(why, sizeof(why), "refused: authentication failed (wrong key? compare %s on both gateways)",
			 l->cfg->key_file);
		hs_refuse(s, WIRE_REFUSE_AUTH, "authentication failed", why);
		return -1;
	}
	hs_unpend(s, NULL);
	if (l->shutting_down) {
		stream_refuse(s, WIRE_REFUSE_SHUTDOWN, "gateway shutting down");
		return -1;
	}
	/* READY is the first sealed frame: it proves to the connector that
	 * we hold the key and saw the same transcript. */
	if (s->aead && seal_init(&s->sq.seal, AUTH_LISTENER, l->cfg->key, l->cfg->key_len, s->th) < 0)
		return -1;
	n = wire_encode_ready(buf, sizeof(buf));
	if (n == 0 || stream_queue(s, buf, n) < 0)
		return -1;
	up->authentic(s, s->peer_instance);
	up->attach(s, s->peer_idx, s->peer_nstreams);
	return 0;
}

/* Connector, READY (empty): up. */
static int hs_on_ready(const struct hs_upcalls *up, struct stream *s, const struct wire_frame *f)
{
	if (f->len != 0)
		return -1;
	up->attach(s, (unsigned)s->idx, 0);
	return 0;
}

/* REFUSE, in any state: logged, and the stream closes. */
static int hs_on_refuse(const struct hs_upcalls *up, struct stream *s, const struct wire_frame *f)
{
	struct wire_refuse_msg r;
	char msg[1024];

	if (wire_decode_refuse(f, &r) < 0)
		snprintf(r.reason, sizeof(r.reason), "(malformed REFUSE)");
	if (s->unauth) {
		snprintf(msg, sizeof(msg), "it refused us: %s", r.reason);
		hs_unpend(s, msg);
	} else if (s->link == NULL) {
		log_warnx("connection from %s refused us: %s", s->peer_addr, r.reason);
	} else {
		hs_log_refused(s, r.code, "peer %s refused the connection: %s", s->peer_addr, r.reason);
	}
	return -1;
}

/* ---- the state machine ----------------------------------------------- */

#define HS_ST(st) (1u << (st))
#define HS_ST_ANY ((1u << ST_COUNT) - 1)

static const struct hs_transition hs_fsm[] = {
	/* connector */
	{ HS_ST(ST_CONNECTING),     HS_EV_CONNECTED, hs_send_hello,   ST_HELLO_SENT },
	{ HS_ST(ST_HELLO_SENT),     HS_EV_CHALLENGE, hs_on_challenge, ST_AUTH_SENT },
	{ HS_ST(ST_AUTH_SENT),      HS_EV_READY,     hs_on_ready,     ST_UP },
	/* listener */
	{ HS_ST(ST_WAIT_HELLO),     HS_EV_HELLO,     hs_on_hello,     ST_CHALLENGE_SENT },
	{ HS_ST(ST_CHALLENGE_SENT), HS_EV_AUTH,      hs_on_auth,      ST_UP },
	/* either, up or not */
	{ HS_ST_ANY,                HS_EV_REFUSE,    hs_on_refuse,    HS_CLOSE },
};

const struct hs_transition *hs_lookup(enum stream_state st, enum hs_event ev)
{
	for (size_t i = 0; i < sizeof(hs_fsm) / sizeof(hs_fsm[0]); i++)
		if ((hs_fsm[i].states & HS_ST(st)) && hs_fsm[i].ev == ev)
			return &hs_fsm[i];
	return NULL;
}

int hs_dispatch(const struct hs_upcalls *up, struct stream *s, enum hs_event ev, const struct wire_frame *f)
{
	const struct hs_transition *t = hs_lookup(s->st, ev);

	if (t == NULL) {
		log_debug("link %s: stream %d (%s): %s refused in state %s", s->name[0] ? s->name : "?", s->idx,
			  s->peer_addr, hs_event_names[ev], stream_state_names[s->st]);
		return -1;
	}
	if (t->action(up, s, f) < 0 || t->next == HS_CLOSE)
		return -1;
	stream_set_state(s, (enum stream_state)t->next, hs_event_names[ev]);
	return 0;
}

int hs_frame(const struct hs_upcalls *up, struct stream *s, const struct wire_frame *f)
{
	enum hs_event ev = f->type == WIRE_HELLO     ? HS_EV_HELLO
			 : f->type == WIRE_CHALLENGE ? HS_EV_CHALLENGE
			 : f->type == WIRE_AUTH      ? HS_EV_AUTH
			 : f->type == WIRE_READY     ? HS_EV_READY
			 : f->type == WIRE_REFUSE    ? HS_EV_REFUSE
						     : HS_EV_OTHER;

	return hs_dispatch(up, s, ev, f);
}

/* ---- accepted conns before authentication ---------------------------- */

void hs_accept(struct stream *s, struct lds_tp_conn *c)
{
	struct lds_tp_info info;

	s->conn = c;
	if (s->ops->query && s->ops->query(c, &info) == 0)
		snprintf(s->peer_addr, sizeof(s->peer_addr), "%s", info.peer);
	if (admission_admit(s->d->adm, s->peer_addr, s->created_ns) < 0) {
		/* Its closed upcall names nothing of ours (stream_closed). */
		s->ops->set_userdata(c, NULL);
		s->ops->close(c);
		stream_free(s);
		return;
	}
	s->unauth = 1;
	s->ops->set_userdata(c, s);
	s->next_pending = pending_streams;
	pending_streams = s;
	log_debug("connection from %s accepted, waiting for HELLO", s->peer_addr);
}

void hs_unpend(struct stream *s, const char *why)
{
	if (!s->unauth)
		return;
	s->unauth = 0;
	for (struct stream **pp = &pending_streams; *pp; pp = &(*pp)->next_pending) {
		if (*pp == s) {
			*pp = s->next_pending;
			break;
		}
	}
	admission_release(s->d->adm, s->peer_addr, s->link ? s->name : NULL, why, clock_now_ns());
}

void hs_tick_pending(uint64_t now, double timeout)
{
	struct stream *s = pending_streams, *next;
	char why[80];

	snprintf(why, sizeof(why), "not authenticated within %.1f s (handshake.timeout)", timeout);
	for (; s; s = next) {
		next = s->next_pending;
		if ((double)(now - s->created_ns) / 1e9 > timeout)
			stream_close(s, why, 0);
	}
}

void hs_close_pending(struct daemon *d)
{
	struct stream *s = pending_streams, *next;

	for (; s; s = next) {
		next = s->next_pending;
		if (s->d == d)
			stream_close(s, "shutting down", 0);
	}
}
