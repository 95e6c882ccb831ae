/*
 * rdma_conf.h - the RDMA transport's peer settings; private to
 * transports/rdma/ (the core sees only the option table, transport.h).
 */
#ifndef LDS_RDMA_CONF_H
#define LDS_RDMA_CONF_H

#include <stddef.h>
#include <stdio.h>

#include "transports/transport.h"

struct rdma_conf {
	size_t buffer_size;   /* rdma_buffer_size: each receive buffer and send slot, header included */
	unsigned buffers;     /* rdma_buffers: receive buffers posted (the peer's credits) and send slots */
	size_t inline_max;    /* rdma_inline: sends up to this many bytes go inline; 0 = never */
};

#define RDMA_DEF_BUFFER_SIZE (64u << 10)
#define RDMA_DEF_BUFFERS 32u
#define RDMA_DEF_INLINE 64u
#define RDMA_MAX_INLINE 1024u

extern const struct lds_tp_option rdma_options[];
void rdma_conf_defaults(void *conf);
int rdma_conf_check(const void *conf, struct lds_tp_conf_error *e);
void rdma_conf_status(const void *conf, FILE *out);
const char *rdma_conf_describe(const void *conf, char *buf, size_t len);

#endif
