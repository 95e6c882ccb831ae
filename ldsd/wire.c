/*
 * wire.c - gateway wire protocol codecs; see wire.h and docs/protocol.md.
 *
 * Decoders and encoders go through bytebuf.h's cursors, whose error flag is
 * sticky: each reads or writes all its fields straight through and checks
 * once at the end.
 */
#include <errno.h>
#include <string.h>

#include "bytebuf.h"
#include "crc32c.h"
#include "wire.h"

const char *const wire_type_names[WIRE_TYPE_MAX] = {
	[0] = "INVALID",
	[WIRE_HELLO] = "HELLO",
	[WIRE_CHALLENGE] = "CHALLENGE",
	[WIRE_AUTH] = "AUTH",
	[WIRE_READY] = "READY",
	[WIRE_REFUSE] = "REFUSE",
	[WIRE_DATA] = "DATA",
	[WIRE_ACK] = "ACK",
	[WIRE_PING] = "PING",
	[WIRE_PONG] = "PONG",
	[WIRE_BYE] = "BYE",
};

/* ---- names --------------------------------------------------------------- */

/* Explicit ranges rather than isalnum(): names must not depend on locale. */
static int name_char(unsigned char c)
{
	return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') ||
	       (c >= '0' && c <= '9') || c == '.' || c == '_' || c == '-';
}

static int charset_valid(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (!name_char((unsigned char)s[i]))
			return 0;
	return n > 0;
}

/* Length-delimited forms, because names on the wire are not NUL-terminated
 * and may hide a NUL that strlen() would stop at. */
static int name_valid_n(const char *s, size_t n)
{
	return n <= WIRE_NAME_MAX && charset_valid(s, n);
}

/* The name part of an endpoint may exceed WIRE_NAME_MAX; only the whole is
 * bounded. */
static int endpoint_valid_n(const char *s, size_t n)
{
	const char *slash;
	size_t clen;

	if (n > WIRE_ENDPOINT_MAX)
		return 0;
	slash = memchr(s, '/', n);
	if (!slash)
		return 0;
	clen = (size_t)(slash - s);
	return name_valid_n(s, clen) && charset_valid(slash + 1, n - clen - 1);
}

int wire_name_valid(const char *s)
{
	return name_valid_n(s, strnlen(s, WIRE_NAME_MAX + 1));
}

int wire_endpoint_valid(const char *s)
{
	return endpoint_valid_n(s, strnlen(s, WIRE_ENDPOINT_MAX + 1));
}

/* Reasons end up in logs: control characters could forge log lines, and a
 * NUL would silently cut the C string short. */
static int reason_valid_n(const char *s, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if ((unsigned char)s[i] < 0x20 || s[i] == 0x7f)
			return 0;
	return n <= WIRE_REASON_MAX;
}

/* Non-empty, ascending and non-overlapping.  Touching ranges are accepted
 * although a sender should have merged them. */
static int ranges_valid(const struct wire_range *v, size_t n)
{
	if (n > WIRE_MAX_RANGES)
		return 0;
	for (size_t i = 0; i < n; i++) {
		if (v[i].start >= v[i].end)
			return 0;
		if (i > 0 && v[i].start < v[i - 1].end)
			return 0;
	}
	return 1;
}

/* ---- reader -------------------------------------------------------------- */

/* Also checks the frame type, so that a decoder handed the wrong frame
 * fails like one handed a malformed frame. */
static void rd_init(struct bb_rd *r, const struct wire_frame *f, uint8_t type)
{
	bb_rd_init(r, f->payload, f->len);
	r->bad = f->type != type || f->sealed;
}

/* u8 length + bytes into out[WIRE_NAME_MAX + 1], NUL-terminated. */
static void rd_name(struct bb_rd *r, char *out)
{
	size_t n;
	const char *p = (const char *)bb_rd_str(r, 1, WIRE_NAME_MAX, &n);

	out[0] = '\0';
	if (!p || !name_valid_n(p, n)) {
		r->bad = 1;
		return;
	}
	memcpy(out, p, n);
	out[n] = '\0';
}

static void rd_ranges(struct bb_rd *r, struct wire_range *v, uint16_t n)
{
	if (n > WIRE_MAX_RANGES) {
		r->bad = 1;
		return;
	}
	for (uint16_t i = 0; i < n; i++) {
		v[i].start = bb_rd_be64(r);
		v[i].end = bb_rd_be64(r);
	}
	if (!ranges_valid(v, n))
		r->bad = 1;
}

/* ---- writer -------------------------------------------------------------- */

/* strnlen() bounds the read: a struct whose name array lacks a NUL is
 * rejected instead of being read past. */
static void wr_name(struct bb_wr *w, const char name[WIRE_NAME_MAX + 1])
{
	size_t n = strnlen(name, WIRE_NAME_MAX + 1);

	if (!name_valid_n(name, n)) {
		w->bad = 1;
		return;
	}
	bb_wr_str(w, 1, name, n);
}

static void wr_ranges(struct bb_wr *w, const struct wire_range *v, uint16_t n)
{
	if (!ranges_valid(v, n)) {
		w->bad = 1;
		return;
	}
	for (uint16_t i = 0; i < n; i++) {
		bb_wr_be64(w, v[i].start);
		bb_wr_be64(w, v[i].end);
	}
}

/* ---- frames -------------------------------------------------------------- */

/* Header with a zero CRC field, as the CRC is computed over it. */
static void put_hdr(uint8_t *p, uint8_t type, uint32_t len)
{
	bb_put_be16(p, WIRE_MAGIC);
	p[2] = WIRE_VERSION;
	p[3] = type;
	bb_put_be32(p + 4, len);
	bb_put_be32(p + 8, 0);
}

static void frame_begin(struct bb_wr *w, uint8_t *buf, size_t cap)
{
	bb_wr_init(w, buf, cap);
	bb_wr_reserve(w, WIRE_HDR_LEN);
}

static size_t frame_end(struct bb_wr *w, uint8_t type)
{
	if (w->bad)
		return 0;
	put_hdr(w->buf, type, (uint32_t)(w->len - WIRE_HDR_LEN));
	bb_put_be32(w->buf + 8, crc32c(0, w->buf, w->len));
	return w->len;
}

int wire_frame_parse(const uint8_t *buf, size_t len, struct wire_frame *f, size_t *consumed)
{
	uint8_t hdr[WIRE_HDR_LEN];
	uint32_t plen, crc;

	if (len < WIRE_HDR_LEN) {
		*consumed = WIRE_HDR_LEN;
		return 0;
	}
	if (bb_get_be16(buf) != WIRE_MAGIC)
		return -EPROTO;
	if (buf[2] != WIRE_VERSION) {
		f->version = buf[2];
		return -EPROTONOSUPPORT;
	}
	plen = bb_get_be32(buf + 4);
	if (plen > WIRE_MAX_PAYLOAD)
		return -EMSGSIZE;
	if (len - WIRE_HDR_LEN < plen) {
		*consumed = WIRE_HDR_LEN + (size_t)plen;
		return 0;
	}
	f->sealed = (buf[3] & WIRE_SEALED) != 0;
	f->type = buf[3] & (uint8_t)~WIRE_SEALED;
	if (f->sealed) {
		/* The tag, checked when the frame is opened, replaces the CRC. */
		if (plen < WIRE_TAG_LEN + (f->type == WIRE_DATA ? 8u : 0u))
			return -EBADMSG;
	} else {
		memcpy(hdr, buf, 8);
		bb_put_be32(hdr + 8, 0);
		crc = crc32c(crc32c(0, hdr, sizeof(hdr)), buf + WIRE_HDR_LEN, plen);
		if (crc != bb_get_be32(buf + 8))
			return -EBADMSG;
	}
	/* After the CRC: a corrupted type byte is a transmission error, while
	 * an intact unknown type is a peer speaking something newer. */
	if (f->type == 0 || f->type >= WIRE_TYPE_MAX)
		return -EINVAL;
	f->version = buf[2];
	f->len = plen;
	f->payload = buf + WIRE_HDR_LEN;
	*consumed = WIRE_HDR_LEN + (size_t)plen;
	return 1;
}

size_t wire_encode_hello(uint8_t *buf, size_t cap, const struct wire_hello *h)
{
	struct bb_wr w;

	frame_begin(&w, buf, cap);
	bb_wr_be16(&w, h->stream_idx);
	bb_wr_be16(&w, h->nstreams);
	bb_wr_be32(&w, h->max_msg);
	bb_wr_be64(&w, h->instance);
	bb_wr_bytes(&w, h->nonce, WIRE_NONCE_LEN);
	if (h->encryption > WIRE_ENC_AEAD)
		w.bad = 1;
	bb_wr_u8(&w, h->encryption);
	wr_name(&w, h->from);
	wr_name(&w, h->to);
	return frame_end(&w, WIRE_HELLO);
}

size_t wire_encode_challenge(uint8_t *buf, size_t cap, const struct wire_challenge *c)
{
	struct bb_wr w;

	frame_begin(&w, buf, cap);
	bb_wr_be32(&w, c->max_msg);
	bb_wr_be64(&w, c->instance);
	bb_wr_bytes(&w, c->nonce, WIRE_NONCE_LEN);
	bb_wr_bytes(&w, c->mac, WIRE_MAC_LEN);
	if (c->encryption > WIRE_ENC_AEAD)
		w.bad = 1;
	bb_wr_u8(&w, c->encryption);
	wr_name(&w, c->from);
	return frame_end(&w, WIRE_CHALLENGE);
}

size_t wire_encode_auth(uint8_t *buf, size_t cap, const struct wire_auth *a)
{
	struct bb_wr w;

	frame_begin(&w, buf, cap);
	bb_wr_bytes(&w, a->mac, WIRE_MAC_LEN);
	return frame_end(&w, WIRE_AUTH);
}

size_t wire_encode_ready(uint8_t *buf, size_t cap)
{
	struct bb_wr w;

	frame_begin(&w, buf, cap);
	return frame_end(&w, WIRE_READY);
}

size_t wire_encode_refuse(uint8_t *buf, size_t cap, const struct wire_refuse_msg *r)
{
	size_t n = strnlen(r->reason, WIRE_REASON_MAX + 1);
	struct bb_wr w;

	frame_begin(&w, buf, cap);
	if (!reason_valid_n(r->reason, n))
		w.bad = 1;
	bb_wr_be16(&w, r->code);
	bb_wr_str(&w, 2, r->reason, n);
	return frame_end(&w, WIRE_REFUSE);
}

size_t wire_encode_ack(uint8_t *buf, size_t cap, const struct wire_ack *a)
{
	struct bb_wr w;

	frame_begin(&w, buf, cap);
	bb_wr_be64(&w, a->recv_cum);
	bb_wr_be64(&w, a->window_end);
	bb_wr_be64(&w, a->deliv_cum);
	bb_wr_be16(&w, a->nsack);
	bb_wr_be16(&w, a->ndeliv);
	wr_ranges(&w, a->sack, a->nsack);
	wr_ranges(&w, a->deliv, a->ndeliv);
	return frame_end(&w, WIRE_ACK);
}

size_t wire_encode_ping(uint8_t *buf, size_t cap, enum wire_type type, uint64_t t_ns)
{
	struct bb_wr w;

	frame_begin(&w, buf, cap);
	if (type != WIRE_PING && type != WIRE_PONG)
		w.bad = 1;
	bb_wr_be64(&w, t_ns);
	return frame_end(&w, (uint8_t)type);
}

size_t wire_encode_bye(uint8_t *buf, size_t cap, uint16_t reason)
{
	struct bb_wr w;

	frame_begin(&w, buf, cap);
	bb_wr_be16(&w, reason);
	return frame_end(&w, WIRE_BYE);
}

void wire_encode_data_hdr(uint8_t hdr[WIRE_DATA_HDR_LEN], uint64_t seq, const void *payload, uint32_t len)
{
	uint32_t crc;

	put_hdr(hdr, WIRE_DATA, len + 8);
	bb_put_be64(hdr + WIRE_HDR_LEN, seq);
	crc = crc32c(crc32c(0, hdr, WIRE_DATA_HDR_LEN), payload, len);
	bb_put_be32(hdr + 8, crc);
}

void wire_encode_sealed_hdr(uint8_t hdr[WIRE_HDR_LEN], uint8_t type, uint32_t len)
{
	put_hdr(hdr, (uint8_t)(type | WIRE_SEALED), len);
}

int wire_decode_hello(const struct wire_frame *f, struct wire_hello *h)
{
	struct bb_rd r;

	rd_init(&r, f, WIRE_HELLO);
	h->stream_idx = bb_rd_be16(&r);
	h->nstreams = bb_rd_be16(&r);
	h->max_msg = bb_rd_be32(&r);
	h->instance = bb_rd_be64(&r);
	bb_rd_copy(&r, h->nonce, WIRE_NONCE_LEN);
	h->encryption = bb_rd_u8(&r);
	if (h->encryption > WIRE_ENC_AEAD)
		r.bad = 1;
	rd_name(&r, h->from);
	rd_name(&r, h->to);
	return bb_rd_end(&r);
}

int wire_decode_challenge(const struct wire_frame *f, struct wire_challenge *c)
{
	struct bb_rd r;

	rd_init(&r, f, WIRE_CHALLENGE);
	c->max_msg = bb_rd_be32(&r);
	c->instance = bb_rd_be64(&r);
	bb_rd_copy(&r, c->nonce, WIRE_NONCE_LEN);
	bb_rd_copy(&r, c->mac, WIRE_MAC_LEN);
	c->encryption = bb_rd_u8(&r);
	if (c->encryption > WIRE_ENC_AEAD)
		r.bad = 1;
	rd_name(&r, c->from);
	return bb_rd_end(&r);
}

int wire_decode_auth(const struct wire_frame *f, struct wire_auth *a)
{
	struct bb_rd r;

	rd_init(&r, f, WIRE_AUTH);
	bb_rd_copy(&r, a->mac, WIRE_MAC_LEN);
	return bb_rd_end(&r);
}

int wire_decode_refuse(const struct wire_frame *f, struct wire_refuse_msg *m)
{
	struct bb_rd r;
	size_t n;
	const char *p;

	rd_init(&r, f, WIRE_REFUSE);
	m->code = bb_rd_be16(&r);
	p = (const char *)bb_rd_str(&r, 2, WIRE_REASON_MAX, &n);
	m->reason[0] = '\0';
	if (!p || !reason_valid_n(p, n))
		return -EBADMSG;
	memcpy(m->reason, p, n);
	m->reason[n] = '\0';
	return bb_rd_end(&r);
}

int wire_decode_ack(const struct wire_frame *f, struct wire_ack *a)
{
	struct bb_rd r;

	rd_init(&r, f, WIRE_ACK);
	a->recv_cum = bb_rd_be64(&r);
	a->window_end = bb_rd_be64(&r);
	a->deliv_cum = bb_rd_be64(&r);
	a->nsack = bb_rd_be16(&r);
	a->ndeliv = bb_rd_be16(&r);
	rd_ranges(&r, a->sack, a->nsack);
	rd_ranges(&r, a->deliv, a->ndeliv);
	return bb_rd_end(&r);
}

int wire_decode_ping(const struct wire_frame *f, uint64_t *t_ns)
{
	struct bb_rd r;

	rd_init(&r, f, f->type == WIRE_PONG ? WIRE_PONG : WIRE_PING);
	*t_ns = bb_rd_be64(&r);
	return bb_rd_end(&r);
}

int wire_decode_bye(const struct wire_frame *f, uint16_t *reason)
{
	struct bb_rd r;

	rd_init(&r, f, WIRE_BYE);
	*reason = bb_rd_be16(&r);
	return bb_rd_end(&r);
}

int wire_decode_data(const struct wire_frame *f, uint64_t *seq, const uint8_t **data, uint32_t *len)
{
	if (f->type != WIRE_DATA || f->sealed || f->len <= 8 || f->len - 8 > WIRE_MAX_BLOCK)
		return -EBADMSG;
	*seq = bb_get_be64(f->payload);
	*data = f->payload + 8;
	*len = f->len - 8;
	return 0;
}

int wire_peek_data(const uint8_t *prefix, uint64_t *seq, uint32_t *len, int *sealed)
{
	uint32_t flen = bb_get_be32(prefix + 4), over = 8;

	*sealed = prefix[3] == (WIRE_DATA | WIRE_SEALED);
	if (*sealed)
		over += WIRE_TAG_LEN;
	if (bb_get_be16(prefix) != WIRE_MAGIC || prefix[2] != WIRE_VERSION || (prefix[3] != WIRE_DATA && !*sealed) ||
	    flen <= over || flen - over > WIRE_MAX_BLOCK)
		return 0;
	*seq = bb_get_be64(prefix + WIRE_HDR_LEN);
	*len = flen - over;
	return 1;
}

int wire_data_intact(const uint8_t *prefix, const void *block, uint32_t len)
{
	uint8_t want[WIRE_DATA_HDR_LEN];

	wire_encode_data_hdr(want, bb_get_be64(prefix + WIRE_HDR_LEN), block, len);
	return memcmp(want, prefix, WIRE_DATA_HDR_LEN) == 0;
}

/* ---- records ------------------------------------------------------------- */

static int endpoint_len_ok(uint8_t n)
{
	return n >= 1 && n <= WIRE_ENDPOINT_MAX;
}

/* Checks each fixed field as soon as it has arrived, so that a corrupt
 * stream is reported without waiting for bytes that may never come. */
static int rec_fixed_ok(const uint8_t *buf, size_t len)
{
	if (len > 0 && buf[0] != WIRE_REC_MAGIC)
		return 0;
	if (len > 1 && buf[1] != 0)
		return 0;
	if (len > 2 && !endpoint_len_ok(buf[2]))
		return 0;
	if (len > 3 && !endpoint_len_ok(buf[3]))
		return 0;
	if (len >= 8 && bb_get_be32(buf + 4) > WIRE_MAX_MSG)
		return 0;
	return 1;
}

size_t wire_record_hdr_len(const struct wire_record *r)
{
	return WIRE_REC_FIXED + strnlen(r->src, sizeof(r->src)) +
	       strnlen(r->dst, sizeof(r->dst));
}

size_t wire_encode_record_hdr(uint8_t *buf, size_t cap, const struct wire_record *r)
{
	size_t slen = strnlen(r->src, sizeof(r->src));
	size_t dlen = strnlen(r->dst, sizeof(r->dst));
	size_t total = WIRE_REC_FIXED + slen + dlen;

	if (!endpoint_valid_n(r->src, slen) || !endpoint_valid_n(r->dst, dlen) ||
	    r->len > WIRE_MAX_MSG || cap < total)
		return 0;
	buf[0] = WIRE_REC_MAGIC;
	buf[1] = 0;
	buf[2] = (uint8_t)slen;
	buf[3] = (uint8_t)dlen;
	bb_put_be32(buf + 4, r->len);
	bb_put_be64(buf + 8, r->msg_id);
	bb_put_be64(buf + 16, r->incarnation);
	memcpy(buf + WIRE_REC_FIXED, r->src, slen);
	memcpy(buf + WIRE_REC_FIXED + slen, r->dst, dlen);
	return total;
}

int wire_decode_record_hdr(const uint8_t *buf, size_t len, struct wire_record *r)
{
	const char *src, *dst;
	size_t slen, dlen;

	if (!rec_fixed_ok(buf, len))
		return -EBADMSG;
	if (len < WIRE_REC_FIXED)
		return 0;
	slen = buf[2];
	dlen = buf[3];
	if (len < WIRE_REC_FIXED + slen + dlen)
		return 0;
	src = (const char *)buf + WIRE_REC_FIXED;
	dst = src + slen;
	if (!endpoint_valid_n(src, slen) || !endpoint_valid_n(dst, dlen))
		return -EBADMSG;
	r->len = bb_get_be32(buf + 4);
	r->msg_id = bb_get_be64(buf + 8);
	r->incarnation = bb_get_be64(buf + 16);
	memcpy(r->src, src, slen);
	r->src[slen] = '\0';
	memcpy(r->dst, dst, dlen);
	r->dst[dlen] = '\0';
	return (int)(WIRE_REC_FIXED + slen + dlen);
}

int wire_endpoint_in(const char *endpoint, const char *cluster)
{
	size_t n = strlen(cluster);

	return strncmp(endpoint, cluster, n) == 0 && endpoint[n] == '/';
}

int wire_record_between(const struct wire_record *r, const char *from, const char *to)
{
	return wire_endpoint_in(r->src, from) && wire_endpoint_in(r->dst, to);
}
