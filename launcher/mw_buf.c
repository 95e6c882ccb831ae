/* mw_buf.c - the growable byte buffer that callbacks serialize into. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/mw.h"

void *mw_buf_reserve(struct mw_buf *b, size_t len)
{
	if (len > SIZE_MAX - b->len)
		return NULL;
	if (b->len + len > b->cap) {
		size_t cap = b->cap ? b->cap : 256;
		unsigned char *p;

		while (cap < b->len + len)
			cap = cap > SIZE_MAX / 2 ? b->len + len : cap * 2;
		p = realloc(b->data, cap);
		if (p == NULL)
			return NULL;
		b->data = p;
		b->cap = cap;
	}
	return b->data + b->len;
}

int mw_buf_put(struct mw_buf *b, const void *p, size_t len)
{
	void *dst = mw_buf_reserve(b, len);

	if (dst == NULL)
		return -ENOMEM;
	if (len > 0)
		memcpy(dst, p, len);
	b->len += len;
	return 0;
}
