/*
 * sbtest.h - what the send buffer's tests (check_sendbuf*.c) share:
 * messages of known bytes, ACKs, the blocks handed out, the calls of a
 * callback.
 */
#ifndef LDS_TEST_SBTEST_H
#define LDS_TEST_SBTEST_H

#include <stddef.h>
#include <stdint.h>

#include "ldsd/sendbuf.h"
#include "ldsd/wire.h"
#include "testrng.h"

#define SRC "clusterA/src"
#define DST "clusterB/dst"
/* Record header with SRC and DST: WIRE_REC_FIXED + 12 + 12 bytes. */
#define RHL (WIRE_REC_FIXED + 24u)

void mkrec(struct wire_record *r, uint32_t len, uint64_t id);
/* Appends a message of len payload bytes (filled from id) and returns
 * sendbuf_append's result. */
int append(struct sendbuf *sb, uint32_t len, uint64_t id, uint64_t client);
/* sendbuf_ack of an ACK with recv_cum and window_end only. */
int ack(struct sendbuf *sb, uint64_t recv_cum, uint64_t window_end);

/* Records the (client, id) pairs a callback was called with. */
struct calls {
	size_t n;
	uint64_t client[256];
	uint64_t id[256];
};
/* Callback (arg: a struct calls) noting m's client and id. */
void record_call(void *arg, const struct sb_msg *m);

/* Takes the next block and checks it is seq. */
struct sb_block *take(struct sendbuf *sb, int stream, int partial, uint64_t seq);

/* A buffer of 256-byte blocks holding nblocks full blocks: each message
 * is exactly one block (RHL + 216 payload bytes). */
#define BS 256u
void fill_blocks(struct sendbuf *sb, unsigned nblocks, uint64_t first_id);

#endif
