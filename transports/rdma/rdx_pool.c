/* rdx_pool.c - buffers cut from one slab; see rdx_pool.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "rdx_pool.h"

int rdx_pool_init(struct rdx_pool *p, uint32_t n, size_t size)
{
	long pg = sysconf(_SC_PAGESIZE);
	size_t page = pg > 0 ? (size_t)pg : 4096;
	void *slab;

	memset(p, 0, sizeof(*p));
	if (n == 0 || size == 0 || size > SIZE_MAX / 2 / n)
		return -EINVAL;
	p->size = size;
	p->stride = (size + RDMA_POOL_ALIGN - 1) / RDMA_POOL_ALIGN * RDMA_POOL_ALIGN;
	p->len = (p->stride * n + page - 1) / page * page;
	p->free = calloc(n, sizeof(*p->free));
	p->taken = calloc(n, 1);
	if (p->free == NULL || p->taken == NULL || posix_memalign(&slab, page, p->len) != 0) {
		rdx_pool_fini(p);
		return -ENOMEM;
	}
	p->base = slab;
	p->n = p->nfree = n;
	/* Lowest index on top: buffers are taken in address order at first. */
	for (uint32_t i = 0; i < n; i++)
		p->free[i] = n - 1 - i;
	return 0;
}

void rdx_pool_fini(struct rdx_pool *p)
{
	free(p->base);
	free(p->free);
	free(p->taken);
	memset(p, 0, sizeof(*p));
}

int64_t rdx_pool_take(struct rdx_pool *p)
{
	uint32_t i;

	if (p->nfree == 0)
		return -1;
	i = p->free[--p->nfree];
	p->taken[i] = 1;
	return i;
}

int rdx_pool_give(struct rdx_pool *p, uint32_t i)
{
	if (i >= p->n || !p->taken[i])
		return -EINVAL;
	p->taken[i] = 0;
	p->free[p->nfree++] = i;
	return 0;
}

uint8_t *rdx_pool_buf(const struct rdx_pool *p, uint32_t i)
{
	return p->base + (size_t)i * p->stride;
}

int64_t rdx_pool_index(const struct rdx_pool *p, const void *b)
{
	const uint8_t *u = b;
	size_t off;

	if (p->base == NULL || u < p->base || u >= p->base + p->stride * p->n)
		return -1;
	off = (size_t)(u - p->base);
	return off % p->stride == 0 ? (int64_t)(off / p->stride) : -1;
}
