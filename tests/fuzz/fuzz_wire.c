/*
 * fuzz_wire.c - libFuzzer target for the gateway frame and record codecs
 * (ldsd/wire.c) and the client protocol decoder (libclient/clientproto.c).
 *
 * Besides "no crash, no out-of-bounds read", it checks that every frame a
 * decoder accepts re-encodes to exactly the same bytes and that the
 * re-encoding decodes to the same values: the encodings are canonical, so
 * any difference is a codec bug.  Inputs are copied into exactly-sized heap
 * buffers so that a read one byte too far shows under ASan.
 */
#include <errno.h>
#include <stdint.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/crc32c.h"
#include "ldsd/execmsg.h"
#include "ldsd/wire.h"
#include "libclient/clientproto.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

/* Room for any frame the encoders can produce except DATA. */
#define ENC_CAP 4096

static uint8_t *dup_exact(const uint8_t *p, size_t n)
{
	uint8_t *q = malloc(n ? n : 1);

	CHECK(q != NULL);
	if (n)
		memcpy(q, p, n);
	return q;
}

/* Parses buf as one whole frame of the given type. */
static void parse_exact(const uint8_t *buf, size_t n, uint8_t type, struct wire_frame *f)
{
	size_t used = 0;

	CHECK(wire_frame_parse(buf, n, f, &used) == 1);
	CHECK(used == n && f->type == type);
}

static void same_hello(const struct wire_hello *a, const struct wire_hello *b)
{
	CHECK(a->stream_idx == b->stream_idx && a->nstreams == b->nstreams);
	CHECK(a->max_msg == b->max_msg && a->instance == b->instance);
	CHECK(memcmp(a->nonce, b->nonce, WIRE_NONCE_LEN) == 0 && a->encryption == b->encryption);
	CHECK(strcmp(a->from, b->from) == 0 && strcmp(a->to, b->to) == 0);
}

static void same_challenge(const struct wire_challenge *a, const struct wire_challenge *b)
{
	CHECK(a->max_msg == b->max_msg && a->instance == b->instance);
	CHECK(memcmp(a->nonce, b->nonce, WIRE_NONCE_LEN) == 0);
	CHECK(memcmp(a->mac, b->mac, WIRE_MAC_LEN) == 0 && a->encryption == b->encryption);
	CHECK(strcmp(a->from, b->from) == 0);
}

static void same_ack(const struct wire_ack *a, const struct wire_ack *b)
{
	CHECK(a->recv_cum == b->recv_cum && a->window_end == b->window_end);
	CHECK(a->deliv_cum == b->deliv_cum);
	CHECK(a->nsack == b->nsack && a->ndeliv == b->ndeliv);
	CHECK(memcmp(a->sack, b->sack, a->nsack * sizeof(a->sack[0])) == 0);
	CHECK(memcmp(a->deliv, b->deliv, a->ndeliv * sizeof(a->deliv[0])) == 0);
}

/* The re-encoding must be the original frame, byte for byte. */
static void same_bytes(const struct wire_frame *f, const uint8_t *enc, size_t n)
{
	CHECK(n == WIRE_HDR_LEN + (size_t)f->len);
	CHECK(memcmp(enc + WIRE_HDR_LEN, f->payload, f->len) == 0);
	CHECK(memcmp(enc, f->payload - WIRE_HDR_LEN, WIRE_HDR_LEN) == 0);
}

static void check_hello(const struct wire_frame *f, uint8_t *enc)
{
	struct wire_hello a, b;
	struct wire_frame g;
	size_t n;

	if (wire_decode_hello(f, &a) != 0)
		return;
	n = wire_encode_hello(enc, ENC_CAP, &a);
	same_bytes(f, enc, n);
	parse_exact(enc, n, WIRE_HELLO, &g);
	CHECK(wire_decode_hello(&g, &b) == 0);
	same_hello(&a, &b);
}

static void check_challenge(const struct wire_frame *f, uint8_t *enc)
{
	struct wire_challenge a, b;
	struct wire_frame g;
	size_t n;

	if (wire_decode_challenge(f, &a) != 0)
		return;
	n = wire_encode_challenge(enc, ENC_CAP, &a);
	same_bytes(f, enc, n);
	parse_exact(enc, n, WIRE_CHALLENGE, &g);
	CHECK(wire_decode_challenge(&g, &b) == 0);
	same_challenge(&a, &b);
}

static void check_auth(const struct wire_frame *f, uint8_t *enc)
{
	struct wire_auth a, b;
	struct wire_frame g;
	size_t n;

	if (wire_decode_auth(f, &a) != 0)
		return;
	n = wire_encode_auth(enc, ENC_CAP, &a);
	same_bytes(f, enc, n);
	parse_exact(enc, n, WIRE_AUTH, &g);
	CHECK(wire_decode_auth(&g, &b) == 0);
	CHECK(memcmp(a.mac, b.mac, WIRE_MAC_LEN) == 0);
}

/* READY has no decoder; only an empty one re-encodes the same. */
static void check_ready(const struct wire_frame *f, uint8_t *enc)
{
	struct wire_frame g;
	size_t n;

	if (f->len != 0)
		return;
	n = wire_encode_ready(enc, ENC_CAP);
	same_bytes(f, enc, n);
	parse_exact(enc, n, WIRE_READY, &g);
	CHECK(g.len == 0);
}

static void check_refuse(const struct wire_frame *f, uint8_t *enc)
{
	struct wire_refuse_msg a, b;
	struct wire_frame g;
	size_t n;

	if (wire_decode_refuse(f, &a) != 0)
		return;
	n = wire_encode_refuse(enc, ENC_CAP, &a);
	same_bytes(f, enc, n);
	parse_exact(enc, n, WIRE_REFUSE, &g);
	CHECK(wire_decode_refuse(&g, &b) == 0);
	CHECK(a.code == b.code && strcmp(a.reason, b.reason) == 0);
}

static void check_ack(const struct wire_frame *f, uint8_t *enc)
{
	struct wire_ack a, b;
	struct wire_frame g;
	size_t n;

	if (wire_decode_ack(f, &a) != 0)
		return;
	n = wire_encode_ack(enc, ENC_CAP, &a);
	same_bytes(f, enc, n);
	parse_exact(enc, n, WIRE_ACK, &g);
	CHECK(wire_decode_ack(&g, &b) == 0);
	same_ack(&a, &b);
}

static void check_ping(const struct wire_frame *f, uint8_t *enc)
{
	struct wire_frame g;
	uint64_t a, b;
	size_t n;

	if (wire_decode_ping(f, &a) != 0)
		return;
	n = wire_encode_ping(enc, ENC_CAP, (enum wire_type)f->type, a);
	same_bytes(f, enc, n);
	parse_exact(enc, n, f->type, &g);
	CHECK(wire_decode_ping(&g, &b) == 0 && a == b);
}

static void check_bye(const struct wire_frame *f, uint8_t *enc)
{
	struct wire_frame g;
	uint16_t a, b;
	size_t n;

	if (wire_decode_bye(f, &a) != 0)
		return;
	n = wire_encode_bye(enc, ENC_CAP, a);
	same_bytes(f, enc, n);
	parse_exact(enc, n, WIRE_BYE, &g);
	CHECK(wire_decode_bye(&g, &b) == 0 && a == b);
}

/* DATA is re-encoded the way ldsd sends it: header, then the block
 * appended without going through an encoder. */
static void check_data(const struct wire_frame *f)
{
	struct wire_frame g;
	const uint8_t *blk, *blk2;
	uint64_t seq, seq2;
	uint32_t len, len2;
	uint8_t *frame;

	if (wire_decode_data(f, &seq, &blk, &len) != 0)
		return;
	CHECK(blk == f->payload + 8 && len == f->len - 8);
	frame = malloc(WIRE_DATA_HDR_LEN + (size_t)len);
	CHECK(frame != NULL);
	wire_encode_data_hdr(frame, seq, blk, len);
	memcpy(frame + WIRE_DATA_HDR_LEN, blk, len);
	same_bytes(f, frame, WIRE_DATA_HDR_LEN + (size_t)len);
	parse_exact(frame, WIRE_DATA_HDR_LEN + (size_t)len, WIRE_DATA, &g);
	CHECK(wire_decode_data(&g, &seq2, &blk2, &len2) == 0);
	CHECK(seq2 == seq && len2 == len && memcmp(blk2, blk, len) == 0);
	free(frame);
}

static void check_frame(const struct wire_frame *f)
{
	static uint8_t enc[ENC_CAP];

	switch (f->type) {
	case WIRE_HELLO: check_hello(f, enc); break;
	case WIRE_CHALLENGE: check_challenge(f, enc); break;
	case WIRE_AUTH: check_auth(f, enc); break;
	case WIRE_READY: check_ready(f, enc); break;
	case WIRE_REFUSE: check_refuse(f, enc); break;
	case WIRE_DATA: check_data(f); break;
	case WIRE_ACK: check_ack(f, enc); break;
	case WIRE_PING:
	case WIRE_PONG: check_ping(f, enc); break;
	case WIRE_BYE: check_bye(f, enc); break;
	default: abort();   /* wire_frame_parse let through an unknown type */
	}
}

/* Consumes frames like a stream reader does, stopping at the first error
 * or incomplete frame. */
static void fuzz_frames(const uint8_t *data, size_t size)
{
	size_t off = 0;

	for (;;) {
		struct wire_frame f;
		size_t used = 0;
		uint8_t *copy;
		int rc = wire_frame_parse(data + off, size - off, &f, &used);

		if (rc == 0) {
			CHECK(used > size - off);
			CHECK(used <= WIRE_HDR_LEN + (size_t)WIRE_MAX_PAYLOAD);
			return;
		}
		if (rc < 0)
			return;
		CHECK(rc == 1 && used == WIRE_HDR_LEN + (size_t)f.len && used <= size - off);
		copy = dup_exact(data + off, used);
		parse_exact(copy, used, f.type, &f);
		check_frame(&f);
		free(copy);
		off += used;
	}
}

/* Random bytes almost never carry a valid CRC, which would leave the
 * decoders behind it unexplored: walk the input as frames again, this time
 * writing the right CRC into each before parsing it. */
static void fuzz_frames_crc_fixed(const uint8_t *data, size_t size)
{
	size_t off = 0;

	while (size - off >= WIRE_HDR_LEN) {
		const uint8_t *p = data + off;
		size_t n = WIRE_HDR_LEN + ((size_t)p[4] << 24 | (size_t)p[5] << 16 | (size_t)p[6] << 8 | p[7]);
		struct wire_frame f;
		size_t used = 0;
		uint8_t *copy;
		uint32_t crc;
		int rc;

		if (n > size - off)
			return;
		copy = dup_exact(p, n);
		memset(copy + 8, 0, 4);
		crc = crc32c(0, copy, n);
		copy[8] = (uint8_t)(crc >> 24);
		copy[9] = (uint8_t)(crc >> 16);
		copy[10] = (uint8_t)(crc >> 8);
		copy[11] = (uint8_t)crc;
		rc = wire_frame_parse(copy, n, &f, &used);
		if (rc == 1)
			check_frame(&f);
		else
			CHECK(rc == -EPROTO || rc == -EPROTONOSUPPORT || rc == -EMSGSIZE || rc == -EINVAL ||
			      (rc == -EBADMSG && (copy[3] & WIRE_SEALED)));
		free(copy);
		if (rc != 1)
			return;
		off += n;
	}
}

/* A valid record header re-encodes to itself, and each of its proper
 * prefixes only asks for more bytes. */
static void fuzz_record(const uint8_t *data, size_t size)
{
	struct wire_record r, r2;
	uint8_t enc[WIRE_REC_FIXED + 2 * WIRE_ENDPOINT_MAX];
	uint8_t *copy = dup_exact(data, size);
	int n = wire_decode_record_hdr(copy, size, &r);

	free(copy);
	if (n <= 0)
		return;
	CHECK((size_t)n <= size);
	CHECK(wire_record_hdr_len(&r) == (size_t)n);
	CHECK(wire_encode_record_hdr(enc, sizeof(enc), &r) == (size_t)n);
	CHECK(memcmp(enc, data, (size_t)n) == 0);
	for (int k = 0; k < n; k++)
		CHECK(wire_decode_record_hdr(data, (size_t)k, &r2) == 0);
}

static void check_cstr(const char *s, size_t cap)
{
	CHECK(memchr(s, '\0', cap) != NULL);
}

static void fuzz_client(const uint8_t *data, size_t size)
{
	struct cp_hdr h;
	struct cp_msg m;
	uint8_t *body;

	if (size < CP_HDR_LEN || cp_hdr_parse(data, &h) != 0)
		return;
	if (size - CP_HDR_LEN < h.len)
		return;
	body = dup_exact(data + CP_HDR_LEN, h.len);
	if (cp_decode(&h, body, &m) == 0) {
		check_cstr(m.name, sizeof(m.name));
		check_cstr(m.endpoint, sizeof(m.endpoint));
		check_cstr(m.text, sizeof(m.text));
		if (m.type == CP_SEND || m.type == CP_DELIVER)
			CHECK(m.payload >= body && m.payload_len <= h.len &&
			      (size_t)(m.payload - body) <= h.len - m.payload_len);
	}
	free(body);
}

/* An exec message that decodes re-encodes to the same bytes, and those
 * decode again. */
static void fuzz_exec(const uint8_t *data, size_t size)
{
	uint8_t *copy = dup_exact(data, size), *enc;
	struct exec_msg m, m2;
	size_t n;

	if (exec_decode(copy, size, &m) != 0) {
		free(copy);
		return;
	}
	n = exec_encode(&m, NULL, 0);
	CHECK(n == size);
	enc = malloc(n);
	CHECK(enc != NULL && exec_encode(&m, enc, n) == n);
	CHECK(memcmp(enc, data, n) == 0);
	CHECK(exec_decode(enc, n, &m2) == 0 && m2.type == m.type && m2.job == m.job);
	exec_msg_free(&m2);
	exec_msg_free(&m);
	free(enc);
	free(copy);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	fuzz_frames(data, size);
	fuzz_frames_crc_fixed(data, size);
	fuzz_record(data, size);
	fuzz_client(data, size);
	fuzz_exec(data, size);
	return 0;
}
