/* msg.c - the benchmark's messages; see ldsbench.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/crc32c.h"
#include "tools/ldsbench/ldsbench.h"

#define MSG_MAGIC 0x4C444242u   /* "LDBB" */
#define STAMP_EVERY 4096

/* Header: magic, kind, run, errors (u32 each), seq, a, b (u64 each).  A
 * DATA message's a is its length and b the CRC-32C of its body. */

static void put32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static void put64(uint8_t *p, uint64_t v)
{
	for (int i = 0; i < 8; i++)
		p[i] = (uint8_t)(v >> (8 * i));
}

static uint32_t get32(const uint8_t *p)
{
	uint32_t v = 0;

	for (int i = 3; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

static uint64_t get64(const uint8_t *p)
{
	uint64_t v = 0;

	for (int i = 7; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

/* splitmix64: a fixed, fast source for the pattern. */
static uint64_t mix(uint64_t *s)
{
	uint64_t x = (*s += 0x9E3779B97F4A7C15ull);

	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

int msg_pattern_init(struct msg_pattern *p, size_t size)
{
	uint64_t s = 0x4C44534245ull;

	if (size < MSG_HDR)
		return -EINVAL;
	p->size = size;
	p->bytes = malloc(size);
	if (p->bytes == NULL)
		return -ENOMEM;
	for (size_t k = 0; k < size; k += 8) {
		uint64_t v = mix(&s);

		memcpy(p->bytes + k, &v, size - k < 8 ? size - k : 8);
	}
	return 0;
}

void msg_pattern_free(struct msg_pattern *p)
{
	free(p->bytes);
	p->bytes = NULL;
}

void msg_build(const struct msg_hdr *h, uint8_t *buf)
{
	put32(buf, MSG_MAGIC);
	put32(buf + 4, (uint32_t)h->kind);
	put32(buf + 8, h->run);
	put32(buf + 12, h->errors);
	put64(buf + 16, h->seq);
	put64(buf + 24, h->a);
	put64(buf + 32, h->b);
}

/* Stamps seq into the body at every STAMP_EVERY bytes. */
static void stamp(uint8_t *body, size_t len, uint64_t seq)
{
	for (size_t k = 0; k + 8 <= len; k += STAMP_EVERY)
		put64(body + k, seq);
}

void msg_build_data(const struct msg_pattern *p, uint32_t run, uint64_t seq, uint8_t *buf)
{
	struct msg_hdr h = { .kind = MSG_DATA, .run = run, .seq = seq };
	size_t body = p->size - MSG_HDR;

	memcpy(buf + MSG_HDR, p->bytes + MSG_HDR, body);
	stamp(buf + MSG_HDR, body, seq);
	h.a = p->size;
	h.b = crc32c(0, buf + MSG_HDR, body);
	msg_build(&h, buf);
}

int msg_parse(const uint8_t *buf, size_t len, struct msg_hdr *h, char *why, size_t whylen)
{
	if (len < MSG_HDR || get32(buf) != MSG_MAGIC) {
		snprintf(why, whylen, "a message of %zu bytes that is not ldsbench's", len);
		return -1;
	}
	h->kind = (enum msg_kind)get32(buf + 4);
	h->run = get32(buf + 8);
	h->errors = get32(buf + 12);
	h->seq = get64(buf + 16);
	h->a = get64(buf + 24);
	h->b = get64(buf + 32);
	if (h->kind < MSG_START || h->kind > MSG_REPORT) {
		snprintf(why, whylen, "unknown message kind %u", (unsigned)h->kind);
		return -1;
	}
	return 0;
}

int msg_check_data(const uint8_t *buf, size_t len, const struct msg_hdr *h, char *why, size_t whylen)
{
	size_t body = len - MSG_HDR;

	if (h->a != len) {
		snprintf(why, whylen, "message %llu: %zu bytes, its header says %llu", (unsigned long long)h->seq, len,
			 (unsigned long long)h->a);
		return -1;
	}
	for (size_t k = 0; k + 8 <= body; k += STAMP_EVERY) {
		if (get64(buf + MSG_HDR + k) != h->seq) {
			snprintf(why, whylen, "message %llu: bytes at offset %zu belong to message %llu",
				 (unsigned long long)h->seq, MSG_HDR + k,
				 (unsigned long long)get64(buf + MSG_HDR + k));
			return -1;
		}
	}
	if (crc32c(0, buf + MSG_HDR, body) != (uint32_t)h->b) {
		snprintf(why, whylen, "message %llu: CRC-32C of the body does not match (corrupted)",
			 (unsigned long long)h->seq);
		return -1;
	}
	return 0;
}

static uint64_t to_ms(double s)
{
	return s > 0 ? (uint64_t)(s * 1000 + 0.5) : 0;
}

void msg_build_start(uint32_t run, const struct msg_start *st, uint8_t *buf)
{
	struct msg_hdr h = { .kind = MSG_START, .run = run, .a = st->size, .b = st->flags };

	msg_build(&h, buf);
	put64(buf + MSG_HDR, to_ms(st->seconds));
	put64(buf + MSG_HDR + 8, to_ms(st->interval));
	put64(buf + MSG_HDR + 16, to_ms(st->omit));
	put64(buf + MSG_HDR + 24, to_ms(st->wait));
}

void msg_parse_start(const uint8_t *buf, size_t len, const struct msg_hdr *h, struct msg_start *st)
{
	memset(st, 0, sizeof(*st));
	st->size = (size_t)h->a;
	if (len < MSG_START_LEN)
		return;
	st->flags = (uint32_t)h->b;
	st->seconds = (double)get64(buf + MSG_HDR) / 1000;
	st->interval = (double)get64(buf + MSG_HDR + 8) / 1000;
	st->omit = (double)get64(buf + MSG_HDR + 16) / 1000;
	st->wait = (double)get64(buf + MSG_HDR + 24) / 1000;
}
