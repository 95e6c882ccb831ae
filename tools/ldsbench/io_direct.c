/*
 * io_direct.c - ldsbench's messages over a link of ldsd's own code run in
 * this process (ldsd/daemon.h): the same streams, blocks, acknowledgements
 * and reconnections as between two gateways, without the daemons and
 * their client sockets, to measure the transport itself.
 *
 * The sender is cluster DIRECT_SEND_CLUSTER connecting to HOST:PORT, the
 * receiver DIRECT_RECV_CLUSTER listening on [ADDR:]PORT (or --port PORT
 * with the host or address alone).  Both prove the
 * same key (--key FILE, or a built-in one that is no secret).
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <sys/socket.h>

#include "ldsd/clock.h"
#include "ldsd/config.h"
#include "ldsd/daemon.h"
#include "ldsd/link.h"
#include "ldsd/recvbuf.h"
#include "tools/ldsbench/ldsbench.h"

#define TICK_MS 50
/* How long close waits for the link to tell its peer what it delivered. */
#define DRAIN_NS (2 * 1000000000ull)
#define CLIENT_ID 1
/* Anyone may read this key in the source: direct mode authenticates the
 * two ends of a benchmark, it does not protect a gateway.  --key FILE
 * for a real secret. */
#define PUBLIC_KEY "ldsbench --direct: a public key, not a secret"

struct io_direct {
	struct bench_io io;
	struct config cfg;
	struct daemon d;
	struct link *l;
	uint64_t next_id, settled;
	int tick;
	int room_wanted;
	int failed;
	uint64_t drain_until_ns;   /* closing: 0, or when to stop waiting */
	char self[WIRE_ENDPOINT_MAX + 1], peer[WIRE_ENDPOINT_MAX + 1];
};

static void id_fatal(struct io_direct *id, const char *text)
{
	if (id->failed)
		return;
	id->failed = 1;
	id->io.events.fatal(id->io.events.arg, text);
}

static void sink_deliver(void *arg, struct link *from, struct rb_msg *m)
{
	struct io_direct *id = arg;

	rb_msg_flatten(m);
	id->io.events.message(id->io.events.arg, m->rec.src, m->data, m->rec.len);
	link_delivered(from, m);
}

/* Messages are delivered in order on one link: the latest id is the
 * highest settled one. */
static void sink_acked(void *arg, uint64_t client, uint64_t msg)
{
	struct io_direct *id = arg;

	if (msg > id->settled)
		id->settled = msg;
}

static void sink_lost(void *arg, struct link *l, uint64_t client, uint64_t msg, const char *reason)
{
	char text[256];

	snprintf(text, sizeof(text), "message %llu was lost: %s", (unsigned long long)msg, reason);
	id_fatal(arg, text);
}

static void sink_space(void *arg, struct link *l)
{
	struct io_direct *id = arg;

	if (id->room_wanted) {
		id->room_wanted = 0;
		id->io.events.room(id->io.events.arg);
	}
}

static void id_tick(uint64_t now, void *arg)
{
	struct io_direct *id = arg;
	int drained = daemon_tick(&id->d, now);

	if (id->drain_until_ns && (drained || now >= id->drain_until_ns))
		evloop_stop(id->io.ev);
}

static void id_idle(void *arg)
{
	struct io_direct *id = arg;

	daemon_flush(&id->d);
}

static int id_send(struct bench_io *io, const char *dst, const void *buf, size_t len, uint64_t *msg_id, char *err,
		   size_t errlen)
{
	struct io_direct *id = (struct io_direct *)io;
	struct wire_record rec = { .len = (uint32_t)len, .msg_id = id->next_id + 1 };
	int r;

	snprintf(rec.src, sizeof(rec.src), "%s", id->self);
	snprintf(rec.dst, sizeof(rec.dst), "%s", id->peer);
	r = link_send(id->l, &rec, buf, CLIENT_ID);
	if (r == -ENOSPC) {
		id->room_wanted = 1;
		return -EAGAIN;
	}
	if (r < 0) {
		snprintf(err, errlen, "link %s: %s (largest message: %zu bytes)", link_name(id->l), strerror(-r),
			 link_max_msg(id->l));
		return r;
	}
	*msg_id = ++id->next_id;
	return 0;
}

static uint64_t id_delivered(struct bench_io *io)
{
	return ((struct io_direct *)io)->settled;
}

static void id_stats(struct bench_io *io, const char *peer, struct linkstat *st)
{
	struct io_direct *id = (struct io_direct *)io;
	char *text = NULL, err[BENCH_ERR_MAX];
	size_t len = 0;
	FILE *f = open_memstream(&text, &len);

	memset(st, 0, sizeof(*st));
	if (f == NULL)
		return;
	fputs("{\"links\":[", f);
	link_status_json(id->l, f);
	fputs("]}", f);
	if (fclose(f) == 0 && linkstat_parse(text, id->cfg.peers[0].cluster, st, err, sizeof(err)) < 0)
		st->valid = 0;
	free(text);
}

static int id_set_streams(struct bench_io *io, const char *peer, unsigned n, char *err, size_t errlen)
{
	struct io_direct *id = (struct io_direct *)io;
	int r = link_set_stream_count(id->l, n);

	if (r < 0)
		snprintf(err, errlen, "%s", r == -EINVAL ? "the receiving side cannot choose the streams" : strerror(-r));
	return r < 0 ? -1 : 0;
}

static const char *id_endpoint(struct bench_io *io)
{
	return ((struct io_direct *)io)->self;
}

static void id_close(struct bench_io *io)
{
	struct io_direct *id = (struct io_direct *)io;

	/* As ldsd on SIGTERM: the peer hears of every delivery before the
	 * link goes, and what we sent is acknowledged, or the receiver could
	 * leave with its last report still in its own link (recv --once). */
	if (id->tick > 0 && id->l && !id->failed) {
		link_drain(id->l);
		id->drain_until_ns = clock_now_ns() + DRAIN_NS;
		evloop_run(io->ev);
		if (!link_drained(id->l))
			fprintf(stderr, "ldsbench: link %s closed after %llu s with messages unacknowledged "
				"or deliveries not reported to the peer\n", link_name(id->l),
				(unsigned long long)(DRAIN_NS / 1000000000ull));
	}
	if (id->tick > 0)
		evloop_tick_del(io->ev, id->tick);
	daemon_fini(&id->d);
	explicit_bzero(id->cfg.peers[0].key, sizeof(id->cfg.peers[0].key));
	free(id);
}

static const struct bench_io_ops io_direct_ops = {
	.name = "direct",
	.send = id_send,
	.delivered = id_delivered,
	.stats = id_stats,
	.set_streams = id_set_streams,
	.endpoint = id_endpoint,
	.close = id_close,
};

/* "HOST:PORT", "[V6]:PORT", or for a listener also a bare "PORT". */
static int parse_where(const char *s, int listen, char *host, size_t hlen, uint16_t *port)
{
	const char *colon = strrchr(s, ':');
	const char *p = colon ? colon + 1 : s;
	char *end;
	unsigned long v = strtoul(p, &end, 10);

	if (*p == '\0' || *end != '\0' || v < 1 || v > 65535 || (colon == NULL && !listen) || colon == s)
		return -1;
	*port = (uint16_t)v;
	if (colon == NULL) {
		snprintf(host, hlen, "0.0.0.0");
		return 0;
	}
	if (s[0] == '[' && colon[-1] == ']')
		snprintf(host, hlen, "%.*s", (int)(colon - s - 2), s + 1);
	else
		snprintf(host, hlen, "%.*s", (int)(colon - s), s);
	return host[0] ? 0 : -1;
}

/* The first line of a /proc file, or "?". */
static void proc_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "r");

	if (f == NULL || fgets(buf, (int)len, f) == NULL)
		snprintf(buf, len, "?");
	buf[strcspn(buf, "\n")] = '\0';
	if (f)
		fclose(f);
}

/* Whether this process may set congestion control name on a socket: the
 * kernel's answer to trying, so that the run does not start with streams
 * that cannot connect. */
static int cc_usable(const char *name, char *err, size_t errlen)
{
	int fd = socket(AF_INET, SOCK_STREAM, 0), rc = 0, e = 0;
	char list[256];

	if (fd < 0) {
		snprintf(err, errlen, "--congestion %s: cannot make a socket to try it: %s", name, strerror(errno));
		return -1;
	}
	if (setsockopt(fd, IPPROTO_TCP, TCP_CONGESTION, name, (socklen_t)strlen(name)) < 0) {
		e = errno;
		rc = -1;
	}
	close(fd);
	if (rc == 0)
		return 0;
	if (e == EPERM) {
		proc_line("/proc/sys/net/ipv4/tcp_allowed_congestion_control", list, sizeof(list));
		snprintf(err, errlen, "--congestion %s: not allowed for this user (uid %u, without CAP_NET_ADMIN; "
			 "allowed: %s): add it to sysctl net.ipv4.tcp_allowed_congestion_control or choose one of those",
			 name, (unsigned)geteuid(), list);
	} else {
		proc_line("/proc/sys/net/ipv4/tcp_available_congestion_control", list, sizeof(list));
		snprintf(err, errlen, "--congestion %s: not available in this kernel (available: %s; %s)", name, list,
			 strerror(e));
	}
	return -1;
}

/* The one-peer configuration a gateway's file would give. */
static int build_config(struct io_direct *id, const struct io_opts *o, char *err, size_t errlen)
{
	struct config *c = &id->cfg;
	struct config_peer *p = &c->peers[0];

	snprintf(c->file, sizeof(c->file), "ldsbench --direct");
	snprintf(c->cluster, sizeof(c->cluster), "%s", o->listen ? DIRECT_RECV_CLUSTER : DIRECT_SEND_CLUSTER);
	snprintf(c->log_level, sizeof(c->log_level), "warn");
	c->npeers = 1;
	config_handshake_defaults(&c->handshake);
	config_peer_defaults(p);
	snprintf(p->cluster, sizeof(p->cluster), "%s", o->listen ? DIRECT_SEND_CLUSTER : DIRECT_RECV_CLUSTER);
	p->role = o->listen ? CONFIG_ROLE_LISTEN : CONFIG_ROLE_CONNECT;
	if (o->port) {
		size_t n = strlen(o->direct);
		int br = n > 2 && o->direct[0] == '[' && o->direct[n - 1] == ']';

		snprintf(p->address, sizeof(p->address), "%.*s", (int)(n - 2 * br), o->direct + br);
		p->port = (uint16_t)o->port;
	} else if (parse_where(o->direct, o->listen, p->address, sizeof(p->address), &p->port) < 0) {
		snprintf(err, errlen, "--direct %s: want %s (or the %s alone and --port PORT)", o->direct,
			 o->listen ? "[ADDR:]PORT" : "HOST:PORT", o->listen ? "address" : "host");
		return -1;
	}
	p->streams = o->streams;
	p->streams_max = CONFIG_MAX_STREAMS;
	p->keepalive = p->inactivity_timeout / 4;
	if (o->encryption && strcmp(o->encryption, "none") == 0)
		p->encryption = CONFIG_ENC_NONE;
	if (o->memory)
		p->send_memory = p->recv_memory = o->memory;
	if (o->transport) {
		const struct lds_transport_ops *ops;
		char why[512];

		if (config_peer_set_transport(p, o->transport, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "--transport %s: %s", o->transport, why);
			return -1;
		}
		/* What the daemon would log: said here, before any link. */
		ops = transport_find(o->transport);
		if (ops->probe && ops->probe(why, sizeof(why)) < 0) {
			snprintf(err, errlen, "--transport %s: %s", o->transport, why);
			return -1;
		}
	}
	/* TCP's own settings, through the transport's option table and
	 * checks, as a gateway's file sets them. */
	if (o->window) {
		char v[32], why[512];

		snprintf(v, sizeof(v), "%zu", o->window);
		if (config_peer_set(p, "tcp_buffer", v, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "--window %zu: %s", o->window, why);
			return -1;
		}
	}
	if (o->congestion) {
		char why[512];

		if (cc_usable(o->congestion, err, errlen) < 0)
			return -1;
		if (config_peer_set(p, "congestion", o->congestion, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "--congestion %s: %s", o->congestion, why);
			return -1;
		}
	}
	if (o->key_file) {
		char why[4 * CONFIG_PATH_MAX];

		if (strlen(o->key_file) >= sizeof(p->key_file)) {
			snprintf(err, errlen, "--key %s: path too long", o->key_file);
			return -1;
		}
		snprintf(p->key_file, sizeof(p->key_file), "%s", o->key_file);
		if (config_read_key(p, why, sizeof(why)) < 0) {
			snprintf(err, errlen, "--key: %s", why);
			return -1;
		}
		return 0;
	}
	memcpy(p->key, PUBLIC_KEY, strlen(PUBLIC_KEY));
	p->key_len = strlen(PUBLIC_KEY);
	return 0;
}

struct bench_io *io_direct_open(struct evloop *ev, const struct io_opts *o, const struct bench_io_events *e,
				char *err, size_t errlen)
{
	struct io_direct *id = calloc(1, sizeof(*id));

	if (id == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	id->io.ops = &io_direct_ops;
	id->io.ev = ev;
	id->io.events = *e;
	if (build_config(id, o, err, errlen) < 0) {
		free(id);
		return NULL;
	}
	snprintf(id->self, sizeof(id->self), "%s/%s", id->cfg.cluster, DIRECT_ENDPOINT);
	snprintf(id->peer, sizeof(id->peer), "%s/%s", id->cfg.peers[0].cluster, DIRECT_ENDPOINT);
	id->d.ev = ev;
	id->d.sink = (struct daemon_sink){ .arg = id, .deliver = sink_deliver, .acked = sink_acked,
					   .lost = sink_lost, .space = sink_space };
	if (daemon_init(&id->d, &id->cfg) < 0 || (id->tick = evloop_tick_add(ev, TICK_MS, id_tick, id)) < 0 ||
	    evloop_idle_add(ev, id_idle, id) < 0 || daemon_start(&id->d) < 0) {
		snprintf(err, errlen, "cannot start the in-process link (%s %s); see the messages above",
			 o->listen ? "listening on" : "connecting to", o->direct);
		id_close(&id->io);
		return NULL;
	}
	if (id->d.nlinks == 0) {
		snprintf(err, errlen, "transport \"%s\" cannot run on this machine; see the messages above",
			 id->cfg.peers[0].transport);
		id_close(&id->io);
		return NULL;
	}
	id->l = id->d.links[0];
	return &id->io;
}
