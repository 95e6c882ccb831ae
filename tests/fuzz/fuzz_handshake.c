/*
 * fuzz_handshake.c - libFuzzer target for what a listening gateway does
 * with the bytes of a connection it accepted: the handshake's state
 * machine, the bounds on what it holds before authentication (admission.c,
 * ADMISSION_RX_MAX), its deadline, and, once authenticated, the frames of
 * an up stream.
 *
 * Each input runs a whole daemon (daemon_init ... daemon_fini) with one
 * listen-side peer, built in memory.  The accepted connection is a fake
 * transport conn whose recv hands out the input in chunks, so that
 * stream.c's reading code runs as with TCP.  The first byte chooses:
 *   bits 0-1  0: the input is all the peer sends;
 *             1: a valid HELLO first, then the input (a peer that knows
 *                the cluster names, not the key);
 *             2: a valid HELLO and the right AUTH first (a peer with the
 *                key), then the input as frames of an up stream;
 *   bits 2-6  the chunk size recv hands out, 1 to 32 bytes times 4;
 *   bit 7     a message transport instead (stream_msg.c): the input is
 *             messages, each a 16-bit big-endian length and its bytes
 *             (the HELLO and AUTH of modes 1 and 2 one message each);
 *             what the daemon sends is reported sent after each round.
 * Then the handshake deadline passes (daemon_tick an hour later) and the
 * conn ends (message mode: its closed upcall comes then).  The daemon must never crash or leak, and must not hold more
 * than ADMISSION_RX_MAX bytes before authentication (checked through the
 * bytes it takes with recv).
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/admission.h"
#include "ldsd/auth.h"
#include "ldsd/clock.h"
#include "ldsd/daemon.h"
#include "ldsd/link.h"
#include "ldsd/log.h"
#include "ldsd/recvbuf.h"
#include "ldsd/wire.h"
#include "transports/tcp_conf.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

static const uint8_t key[32] = "fuzzing-key-0123456789abcdefghij";

/* The fake conn: what the peer sends (in), what the daemon wrote (out). */
struct lds_tp_conn {
	void *ud;
	const uint8_t *in;
	size_t in_len, in_off, chunk;
	uint8_t out[4096];
	size_t out_len;
	int closed;
	int whole;                   /* message mode: in is one message (the HELLO, AUTH prefixes) */
	int lent;                    /* message mode: a message is the daemon's until msg_done */
	uint8_t msg[1 << 16];        /* ...copied here: the daemon may write into it */
	void *sent[64];              /* message mode: messages taken, not yet reported sent */
	unsigned nsent;
};

static void fz_set_userdata(struct lds_tp_conn *c, void *ud)
{
	c->ud = ud;
}

static int fz_set_opts(struct lds_tp_conn *c, const struct lds_tp_opts *o)
{
	return 0;
}

static int fz_send(struct lds_tp_conn *c, const struct iovec *iov, int iovcnt, unsigned flags, size_t *sent)
{
	*sent = 0;
	for (int i = 0; i < iovcnt; i++) {
		size_t room = sizeof(c->out) - c->out_len, n = iov[i].iov_len < room ? iov[i].iov_len : room;

		memcpy(c->out + c->out_len, iov[i].iov_base, n);
		c->out_len += n;
		*sent += iov[i].iov_len; /* the rest is taken and forgotten */
	}
	return 0;
}

static int fz_send_msg(struct lds_tp_conn *c, const struct iovec *iov, int iovcnt, void *const *desc, void *ctx)
{
	size_t n;

	if (c->nsent == sizeof(c->sent) / sizeof(c->sent[0]))
		return -EAGAIN;
	CHECK(fz_send(c, iov, iovcnt, 0, &n) == 0 && n > 0 && n <= 1 << 16);
	c->sent[c->nsent++] = ctx;
	return 0;
}

/* The next message: the whole input, or its next length-prefixed part
 * (cut short at the end of the input). */
static int fz_recv_msg(struct lds_tp_conn *c, struct lds_tp_msg *m)
{
	size_t n = c->in_len - c->in_off;

	CHECK(!c->lent);
	if (n == 0)
		return c->in == NULL ? -EPIPE : -EAGAIN;
	if (!c->whole) {
		size_t want = n >= 2 ? (size_t)c->in[c->in_off] << 8 | c->in[c->in_off + 1] : 0;

		c->in_off += n >= 2 ? 2 : n;
		n = c->in_len - c->in_off < want ? c->in_len - c->in_off : want;
		if (n == 0)
			return -EAGAIN;
	}
	memcpy(c->msg, c->in + c->in_off, n);
	c->in_off += n;
	*m = (struct lds_tp_msg){ .data = c->msg, .len = n };
	c->lent = 1;
	return 0;
}

static void fz_msg_done(struct lds_tp_conn *c, struct lds_tp_msg *m)
{
	CHECK(c->lent && m->data == c->msg);
	c->lent = 0;
}

static void fz_push(struct lds_tp_conn *c)
{
}

static int fz_recv(struct lds_tp_conn *c, const struct iovec *iov, int iovcnt, size_t *got)
{
	*got = 0;
	if (c->in_off == c->in_len)
		return c->in == NULL ? -EPIPE : -EAGAIN;
	for (int i = 0; i < iovcnt && c->in_off < c->in_len && *got < c->chunk; i++) {
		size_t n = c->in_len - c->in_off;

		if (n > iov[i].iov_len)
			n = iov[i].iov_len;
		if (n > c->chunk - *got)
			n = c->chunk - *got;
		memcpy(iov[i].iov_base, c->in + c->in_off, n);
		c->in_off += n;
		*got += n;
	}
	return *got ? 0 : -EAGAIN;
}

static size_t fz_pending(struct lds_tp_conn *c)
{
	return c->in_len - c->in_off;
}

static void fz_want(struct lds_tp_conn *c, int on)
{
}

static void fz_close(struct lds_tp_conn *c)
{
	c->closed = 1;
}

static int fz_query(struct lds_tp_conn *c, struct lds_tp_info *info)
{
	memset(info, 0, sizeof(*info));
	snprintf(info->peer, sizeof(info->peer), "192.0.2.1:4000");
	return 0;
}

static const struct lds_transport_ops fz_ops = {
	.size = LDS_TP_OPS_SIZE,
	.name = "tcp",
	.set_userdata = fz_set_userdata,
	.set_opts = fz_set_opts,
	.send = fz_send,
	.push = fz_push,
	.recv = fz_recv,
	.pending = fz_pending,
	.want_write = fz_want,
	.want_read = fz_want,
	.close = fz_close,
	.query = fz_query,
};

static const struct lds_transport_ops fz_msg_ops = {
	.size = LDS_TP_OPS_SIZE,
	.name = "tcp",
	.caps = { .flags = LDS_TP_CAP_MESSAGE | LDS_TP_CAP_ORDERED | LDS_TP_CAP_RELIABLE, .max_msg = 1 << 16 },
	.set_userdata = fz_set_userdata,
	.set_opts = fz_set_opts,
	.send_msg = fz_send_msg,
	.recv_msg = fz_recv_msg,
	.msg_done = fz_msg_done,
	.want_write = fz_want,
	.want_read = fz_want,
	.close = fz_close,
	.query = fz_query,
};

static void sink_deliver(void *arg, struct link *from, struct rb_msg *m)
{
	link_delivered(from, m);
}

static void sink_acked(void *arg, uint64_t client, uint64_t id)
{
}

static void sink_lost(void *arg, struct link *l, uint64_t client, uint64_t id, const char *reason)
{
}

static void sink_space(void *arg, struct link *l)
{
}

static void make_config(struct config *cfg)
{
	struct config_peer *p = &cfg->peers[0];

	memset(cfg, 0, sizeof(*cfg));
	snprintf(cfg->file, sizeof(cfg->file), "fuzz.conf");
	snprintf(cfg->cluster, sizeof(cfg->cluster), "clusterB");
	cfg->drain_timeout = 1;
	config_handshake_defaults(&cfg->handshake);
	config_peer_defaults(p);
	snprintf(p->cluster, sizeof(p->cluster), "clusterA");
	snprintf(p->address, sizeof(p->address), "127.0.0.1");
	p->port = 1;
	p->role = CONFIG_ROLE_LISTEN;
	/* The kernel's default congestion control: no setsockopt to fail. */
	((struct tcp_conf *)(void *)p->tp_conf)->congestion[0] = '\0';
	p->block_size = 4096;
	p->send_memory = p->recv_memory = 1 << 16;
	p->keepalive = p->inactivity_timeout / 4;
	memcpy(p->key, key, sizeof(key));
	p->key_len = sizeof(key);
	cfg->npeers = 1;
}

/* Reads everything c has to give, as the event loop would, reporting
 * what it sent as sent after each round; returns 0 once the daemon
 * closed c. */
static int drive(struct lds_tp_conn *c)
{
	for (int rounds = 0; rounds < 100000 && !c->closed; rounds++) {
		size_t before = c->in_off;

		link_upcalls.readable(c, c->ud);
		for (unsigned i = 0; i < c->nsent && !c->closed; i++)
			link_upcalls.sent(c, c->sent[i], c->ud);
		c->nsent = 0;
		if (c->in_off == before)
			break;
	}
	return !c->closed;
}

/* The connector's first frames: HELLO, and AUTH once the CHALLENGE is out. */
static size_t connector_hello(uint8_t *buf, size_t cap, const uint8_t nonce_c[WIRE_NONCE_LEN])
{
	struct wire_hello h = { .stream_idx = 0, .nstreams = 1, .max_msg = 1 << 16, .instance = 7,
				.encryption = WIRE_ENC_AEAD };

	memcpy(h.nonce, nonce_c, WIRE_NONCE_LEN);
	snprintf(h.from, sizeof(h.from), "clusterA");
	snprintf(h.to, sizeof(h.to), "clusterB");
	return wire_encode_hello(buf, cap, &h);
}

static size_t connector_auth(uint8_t *buf, size_t cap, const struct lds_tp_conn *c,
			     const uint8_t nonce_c[WIRE_NONCE_LEN])
{
	struct wire_frame f;
	struct wire_challenge ch;
	struct wire_auth a;
	uint8_t hello[512], th[AUTH_TH_LEN];
	size_t used, hn = connector_hello(hello, sizeof(hello), nonce_c);

	CHECK(wire_frame_parse(c->out, c->out_len, &f, &used) == 1 && f.type == WIRE_CHALLENGE);
	CHECK(wire_decode_challenge(&f, &ch) == 0);
	CHECK(hn > WIRE_HDR_LEN && auth_transcript(hello + WIRE_HDR_LEN, hn - WIRE_HDR_LEN, f.payload, f.len, th) == 0);
	CHECK(auth_mac(AUTH_CONNECTOR, key, sizeof(key), th, a.mac) == 0);
	return wire_encode_auth(buf, cap, &a);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	static int once;
	static struct config cfg;
	static const uint8_t nonce_c[WIRE_NONCE_LEN] = { 1, 2, 3 };
	struct daemon d = { 0 };
	struct lds_tp_conn *c;
	uint8_t pre[512];
	size_t n;
	int mode;

	if (size < 1)
		return 0;
	if (!once) {
		log_init("fuzz_handshake", 1, LOG_LVL_ERR);
		make_config(&cfg);
		once = 1;
	}
	mode = data[0] & 3;
	c = calloc(1, sizeof(*c));
	CHECK(c != NULL);
	c->chunk = (size_t)(((data[0] >> 2) & 31) + 1) * 4;
	d.sink = (struct daemon_sink){ .deliver = sink_deliver, .acked = sink_acked, .lost = sink_lost,
				       .space = sink_space };
	CHECK(daemon_init(&d, &cfg) == 0);
	link_accept(&d, data[0] & 0x80 ? &fz_msg_ops : &fz_ops, NULL, c);
	c->whole = 1;
	if (mode >= 1 && !c->closed) {
		n = connector_hello(pre, sizeof(pre), nonce_c);
		c->in = pre, c->in_len = n, c->in_off = 0;
		CHECK(drive(c));
		if (mode == 2) {
			n = connector_auth(pre, sizeof(pre), c, nonce_c);
			c->in = pre, c->in_len = n, c->in_off = 0;
			CHECK(drive(c));
		}
	}
	c->whole = 0;
	c->in = data + 1, c->in_len = size - 1, c->in_off = 0;
	if (!c->closed && drive(c)) {
		/* Before authentication a stream takes one HELLO and then at
		 * most ADMISSION_RX_MAX bytes without closing. */
		CHECK(mode == 2 || c->in_off <= 2 * ADMISSION_RX_MAX);
		daemon_tick(&d, clock_now_ns() + 3600ull * 1000000000);
	}
	if (!c->closed) {
		c->in = NULL, c->in_len = c->in_off = 0;
		drive(c);
	}
	/* As a transport would once the conn is gone. */
	if (c->closed)
		link_upcalls.closed(c, c->ud);
	daemon_fini(&d);
	free(c);
	return 0;
}
