/*
 * mw_submaster.c - the sub-master of a remote cluster (thesis 000,
 * section 2.3): a master over its cluster's workers whose problem arrives
 * from the communication manager (port peer 0) as coarse tasks.  Each
 * coarse task is split into its fine tasks, which go to the workers on
 * demand (each worker's queue filled to the depth of its HELLO); the fine
 * results are joined into one coarse result, which goes back to the CM
 * when the last of them arrived.  A grain of 1 is the same path with one
 * item per coarse task.
 *
 * Fine tasks travel to the workers under a local id, coarse slot << 32 |
 * item index, so that a result finds its coarse task without a search.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/mw_run.h"

struct coarse {
	bool used;
	uint64_t id;               /* the main cluster's coarse id */
	struct mw_buf task;        /* its payload, which items point into */
	struct mw_item *items;
	uint32_t n, left;
	struct mw_buf res;         /* fine results joined so far */
	uint64_t ns;               /* task_run time of those */
};

struct pend {
	uint32_t slot, idx;
};

struct sub {
	struct mw_run *r;
	struct mw_port *port;      /* 0: the CM; 1..nw: workers */
	unsigned nw;
	struct coarse *c;
	unsigned ncoarse;
	struct pend *q;            /* fine tasks not yet sent, a ring */
	size_t qcap, qhead, qn;
	unsigned *held, *depth;    /* per worker peer (index 0 unused) */
	uint64_t received, done;
	unsigned nbye;
	bool stopping;
};

static int say(const char *what, unsigned long long n)
{
	fprintf(stderr, "mw: submaster: %s %llu\n", what, n);
	return -1;
}

static int queue_push(struct sub *s, uint32_t slot, uint32_t idx)
{
	if (s->qn == s->qcap) {
		size_t cap = s->qcap ? s->qcap * 2 : 256;
		struct pend *q = malloc(cap * sizeof(*q));

		if (q == NULL)
			return -ENOMEM;
		for (size_t i = 0; i < s->qn; i++)
			q[i] = s->q[(s->qhead + i) % s->qcap];
		free(s->q);
		s->q = q;
		s->qcap = cap;
		s->qhead = 0;
	}
	s->q[(s->qhead + s->qn) % s->qcap] = (struct pend){ slot, idx };
	s->qn++;
	return 0;
}

static int free_slot(struct sub *s)
{
	unsigned i, n;
	struct coarse *c;

	for (i = 0; i < s->ncoarse; i++)
		if (!s->c[i].used)
			return (int)i;
	n = s->ncoarse ? s->ncoarse * 2 : 8;
	c = realloc(s->c, n * sizeof(*c));
	if (c == NULL)
		return -ENOMEM;
	memset(c + s->ncoarse, 0, (n - s->ncoarse) * sizeof(*c));
	s->c = c;
	s->ncoarse = n;
	return (int)i;
}

/* A coarse task from the CM: split into its items, queued for workers. */
static int split(struct sub *s, const struct mw_msg *m)
{
	struct mw_item it;
	struct coarse *c;
	size_t off = 0;
	int slot = free_slot(s), rc;

	if (slot < 0 || m->h.aux == 0 || m->h.aux > UINT32_MAX)
		return slot < 0 ? say("out of memory for coarse task", m->h.id) : say("empty coarse task", m->h.id);
	c = &s->c[slot];
	c->task.len = 0;
	c->res.len = 0;
	c->ns = 0;
	c->id = m->h.id;
	c->n = c->left = 0;
	if (mw_buf_put(&c->task, m->data, m->h.len) < 0 ||
	    (c->items = realloc(c->items, m->h.aux * sizeof(*c->items))) == NULL)
		return say("out of memory for coarse task", m->h.id);
	while ((rc = mw_item_next(c->task.data, c->task.len, &off, &it)) > 0 && c->n < m->h.aux)
		c->items[c->n++] = it;
	if (rc < 0 || c->n != m->h.aux || off != c->task.len)
		return say("malformed coarse task", m->h.id);
	c->used = true;
	c->left = c->n;
	for (uint32_t i = 0; i < c->n; i++)
		if (queue_push(s, (uint32_t)slot, i) < 0)
			return say("out of memory for coarse task", m->h.id);
	s->received += c->n;
	if (s->r->stats.t_first == 0)
		s->r->stats.t_first = mw_now();
	return 0;
}

/* A fine result from worker w: joined into its coarse result, which
 * goes back when complete. */
static int join(struct sub *s, unsigned w, const struct mw_msg *m)
{
	uint64_t slot = m->h.id >> 32, idx = m->h.id & 0xffffffffu;
	struct mw_stats_worker *sw = &s->r->stats.w[w - 1];
	struct coarse *c;

	if (slot >= s->ncoarse || !s->c[slot].used || idx >= s->c[slot].n || s->held[w] == 0)
		return say("a worker returned a task it was not given, local id", m->h.id);
	c = &s->c[slot];
	s->held[w]--;
	sw->done++;
	sw->work += (double)m->h.aux * 1e-9;
	sw->bytes_in += m->h.len;
	s->done++;
	s->r->stats.t_last = mw_now();
	if (mw_item_put(&c->res, c->items[idx].id, m->h.aux, m->data, m->h.len) < 0)
		return say("out of memory joining coarse task", c->id);
	c->ns += m->h.aux;
	if (--c->left > 0)
		return 0;
	c->used = false;
	if (c->res.len > UINT32_MAX)
		return say("coarse result larger than 4 GiB, coarse task", c->id);
	struct mw_hdr h = { .type = MW_MSG_RESULT, .id = c->id, .aux = c->n, .len = (uint32_t)c->res.len };
	return mw_port_send(s->port, 0, &h, c->res.data) < 0 ? say("cannot send coarse result", c->id) : 0;
}

static int handle(struct sub *s, const struct mw_msg *m)
{
	struct mw_hdr h = { .type = MW_MSG_STOP };

	if (m->peer == 0) {
		if (m->h.type == MW_MSG_TASK)
			return s->stopping ? 0 : split(s, m);
		if (m->h.type != MW_MSG_STOP)
			return say("unexpected message from the communication manager, type", m->h.type);
		s->stopping = true;
		for (unsigned w = 1; w <= s->nw; w++)
			if (mw_port_send(s->port, w, &h, NULL) < 0)
				return say("cannot send STOP to worker", w);
		return 0;
	}
	switch (m->h.type) {
	case MW_MSG_HELLO:
		s->depth[m->peer] = m->h.aux ? (unsigned)m->h.aux : 1;
		snprintf(s->r->stats.w[m->peer - 1].host, sizeof(s->r->stats.w[0].host), "%.*s", (int)m->h.len,
			 (const char *)m->data);
		return 0;
	case MW_MSG_RESULT:
		return s->stopping ? 0 : join(s, m->peer, m);
	case MW_MSG_BYE:
		s->r->stats.w[m->peer - 1].exec = (double)m->h.aux * 1e-9;
		s->r->stats.w[m->peer - 1].cpu = (double)m->h.id * 1e-9;
		s->nbye++;
		return 0;
	case MW_MSG_FAIL:
		/* The master reports the application's failure and ends the job. */
		fprintf(stderr, "mw: submaster: worker %u failed: %.*s\n", m->peer, (int)m->h.len,
			(const char *)m->data);
		mw_port_send(s->port, 0, &m->h, m->data);
		mw_port_flush(s->port);
		return -1;
	default:
		return say("unexpected message from worker", m->peer);
	}
}

/* Fills every worker's queue to its depth.  How many were sent, or -1. */
static int refill(struct sub *s)
{
	int sent = 0;

	for (unsigned w = 1; w <= s->nw && s->qn > 0; w++)
		while (s->qn > 0 && s->held[w] < s->depth[w]) {
			struct pend p = s->q[s->qhead];
			const struct mw_item *it = &s->c[p.slot].items[p.idx];
			struct mw_hdr h = { .type = MW_MSG_TASK, .id = (uint64_t)p.slot << 32 | p.idx, .len = it->len };

			if (mw_port_send(s->port, w, &h, it->data) < 0)
				return say("cannot send a task to worker", w);
			s->r->stats.w[w - 1].bytes_out += it->len;
			s->qhead = (s->qhead + 1) % s->qcap;
			s->qn--;
			s->held[w]++;
			sent++;
		}
	return sent;
}

static int loop(struct sub *s)
{
	struct mw_run *r = s->r;
	struct mw_msg m;
	int rc;

	while (!s->stopping || s->nbye < s->nw) {
		unsigned got = 0;
		double t;

		while (got < r->cfg.step_limit && (rc = mw_port_poll(s->port, &m)) > 0) {
			if (handle(s, &m) < 0)
				return -1;
			got++;
		}
		if (got < r->cfg.step_limit && rc < 0)
			return say("receiving failed, errno", (unsigned long long)-rc);
		if (!s->stopping && (rc = refill(s)) < 0)
			return -1;
		got += (unsigned)(s->stopping ? 0 : rc);
		if (r->cfg.stats_interval > 0 && !r->quiet && (t = mw_now()) >= r->next_tick) {
			r->stats.ntasks = s->received;
			mw_stats_interval(&r->stats, t, s->done, stdout, isatty(STDOUT_FILENO));
			r->next_tick = t + r->cfg.stats_interval;
		}
		if (got > 0)
			continue;
		t = mw_now();
		if (mw_port_wait(s->port, 0.5) < 0)
			return say("waiting failed", 0);
		r->stats.wait += mw_now() - t;
	}
	return 0;
}

int mw_submaster_run(struct mw_run *r, struct mw_port *port)
{
	struct sub s = { .r = r, .port = port, .nw = port->npeers - 1 };
	struct mw_hdr h = { .type = MW_MSG_BYE };
	int status = 1;

	s.held = calloc(port->npeers, sizeof(*s.held));
	s.depth = calloc(port->npeers, sizeof(*s.depth));
	if (s.held == NULL || s.depth == NULL || mw_stats_init(&r->stats, r->app->name, 0, s.nw, r->t0) < 0) {
		fprintf(stderr, "mw: submaster: out of memory\n");
		goto out;
	}
	r->stats.cluster = r->cluster;
	r->stats.behaviour = r->cfg.worker_behaviour;
	r->stats.prefetch = r->cfg.prefetch;
	r->stats.ops_per_task = r->app->ops_per_task;
	r->next_tick = mw_now() + r->cfg.stats_interval;
	if (loop(&s) < 0)
		goto out;
	h.aux = (uint64_t)((mw_now() - r->t0) * 1e9);
	if (mw_port_send(port, 0, &h, NULL) < 0 || mw_port_flush(port) < 0)
		goto out;
	r->stats.t_end = mw_now();
	r->stats.cpu = mw_cpu();
	r->stats.ntasks = s.received;
	if (!r->quiet)
		mw_stats_report(&r->stats, stdout);
	status = r->json_path != NULL && mw_gather_json(r) < 0;
out:
	for (unsigned i = 0; i < s.ncoarse; i++) {
		free(s.c[i].task.data);
		free(s.c[i].items);
		free(s.c[i].res.data);
	}
	free(s.c);
	free(s.q);
	free(s.held);
	free(s.depth);
	mw_stats_free(&r->stats);
	return status;
}
