/*
 * mw_submaster.c - the sub-master of a remote cluster (thesis 000,
 * section 2.3): a master over its cluster's workers whose problem arrives
 * from the communication manager (port peer 0) as coarse messages, each
 * holding one or more of the master's tasks (the runtime's grain).
 *
 * A task arrives as its bytes or as a data cache recipe, which the
 * sub-master's cache (mw_cache.h) turns back into its bytes.  With the
 * application's coarse hooks each task is split into finer tasks for the
 * workers, and their results are joined into the task's result through
 * the application; without them a task goes to a worker as it is.  Fine
 * tasks go to the workers on demand (each worker's queue filled to the
 * depth of its HELLO); a coarse message's results go back to the CM as
 * one message as soon as the last of its tasks is done.
 *
 * Fine tasks travel to the workers under a local id, task slot << 32 |
 * fine index, so that a result finds its task without a search.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/mw_cache.h"
#include "launcher/mw_ring.h"
#include "launcher/mw_role.h"
#include "launcher/mw_run.h"

/* One coarse message from the main cluster. */
struct coarse {
	bool used;
	uint64_t id;               /* the main cluster's coarse id */
	uint32_t left;             /* its tasks not yet done */
	uint32_t n;
	struct mw_buf res;         /* results of its tasks done so far */
};

/* One of the master's tasks. */
struct unit {
	bool used;
	uint32_t coarse;           /* slot of its coarse message */
	uint64_t id;               /* the master's task id */
	struct mw_buf task;        /* its bytes */
	void *state;               /* coarse_split's, with the application's hooks */
	uint32_t nfine, left;
	uint64_t ns;               /* task_run time of its fine tasks */
};

struct pend {
	uint32_t unit, fine;
};

struct sub {
	struct mw_run *r;
	const struct mw_app *app;
	bool hooks;                /* the application splits and joins */
	struct mw_port *port;      /* 0: the CM; 1..nw: workers */
	unsigned nw;
	struct coarse *c;
	unsigned ncoarse;
	struct unit *u;
	unsigned nunits;
	struct pend *q;            /* fine tasks not yet sent, a ring */
	size_t qcap, qhead, qn;
	unsigned *held, *depth;    /* per worker peer (index 0 unused) */
	struct mw_cache_rx cache;
	struct mw_buf fine;        /* fine_pack output */
	uint64_t received, done;
	unsigned nbye;
	bool stopping;
};

static int say(const char *what, unsigned long long n)
{
	fprintf(stderr, "mw: submaster: %s %llu\n", what, n);
	return -1;
}

static int queue_push(struct sub *s, uint32_t unit, uint32_t fine)
{
	void *ring = s->q;

	if (mw_ring_make_room(&ring, &s->qcap, &s->qhead, s->qn, sizeof(*s->q)) < 0)
		return -ENOMEM;
	s->q = ring;
	s->q[(s->qhead + s->qn) % s->qcap] = (struct pend){ unit, fine };
	s->qn++;
	return 0;
}

/* A free slot of a table of n entries of size sz whose first member is
 * the bool "used", growing it when full: the slot, or -ENOMEM. */
static long free_slot(void **table, unsigned *n, size_t sz)
{
	unsigned char *t = *table;
	unsigned i, cap;

	for (i = 0; i < *n; i++)
		if (!*(bool *)(t + (size_t)i * sz))
			return i;
	cap = *n ? *n * 2 : 8;
	t = realloc(t, (size_t)cap * sz);
	if (t == NULL)
		return -ENOMEM;
	memset(t + (size_t)*n * sz, 0, (size_t)(cap - *n) * sz);
	*table = t;
	*n = cap;
	return i;
}

/* One task of a coarse message: its bytes (rebuilt from a recipe), split
 * by the application or kept whole, its fine tasks queued. */
static int add_unit(struct sub *s, uint32_t cslot, const struct mw_item *it)
{
	void *t = s->u;
	long slot = free_slot(&t, &s->nunits, sizeof(*s->u));
	char err[256];
	struct unit *u;
	uint64_t nfine = 1;
	int rc;

	if (slot < 0)
		return say("out of memory for task", it->id);
	s->u = t;
	u = &s->u[slot];
	u->task.len = 0;
	if (it->aux & MW_ITEM_RECIPE) {
		rc = mw_cache_decode(&s->cache, it->data, it->len, &u->task, err, sizeof(err));
		if (rc < 0) {
			fprintf(stderr, "mw: submaster: task %llu from the main cluster: %s\n",
				(unsigned long long)it->id, rc == -ENOMEM ? "out of memory" : err);
			return -1;
		}
	} else if (mw_buf_put(&u->task, it->data, it->len) < 0) {
		return say("out of memory for task", it->id);
	}
	u->state = NULL;
	if (s->hooks && s->app->coarse_split(s->app->ctx, u->task.data, u->task.len, &u->state, &nfine) < 0) {
		fprintf(stderr, "mw: %s: coarse_split() failed for task %llu\n", s->app->name, (unsigned long long)it->id);
		return -1;
	}
	if (nfine == 0 || nfine > UINT32_MAX)
		return say("coarse_split() gave no or too many fine tasks for task", it->id);
	u->used = true;
	u->coarse = cslot;
	u->id = it->id;
	u->nfine = u->left = (uint32_t)nfine;
	u->ns = 0;
	for (uint32_t i = 0; i < u->nfine; i++)
		if (queue_push(s, (uint32_t)slot, i) < 0)
			return say("out of memory for task", it->id);
	s->received += nfine;
	return 0;
}

/* A coarse message from the CM: its tasks, each a unit. */
static int split(struct sub *s, const struct mw_msg *m)
{
	void *t = s->c;
	long slot = free_slot(&t, &s->ncoarse, sizeof(*s->c));
	struct mw_item it;
	struct coarse *c;
	size_t off = 0;
	int rc;

	if (slot < 0)
		return say("out of memory for coarse task", m->h.id);
	s->c = t;
	if (m->h.aux == 0 || m->h.aux > UINT32_MAX)
		return say("empty coarse task", m->h.id);
	c = &s->c[slot];
	c->used = true;
	c->id = m->h.id;
	c->n = c->left = (uint32_t)m->h.aux;
	c->res.len = 0;
	for (uint32_t i = 0; i < c->n; i++) {
		rc = mw_item_next(m->data, m->h.len, &off, &it);
		if (rc <= 0)
			return say("malformed coarse task", m->h.id);
		if (add_unit(s, (uint32_t)slot, &it) < 0)
			return -1;
	}
	if (off != m->h.len)
		return say("malformed coarse task", m->h.id);
	if (s->r->stats.t_first == 0)
		s->r->stats.t_first = mw_now();
	return 0;
}

/* Releases a unit; its state through the application (out NULL: the run
 * stopped before it was done). */
static int unit_done(struct sub *s, struct unit *u, struct mw_buf *out)
{
	int rc = 0;

	if (u->state != NULL && s->app->coarse_result(s->app->ctx, u->state, out) < 0) {
		fprintf(stderr, "mw: %s: coarse_result() failed for task %llu\n", s->app->name, (unsigned long long)u->id);
		rc = -1;
	}
	u->state = NULL;
	u->used = false;
	return rc;
}

/* The last fine result of unit u arrived: its result into its coarse
 * message's, which goes back when complete. */
static int unit_result(struct sub *s, struct unit *u, const void *res, uint32_t len)
{
	struct coarse *c = &s->c[u->coarse];

	if (mw_item_put(&c->res, u->id, u->ns, res, len) < 0)
		return say("out of memory joining coarse task", c->id);
	if (--c->left > 0)
		return 0;
	c->used = false;
	if (c->res.len > UINT32_MAX)
		return say("coarse result larger than 4 GiB, coarse task", c->id);
	struct mw_hdr h = { .type = MW_MSG_RESULT, .id = c->id, .aux = c->n, .len = (uint32_t)c->res.len };
	return mw_port_send(s->port, 0, &h, c->res.data) < 0 ? say("cannot send coarse result", c->id) : 0;
}

/* A fine result from worker w. */
static int join(struct sub *s, unsigned w, const struct mw_msg *m)
{
	uint64_t slot = m->h.id >> 32, idx = m->h.id & 0xffffffffu;
	struct mw_stats_worker *sw = &s->r->stats.w[w - 1];
	struct unit *u;

	if (slot >= s->nunits || !s->u[slot].used || idx >= s->u[slot].nfine || s->held[w] == 0)
		return say("a worker returned a task it was not given, local id", m->h.id);
	u = &s->u[slot];
	s->held[w]--;
	sw->done++;
	sw->work += (double)m->h.aux * 1e-9;
	sw->bytes_in += m->h.len;
	s->done++;
	s->r->stats.t_last = sw->last = mw_now();
	u->ns += m->h.aux;
	if (!s->hooks)
		return unit_result(s, u, m->data, m->h.len) < 0 || unit_done(s, u, NULL) < 0 ? -1 : 0;
	if (s->app->fine_join(s->app->ctx, u->state, idx, m->data, m->h.len) < 0) {
		fprintf(stderr, "mw: %s: fine_join() failed for fine task %llu of task %llu\n", s->app->name,
			(unsigned long long)idx, (unsigned long long)u->id);
		return -1;
	}
	if (--u->left > 0)
		return 0;
	s->fine.len = 0;
	if (unit_done(s, u, &s->fine) < 0)
		return -1;
	if (s->fine.len > UINT32_MAX)
		return say("result larger than 4 GiB, task", u->id);
	return unit_result(s, u, s->fine.data, (uint32_t)s->fine.len);
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

/* Fine task p, serialized: the task itself, or the application's fine_pack. */
static int fine_bytes(struct sub *s, const struct pend *p, const unsigned char **data, size_t *len)
{
	struct unit *u = &s->u[p->unit];

	if (!s->hooks) {
		*data = u->task.data;
		*len = u->task.len;
		return 0;
	}
	s->fine.len = 0;
	if (s->app->fine_pack(s->app->ctx, u->state, p->fine, &s->fine) < 0) {
		fprintf(stderr, "mw: %s: fine_pack() failed for fine task %u of task %llu\n", s->app->name, p->fine,
			(unsigned long long)u->id);
		return -1;
	}
	*data = s->fine.data;
	*len = s->fine.len;
	return 0;
}

/* Fills every worker's queue to its depth.  How many were sent, or -1. */
static int refill(struct sub *s)
{
	int sent = 0;

	for (unsigned w = 1; w <= s->nw && s->qn > 0; w++)
		while (s->qn > 0 && s->held[w] < s->depth[w]) {
			struct pend p = s->q[s->qhead];
			const unsigned char *data;
			size_t len;

			if (fine_bytes(s, &p, &data, &len) < 0)
				return -1;
			if (len > UINT32_MAX)
				return say("fine task larger than 4 GiB, task", s->u[p.unit].id);
			struct mw_hdr h = { .type = MW_MSG_TASK, .id = (uint64_t)p.unit << 32 | p.fine, .len = (uint32_t)len };
			if (mw_port_send(s->port, w, &h, data) < 0)
				return say("cannot send a task to worker", w);
			s->r->stats.w[w - 1].bytes_out += len;
			s->qhead = (s->qhead + 1) % s->qcap;
			s->qn--;
			s->held[w]++;
			sent++;
		}
	return sent;
}

/* Idle, the sub-master naps (MasterNap, as the master does) while no
 * worker can run dry before it looks again: each has a task queued
 * behind the one it computes, or there is nothing to give it anyway.
 * Across a WAN a few milliseconds more for a coarse message do not
 * matter; a core spinning on a machine shared with the workers does. */
static bool may_nap(const struct sub *s)
{
	if (s->r->cfg.master_nap <= 0)
		return false;
	if (s->qn == 0)
		return true;
	for (unsigned w = 1; w <= s->nw; w++)
		if (s->held[w] < 2)
			return false;
	return true;
}

static int loop(struct sub *s)
{
	struct mw_run *r = s->r;
	struct mw_msg m;
	int rc = 0;

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
		if ((may_nap(s) ? mw_port_nap(s->port, r->cfg.master_nap) : mw_port_wait(s->port, 0.5)) < 0)
			return say("waiting failed", 0);
		r->stats.wait += mw_now() - t;
	}
	return 0;
}

static void sub_free(struct sub *s)
{
	for (unsigned i = 0; i < s->nunits; i++) {
		if (s->u[i].used)
			unit_done(s, &s->u[i], NULL);
		free(s->u[i].task.data);
	}
	for (unsigned i = 0; i < s->ncoarse; i++)
		free(s->c[i].res.data);
	free(s->u);
	free(s->c);
	free(s->q);
	free(s->held);
	free(s->depth);
	free(s->fine.data);
	mw_cache_rx_free(&s->cache);
}

int mw_submaster_run(struct mw_run *r, struct mw_port *port)
{
	const struct mw_app *a = r->app;
	struct sub s = { .r = r, .app = a, .port = port, .nw = port->npeers - 1 };
	struct mw_hdr h = { .type = MW_MSG_BYE };
	struct mw_cm_env env;
	char err[512];
	int status = 1;

	s.hooks = MW_HAS(a, coarse_split) && MW_HAS(a, coarse_result) && MW_HAS(a, fine_pack) && MW_HAS(a, fine_join);
	if (!s.hooks && (MW_HAS(a, coarse_split) || MW_HAS(a, coarse_result) || MW_HAS(a, fine_pack) ||
			 MW_HAS(a, fine_join))) {
		fprintf(stderr, "mw: %s: coarse_split, coarse_result, fine_pack and fine_join go together: the "
			"application has some of them only\n", a->name);
		return 1;
	}
	if (mw_cm_env_read(&env, mw_getenv, err, sizeof(err)) < 0) {
		fprintf(stderr, "mw: submaster: %s\n", err);
		return 1;
	}
	mw_cache_rx_init(&s.cache, (size_t)env.cache);
	s.held = calloc(port->npeers, sizeof(*s.held));
	s.depth = calloc(port->npeers, sizeof(*s.depth));
	if (s.held == NULL || s.depth == NULL || mw_stats_init(&r->stats, a->name, 0, s.nw, r->t0) < 0) {
		fprintf(stderr, "mw: submaster: out of memory\n");
		goto out;
	}
	r->stats.cluster = r->cluster;
	r->stats.behaviour = r->cfg.worker_behaviour;
	r->stats.prefetch = r->cfg.prefetch;
	r->stats.ops_per_task = a->ops_per_task;
	/* Coarse tasks keep arriving: the total is what came so far. */
	r->stats.open_total = true;
	if (mw_stats_predicted(&r->stats, getenv("MWL_PREDICT")) < 0) {
		fprintf(stderr, "mw: submaster: MWL_PREDICT=%s is not BEST,WORST seconds\n", getenv("MWL_PREDICT"));
		goto out;
	}
	r->next_tick = mw_now() + r->cfg.stats_interval;
	if (loop(&s) < 0)
		goto out;
	h.aux = (uint64_t)((mw_now() - r->t0) * 1e9);
	if (mw_port_send(port, 0, &h, NULL) < 0 || mw_port_flush(port) < 0)
		goto out;
	r->stats.t_end = mw_now();
	r->stats.cpu = mw_cpu();
	r->stats.ntasks = s.received;
	if (r->cfg.stats_interval > 0 && !r->quiet)
		mw_stats_interval(&r->stats, r->stats.t_end, s.done, stdout, isatty(STDOUT_FILENO));
	if (!r->quiet)
		mw_stats_report(&r->stats, stdout);
	status = r->json_path != NULL && mw_gather_json(r) < 0;
out:
	sub_free(&s);
	mw_stats_free(&r->stats);
	return status;
}
