/* check_sendbuf.c - unit tests of the sending half of a link (ldsd/sendbuf.c):
 * appending messages and the blocks they make.  Sending, deliveries and
 * resets: check_sendbuf_send.c; acknowledgements: check_sendbuf_ack.c. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/sendbuf.h"
#include "ldsd/wire.h"
#include "sbtest.h"
#include "suites.h"

/* ---- init and append ------------------------------------------------- */

START_TEST(init_sizes)
{
	struct sendbuf sb;

	ck_assert_int_eq(sendbuf_init(&sb, 1000, 4500), 0);
	ck_assert_uint_eq(sb.block_size, 1000);
	ck_assert_uint_eq(sb.nslots, 4);
	ck_assert_uint_eq(sb.mem, 4000);
	ck_assert_uint_eq(sb.max_msgs, 64);
	ck_assert_uint_eq(sendbuf_space(&sb), 4000);
	ck_assert_uint_eq(sendbuf_unacked_bytes(&sb), 0);
	ck_assert_int_eq(sendbuf_idle(&sb), 1);
	ck_assert_uint_eq(sb.base, 0);
	ck_assert_uint_eq(sb.next, 0);
	ck_assert_uint_eq(sb.window_end, 0);
	ck_assert_int_eq(sb.open, 0);
	for (size_t i = 0; i < sb.nslots; i++) {
		ck_assert_int_eq(sb.slots[i].state, SB_FREE);
		ck_assert_int_eq(sb.slots[i].stream, -1);
	}
	ck_assert_ptr_null(sendbuf_next(&sb, 0, 1));
	sendbuf_free(&sb);

	ck_assert_int_eq(sendbuf_init(&sb, 4096, 1u << 20), 0);
	ck_assert_uint_eq(sb.nslots, 256);
	ck_assert_uint_eq(sb.mem, 1u << 20);
	ck_assert_uint_eq(sb.max_msgs, (1u << 20) / 256);
	ck_assert_uint_eq(sendbuf_space(&sb), 1u << 20);
	sendbuf_free(&sb);
	/* Freeing twice is harmless. */
	sendbuf_free(&sb);
}
END_TEST

START_TEST(append_accounting)
{
	struct sendbuf sb;

	ck_assert_int_eq(sendbuf_init(&sb, BS, 4 * BS), 0);
	ck_assert_int_eq(append(&sb, 100 - RHL, 1, 5), 0);      /* 100 bytes */
	ck_assert_uint_eq(sendbuf_space(&sb), 4 * BS - 100);
	ck_assert_uint_eq(sendbuf_unacked_bytes(&sb), 100);
	ck_assert_uint_eq(sb.next, 1);
	ck_assert_int_eq(sb.open, 1);
	ck_assert_int_eq(sb.slots[0].state, SB_OPEN);
	ck_assert_uint_eq(sb.slots[0].len, 100);
	ck_assert_uint_eq(sb.msg_next, 1);
	ck_assert_uint_eq(sb.msgs[0].client, 5);
	ck_assert_uint_eq(sb.msgs[0].id, 1);
	ck_assert_int_eq(sendbuf_idle(&sb), 0);

	ck_assert_int_eq(append(&sb, 240 - RHL, 2, 6), 0);      /* 240 bytes: 340 in all */
	ck_assert_uint_eq(sb.next, 2);
	ck_assert_int_eq(sb.slots[0].state, SB_READY);          /* sealed when full */
	ck_assert_uint_eq(sb.slots[0].len, BS);
	ck_assert_int_eq(sb.slots[1].state, SB_OPEN);
	ck_assert_uint_eq(sb.slots[1].len, 340 - BS);
	ck_assert_uint_eq(sendbuf_space(&sb), 4 * BS - 340);
	ck_assert_uint_eq(sendbuf_unacked_bytes(&sb), 340);
	ck_assert_uint_eq(sb.msg_next, 2);

	/* Exactly filling the open block seals it and opens nothing. */
	ck_assert_int_eq(append(&sb, 2 * BS - 340 - RHL, 3, 6), 0);
	ck_assert_uint_eq(sb.next, 2);
	ck_assert_int_eq(sb.open, 0);
	ck_assert_int_eq(sb.slots[1].state, SB_READY);
	ck_assert_uint_eq(sendbuf_space(&sb), 2 * BS);
	ck_assert_uint_eq(sendbuf_unacked_bytes(&sb), 2 * BS);

	/* Empty payloads are records too. */
	ck_assert_int_eq(append(&sb, 0, 4, 6), 0);
	ck_assert_uint_eq(sendbuf_space(&sb), 2 * BS - RHL);
	ck_assert_uint_eq(sb.msg_next, 4);
	sendbuf_free(&sb);
}
END_TEST

START_TEST(append_enospc)
{
	struct sendbuf sb;
	size_t space, next, msgs;
	int i;

	ck_assert_int_eq(sendbuf_init(&sb, BS, 4 * BS), 0);
	for (i = 0; i < 100; i++)
		if (append(&sb, 150 - RHL, (uint64_t)i, 1) != 0)
			break;
	ck_assert_int_eq(i, 4 * BS / 150);                       /* 6 fit, 900 bytes */
	space = sendbuf_space(&sb);
	ck_assert_uint_eq(space, 4 * BS - 6 * 150);
	next = sb.next;
	msgs = sb.msg_next;
	ck_assert_int_eq(append(&sb, 150 - RHL, 99, 1), -ENOSPC);
	/* A failed append changes nothing. */
	ck_assert_uint_eq(sendbuf_space(&sb), space);
	ck_assert_uint_eq(sb.next, next);
	ck_assert_uint_eq(sb.msg_next, msgs);
	ck_assert_uint_eq(sendbuf_unacked_bytes(&sb), 6 * 150);
	/* What still fits does. */
	ck_assert_int_eq(append(&sb, (uint32_t)(space - RHL), 100, 1), 0);
	ck_assert_uint_eq(sendbuf_space(&sb), 0);
	ck_assert_int_eq(append(&sb, 0, 101, 1), -ENOSPC);
	sendbuf_free(&sb);
}
END_TEST

/* A record of 16 blocks or more has its payload start a block, the block
 * its header ends in going short, so that the receiver can read every
 * block of the payload straight to its place; a smaller one follows on
 * at once.  Its bytes are where they belong either way. */
START_TEST(large_payload_starts_a_block)
{
	struct sendbuf sb;
	const uint32_t big = 16 * BS + 7;

	ck_assert_int_eq(sendbuf_init(&sb, BS, 64 * BS), 0);
	ck_assert_int_eq(append(&sb, 10, 1, 5), 0);
	ck_assert_int_eq(append(&sb, big, 2, 5), 0);
	/* Block 0: the first record and the second's header, sealed short. */
	ck_assert_uint_eq(sb.slots[0].len, 2 * RHL + 10);
	ck_assert_int_eq(sb.slots[0].state, SB_READY);
	for (int i = 1; i <= 16; i++) {
		ck_assert_uint_eq(sb.slots[i].len, BS);
		ck_assert_int_eq(sb.slots[i].state, SB_READY);
		for (uint32_t k = 0; k < BS; k += 61)
			ck_assert_uint_eq(sb.slots[i].data[k], (uint8_t)(2 * 31 + (uint32_t)(i - 1) * BS + k));
	}
	ck_assert_uint_eq(sb.slots[17].len, 7);
	ck_assert_int_eq(sb.slots[17].state, SB_OPEN);
	ck_assert_uint_eq(sb.slots[17].data[6], (uint8_t)(2 * 31 + 16 * BS + 6));
	/* One block short of 16: on at once, in the open block. */
	ck_assert_int_eq(append(&sb, 16 * BS - 1, 3, 5), 0);
	ck_assert_uint_eq(sb.slots[17].len, BS);
	ck_assert_uint_eq(sb.slots[17].data[7 + RHL], (uint8_t)(3 * 31));
	ck_assert_uint_eq(sendbuf_unacked_bytes(&sb), 3 * RHL + 10 + big + 16 * BS - 1);
	sendbuf_free(&sb);

	/* The room it may leave unfilled counts as taken: a block more than
	 * its bytes, and one kept free as for any record. */
	ck_assert_int_eq(sendbuf_init(&sb, BS, 18 * BS), 0);
	ck_assert_int_eq(append(&sb, 10, 1, 5), 0);
	ck_assert_int_eq(append(&sb, big, 2, 5), -EMSGSIZE);
	sendbuf_free(&sb);
	ck_assert_int_eq(sendbuf_init(&sb, BS, 19 * BS), 0);
	ck_assert_int_eq(append(&sb, 10, 1, 5), 0);
	ck_assert_int_eq(append(&sb, big, 2, 5), 0);
	ck_assert_uint_eq(sb.next, 18);
	sendbuf_free(&sb);
}
END_TEST

START_TEST(append_msg_table_full)
{
	struct sendbuf sb;
	struct wire_ack a;

	/* 4096 / 256 = 16 entries, raised to the floor of 64. */
	ck_assert_int_eq(sendbuf_init(&sb, 1024, 4096), 0);
	ck_assert_uint_eq(sb.max_msgs, 64);
	for (int i = 0; i < 64; i++)
		ck_assert_int_eq(append(&sb, 0, (uint64_t)i, 1), 0);
	ck_assert_uint_gt(sendbuf_space(&sb), RHL);
	ck_assert_int_eq(append(&sb, 0, 64, 1), -ENOSPC);
	ck_assert_uint_eq(sb.msg_next, 64);
	/* A delivery frees an entry. */
	memset(&a, 0, sizeof(a));
	a.deliv_cum = 1;
	ck_assert_int_eq(sendbuf_ack(&sb, &a, NULL, NULL), 0);
	ck_assert_uint_eq(sb.msg_base, 1);
	ck_assert_int_eq(append(&sb, 0, 64, 1), 0);
	ck_assert_uint_eq(sb.msgs[64 % 64].id, 64);
	ck_assert_int_eq(append(&sb, 0, 65, 1), -ENOSPC);
	sendbuf_free(&sb);
}
END_TEST

START_TEST(append_emsgsize_einval)
{
	struct sendbuf sb;
	struct wire_record r;
	uint8_t pay[8] = { 0 };

	ck_assert_int_eq(sendbuf_init(&sb, BS, 4 * BS), 0);
	/* Larger than all of memory: can never fit. */
	ck_assert_int_eq(append(&sb, 4 * BS - RHL + 1, 1, 1), -EMSGSIZE);
	ck_assert_int_eq(append(&sb, 100000, 1, 1), -EMSGSIZE);
	ck_assert_uint_eq(sb.next, 0);
	ck_assert_uint_eq(sb.msg_next, 0);
	/* mem - block_size bytes of record fit in an empty buffer. */
	ck_assert_int_eq(append(&sb, 3 * BS - RHL, 1, 1), 0);
	ck_assert_uint_eq(sb.next, 3);
	ck_assert_uint_eq(sendbuf_space(&sb), BS);
	/* Too big stays -EMSGSIZE (not -ENOSPC) when the buffer is busy. */
	ck_assert_int_eq(append(&sb, 4 * BS, 2, 1), -EMSGSIZE);
	/* Bad names. */
	mkrec(&r, 8, 3);
	snprintf(r.src, sizeof(r.src), "nocluster");
	ck_assert_int_eq(sendbuf_append(&sb, &r, pay, 1, NULL), -EINVAL);
	mkrec(&r, 8, 3);
	snprintf(r.dst, sizeof(r.dst), "clusterB/bad name");
	ck_assert_int_eq(sendbuf_append(&sb, &r, pay, 1, NULL), -EINVAL);
	ck_assert_uint_eq(sb.msg_next, 1);
	ck_assert_uint_eq(sendbuf_space(&sb), BS);
	sendbuf_free(&sb);
}
END_TEST

/* ---- block contents -------------------------------------------------- */

struct expect {
	uint32_t len;
	uint64_t id;
	uint8_t *data;
};

/* Checks one handed-out block's frame and appends its payload to out. */
static void check_block_frame(const struct sb_block *b, uint64_t seq, uint8_t *out, size_t *outlen, size_t cap)
{
	uint8_t frame[WIRE_DATA_HDR_LEN + 512];
	struct wire_frame f;
	size_t consumed = 0;
	uint64_t fseq = ~0ull;
	const uint8_t *data;
	uint32_t dlen;

	ck_assert_uint_eq(b->seq, seq);
	ck_assert_uint_ge(b->len, 1);
	ck_assert_uint_le(b->len, 512);
	memcpy(frame, b->hdr, WIRE_DATA_HDR_LEN);
	memcpy(frame + WIRE_DATA_HDR_LEN, b->data, b->len);
	ck_assert_int_eq(wire_frame_parse(frame, WIRE_DATA_HDR_LEN + b->len, &f, &consumed), 1);
	ck_assert_uint_eq(consumed, WIRE_DATA_HDR_LEN + b->len);
	ck_assert_uint_eq(f.type, WIRE_DATA);
	ck_assert_int_eq(wire_decode_data(&f, &fseq, &data, &dlen), 0);
	ck_assert_uint_eq(fseq, seq);
	ck_assert_uint_eq(dlen, b->len);
	ck_assert_mem_eq(data, b->data, b->len);
	/* The CRC covers the payload. */
	frame[WIRE_DATA_HDR_LEN + b->len - 1] ^= 0x40;
	ck_assert_int_eq(wire_frame_parse(frame, WIRE_DATA_HDR_LEN + b->len, &f, &consumed), -EBADMSG);

	ck_assert_uint_le(*outlen + b->len, cap);
	memcpy(out + *outlen, b->data, b->len);
	*outlen += b->len;
}

/* A sealed link's blocks carry no clear header: sealq.c makes the frame,
 * and the CRC pass is saved. */
START_TEST(no_hdr)
{
	static const uint8_t zero[WIRE_DATA_HDR_LEN];
	struct sendbuf sb;
	struct sb_block *b;

	ck_assert_int_eq(sendbuf_init(&sb, 512, 4 * 512), 0);
	sb.no_hdr = 1;
	ck_assert_int_eq(append(&sb, 100, 1, 1), 0);
	ck_assert_int_eq(ack(&sb, 0, 16), 0);
	b = sendbuf_next(&sb, 0, 1);
	ck_assert_ptr_nonnull(b);
	ck_assert_uint_eq(b->seq, 0);
	ck_assert_uint_eq(b->len, RHL + 100);
	ck_assert_mem_eq(b->hdr, zero, WIRE_DATA_HDR_LEN);
	sendbuf_release(&sb, b);
	sendbuf_free(&sb);
}
END_TEST

START_TEST(block_contents_roundtrip)
{
	enum { NMSG = 150, BSZ = 512 };
	struct sendbuf sb;
	struct expect *ex = calloc(NMSG, sizeof(*ex));
	size_t cap = (size_t)NMSG * (RHL + 3 * BSZ), outlen = 0, off;
	uint8_t *out = malloc(cap);
	uint64_t seq = 0;
	int appended = 0, guard;
	struct calls dl;

	ck_assert_ptr_nonnull(ex);
	ck_assert_ptr_nonnull(out);
	rng_state = 12345;
	for (int i = 0; i < NMSG; i++) {
		ex[i].len = rng() % (3 * BSZ + 1);
		ex[i].id = 1000 + (uint64_t)i * 7;
		ex[i].data = malloc(ex[i].len ? ex[i].len : 1);
		ck_assert_ptr_nonnull(ex[i].data);
		for (uint32_t k = 0; k < ex[i].len; k++)
			ex[i].data[k] = (uint8_t)rng();
	}
	/* Zero-length and maximal ones are certainly there. */
	ex[3].len = 0;
	ex[4].len = 3 * BSZ;
	ex[4].data = realloc(ex[4].data, 3 * BSZ);
	ck_assert_ptr_nonnull(ex[4].data);
	memset(ex[4].data, 0xA5, 3 * BSZ);

	ck_assert_int_eq(sendbuf_init(&sb, BSZ, 8 * BSZ), 0);
	ck_assert_int_eq(ack(&sb, 0, 2), 0);
	memset(&dl, 0, sizeof(dl));
	for (guard = 0; guard < 100000 && (appended < NMSG || !sendbuf_idle(&sb)); guard++) {
		struct sb_block *b;
		struct wire_ack a;

		while (appended < NMSG) {
			struct wire_record r;
			int ret;

			mkrec(&r, ex[appended].len, ex[appended].id);
			ret = sendbuf_append(&sb, &r, ex[appended].data, 42, NULL);
			if (ret == -ENOSPC)
				break;
			ck_assert_int_eq(ret, 0);
			appended++;
		}
		/* Partial blocks only now and then, or at the end. */
		b = sendbuf_next(&sb, (int)(rng() % 3), appended == NMSG || rng() % 4 == 0);
		if (b != NULL) {
			check_block_frame(b, seq, out, &outlen, cap);
			seq++;
			sendbuf_release(&sb, b);
		}
		/* The peer acknowledges everything sent and delivers every
		 * message wholly inside the acknowledged bytes; keep it
		 * simple: deliver all appended so far once acked. */
		memset(&a, 0, sizeof(a));
		a.recv_cum = seq;
		a.window_end = seq + 2;
		if (sb.open == 0 && seq == sb.next)
			a.deliv_cum = sb.msg_next;
		else
			a.deliv_cum = sb.msg_base;
		ck_assert_int_eq(sendbuf_ack(&sb, &a, record_call, &dl), 0);
	}
	ck_assert_int_eq(appended, NMSG);
	ck_assert_int_eq(sendbuf_idle(&sb), 1);
	ck_assert_uint_eq(sb.blocks_sent, seq);
	ck_assert_uint_eq(sb.blocks_acked, seq);
	ck_assert_uint_eq(sb.bytes_sent, outlen);
	ck_assert_uint_eq(sb.bytes_acked, outlen);
	ck_assert_uint_eq(sb.blocks_resent, 0);
	ck_assert_uint_eq(dl.n, NMSG);

	/* The concatenated blocks are the records, byte for byte. */
	off = 0;
	for (int i = 0; i < NMSG; i++) {
		struct wire_record r;
		int hl = wire_decode_record_hdr(out + off, outlen - off, &r);

		ck_assert_int_eq(hl, (int)RHL);
		ck_assert_uint_eq(r.len, ex[i].len);
		ck_assert_uint_eq(r.msg_id, ex[i].id);
		ck_assert_str_eq(r.src, SRC);
		ck_assert_str_eq(r.dst, DST);
		off += (size_t)hl;
		ck_assert_uint_le(off + r.len, outlen);
		ck_assert_mem_eq(out + off, ex[i].data, ex[i].len);
		off += r.len;
		ck_assert_uint_eq(dl.id[i], ex[i].id);
		ck_assert_uint_eq(dl.client[i], 42);
	}
	ck_assert_uint_eq(off, outlen);

	for (int i = 0; i < NMSG; i++)
		free(ex[i].data);
	free(ex);
	free(out);
	sendbuf_free(&sb);
}
END_TEST
/* sb_fill_fn for the tests: writes bytes i * 7 + 3 of the payload until
 * fail_at of them, then fails (fail_at beyond the payload: never). */
struct fill_test {
	size_t done, fail_at;
	int calls, regions;
};

static int fill_test(void *arg, struct sendbuf *sb, const struct iovec *iov, int n)
{
	struct fill_test *t = arg;

	(void)sb;
	t->calls++;
	t->regions = n;
	for (int k = 0; k < n; k++) {
		for (size_t i = 0; i < iov[k].iov_len; i++, t->done++) {
			if (t->done == t->fail_at)
				return -ECONNRESET;
			((uint8_t *)iov[k].iov_base)[i] = (uint8_t)(t->done * 7 + 3);
		}
	}
	return 0;
}

/* The payload goes straight into the blocks, region by region; a fill
 * that fails leaves no trace. */
START_TEST(append_from_fills_in_place)
{
	struct fill_test ok = { .fail_at = SIZE_MAX }, bad = { .fail_at = 500 };
	struct sendbuf sb;
	struct wire_record r;
	struct sb_block *b;
	size_t space;
	uint8_t *all;

	ck_assert_int_eq(sendbuf_init(&sb, BS, 8 * BS), 0);
	ck_assert_int_eq(append(&sb, 100 - RHL, 1, 1), 0);      /* block 0 open, 100 bytes */
	space = sendbuf_space(&sb);
	mkrec(&r, 3 * BS, 2);
	ck_assert_int_eq(sendbuf_append_from(&sb, &r, fill_test, &bad, 1, NULL), -ECONNRESET);
	ck_assert_uint_eq(sendbuf_space(&sb), space);
	ck_assert_uint_eq(sb.next, 1);
	ck_assert_int_eq(sb.open, 1);
	ck_assert_int_eq(sb.slots[0].state, SB_OPEN);
	ck_assert_uint_eq(sb.slots[0].len, 100);
	ck_assert_uint_eq(sb.msg_next, 1);
	ck_assert_uint_eq(sendbuf_unacked_bytes(&sb), 100);

	/* 100 + RHL + 3 * BS bytes: blocks 0-2 full and sealed, block 3
	 * open; the payload's regions are the rest of block 0, blocks 1 and
	 * 2, the start of block 3. */
	ck_assert_int_eq(sendbuf_append_from(&sb, &r, fill_test, &ok, 1, NULL), 0);
	ck_assert_int_eq(ok.calls, 1);
	ck_assert_int_eq(ok.regions, 4);
	ck_assert_uint_eq(ok.done, 3 * BS);
	ck_assert_uint_eq(sb.next, 4);
	ck_assert_int_eq(sb.open, 1);
	for (int i = 0; i < 3; i++)
		ck_assert_int_eq(sb.slots[i].state, SB_READY);
	ck_assert_int_eq(sb.slots[3].state, SB_OPEN);
	ck_assert_uint_eq(sb.slots[3].len, 100 + RHL);
	ck_assert_uint_eq(sb.msg_next, 2);
	/* The record stream is header then payload, and each sealed block's
	 * frame header checks out against its bytes. */
	all = malloc(4 * BS);
	ck_assert_ptr_nonnull(all);
	for (int i = 0; i < 4; i++)
		memcpy(all + i * BS, sb.slots[i].data, sb.slots[i].len);
	ck_assert_uint_eq(all[100], WIRE_REC_MAGIC);
	for (size_t i = 0; i < 3 * BS; i++)
		ck_assert_uint_eq(all[100 + RHL + i], (uint8_t)(i * 7 + 3));
	b = sendbuf_next(&sb, 0, 0);
	ck_assert_ptr_null(b);                                 /* no window yet */
	ck_assert_int_eq(ack(&sb, 0, 8), 0);
	b = sendbuf_next(&sb, 0, 0);
	ck_assert_ptr_nonnull(b);
	{
		uint8_t hdr[WIRE_DATA_HDR_LEN];

		wire_encode_data_hdr(hdr, b->seq, b->data, b->len);
		ck_assert_mem_eq(hdr, b->hdr, WIRE_DATA_HDR_LEN);
	}
	sendbuf_release(&sb, b);
	free(all);
	sendbuf_free(&sb);
}
END_TEST

/* Deferred regions (sendbuf_defer) for the tests: the payload is src's
 * bytes from where fill_defer left off; each region is deferred if it
 * may be, else copied; settles are counted by token. */
struct defer_test {
	struct sb_src own;
	const uint8_t *src;
	size_t done, fail_at;
	int deferred, copied, settled[16];
	struct sb_block *blk[16];
};

static void defer_settled(struct sb_src *own, uint32_t token)
{
	struct defer_test *t = (struct defer_test *)own;

	ck_assert_uint_lt(token, 16);
	t->settled[token]++;
}

static int fill_defer(void *arg, struct sendbuf *sb, const struct iovec *iov, int n)
{
	struct defer_test *t = arg;

	for (int k = 0; k < n; k++) {
		struct sb_block *b;

		if (t->done >= t->fail_at)
			return -ECONNRESET;
		b = sendbuf_defer(sb, iov[k].iov_base, t->src + t->done, iov[k].iov_len, &t->own,
				  (uint32_t)t->deferred);
		if (b != NULL)
			t->blk[t->deferred++] = b;
		else {
			memcpy(iov[k].iov_base, t->src + t->done, iov[k].iov_len);
			t->copied++;
		}
		t->done += iov[k].iov_len;
	}
	return 0;
}

/* A sealed link's payload may stay at its source: each block then says
 * where its bytes lie (its slot for the record headers, the source for
 * the payload), copies them in on demand, and lets the source go once -
 * when read, copied, undone or freed.  A clear link, a block beyond the
 * window or too far behind the next to send, or one with SB_DEFER_MAX
 * regions, copies instead. */
START_TEST(defer_regions)
{
	struct defer_test t = { .own = { defer_settled }, .fail_at = SIZE_MAX };
	uint8_t src[4 * BS], whole[BS];
	struct iovec v[2 * SB_DEFER_MAX + 1];
	struct wire_record r;
	struct sendbuf sb;
	size_t at = 0;
	int n;

	for (size_t i = 0; i < sizeof(src); i++)
		src[i] = (uint8_t)(i * 13 + 1);
	t.src = src;
	ck_assert_int_eq(sendbuf_init(&sb, BS, 8 * BS), 0);
	mkrec(&r, 20, 1);
	/* Clear (no_hdr 0), or no defer_min: copied. */
	ck_assert_int_eq(sendbuf_append_from(&sb, &r, fill_defer, &t, 1, NULL), 0);
	ck_assert_int_eq(t.copied, 1);
	sb.no_hdr = 1;
	ck_assert_int_eq(sendbuf_append_from(&sb, &r, fill_defer, &t, 1, NULL), 0);
	ck_assert_int_eq(t.copied, 2);
	/* Within window and reach: block 0 (open, 2 records in) gets a
	 * region at its offset 3 * RHL + 40. */
	sb.defer_min = 2;
	sendbuf_defer_tick(&sb);
	ck_assert_uint_eq(sb.defer_ahead, 2);
	ck_assert_int_eq(ack(&sb, 0, 8), 0);
	ck_assert_int_eq(sendbuf_append_from(&sb, &r, fill_defer, &t, 1, NULL), 0);
	ck_assert_int_eq(t.deferred, 1);
	ck_assert_ptr_eq(t.blk[0], &sb.slots[0]);
	ck_assert_uint_eq(sb.slots[0].ndefer, 1);
	ck_assert_uint_eq(sb.slots[0].defer[0].off, 3 * RHL + 40);
	ck_assert_uint_eq(sb.bytes_deferred, 20);
	/* Its sources: the slot (3 headers, 2 payloads), the region. */
	n = sendbuf_block_src(&sb.slots[0], v);
	ck_assert_int_eq(n, 2);
	ck_assert_ptr_eq(v[0].iov_base, sb.slots[0].data);
	ck_assert_uint_eq(v[0].iov_len, 3 * RHL + 40);
	ck_assert_ptr_eq(v[1].iov_base, src + 40);
	ck_assert_uint_eq(v[1].iov_len, 20);
	for (int i = 0; i < n; i++, at += v[i - 1].iov_len)
		memcpy(whole + at, v[i].iov_base, v[i].iov_len);
	ck_assert_uint_eq(at, sb.slots[0].len);
	/* Copied in: the same bytes in the slot, the source let go once. */
	sendbuf_materialize(&sb, &sb.slots[0]);
	ck_assert_mem_eq(sb.slots[0].data, whole, at);
	ck_assert_int_eq(t.settled[0], 1);
	ck_assert_uint_eq(sb.slots[0].ndefer, 0);
	ck_assert_uint_eq(sb.bytes_deferred_copied, 20);
	/* A failing fill lets go of what it deferred; space and blocks as
	 * before. */
	mkrec(&r, 2 * BS, 2);
	t.fail_at = t.done + BS;
	ck_assert_int_eq(sendbuf_append_from(&sb, &r, fill_defer, &t, 1, NULL), -ECONNRESET);
	ck_assert_int_ge(t.deferred, 2);
	for (int i = 1; i < t.deferred; i++)
		ck_assert_int_eq(t.settled[i], 1);
	ck_assert_uint_eq(sb.next, 1);
	ck_assert_uint_eq(sb.slots[0].ndefer, 0);
	/* The header fills block 0 to 4 bytes short, the payload then takes
	 * those, block 1 and 252 bytes of block 2: all within defer_ahead (2)
	 * of the next block to send (0). */
	t.fail_at = SIZE_MAX;
	t.done = 0;
	n = t.deferred;
	ck_assert_int_eq(sendbuf_append_from(&sb, &r, fill_defer, &t, 1, NULL), 0);
	ck_assert_int_eq(t.deferred - n, 3);
	ck_assert_uint_eq(sb.next, 3);
	/* Taken and sealed from its sources: settled, as the link does. */
	{
		struct sb_block *b = sendbuf_next(&sb, 0, 1);

		ck_assert_ptr_eq(b, &sb.slots[0]);
		sendbuf_block_settle(b);
		ck_assert_int_eq(t.settled[n], 1);
		sendbuf_release(&sb, b);
	}
	/* Blocks 3 and 4 lie beyond defer_ahead (1) of the next to send (1). */
	sb.defer_ahead = 1;
	/* A tick after 5 blocks went out reaches twice that; one after none,
	 * defer_min. */
	{
		struct sendbuf t2 = { .defer_min = 2, .blocks_sent = 5 };

		sendbuf_defer_tick(&t2);
		ck_assert_uint_eq(t2.defer_ahead, 10);
		sendbuf_defer_tick(&t2);
		ck_assert_uint_eq(t2.defer_ahead, 2);
	}
	n = t.copied;
	mkrec(&r, 300, 3);
	ck_assert_int_eq(sendbuf_append_from(&sb, &r, fill_defer, &t, 1, NULL), 0);
	ck_assert_int_eq(t.copied, n + 2);
	/* Freeing the buffer lets go of the rest. */
	sendbuf_free(&sb);
	for (int i = 0; i < t.deferred; i++)
		ck_assert_msg(t.settled[i] == 1, "region %d settled %d times", i, t.settled[i]);
}
END_TEST

Suite *make_sendbuf_suite(void)
{
	Suite *s = suite_create("sendbuf");
	TCase *ap = tcase_create("append");
	TCase *ct = tcase_create("contents");

	tcase_add_test(ap, init_sizes);
	tcase_add_test(ap, append_accounting);
	tcase_add_test(ap, append_enospc);
	tcase_add_test(ap, append_msg_table_full);
	tcase_add_test(ap, large_payload_starts_a_block);
	tcase_add_test(ap, append_emsgsize_einval);
	tcase_add_test(ap, append_from_fills_in_place);
	tcase_add_test(ap, defer_regions);
	suite_add_tcase(s, ap);

	tcase_add_test(ct, block_contents_roundtrip);
	tcase_add_test(ct, no_hdr);
	tcase_set_timeout(ct, 10);
	suite_add_tcase(s, ct);
	return s;
}
