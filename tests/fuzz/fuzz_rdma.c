/*
 * fuzz_rdma.c - libFuzzer target for what the RDMA transport reads from a
 * peer, without a device in the way: the connection manager's private
 * data, then received messages through rdx_recvq (header, credits,
 * reassembly, the order messages reach the core) exactly as rdx_data.c
 * drives it, the core reading each message at once.  Input: 12 bytes of
 * private data, then messages as a 16-bit big-endian length and that many
 * bytes, each copied into an exactly-sized buffer so that a read past it
 * shows under ASan.  Checks: an accepted header re-encodes to the same
 * bytes, what reaches the core is 1..max bytes, credits never exceed the
 * peer's depth, and the conn ends at the first error as it would.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transports/rdma/rdx_credit.h"
#include "transports/rdma/rdx_proto.h"
#include "transports/rdma/rdx_recvq.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)
#define MAX_MSG (1u << 20)
#define DEPTH 16

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rp_priv peer;
	struct rdx_credit cr;
	struct rdx_recvq q;
	size_t at = RP_PRIV_LEN;

	if (size < RP_PRIV_LEN || rp_priv_decode(data, RP_PRIV_LEN, &peer) < 0)
		return 0;
	rdx_credit_init(&cr, DEPTH, peer.depth);
	CHECK(rdx_recvq_init(&q, DEPTH, MAX_MSG) == 0);
	while (at + 2 <= size) {
		size_t n = (size_t)data[at] << 8 | data[at + 1], len;
		uint8_t *m, re[RP_HDR_LEN];
		const uint8_t *d;
		struct rp_hdr h;
		int64_t buf;
		int repost, r;

		at += 2;
		if (n > size - at)
			break;
		m = malloc(n ? n : 1);
		CHECK(m != NULL);
		memcpy(m, data + at, n);
		at += n;
		if (rp_hdr_decode(m, n, MAX_MSG, &h) == 0) {
			rp_hdr_encode(&h, re);
			CHECK(memcmp(re, m, RP_HDR_LEN) == 0);
		}
		r = rdx_recvq_arrived(&q, &cr, 0, m, n, &repost);
		CHECK(rdx_credit_avail(&cr) <= peer.depth);
		/* The core reads everything at once; buffers go back. */
		while (r == 0 && rdx_recvq_peek(&q, &d, &len) == 0) {
			CHECK(len >= 1 && len <= MAX_MSG);
			r = rdx_recvq_done(&q, &cr, &buf);
		}
		free(m);
		if (r < 0)
			break;   /* the conn ends */
	}
	rdx_recvq_fini(&q);
	return 0;
}
