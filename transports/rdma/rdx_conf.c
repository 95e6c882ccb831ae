/*
 * rdx_conf.c - the RDMA transport's peer settings: rdma_buffer_size,
 * rdma_buffers, rdma_inline, rdma_write_ring, rdma_write_threshold (docs/rdma.md), their defaults, the checks
 * across them, and their part of a link's status.
 */
#include <stdio.h>

#include "rdx_conf.h"
#include "rdx_proto.h"

const struct lds_tp_option rdx_options[] = {
	{ .name = "rdma_buffer_size", .type = LDS_TP_OPT_BYTES, .off = offsetof(struct rdx_conf, buffer_size),
	  .size = sizeof(size_t), .min = RP_MIN_BUF, .max = RP_MAX_BUF },
	/* Far below RP_MAX_DEPTH: each buffer is pinned memory. */
	{ .name = "rdma_buffers", .type = LDS_TP_OPT_UINT, .off = offsetof(struct rdx_conf, buffers),
	  .size = sizeof(unsigned), .min = RP_MIN_DEPTH, .max = 4096 },
	{ .name = "rdma_inline", .type = LDS_TP_OPT_BYTES, .off = offsetof(struct rdx_conf, inline_max),
	  .size = sizeof(size_t), .min = 0, .max = RDMA_MAX_INLINE },
	/* 0, or RP_MIN_RING and up in whole pages: rdx_conf_check. */
	{ .name = "rdma_write_ring", .type = LDS_TP_OPT_BYTES, .off = offsetof(struct rdx_conf, write_ring),
	  .size = sizeof(size_t), .min = 0, .max = RP_MAX_RING },
	{ .name = "rdma_write_threshold", .type = LDS_TP_OPT_BYTES, .off = offsetof(struct rdx_conf, write_threshold),
	  .size = sizeof(size_t), .min = RP_MIN_WRITE, .max = RP_MAX_RING },
	{ .name = NULL },
};

void rdx_conf_defaults(void *conf)
{
	struct rdx_conf *rc = conf;

	rc->buffer_size = RDMA_DEF_BUFFER_SIZE;
	rc->buffers = RDMA_DEF_BUFFERS;
	rc->inline_max = RDMA_DEF_INLINE;
	rc->write_ring = RDMA_DEF_WRITE_RING;
	rc->write_threshold = RDMA_DEF_WRITE_THRESHOLD;
}

int rdx_conf_check(const void *conf, struct lds_tp_conf_error *e)
{
	const struct rdx_conf *rc = conf;

	/* Two pools of buffers per conn, pinned: say so before the kernel's
	 * memlock limit does, at the first connect. */
	if ((unsigned long long)rc->buffer_size * rc->buffers > (1ull << 30)) {
		e->option = "rdma_buffers";
		snprintf(e->msg, sizeof(e->msg), "%u buffers of %zu bytes pin more than 1 GiB per conn in each "
			 "direction; lower rdma_buffers or rdma_buffer_size", rc->buffers, rc->buffer_size);
		return -1;
	}
	if (rc->write_ring != 0 && (rc->write_ring < RP_MIN_RING || rc->write_ring % RP_RING_PAGE != 0)) {
		e->option = "rdma_write_ring";
		snprintf(e->msg, sizeof(e->msg), "%zu bytes: must be 0 (no RDMA writes) or a multiple of %u from %u "
			 "to %u", rc->write_ring, RP_RING_PAGE, RP_MIN_RING, RP_MAX_RING);
		return -1;
	}
	return 0;
}

void rdx_conf_status(const void *conf, FILE *out)
{
	const struct rdx_conf *rc = conf;

	fprintf(out, ",\"rdma_buffer_size\":%zu,\"rdma_buffers\":%u,\"rdma_inline\":%zu,\"rdma_write_ring\":%zu,"
		"\"rdma_write_threshold\":%zu", rc->buffer_size, rc->buffers, rc->inline_max, rc->write_ring,
		rc->write_threshold);
}

const char *rdx_conf_describe(const void *conf, char *buf, size_t len)
{
	const struct rdx_conf *rc = conf;

	snprintf(buf, len, "%u x %zu bytes", rc->buffers, rc->buffer_size);
	return buf;
}

_Static_assert(sizeof(struct rdx_conf) <= LDS_TP_CONF_MAX, "RDMA's settings do not fit");
