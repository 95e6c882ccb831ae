/* ctl.c - the ldsctl control socket; see ctl.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include "admission.h"
#include "clientsrv.h"
#include "clock.h"
#include "ctl.h"
#include "fdreserve.h"
#include "jobexec.h"
#include "jsonr.h"
#include "link.h"
#include "listen.h"
#include "log.h"
#include "metrics.h"

#define CTL_REQ_MAX 4096     /* an HTTP request's line and headers */
#define CTL_CONN_TIMEOUT_NS (5ull * 1000000000)
#define CTL_CONNS_MAX 64     /* a scraper or script that never closes cannot take every descriptor */

/* The control socket takes every request; the status socket only those
 * that read (status, metrics); the metrics socket speaks HTTP. */
enum ctl_kind { CTL_CONTROL, CTL_STATUS, CTL_HTTP, CTL_NKINDS };

struct ctl_conn;

struct ctl_sock {
	struct ctl *ctl;
	enum ctl_kind kind;
	int fd;
};

struct ctl {
	struct daemon *d;
	struct ctl_sock socks[CTL_NKINDS];
	int tick;
	unsigned nconns;
	struct ctl_conn *conns;
};

/* Resident memory of this process, from /proc/self/statm; 0 if unknown. */
static unsigned long long rss_bytes(void)
{
	unsigned long long size, res = 0;
	FILE *f = fopen("/proc/self/statm", "r");

	if (f != NULL) {
		if (fscanf(f, "%llu %llu", &size, &res) != 2)
			res = 0;
		fclose(f);
	}
	return res * (unsigned long long)sysconf(_SC_PAGESIZE);
}

static void ctl_status(struct daemon *d, FILE *out, int json)
{
	double up = (double)(clock_now_ns() - d->started_ns) / 1e9;

	if (json) {
		fprintf(out, "{\"schema\":%d,\"version\":\"%s\",\"cluster\":\"%s\",\"instance\":\"%016" PRIx64 "\","
			"\"uptime_s\":%.3f,\"pid\":%d,\"draining\":%s,\"time\":%.3f,\"memory\":{\"rss_bytes\":%llu},"
			"\"links\":[",
			CTL_STATUS_SCHEMA, LDS_VERSION, d->cfg->cluster, d->instance, up, (int)getpid(),
			d->draining ? "true" : "false", clock_wall_s(), rss_bytes());
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

/* The status document turned into OpenMetrics text: one source for both. */
static int ctl_metrics(struct daemon *d, FILE *out)
{
	char *doc = NULL, err[128];
	size_t len = 0;
	FILE *js = open_memstream(&doc, &len);
	struct jsonr *tree;
	int r;

	if (js == NULL)
		return -ENOMEM;
	ctl_status(d, js, 1);
	if (fclose(js) != 0) {
		free(doc);
		return -ENOMEM;
	}
	tree = jsonr_parse(doc, err, sizeof(err));
	free(doc);
	if (tree == NULL) {
		log_warnx("metrics: cannot read back the status document: %s", err);
		return -EINVAL;
	}
	r = metrics_write(tree, out);
	jsonr_free(tree);
	return r;
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
	enum ctl_kind kind;
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
	c->nconns--;
}

/* One HTTP/1.0 exchange: GET /metrics, anything else refused. */
static void ctl_http(struct daemon *d, FILE *out, const char *line)
{
	char *body = NULL;
	size_t len = 0;
	FILE *b;
	const char *status = "200 OK", *type = METRICS_CONTENT_TYPE;

	b = open_memstream(&body, &len);
	if (b == NULL)
		return;
	if (strncmp(line, "GET ", 4) != 0 && strncmp(line, "HEAD ", 5) != 0) {
		status = "405 Method Not Allowed";
		type = "text/plain";
		fputs("only GET /metrics is served here\n", b);
	} else if (strncmp(strchr(line, ' ') + 1, "/metrics ", 9) != 0 && strcmp(strchr(line, ' ') + 1, "/metrics") != 0) {
		status = "404 Not Found";
		type = "text/plain";
		fputs("ldsd serves its metrics at /metrics\n", b);
	} else if (ctl_metrics(d, b) < 0) {
		status = "500 Internal Server Error";
		type = "text/plain";
	}
	fclose(b);
	fprintf(out, "HTTP/1.0 %s\r\nContent-Type: %s\r\nContent-Length: %zu\r\nConnection: close\r\n%s\r\n", status,
		type, len, strncmp(status, "405", 3) == 0 ? "Allow: GET, HEAD\r\n" : "");
	if (strncmp(line, "HEAD ", 5) != 0 && body != NULL)
		fwrite(body, 1, len, out);
	free(body);
}

static void ctl_answer(struct ctl_conn *cc)
{
	struct daemon *d = cc->ctl->d;
	FILE *out = open_memstream(&cc->reply, &cc->reply_len);

	if (out == NULL)
		return;
	cc->req[cc->req_len] = '\0';
	cc->req[strcspn(cc->req, "\r\n")] = '\0';
	if (cc->kind == CTL_HTTP)
		ctl_http(d, out, cc->req);
	else if (strcmp(cc->req, "status") == 0)
		ctl_status(d, out, 0);
	else if (strcmp(cc->req, "status json") == 0)
		ctl_status(d, out, 1);
	else if (strcmp(cc->req, "metrics") == 0) {
		if (ctl_metrics(d, out) < 0)
			fputs("error: the metrics could not be made; see ldsd's log\n", out);
	} else if (cc->kind == CTL_STATUS)
		fprintf(out, "error: \"%s\" is refused on the status socket, which only reads (status, status json, "
			"metrics); use the control socket %s\n", cc->req, d->cfg->control_socket);
	else if (strncmp(cc->req, "fault ", 6) == 0)
		ctl_fault(d, out, cc->req + 6);
	else if (strncmp(cc->req, "streams ", 8) == 0)
		ctl_streams(d, out, cc->req + 8);
	else
		fprintf(out, "error: unknown request \"%s\" (try: status, status json, metrics, streams PEER N|auto, "
			"fault break|stall PEER)\n", cc->req);
	fclose(out);
}

/* A control request ends at a newline, an HTTP request at the empty line
 * after its headers (all of them read, so that closing does not reset
 * the connection before the reply arrives). */
static int ctl_request_done(const struct ctl_conn *cc)
{
	if (cc->kind != CTL_HTTP)
		return memchr(cc->req, '\n', cc->req_len) != NULL;
	return memmem(cc->req, cc->req_len, "\r\n\r\n", 4) != NULL || memmem(cc->req, cc->req_len, "\n\n", 2) != NULL;
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
		if (n > 0 && !ctl_request_done(cc) && cc->req_len < CTL_REQ_MAX)
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
	struct ctl_sock *cs = arg;
	struct ctl *c = cs->ctl;

	for (int i = 0; i < 16; i++) {
		int cfd = accept4(fd, NULL, NULL, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct ctl_conn *cc;

		if (cfd < 0) {
			fdreserve_drop(fd, errno);
			return;
		}
		if (c->nconns >= CTL_CONNS_MAX) {
			close(cfd);
			continue;
		}
		cc = calloc(1, sizeof(*cc));
		if (cc == NULL || evloop_watch(c->d->ev, cfd, EV_READ, ctl_conn_event, cc) < 0) {
			free(cc);
			close(cfd);
			continue;
		}
		cc->ctl = c;
		cc->kind = cs->kind;
		cc->fd = cfd;
		cc->deadline_ns = clock_now_ns() + CTL_CONN_TIMEOUT_NS;
		cc->next = c->conns;
		c->conns = cc;
		c->nconns++;
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
	const struct config *cfg = d->cfg;
	struct ctl *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->d = d;
	c->tick = -1;
	for (int k = 0; k < CTL_NKINDS; k++)
		c->socks[k] = (struct ctl_sock){ .ctl = c, .kind = (enum ctl_kind)k, .fd = -1 };
	c->socks[CTL_CONTROL].fd = listen_unix(cfg->control_socket, 0600, (uid_t)-1, (gid_t)-1, "control_socket");
	c->socks[CTL_STATUS].fd = listen_unix(cfg->status_socket, 0660, (uid_t)-1, cfg->status_gid, "status_socket");
	if (cfg->metrics_listen[0])
		c->socks[CTL_HTTP].fd = listen_tcp(cfg->metrics_listen, "metrics_listen");
	if (c->socks[CTL_CONTROL].fd < 0 || c->socks[CTL_STATUS].fd < 0 ||
	    (cfg->metrics_listen[0] && c->socks[CTL_HTTP].fd < 0))
		goto fail;
	for (int k = 0; k < CTL_NKINDS; k++)
		if (c->socks[k].fd >= 0 && evloop_watch(d->ev, c->socks[k].fd, EV_READ, ctl_accept, &c->socks[k]) < 0)
			goto fail;
	if ((c->tick = evloop_tick_add(d->ev, 1000, ctl_tick, c)) < 0)
		goto fail;
	return c;
fail:
	ctl_free(c);
	return NULL;
}

void ctl_free(struct ctl *c)
{
	if (c == NULL)
		return;
	while (c->conns)
		ctl_conn_close(c->conns);
	if (c->tick >= 0)
		evloop_tick_del(c->d->ev, c->tick);
	for (int k = 0; k < CTL_NKINDS; k++) {
		if (c->socks[k].fd < 0)
			continue;
		evloop_unwatch(c->d->ev, c->socks[k].fd);
		close(c->socks[k].fd);
		if (k == CTL_CONTROL)
			unlink(c->d->cfg->control_socket);
		else if (k == CTL_STATUS)
			unlink(c->d->cfg->status_socket);
	}
	free(c);
}
