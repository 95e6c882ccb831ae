/*
 * rdx_pool.h - fixed-size buffers cut from one slab, for the RDMA
 * transport's receive buffers and send slots.
 *
 * The slab is allocated once, page-aligned and a whole number of pages,
 * so that it is registered once (the caller's ibv_reg_mr on base, len)
 * and shares no page with other memory: ibv_fork_init marks registered
 * pages "do not fork", which must not take unrelated data away from a
 * forked child.  Buffers are RDMA_POOL_ALIGN-aligned; taking and giving
 * back is O(1) and never allocates.  Every buffer is accounted for: give
 * back refuses a pointer that is not a taken buffer of this pool.  Pure
 * memory management, no verbs (tests/unit/check_rdma_pool.c).
 */
#ifndef LDS_RDX_POOL_H
#define LDS_RDX_POOL_H

#include <stddef.h>
#include <stdint.h>

#define RDMA_POOL_ALIGN 64u

struct rdx_pool {
	uint8_t *base;       /* the slab */
	size_t len;          /* its length: whole pages */
	size_t stride;       /* bytes between buffers: size rounded up to RDMA_POOL_ALIGN */
	size_t size;         /* usable bytes of each buffer */
	uint32_t n;          /* buffers */
	uint32_t nfree;      /* not taken */
	uint32_t *free;      /* stack of the free buffers' indices */
	uint8_t *taken;      /* per buffer: 1 while taken */
	void *mr;            /* the caller's registration of the slab */
};

/* n (>= 1) buffers of size (>= 1) bytes: 0, or -ENOMEM, -EINVAL. */
int rdx_pool_init(struct rdx_pool *p, uint32_t n, size_t size);
/* Frees the slab; safe on a zeroed or half-built pool.  The caller has
 * deregistered it. */
void rdx_pool_fini(struct rdx_pool *p);
/* A free buffer's index, or -1 when all are taken. */
int64_t rdx_pool_take(struct rdx_pool *p);
/* Gives buffer i back: 0, or -EINVAL for an index out of range or a
 * buffer not taken. */
int rdx_pool_give(struct rdx_pool *p, uint32_t i);
/* Buffer i's memory. */
uint8_t *rdx_pool_buf(const struct rdx_pool *p, uint32_t i);
/* The index of the buffer starting at b: >= 0, or -1 for a pointer that is
 * not one of this pool's buffers. */
int64_t rdx_pool_index(const struct rdx_pool *p, const void *b);

#endif
