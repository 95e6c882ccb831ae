/*
 * mw_matmul - block matrix multiplication on the master-worker runtime.
 *
 * C = A x B for N x N float matrices in B x B blocks.  Task (i, j, kc)
 * carries the K blocks A(i,k) and the K blocks B(k,j) of k = kc K ..
 * kc K + K - 1 (-k K, default 1); its result is the sum of their
 * products, which the master adds into C(i,j) (the design's "results
 * joining").  --verify multiplies serially in double precision and
 * compares.
 *
 * Across clusters (mwlaunch) the example uses the runtime's hooks:
 *  - task_blocks names every A and B block of a task, so that the
 *    sub-master's data cache receives each block over the WAN once;
 *  - coarse_split / fine_pack / fine_join / coarse_result let a remote
 *    cluster split a task of K products into K tasks of one product for
 *    its workers and sum their results, so that one block instead of K
 *    comes back;
 *  - pick gives a remote cluster the newest task it may choose from,
 *    local workers the oldest: the clusters work from opposite ends of C,
 *    and a remote cluster goes on reusing the rows of A it holds.
 *
 *   mpirun -np 3 mw_matmul -n 1024 -b 128 --verify
 */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "mw.h"

struct matmul {
	unsigned n, b, nb;          /* size, block size, blocks per side */
	unsigned k;                 /* products per task */
	unsigned seed;
	int verify;
	struct mw_app *app;         /* to state ops_per_task once -b is known */
	float *a, *bm, *c;          /* master only */
};

static float gen(unsigned *s)
{
	*s = *s * 1103515245u + 12345u;
	return (float)((*s >> 8) & 0xffff) / 65536.0f - 0.5f;
}

static void usage(FILE *out)
{
	fprintf(out, "usage: mw_matmul [-n N] [-b B] [-k K] [-s SEED] [--verify] [runtime options]\n"
		"  -n, --size N     matrix size, a multiple of B (default 512)\n"
		"  -b, --block B    block size (default 64)\n"
		"  -k, --ksteps K   block products per task, a divisor of N / B (default 1)\n"
		"  -s, --seed S     seed of the random matrices (default 1)\n"
		"      --verify     compare with a serial multiplication\n");
	mw_usage(out);
}

static int mm_setup(void *ctx, int argc, char **argv, enum mw_role role)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 'n' }, { "block", required_argument, NULL, 'b' },
		{ "ksteps", required_argument, NULL, 'k' },
		{ "seed", required_argument, NULL, 's' }, { "verify", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct matmul *m = ctx;
	int o;

	m->n = 512;
	m->b = 64;
	m->k = 1;
	m->seed = 1;
	while ((o = getopt_long(argc, argv, "n:b:k:s:h", opts, NULL)) != -1) {
		switch (o) {
		case 'n': m->n = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'b': m->b = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'k': m->k = (unsigned)strtoul(optarg, NULL, 10); break;
		case 's': m->seed = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'v': m->verify = 1; break;
		case 'h': if (role != MW_ROLE_WORKER) usage(stdout); return -2;
		default: if (role != MW_ROLE_WORKER) usage(stderr); return -2;
		}
	}
	if (m->b == 0 || m->n == 0 || m->n % m->b != 0 || m->b > 4096) {
		if (role != MW_ROLE_WORKER)
			fprintf(stderr, "mw_matmul: -n %u must be a positive multiple of -b %u (at most 4096)\n", m->n, m->b);
		return -2;
	}
	m->nb = m->n / m->b;
	if (m->k == 0 || m->nb % m->k != 0) {
		if (role != MW_ROLE_WORKER)
			fprintf(stderr, "mw_matmul: -k %u must divide N / B = %u\n", m->k, m->nb);
		return -2;
	}
	m->app->ops_per_task = 2.0 * m->b * m->b * m->b * m->k;
	/* Only the master holds the matrices. */
	if (role != MW_ROLE_MASTER && role != MW_ROLE_SERIAL)
		return 0;
	m->a = malloc(sizeof(float) * m->n * m->n);
	m->bm = malloc(sizeof(float) * m->n * m->n);
	m->c = calloc((size_t)m->n * m->n, sizeof(float));
	if (m->a == NULL || m->bm == NULL || m->c == NULL) {
		fprintf(stderr, "mw_matmul: out of memory for %u x %u matrices\n", m->n, m->n);
		return -1;
	}
	unsigned s = m->seed;
	for (size_t i = 0; i < (size_t)m->n * m->n; i++)
		m->a[i] = gen(&s);
	for (size_t i = 0; i < (size_t)m->n * m->n; i++)
		m->bm[i] = gen(&s);
	return 0;
}

static int mm_split(void *ctx, uint64_t *ntasks)
{
	struct matmul *m = ctx;

	*ntasks = (uint64_t)m->nb * m->nb * (m->nb / m->k);
	return 0;
}

/* Task id -> (i, j) and its first k, k fastest so that a C block
 * completes in a row. */
static void ijk(const struct matmul *m, uint64_t id, unsigned *i, unsigned *j, unsigned *k)
{
	unsigned nk = m->nb / m->k;

	*k = (unsigned)(id % nk) * m->k;
	*j = (unsigned)(id / nk % m->nb);
	*i = (unsigned)(id / nk / m->nb);
}

static void copy_block(const struct matmul *m, const float *src, unsigned bi, unsigned bj, float *dst)
{
	for (unsigned r = 0; r < m->b; r++)
		memcpy(dst + (size_t)r * m->b, src + ((size_t)bi * m->b + r) * m->n + (size_t)bj * m->b,
		       m->b * sizeof(float));
}

/* A task: b and K (uint32 each), the K blocks of A, the K blocks of B. */
#define HDR (2 * sizeof(uint32_t))

static size_t task_len(uint32_t b, uint32_t k)
{
	return HDR + 2 * (size_t)k * b * b * sizeof(float);
}

/* The header of a task of len bytes; 0, or -1 when it does not add up. */
static int task_hdr(const void *task, size_t len, uint32_t *b, uint32_t *k)
{
	if (len < HDR)
		return -1;
	memcpy(b, task, sizeof(*b));
	memcpy(k, (const char *)task + sizeof(*b), sizeof(*k));
	return *b == 0 || *b > 4096 || *k == 0 || *k > 4096 || len != task_len(*b, *k) ? -1 : 0;
}

static float *put_hdr(struct mw_buf *out, uint32_t b, uint32_t k)
{
	uint32_t h[2] = { b, k };
	float *p;

	if (mw_buf_put(out, h, sizeof(h)) < 0 || (p = mw_buf_reserve(out, task_len(b, k) - HDR)) == NULL)
		return NULL;
	out->len += task_len(b, k) - HDR;
	return p;
}

static int mm_pack(void *ctx, uint64_t id, struct mw_buf *out)
{
	struct matmul *m = ctx;
	size_t bb = (size_t)m->b * m->b;
	unsigned i, j, k;
	float *p;

	ijk(m, id, &i, &j, &k);
	if ((p = put_hdr(out, m->b, m->k)) == NULL)
		return -1;
	for (unsigned t = 0; t < m->k; t++) {
		copy_block(m, m->a, i, k + t, p + t * bb);
		copy_block(m, m->bm, k + t, j, p + (m->k + t) * bb);
	}
	return 0;
}

/* c += a x b for b x b blocks. */
static void gemm(uint32_t b, const float *a, const float *bm, float *c)
{
	for (uint32_t r = 0; r < b; r++)
		for (uint32_t k = 0; k < b; k++) {
			float x = a[(size_t)r * b + k];
			const float *brow = bm + (size_t)k * b;
			float *crow = c + (size_t)r * b;

			for (uint32_t col = 0; col < b; col++)
				crow[col] += x * brow[col];
		}
}

static int mm_run(void *ctx, const void *task, size_t len, struct mw_buf *out)
{
	uint32_t b, k;
	const float *a;
	float *c;

	(void)ctx;
	if (task_hdr(task, len, &b, &k) < 0)
		return -1;
	a = (const float *)((const char *)task + HDR);
	c = mw_buf_reserve(out, (size_t)b * b * sizeof(float));
	if (c == NULL)
		return -1;
	memset(c, 0, (size_t)b * b * sizeof(float));
	for (uint32_t t = 0; t < k; t++)
		gemm(b, a + (size_t)t * b * b, a + (size_t)(k + t) * b * b, c);
	out->len += (size_t)b * b * sizeof(float);
	return 0;
}

/* The data cache's view of a task: every block of A and B, named by
 * matrix and block coordinates, so that the blocks a remote cluster
 * already holds do not cross the WAN again. */
static long mm_blocks(void *ctx, uint64_t id, const void *task, size_t len, struct mw_block *blk, size_t max)
{
	struct matmul *m = ctx;
	size_t bytes = (size_t)m->b * m->b * sizeof(float);
	unsigned i, j, k;
	uint32_t b, nk;

	if (task_hdr(task, len, &b, &nk) < 0 || b != m->b || nk != m->k || max < 2 * (size_t)nk)
		return -1;
	ijk(m, id, &i, &j, &k);
	for (unsigned t = 0; t < nk; t++) {
		blk[t] = (struct mw_block){ .key = (uint64_t)i * m->nb + k + t, .off = HDR + t * bytes, .len = bytes };
		blk[nk + t] = (struct mw_block){ .key = 1ULL << 63 | ((uint64_t)(k + t) * m->nb + j),
						 .off = HDR + (nk + t) * bytes, .len = bytes };
	}
	return 2 * (long)nk;
}

/* A remote cluster's split of a task of K products into K tasks of one,
 * whose results are summed into the task's result. */
struct coarse {
	const float *a;             /* the task's K blocks of A, then K of B */
	uint32_t b, k;
	float *sum;
};

static int mm_coarse_split(void *ctx, const void *task, size_t len, void **state, uint64_t *nfine)
{
	struct coarse *c;
	uint32_t b, k;

	(void)ctx;
	if (task_hdr(task, len, &b, &k) < 0 || (c = malloc(sizeof(*c))) == NULL)
		return -1;
	c->a = (const float *)((const char *)task + HDR);
	c->b = b;
	c->k = k;
	c->sum = calloc((size_t)b * b, sizeof(float));
	if (c->sum == NULL) {
		free(c);
		return -1;
	}
	*state = c;
	*nfine = k;
	return 0;
}

static int mm_fine_pack(void *ctx, void *state, uint64_t t, struct mw_buf *out)
{
	struct coarse *c = state;
	size_t bb = (size_t)c->b * c->b;
	float *p;

	(void)ctx;
	if (t >= c->k || (p = put_hdr(out, c->b, 1)) == NULL)
		return -1;
	memcpy(p, c->a + t * bb, bb * sizeof(float));
	memcpy(p + bb, c->a + (c->k + t) * bb, bb * sizeof(float));
	return 0;
}

static int mm_fine_join(void *ctx, void *state, uint64_t t, const void *res, size_t len)
{
	struct coarse *c = state;
	size_t bb = (size_t)c->b * c->b;
	const float *r = res;

	(void)ctx;
	if (t >= c->k || len != bb * sizeof(float))
		return -1;
	for (size_t x = 0; x < bb; x++)
		c->sum[x] += r[x];
	return 0;
}

static int mm_coarse_result(void *ctx, void *state, struct mw_buf *out)
{
	struct coarse *c = state;
	int rc = out != NULL ? mw_buf_put(out, c->sum, (size_t)c->b * c->b * sizeof(float)) : 0;

	(void)ctx;
	free(c->sum);
	free(c);
	return rc;
}

static int mm_join(void *ctx, uint64_t id, const void *res, size_t len)
{
	struct matmul *m = ctx;
	const float *r = res;
	unsigned i, j, k;

	if (id >= (uint64_t)m->nb * m->nb * (m->nb / m->k) || len != (size_t)m->b * m->b * sizeof(float))
		return -1;
	ijk(m, id, &i, &j, &k);
	for (unsigned row = 0; row < m->b; row++) {
		float *c = m->c + ((size_t)i * m->b + row) * m->n + (size_t)j * m->b;

		for (unsigned col = 0; col < m->b; col++)
			c[col] += r[(size_t)row * m->b + col];
	}
	return 0;
}

static int mm_finish(void *ctx)
{
	struct matmul *m = ctx;
	double worst = 0, sum = 0;
	double *row;

	for (size_t i = 0; i < (size_t)m->n * m->n; i++)
		sum += m->c[i];
	printf("mw_matmul: %u x %u in %u x %u blocks, checksum %.6e\n", m->n, m->n, m->b, m->b, sum);
	if (!m->verify)
		return 0;
	row = malloc(m->n * sizeof(double));
	if (row == NULL)
		return -1;
	for (unsigned i = 0; i < m->n; i++) {
		memset(row, 0, m->n * sizeof(double));
		for (unsigned k = 0; k < m->n; k++)
			for (unsigned j = 0; j < m->n; j++)
				row[j] += (double)m->a[(size_t)i * m->n + k] * m->bm[(size_t)k * m->n + j];
		for (unsigned j = 0; j < m->n; j++) {
			double e = fabs(row[j] - m->c[(size_t)i * m->n + j]) / (1 + fabs(row[j]));

			worst = e > worst ? e : worst;
		}
	}
	free(row);
	printf("mw_matmul: verify: largest relative error %.3e against the serial product: %s\n", worst,
	       worst < 1e-4 ? "OK" : "WRONG");
	return worst < 1e-4 ? 0 : -1;
}

static long mm_pick(void *ctx, const struct mw_pick *p)
{
	(void)ctx;
	return p->remote && p->n > 0 ? (long)p->n - 1 : -1;
}

static void mm_cleanup(void *ctx)
{
	struct matmul *m = ctx;

	free(m->a);
	free(m->bm);
	free(m->c);
}

int main(int argc, char **argv)
{
	static struct matmul m;
	struct mw_app app = {
		.size = sizeof(app), .name = "matmul", .ctx = &m,
		.setup = mm_setup, .split = mm_split, .task_pack = mm_pack, .task_run = mm_run,
		.result_join = mm_join, .finish = mm_finish, .cleanup = mm_cleanup, .pick = mm_pick,
		.coarse_split = mm_coarse_split, .coarse_result = mm_coarse_result,
		.fine_pack = mm_fine_pack, .fine_join = mm_fine_join, .task_blocks = mm_blocks,
	};

	m.app = &app;
	return mw_main(argc, argv, &app);
}
