/* rdx_chunk.c - messages into chunks and back; see rdx_chunk.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "rdx_chunk.h"

int rdx_chunker_start(struct rdx_chunker *k, const struct iovec *iov, int iovcnt, void *const *desc, void *ctx,
		       size_t max_msg)
{
	size_t total = 0;
	int n = 0;

	if (iovcnt < 1 || iovcnt > RDMA_CHUNK_IOV)
		return -EINVAL;
	for (int i = 0; i < iovcnt; i++) {
		if (iov[i].iov_len == 0)
			continue;
		if (iov[i].iov_len > max_msg - total)
			return -EMSGSIZE;
		k->iov[n++] = (struct rdx_seg){ .base = iov[i].iov_base, .len = iov[i].iov_len,
						 .desc = desc ? desc[i] : NULL };
		total += iov[i].iov_len;
	}
	if (total == 0)
		return -EMSGSIZE;
	k->iovcnt = n;
	k->total = total;
	k->off = 0;
	k->cur = 0;
	k->cur_off = 0;
	k->ctx = ctx;
	return 0;
}

int rdx_chunker_registered(const struct rdx_chunker *k, uint32_t max_seg)
{
	if ((uint32_t)k->iovcnt > max_seg)
		return 0;
	for (int i = 0; i < k->iovcnt; i++)
		if (k->iov[i].desc == NULL)
			return 0;
	return 1;
}

int rdx_chunker_busy(const struct rdx_chunker *k)
{
	return k->off < k->total;
}

int rdx_chunker_next(const struct rdx_chunker *k, size_t room, struct rdx_chunk *c)
{
	int i = k->cur;
	size_t at = k->cur_off;

	if (!rdx_chunker_busy(k) || room == 0)
		return -ENOENT;
	c->nseg = 0;
	c->len = 0;
	c->registered = 1;
	while (c->len < room && i < k->iovcnt) {
		size_t n = k->iov[i].len - at;

		if (n > room - c->len)
			n = room - c->len;
		c->seg[c->nseg++] = (struct rdx_seg){ .base = k->iov[i].base + at, .len = n, .desc = k->iov[i].desc };
		c->registered &= k->iov[i].desc != NULL;
		c->len += n;
		i++;
		at = 0;
	}
	c->flags = (uint8_t)((k->off == 0 ? RP_F_FIRST : 0) | (k->off + c->len == k->total ? RP_F_LAST : 0));
	return 0;
}

void rdx_chunker_advance(struct rdx_chunker *k, const struct rdx_chunk *c)
{
	size_t left = c->len;

	k->off += c->len;
	while (left > 0) {
		size_t n = k->iov[k->cur].len - k->cur_off;

		if (n > left) {
			k->cur_off += left;
			return;
		}
		left -= n;
		k->cur++;
		k->cur_off = 0;
	}
}

void rdx_chunk_copy(const struct rdx_chunk *c, uint8_t *dst)
{
	for (int i = 0; i < c->nseg; i++) {
		memcpy(dst, c->seg[i].base, c->seg[i].len);
		dst += c->seg[i].len;
	}
}

int rdx_reasm_whole(const struct rdx_reasm *r, const struct rp_hdr *h)
{
	if (h->flags != (RP_F_FIRST | RP_F_LAST))
		return 0;
	return r->buf == NULL ? 1 : -EBADMSG;
}

int rdx_reasm_add(struct rdx_reasm *r, const struct rp_hdr *h, const uint8_t *payload, uint8_t **msg, size_t *len)
{
	if ((h->flags & RP_F_FIRST) != 0) {
		if (r->buf != NULL)
			return -EBADMSG;
		r->buf = malloc(h->total);
		if (r->buf == NULL)
			return -ENOMEM;
		r->total = h->total;
		r->got = 0;
	} else if (r->buf == NULL || h->total != r->total) {
		return -EBADMSG;
	}
	if (h->len > r->total - r->got)
		return -EBADMSG;
	memcpy(r->buf + r->got, payload, h->len);
	r->got += h->len;
	if ((h->flags & RP_F_LAST) == 0)
		return r->got < r->total ? 0 : -EBADMSG;
	if (r->got != r->total)
		return -EBADMSG;
	*msg = r->buf;
	*len = r->total;
	r->buf = NULL;
	return 1;
}

void rdx_reasm_fini(struct rdx_reasm *r)
{
	free(r->buf);
	r->buf = NULL;
}
