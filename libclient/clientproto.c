/* clientproto.c - frames between liblds and the local ldsd; see clientproto.h. */
#include <errno.h>
#include <string.h>

#include "../ldsd/bytebuf.h"
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

/* ---- reading: bytebuf.h's cursor, every overrun one sticky error ---- */

/* Names are single printable tokens; texts may hold spaces and UTF-8 but
 * no control characters, which would let a peer forge log lines. */
static int byte_ok(uint8_t b, int is_text)
{
	if (is_text)
		return b >= 0x20 && b != 0x7f;
	return b > 0x20 && b < 0x7f;
}

/* A string of lenbytes-wide length into dst (cap includes the NUL). */
static void rc_str(struct bb_rd *c, size_t lenbytes, char *dst, size_t cap, int is_text)
{
	size_t n;
	const uint8_t *p = bb_rd_str(c, lenbytes, cap - 1, &n);

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

static void rc_name(struct bb_rd *c, char *dst, size_t cap, int may_be_empty)
{
	rc_str(c, 1, dst, cap, 0);
	if (!may_be_empty && dst[0] == '\0')
		c->bad = 1;
}

static void rc_range(struct bb_rd *c, struct cp_msg *m)
{
	m->first = bb_rd_be64(c);
	m->last = bb_rd_be64(c);
	/* Ids start at 1; an empty or reversed range means a broken sender. */
	if (m->first == 0 || m->first > m->last)
		c->bad = 1;
}

int cp_hdr_parse(const uint8_t *buf, struct cp_hdr *h)
{
	h->len = bb_get_be32(buf);
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
	bb_put_be32(buf, len);
	buf[4] = type;
	buf[5] = CP_VERSION;
	buf[6] = 0;
	buf[7] = 0;
}

int cp_decode(const struct cp_hdr *h, const uint8_t *body, struct cp_msg *m)
{
	struct bb_rd c;
	int has_payload = 0;

	bb_rd_init(&c, body, h->len);
	memset(m, 0, sizeof(*m));
	m->type = h->type;
	switch (h->type) {
	case CP_HELLO:
		m->version = bb_rd_be16(&c);
		m->flags = bb_rd_be16(&c);
		m->incarnation = bb_rd_be64(&c);
		rc_name(&c, m->name, sizeof(m->name), 1);
		break;
	case CP_WELCOME:
		m->version = bb_rd_be16(&c);
		m->max_msg = bb_rd_be32(&c);
		rc_name(&c, m->name, sizeof(m->name), 0);
		rc_name(&c, m->endpoint, sizeof(m->endpoint), 0);
		if (c.left > 0) {
			m->flags = bb_rd_be16(&c);
			if (m->flags == 0)
				c.bad = 1;
		}
		break;
	case CP_SEND:
	case CP_DELIVER:
		m->msg_id = bb_rd_be64(&c);
		if (h->type == CP_DELIVER)
			m->incarnation = bb_rd_be64(&c);
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
		m->msg_id = bb_rd_be64(&c);
		/* Two's complement on the wire; gcc converts modulo 2^32. */
		m->err = (int32_t)bb_rd_be32(&c);
		rc_str(&c, 2, m->text, sizeof(m->text), 1);
		break;
	case CP_BYE:
		break;
	case CP_RESUME:
		m->count = bb_rd_be64(&c);
		rc_name(&c, m->name, sizeof(m->name), 0);
		if (m->count == 0)
			c.bad = 1;
		break;
	case CP_PEERQ:
		rc_name(&c, m->name, sizeof(m->name), 0);
		break;
	case CP_TAKEN:
		m->count = bb_rd_be64(&c);
		if (m->count == 0)
			c.bad = 1;
		break;
	case CP_SHM:
		m->ring_size = bb_rd_be64(&c);
		break;
	case CP_PEER:
		rc_name(&c, m->name, sizeof(m->name), 0);
		m->state = bb_rd_u8(&c);
		m->seconds = bb_rd_be32(&c);
		rc_str(&c, 2, m->text, sizeof(m->text), 1);
		if (c.left > 0) {
			m->has_bytes = 1;
			m->bytes_out = bb_rd_be64(&c);
			m->bytes_in = bb_rd_be64(&c);
		}
		if (m->state >= CP_PEER_STATE_MAX)
			c.bad = 1;
		break;
	case CP_CHALLENGE:
	case CP_PROOF:
		bb_rd_copy(&c, m->nonce, sizeof(m->nonce));
		if (h->type == CP_PROOF)
			bb_rd_copy(&c, m->mac, sizeof(m->mac));
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

/* src is a field of a struct cp_msg: a missing NUL within cap, or a length
 * the prefix cannot express, makes the frame unencodable. */
static void wc_str(struct bb_wr *c, size_t lenbytes, const char *src, size_t cap, size_t max)
{
	size_t n = strnlen(src, cap);

	if (n == cap || n > max) {
		c->bad = 1;
		return;
	}
	bb_wr_str(c, lenbytes, src, n);
}

static void wc_name(struct bb_wr *c, const char *src)
{
	wc_str(c, 1, src, WIRE_ENDPOINT_MAX + 1, WIRE_ENDPOINT_MAX);
}

size_t cp_encode(uint8_t *buf, size_t cap, const struct cp_msg *m)
{
	struct bb_wr c;
	uint64_t body;

	bb_wr_init(&c, buf, cap);
	bb_wr_reserve(&c, CP_HDR_LEN);
	switch (m->type) {
	case CP_HELLO:
		bb_wr_be16(&c, m->version);
		bb_wr_be16(&c, m->flags);
		bb_wr_be64(&c, m->incarnation);
		wc_name(&c, m->name);
		break;
	case CP_WELCOME:
		bb_wr_be16(&c, m->version);
		bb_wr_be32(&c, m->max_msg);
		wc_name(&c, m->name);
		wc_name(&c, m->endpoint);
		if (m->flags != 0)
			bb_wr_be16(&c, m->flags);
		break;
	case CP_SEND:
	case CP_DELIVER:
		bb_wr_be64(&c, m->msg_id);
		if (m->type == CP_DELIVER)
			bb_wr_be64(&c, m->incarnation);
		wc_name(&c, m->name);
		break;
	case CP_ACKED:
		bb_wr_be64(&c, m->first);
		bb_wr_be64(&c, m->last);
		break;
	case CP_LOST:
		bb_wr_be64(&c, m->first);
		bb_wr_be64(&c, m->last);
		wc_name(&c, m->name);
		wc_str(&c, 2, m->text, sizeof(m->text), CP_TEXT_MAX);
		break;
	case CP_ERROR:
		bb_wr_be64(&c, m->msg_id);
		bb_wr_be32(&c, (uint32_t)m->err);
		wc_str(&c, 2, m->text, sizeof(m->text), CP_TEXT_MAX);
		break;
	case CP_BYE:
		break;
	case CP_RESUME:
		bb_wr_be64(&c, m->count);
		wc_name(&c, m->name);
		break;
	case CP_PEERQ:
		wc_name(&c, m->name);
		break;
	case CP_TAKEN:
		bb_wr_be64(&c, m->count);
		break;
	case CP_SHM:
		bb_wr_be64(&c, m->ring_size);
		break;
	case CP_PEER:
		wc_name(&c, m->name);
		bb_wr_u8(&c, m->state);
		bb_wr_be32(&c, m->seconds);
		wc_str(&c, 2, m->text, sizeof(m->text), CP_TEXT_MAX);
		if (m->has_bytes) {
			bb_wr_be64(&c, m->bytes_out);
			bb_wr_be64(&c, m->bytes_in);
		}
		break;
	case CP_CHALLENGE:
	case CP_PROOF:
		bb_wr_bytes(&c, m->nonce, sizeof(m->nonce));
		if (m->type == CP_PROOF)
			bb_wr_bytes(&c, m->mac, sizeof(m->mac));
		break;
	default:
		return 0;
	}
	if (c.bad)
		return 0;
	body = (uint64_t)(c.len - CP_HDR_LEN);
	if (m->type == CP_SEND || m->type == CP_DELIVER)
		body += m->payload_len;
	if (body > CP_MAX_BODY)
		return 0;
	cp_hdr_write(buf, m->type, (uint32_t)body);
	return c.len;
}
