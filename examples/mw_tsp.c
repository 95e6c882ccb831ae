/*
 * mw_tsp - travelling salesman by branch and bound on the runtime.
 *
 * Cities are random points on an integer grid with rounded Euclidean
 * distances (TSPLIB EUC_2D), so tour lengths are exact integers.  A task
 * is a fixed prefix of DEPTH cities after city 0; the worker completes it
 * by depth-first search, pruning with the best length the master knew
 * when it packed the task.  Task-level pruning: the master does not send
 * a prefix whose lower bound already reaches the best tour (MW_PRUNED).
 * --verify checks the optimum by brute force (small instances only).
 *
 *   mpirun -np 4 mw_tsp -n 11 -d 3 --verify
 */
#include <getopt.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mw.h"

#define MAXN 16

struct tsp {
	unsigned n, depth, seed;
	int verify;
	int d[MAXN][MAXN];
	int minedge[MAXN];          /* shortest edge leaving each city */
	uint64_t ntasks;
	int best;                   /* master: best tour so far */
	int tour[MAXN];
};

/* The task: seed, n, the bound, then the prefix. */
struct tsp_task {
	uint32_t n, seed, depth;
	int32_t bound;
	uint8_t prefix[MAXN];
};

struct tsp_result {
	int32_t len;                /* INT_MAX: nothing better than the bound */
	uint8_t tour[MAXN];
};

static void make_cities(struct tsp *t)
{
	int x[MAXN], y[MAXN];
	unsigned s = t->seed;

	for (unsigned i = 0; i < t->n; i++) {
		s = s * 1103515245u + 12345u;
		x[i] = (int)(s >> 16) % 1000;
		s = s * 1103515245u + 12345u;
		y[i] = (int)(s >> 16) % 1000;
	}
	for (unsigned i = 0; i < t->n; i++) {
		t->minedge[i] = INT_MAX;
		for (unsigned j = 0; j < t->n; j++) {
			t->d[i][j] = (int)(sqrt((double)(x[i] - x[j]) * (x[i] - x[j]) + (double)(y[i] - y[j]) * (y[i] - y[j])) + 0.5);
			if (i != j && t->d[i][j] < t->minedge[i])
				t->minedge[i] = t->d[i][j];
		}
	}
}

static void usage(FILE *out)
{
	fprintf(out, "usage: mw_tsp [-n CITIES] [-d DEPTH] [-s SEED] [--verify] [runtime options]\n"
		"  -n, --cities N   cities, 3 to %d (default 11)\n"
		"  -d, --depth D    cities fixed per task, 1 to N-2 (default 3)\n"
		"  -s, --seed S     seed of the city coordinates (default 7)\n"
		"      --verify     check the optimum by brute force\n", MAXN);
	mw_usage(out);
}

static int tsp_setup(void *ctx, int argc, char **argv, enum mw_role role)
{
	static const struct option opts[] = {
		{ "cities", required_argument, NULL, 'n' }, { "depth", required_argument, NULL, 'd' },
		{ "seed", required_argument, NULL, 's' }, { "verify", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct tsp *t = ctx;
	int o;

	t->n = 11;
	t->depth = 3;
	t->seed = 7;
	while ((o = getopt_long(argc, argv, "n:d:s:h", opts, NULL)) != -1) {
		switch (o) {
		case 'n': t->n = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'd': t->depth = (unsigned)strtoul(optarg, NULL, 10); break;
		case 's': t->seed = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'v': t->verify = 1; break;
		case 'h': if (role != MW_ROLE_WORKER) usage(stdout); return -2;
		default: if (role != MW_ROLE_WORKER) usage(stderr); return -2;
		}
	}
	if (t->n < 3 || t->n > MAXN || t->depth < 1 || t->depth > t->n - 2) {
		if (role != MW_ROLE_WORKER)
			fprintf(stderr, "mw_tsp: need 3 <= -n %u <= %d and 1 <= -d %u <= n-2\n", t->n, MAXN, t->depth);
		return -2;
	}
	make_cities(t);
	t->best = INT_MAX;
	t->ntasks = 1;
	for (unsigned k = 0; k < t->depth; k++)
		t->ntasks *= t->n - 1 - k;
	return 0;
}

static int tsp_split(void *ctx, uint64_t *ntasks)
{
	*ntasks = ((struct tsp *)ctx)->ntasks;
	return 0;
}

/* Task id -> prefix: the id in the mixed radix (n-1)(n-2)... of choices
 * among the cities not yet visited. */
static void prefix_of(const struct tsp *t, uint64_t id, uint8_t *prefix)
{
	int used[MAXN] = { 1 };

	for (unsigned k = 0; k < t->depth; k++) {
		uint64_t radix = t->n - 1 - k, c = 0;
		unsigned pick = (unsigned)(id % radix);

		id /= radix;
		for (unsigned city = 1; city < t->n; city++)
			if (!used[city] && c++ == pick) {
				prefix[k] = (uint8_t)city;
				used[city] = 1;
				break;
			}
	}
}

static int tsp_pack(void *ctx, uint64_t id, struct mw_buf *out)
{
	struct tsp *t = ctx;
	struct tsp_task task = { .n = t->n, .seed = t->seed, .depth = t->depth, .bound = t->best };
	int len = 0, prev = 0, lb;

	prefix_of(t, id, task.prefix);
	for (unsigned k = 0; k < t->depth; k++) {
		len += t->d[prev][task.prefix[k]];
		prev = task.prefix[k];
	}
	/* Every city still to leave (the last prefix city, the unvisited
	 * ones) costs at least its shortest edge. */
	lb = len + t->minedge[prev];
	for (unsigned c = 1; c < t->n; c++) {
		int in = 0;

		for (unsigned k = 0; k < t->depth; k++)
			in |= task.prefix[k] == c;
		if (!in)
			lb += t->minedge[c];
	}
	if (t->best != INT_MAX && lb >= t->best)
		return MW_PRUNED;
	return mw_buf_put(out, &task, sizeof(task));
}

struct search {
	const struct tsp *t;
	int best, path[MAXN], tour[MAXN];
	int used[MAXN];
};

static void dfs(struct search *s, unsigned depth, int len)
{
	const struct tsp *t = s->t;
	int last = s->path[depth - 1];

	if (len >= s->best)
		return;
	if (depth == t->n) {
		if (len + t->d[last][0] < s->best) {
			s->best = len + t->d[last][0];
			memcpy(s->tour, s->path, sizeof(s->tour));
		}
		return;
	}
	for (unsigned c = 1; c < t->n; c++)
		if (!s->used[c]) {
			s->used[c] = 1;
			s->path[depth] = (int)c;
			dfs(s, depth + 1, len + t->d[last][c]);
			s->used[c] = 0;
		}
}

static int tsp_run(void *ctx, const void *task, size_t len, struct mw_buf *out)
{
	struct tsp local = { 0 };
	struct tsp_task tk;
	struct tsp_result res = { .len = INT_MAX };
	struct search s = { .t = &local };
	int plen = 0;

	(void)ctx;
	if (len != sizeof(tk))
		return -1;
	memcpy(&tk, task, sizeof(tk));
	if (tk.n < 3 || tk.n > MAXN || tk.depth < 1 || tk.depth > tk.n - 2)
		return -1;
	local.n = tk.n;
	local.seed = tk.seed;
	make_cities(&local);
	s.best = tk.bound;
	s.path[0] = 0;
	s.used[0] = 1;
	for (unsigned k = 0; k < tk.depth; k++) {
		if (tk.prefix[k] == 0 || tk.prefix[k] >= tk.n || s.used[tk.prefix[k]])
			return -1;
		s.used[tk.prefix[k]] = 1;
		s.path[k + 1] = tk.prefix[k];
		plen += local.d[s.path[k]][tk.prefix[k]];
	}
	dfs(&s, tk.depth + 1, plen);
	if (s.best < tk.bound) {
		res.len = s.best;
		for (unsigned k = 0; k < tk.n; k++)
			res.tour[k] = (uint8_t)s.tour[k];
	}
	return mw_buf_put(out, &res, sizeof(res));
}

static int tsp_join(void *ctx, uint64_t id, const void *r, size_t len)
{
	struct tsp *t = ctx;
	struct tsp_result res;

	(void)id;
	if (len != sizeof(res))
		return -1;
	memcpy(&res, r, sizeof(res));
	if (res.len < t->best) {
		t->best = res.len;
		for (unsigned k = 0; k < t->n; k++)
			t->tour[k] = res.tour[k];
	}
	return 0;
}

/* Every tour through city 0, by brute force. */
static int brute(const struct tsp *t)
{
	struct search s = { .t = t, .best = INT_MAX };

	s.used[0] = 1;
	dfs(&s, 1, 0);
	return s.best;
}

static int tsp_finish(void *ctx)
{
	struct tsp *t = ctx;
	int opt;

	printf("mw_tsp: %u cities, best tour %d:", t->n, t->best);
	for (unsigned k = 0; k < t->n; k++)
		printf(" %d", t->tour[k]);
	printf("\n");
	if (!t->verify)
		return 0;
	opt = brute(t);
	printf("mw_tsp: verify: brute-force optimum %d: %s\n", opt, opt == t->best ? "OK" : "WRONG");
	return opt == t->best ? 0 : -1;
}

int main(int argc, char **argv)
{
	static struct tsp t;
	const struct mw_app app = {
		.size = sizeof(app), .name = "tsp", .ctx = &t,
		.setup = tsp_setup, .split = tsp_split, .task_pack = tsp_pack, .task_run = tsp_run,
		.result_join = tsp_join, .finish = tsp_finish,
	};

	return mw_main(argc, argv, &app);
}
