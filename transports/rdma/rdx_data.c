/*
 * rdx_data.c - the RDMA transport's data path: the core's messages out
 * as sends, chunks or RDMA writes with immediate data under credits
 * (rdx_wspace_way chooses), received ones up in order, completions and
 * the upcalls they bring (rdx_int.h).
 *
 * Sends are signalled as rdx_sendq says, and the completion queue is
 * shared by sends and receives; a work request's id says which: receives
 * carry RECV_WR and their buffer's index, sends their sequence in
 * rdx_sendq (an errored completion's opcode is undefined, so it cannot
 * tell).  Receive buffers stay posted or with the core; rdx_recvq says
 * when each goes back.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdx_int.h"

#define RECV_WR (1ull << 63)
#define CQ_BATCH 16          /* completions per poll */
#define CQ_ACK_BATCH 16      /* completion events acknowledged together */

static void flag(struct lds_tp_conn *c, int err)
{
	if (c->err == 0)
		c->err = err;
}

static int post_recv(struct lds_tp_conn *c, uint32_t i)
{
	struct ibv_sge sge = { .addr = (uintptr_t)rdx_pool_buf(&c->rx, i), .length = (uint32_t)c->rx.size,
			       .lkey = ((struct ibv_mr *)c->rx.mr)->lkey };
	struct ibv_recv_wr wr = { .wr_id = RECV_WR | i, .sg_list = &sge, .num_sge = 1 }, *bad;
	int r = ibv_post_recv(c->id->qp, &wr, &bad);

	return -r;
}

int rdx_data_start(struct lds_tp_conn *c)
{
	int64_t i;
	int r;

	while ((i = rdx_pool_take(&c->rx)) >= 0)
		if ((r = post_recv(c, (uint32_t)i)) < 0)
			return r;
	return 0;
}

/* How a message of len payload bytes goes (sendable: from registered
 * memory, in one work request beside a header slot). */
static enum rdx_way way(const struct lds_tp_conn *c, size_t len, int sendable)
{
	return rdx_wspace_way(&c->ws, len, sendable, c->chunk, c->inline_max);
}

/* The chunk's pieces into sge (the core's registered memory). */
static int gather(const struct lds_tp_conn *c, const struct rdx_chunk *ch, struct ibv_sge *sge)
{
	for (int i = 0; i < ch->nseg; i++) {
		const struct rdx_mreg *mr = ch->seg[i].desc;

		sge[i] = (struct ibv_sge){ .addr = (uintptr_t)ch->seg[i].base, .length = (uint32_t)ch->seg[i].len,
					   .lkey = mr->mr[c->pdi]->lkey };
	}
	return ch->nseg;
}

/* Posts wr, signalled as rdx_sendq says, and records it. */
static int post(struct lds_tp_conn *c, struct ibv_send_wr *wr, uint32_t slot, void *ctx)
{
	struct ibv_send_wr *bad;
	int sig = rdx_sendq_signal(&c->sq, ctx), r;

	wr->wr_id = c->sq.tail;
	wr->send_flags |= sig ? IBV_SEND_SIGNALED : 0;
	r = ibv_post_send(c->id->qp, wr, &bad);
	if (r != 0)
		return -r;
	rdx_sendq_push(&c->sq, slot, ctx, sig);
	return 0;
}

/* Posts one message from send slot `slot`: its header there, its payload
 * either there too (copied) or in the core's registered memory. */
static int post_send(struct lds_tp_conn *c, uint32_t slot, const struct rp_hdr *h, const struct rdx_chunk *ch,
		     void *ctx)
{
	uint8_t *buf = rdx_pool_buf(&c->tx, slot);
	struct ibv_sge sge[RDMA_CHUNK_IOV + 1];
	struct ibv_send_wr wr = { .sg_list = sge, .num_sge = 1, .opcode = IBV_WR_SEND };
	int inl = way(c, h->len, 0) == RDX_WAY_INLINE;

	rp_hdr_encode(h, buf);
	sge[0] = (struct ibv_sge){ .addr = (uintptr_t)buf, .length = RP_HDR_LEN, .lkey = ((struct ibv_mr *)c->tx.mr)->lkey };
	if (!inl && ch && ch->registered && (uint32_t)ch->nseg + 1 <= c->max_sge) {
		wr.num_sge += gather(c, ch, sge + 1);
	} else {
		if (ch)
			rdx_chunk_copy(ch, buf + RP_HDR_LEN);
		sge[0].length += h->len;
		wr.send_flags = inl ? IBV_SEND_INLINE : 0;
	}
	return post(c, &wr, slot, ctx);
}

/* Posts the message being sent as one RDMA write with immediate data into
 * the peer's ring: 1 posted, 0 waiting (ring space or a credit), or
 * -errno. */
static int post_write(struct lds_tp_conn *c)
{
	struct ibv_sge sge[RDMA_CHUNK_IOV];
	struct ibv_send_wr wr = { .sg_list = sge, .opcode = IBV_WR_RDMA_WRITE_WITH_IMM };
	struct rdx_wplace pl;
	struct rdx_chunk ch;
	uint16_t stamp;
	int r;

	if (rdx_wspace_place(&c->ws, c->ck.total, &pl) < 0 || rdx_credit_take(&c->cr, 1, &stamp) < 0)
		return 0;
	(void)rdx_chunker_next(&c->ck, c->ck.total, &ch);
	wr.num_sge = gather(c, &ch, sge);
	wr.imm_data = htonl(rp_imm_encode(stamp, pl.off));
	wr.wr.rdma.remote_addr = c->ws.peer_addr + pl.off;
	wr.wr.rdma.rkey = c->ws.peer_rkey;
	if ((r = post(c, &wr, RDX_NO_SLOT, c->ck.ctx)) < 0)
		return r;
	rdx_wspace_wrote(&c->ws, &pl);
	rdx_chunker_advance(&c->ck, &ch);
	c->sent_bytes += ch.len;
	return 1;
}

/* Posts what credits, ring space and send slots allow: the message being
 * sent (a write, or chunks), then a credit-only message if grants are
 * due. */
static void pump(struct lds_tp_conn *c)
{
	while (c->state == RS_UP && c->err == 0 && !rdx_sendq_full(&c->sq) && c->tx.nfree > 0) {
		struct rdx_chunk ch;
		struct rp_hdr h = { 0 };
		int64_t slot;
		int write = rdx_chunker_busy(&c->ck) && c->way == RDX_WAY_WRITE;
		int data = !write && rdx_chunker_busy(&c->ck) && rdx_credit_take(&c->cr, 1, &h.credits) == 0;
		int r = write ? post_write(c) : 0;

		if (r > 0)
			continue;
		if (r < 0) {
			flag(c, r);
			return;
		}
		if (!data && ((!rdx_credit_update_due(&c->cr) && !rdx_wspace_update_due(&c->ws)) ||
			      rdx_credit_take(&c->cr, 0, &h.credits) < 0))
			return;
		slot = rdx_pool_take(&c->tx);
		if (data) {
			(void)rdx_chunker_next(&c->ck, c->chunk, &ch);
			h.type = RP_DATA;
			h.flags = ch.flags;
			h.len = (uint32_t)ch.len;
			h.total = (uint32_t)c->ck.total;
			r = post_send(c, (uint32_t)slot, &h, &ch, ch.flags & RP_F_LAST ? c->ck.ctx : NULL);
			if (r == 0) {
				rdx_chunker_advance(&c->ck, &ch);
				c->sent_bytes += ch.len;
			}
		} else {
			h.type = RP_CREDIT;
			h.total = rdx_wspace_tell(&c->ws);
			r = post_send(c, (uint32_t)slot, &h, NULL, NULL);
		}
		if (r < 0) {
			(void)rdx_pool_give(&c->tx, (uint32_t)slot);
			flag(c, r);
		}
	}
}

int rdx_send_msg(struct lds_tp_conn *c, const struct iovec *iov, int iovcnt, void *const *desc, void *ctx)
{
	int r;

	if (c->err)
		return c->err;
	if (c->state != RS_UP || c->eof)
		return -EPIPE;
	if (rdx_chunker_busy(&c->ck))
		return -EAGAIN;
	r = rdx_chunker_start(&c->ck, iov, iovcnt, desc, ctx, RDMA_MAX_MSG);
	if (r < 0)
		return r;
	c->way = way(c, c->ck.total, rdx_chunker_registered(&c->ck, c->max_sge));
	pump(c);
	return 0;
}

/* A message arrived in receive buffer i, or the completion of a write
 * into our ring took it. */
static void recv_one(struct lds_tp_conn *c, const struct ibv_wc *wc)
{
	uint32_t i = (uint32_t)(wc->wr_id & ~RECV_WR);
	int repost = 1, r;

	if (wc->opcode == IBV_WC_RECV_RDMA_WITH_IMM)
		r = rdx_recvq_written(&c->rq, &c->cr, ntohl(wc->imm_data), wc->byte_len);
	else
		r = rdx_recvq_arrived(&c->rq, &c->cr, i, rdx_pool_buf(&c->rx, i), wc->byte_len, &repost);

	if (r == 0 && repost)
		r = post_recv(c, i);
	if (r < 0)
		flag(c, r);
}

int rdx_recv_msg(struct lds_tp_conn *c, struct lds_tp_msg *m)
{
	if (rdx_recvq_peek(&c->rq, &m->data, &m->len) == 0) {
		m->tp_priv = NULL;
		return 0;
	}
	if (c->err)
		return c->err;
	return c->eof || c->state != RS_UP ? -EPIPE : -EAGAIN;
}

void rdx_msg_done(struct lds_tp_conn *c, struct lds_tp_msg *m)
{
	int64_t buf;
	int r = rdx_recvq_done(&c->rq, &c->cr, &buf);

	if (r == -EINVAL)
		return;   /* nothing was out */
	if (r == 0 && buf >= 0 && c->state == RS_UP)
		r = post_recv(c, (uint32_t)buf);
	if (r < 0)
		flag(c, r);
	pump(c);
}

/* One completion; upcalls (sent) may close the conn. */
static void complete(struct lds_tp_conn *c, const struct ibv_wc *wc)
{
	struct rdx_sendq_done d;
	int ok = wc->status == IBV_WC_SUCCESS;

	/* After the peer's disconnect, what was posted comes back flushed:
	 * the end of the conn (-EPIPE), not an error. */
	if (!ok && !(c->eof && wc->status == IBV_WC_WR_FLUSH_ERR))
		flag(c, wc->status == IBV_WC_WR_FLUSH_ERR ? -ECONNRESET : -EIO);
	if (wc->wr_id & RECV_WR) {
		if (ok && c->err == 0)
			recv_one(c, wc);
		return;
	}
	if (rdx_sendq_complete(&c->sq, wc->wr_id, ok) < 0) {
		flag(c, -EPROTO);
		return;
	}
	/* It retires the unsignalled sends before it too. */
	while (c->state == RS_UP && rdx_sendq_pop(&c->sq, &d) == 1) {
		if (d.slot != RDX_NO_SLOT)
			(void)rdx_pool_give(&c->tx, d.slot);
		if (d.ctx && c->tp->up.sent)
			c->tp->up.sent(c, d.ctx, c->ud);
	}
}

/* Handles what the completion queue holds; stops if an upcall closed c. */
static void drain(struct lds_tp_conn *c)
{
	struct ibv_wc wc[CQ_BATCH];
	int n;

	do {
		n = ibv_poll_cq(c->cq, CQ_BATCH, wc);
		for (int i = 0; i < n && c->state == RS_UP; i++)
			complete(c, &wc[i]);
	} while (n == CQ_BATCH && c->state == RS_UP);
	if (n < 0)
		flag(c, -EIO);
}

int rdx_data_progress(struct lds_tp_conn *c)
{
	struct lds_transport *tp = c->tp;
	int readable;

	/* Drain, re-arm, drain again: a completion that came between the
	 * first drain and the re-arm raises no event. */
	drain(c);
	if (c->state == RS_UP && ibv_req_notify_cq(c->cq, 0) != 0)
		flag(c, -EIO);
	drain(c);
	pump(c);
	readable = !c->no_read && !c->rq.out && (c->rq.n > 0 || c->err || c->eof);
	if (c->state == RS_UP && readable)
		tp->up.readable(c, c->ud);
	if (c->state == RS_UP && c->want_w && !rdx_chunker_busy(&c->ck) && c->err == 0 && !c->eof)
		tp->up.writable(c, c->ud);
	/* Messages still queued for a reader: hand them up next round. */
	return c->state == RS_UP && !c->no_read && !c->rq.out && c->rq.n > 0;
}

void rdx_data_cq_event(int fd, unsigned events, void *arg)
{
	struct lds_tp_conn *c = arg;
	struct ibv_cq *cq;
	void *ctx;

	while (ibv_get_cq_event(c->cc, &cq, &ctx) == 0)
		c->cq_events++;
	if (c->cq_events >= CQ_ACK_BATCH) {
		ibv_ack_cq_events(c->cq, c->cq_events);
		c->cq_events = 0;
	}
	if (c->state == RS_UP)
		(void)rdx_data_progress(c);
	else if (c->state != RS_DEAD)
		(void)ibv_req_notify_cq(c->cq, 0);   /* the pending hook polls it once the conn is up */
}

int rdx_mem_reg(struct lds_transport *tp, void *addr, size_t len, void **desc)
{
	struct rdx_mreg *m = calloc(1, sizeof(*m) + (size_t)tp->ndevs * sizeof(m->mr[0]));
	int r = 0;

	if (m == NULL)
		return -ENOMEM;
	/* Every device's: a conn may come on any of them. */
	for (m->n = 0; m->n < tp->ndevs; m->n++) {
		m->mr[m->n] = ibv_reg_mr(tp->pd[m->n], addr, len, IBV_ACCESS_LOCAL_WRITE);
		if (m->mr[m->n] == NULL) {
			r = errno ? -errno : -ENOMEM;
			rdx_mem_dereg(tp, m);
			return r;
		}
	}
	*desc = m;
	return 0;
}

void rdx_mem_dereg(struct lds_transport *tp, void *desc)
{
	struct rdx_mreg *m = desc;

	for (int i = 0; i < m->n; i++)
		ibv_dereg_mr(m->mr[i]);
	free(m);
}

void rdx_want_write(struct lds_tp_conn *c, int on)
{
	c->want_w = !!on;
}

void rdx_want_read(struct lds_tp_conn *c, int on)
{
	c->no_read = !on;
}

int rdx_query(struct lds_tp_conn *c, struct lds_tp_info *info)
{
	memset(info, 0, sizeof(*info));
	info->bytes_sent = c->sent_bytes;
	info->bytes_recv = c->rq.bytes;
	snprintf(info->peer, sizeof(info->peer), "%s", c->peer);
	return 0;
}
