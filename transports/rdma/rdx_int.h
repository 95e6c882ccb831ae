/*
 * rdx_int.h - the RDMA transport's state, shared by rdma.c (instances,
 * the connection manager, set-up and teardown) and rdx_data.c (the data
 * path: sends, receives, completions, upcalls).  Private to
 * transports/rdma/.
 *
 * One instance holds the connection manager's event channel (one fd for
 * every listener and conn) and a protection domain per RDMA device, so
 * that memory the core registers (mem_reg) is usable by any conn.  Each
 * conn has its own completion channel (an fd), completion queue, RC queue
 * pair and registered pools: receive buffers, all posted, send slots, and
 * the ring the peer writes large frames into (rdma_write_ring).  The
 * data-path rules are rdx_credit.h's, rdx_chunk.h's, rdx_wspace.h's,
 * rdx_sendq.h's and rdx_recvq.h's.
 */
#ifndef LDS_RDX_INT_H
#define LDS_RDX_INT_H

#include <infiniband/verbs.h>
#include <rdma/rdma_cma.h>

#include "rdx_chunk.h"
#include "rdx_conf.h"
#include "rdx_credit.h"
#include "rdx_pool.h"
#include "rdx_proto.h"
#include "rdx_recvq.h"
#include "rdx_sendq.h"
#include "rdx_wspace.h"
#include "transports/transport.h"

/* The largest core message: above any frame the core builds (a 16 MiB
 * block and its headers). */
#define RDMA_MAX_MSG (32u << 20)
/* At most this many sends in a row without a completion: a quarter of
 * the send queue, so that slots come back well before it is full. */
#define RDMA_SIGNAL_EVERY(depth) ((depth) / 4 > 0 ? (depth) / 4 : 1u)

struct lds_transport {
	struct lds_tp_host host;
	struct lds_tp_upcalls up;
	struct rdma_event_channel *cm;  /* every id's events */
	struct ibv_context **devs;      /* rdma_get_devices: the contexts the CM's ids use */
	struct ibv_pd **pd;             /* one per device */
	int ndevs;
	int pending_id;                 /* before-sleep hook: completions, upcalls, reaping */
	int timer;                      /* connect deadlines, checked a few times a second */
	struct lds_tp_conn *conns;      /* every conn not yet freed */
	struct lds_tp_listener *listeners;
	char step[64];                  /* the last failed connect step (transport.h) */
};

/* What mem_reg hands the core: the region registered with every device. */
struct rdx_mreg {
	int n;
	struct ibv_mr *mr[];
};

enum rdx_state {
	RS_RESOLVING,   /* connect: address, then route */
	RS_CONNECTING,  /* connect sent, waiting for ESTABLISHED */
	RS_ACCEPTING,   /* accepted a request, waiting for ESTABLISHED */
	RS_UP,          /* handed to the core */
	RS_DEAD,        /* closed: freed by the pending hook */
};

struct lds_tp_conn {
	struct lds_transport *tp;
	struct lds_tp_conn *next;       /* tp->conns */
	enum rdx_state state;
	struct rdma_cm_id *id;
	struct lds_tp_listener *l;      /* RS_ACCEPTING: the listener it came to */
	void *ud;
	int pdi;                        /* tp->pd index of the conn's device */
	struct rdx_conf conf;
	struct ibv_comp_channel *cc;
	struct ibv_cq *cq;
	unsigned cq_events;             /* got, not yet acked (ibv_ack_cq_events in batches) */
	uint64_t deadline_ns;           /* connecting: fails with -ETIMEDOUT past this (monotonic) */
	struct rdx_pool rx, tx;         /* receive buffers, send slots; mr: their registrations */
	struct rdx_pool wr;             /* the write ring (one buffer, remote write), if any */
	struct rdx_wspace ws;           /* both write rings' space */
	enum rdx_way way;               /* how the message being sent goes: RDX_WAY_WRITE or sends */
	uint32_t max_sge;               /* the send queue's gather list */
	uint32_t inline_max;            /* what the queue pair allows inline */
	size_t chunk;                   /* payload bytes per chunk: both sides' buffers minus a header */
	struct rdx_credit cr;
	struct rdx_sendq sq;
	struct rdx_chunker ck;
	struct rdx_recvq rq;            /* received, not yet done with by the core */
	int want_w, no_read;
	int err;                        /* the conn is broken: -errno for recv_msg and send_msg */
	int eof;                        /* the peer disconnected */
	int silent;                     /* never handed to the core: freed with no closed upcall */
	uint64_t sent_bytes;
	char peer[64];
};

struct lds_tp_listener {
	struct lds_transport *tp;
	struct lds_tp_listener *next;   /* tp->listeners */
	struct rdma_cm_id *id;
	struct rdx_conf conf;           /* accepted conns' settings: o->conf or the defaults */
	int paused;
	void *ud;
};

/* rdx_data.c */
/* Posts every receive buffer; 0 or -errno. */
int rdx_data_start(struct lds_tp_conn *c);
/* The completion channel's fd callback. */
void rdx_data_cq_event(int fd, unsigned events, void *arg);
/* Drains the completion queue, re-arms it and drains again; then the
 * upcalls due.  Returns > 0 while work remains for the next round. */
int rdx_data_progress(struct lds_tp_conn *c);
int rdx_send_msg(struct lds_tp_conn *c, const struct iovec *iov, int iovcnt, void *const *desc, void *ctx);
int rdx_recv_msg(struct lds_tp_conn *c, struct lds_tp_msg *m);
void rdx_msg_done(struct lds_tp_conn *c, struct lds_tp_msg *m);
int rdx_mem_reg(struct lds_transport *tp, void *addr, size_t len, void **desc);
void rdx_mem_dereg(struct lds_transport *tp, void *desc);
void rdx_want_write(struct lds_tp_conn *c, int on);
void rdx_want_read(struct lds_tp_conn *c, int on);
int rdx_query(struct lds_tp_conn *c, struct lds_tp_info *info);

#endif
