/*
 * fuzz_rdma.c - libFuzzer target for what the RDMA transport reads from a
 * peer without a device in the way: the connection manager's private
 * data and a sequence of received messages, decoded (rdx_proto.c) and
 * fed to the credit accounting (rdx_credit.c) and the reassembly
 * (rdx_chunk.c) as rdx_data.c does.  Input: 12 bytes of private data,
 * then messages as a 16-bit big-endian length and that many bytes, each
 * copied into an exactly-sized buffer so that a read past it shows under
 * ASan.  Checks: an accepted header re-encodes to the same bytes, a
 * reassembled frame is exactly its announced total, credits never exceed
 * the peer's depth, and the conn ends at the first error as it would.
 */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "transports/rdma/rdx_chunk.h"
#include "transports/rdma/rdx_credit.h"
#include "transports/rdma/rdx_proto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)
#define MAX_MSG (1u << 20)

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	struct rp_priv peer;
	struct rdx_credit cr;
	struct rdx_reasm ra = { 0 };
	size_t at = RP_PRIV_LEN;

	if (size < RP_PRIV_LEN || rp_priv_decode(data, RP_PRIV_LEN, &peer) < 0)
		return 0;
	rdx_credit_init(&cr, 16, peer.depth);
	while (at + 2 <= size) {
		size_t n = (size_t)data[at] << 8 | data[at + 1];
		uint8_t *m, re[RP_HDR_LEN], *msg;
		struct rp_hdr h;
		size_t len;
		int r;

		at += 2;
		if (n > size - at)
			break;
		m = malloc(n ? n : 1);
		CHECK(m != NULL);
		memcpy(m, data + at, n);
		at += n;
		r = rp_hdr_decode(m, n, MAX_MSG, &h);
		if (r == 0) {
			rp_hdr_encode(&h, re);
			CHECK(memcmp(re, m, RP_HDR_LEN) == 0);
			r = rdx_credit_arrived(&cr);
		}
		if (r == 0)
			r = rdx_credit_heard(&cr, h.credits);
		if (r == 0) {
			CHECK(rdx_credit_avail(&cr) <= peer.depth);
			if (h.type == RP_DATA && (r = rdx_reasm_whole(&ra, &h)) == 0) {
				r = rdx_reasm_add(&ra, &h, m + RP_HDR_LEN, &msg, &len);
				if (r == 1) {
					CHECK(len == h.total);
					free(msg);
				}
			}
			/* The buffer is posted again at once (the core is done). */
			if (r >= 0)
				CHECK(rdx_credit_release(&cr, 1) == 0);
		}
		free(m);
		if (r < 0)
			break;   /* the conn ends */
	}
	rdx_reasm_fini(&ra);
	return 0;
}
