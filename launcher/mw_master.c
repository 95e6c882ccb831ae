/* mw_master.c - the master: hands out tasks on demand, receives results
 * while sending, joins them, ends the run with STOP/BYE. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/mw_run.h"

struct master {
	struct mw_run *r;
	struct mw_port *port;
	unsigned nw;
	unsigned rr;               /* worker the next refill starts with */
	unsigned nbye;
	bool stopping;
};

static int protocol_error(const struct mw_msg *m, const char *what)
{
	fprintf(stderr, "mw: master: worker %u sent %s for task %llu: %s\n", m->peer + 1,
		mw_msg_names[m->h.type], (unsigned long long)m->h.id, what);
	return -1;
}

static int handle(struct master *ms, const struct mw_msg *m, double now)
{
	struct mw_run *r = ms->r;
	struct mw_stats_worker *sw = &r->stats.w[m->peer];
	int rc;

	switch (m->h.type) {
	case MW_MSG_RESULT:
		rc = mw_sched_complete(&r->sched, m->peer, m->h.id, now);
		/* A CM whose cluster was away may pass on a result of a task
		 * it had forfeited (sent to it just before the master heard
		 * AWAY): late, dropped.  Anyone else lies. */
		if (rc < 0 && r->sched.w[m->peer].forfeited > 0) {
			sw->late++;
			return 0;
		}
		if (rc < 0)
			return protocol_error(m, "it does not hold that task");
		sw->work += (double)m->h.aux * 1e-9;
		sw->bytes_in += m->h.len;
		if (rc == MW_SCHED_JOIN) {
			r->stats.t_last = sw->last = now;
			return mw_gather_join(r, m->h.id, m->data, m->h.len);
		}
		return 0;
	case MW_MSG_FAIL:
		fprintf(stderr, "mw: master: worker %u (%s) failed on task %llu: %.*s\n", m->peer + 1,
			sw->host, (unsigned long long)m->h.id, (int)m->h.len, (const char *)m->data);
		return -1;
	case MW_MSG_AWAY:
		/* Its tasks go to the others at the next refill, this step. */
		rc = (int)mw_sched_forfeit(&r->sched, m->peer);
		if (!r->quiet)
			printf("mw: master: %s is away past its deadline; its %d outstanding tasks go to other "
			       "workers\n", sw->host, rc);
		return 0;
	case MW_MSG_BACK:
		mw_sched_back(&r->sched, m->peer);
		if (!r->quiet)
			printf("mw: master: %s is back\n", sw->host);
		return 0;
	case MW_MSG_STATS:
		return mw_stats_msg_decode(&m->h, m->data, &sw->wan) < 0 ? protocol_error(m, "short STATS") : 0;
	case MW_MSG_BYE:
		if (!ms->stopping)
			return protocol_error(m, "it left before the end of the run");
		sw->exec = (double)m->h.aux * 1e-9;
		sw->cpu = (double)m->h.id * 1e-9;
		ms->nbye++;
		return 0;
	default:
		return protocol_error(m, "unexpected message");
	}
}

/* Fills every worker's queue, starting with a different worker each step
 * so that none is always served last; at most StepLimit sends. */
static int refill(struct master *ms, double now)
{
	struct mw_run *r = ms->r;
	unsigned sent = 0;

	for (unsigned k = 0; k < ms->nw; k++) {
		unsigned w = (ms->rr + k) % ms->nw;

		while (sent < r->cfg.step_limit) {
			uint64_t id;
			struct mw_hdr h = { .type = MW_MSG_TASK };
			int kind = mw_gather_next(r, w, &id), rc;

			if (kind < 0)
				return -1;
			if (kind == MW_SCHED_NONE)
				break;
			if (r->task.len > UINT32_MAX) {
				fprintf(stderr, "mw: %s: task %llu is %zu bytes, more than 4 GiB\n", r->app->name,
					(unsigned long long)id, r->task.len);
				return -1;
			}
			if (mw_sched_assign(&r->sched, w, id, now) < 0)
				return -1;
			h.id = id;
			h.len = (uint32_t)r->task.len;
			if ((rc = mw_port_send(ms->port, w, &h, r->task.data)) < 0) {
				fprintf(stderr, "mw: master: cannot send task %llu to worker %u: %s\n",
					(unsigned long long)id, w + 1, strerror(-rc));
				return -1;
			}
			r->stats.w[w].bytes_out += h.len;
			sent++;
		}
	}
	ms->rr = (ms->rr + 1) % ms->nw;
	return (int)sent;
}

/* One scheduling step: at most StepLimit messages in, then refills.
 * Returns how much it did, or -1. */
static int step(struct master *ms)
{
	struct mw_run *r = ms->r;
	struct mw_msg m;
	unsigned got = 0;
	int rc, sent = 0;

	while (got < r->cfg.step_limit) {
		rc = mw_port_poll(ms->port, &m);
		if (rc < 0) {
			fprintf(stderr, "mw: master: receiving: %s\n", strerror(-rc));
			return -1;
		}
		if (rc == 0)
			break;
		if (handle(ms, &m, mw_now()) < 0)
			return -1;
		got++;
	}
	if (!ms->stopping && !mw_sched_finished(&r->sched) && (sent = refill(ms, mw_now())) < 0)
		return -1;
	return (int)got + sent;
}

#define MIN_NAP 100e-6            /* s: shorter naps cost more than spinning */

/* Nothing to do: while every busy worker has queued work for at least
 * twice as long, the master naps (at most MasterNap, looking for
 * messages and pushing its sends every MW_NAP_SLICE), so that on a
 * machine with fewer cores than ranks it leaves the workers the CPU;
 * otherwise it waits on the port, which spins and yields, so that a
 * worker about to run dry is served at once. */
static int idle(struct master *ms)
{
	struct mw_run *r = ms->r;
	double t = mw_now(), left = r->next_tick - t;
	double nap = mw_sched_slack(&r->sched, t) / 2;
	int rc = 0;

	nap = nap < r->cfg.master_nap ? nap : r->cfg.master_nap;
	nap = nap < left ? nap : left;
	rc = nap >= MIN_NAP ? mw_port_nap(ms->port, nap) : mw_port_wait(ms->port, left > 0 ? left : 0);
	r->stats.wait += mw_now() - t;
	mw_gather_tick(r, mw_now());
	if (rc < 0)
		fprintf(stderr, "mw: master: waiting: %s\n", strerror(-rc));
	return rc;
}

/* One HELLO from every peer.  A communication manager that said its
 * HELLO may report its link (STATS) before the others said theirs. */
static int hellos(struct master *ms)
{
	struct mw_run *r = ms->r;
	bool *said = calloc(ms->nw, sizeof(*said));
	unsigned n = 0;
	struct mw_msg m;
	int rc = 0;

	if (said == NULL)
		return -1;
	while (n < ms->nw && rc == 0) {
		rc = mw_port_poll(ms->port, &m);
		if (rc <= 0) {
			rc = rc < 0 || mw_port_wait(ms->port, 1.0) < 0 ? -1 : 0;
			continue;
		}
		rc = 0;
		if (m.h.type != MW_MSG_HELLO)
			rc = said[m.peer] ? handle(ms, &m, mw_now()) : protocol_error(&m, "expected HELLO first");
		else if (said[m.peer])
			rc = protocol_error(&m, "HELLO twice");
		else if (mw_sched_set_depth(&r->sched, m.peer, (unsigned)(m.h.aux ? m.h.aux : 1)) < 0)
			rc = protocol_error(&m, "prefetch depth out of range (1 to 4096)");
		else {
			if (m.h.id == MW_HELLO_CM)
				r->stats.w[m.peer].role = "CommManager";
			snprintf(r->stats.w[m.peer].host, sizeof(r->stats.w[m.peer].host), "%.*s",
				 (int)m.h.len, (const char *)m.data);
			said[m.peer] = true;
			n++;
		}
	}
	free(said);
	return rc;
}

int mw_master_run(struct mw_run *r, struct mw_port *port)
{
	struct master ms = { .r = r, .port = port, .nw = port->npeers };
	int rc = 0;

	if (mw_gather_start(r, ms.nw) < 0 || hellos(&ms) < 0)
		return mw_gather_end(r, 1);
	r->stats.t_first = r->stats.t_last = mw_now();
	while (!mw_sched_finished(&r->sched)) {
		rc = step(&ms);
		if (rc < 0)
			return mw_gather_end(r, 1);
		mw_gather_tick(r, mw_now());
		if (rc == 0 && idle(&ms) < 0)
			return mw_gather_end(r, 1);
	}
	/* Copies still running elsewhere come back as discharged results
	 * before each worker's BYE. */
	ms.stopping = true;
	for (unsigned w = 0; w < ms.nw; w++) {
		struct mw_hdr h = { .type = MW_MSG_STOP };

		if (mw_port_send(port, w, &h, NULL) < 0)
			return mw_gather_end(r, 1);
	}
	while (ms.nbye < ms.nw) {
		rc = step(&ms);
		if (rc < 0)
			return mw_gather_end(r, 1);
		if (rc == 0 && idle(&ms) < 0)
			return mw_gather_end(r, 1);
	}
	if (mw_port_flush(port) < 0)
		return mw_gather_end(r, 1);
	r->stats.t_end = mw_now();
	r->stats.cpu = mw_cpu();
	return mw_gather_end(r, 0);
}
