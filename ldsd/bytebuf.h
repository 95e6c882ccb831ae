/*
 * bytebuf.h - bounds-checked big-endian reading and writing of byte
 * buffers: the one set of helpers under every codec of LDS (wire.c,
 * clientproto.c, execmsg.c).  Header-only and static inline, so that the
 * codecs compile to what they did with private copies, and so that liblds
 * gains no symbol from it.
 *
 * A cursor's error flag is sticky: a read or write past the end yields
 * zero (or NULL) and sets bad, and every later call on that cursor does
 * nothing, so a codec reads or writes all its fields straight through and
 * checks bad once at the end.  Codecs set bad themselves for a field out
 * of range.  Nothing here allocates or does I/O; a cursor lives on the
 * caller's stack and points into the caller's buffer.
 */
#ifndef LDS_BYTEBUF_H
#define LDS_BYTEBUF_H

#include <errno.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

/* ---- fixed offsets, no check: the caller knows the bytes are there ---- */

static inline uint16_t bb_get_be16(const uint8_t *p)
{
	return (uint16_t)(p[0] << 8 | p[1]);
}

static inline uint32_t bb_get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static inline uint64_t bb_get_be64(const uint8_t *p)
{
	return (uint64_t)bb_get_be32(p) << 32 | bb_get_be32(p + 4);
}

static inline void bb_put_be16(uint8_t *p, uint16_t v)
{
	p[0] = (uint8_t)(v >> 8);
	p[1] = (uint8_t)v;
}

static inline void bb_put_be32(uint8_t *p, uint32_t v)
{
	p[0] = (uint8_t)(v >> 24);
	p[1] = (uint8_t)(v >> 16);
	p[2] = (uint8_t)(v >> 8);
	p[3] = (uint8_t)v;
}

static inline void bb_put_be64(uint8_t *p, uint64_t v)
{
	bb_put_be32(p, (uint32_t)(v >> 32));
	bb_put_be32(p + 4, (uint32_t)v);
}

/* ---- reader ------------------------------------------------------------ */

struct bb_rd {
	const uint8_t *p;           /* next byte to read */
	size_t left;                /* bytes from p to the end */
	int bad;                    /* a read ran past the end, or the codec refused a field */
};

static inline void bb_rd_init(struct bb_rd *r, const uint8_t *buf, size_t len)
{
	r->p = buf;
	r->left = len;
	r->bad = 0;
}

/* The next n bytes, or NULL (and bad set) if fewer are left or the cursor
 * is already bad.  n == 0 gives the current position. */
static inline const uint8_t *bb_rd_take(struct bb_rd *r, size_t n)
{
	const uint8_t *p = r->p;

	if (r->bad || n > r->left) {
		r->bad = 1;
		return NULL;
	}
	r->p += n;
	r->left -= n;
	return p;
}

/* An unsigned integer n (1..8) bytes wide, most significant byte first;
 * 0 if it is not there.  The fixed widths below are this with n constant. */
static inline uint64_t bb_rd_be(struct bb_rd *r, size_t n)
{
	const uint8_t *p = bb_rd_take(r, n);
	uint64_t v = 0;

	for (size_t i = 0; p != NULL && i < n; i++)
		v = v << 8 | p[i];
	return v;
}

static inline uint8_t bb_rd_u8(struct bb_rd *r)
{
	return (uint8_t)bb_rd_be(r, 1);
}

static inline uint16_t bb_rd_be16(struct bb_rd *r)
{
	return (uint16_t)bb_rd_be(r, 2);
}

static inline uint32_t bb_rd_be32(struct bb_rd *r)
{
	return (uint32_t)bb_rd_be(r, 4);
}

static inline uint64_t bb_rd_be64(struct bb_rd *r)
{
	return bb_rd_be(r, 8);
}

/* n bytes into dst; dst is left alone if they are not there. */
static inline void bb_rd_copy(struct bb_rd *r, void *dst, size_t n)
{
	const uint8_t *p = bb_rd_take(r, n);

	if (p != NULL && n > 0)
		memcpy(dst, p, n);
}

/*
 * A string: a lenbytes-wide length, then that many bytes.  Returns the
 * bytes (not NUL-terminated; they may hold any byte, NUL included: the
 * caller checks them) and their count in *n, or NULL with bad set if the
 * length exceeds max or the bytes are not there.
 */
static inline const uint8_t *bb_rd_str(struct bb_rd *r, size_t lenbytes, size_t max, size_t *n)
{
	*n = (size_t)bb_rd_be(r, lenbytes);
	if (*n > max) {
		r->bad = 1;
		return NULL;
	}
	return bb_rd_take(r, *n);
}

/* 0 if every read succeeded and the buffer was read to its end, else
 * -EBADMSG (truncated, a field refused, or trailing bytes). */
static inline int bb_rd_end(const struct bb_rd *r)
{
	return r->bad || r->left ? -EBADMSG : 0;
}

/* ---- writer ------------------------------------------------------------ */

struct bb_wr {
	uint8_t *buf;               /* NULL: nothing is written, len only counts */
	size_t cap;                 /* bytes of buf */
	size_t len;                 /* bytes written (or counted) so far */
	int bad;                    /* a write did not fit, or the codec refused a field */
};

/* With buf NULL the writer only counts: writes never overflow, and len
 * ends up as the size a buffer needs. */
static inline void bb_wr_init(struct bb_wr *w, uint8_t *buf, size_t cap)
{
	w->buf = buf;
	w->cap = cap;
	w->len = 0;
	w->bad = 0;
}

/* Claims the next n bytes and returns where they start, for the caller to
 * fill (now, or later like a header written last); NULL if they do not fit
 * (bad is then set), if the writer is bad, or if it only counts. */
static inline uint8_t *bb_wr_reserve(struct bb_wr *w, size_t n)
{
	uint8_t *p;

	if (w->bad)
		return NULL;
	if (w->buf == NULL) {
		w->len += n;
		return NULL;
	}
	if (n > w->cap - w->len) {
		w->bad = 1;
		return NULL;
	}
	p = w->buf + w->len;
	w->len += n;
	return p;
}

static inline void bb_wr_bytes(struct bb_wr *w, const void *src, size_t n)
{
	uint8_t *p = bb_wr_reserve(w, n);

	if (p != NULL && n > 0)
		memcpy(p, src, n);
}

/* The low n (1..8) bytes of v, most significant first. */
static inline void bb_wr_be(struct bb_wr *w, uint64_t v, size_t n)
{
	uint8_t *p = bb_wr_reserve(w, n);

	for (size_t i = n; p != NULL && i-- > 0; v >>= 8)
		p[i] = (uint8_t)v;
}

static inline void bb_wr_u8(struct bb_wr *w, uint8_t v)
{
	bb_wr_be(w, v, 1);
}

static inline void bb_wr_be16(struct bb_wr *w, uint16_t v)
{
	bb_wr_be(w, v, 2);
}

static inline void bb_wr_be32(struct bb_wr *w, uint32_t v)
{
	bb_wr_be(w, v, 4);
}

static inline void bb_wr_be64(struct bb_wr *w, uint64_t v)
{
	bb_wr_be(w, v, 8);
}

/* A string as bb_rd_str reads it: n as a lenbytes-wide length, then the n
 * bytes of s.  The caller has checked n and the bytes. */
static inline void bb_wr_str(struct bb_wr *w, size_t lenbytes, const void *s, size_t n)
{
	bb_wr_be(w, n, lenbytes);
	bb_wr_bytes(w, s, n);
}

#endif
