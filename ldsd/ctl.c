/* ctl.c - the ldsctl control socket; see ctl.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "clientsrv.h"
#include "clock.h"
#include "ctl.h"
#include "link.h"
#include "log.h"

#define CTL_REQ_MAX 256

struct ctl {
	struct daemon *d;
	int fd;
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
		fputs("}\n", out);
		return;
	}
	fprintf(out, "ldsd cluster %s, pid %d, up %.0f s%s\n", d->cfg->cluster, (int)getpid(), up,
		d->draining ? ", draining" : "");
	for (size_t i = 0; i < d->nlinks; i++)
		link_status_text(d->links[i], out);
	clientsrv_status_text(d->cs, out);
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

static void ctl_accept(int fd, unsigned events, void *arg)
{
	struct ctl *c = arg;
	char req[CTL_REQ_MAX + 1];
	char *reply = NULL;
	size_t replylen = 0;
	FILE *out;
	ssize_t n;
	int cfd = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

	if (cfd < 0)
		return;
	/* A client that connects and says nothing must not stall the daemon. */
	setsockopt(cfd, SOL_SOCKET, SO_RCVTIMEO, &(struct timeval){ .tv_sec = 1 }, sizeof(struct timeval));
	setsockopt(cfd, SOL_SOCKET, SO_SNDTIMEO, &(struct timeval){ .tv_sec = 2 }, sizeof(struct timeval));
	n = read(cfd, req, CTL_REQ_MAX);
	out = open_memstream(&reply, &replylen);
	if (n <= 0 || out == NULL) {
		if (out)
			fclose(out);
		free(reply);
		close(cfd);
		return;
	}
	req[n] = '\0';
	req[strcspn(req, "\r\n")] = '\0';
	if (strcmp(req, "status") == 0)
		ctl_status(c->d, out, 0);
	else if (strcmp(req, "status json") == 0)
		ctl_status(c->d, out, 1);
	else if (strncmp(req, "fault ", 6) == 0)
		ctl_fault(c->d, out, req + 6);
	else
		fprintf(out, "error: unknown request \"%s\" (try: status, status json, fault break PEER)\n", req);
	fclose(out);
	for (size_t off = 0; off < replylen;) {
		ssize_t w = write(cfd, reply + off, replylen - off);

		if (w <= 0)
			break;
		off += (size_t)w;
	}
	free(reply);
	close(cfd);
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
	    evloop_watch(d->ev, c->fd, EV_READ, ctl_accept, c) < 0) {
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
	evloop_unwatch(c->d->ev, c->fd);
	close(c->fd);
	unlink(c->d->cfg->control_socket);
	free(c);
}
