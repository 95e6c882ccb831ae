/* rdx_proto.c - the RDMA transport's header and private data; see rdx_proto.h. */
#include <errno.h>

#include "rdx_proto.h"

static void put16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static void put32(uint8_t *p, uint32_t v)
{
	put16(p, (uint16_t)(v >> 16));
	put16(p + 2, (uint16_t)v);
}

static uint16_t get16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static uint32_t get32(const uint8_t *p)
{
	return (uint32_t)get16(p) << 16 | get16(p + 2);
}

void rp_hdr_encode(const struct rp_hdr *h, uint8_t *buf)
{
	buf[0] = h->type;
	buf[1] = h->flags;
	put16(buf + 2, h->credits);
	put32(buf + 4, h->len);
	put32(buf + 8, h->total);
}

int rp_hdr_decode(const uint8_t *buf, size_t got, size_t max_msg, struct rp_hdr *h)
{
	if (got < RP_HDR_LEN)
		return -EBADMSG;
	h->type = buf[0];
	h->flags = buf[1];
	h->credits = get16(buf + 2);
	h->len = get32(buf + 4);
	h->total = get32(buf + 8);
	if ((size_t)h->len != got - RP_HDR_LEN)
		return -EBADMSG;
	switch (h->type) {
	case RP_CREDIT:
		return h->flags == 0 && h->len == 0 ? 0 : -EBADMSG;
	case RP_DATA:
		if ((h->flags & ~(RP_F_FIRST | RP_F_LAST)) != 0 || h->len == 0 || h->total < h->len ||
		    h->total > max_msg)
			return -EBADMSG;
		/* One chunk is the whole message exactly. */
		if (h->flags == (RP_F_FIRST | RP_F_LAST) && h->len != h->total)
			return -EBADMSG;
		return 0;
	default:
		return -EBADMSG;
	}
}

void rp_priv_encode(const struct rp_priv *p, uint8_t *buf)
{
	put32(buf, RP_MAGIC);
	buf[4] = RP_VERSION;
	buf[5] = 0;
	put16(buf + 6, p->depth);
	put32(buf + 8, p->buf_size);
	put32(buf + 12, (uint32_t)(p->ring_addr >> 32));
	put32(buf + 16, (uint32_t)p->ring_addr);
	put32(buf + 20, p->ring_rkey);
	put32(buf + 24, p->ring_size);
}

static int ring_ok(const struct rp_priv *p)
{
	if (p->ring_size == 0)
		return p->ring_addr == 0 && p->ring_rkey == 0;
	return p->ring_size >= RP_MIN_RING && p->ring_size <= RP_MAX_RING && p->ring_size % RP_RING_PAGE == 0;
}

int rp_priv_decode(const uint8_t *buf, size_t len, struct rp_priv *p)
{
	if (buf == NULL || len < RP_PRIV_LEN)
		return -EBADMSG;
	if (get32(buf) != RP_MAGIC || buf[4] != RP_VERSION)
		return -EPROTO;
	p->depth = get16(buf + 6);
	p->buf_size = get32(buf + 8);
	p->ring_addr = (uint64_t)get32(buf + 12) << 32 | get32(buf + 16);
	p->ring_rkey = get32(buf + 20);
	p->ring_size = get32(buf + 24);
	if (p->depth < RP_MIN_DEPTH || p->depth > RP_MAX_DEPTH || p->buf_size < RP_MIN_BUF || p->buf_size > RP_MAX_BUF ||
	    !ring_ok(p))
		return -EBADMSG;
	return 0;
}

uint32_t rp_imm_encode(uint16_t credits, uint32_t off)
{
	return (uint32_t)credits << 16 | (off / RP_WRITE_ALIGN & 0xffffu);
}

void rp_imm_decode(uint32_t imm, uint16_t *credits, uint32_t *off)
{
	*credits = (uint16_t)(imm >> 16);
	*off = (imm & 0xffffu) * RP_WRITE_ALIGN;
}
