/* clientproto.c - frames between liblds and the local ldsd; see clientproto.h. */
#include <errno.h>
#include <string.h>

#include "clientproto.h"

const char *const cp_type_names[CP_TYPE_MAX] = {
	[0] = "INVALID",
	[CP_HELLO] = "HELLO",
	[CP_WELCOME] = "WELCOME",
	[CP_SEND] = "SEND",
	[CP_DELIVER] = "DELIVER",
	[CP_ACKED] = "ACKED",
	[CP_LOST] = "LOST",
	[CP_ERROR] = "ERROR",
	[CP_BYE] = "BYE",
	[CP_RESUME] = "RESUME",
	[CP_CHALLENGE] = "CHALLENGE",
	[CP_PROOF] = "PROOF",
	[CP_PEERQ] = "PEERQ",
	[CP_PEER] = "PEER",
	[CP_TAKEN] = "TAKEN",
	[CP_SHM] = "SHM",
};

/* ---- reading: a cursor that turns every overrun into one sticky error ---- */

struct rcur {
	const uint8_t *p;
	size_t left;
	int bad;
};

static const uint8_t *rc_take(struct rcur *c, size_t n)
{
	const uint8_t *p = c->p;

	if (c->bad || n > c->left) {
		c->bad = 1;
		return NULL;
	}
	c->p += n;
	c->left -= n;
	return p;
}

static uint64_t rc_uint(struct rcur *c, size_t n)
{
	const uint8_t *p = rc_take(c, n);
	uint64_t v = 0;

	if (p == NULL)
		return 0;
	for (size_t i = 0; i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static void rc_bytes(struct rcur *c, uint8_t *dst, size_t n)
{
	const uint8_t *p = rc_take(c, n);

	if (p != NULL)
		memcpy(dst, p, n);
}

/* Names are single printable tokens; texts may hold spaces and UTF-8 but
 * no control characters, which would let a peer forge log lines. */
static int byte_ok(uint8_t b, int is_text)
{
	if (is_text)
		return b >= 0x20 && b != 0x7f;
	return b > 0x20 && b < 0x7f;
}

/* A string of lenbytes-wide length into dst (cap includes the NUL). */
static void rc_str(struct rcur *c, size_t lenbytes, char *dst, size_t cap, int is_text)
{
	size_t n = (size_t)rc_uint(c, lenbytes);
	const uint8_t *p;

	if (n >= cap) {
		c->bad = 1;
		return;
	}
	p = rc_take(c, n);
	if (p == NULL)
		return;
	for (size_t i = 0; i < n; i++)
		if (!byte_ok(p[i], is_text)) {
			c->bad = 1;
			return;
		}
	memcpy(dst, p, n);
	dst[n] = '\0';
}

static void rc_name(struct rcur *c, char *dst, size_t cap, int may_be_empty)
{
	rc_str(c, 1, dst, cap, 0);
	if (!may_be_empty && dst[0] == '\0')
		c->bad = 1;
}

static void rc_range(struct rcur *c, struct cp_msg *m)
{
	m->first = rc_uint(c, 8);
	m->last = rc_uint(c, 8);
	/* Ids start at 1; an empty or reversed range means a broken sender. */
	if (m->first == 0 || m->first > m->last)
		c->bad = 1;
}

int cp_hdr_parse(const uint8_t *buf, struct cp_hdr *h)
{
	h->len = (uint32_t)buf[0] << 24 | (uint32_t)buf[1] << 16 | (uint32_t)buf[2] << 8 | buf[3];
	h->type = buf[4];
	h->version = buf[5];
	/* Bytes 6-7 are reserved: the version byte already gates any change. */
	if (h->version != CP_VERSION || h->type == 0 || h->type >= CP_TYPE_MAX || h->len > CP_MAX_BODY)
		return -EBADMSG;
	return 0;
}

size_t cp_client_body_max(int welcomed, uint32_t max_msg)
{
	return welcomed ? CP_SEND_MAX_BODY(max_msg) : CP_HELLO_MAX_BODY;
}

void cp_hdr_write(uint8_t *buf, uint8_t type, uint32_t len)
{
	buf[0] = (uint8_t)(len >> 24);
	buf[1] = (uint8_t)(len >> 16);
	buf[2] = (uint8_t)(len >> 8);
	buf[3] = (uint8_t)len;
	buf[4] = type;
	buf[5] = CP_VERSION;
	buf[6] = 0;
	buf[7] = 0;
}

int cp_decode(const struct cp_hdr *h, const uint8_t *body, struct cp_msg *m)
{
	struct rcur c = { body, h->len, 0 };
	int has_payload = 0;

	memset(m, 0, sizeof(*m));
	m->type = h->type;
	switch (h->type) {
	case CP_HELLO:
		m->version = (uint16_t)rc_uint(&c, 2);
		m->flags = (uint16_t)rc_uint(&c, 2);
		m->incarnation = rc_uint(&c, 8);
		rc_name(&c, m->name, sizeof(m->name), 1);
		break;
	case CP_WELCOME:
		m->version = (uint16_t)rc_uint(&c, 2);
		m->max_msg = (uint32_t)rc_uint(&c, 4);
		rc_name(&c, m->name, sizeof(m->name), 0);
		rc_name(&c, m->endpoint, sizeof(m->endpoint), 0);
		if (c.left > 0) {
			m->flags = (uint16_t)rc_uint(&c, 2);
			if (m->flags == 0)
				c.bad = 1;
		}
		break;
	case CP_SEND:
	case CP_DELIVER:
		m->msg_id = rc_uint(&c, 8);
		if (h->type == CP_DELIVER)
			m->incarnation = rc_uint(&c, 8);
		rc_name(&c, m->name, sizeof(m->name), 0);
		has_payload = 1;
		break;
	case CP_ACKED:
		rc_range(&c, m);
		break;
	case CP_LOST:
		rc_range(&c, m);
		rc_name(&c, m->name, sizeof(m->name), 0);
		rc_str(&c, 2, m->text, sizeof(m->text), 1);
		break;
	case CP_ERROR:
		m->msg_id = rc_uint(&c, 8);
		/* Two's complement on the wire; gcc converts modulo 2^32. */
		m->err = (int32_t)(uint32_t)rc_uint(&c, 4);
		rc_str(&c, 2, m->text, sizeof(m->text), 1);
		break;
	case CP_BYE:
		break;
	case CP_RESUME:
		m->count = rc_uint(&c, 8);
		rc_name(&c, m->name, sizeof(m->name), 0);
		if (m->count == 0)
			c.bad = 1;
		break;
	case CP_PEERQ:
		rc_name(&c, m->name, sizeof(m->name), 0);
		break;
	case CP_TAKEN:
		m->count = rc_uint(&c, 8);
		if (m->count == 0)
			c.bad = 1;
		break;
	case CP_SHM:
		m->ring_size = rc_uint(&c, 8);
		break;
	case CP_PEER:
		rc_name(&c, m->name, sizeof(m->name), 0);
		m->state = (uint8_t)rc_uint(&c, 1);
		m->seconds = (uint32_t)rc_uint(&c, 4);
		rc_str(&c, 2, m->text, sizeof(m->text), 1);
		if (c.left > 0) {
			m->has_bytes = 1;
			m->bytes_out = rc_uint(&c, 8);
			m->bytes_in = rc_uint(&c, 8);
		}
		if (m->state >= CP_PEER_STATE_MAX)
			c.bad = 1;
		break;
	case CP_CHALLENGE:
	case CP_PROOF:
		rc_bytes(&c, m->nonce, sizeof(m->nonce));
		if (h->type == CP_PROOF)
			rc_bytes(&c, m->mac, sizeof(m->mac));
		break;
	default:
		return -EBADMSG;
	}
	if (c.bad)
		return -EBADMSG;
	if (has_payload) {
		m->payload = c.p;
		m->payload_len = (uint32_t)c.left;
	} else if (c.left != 0) {
		return -EBADMSG;
	}
	return 0;
}

int cp_decode_head(const struct cp_hdr *h, const uint8_t *body, size_t avail, struct cp_msg *m)
{
	/* u64 msg_id (and DELIVER's u64 incarnation), then the name's
	 * length byte. */
	const size_t fixed = h->type == CP_DELIVER ? 17 : 9;
	struct cp_hdr fields = *h;
	int rc;

	if (h->type != CP_SEND && h->type != CP_DELIVER)
		return -EBADMSG;
	if (avail < fixed)
		return h->len < fixed ? -EBADMSG : -EAGAIN;
	fields.len = (uint32_t)(fixed + body[fixed - 1]);
	if (fields.len > h->len)
		return -EBADMSG;
	if (avail < fields.len)
		return -EAGAIN;
	rc = cp_decode(&fields, body, m);
	if (rc == 0)
		m->payload_len = h->len - fields.len;
	return rc;
}

/* ---- writing ---- */

struct wcur {
	uint8_t *p;
	size_t left;
	int bad;
};

static void wc_bytes(struct wcur *c, const void *src, size_t n)
{
	if (c->bad || n > c->left) {
		c->bad = 1;
		return;
	}
	memcpy(c->p, src, n);
	c->p += n;
	c->left -= n;
}

static void wc_uint(struct wcur *c, uint64_t v, size_t n)
{
	uint8_t b[8];

	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(v >> (8 * (n - 1 - i)));
	wc_bytes(c, b, n);
}

/* src is a field of a struct cp_msg: a missing NUL within cap, or a length
 * the prefix cannot express, makes the frame unencodable. */
static void wc_str(struct wcur *c, size_t lenbytes, const char *src, size_t cap, size_t max)
{
	size_t n = strnlen(src, cap);

	if (n == cap || n > max) {
		c->bad = 1;
		return;
	}
	wc_uint(c, n, lenbytes);
	wc_bytes(c, src, n);
}

static void wc_name(struct wcur *c, const char *src)
{
	wc_str(c, 1, src, WIRE_ENDPOINT_MAX + 1, WIRE_ENDPOINT_MAX);
}

size_t cp_encode(uint8_t *buf, size_t cap, const struct cp_msg *m)
{
	struct wcur c = { buf, cap, 0 };
	uint64_t body;

	if (cap < CP_HDR_LEN)
		return 0;
	c.p += CP_HDR_LEN;
	c.left -= CP_HDR_LEN;
	switch (m->type) {
	case CP_HELLO:
		wc_uint(&c, m->version, 2);
		wc_uint(&c, m->flags, 2);
		wc_uint(&c, m->incarnation, 8);
		wc_name(&c, m->name);
		break;
	case CP_WELCOME:
		wc_uint(&c, m->version, 2);
		wc_uint(&c, m->max_msg, 4);
		wc_name(&c, m->name);
		wc_name(&c, m->endpoint);
		if (m->flags != 0)
			wc_uint(&c, m->flags, 2);
		break;
	case CP_SEND:
	case CP_DELIVER:
		wc_uint(&c, m->msg_id, 8);
		if (m->type == CP_DELIVER)
			wc_uint(&c, m->incarnation, 8);
		wc_name(&c, m->name);
		break;
	case CP_ACKED:
		wc_uint(&c, m->first, 8);
		wc_uint(&c, m->last, 8);
		break;
	case CP_LOST:
		wc_uint(&c, m->first, 8);
		wc_uint(&c, m->last, 8);
		wc_name(&c, m->name);
		wc_str(&c, 2, m->text, sizeof(m->text), CP_TEXT_MAX);
		break;
	case CP_ERROR:
		wc_uint(&c, m->msg_id, 8);
		wc_uint(&c, (uint32_t)m->err, 4);
		wc_str(&c, 2, m->text, sizeof(m->text), CP_TEXT_MAX);
		break;
	case CP_BYE:
		break;
	case CP_RESUME:
		wc_uint(&c, m->count, 8);
		wc_name(&c, m->name);
		break;
	case CP_PEERQ:
		wc_name(&c, m->name);
		break;
	case CP_TAKEN:
		wc_uint(&c, m->count, 8);
		break;
	case CP_SHM:
		wc_uint(&c, m->ring_size, 8);
		break;
	case CP_PEER:
		wc_name(&c, m->name);
		wc_uint(&c, m->state, 1);
		wc_uint(&c, m->seconds, 4);
		wc_str(&c, 2, m->text, sizeof(m->text), CP_TEXT_MAX);
		if (m->has_bytes) {
			wc_uint(&c, m->bytes_out, 8);
			wc_uint(&c, m->bytes_in, 8);
		}
		break;
	case CP_CHALLENGE:
	case CP_PROOF:
		wc_bytes(&c, m->nonce, sizeof(m->nonce));
		if (m->type == CP_PROOF)
			wc_bytes(&c, m->mac, sizeof(m->mac));
		break;
	default:
		return 0;
	}
	if (c.bad)
		return 0;
	body = (uint64_t)(cap - c.left - CP_HDR_LEN);
	if (m->type == CP_SEND || m->type == CP_DELIVER)
		body += m->payload_len;
	if (body > CP_MAX_BODY)
		return 0;
	cp_hdr_write(buf, m->type, (uint32_t)body);
	return cap - c.left;
}
