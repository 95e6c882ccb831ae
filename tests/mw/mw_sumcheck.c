/*
 * mw_sumcheck - the runtime tests' own application (shares nothing with
 * examples/): task i is a chain of --iters xorshift steps seeded by i,
 * run in --ms milliseconds of wall time (sleeping, so that many ranks share
 * a small machine); its result is the chain's end, 8 bytes.  The master
 * keeps every result and finish() recomputes each one serially: a task
 * joined twice, never, or with a wrong result fails the run.
 *
 *   mw_sumcheck [-t TASKS] [--ms MS] [--iters N] [--slow ID:MS]
 *               [--slow-setup CLUSTER:RANK:MS] [--die-in-setup CLUSTER:RANK]
 * --slow makes task ID take MS milliseconds instead (a long task).
 * --slow-setup makes setup() of that rank (MWL_CLUSTER, MWL_RANK) take MS
 * milliseconds; --die-in-setup kills that rank (SIGKILL) in setup().
 */
#include <errno.h>
#include <inttypes.h>
#include <math.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mw.h"

struct app {
	uint64_t ntasks, iters;
	double ms;
	uint64_t slow_id;
	double slow_ms;            /* 0: no slow task */
	uint64_t *res;
	uint8_t *seen;
};

static uint64_t chain(uint64_t id, uint64_t iters)
{
	uint64_t x = id * 0x9e3779b97f4a7c15ULL + 1;

	for (uint64_t k = 0; k < iters; k++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
	}
	return x;
}

static int number(const char *s, double *v)
{
	char *end;

	*v = strtod(s, &end);
	return end != s && *end == '\0' && *v >= 0 ? 0 : -1;
}

/* True if this process is rank `rank` of cluster cl (mwlaunch's
 * MWL_CLUSTER and MWL_RANK). */
static int this_rank(const char *cl, int rank)
{
	const char *c = getenv("MWL_CLUSTER"), *r = getenv("MWL_RANK");

	return c != NULL && r != NULL && strcmp(c, cl) == 0 && atoi(r) == rank;
}

static int setup(void *ctx, int argc, char **argv, enum mw_role role)
{
	struct app *a = ctx;
	char cl[64];
	int rank;
	double v;

	(void)role;
	for (int i = 1; i < argc; i++) {
		const char *o = argv[i], *val = i + 1 < argc ? argv[i + 1] : NULL;

		if (val == NULL)
			goto usage;
		if (strcmp(o, "-t") == 0 && number(val, &v) == 0 && v >= 1)
			a->ntasks = (uint64_t)v;
		else if (strcmp(o, "--ms") == 0 && number(val, &v) == 0)
			a->ms = v;
		else if (strcmp(o, "--iters") == 0 && number(val, &v) == 0)
			a->iters = (uint64_t)v;
		else if (strcmp(o, "--slow") == 0 && sscanf(val, "%" SCNu64 ":%lf", &a->slow_id, &a->slow_ms) == 2)
			;
		else if (strcmp(o, "--slow-setup") == 0 && sscanf(val, "%63[^:]:%d:%lf", cl, &rank, &v) == 3) {
			if (this_rank(cl, rank))
				nanosleep(&(struct timespec){ (time_t)(v / 1000), (long)(fmod(v, 1000) * 1e6) }, NULL);
		} else if (strcmp(o, "--die-in-setup") == 0 && sscanf(val, "%63[^:]:%d", cl, &rank) == 2) {
			if (this_rank(cl, rank))
				raise(SIGKILL);
		} else
			goto usage;
		i++;
	}
	return 0;
usage:
	fprintf(stderr, "usage: mw_sumcheck [-t TASKS] [--ms MS] [--iters N] [--slow ID:MS] "
		"[--slow-setup CLUSTER:RANK:MS] [--die-in-setup CLUSTER:RANK]\n");
	mw_usage(stderr);
	return -2;
}

static int split(void *ctx, uint64_t *n)
{
	struct app *a = ctx;

	a->res = calloc(a->ntasks, sizeof(*a->res));
	a->seen = calloc(a->ntasks, 1);
	if (a->res == NULL || a->seen == NULL)
		return -ENOMEM;
	*n = a->ntasks;
	return 0;
}

static int task_pack(void *ctx, uint64_t id, struct mw_buf *out)
{
	struct app *a = ctx;
	double ms = a->slow_ms > 0 && id == a->slow_id ? a->slow_ms : a->ms;
	uint64_t t[3] = { id, a->iters, (uint64_t)(ms * 1000) };

	return mw_buf_put(out, t, sizeof(t));
}

static int task_run(void *ctx, const void *task, size_t len, struct mw_buf *out)
{
	uint64_t t[3], x;
	struct timespec ts;

	(void)ctx;
	if (len != sizeof(t))
		return -EINVAL;
	memcpy(t, task, sizeof(t));
	x = chain(t[0], t[1]);
	ts.tv_sec = (time_t)(t[2] / 1000000);
	ts.tv_nsec = (long)(t[2] % 1000000) * 1000;
	while (nanosleep(&ts, &ts) < 0 && errno == EINTR)
		;
	return mw_buf_put(out, &x, sizeof(x));
}

static int result_join(void *ctx, uint64_t id, const void *res, size_t len)
{
	struct app *a = ctx;

	if (len != sizeof(uint64_t) || id >= a->ntasks || a->seen[id]++) {
		fprintf(stderr, "mw_sumcheck: task %" PRIu64 ": result of %zu bytes joined %u times\n", id, len,
			id < a->ntasks ? a->seen[id] : 0);
		return -1;
	}
	memcpy(&a->res[id], res, sizeof(uint64_t));
	return 0;
}

static int finish(void *ctx)
{
	struct app *a = ctx;
	uint64_t bad = 0, sum = 0;

	for (uint64_t i = 0; i < a->ntasks; i++) {
		bad += !a->seen[i] || a->res[i] != chain(i, a->iters);
		sum += a->res[i];
	}
	printf("mw_sumcheck: verify: %" PRIu64 " tasks, sum %016" PRIx64 ": %s\n", a->ntasks, sum,
	       bad ? "WRONG" : "OK");
	if (bad)
		fprintf(stderr, "mw_sumcheck: %" PRIu64 " of %" PRIu64 " results wrong or missing\n", bad, a->ntasks);
	return bad ? -1 : 0;
}

static void cleanup(void *ctx)
{
	struct app *a = ctx;

	free(a->res);
	free(a->seen);
}

int main(int argc, char **argv)
{
	struct app a = { .ntasks = 200, .iters = 100000, .ms = 20 };
	struct mw_app app = {
		.size = sizeof(app), .name = "mw_sumcheck", .ctx = &a, .setup = setup, .split = split,
		.task_pack = task_pack, .task_run = task_run, .result_join = result_join, .finish = finish,
		.cleanup = cleanup,
	};

	return mw_main(argc, argv, &app);
}
