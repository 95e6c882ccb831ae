/* gwstart.c - clusters started through their gateways; see gwstart.h. */
#include <errno.h>
#include <inttypes.h>
#include <pwd.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "libclient/lds.h"
#include "tools/mwlaunch/gwstart.h"

#define GW_OPEN_TIMEOUT_MS 10000
#define GW_SEND_TIMEOUT_MS 10000

struct gw {
	struct lds *h;
	bool dead;                 /* the local gateway went away */
};

struct gw *gw_open(const char *socket, char *err, size_t len)
{
	struct gw *g = calloc(1, sizeof(*g));
	int r = 0;

	if (g == NULL || (g->h = lds_open(socket, NULL, GW_OPEN_TIMEOUT_MS, &r)) == NULL) {
		snprintf(err, len, "cannot reach the main cluster's gateway at %s to start clusters through their "
			 "gateways: %s", socket, g ? lds_strerror(r) : "out of memory");
		free(g);
		return NULL;
	}
	return g;
}

void gw_close(struct gw *g)
{
	if (g == NULL)
		return;
	lds_close(g->h);
	free(g);
}

int gw_fd(const struct gw *g)
{
	return lds_fd(g->h);
}

/* The child ends without an exit status of its own: why says it. */
static void gw_lost(struct child *c, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void gw_lost(struct child *c, const char *fmt, ...)
{
	va_list ap;

	if (c->exited)
		return;
	va_start(ap, fmt);
	vsnprintf(c->why, sizeof(c->why), fmt, ap);
	va_end(ap);
	fprintf(stderr, "mwlaunch: cluster %s: %s\n", c->name, c->why);
	c->exited = true;
	c->status = W_EXITCODE(1, 0);
	c->t_end = run_now();
}

/* Encodes m and hands it to the local gateway, waiting at most
 * GW_SEND_TIMEOUT_MS for room.  0 or a negative errno. */
static int gw_send(struct gw *g, const char *cluster, const struct exec_msg *m, uint64_t *id)
{
	char dst[LDS_NAME_MAX];
	size_t n = exec_encode(m, NULL, 0);
	uint8_t *buf = n ? malloc(n) : NULL;
	int r;

	if (n == 0)
		return -EINVAL;
	if (buf == NULL)
		return -ENOMEM;
	exec_encode(m, buf, n);
	snprintf(dst, sizeof(dst), "%s/%s", cluster, EXEC_ENDPOINT);
	r = lds_send_nb(g->h, dst, buf, n, id);
	if (r == -EAGAIN)
		r = 0;   /* the handle keeps it; lds_flush finishes it */
	if (r == 0)
		r = lds_flush(g->h, GW_SEND_TIMEOUT_MS);
	free(buf);
	return r;
}

int gw_start(struct gw *g, struct child *c, const struct exec_start *req, double answer)
{
	struct exec_msg m = { .type = EXEC_START, .job = c->job, .start = *req };
	const struct passwd *pw = getpwuid(getuid());
	size_t n;
	int r;

	/* Who asks: the local gateway checks it against the socket's
	 * credentials, the remote one grants by it (exec.rules). */
	m.start.uid = (uint32_t)getuid();
	m.start.user = pw ? pw->pw_name : "";
	n = exec_encode(&m, NULL, 0);

	c->gw = g;
	c->t_start = run_now();
	c->answer_by = c->t_start + answer;
	if (n == 0) {
		fprintf(stderr, "mwlaunch: cluster %s: the start request is too large for a gateway (at most %u "
			"ranks, %u arguments each, %u bytes in all)\n", c->name, EXEC_MAX_RANKS, EXEC_MAX_ARGS,
			EXEC_MAX_MSG);
		return -1;
	}
	if (n > lds_max_msg(g->h)) {
		fprintf(stderr, "mwlaunch: cluster %s: the start request of %zu bytes exceeds what the gateway link "
			"carries (%zu)\n", c->name, n, lds_max_msg(g->h));
		return -1;
	}
	r = gw_send(g, c->name, &m, &c->msg_id);
	if (r < 0) {
		fprintf(stderr, "mwlaunch: cluster %s: cannot send the start request to its gateway: %s\n", c->name,
			lds_strerror(r));
		return -1;
	}
	fprintf(stderr, "mwlaunch: cluster %s: asked its gateway (%s/%s) to start %u ranks of %s\n", c->name,
		c->name, EXEC_ENDPOINT, req->nranks, req->ranks[0].program);
	return 0;
}

void gw_stop(struct gw *g, struct child *c, const char *why)
{
	struct exec_msg m = { .type = EXEC_STOP, .job = c->job };
	int r;

	if (c->exited)
		return;
	if (c->give_up_at == 0)
		c->give_up_at = run_now() + GW_GIVE_UP;
	snprintf(m.text, sizeof(m.text), "%s", why);
	r = gw_send(g, c->name, &m, NULL);
	if (r < 0)
		gw_lost(c, "cannot ask its gateway to stop it: %s", lds_strerror(r));
}

void gw_end(struct gw *g, const struct child *c, const char *tag)
{
	struct exec_msg m = { .type = EXEC_END, .job = c->job };
	int r;

	snprintf(m.text, sizeof(m.text), "%s", tag);
	r = gw_send(g, c->name, &m, NULL);
	if (r < 0)
		fprintf(stderr, "mwlaunch: cluster %s: cannot tell its gateway that job %s ended (%s): what waits for "
			"it there is dropped after its undelivered_ttl instead\n", c->name, tag, lds_strerror(r));
}

static struct child *gw_child_from(struct child *c, unsigned n, const char *src)
{
	const char *slash = strchr(src, '/');

	if (slash == NULL || strcmp(slash + 1, EXEC_ENDPOINT) != 0)
		return NULL;
	for (unsigned i = 0; i < n; i++)
		if (c[i].gw != NULL && strlen(c[i].name) == (size_t)(slash - src) &&
		    strncmp(c[i].name, src, (size_t)(slash - src)) == 0)
			return &c[i];
	return NULL;
}

static void gw_collected(struct child *c, const uint8_t *data, size_t len)
{
	if (c->report_f == NULL && (c->report_f = fopen(c->report, "w")) == NULL) {
		fprintf(stderr, "mwlaunch: cluster %s: cannot write its report to %s: %s\n", c->name, c->report,
			strerror(errno));
		c->report = NULL;
		return;
	}
	fwrite(data, 1, len, c->report_f);
}

static void gw_exit(struct child *c, const struct exec_msg *m)
{
	run_feed_end(c, 0);
	run_feed_end(c, 1);
	if (c->report_f != NULL) {
		fclose(c->report_f);
		c->report_f = NULL;
	}
	c->status = m->status >= 0 ? W_EXITCODE(m->status & 0xff, 0) : W_EXITCODE(0, -m->status & 0x7f);
	c->exited = true;
	c->t_end = run_now();
	fprintf(stderr, "mwlaunch: cluster %s: ended on its gateway: %s\n", c->name, m->text);
}

static void gw_message(struct child *c, const struct exec_msg *m)
{
	if (m->job != c->job || c->exited)
		return;
	switch (m->type) {
	case EXEC_STARTED:
		c->running = true;
		fprintf(stderr, "mwlaunch: cluster %s: started by its gateway: %s\n", c->name, m->text);
		break;
	case EXEC_OUTPUT:
		if (m->stream == EXEC_COLLECTED) {
			if (c->report != NULL)
				gw_collected(c, m->data, m->len);
		} else {
			run_feed(c, m->stream == EXEC_STDOUT ? 0 : 1, m->data, m->len);
		}
		break;
	case EXEC_EXIT:
		gw_exit(c, m);
		break;
	case EXEC_REFUSED:
		gw_lost(c, "its gateway refused to start it: %s", m->text);
		snprintf(c->why, sizeof(c->why), "refused by its gateway: %s", m->text);
		break;
	default:
		break;
	}
}

/* ERROR and LOST events name the START or STOP they are about. */
static void gw_events(struct gw *g, struct child *c, unsigned n)
{
	struct lds_event ev;

	while (lds_next_event(g->h, &ev) == 1) {
		for (unsigned i = 0; i < n; i++) {
			if (c[i].gw == NULL || c[i].exited)
				continue;
			if (ev.type == LDS_EV_ERROR && ev.first == c[i].msg_id)
				gw_lost(&c[i], "the main cluster's gateway cannot forward the start request: %s", ev.text);
			else if (ev.type == LDS_EV_LOST && strcmp(ev.peer, c[i].name) == 0)
				gw_lost(&c[i], "its gateway restarted and lost its state: the cluster's job is gone");
		}
	}
}

void gw_process(struct gw *g, struct child *c, unsigned n)
{
	struct lds_msg msg;
	int r;

	if (g->dead)
		return;
	while ((r = lds_recv(g->h, &msg, 0)) == 0) {
		struct child *to = gw_child_from(c, n, msg.src);
		struct exec_msg m;

		if (to == NULL)
			continue;
		if ((r = exec_decode(msg.data, msg.len, &m)) < 0) {
			gw_lost(to, "its gateway sent a malformed message (%s)", strerror(-r));
			continue;
		}
		gw_message(to, &m);
		exec_msg_free(&m);
	}
	gw_events(g, c, n);
	if (r != -EAGAIN) {
		g->dead = true;
		for (unsigned i = 0; i < n; i++)
			if (c[i].gw != NULL)
				gw_lost(&c[i], "lost the main cluster's gateway: %s", lds_strerror(r));
	}
}

void gw_tick(struct gw *g, struct child *c, unsigned n, double now)
{
	for (unsigned i = 0; i < n; i++) {
		if (c[i].gw != g || c[i].exited)
			continue;
		if (!c[i].running && now > c[i].answer_by)
			gw_lost(&c[i], "its gateway did not answer the start request within %.0f s (is the link up? "
				"ldsctl status on both gateways says)", c[i].answer_by - c[i].t_start);
		else if (c[i].give_up_at > 0 && now > c[i].give_up_at)
			gw_lost(&c[i], "no exit status from its gateway within %.0f s of the stop; giving up on it",
				GW_GIVE_UP);
	}
}
