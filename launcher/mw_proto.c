/* mw_proto.c - message header encode/decode. */
#include <errno.h>
#include <string.h>

#include "launcher/mw.h"

#include "launcher/mw_proto.h"

const char *const mw_msg_names[MW_MSG_MAX] = {
	"?", "HELLO", "TASK", "RESULT", "STOP", "BYE", "FAIL", "AWAY", "BACK", "STATS", "PING", "JOINED", "GONE",
};

void mw_put_le(unsigned char *p, uint64_t v, int n)
{
	for (int i = 0; i < n; i++)
		p[i] = (unsigned char)(v >> (8 * i));
}

uint64_t mw_get_le(const unsigned char *p, int n)
{
	uint64_t v = 0;

	for (int i = n - 1; i >= 0; i--)
		v = v << 8 | p[i];
	return v;
}

void mw_hdr_encode(unsigned char out[MW_HDR_LEN], const struct mw_hdr *h)
{
	mw_put_le(out, h->type, 4);
	mw_put_le(out + 4, h->len, 4);
	mw_put_le(out + 8, h->id, 8);
	mw_put_le(out + 16, h->aux, 8);
}

int mw_hdr_decode(const unsigned char *msg, size_t n, struct mw_hdr *h)
{
	if (n < MW_HDR_LEN)
		return -EBADMSG;
	h->type = (uint32_t)mw_get_le(msg, 4);
	h->len = (uint32_t)mw_get_le(msg + 4, 4);
	h->id = mw_get_le(msg + 8, 8);
	h->aux = mw_get_le(msg + 16, 8);
	if (h->type == 0 || h->type >= MW_MSG_MAX || (size_t)h->len != n - MW_HDR_LEN)
		return -EBADMSG;
	return 0;
}

int mw_item_put(struct mw_buf *b, uint64_t id, uint64_t aux, const void *data, uint32_t len)
{
	unsigned char *p = mw_buf_reserve(b, MW_ITEM_LEN + (size_t)len);

	if (p == NULL)
		return -ENOMEM;
	mw_put_le(p, id, 8);
	mw_put_le(p + 8, aux, 8);
	mw_put_le(p + 16, len, 4);
	if (len > 0)
		memcpy(p + MW_ITEM_LEN, data, len);
	b->len += MW_ITEM_LEN + (size_t)len;
	return 0;
}

int mw_item_next(const unsigned char *p, size_t n, size_t *off, struct mw_item *it)
{
	if (*off == n)
		return 0;
	if (*off > n || n - *off < MW_ITEM_LEN)
		return -EBADMSG;
	it->id = mw_get_le(p + *off, 8);
	it->aux = mw_get_le(p + *off + 8, 8);
	it->len = (uint32_t)mw_get_le(p + *off + 16, 4);
	if (n - *off - MW_ITEM_LEN < it->len)
		return -EBADMSG;
	it->data = p + *off + MW_ITEM_LEN;
	*off += MW_ITEM_LEN + (size_t)it->len;
	return 1;
}

void mw_stats_msg_encode(unsigned char out[MW_STATS_LEN], const struct mw_cm_stats *s)
{
	mw_put_le(out, s->cache_saved, 8);
	mw_put_le(out + 8, s->late, 8);
	mw_put_le(out + 16, s->link_out, 8);
	mw_put_le(out + 24, s->link_in, 8);
}

int mw_stats_msg_decode(const struct mw_hdr *h, const unsigned char *p, struct mw_cm_stats *s)
{
	if (h->len < MW_STATS_LEN)
		return -EBADMSG;
	s->wan_out = h->id;
	s->wan_in = h->aux;
	s->cache_saved = mw_get_le(p, 8);
	s->late = mw_get_le(p + 8, 8);
	s->link_out = mw_get_le(p + 16, 8);
	s->link_in = mw_get_le(p + 24, 8);
	return 0;
}
