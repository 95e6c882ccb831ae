/* rdx_wspace.c - write rings and their credits; see rdx_wspace.h. */
#include <errno.h>

#include "rdx_proto.h"
#include "rdx_wspace.h"

static uint32_t diff(uint32_t a, uint32_t b)
{
	return a - b;
}

static void ring_init(struct rdx_wring *r, uint32_t size)
{
	*r = (struct rdx_wring){ .size = size, .limit = size };
}

void rdx_wspace_init(struct rdx_wspace *w, uint8_t *base, uint32_t size, size_t threshold)
{
	*w = (struct rdx_wspace){ .base = base, .grant = size, .threshold = threshold };
	ring_init(&w->in, size);
}

void rdx_wspace_peer(struct rdx_wspace *w, uint64_t addr, uint32_t rkey, uint32_t size)
{
	ring_init(&w->out, size);
	w->peer_addr = addr;
	w->peer_rkey = rkey;
}

static int frame_fits(const struct rdx_wring *r, size_t len)
{
	return r->size > 0 && len >= RP_MIN_WRITE && len <= r->size / RP_WRITE_FRAC;
}

enum rdx_way rdx_wspace_way(const struct rdx_wspace *w, size_t len, int sendable, size_t chunk, size_t inline_max)
{
	if (RP_HDR_LEN + len <= inline_max)
		return RDX_WAY_INLINE;
	if (len > w->threshold && sendable && frame_fits(&w->out, len))
		return RDX_WAY_WRITE;
	return len <= chunk ? RDX_WAY_SEND : RDX_WAY_CHUNKS;
}

/* The rule both sides apply: the next aligned place, or the ring's start
 * when the frame does not fit before its end.  len fits the ring. */
static struct rdx_wplace place(const struct rdx_wring *r, size_t len)
{
	uint32_t need = (uint32_t)((len + RP_WRITE_ALIGN - 1) / RP_WRITE_ALIGN * RP_WRITE_ALIGN);

	if (need > r->size - r->pos)
		return (struct rdx_wplace){ .off = 0, .span = r->size - r->pos + need };
	return (struct rdx_wplace){ .off = r->pos, .span = need };
}

static void advance(struct rdx_wring *r, const struct rdx_wplace *p)
{
	uint32_t need = p->off == r->pos ? p->span : p->span - (r->size - r->pos);

	r->pos = (p->off + need) % r->size;
	r->written += p->span;
}

int rdx_wspace_place(const struct rdx_wspace *w, size_t len, struct rdx_wplace *p)
{
	*p = place(&w->out, len);
	return diff(w->out.limit, w->out.written) >= p->span ? 0 : -EAGAIN;
}

void rdx_wspace_wrote(struct rdx_wspace *w, const struct rdx_wplace *p)
{
	advance(&w->out, p);
}

int rdx_wspace_heard(struct rdx_wspace *w, uint32_t grant)
{
	if (diff(grant, w->out.limit) > w->out.size || diff(grant, w->out.written) > w->out.size)
		return -EPROTO;
	w->out.limit = grant;
	return 0;
}

int rdx_wspace_arrived(struct rdx_wspace *w, uint32_t off, size_t len, uint8_t **data, uint32_t *span)
{
	struct rdx_wplace p;

	if (!frame_fits(&w->in, len))
		return -EPROTO;
	p = place(&w->in, len);
	if (off != p.off || diff(w->in.limit, w->in.written) < p.span)
		return -EPROTO;
	advance(&w->in, &p);
	*data = w->base + p.off;
	*span = p.span;
	return 0;
}

void rdx_wspace_consumed(struct rdx_wspace *w, uint32_t span)
{
	w->grant += span;
}

int rdx_wspace_update_due(const struct rdx_wspace *w)
{
	return w->in.size > 0 && diff(w->grant, w->in.limit) >= w->in.size / 4;
}

uint32_t rdx_wspace_tell(struct rdx_wspace *w)
{
	w->in.limit = w->grant;
	return w->grant;
}
