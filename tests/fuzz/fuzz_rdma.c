/*
 * fuzz_rdma.c - libFuzzer target for what the RDMA transport reads from a
 * peer, without a device in the way: the connection manager's private
 * data (with its write ring), then received messages and RDMA writes with
 * immediate data through rdx_recvq (header, credits, reassembly, the
 * immediate, the write ring's placement and space, grants, the order
 * messages reach the core) exactly as rdx_data.c drives it, the core
 * reading each message at once.  Input: 28 bytes of private data, then
 * records of a 16-bit big-endian word n: without its top bit, a message of
 * n bytes follows, copied into an exactly-sized buffer so that a read past
 * it shows under ASan; with it, a write of n & 0x7fff bytes with the
 * 32-bit immediate that follows, which the adapter puts in our ring where
 * the immediate says (if inside it; else the queue pair would fail).
 * Our ring's grant is told whenever a credit-only message would carry it.
 * Checks: an accepted header re-encodes to the same bytes; what reaches
 * the core is 1..max bytes and a written frame lies inside the ring;
 * credits never exceed the peer's depth, nor its grant its ring; the conn
 * ends at the first error as it would.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transports/rdma/rdx_credit.h"
#include "transports/rdma/rdx_proto.h"
#include "transports/rdma/rdx_recvq.h"
#include "transports/rdma/rdx_wspace.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)
#define MAX_MSG (1u << 20)
#define DEPTH 16
#define RING RP_MIN_RING

static uint8_t ring[RING];

/* The core reads everything at once (a message kept in its receive
 * buffer is read before that buffer is reused). */
static int read_all(struct rdx_recvq *q, struct rdx_credit *cr)
{
	const uint8_t *d;
	size_t len;
	int64_t buf;
	int r = 0;

	while (r == 0 && rdx_recvq_peek(q, &d, &len) == 0) {
		CHECK(len >= 1 && len <= MAX_MSG);
		if (d >= ring && d < ring + RING)
			CHECK(len <= (size_t)(ring + RING - d));
		r = rdx_recvq_done(q, cr, &buf);
	}
	return r;
}

/* A write of n bytes at data with immediate imm: what the receive queue says. */
static int write_rec(struct rdx_recvq *q, struct rdx_credit *cr, uint32_t imm, const uint8_t *data, size_t n)
{
	uint32_t off;
	uint16_t credits;

	rp_imm_decode(imm, &credits, &off);
	if (off > RING || n > RING - off)
		return -1;   /* outside the registered ring: the adapter refuses it */
	memcpy(ring + off, data, n);
	return rdx_recvq_written(q, cr, imm, n);
}

/* A message of n bytes, in an exactly-sized buffer. */
static int msg_rec(struct rdx_recvq *q, struct rdx_credit *cr, const uint8_t *data, size_t n)
{
	uint8_t *m = malloc(n ? n : 1), re[RP_HDR_LEN];
	struct rp_hdr h;
	int repost, r;

	CHECK(m != NULL);
	memcpy(m, data, n);
	if (rp_hdr_decode(m, n, MAX_MSG, &h) == 0) {
		rp_hdr_encode(&h, re);
		CHECK(memcmp(re, m, RP_HDR_LEN) == 0);
	}
	r = rdx_recvq_arrived(q, cr, 0, m, n, &repost);
	if (r == 0)
		r = read_all(q, cr);
	free(m);
	return r;
}

/* One record at data[*at]: 0 handled, 1 the input is over, < 0 the conn ends. */
static int record(struct rdx_recvq *q, struct rdx_credit *cr, const uint8_t *data, size_t size, size_t *at)
{
	size_t n = (size_t)data[*at] << 8 | data[*at + 1];
	const uint8_t *p = data + *at + 2;
	int r;

	*at += 2;
	if (n & 0x8000) {
		n &= 0x7fff;
		if (size - *at < 4 + n)
			return 1;
		*at += 4 + n;
		r = write_rec(q, cr, (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3], p + 4, n);
		return r == 0 ? read_all(q, cr) : r;
	}
	if (n > size - *at)
		return 1;
	*at += n;
	return msg_rec(q, cr, p, n);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rp_priv peer;
	struct rdx_credit cr;
	struct rdx_wspace ws;
	struct rdx_recvq q;
	size_t at = RP_PRIV_LEN;

	if (size < RP_PRIV_LEN || rp_priv_decode(data, RP_PRIV_LEN, &peer) < 0)
		return 0;
	rdx_credit_init(&cr, DEPTH, peer.depth);
	rdx_wspace_init(&ws, ring, RING, 2048);
	rdx_wspace_peer(&ws, peer.ring_addr, peer.ring_rkey, peer.ring_size);
	CHECK(rdx_recvq_init(&q, DEPTH, MAX_MSG) == 0);
	CHECK(rdx_recvq_writes(&q, &ws) == 0);
	while (at + 2 <= size) {
		int r = record(&q, &cr, data, size, &at);

		CHECK(rdx_credit_avail(&cr) <= peer.depth);
		CHECK(ws.out.limit - ws.out.written <= ws.out.size);
		if (r != 0)
			break;   /* the input is over, or the conn ends */
		/* The grant a credit-only message of ours would carry. */
		if (rdx_wspace_update_due(&ws))
			(void)rdx_wspace_tell(&ws);
	}
	rdx_recvq_fini(&q);
	return 0;
}
