/* ctl.c - the ldsctl control socket; see ctl.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "admission.h"
#include "clientsrv.h"
#include "clock.h"
#include "ctl.h"
#include "fdreserve.h"
#include "jobexec.h"
#include "link.h"
#include "log.h"

#define CTL_REQ_MAX 256
#define CTL_CONN_TIMEOUT_NS (5ull * 1000000000)

struct ctl_conn;

struct ctl {
	struct daemon *d;
	int fd;
	int tick;
	struct ctl_conn *conns;
};

static void ctl_status(struct daemon *d, FILE *out, int json)
{
	double up = (double)(clock_now_ns() - d->started_ns) / 1e9;

	if (json) {
		fprintf(out, "{\"cluster\":\"%s\",\"instance\":\"%016" PRIx64 "\",\"uptime_s\":%.3f,\"pid\":%d,"
			"\"draining\":%s,\"time\":%.3f,\"links\":[",
			d->cfg->cluster, d->instance, up, (int)getpid(), d->draining ? "true" : "false", clock_wall_s());
		for (size_t i = 0; i < d->nlinks; i++) {
			if (i)
				fputc(',', out);
			link_status_json(d->links[i], out);
		}
		fputs("],\"clients\":", out);
		clientsrv_status_json(d->cs, out);
		fputs(",\"exec\":", out);
		jobexec_status_json(d->jx, out);
		fputs(",\"peer_port\":", out);
		admission_status_json(d->adm, out);
		fputs("}\n", out);
		return;
	}
	fprintf(out, "ldsd cluster %s, pid %d, up %.0f s%s\n", d->cfg->cluster, (int)getpid(), up,
		d->draining ? ", draining" : "");
	for (size_t i = 0; i < d->nlinks; i++)
		link_status_text(d->links[i], out);
	clientsrv_status_text(d->cs, out);
	jobexec_status_text(d->jx, out);
	admission_status_text(d->adm, out);
}

static void ctl_fault(struct daemon *d, FILE *out, const char *args)
{
	char verb[8], peer[WIRE_NAME_MAX + 1], extra[16] = "";
	int idx = -1, n;
	struct link *l;

	if (!d->cfg->allow_faults) {
		fprintf(out, "error: fault injection is off; set allow_faults = true in %s\n", d->cfg->file);
		return;
	}
	n = sscanf(args, "%7s %63s %15s", verb, peer, extra);
	if (n < 2 || (strcmp(verb, "break") != 0 && strcmp(verb, "stall") != 0) ||
	    (n == 3 && (sscanf(extra, "%d", &idx) != 1 || idx < 0 || idx >= CONFIG_MAX_STREAMS))) {
		fprintf(out, "error: usage: fault break|stall PEER [STREAM], STREAM a number from 0 to %d\n",
			CONFIG_MAX_STREAMS - 1);
		return;
	}
	l = link_find(d, peer);
	if (l == NULL) {
		fprintf(out, "error: no link to \"%s\"\n", peer);
		return;
	}
	n = verb[0] == 'b' ? link_fault_break(l, idx) : link_fault_stall(l, idx);
	fprintf(out, "%s %d stream%s\n", verb[0] == 'b' ? "broke" : "stalled", n, n == 1 ? "" : "s");
}

static void ctl_streams(struct daemon *d, FILE *out, const char *args)
{
	char peer[WIRE_NAME_MAX + 1], count[16];
	unsigned n = 0;
	struct link *l;
	int r;

	if (sscanf(args, "%63s %15s", peer, count) != 2 ||
	    (strcmp(count, "auto") != 0 && (sscanf(count, "%u", &n) != 1 || n < 1 || n > CONFIG_MAX_STREAMS))) {
		fprintf(out, "error: usage: streams PEER N|auto, N from 1 to %d\n", CONFIG_MAX_STREAMS);
		return;
	}
	l = link_find(d, peer);
	if (l == NULL) {
		fprintf(out, "error: no link to \"%s\"\n", peer);
		return;
	}
	r = link_set_stream_count(l, n);
	if (r == -EINVAL)
		fprintf(out, "error: link %s: this gateway listens; set the streams on the connecting side (%s)\n",
			peer, "its ldsd.conf or its ldsctl");
	else if (r < 0)
		fprintf(out, "error: link %s: %s\n", peer, strerror(-r));
	else
		fprintf(out, "link %s: streams %s\n", peer, count);
}

/* One ldsctl connection: nonblocking, so a client that says nothing or
 * reads slowly never holds the daemon up; dropped after CTL_CONN_TIMEOUT. */
struct ctl_conn {
	struct ctl *ctl;
	int fd;
	char req[CTL_REQ_MAX + 1];
	size_t req_len;
	char *reply;
	size_t reply_len, reply_off;
	uint64_t deadline_ns;
	struct ctl_conn *next;
};

static void ctl_conn_close(struct ctl_conn *cc)
{
	struct ctl *c = cc->ctl;

	for (struct ctl_conn **pp = &c->conns; *pp; pp = &(*pp)->next) {
		if (*pp == cc) {
			*pp = cc->next;
			break;
		}
	}
	evloop_unwatch(c->d->ev, cc->fd);
	close(cc->fd);
	free(cc->reply);
	free(cc);
}

static void ctl_answer(struct ctl_conn *cc)
{
	struct daemon *d = cc->ctl->d;
	FILE *out = open_memstream(&cc->reply, &cc->reply_len);

	if (out == NULL)
		return;
	cc->req[cc->req_len] = '\0';
	cc->req[strcspn(cc->req, "\r\n")] = '\0';
	if (strcmp(cc->req, "status") == 0)
		ctl_status(d, out, 0);
	else if (strcmp(cc->req, "status json") == 0)
		ctl_status(d, out, 1);
	else if (strncmp(cc->req, "fault ", 6) == 0)
		ctl_fault(d, out, cc->req + 6);
	else if (strncmp(cc->req, "streams ", 8) == 0)
		ctl_streams(d, out, cc->req + 8);
	else
		fprintf(out, "error: unknown request \"%s\" (try: status, status json, streams PEER N|auto, "
			"fault break|stall PEER)\n", cc->req);
	fclose(out);
}

static void ctl_conn_event(int fd, unsigned events, void *arg)
{
	struct ctl_conn *cc = arg;

	if (cc->reply == NULL) {
		ssize_t n = read(fd, cc->req + cc->req_len, CTL_REQ_MAX - cc->req_len);

		if (n < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (n > 0)
			cc->req_len += (size_t)n;
		/* A request ends at a newline, at EOF, or when the buffer is full. */
		if (n > 0 && memchr(cc->req, '\n', cc->req_len) == NULL && cc->req_len < CTL_REQ_MAX)
			return;
		if (cc->req_len == 0) {
			ctl_conn_close(cc);
			return;
		}
		ctl_answer(cc);
		if (cc->reply == NULL || evloop_watch(cc->ctl->d->ev, fd, EV_WRITE, ctl_conn_event, cc) < 0) {
			ctl_conn_close(cc);
			return;
		}
	}
	while (cc->reply_off < cc->reply_len) {
		ssize_t w = write(fd, cc->reply + cc->reply_off, cc->reply_len - cc->reply_off);

		if (w < 0 && (errno == EAGAIN || errno == EINTR))
			return;
		if (w <= 0)
			break;
		cc->reply_off += (size_t)w;
	}
	ctl_conn_close(cc);
}

static void ctl_accept(int fd, unsigned events, void *arg)
{
	struct ctl *c = arg;

	for (int i = 0; i < 16; i++) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct ctl_conn *cc;

		if (cfd < 0) {
			fdreserve_drop(fd, errno);
			return;
		}
		cc = calloc(1, sizeof(*cc));
		if (cc == NULL || evloop_watch(c->d->ev, cfd, EV_READ, ctl_conn_event, cc) < 0) {
			free(cc);
			close(cfd);
			continue;
		}
		cc->ctl = c;
		cc->fd = cfd;
		cc->deadline_ns = clock_now_ns() + CTL_CONN_TIMEOUT_NS;
		cc->next = c->conns;
		c->conns = cc;
	}
}

static void ctl_tick(uint64_t now, void *arg)
{
	struct ctl *c = arg;
	struct ctl_conn *cc, *next;

	for (cc = c->conns; cc; cc = next) {
		next = cc->next;
		if (now > cc->deadline_ns)
			ctl_conn_close(cc);
	}
}

struct ctl *ctl_new(struct daemon *d)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	const char *path = d->cfg->control_socket;
	struct ctl *c;
	mode_t old;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		log_warnx("control socket path %s is too long", path);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL)
		return NULL;
	c->d = d;
	strcpy(sa.sun_path, path);
	c->fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (c->fd < 0) {
		log_warn("socket(AF_UNIX)");
		free(c);
		return NULL;
	}
	unlink(path);
	old = umask(077);
	if (bind(c->fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(c->fd, 16) < 0 ||
	    evloop_watch(d->ev, c->fd, EV_READ, ctl_accept, c) < 0 ||
	    (c->tick = evloop_tick_add(d->ev, 1000, ctl_tick, c)) < 0) {
		umask(old);
		log_warn("cannot listen on control socket %s", path);
		close(c->fd);
		free(c);
		return NULL;
	}
	umask(old);
	return c;
}

void ctl_free(struct ctl *c)
{
	if (c == NULL)
		return;
	while (c->conns)
		ctl_conn_close(c->conns);
	evloop_tick_del(c->d->ev, c->tick);
	evloop_unwatch(c->d->ev, c->fd);
	close(c->fd);
	unlink(c->d->cfg->control_socket);
	free(c);
}
