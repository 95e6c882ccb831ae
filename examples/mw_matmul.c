/*
 * mw_matmul - block matrix multiplication on the master-worker runtime.
 *
 * C = A x B for N x N float matrices in B x B blocks.  Task (i, j, k)
 * carries block A(i,k) and block B(k,j); its result is their product,
 * which the master adds into C(i,j) (the design's "results joining").
 * --verify multiplies serially in double precision and compares.
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
	fprintf(out, "usage: mw_matmul [-n N] [-b B] [-s SEED] [--verify] [runtime options]\n"
		"  -n, --size N     matrix size, a multiple of B (default 512)\n"
		"  -b, --block B    block size (default 64)\n"
		"  -s, --seed S     seed of the random matrices (default 1)\n"
		"      --verify     compare with a serial multiplication\n");
	mw_usage(out);
}

static int mm_setup(void *ctx, int argc, char **argv, enum mw_role role)
{
	static const struct option opts[] = {
		{ "size", required_argument, NULL, 'n' }, { "block", required_argument, NULL, 'b' },
		{ "seed", required_argument, NULL, 's' }, { "verify", no_argument, NULL, 'v' },
		{ "help", no_argument, NULL, 'h' }, { NULL, 0, NULL, 0 },
	};
	struct matmul *m = ctx;
	int o;

	m->n = 512;
	m->b = 64;
	m->seed = 1;
	while ((o = getopt_long(argc, argv, "n:b:s:h", opts, NULL)) != -1) {
		switch (o) {
		case 'n': m->n = (unsigned)strtoul(optarg, NULL, 10); break;
		case 'b': m->b = (unsigned)strtoul(optarg, NULL, 10); break;
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
	m->app->ops_per_task = 2.0 * m->b * m->b * m->b;
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

	*ntasks = (uint64_t)m->nb * m->nb * m->nb;
	return 0;
}

/* Task id -> (i, j, k), k fastest so that a C block completes in a row. */
static void ijk(const struct matmul *m, uint64_t id, unsigned *i, unsigned *j, unsigned *k)
{
	*k = (unsigned)(id % m->nb);
	*j = (unsigned)(id / m->nb % m->nb);
	*i = (unsigned)(id / m->nb / m->nb);
}

static void copy_block(const struct matmul *m, const float *src, unsigned bi, unsigned bj, float *dst)
{
	for (unsigned r = 0; r < m->b; r++)
		memcpy(dst + (size_t)r * m->b, src + ((size_t)bi * m->b + r) * m->n + (size_t)bj * m->b,
		       m->b * sizeof(float));
}

static int mm_pack(void *ctx, uint64_t id, struct mw_buf *out)
{
	struct matmul *m = ctx;
	size_t bb = (size_t)m->b * m->b;
	uint32_t b = m->b;
	unsigned i, j, k;
	float *p;

	ijk(m, id, &i, &j, &k);
	if (mw_buf_put(out, &b, sizeof(b)) < 0 || (p = mw_buf_reserve(out, 2 * bb * sizeof(float))) == NULL)
		return -1;
	copy_block(m, m->a, i, k, p);
	copy_block(m, m->bm, k, j, p + bb);
	out->len += 2 * bb * sizeof(float);
	return 0;
}

static int mm_run(void *ctx, const void *task, size_t len, struct mw_buf *out)
{
	uint32_t b;
	const float *a, *bm;
	float *c;

	(void)ctx;
	if (len < sizeof(b))
		return -1;
	memcpy(&b, task, sizeof(b));
	if (b == 0 || b > 4096 || len != sizeof(b) + 2 * (size_t)b * b * sizeof(float))
		return -1;
	a = (const float *)((const char *)task + sizeof(b));
	bm = a + (size_t)b * b;
	c = mw_buf_reserve(out, (size_t)b * b * sizeof(float));
	if (c == NULL)
		return -1;
	memset(c, 0, (size_t)b * b * sizeof(float));
	for (uint32_t r = 0; r < b; r++)
		for (uint32_t k = 0; k < b; k++) {
			float x = a[(size_t)r * b + k];
			const float *brow = bm + (size_t)k * b;
			float *crow = c + (size_t)r * b;

			for (uint32_t col = 0; col < b; col++)
				crow[col] += x * brow[col];
		}
	out->len += (size_t)b * b * sizeof(float);
	return 0;
}

static int mm_join(void *ctx, uint64_t id, const void *res, size_t len)
{
	struct matmul *m = ctx;
	const float *r = res;
	unsigned i, j, k;

	if (id >= (uint64_t)m->nb * m->nb * m->nb || len != (size_t)m->b * m->b * sizeof(float))
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
		.result_join = mm_join, .finish = mm_finish, .cleanup = mm_cleanup,
	};

	m.app = &app;
	return mw_main(argc, argv, &app);
}
