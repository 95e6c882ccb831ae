/*
 * mw_montecarlo - a Monte-Carlo estimate of pi whose task times vary.
 *
 * Task i draws a deterministic number of samples: the mean times a factor
 * uniform in [1 - spread, 1 + spread] taken from (seed, i), so that task
 * times vary as in the design's load-balancing experiments while the
 * answer stays reproducible (--mean-ms assumes --rate samples per ms).  Each task has its own generator, so the hit
 * count does not depend on which worker ran what: --verify recomputes
 * every task serially and compares the counts exactly.
 *
 *   mpirun -np 4 mw_montecarlo -t 200 --mean-ms 5 --spread 0.8 --verify
 */
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "mw.h"

struct mc {
	uint64_t ntasks;
	double mean_ms, spread;
	uint64_t seed;
	int verify;
	uint64_t per_ms;            /* samples per millisecond (--rate) */
	uint64_t hits, samples;     /* master: joined */
};

struct mc_task {
	uint64_t seed, samples;
};

struct mc_result {
	uint64_t hits, samples;
};

/* splitmix64: a small generator with good streams from any seed. */
static uint64_t next(uint64_t *s)
{
	uint64_t z = (*s += 0x9e3779b97f4a7c15ULL);

	z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
	z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
	return z ^ (z >> 31);
}

static uint64_t count_hits(uint64_t seed, uint64_t samples)
{
	uint64_t s = seed, hits = 0;

	for (uint64_t i = 0; i < samples; i++) {
		double x = (double)(next(&s) >> 11) * 0x1.0p-53, y = (double)(next(&s) >> 11) * 0x1.0p-53;

		hits += x * x + y * y <= 1.0;
	}
	return hits;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: mw_montecarlo [-t TASKS] [--mean-ms MS] [--spread F] [-s SEED] [--verify] [runtime options]\n"
		"  -t, --tasks N     tasks (default 100)\n"
		"      --mean-ms MS  mean task time in milliseconds (default 5)\n"
		"      --spread F    task times uniform in mean*(1-F) .. mean*(1+F), 0 <= F < 1 (default 0.5)\n"
		"  -s, --seed S      seed (default 42)\n"
		"      --rate N      samples per millisecond that --mean-ms assumes (default 300000)\n"
		"      --calibrate   measure the rate on the master instead (then --resume\n"
		"                    only fits a journal made at the same rate)\n"
		"      --verify      recompute every task serially and compare\n");
	mw_usage(out);
}

/* Samples per millisecond on this machine, measured on the master so that
 * --mean-ms means time, while the tasks stay deterministic counts. */
static uint64_t calibrate(void)
{
	struct timespec a, b;
	uint64_t n = 1 << 18;
	volatile uint64_t sink;         /* keeps the timed loop from being optimized away */
	double ms;

	clock_gettime(CLOCK_MONOTONIC, &a);
	sink = count_hits(1, n);
	clock_gettime(CLOCK_MONOTONIC, &b);
	(void)sink;
	ms = (double)(b.tv_sec - a.tv_sec) * 1e3 + (b.tv_nsec - a.tv_nsec) * 1e-6;
	return ms > 0 ? (uint64_t)(n / ms) + 1 : n;
}

static int mc_setup(void *ctx, int argc, char **argv, enum mw_role role)
{
	static const struct option opts[] = {
		{ "tasks", required_argument, NULL, 't' }, { "mean-ms", required_argument, NULL, 'm' },
		{ "spread", required_argument, NULL, 'p' }, { "seed", required_argument, NULL, 's' },
		{ "verify", no_argument, NULL, 'v' }, { "help", no_argument, NULL, 'h' },
		{ "rate", required_argument, NULL, 'r' }, { "calibrate", no_argument, NULL, 'c' },
		{ NULL, 0, NULL, 0 },
	};
	struct mc *m = ctx;
	int o;

	m->ntasks = 100;
	m->mean_ms = 5;
	m->spread = 0.5;
	m->seed = 42;
	/* A fixed rate keeps the problem identical from run to run, which
	 * resuming from a journal needs. */
	m->per_ms = 300000;
	while ((o = getopt_long(argc, argv, "t:s:h", opts, NULL)) != -1) {
		switch (o) {
		case 't': m->ntasks = strtoull(optarg, NULL, 10); break;
		case 'm': m->mean_ms = strtod(optarg, NULL); break;
		case 'p': m->spread = strtod(optarg, NULL); break;
		case 's': m->seed = strtoull(optarg, NULL, 10); break;
		case 'v': m->verify = 1; break;
		case 'r': m->per_ms = strtoull(optarg, NULL, 10); break;
		case 'c': m->per_ms = 0; break;
		case 'h': if (role != MW_ROLE_WORKER) usage(stdout); return -2;
		default: if (role != MW_ROLE_WORKER) usage(stderr); return -2;
		}
	}
	if (!(m->mean_ms > 0 && m->mean_ms <= 60000) || !(m->spread >= 0 && m->spread < 1)) {
		if (role != MW_ROLE_WORKER)
			fprintf(stderr, "mw_montecarlo: need 0 < --mean-ms <= 60000 and 0 <= --spread < 1\n");
		return -2;
	}
	if (m->per_ms == 0 && role != MW_ROLE_WORKER)
		m->per_ms = calibrate();
	return 0;
}

static int mc_split(void *ctx, uint64_t *n)
{
	*n = ((struct mc *)ctx)->ntasks;
	return 0;
}

static struct mc_task task_of(const struct mc *m, uint64_t id)
{
	uint64_t s = m->seed ^ (id * 0x9e3779b97f4a7c15ULL);
	double u = (double)(next(&s) >> 11) * 0x1.0p-53;
	double f = 1 - m->spread + 2 * m->spread * u;

	return (struct mc_task){ .seed = next(&s), .samples = (uint64_t)(m->mean_ms * f * (double)m->per_ms) + 1 };
}

static int mc_pack(void *ctx, uint64_t id, struct mw_buf *out)
{
	struct mc_task t = task_of(ctx, id);

	return mw_buf_put(out, &t, sizeof(t));
}

static int mc_run(void *ctx, const void *task, size_t len, struct mw_buf *out)
{
	struct mc_task t;
	struct mc_result r;

	(void)ctx;
	if (len != sizeof(t))
		return -1;
	memcpy(&t, task, sizeof(t));
	r.samples = t.samples;
	r.hits = count_hits(t.seed, t.samples);
	return mw_buf_put(out, &r, sizeof(r));
}

static int mc_join(void *ctx, uint64_t id, const void *res, size_t len)
{
	struct mc *m = ctx;
	struct mc_result r;

	if (len != sizeof(r))
		return -1;
	memcpy(&r, res, sizeof(r));
	if (r.samples != task_of(m, id).samples || r.hits > r.samples)
		return -1;
	m->hits += r.hits;
	m->samples += r.samples;
	return 0;
}

static int mc_finish(void *ctx)
{
	struct mc *m = ctx;
	uint64_t hits = 0;

	printf("mw_montecarlo: %llu samples, pi ~ %.6f\n", (unsigned long long)m->samples,
	       m->samples ? 4.0 * (double)m->hits / (double)m->samples : 0);
	if (!m->verify)
		return 0;
	for (uint64_t i = 0; i < m->ntasks; i++) {
		struct mc_task t = task_of(m, i);

		hits += count_hits(t.seed, t.samples);
	}
	printf("mw_montecarlo: verify: serial hits %llu, joined %llu: %s\n", (unsigned long long)hits,
	       (unsigned long long)m->hits, hits == m->hits ? "OK" : "WRONG");
	return hits == m->hits ? 0 : -1;
}

int main(int argc, char **argv)
{
	static struct mc m;
	const struct mw_app app = {
		.size = sizeof(app), .name = "montecarlo", .ctx = &m,
		.setup = mc_setup, .split = mc_split, .task_pack = mc_pack, .task_run = mc_run,
		.result_join = mc_join, .finish = mc_finish,
	};

	return mw_main(argc, argv, &app);
}
