/*
 * rdx_conf.h - the RDMA transport's peer settings; private to
 * transports/rdma/ (the core sees only the option table, transport.h).
 */
#ifndef LDS_RDX_CONF_H
#define LDS_RDX_CONF_H

#include <stddef.h>
#include <stdio.h>

#include "transports/transport.h"

struct rdx_conf {
	size_t buffer_size;   /* rdma_buffer_size: each receive buffer and send slot, header included */
	unsigned buffers;     /* rdma_buffers: receive buffers posted (the peer's credits) and send slots */
	size_t inline_max;    /* rdma_inline: sends up to this many bytes go inline; 0 = never */
	size_t write_ring;    /* rdma_write_ring: bytes of the ring the peer writes large frames into; 0 = none */
	size_t write_threshold; /* rdma_write_threshold: frames larger than this go by RDMA write */
};

#define RDMA_DEF_BUFFER_SIZE (64u << 10)
#define RDMA_DEF_BUFFERS 32u
#define RDMA_DEF_INLINE 64u
#define RDMA_MAX_INLINE 1024u
#define RDMA_DEF_WRITE_RING (4u << 20)
#define RDMA_DEF_WRITE_THRESHOLD (32u << 10)

extern const struct lds_tp_option rdx_options[];
void rdx_conf_defaults(void *conf);
int rdx_conf_check(const void *conf, struct lds_tp_conf_error *e);
void rdx_conf_status(const void *conf, FILE *out);
const char *rdx_conf_describe(const void *conf, char *buf, size_t len);

#endif
