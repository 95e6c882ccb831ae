/* mw_gather.c - the problem as the master (or the serial role) holds it:
 * split, journal and replay, joins, progress, end report. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <time.h>
#include <unistd.h>

#include "launcher/mw_run.h"

double mw_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

void mw_nap(double s)
{
	nanosleep(&(struct timespec){ (time_t)s, (long)((s - (double)(time_t)s) * 1e9) }, NULL);
}

double mw_cpu(void)
{
	struct rusage ru;

	if (getrusage(RUSAGE_SELF, &ru) < 0)
		return 0;
	return (double)(ru.ru_utime.tv_sec + ru.ru_stime.tv_sec) + (ru.ru_utime.tv_usec + ru.ru_stime.tv_usec) * 1e-6;
}

uint64_t mw_gather_app_id(const struct mw_run *r, uint64_t k)
{
	return r->calib_ids != NULL ? r->calib_ids[k] : k;
}

int64_t mw_gather_index(const struct mw_run *r, uint64_t id)
{
	if (r->calib_ids != NULL)
		return mw_calib_index(r->calib_ids, r->sched.ntasks, id);
	return id < r->sched.ntasks ? (int64_t)id : -1;
}

static int replay_one(void *arg, uint64_t id, const void *data, size_t len)
{
	struct mw_run *r = arg;

	if (mw_sched_replayed(&r->sched, id) < 0)
		return -1;
	return r->app->result_join(r->app->ctx, mw_gather_app_id(r, id), data, len) < 0 ? -1 : 0;
}

/* Rows go to --stats-log, or next to the --plot file when only that is set. */
static int open_series(struct mw_run *r)
{
	static char tsv[4096];

	if (r->series_path == NULL && r->plot_path == NULL)
		return 0;
	if (r->series_path == NULL) {
		snprintf(tsv, sizeof(tsv), "%s.tsv", r->plot_path);
		r->series_path = tsv;
	}
	r->stats.series = fopen(r->series_path, "w");
	if (r->stats.series == NULL) {
		fprintf(stderr, "mw: %s: cannot write the statistics log: %s\n", r->series_path, strerror(errno));
		return -1;
	}
	return 0;
}

/* mwlaunch --benchmark's calibration runs MWL_TASK_LIMIT tasks of the
 * problem only, spread over it (mw_calib.h).  The limit, or 0 for none;
 * -1 if it is bad. */
static long long task_limit(void)
{
	const char *s = getenv("MWL_TASK_LIMIT");
	char *end;
	long long v;

	if (s == NULL || *s == '\0')
		return 0;
	v = strtoll(s, &end, 10);
	return *end != '\0' || v < 1 ? -1 : v;
}

int mw_gather_start(struct mw_run *r, unsigned nworkers)
{
	const struct mw_app *a = r->app;
	char err[1024];
	uint64_t n = 0, problem;
	long long limit = task_limit();

	r->journal.fd = -1;
	if (a->split(a->ctx, &n) < 0) {
		fprintf(stderr, "mw: %s: split() failed; see the application's message above\n", a->name);
		return -1;
	}
	if (limit < 0) {
		fprintf(stderr, "mw: MWL_TASK_LIMIT=%s is not a number of tasks >= 1\n", getenv("MWL_TASK_LIMIT"));
		return -1;
	}
	problem = n;
	if (limit > 0 && (uint64_t)limit < n)
		n = (uint64_t)limit;
	if (limit > 0 && (r->calib_ids = malloc((n ? n : 1) * sizeof(*r->calib_ids))) == NULL) {
		fprintf(stderr, "mw: out of memory for %llu calibration tasks\n", (unsigned long long)n);
		return -1;
	}
	if (r->calib_ids != NULL)
		mw_calib_spread(problem, n, r->calib_ids);
	if (mw_sched_init(&r->sched, n, nworkers, r->cfg.load_balance ? r->cfg.max_copies : 1) < 0 ||
	    mw_stats_init(&r->stats, a->name, n, nworkers, r->t0) < 0) {
		fprintf(stderr, "mw: out of memory for %llu tasks and %u workers\n", (unsigned long long)n, nworkers);
		return -1;
	}
	r->stats.behaviour = r->cfg.worker_behaviour;
	r->stats.prefetch = r->cfg.prefetch;
	r->stats.ops_per_task = a->ops_per_task;
	r->stats.cluster = r->cluster;
	r->stats.problem_tasks = problem;
	if (mw_stats_predicted(&r->stats, getenv("MWL_PREDICT")) < 0) {
		fprintf(stderr, "mw: MWL_PREDICT=%s is not BEST,WORST seconds\n", getenv("MWL_PREDICT"));
		return -1;
	}
	if (open_series(r) < 0)
		return -1;
	if (r->resume && r->journal_path == NULL) {
		fprintf(stderr, "mw: --resume needs --journal FILE\n");
		return -1;
	}
	if (r->journal_path != NULL) {
		uint64_t fp = mw_journal_fingerprint(r->args_hash, MW_HAS(a, fingerprint) ? a->fingerprint(a->ctx) : 0);

		if (mw_journal_open(&r->journal, r->journal_path, a->name, n, fp, r->resume, r->cfg.journal_sync,
				    replay_one, r, err, sizeof(err)) < 0) {
			fprintf(stderr, "mw: %s\n", err);
			return -1;
		}
		if (r->journal.torn > 0)
			fprintf(stderr, "mw: %s: cut off a torn last record (%llu bytes); that task runs again\n",
				r->journal_path, (unsigned long long)r->journal.torn);
		r->stats.replayed = r->sched.nreplayed;
		if (r->resume && !r->quiet)
			printf("mw: resumed from %s: %llu of %llu tasks already joined\n", r->journal_path,
			       (unsigned long long)r->sched.nreplayed, (unsigned long long)n);
	}
	r->next_tick = mw_now() + (r->cfg.stats_interval > 0 ? r->cfg.stats_interval : 1);
	return 0;
}

/* The application's scheduler, when it has one, over the oldest pending. */
static void pick(struct mw_run *r, unsigned w, uint64_t *id)
{
	uint64_t win[256], ids[256];
	size_t max = r->cfg.pick_window < 256 ? r->cfg.pick_window : 256;
	struct mw_pick p = { .ids = ids, .worker = w, .remote = mw_stats_is_cm(&r->stats.w[w]) };
	long k;

	p.n = mw_sched_window(&r->sched, w, win, max);
	for (size_t i = 0; i < p.n; i++)
		ids[i] = mw_gather_app_id(r, win[i]);
	k = r->app->pick(r->app->ctx, &p);
	if (k >= 0 && (size_t)k < p.n)
		*id = win[k];
}

int mw_gather_next(struct mw_run *r, unsigned w, uint64_t *id)
{
	const struct mw_app *a = r->app;

	for (;;) {
		enum mw_sched_kind kind = mw_sched_peek(&r->sched, w, id);
		int rc;

		if (kind == MW_SCHED_NONE)
			return kind;
		if (kind == MW_SCHED_NEW && a->pick != NULL)
			pick(r, w, id);
		r->task.len = 0;
		rc = a->task_pack(a->ctx, mw_gather_app_id(r, *id), &r->task);
		if (rc < 0) {
			fprintf(stderr, "mw: %s: task_pack() failed for task %llu\n", a->name,
				(unsigned long long)mw_gather_app_id(r, *id));
			return -1;
		}
		if (rc != MW_PRUNED)
			return kind;
		if (kind == MW_SCHED_COPY)
			return MW_SCHED_NONE;
		mw_sched_prune(&r->sched, *id);
	}
}

int mw_gather_join(struct mw_run *r, uint64_t id, const void *res, size_t len)
{
	int rc;

	if (r->journal.fd >= 0 && (rc = mw_journal_append(&r->journal, id, res, len)) < 0) {
		fprintf(stderr, "mw: %s: cannot journal task %llu: %s; stopping so that no result is lost\n",
			r->journal_path, (unsigned long long)id, strerror(-rc));
		return -1;
	}
	if (r->app->result_join(r->app->ctx, mw_gather_app_id(r, id), res, len) < 0) {
		fprintf(stderr, "mw: %s: result_join() failed for task %llu\n", r->app->name,
			(unsigned long long)mw_gather_app_id(r, id));
		return -1;
	}
	return 0;
}

/* An interval of the statistics; every interval, so that the JSON report
 * has the WAN time series also when progress lines are off. */
static void interval(struct mw_run *r, double now, FILE *out)
{
	if (mw_stats_interval(&r->stats, now, r->sched.ndone, out, out != NULL && isatty(fileno(out))) < 0)
		fprintf(stderr, "mw: out of memory for the WAN time series: the JSON report misses a sample\n");
}

void mw_gather_tick(struct mw_run *r, double now)
{
	double iv = r->cfg.stats_interval > 0 ? r->cfg.stats_interval : 1;
	bool show = r->cfg.stats_interval > 0 && !r->quiet;

	if (now < r->next_tick)
		return;
	interval(r, now, show ? stdout : NULL);
	r->next_tick = r->next_tick + iv > now ? r->next_tick + iv : now + iv;
}

int mw_gather_json(struct mw_run *r)
{
	FILE *f = r->json_stdout != NULL ? r->json_stdout : fopen(r->json_path, "w");

	if (f == NULL) {
		fprintf(stderr, "mw: %s: cannot write the JSON report: %s\n", r->json_path, strerror(errno));
		return -1;
	}
	mw_stats_json(&r->stats, f);
	if (f == r->json_stdout ? fflush(f) != 0 : fclose(f) != 0) {
		fprintf(stderr, "mw: %s: cannot write the JSON report: %s\n", r->json_path, strerror(errno));
		return -1;
	}
	return 0;
}

int mw_gather_end(struct mw_run *r, int status)
{
	if (status == 0) {
		r->stats.pruned = r->sched.npruned;
		for (unsigned i = 0; i < r->sched.nworkers; i++) {
			r->stats.w[i].done = r->sched.w[i].done;
			r->stats.w[i].discharged = r->sched.w[i].discharged;
			r->stats.w[i].forfeited = r->sched.w[i].forfeited;
		}
		/* The last progress line, also of a run shorter than one interval. */
		interval(r, mw_now(), r->cfg.stats_interval > 0 && !r->quiet ? stdout : NULL);
		/* A calibration run's answer is partial: nothing to check. */
		if (r->stats.ntasks < r->stats.problem_tasks && !r->quiet)
			printf("mw: calibration: %llu of the problem's %llu tasks run\n",
			       (unsigned long long)r->stats.ntasks, (unsigned long long)r->stats.problem_tasks);
		else if (r->app->finish != NULL && r->app->finish(r->app->ctx) < 0) {
			fprintf(stderr, "mw: %s: finish() reported a failure\n", r->app->name);
			status = 1;
		}
		if (!r->quiet)
			mw_stats_report(&r->stats, stdout);
		if (r->json_path != NULL && mw_gather_json(r) < 0)
			status = 1;
	}
	if (r->stats.series != NULL) {
		double iv = r->cfg.stats_interval > 0 ? r->cfg.stats_interval : 1;

		fclose(r->stats.series);
		r->stats.series = NULL;
		if (status == 0 && r->plot_path != NULL &&
		    mw_plot(&r->stats, iv, r->series_path, r->plot_path, r->app->name) < 0)
			status = 1;
	}
	mw_journal_close(&r->journal);
	mw_sched_free(&r->sched);
	mw_stats_free(&r->stats);
	free(r->calib_ids);
	r->calib_ids = NULL;
	free(r->task.data);
	r->task = (struct mw_buf){ 0 };
	return status;
}
