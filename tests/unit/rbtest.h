/*
 * rbtest.h - what the receive buffer's tests (check_recvbuf*.c) share: a
 * sender's record stream cut into blocks and fed in, the messages handed
 * out, the ACK's delivery part.
 */
#ifndef LDS_TEST_RBTEST_H
#define LDS_TEST_RBTEST_H

#include <stddef.h>
#include <stdint.h>

#include "ldsd/recvbuf.h"
#include "ldsd/wire.h"
#include "testrng.h"

#define MAXM 256
/* Record header of the test streams: WIRE_REC_FIXED + "clusterA/sNNN" + "clusterB/dNNN". */
#define RHL (WIRE_REC_FIXED + 26u)

/* A record byte stream of n messages, as the sender would produce it. */
struct tstream {
	size_t n, len;
	uint8_t *buf;
	struct wire_record rec[MAXM];
	size_t start[MAXM];        /* offset of the record header */
	size_t end[MAXM];          /* offset just past the payload */
};

/* lens == NULL: random payload lengths 0..maxlen. */
void ts_build(struct tstream *s, size_t n, const uint32_t *lens, uint32_t maxlen, uint64_t id0);
void ts_free(struct tstream *s);
uint64_t nblocks(const struct tstream *s, size_t bs);

/* Messages handed out by recvbuf_block. */
struct got {
	struct recvbuf *rb;
	const struct tstream *ts;  /* when set, checked on arrival */
	uint32_t epoch;
	int deliver_now;           /* recvbuf_delivered right in the callback */
	size_t n;
	struct rb_msg *m[MAXM];
};

/* Checks that m is message i of s, of epoch. */
void check_msg(const struct tstream *s, const struct rb_msg *m, size_t i, uint32_t epoch);
/* 1 if m's payload from byte off on, read through rb_msg_iov, is the same
 * bytes of want (the whole payload as it should be). */
int msg_matches(const struct rb_msg *m, size_t off, const uint8_t *want);
/* recvbuf_block's callback (arg: a struct got). */
void collect(void *arg, struct rb_msg *m);
void got_init(struct got *g, struct recvbuf *rb, const struct tstream *ts);
/* Marks every kept message delivered. */
void got_deliver_all(struct got *g);
/* Feeds block seq (of size bs) of s, collecting into g. */
int feed(struct recvbuf *rb, const struct tstream *s, size_t bs, uint64_t seq, struct got *g);
/* Messages wholly inside the first `have` bytes of the stream. */
size_t complete_in(const struct tstream *s, size_t have);
/* Payload bytes of messages from..to (to excluded). */
uint64_t payload_sum(const struct tstream *s, size_t from, size_t to);
/* recvbuf_ack into *a, whose delivery part must be deliv_cum cum and the
 * ranges of spec, "5-6 7-10" (start-end, end excluded; "": none). */
void ack_deliv_is(struct recvbuf *rb, struct wire_ack *a, uint64_t cum, const char *spec);
/* recvbuf_ack into *a, checking its window. */
void open_window(struct recvbuf *rb, struct wire_ack *a);

#endif
