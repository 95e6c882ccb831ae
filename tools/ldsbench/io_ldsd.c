/*
 * io_ldsd.c - ldsbench's messages through liblds and the local ldsd; the
 * link's counters and stream count through ldsd's control socket.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/ctlclient.h"
#include "libclient/lds.h"
#include "tools/ldsbench/ldsbench.h"

#define CTL_TIMEOUT_S 5.0
/* How often messages liblds holds already are looked for, socket readable
 * or not (see il_sweep). */
#define SWEEP_MS 50

struct io_ldsd {
	struct bench_io io;
	struct lds *h;
	char ctl[256];
	int want_write;
	int failed;
	int tick;
};

/* ldsd's default control socket for a client socket: ".sock" becomes
 * ".ctl" (ldsd.conf(5), control_socket). */
static void ctl_path(const struct io_opts *o, const char *sock, char *buf, size_t len)
{
	size_t n = strlen(sock);

	if (o->ctl) {
		snprintf(buf, len, "%s", o->ctl);
		return;
	}
	if (n >= 5 && strcmp(sock + n - 5, ".sock") == 0)
		n -= 5;
	snprintf(buf, len, "%.*s.ctl", (int)n, sock);
}

static int il_watch(struct io_ldsd *il);

static void il_fatal(struct io_ldsd *il, const char *fmt, const char *detail)
{
	char text[BENCH_ERR_MAX];

	if (il->failed)
		return;
	il->failed = 1;
	snprintf(text, sizeof(text), fmt, detail);
	il->io.events.fatal(il->io.events.arg, text);
}

static void il_event(int fd, unsigned events, void *arg)
{
	struct io_ldsd *il = arg;
	struct lds_event ev;
	struct lds_msg m;
	int r = lds_process(il->h);

	if (r < 0) {
		il_fatal(il, "the local ldsd went away: %s", lds_strerror(r));
		return;
	}
	while (lds_next_event(il->h, &ev) == 1) {
		char text[400];

		snprintf(text, sizeof(text), "messages %llu..%llu %s: %s", (unsigned long long)ev.first,
			 (unsigned long long)ev.last, ev.type == LDS_EV_LOST ? "were lost" : "were refused", ev.text);
		il_fatal(il, "%s", text);
	}
	while (lds_recv(il->h, &m, 0) == 0)
		il->io.events.message(il->io.events.arg, m.src, m.data, m.len);
	/* With shared-memory rings lds_fd only becomes readable, also when
	 * a send can go on (lds.h). */
	if (il->want_write && (events & (EV_WRITE | EV_READ))) {
		il->want_write = 0;
		if (il_watch(il) < 0)
			il_fatal(il, "%s", "cannot watch the socket to ldsd");
		il->io.events.room(il->io.events.arg);
	}
}

/* liblds may read messages ahead, with the daemon's welcome in lds_open:
 * its socket is then not readable although a message waits (a START that
 * came before `recv` did, answered by nothing else). */
static void il_sweep(uint64_t now, void *arg)
{
	struct io_ldsd *il = arg;

	il_event(lds_fd(il->h), 0, il);
}

static int il_watch(struct io_ldsd *il)
{
	return evloop_watch(il->io.ev, lds_fd(il->h), EV_READ | (il->want_write ? EV_WRITE : 0), il_event, il);
}

static int il_send(struct bench_io *io, const char *dst, const void *buf, size_t len, uint64_t *id, char *err,
		   size_t errlen)
{
	struct io_ldsd *il = (struct io_ldsd *)io;
	int r = lds_send_nb(il->h, dst, buf, len, id);

	if (r == -EAGAIN && !il->want_write) {
		il->want_write = 1;
		if (il_watch(il) < 0)
			il_fatal(il, "%s", "cannot watch the socket to ldsd");
	}
	if (r < 0 && r != -EAGAIN)
		snprintf(err, errlen, "sending to %s: %s", dst, lds_strerror(r));
	return r;
}

static uint64_t il_delivered(struct bench_io *io)
{
	return lds_settled_upto(((struct io_ldsd *)io)->h);
}

static void il_stats(struct bench_io *io, const char *peer, struct linkstat *st)
{
	struct io_ldsd *il = (struct io_ldsd *)io;
	char err[BENCH_ERR_MAX], *reply;

	memset(st, 0, sizeof(*st));
	if (ctlclient_ask("ldsd", il->ctl, "status json\n", CTL_TIMEOUT_S, &reply, err, sizeof(err)) < 0)
		return;
	if (linkstat_parse(reply, peer, st, err, sizeof(err)) < 0)
		st->valid = 0;
	free(reply);
}

static int il_set_streams(struct bench_io *io, const char *peer, unsigned n, char *err, size_t errlen)
{
	struct io_ldsd *il = (struct io_ldsd *)io;
	char req[128], *reply;
	int rc = 0;

	if (n)
		snprintf(req, sizeof(req), "streams %s %u\n", peer, n);
	else
		snprintf(req, sizeof(req), "streams %s auto\n", peer);
	if (ctlclient_ask("ldsd", il->ctl, req, CTL_TIMEOUT_S, &reply, err, errlen) < 0)
		return -1;
	if (ctlclient_is_error(reply)) {
		reply[strcspn(reply, "\n")] = '\0';
		snprintf(err, errlen, "ldsd at %s: %s", il->ctl, reply + 7);
		rc = -1;
	}
	free(reply);
	return rc;
}

static const char *il_endpoint(struct bench_io *io)
{
	return lds_name(((struct io_ldsd *)io)->h);
}

static void il_close(struct bench_io *io)
{
	struct io_ldsd *il = (struct io_ldsd *)io;

	if (il->tick > 0)
		evloop_tick_del(io->ev, il->tick);
	evloop_unwatch(io->ev, lds_fd(il->h));
	lds_close(il->h);
	free(il);
}

static const struct bench_io_ops io_ldsd_ops = {
	.name = "ldsd",
	.send = il_send,
	.delivered = il_delivered,
	.stats = il_stats,
	.set_streams = il_set_streams,
	.endpoint = il_endpoint,
	.close = il_close,
};

struct bench_io *io_ldsd_open(struct evloop *ev, const struct io_opts *o, const struct bench_io_events *e,
			      char *err, size_t errlen)
{
	struct io_ldsd *il = calloc(1, sizeof(*il));
	const char *sock = lds_socket_path(o->socket);
	int r = 0;

	if (il == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	il->io.ops = &io_ldsd_ops;
	il->io.ev = ev;
	il->io.events = *e;
	ctl_path(o, sock, il->ctl, sizeof(il->ctl));
	il->h = lds_open(sock, o->name ? o->name : "", 5000, &r);
	if (il->h == NULL) {
		snprintf(err, errlen, "cannot reach ldsd at %s%s%s%s: %s", sock, o->name ? " as \"" : "",
			 o->name ? o->name : "", o->name ? "\"" : "", lds_strerror(r));
		free(il);
		return NULL;
	}
	if (il_watch(il) < 0 || (il->tick = evloop_tick_add(ev, SWEEP_MS, il_sweep, il)) < 0) {
		snprintf(err, errlen, "cannot watch the socket to ldsd");
		evloop_unwatch(ev, lds_fd(il->h));
		lds_close(il->h);
		free(il);
		return NULL;
	}
	return &il->io;
}
