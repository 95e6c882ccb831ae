/*
 * tp_mem.c - a sample transport: conns are pairs of in-memory byte queues
 * inside one process.  Registered only by the unit tests
 * (transport_register), it shows what adding a transport takes: this one
 * file, one ops table, and its registration.  It has no descriptors, so
 * everything it hands up goes through the host's before-sleep pending hook
 * (transport.h), as an RDMA completion queue or TLS's buffered records
 * would.
 *
 * Addresses: a listener takes a port; connect finds the listener of that
 * port in any instance of the process (the host is ignored), so that two
 * daemons in one process can link (check_link.c); the accepted end
 * belongs to the listener's instance.  Its one setting, mem_window, is how
 * many bytes a conn holds unread before send says -EAGAIN.
 *
 * Faults for the link's tests (tp_mem.h): a conn can be broken, losing
 * what is in flight both ways, or held, so that what is sent on it waits
 * while other conns overtake it, or given bytes its peer never sent; and
 * every connect can be refused, as by a path that is down.
 *
 * Its twin "memmsg" carries messages instead (LDS_TP_CAP_MESSAGE, whole,
 * in order, each at most MEMMSG_MAX bytes) with registered memory
 * (LDS_TP_CAP_REGMEM), and is as strict as a transport that sends from
 * the core's memory can be: it delivers a message at once but keeps
 * pointing at the core's memory for MEMMSG_HOLD_ROUNDS loop rounds before
 * its sent upcall, then reads it again and aborts if a byte changed (or
 * the sanitizers stop it, if the memory was freed); a desc must name a
 * registered region holding its iovec, and a region must not be
 * deregistered while a message in it is held.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/crc32c.h"
#include "tp_mem.h"

#define MEM_MAX_CONNS 64
#define MEM_MAX_LISTENERS 8
#define MEMMSG_MAX (128u << 10)
#define MEMMSG_HOLD_ROUNDS 8
#define MEMMSG_HELD_MAX 128        /* messages a conn holds before send_msg says -EAGAIN */
#define MEMMSG_IOV_MAX 16
#define MEMMSG_REGIONS 128
#define MEMMSG_REC 4               /* a message's length before it in the peer's buffer */

/* A message sent and not yet reported sent: where it lies in the core's
 * memory and what it held. */
struct mem_held {
	struct iovec iov[MEMMSG_IOV_MAX];
	int iovcnt;
	void *ctx;
	uint32_t crc;
	unsigned round;
};

struct mem_region {
	const uint8_t *addr;
	size_t len;
	int used;
};

struct mem_conf {
	size_t window;
};

struct lds_transport {
	struct lds_tp_host host;
	struct lds_tp_upcalls up;
	int msg;                                        /* memmsg */
	unsigned round;                                 /* pending rounds so far */
	struct mem_region regions[MEMMSG_REGIONS];      /* mem_reg's; a desc points at one */
	int pending_id;
	struct lds_tp_conn *conns[MEM_MAX_CONNS];      /* live ones; NULL: a free slot */
	struct lds_tp_conn *dead;                       /* closed, freed by the next pending round */
};

/* Every instance's, by port. */
static struct lds_tp_listener *mem_listeners[MEM_MAX_LISTENERS];
static int mem_refusing;                        /* tp_mem_refuse */

struct lds_tp_listener {
	struct lds_transport *tp;
	uint16_t port;
	int paused;
	void *ud;
};

struct lds_tp_conn {
	struct lds_transport *tp;
	struct lds_tp_conn *peer;      /* NULL once the peer closed */
	struct lds_tp_listener *accept_on; /* set until the accepted upcall */
	int connecting;                /* the connected upcall is due */
	int want_w, no_read;
	int held;                      /* tp_mem_hold: what arrives waits */
	uint64_t id;                   /* tp_mem_id */
	int broken;                    /* tp_mem_break: recv and send fail */
	int news;                      /* bytes or EOF arrived since the last readable upcall */
	size_t lowat;                  /* rx_lowat: readable upcalls once this much is readable (0, 1: any) */
	size_t shown;                  /* tp_mem_drip: bytes of buf readable so far */
	unsigned recvs;                /* recv calls that took bytes */
	int room;                      /* the peer read since the last writable upcall */
	size_t window;
	unsigned char *buf;            /* what the peer sent, unread: len bytes (memmsg: records) */
	size_t len;
	int lent;                      /* memmsg: the first message is the core's until msg_done */
	struct mem_held *inflight;     /* memmsg: messages sent, not yet reported sent */
	unsigned infl_head, ninfl;
	uint64_t sent, recvd;
	void *ud;
	struct lds_tp_conn *next_dead;
};

static const struct lds_tp_option mem_options[] = {
	{ .name = "mem_window", .type = LDS_TP_OPT_BYTES, .off = offsetof(struct mem_conf, window),
	  .size = sizeof(size_t), .min = 1024, .max = 64u << 20 },
	{ .name = NULL },
};

static void mem_conf_defaults(void *conf)
{
	((struct mem_conf *)conf)->window = 64u << 10;
}

static int mem_conf_check(const void *conf, struct lds_tp_conf_error *e)
{
	const struct mem_conf *mc = conf;

	if (mc->window % 1024 == 0)
		return 0;
	e->option = "mem_window";
	snprintf(e->msg, sizeof(e->msg), "must be a multiple of 1024 (got %zu)", mc->window);
	return -1;
}

static void mem_status(const void *conf, FILE *out)
{
	fprintf(out, ",\"mem_window\":%zu", ((const struct mem_conf *)conf)->window);
}

static const char *mem_describe(const void *conf, char *buf, size_t len)
{
	snprintf(buf, len, "window %zu", ((const struct mem_conf *)conf)->window);
	return buf;
}

static uint32_t mem_iov_crc(const struct iovec *iov, int iovcnt)
{
	uint32_t crc = 0;

	for (int i = 0; i < iovcnt; i++)
		crc = crc32c(crc, iov[i].iov_base, iov[i].iov_len);
	return crc;
}

/* memmsg: reports sent the messages held long enough, oldest first, once
 * it checked that their bytes did not change.  Returns the upcalls made;
 * *waiting is set if c holds more. */
static int mem_report_sent(struct lds_transport *tp, size_t i, int *waiting)
{
	struct lds_tp_conn *c = tp->conns[i];
	int n = 0;

	while (tp->conns[i] == c && c->ninfl > 0) {
		struct mem_held *h = &c->inflight[c->infl_head];

		if (tp->round - h->round < MEMMSG_HOLD_ROUNDS) {
			*waiting = 1;
			break;
		}
		if (mem_iov_crc(h->iov, h->iovcnt) != h->crc) {
			fprintf(stderr, "memmsg: a message's memory changed before its sent upcall\n");
			abort();
		}
		c->infl_head = (c->infl_head + 1) % MEMMSG_HELD_MAX;
		c->ninfl--;
		c->room = 1;
		n++;
		tp->up.sent(c, h->ctx, c->ud);
	}
	return n;
}

/* Frees the closed conns, telling the core if tell. */
static int mem_reap(struct lds_transport *tp, int tell)
{
	int n = 0;

	while (tp->dead) {
		struct lds_tp_conn *c = tp->dead;

		tp->dead = c->next_dead;
		if (tell && tp->up.closed)
			tp->up.closed(c, c->ud);
		free(c->inflight);
		free(c->buf);
		free(c);
		n++;
	}
	return n;
}

/* tp_mem_drip's bytes per round; 0: everything at once. */
static size_t mem_drip;

/* Bytes of c's buffer that recv may take now. */
static size_t mem_readable(const struct lds_tp_conn *c)
{
	if (c->held)
		return 0;
	return mem_drip && c->shown < c->len ? c->shown : c->len;
}

/* As a kernel: below the low mark only a full buffer or the end wakes. */
static int mem_wakes(const struct lds_tp_conn *c)
{
	size_t n = mem_readable(c);

	return n >= (c->lowat ? c->lowat : 1) || c->len >= c->window || c->broken || c->peer == NULL;
}

/* One round of what no fd announces: accepts, connects, data, room,
 * messages reported sent, and freeing closed conns.  Returns the number
 * of upcalls made (1 more while messages wait for a later round). */
static int mem_pending(void *arg)
{
	struct lds_transport *tp = arg;
	int n = 0, waiting = 0;

	tp->round++;
	for (size_t i = 0; i < MEM_MAX_CONNS; i++) {
		struct lds_tp_conn *c = tp->conns[i];

		if (c == NULL)
			continue;
		if (c->ninfl > 0 && !c->accept_on && !c->connecting)
			n += mem_report_sent(tp, i, &waiting);
		if (mem_drip && !c->held && c->shown < c->len) {
			c->shown = c->shown + mem_drip < c->len ? c->shown + mem_drip : c->len;
			c->news = 1;
		}
		if (tp->conns[i] != c)
			continue;
		if (c->accept_on) {
			if (c->accept_on->paused)
				continue;
			n++;
			tp->up.accepted(c->accept_on, c, c->accept_on->ud);
			if (tp->conns[i] == c)
				c->accept_on = NULL;
		} else if (c->connecting) {
			c->connecting = 0;
			n++;
			tp->up.connected(c, 0, c->ud);
		} else if (c->news && !c->no_read && !c->held && mem_wakes(c)) {
			c->news = 0;
			n++;
			tp->up.readable(c, c->ud);
		} else if (c->want_w && c->room) {
			c->room = 0;
			n++;
			tp->up.writable(c, c->ud);
		}
	}
	return n + mem_reap(tp, 1) + waiting;
}

static int mem_init_kind(struct lds_transport **out, const struct lds_tp_host *host,
			 const struct lds_tp_upcalls *up, int msg)
{
	struct lds_transport *tp = calloc(1, sizeof(*tp));

	if (tp == NULL)
		return -ENOMEM;
	tp->msg = msg;
	tp->host = *host;
	tp->up = *up;
	tp->pending_id = host->pending_add(host->ctx, mem_pending, tp);
	if (tp->pending_id < 0) {
		int r = tp->pending_id;

		free(tp);
		return r;
	}
	*out = tp;
	return 0;
}

static int mem_init(struct lds_transport **out, const struct lds_tp_host *host, const struct lds_tp_upcalls *up)
{
	return mem_init_kind(out, host, up, 0);
}

static int memmsg_init(struct lds_transport **out, const struct lds_tp_host *host, const struct lds_tp_upcalls *up)
{
	return mem_init_kind(out, host, up, 1);
}

static void mem_close(struct lds_tp_conn *c);

/* The conns the core closed get their closed upcall; those it never saw
 * (accepted, not yet handed up) end with the instance. */
static void mem_fini(struct lds_transport *tp)
{
	tp->host.pending_del(tp->host.ctx, tp->pending_id);
	mem_reap(tp, 1);
	for (size_t i = 0; i < MEM_MAX_CONNS; i++)
		if (tp->conns[i])
			mem_close(tp->conns[i]);
	mem_reap(tp, 0);
	free(tp);
}

static int mem_listen(struct lds_transport *tp, const char *addr, uint16_t port, const struct lds_tp_opts *o,
		      void *ud, struct lds_tp_listener **out)
{
	size_t free_slot = MEM_MAX_LISTENERS;

	for (size_t i = 0; i < MEM_MAX_LISTENERS; i++) {
		if (mem_listeners[i] && mem_listeners[i]->port == port)
			return -EADDRINUSE;
		if (mem_listeners[i] == NULL && free_slot == MEM_MAX_LISTENERS)
			free_slot = i;
	}
	if (free_slot == MEM_MAX_LISTENERS)
		return -ENOSPC;
	*out = calloc(1, sizeof(**out));
	if (*out == NULL)
		return -ENOMEM;
	**out = (struct lds_tp_listener){ .tp = tp, .port = port, .ud = ud };
	mem_listeners[free_slot] = *out;
	return 0;
}

static void mem_listener_close(struct lds_tp_listener *l)
{
	for (size_t i = 0; i < MEM_MAX_LISTENERS; i++)
		if (mem_listeners[i] == l)
			mem_listeners[i] = NULL;
	free(l);
}

static int mem_listener_pause(struct lds_tp_listener *l, int paused)
{
	l->paused = paused;
	return 0;
}

static struct lds_tp_conn *mem_conn_new(struct lds_transport *tp, size_t window, void *ud)
{
	struct lds_tp_conn *c;

	for (size_t i = 0; i < MEM_MAX_CONNS; i++) {
		if (tp->conns[i] != NULL)
			continue;
		c = calloc(1, sizeof(*c));
		/* memmsg: a message is taken whenever the buffer holds less
		 * than window bytes. */
		if (c == NULL || (c->buf = malloc(window + (tp->msg ? MEMMSG_REC + MEMMSG_MAX : 0))) == NULL ||
		    (tp->msg && (c->inflight = calloc(MEMMSG_HELD_MAX, sizeof(*c->inflight))) == NULL)) {
			if (c)
				free(c->buf);
			free(c);
			return NULL;
		}
		static uint64_t next_id;

		c->tp = tp;
		c->window = window;
		c->ud = ud;
		c->id = ++next_id;
		tp->conns[i] = c;
		return c;
	}
	return NULL;
}

static void mem_close(struct lds_tp_conn *c)
{
	struct lds_transport *tp = c->tp;

	for (size_t i = 0; i < MEM_MAX_CONNS; i++)
		if (tp->conns[i] == c)
			tp->conns[i] = NULL;
	if (c->peer) {
		c->peer->peer = NULL;
		c->peer->news = 1;     /* the peer's recv now says -EPIPE */
	}
	c->ninfl = 0;                  /* let go: no sent upcall for them */
	c->next_dead = tp->dead;
	tp->dead = c;
}

static int mem_connect(struct lds_transport *tp, const char *host, uint16_t port, const struct lds_tp_opts *o,
		       void *ud, struct lds_tp_conn **out, const char **step)
{
	const struct mem_conf *mc = o && o->conf ? o->conf : NULL;
	size_t window = mc ? mc->window : 64u << 10;
	struct lds_tp_listener *l = NULL;
	struct lds_tp_conn *c, *s;

	*step = "connect";
	for (size_t i = 0; i < MEM_MAX_LISTENERS && l == NULL && !mem_refusing; i++)
		if (mem_listeners[i] && mem_listeners[i]->port == port)
			l = mem_listeners[i];
	if (l == NULL)
		return -ECONNREFUSED;
	*step = "socket";
	c = mem_conn_new(tp, window, ud);
	s = c ? mem_conn_new(l->tp, window, NULL) : NULL;
	if (s == NULL) {
		if (c)
			mem_close(c);
		return -ENOMEM;
	}
	c->peer = s;
	s->peer = c;
	c->connecting = 1;
	s->accept_on = l;
	*out = c;
	return 0;
}

void tp_mem_refuse(int on)
{
	mem_refusing = on;
}

static void mem_set_userdata(struct lds_tp_conn *c, void *ud)
{
	c->ud = ud;
}

static int mem_send(struct lds_tp_conn *c, const struct iovec *iov, int iovcnt, unsigned flags, size_t *sent)
{
	struct lds_tp_conn *p = c->peer;

	*sent = 0;
	if (c->broken)
		return -ECONNRESET;
	if (p == NULL)
		return -EPIPE;
	for (int i = 0; i < iovcnt && p->len < p->window; i++) {
		size_t n = iov[i].iov_len < p->window - p->len ? iov[i].iov_len : p->window - p->len;

		memcpy(p->buf + p->len, iov[i].iov_base, n);
		p->len += n;
		*sent += n;
	}
	if (*sent == 0 && iovcnt > 0)
		return -EAGAIN;
	p->news = 1;
	c->sent += *sent;
	return 0;
}

static void mem_push(struct lds_tp_conn *c)
{
}

static int mem_recv(struct lds_tp_conn *c, const struct iovec *iov, int iovcnt, size_t *got)
{
	size_t off = 0;

	*got = 0;
	if (c->broken)
		return -ECONNRESET;
	if (c->len == 0 || c->held)
		return c->peer || c->held ? -EAGAIN : -EPIPE;
	if (mem_readable(c) == 0)
		return -EAGAIN;
	for (int i = 0; i < iovcnt && off < mem_readable(c); i++) {
		size_t n = iov[i].iov_len < mem_readable(c) - off ? iov[i].iov_len : mem_readable(c) - off;

		memcpy(iov[i].iov_base, c->buf + off, n);
		off += n;
	}
	memmove(c->buf, c->buf + off, c->len - off);
	c->len -= off;
	c->shown = c->shown > off ? c->shown - off : 0;
	c->recvs++;
	*got = off;
	c->recvd += off;
	if (c->peer)
		c->peer->room = 1;
	if (c->len > 0)
		c->news = 1;       /* more than the caller took: tell it again */
	return 0;
}

/* The region a desc names must hold the iovec: a stale registration (the
 * core moved its buffer) is a bug worth stopping for. */
static void memmsg_check_desc(const struct lds_transport *tp, const struct iovec *iov, const void *desc)
{
	const struct mem_region *r = desc;
	const uint8_t *p = iov->iov_base;

	if (r < tp->regions || r >= tp->regions + MEMMSG_REGIONS || !r->used || p < r->addr ||
	    p + iov->iov_len > r->addr + r->len) {
		fprintf(stderr, "memmsg: a send's desc does not name registered memory holding its iovec\n");
		abort();
	}
}

static int memmsg_send(struct lds_tp_conn *c, const struct iovec *iov, int iovcnt, void *const *desc, void *ctx)
{
	struct lds_tp_conn *p = c->peer;
	struct mem_held *h;
	size_t total = 0;
	uint32_t n;

	if (c->broken)
		return -ECONNRESET;
	if (p == NULL)
		return -EPIPE;
	if (iovcnt < 1 || iovcnt > MEMMSG_IOV_MAX)
		return -EINVAL;
	for (int i = 0; i < iovcnt; i++) {
		total += iov[i].iov_len;
		if (desc && desc[i])
			memmsg_check_desc(c->tp, &iov[i], desc[i]);
	}
	if (total == 0 || total > MEMMSG_MAX)
		return -EMSGSIZE;
	if (c->ninfl == MEMMSG_HELD_MAX || p->len >= p->window)
		return -EAGAIN;
	n = (uint32_t)total;
	memcpy(p->buf + p->len, &n, sizeof(n));
	p->len += MEMMSG_REC;
	for (int i = 0; i < iovcnt; i++) {
		memcpy(p->buf + p->len, iov[i].iov_base, iov[i].iov_len);
		p->len += iov[i].iov_len;
	}
	h = &c->inflight[(c->infl_head + c->ninfl++) % MEMMSG_HELD_MAX];
	memcpy(h->iov, iov, (size_t)iovcnt * sizeof(iov[0]));
	h->iovcnt = iovcnt;
	h->ctx = ctx;
	h->crc = mem_iov_crc(iov, iovcnt);
	h->round = c->tp->round;
	p->news = 1;
	c->sent += total;
	return 0;
}

static int memmsg_recv(struct lds_tp_conn *c, struct lds_tp_msg *m)
{
	uint32_t len;

	if (c->broken)
		return -ECONNRESET;
	if (c->lent)
		return -EBUSY;
	if (c->len == 0 || c->held)
		return c->peer || c->held ? -EAGAIN : -EPIPE;
	memcpy(&len, c->buf, sizeof(len));
	m->data = c->buf + MEMMSG_REC;
	m->len = len;
	m->tp_priv = NULL;
	c->lent = 1;
	c->recvd += len;
	return 0;
}

static void memmsg_done(struct lds_tp_conn *c, struct lds_tp_msg *m)
{
	size_t used = MEMMSG_REC + m->len;

	if (!c->lent || m->data != c->buf + MEMMSG_REC) {
		fprintf(stderr, "memmsg: msg_done for a message not lent\n");
		abort();
	}
	c->lent = 0;
	memmove(c->buf, c->buf + used, c->len - used);
	c->len -= used;
	if (c->peer)
		c->peer->room = 1;
	if (c->len > 0)
		c->news = 1;
}

static int memmsg_reg(struct lds_transport *tp, void *addr, size_t len, void **desc)
{
	for (size_t i = 0; i < MEMMSG_REGIONS; i++) {
		if (tp->regions[i].used)
			continue;
		tp->regions[i] = (struct mem_region){ .addr = addr, .len = len, .used = 1 };
		*desc = &tp->regions[i];
		return 0;
	}
	return -ENOSPC;
}

static void memmsg_dereg(struct lds_transport *tp, void *desc)
{
	struct mem_region *r = desc;

	for (size_t i = 0; i < MEM_MAX_CONNS; i++) {
		const struct lds_tp_conn *c = tp->conns[i];

		for (unsigned k = 0; c && k < c->ninfl; k++) {
			const struct mem_held *h = &c->inflight[(c->infl_head + k) % MEMMSG_HELD_MAX];

			for (int j = 0; j < h->iovcnt; j++) {
				const uint8_t *p = h->iov[j].iov_base;

				if (p >= r->addr && p < r->addr + r->len) {
					fprintf(stderr, "memmsg: memory deregistered while a message in it is held\n");
					abort();
				}
			}
		}
	}
	r->used = 0;
}

static size_t mem_pending_bytes(struct lds_tp_conn *c)
{
	return mem_readable(c);
}

static void mem_rx_lowat(struct lds_tp_conn *c, size_t bytes)
{
	c->lowat = bytes;
	if (c->len > 0 && mem_wakes(c))
		c->news = 1;
}

void tp_mem_drip(size_t bytes_per_round)
{
	mem_drip = bytes_per_round;
}

unsigned tp_mem_recvs(const struct lds_tp_conn *c)
{
	return c->recvs;
}

static void mem_want_write(struct lds_tp_conn *c, int on)
{
	c->want_w = on;
	c->room = on;
}

static void mem_want_read(struct lds_tp_conn *c, int on)
{
	c->no_read = !on;
	if (on && c->len)
		c->news = 1;
}

static int mem_query(struct lds_tp_conn *c, struct lds_tp_info *info)
{
	memset(info, 0, sizeof(*info));
	info->bytes_sent = c->sent;
	info->bytes_recv = c->recvd;
	snprintf(info->peer, sizeof(info->peer), "mem:%p", (void *)c->peer);
	return 0;
}

/* One end of a broken connection: what it held unread is lost, and it is
 * told at once. */
static void mem_break_end(struct lds_tp_conn *c)
{
	c->broken = 1;
	c->held = 0;
	c->len = 0;
	c->lent = 0;
	c->ninfl = 0;
	c->news = 1;
	c->peer = NULL;
}

void tp_mem_break(struct lds_tp_conn *c)
{
	if (c->peer)
		mem_break_end(c->peer);
	mem_break_end(c);
}

void tp_mem_hold(struct lds_tp_conn *c, int on)
{
	c->held = on;
	if (!on && c->len)
		c->news = 1;
}

uint64_t tp_mem_id(const struct lds_tp_conn *c)
{
	return c->id;
}

size_t tp_mem_unread(const struct lds_tp_conn *c)
{
	return c->len;
}

int tp_mem_inject(struct lds_tp_conn *c, const void *bytes, size_t len)
{
	uint32_t n = (uint32_t)len;
	size_t rec = c->tp->msg ? MEMMSG_REC : 0;

	if (c->len + rec + len > c->window + (c->tp->msg ? MEMMSG_REC + MEMMSG_MAX : 0))
		return -ENOBUFS;
	memcpy(c->buf + c->len, &n, rec);
	memcpy(c->buf + c->len + rec, bytes, len);
	c->len += rec + len;
	c->news = 1;
	return 0;
}

const struct lds_transport_ops mem_transport_ops = {
	.size = LDS_TP_OPS_SIZE,
	.name = "mem",
	.caps = { .flags = LDS_TP_CAP_STREAM | LDS_TP_CAP_ORDERED | LDS_TP_CAP_RELIABLE | LDS_TP_CAP_INTEGRITY |
			   LDS_TP_CAP_FORK_SAFE },
	.options = mem_options,
	.conf_size = sizeof(struct mem_conf),
	.conf_defaults = mem_conf_defaults,
	.check = mem_conf_check,
	.init = mem_init,
	.fini = mem_fini,
	.listen = mem_listen,
	.listener_close = mem_listener_close,
	.listener_pause = mem_listener_pause,
	.connect = mem_connect,
	.set_userdata = mem_set_userdata,
	.send = mem_send,
	.push = mem_push,
	.recv = mem_recv,
	.pending = mem_pending_bytes,
	.rx_lowat = mem_rx_lowat,
	.want_write = mem_want_write,
	.want_read = mem_want_read,
	.close = mem_close,
	.query = mem_query,
	.status = mem_status,
	.describe = mem_describe,
};

const struct lds_transport_ops memmsg_transport_ops = {
	.size = LDS_TP_OPS_SIZE,
	.name = "memmsg",
	.caps = { .flags = LDS_TP_CAP_MESSAGE | LDS_TP_CAP_ORDERED | LDS_TP_CAP_RELIABLE | LDS_TP_CAP_INTEGRITY |
			   LDS_TP_CAP_REGMEM, .max_msg = MEMMSG_MAX },
	.options = mem_options,
	.conf_size = sizeof(struct mem_conf),
	.conf_defaults = mem_conf_defaults,
	.check = mem_conf_check,
	.init = memmsg_init,
	.fini = mem_fini,
	.listen = mem_listen,
	.listener_close = mem_listener_close,
	.listener_pause = mem_listener_pause,
	.connect = mem_connect,
	.set_userdata = mem_set_userdata,
	.send_msg = memmsg_send,
	.recv_msg = memmsg_recv,
	.msg_done = memmsg_done,
	.mem_reg = memmsg_reg,
	.mem_dereg = memmsg_dereg,
	.want_write = mem_want_write,
	.want_read = mem_want_read,
	.close = mem_close,
	.query = mem_query,
	.status = mem_status,
	.describe = mem_describe,
};
