/* mw_master.c - the master: hands out tasks on demand, receives results
 * while sending, joins them, ends the run with STOP/BYE.  A calibration
 * run (MWL_TASK_LIMIT) first waits for every remote cluster to join and
 * gives each cluster its own tasks (mw_calib.h).  With WorkerFailure =
 * "continue", a worker silent past WorkerTimeout while it owes the master
 * something is lost: its tasks go to the others (watch()); so is one
 * silent that long before its HELLO (hello_watch()). */
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
	unsigned nlost;
	bool stopping;
	double t_stop;             /* when STOP went out */
	double next_watch;         /* the next silence deadline (watch()) */
	struct peer {
		bool joined;       /* a CM whose remote cluster answered */
		bool excused;      /* a CM told to stop as the calibration run left it out */
		bool lost;         /* a worker silent past WorkerTimeout: gets nothing more */
		bool bye;
		double heard;      /* when its last message came */
	} *peer;
};

#define JOIN_WAIT 30.0            /* s: a calibration run's wait for the clusters, MWL_JOIN_WAIT unset */

static int protocol_error(const struct mw_msg *m, const char *what)
{
	fprintf(stderr, "mw: master: worker %u sent %s for task %llu: %s\n", m->peer + 1,
		mw_msg_names[m->h.type], (unsigned long long)m->h.id, what);
	return -1;
}

/* A calibration run goes on without peer w's cluster (why): the tasks
 * dealt to it are dropped, not given to others, so that every other
 * cluster runs its own share, and the report names it. */
static void leave_out(struct master *ms, unsigned w, const char *why)
{
	struct mw_run *r = ms->r;
	struct mw_stats_worker *sw = &r->stats.w[w];
	unsigned g = r->sched.w[w].group, n = 0;

	snprintf(sw->left_out, sizeof(sw->left_out), "%s", why);
	mw_sched_forfeit(&r->sched, w);
	for (uint64_t k = 0; k < r->sched.ntasks; k++)
		if (mw_sched_group_of(&r->sched, k) == g && mw_sched_prune(&r->sched, k) == 0)
			n++;
	fprintf(stderr, "mw: calibration: %s %s; its %u tasks are left out, the others are measured\n",
		sw->host, why, n);
}

/* A message from a lost worker (it was slow, not dead, or its last
 * messages were on their way): a result is late, dropped and counted;
 * the rest is ignored. */
static int from_lost(struct master *ms, const struct mw_msg *m)
{
	if (m->h.type == MW_MSG_RESULT)
		ms->r->stats.w[m->peer].late++;
	return 0;
}

static int handle(struct master *ms, const struct mw_msg *m, double now)
{
	struct mw_run *r = ms->r;
	struct mw_stats_worker *sw = &r->stats.w[m->peer];
	int64_t k;
	int rc;

	ms->peer[m->peer].heard = now;
	if (ms->peer[m->peer].lost)
		return from_lost(ms, m);
	switch (m->h.type) {
	case MW_MSG_RESULT:
		k = mw_gather_index(r, m->h.id);
		rc = k < 0 ? -ENOENT : mw_sched_complete(&r->sched, m->peer, (uint64_t)k, now);
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
			return mw_gather_join(r, (uint64_t)k, m->data, m->h.len);
		}
		return 0;
	case MW_MSG_FAIL:
		fprintf(stderr, "mw: master: worker %u (%s) failed on task %llu: %.*s\n", m->peer + 1,
			sw->host, (unsigned long long)m->h.id, (int)m->h.len, (const char *)m->data);
		return -1;
	case MW_MSG_AWAY:
		if (r->calib_ids != NULL) {
			leave_out(ms, m->peer, "went silent past its deadline during the calibration run");
			return 0;
		}
		/* Its tasks go to the others at the next refill, this step. */
		rc = (int)mw_sched_forfeit(&r->sched, m->peer);
		if (!r->quiet)
			printf("mw: master: %s is away past its deadline; its %d outstanding tasks go to other "
			       "workers\n", sw->host, rc);
		return 0;
	case MW_MSG_JOINED:
		ms->peer[m->peer].joined = true;
		if (sw->left_out[0])
			fprintf(stderr, "mw: master: %s joined after the calibration run left it out\n", sw->host);
		return 0;
	case MW_MSG_BACK:
		mw_sched_back(&r->sched, m->peer);
		if (!r->quiet)
			printf("mw: master: %s is back\n", sw->host);
		return 0;
	case MW_MSG_STATS:
		return mw_stats_msg_decode(&m->h, m->data, &sw->wan) < 0 ? protocol_error(m, "short STATS") : 0;
	case MW_MSG_PING:
		/* A worker's heartbeat while it computes: heard, nothing more. */
		return 0;
	case MW_MSG_BYE:
		if ((!ms->stopping && !sw->left_out[0]) || ms->peer[m->peer].bye)
			return protocol_error(m, "it left before the end of the run");
		sw->exec = (double)m->h.aux * 1e-9;
		sw->cpu = (double)m->h.id * 1e-9;
		ms->peer[m->peer].bye = true;
		ms->nbye++;
		return 0;
	default:
		return protocol_error(m, "unexpected message");
	}
}

/* Worker w is lost (silent since `since`; before its HELLO if hello):
 * what it holds goes to the others at the next refill, this step; it
 * gets no task again, and sends to it are never waited for.  -1 when no
 * one is left to compute. */
static int lose(struct master *ms, unsigned w, double since, double now, bool hello)
{
	struct mw_run *r = ms->r;
	struct mw_stats_worker *sw = &r->stats.w[w];
	unsigned n = mw_sched_forfeit(&r->sched, w), alive = 0;
	char held[32];

	ms->peer[w].lost = true;
	ms->nlost++;
	mw_port_lose(ms->port, w);
	snprintf(held, sizeof(held), "holding %u tasks", n);
	snprintf(sw->lost, sizeof(sw->lost), "silent for %.1f s (WorkerTimeout %g s) %s", now - since,
		 r->cfg.worker_timeout, hello ? "before its HELLO" : held);
	if (hello)
		snprintf(sw->host, sizeof(sw->host), "rank of peer %u", w + 1);
	fprintf(stderr, "mw: master: worker %u (%s) is lost: %s; %s\n", w + 1, sw->host, sw->lost,
		hello ? "the run goes on without it" : "they go to other workers now");
	for (unsigned k = 0; k < ms->nw; k++)
		alive += !ms->peer[k].lost && !ms->peer[k].excused;
	if (alive == 0 && !mw_sched_finished(&r->sched)) {
		fprintf(stderr, "mw: master: every worker is lost; %llu of %llu tasks are not done\n",
			(unsigned long long)(r->sched.ntasks - r->sched.ndone), (unsigned long long)r->sched.ntasks);
		return -1;
	}
	return 0;
}

/* WorkerFailure = "continue": a worker that owes the master something
 * (holds tasks, or its goodbye after STOP) and has sent nothing (result,
 * heartbeat) for WorkerTimeout is lost.  A worker's silence counts from
 * its last message or from when it was given its oldest task (or STOP),
 * whichever came later.  Communication managers have their own deadline
 * (AWAY).  Sets next_watch to the next deadline.  0 or -1. */
static int watch(struct master *ms, double now)
{
	struct mw_run *r = ms->r;
	double tmo = r->cfg.worker_timeout;

	ms->next_watch = now + tmo;
	if (!r->cfg.worker_continue)
		return 0;
	for (unsigned w = 0; w < ms->nw; w++) {
		const struct mw_sched_worker *sk = &r->sched.w[w];
		struct peer *pe = &ms->peer[w];
		double since;

		if (pe->lost || pe->bye || mw_stats_is_cm(&r->stats.w[w]))
			continue;
		if (ms->stopping)
			since = pe->heard > ms->t_stop ? pe->heard : ms->t_stop;
		else if (sk->n > 0)
			since = pe->heard > sk->q[0].t ? pe->heard : sk->q[0].t;
		else
			continue;
		if (now - since > tmo) {
			if (lose(ms, w, since, now, false) < 0)
				return -1;
		} else if (since + tmo < ms->next_watch)
			ms->next_watch = since + tmo;
	}
	return 0;
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
			h.id = mw_gather_app_id(r, id);
			h.len = (uint32_t)r->task.len;
			if ((rc = mw_port_send(ms->port, w, &h, r->task.data)) < 0) {
				fprintf(stderr, "mw: master: cannot send task %llu to worker %u: %s\n",
					(unsigned long long)h.id, w + 1, strerror(-rc));
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
	if (watch(ms, mw_now()) < 0)
		return -1;
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
	double t = mw_now(), left = (r->next_tick < ms->next_watch ? r->next_tick : ms->next_watch) - t;
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

/* WorkerFailure = "continue": a peer that has sent nothing, neither
 * HELLO nor the heartbeat it starts before setup() (mw_main), for
 * WorkerTimeout since the master began waiting died before its HELLO.
 * Returns how many were lost now, or -1 when no one is left. */
static int hello_watch(struct master *ms, const bool *said, double t0)
{
	double now = mw_now(), tmo = ms->r->cfg.worker_timeout;
	int n = 0;

	for (unsigned w = 0; w < ms->nw; w++) {
		double since = ms->peer[w].heard > t0 ? ms->peer[w].heard : t0;

		if (said[w] || ms->peer[w].lost || now - since <= tmo)
			continue;
		if (lose(ms, w, since, now, true) < 0)
			return -1;
		n++;
	}
	return n;
}

/* One HELLO from every peer (or, WorkerFailure = "continue", its loss).
 * A communication manager that said its HELLO may report its link
 * (STATS) before the others said theirs. */
static int hellos(struct master *ms)
{
	struct mw_run *r = ms->r;
	bool *said = calloc(ms->nw, sizeof(*said));
	double t0 = mw_now(), nap = r->cfg.worker_continue ? r->cfg.worker_timeout / 4 : 1.0;
	unsigned n = 0;
	struct mw_msg m;
	int rc = 0;

	if (said == NULL)
		return -1;
	while (n < ms->nw && rc == 0) {
		if (r->cfg.worker_continue) {
			int lost = hello_watch(ms, said, t0);

			if (lost < 0)
				break;
			if ((n += (unsigned)lost) == ms->nw)
				break;
		}
		rc = mw_port_poll(ms->port, &m);
		if (rc <= 0) {
			rc = rc < 0 || mw_port_wait(ms->port, nap < 1.0 ? nap : 1.0) < 0 ? -1 : 0;
			continue;
		}
		rc = 0;
		ms->peer[m.peer].heard = mw_now();
		/* A heartbeat while the rank runs setup(); a late word of a lost one. */
		if (ms->peer[m.peer].lost || (m.h.type == MW_MSG_PING && !said[m.peer]))
			continue;
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
	return rc < 0 || n < ms->nw ? -1 : 0;
}

/* A calibration run waits for every communication manager's JOINED, at
 * most MWL_JOIN_WAIT seconds, so that a remote cluster that starts later
 * than the main one is still measured.  -1 on a receive error. */
static int join_wait(struct master *ms)
{
	struct mw_run *r = ms->r;
	const char *env = getenv("MWL_JOIN_WAIT");
	double wait = JOIN_WAIT, t0 = mw_now();
	struct mw_msg m;
	char *end;

	if (env != NULL && *env != '\0' && (!((wait = strtod(env, &end)) >= 0) || *end != '\0')) {
		fprintf(stderr, "mw: MWL_JOIN_WAIT=%s is not a number of seconds >= 0\n", env);
		return -1;
	}
	for (;;) {
		unsigned missing = 0;
		int rc;

		for (unsigned w = 0; w < ms->nw; w++)
			missing += mw_stats_is_cm(&r->stats.w[w]) && !ms->peer[w].joined;
		if (missing == 0 || mw_now() - t0 >= wait)
			break;
		if ((rc = mw_port_poll(ms->port, &m)) < 0)
			return -1;
		if (rc > 0 && handle(ms, &m, mw_now()) < 0)
			return -1;
		if (rc == 0 && mw_port_wait(ms->port, 0.1) < 0)
			return -1;
	}
	for (unsigned w = 0; w < ms->nw; w++)
		if (mw_stats_is_cm(&r->stats.w[w]) && !ms->peer[w].joined) {
			char why[96];

			snprintf(why, sizeof(why), "did not join within %g s", wait);
			leave_out(ms, w, why);
			ms->peer[w].excused = true;
			/* Nothing to wait for on its side: it says goodbye now. */
			if (mw_port_send(ms->port, w, &(struct mw_hdr){ .type = MW_MSG_STOP, .aux = MW_STOP_EXCUSED },
					 NULL) < 0)
				return -1;
		}
	return 0;
}

/* A calibration run's groups: the main cluster's workers one, each
 * communication manager (a remote cluster) one, each with the share of
 * the tasks MWL_CALIB_SHARES gives its cluster (equal shares without
 * it), dealt across the sample so that each cluster's tasks span the
 * problem.  Then the join wait.  0 or -1 (said why). */
static int calib_start(struct master *ms)
{
	struct mw_run *r = ms->r;
	const char *shares = getenv("MWL_CALIB_SHARES");
	unsigned *wg = calloc(ms->nw, sizeof(*wg)), *tg = malloc((r->sched.ntasks + 1) * sizeof(*tg)), ng = 1;
	double *weight = calloc(ms->nw + 1, sizeof(*weight));
	bool workers = false;
	int rc = -1;

	if (wg == NULL || tg == NULL || weight == NULL) {
		fprintf(stderr, "mw: master: out of memory for the calibration run\n");
		goto out;
	}
	for (unsigned w = 0; w < ms->nw; w++) {
		const struct mw_stats_worker *sw = &r->stats.w[w];
		bool cm = mw_stats_is_cm(sw);
		const char *name = cm ? sw->host + 3 : r->cluster;   /* "cm:NAME" */
		unsigned g = cm ? ng++ : 0;
		int s;

		if (!cm && workers)
			continue;
		workers |= !cm;
		wg[w] = g;
		weight[g] = 1;
		if (shares != NULL && (s = mw_calib_share(shares, name, &weight[g])) < 0) {
			if (s == -1)
				fprintf(stderr, "mw: MWL_CALIB_SHARES=%s: no share for cluster %s\n", shares, name);
			else
				fprintf(stderr, "mw: MWL_CALIB_SHARES=%s: not NAME:COUNT,...\n", shares);
			goto out;
		}
	}
	if (mw_calib_deal(r->sched.ntasks, weight, ng, tg) < 0) {
		fprintf(stderr, "mw: MWL_CALIB_SHARES=%s gives no cluster a task\n", shares ? shares : "");
		goto out;
	}
	if (mw_sched_set_groups(&r->sched, tg, wg, ng) < 0) {
		fprintf(stderr, "mw: master: out of memory for the calibration run\n");
		goto out;
	}
	rc = join_wait(ms);
out:
	free(wg);
	free(tg);
	free(weight);
	return rc;
}

/* The run after the HELLOs: tasks until every one is done, then STOP
 * and every goodbye.  0 or -1. */
static int master_loop(struct master *ms)
{
	struct mw_run *r = ms->r;
	int rc;

	r->stats.t_first = r->stats.t_last = mw_now();
	while (!mw_sched_finished(&r->sched)) {
		if ((rc = step(ms)) < 0)
			return -1;
		mw_gather_tick(r, mw_now());
		if (rc == 0 && idle(ms) < 0)
			return -1;
	}
	/* Copies still running elsewhere come back as discharged results
	 * before each worker's BYE.  A lost worker gets STOP too: one that
	 * was only slow ends then. */
	ms->stopping = true;
	ms->t_stop = mw_now();
	for (unsigned w = 0; w < ms->nw; w++)
		if (!ms->peer[w].excused && mw_port_send(ms->port, w, &(struct mw_hdr){ .type = MW_MSG_STOP }, NULL) < 0)
			return -1;
	while (ms->nbye + ms->nlost < ms->nw) {
		if ((rc = step(ms)) < 0)
			return -1;
		if (rc == 0 && idle(ms) < 0)
			return -1;
	}
	if (mw_port_flush(ms->port) < 0)
		return -1;
	r->stats.t_end = mw_now();
	r->stats.cpu = mw_cpu();
	return 0;
}

int mw_master_run(struct mw_run *r, struct mw_port *port)
{
	struct master ms = { .r = r, .port = port, .nw = port->npeers };
	int status = 1;

	if ((ms.peer = calloc(ms.nw, sizeof(*ms.peer))) == NULL) {
		fprintf(stderr, "mw: master: out of memory\n");
		return 1;
	}
	if (mw_gather_start(r, ms.nw) == 0 && hellos(&ms) == 0 &&
		 (r->calib_ids == NULL || calib_start(&ms) == 0) && master_loop(&ms) == 0)
		status = 0;
	free(ms.peer);
	return mw_gather_end(r, status);
}
