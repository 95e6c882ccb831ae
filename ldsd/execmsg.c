/*
 * execmsg.c - exec service messages; see execmsg.h and docs/protocol.md.
 *
 * The decoder walks a START twice with the same code: first to check it
 * and count what it holds, then, after one allocation of exactly that
 * size, to copy its strings (NUL-terminated) and build the arrays that
 * point at them.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "bytebuf.h"
#include "execmsg.h"

const char *const exec_type_names[EXEC_TYPE_MAX] = {
	[0] = "INVALID",
	[EXEC_START] = "START",
	[EXEC_STOP] = "STOP",
	[EXEC_STARTED] = "STARTED",
	[EXEC_OUTPUT] = "OUTPUT",
	[EXEC_EXIT] = "EXIT",
	[EXEC_REFUSED] = "REFUSED",
	[EXEC_END] = "END",
};

#define HDR_LEN 6   /* u8 version, u8 type, u32 job */

int exec_reserved_name(const char *endpoint)
{
	const char *slash = strchr(endpoint, '/');
	const char *name = slash ? slash + 1 : endpoint;

	return strncmp(name, EXEC_RESERVED, strlen(EXEC_RESERVED)) == 0;
}

int exec_file_name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > EXEC_FILE_NAME_MAX || name[0] == '.')
		return 0;
	return strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

int exec_user_name_valid(const char *name)
{
	size_t n = strlen(name);

	if (n == 0 || n > EXEC_USER_MAX || name[0] == '-')
		return 0;
	return strspn(name, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._-") == n;
}

/* Bytes of strings and texts: printable, so that nothing a peer sends can
 * cut a C string short or forge a log line. */
static int text_ok(const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++)
		if (p[i] < 0x20 || p[i] == 0x7f)
			return 0;
	return 1;
}

/* ---- writing: with w->buf NULL only counts ------------------------------- */

/* A string with a lenbytes-wide length, at most max bytes; empty only if
 * may_be_empty. */
static void w_str(struct bb_wr *w, const char *s, size_t lenbytes, size_t max, int may_be_empty)
{
	size_t n = s ? strlen(s) : 0;

	if (n > max || (n == 0 && !may_be_empty) || !text_ok((const uint8_t *)s, n)) {
		w->bad = 1;
		return;
	}
	bb_wr_str(w, lenbytes, s, n);
}

static void w_start(struct bb_wr *w, const struct exec_start *s)
{
	if (s->nfiles > EXEC_MAX_FILES || s->nranks == 0 || s->nranks > EXEC_MAX_RANKS ||
	    (s->collect && s->collect[0] && !exec_file_name_valid(s->collect)) || s->user == NULL ||
	    !exec_user_name_valid(s->user)) {
		w->bad = 1;
		return;
	}
	bb_wr_be32(w, s->uid);
	w_str(w, s->user, 1, EXEC_USER_MAX, 0);
	bb_wr_be32(w, s->timeout);
	bb_wr_be32(w, s->lease);
	w_str(w, s->hosts, 2, EXEC_MAX_STR, 1);
	w_str(w, s->hostfile, 2, EXEC_MAX_STR, 1);
	w_str(w, s->collect, 1, EXEC_FILE_NAME_MAX, 1);
	bb_wr_u8(w, s->nfiles);
	for (unsigned i = 0; i < s->nfiles; i++) {
		if (!exec_file_name_valid(s->files[i].name) || s->files[i].len > EXEC_MAX_FILE) {
			w->bad = 1;
			return;
		}
		w_str(w, s->files[i].name, 1, EXEC_FILE_NAME_MAX, 0);
		bb_wr_be32(w, s->files[i].len);
		bb_wr_bytes(w, s->files[i].data, s->files[i].len);
	}
	bb_wr_be16(w, s->nranks);
	for (unsigned i = 0; i < s->nranks; i++) {
		const struct exec_rank *r = &s->ranks[i];

		if (r->nargs > EXEC_MAX_ARGS || r->nenv > EXEC_MAX_ENV) {
			w->bad = 1;
			return;
		}
		w_str(w, r->program, 2, EXEC_MAX_STR, 0);
		bb_wr_u8(w, r->nargs);
		for (unsigned k = 0; k < r->nargs; k++)
			w_str(w, r->args[k], 2, EXEC_MAX_STR, 1);
		bb_wr_u8(w, r->nenv);
		for (unsigned k = 0; k < r->nenv; k++)
			w_str(w, r->env[k], 2, EXEC_MAX_STR, 0);
	}
}

size_t exec_encode(const struct exec_msg *m, uint8_t *buf, size_t cap)
{
	struct bb_wr w;

	bb_wr_init(&w, buf, cap);
	bb_wr_u8(&w, EXEC_VERSION);
	bb_wr_u8(&w, m->type);
	bb_wr_be32(&w, m->job);
	switch (m->type) {
	case EXEC_START:
		w_start(&w, &m->start);
		break;
	case EXEC_OUTPUT:
		if (m->stream == 0 || m->stream >= EXEC_STREAM_MAX || m->len == 0 || m->len > EXEC_MAX_CHUNK)
			return 0;
		bb_wr_u8(&w, m->stream);
		bb_wr_bytes(&w, m->data, m->len);
		break;
	case EXEC_EXIT:
		bb_wr_be32(&w, (uint32_t)m->status);
		w_str(&w, m->text, 2, EXEC_TEXT_MAX, 1);
		break;
	case EXEC_REFUSED:
		if (m->err <= 0)
			return 0;
		bb_wr_be32(&w, (uint32_t)m->err);
		w_str(&w, m->text, 2, EXEC_TEXT_MAX, 1);
		break;
	case EXEC_STOP:
	case EXEC_STARTED:
	case EXEC_END:
		w_str(&w, m->text, 2, EXEC_TEXT_MAX, 1);
		break;
	default:
		return 0;
	}
	if (w.bad || w.len > EXEC_MAX_MSG)
		return 0;
	return w.len;
}

/* ---- reading --------------------------------------------------------------- */

/*
 * The reader of one message.  In the counting pass (arena NULL) strings
 * are checked and their sizes added up; in the copying pass they are
 * copied into the arena, pointer arrays first (aligned), strings after.
 */
struct erd {
	struct bb_rd c;
	char *arena;
	size_t ptr_used, str_used;  /* bytes taken in each region */
	size_t ptr_size;            /* start of the string region */
};

/* Room for n bytes of pointers (or rank structs); NULL while counting. */
static void *r_alloc_ptrs(struct erd *r, size_t n)
{
	void *p = r->arena ? r->arena + r->ptr_used : NULL;

	r->ptr_used += n;
	return p;
}

static const char *r_str(struct erd *r, size_t lenbytes, size_t max, int may_be_empty)
{
	size_t n;
	const uint8_t *p = bb_rd_str(&r->c, lenbytes, max, &n);
	char *s;

	if (p == NULL || (n == 0 && !may_be_empty) || !text_ok(p, n)) {
		r->c.bad = 1;
		return "";
	}
	if (r->arena == NULL) {
		r->str_used += n + 1;
		return "";
	}
	s = r->arena + r->ptr_size + r->str_used;
	memcpy(s, p, n);
	s[n] = '\0';
	r->str_used += n + 1;
	return s;
}

static const char **r_strs(struct erd *r, unsigned n, int may_be_empty)
{
	const char **v = r_alloc_ptrs(r, n * sizeof(*v));

	for (unsigned i = 0; i < n && !r->c.bad; i++) {
		const char *s = r_str(r, 2, EXEC_MAX_STR, may_be_empty);

		if (v)
			v[i] = s;
	}
	return v;
}

static void r_start(struct erd *r, struct exec_start *s)
{
	s->uid = bb_rd_be32(&r->c);
	s->user = r_str(r, 1, EXEC_USER_MAX, 0);
	if (r->arena && !exec_user_name_valid(s->user))
		r->c.bad = 1;
	s->timeout = bb_rd_be32(&r->c);
	s->lease = bb_rd_be32(&r->c);
	s->hosts = r_str(r, 2, EXEC_MAX_STR, 1);
	s->hostfile = r_str(r, 2, EXEC_MAX_STR, 1);
	s->collect = r_str(r, 1, EXEC_FILE_NAME_MAX, 1);
	if (r->arena && s->collect[0] && !exec_file_name_valid(s->collect))
		r->c.bad = 1;
	s->nfiles = bb_rd_u8(&r->c);
	if (s->nfiles > EXEC_MAX_FILES)
		r->c.bad = 1;
	for (unsigned i = 0; i < s->nfiles && !r->c.bad; i++) {
		struct exec_file *f = &s->files[i];

		f->name = r_str(r, 1, EXEC_FILE_NAME_MAX, 0);
		f->len = bb_rd_be32(&r->c);
		if (f->len > EXEC_MAX_FILE || (r->arena && !exec_file_name_valid(f->name)))
			r->c.bad = 1;
		f->data = bb_rd_take(&r->c, f->len);
	}
	s->nranks = bb_rd_be16(&r->c);
	if (s->nranks == 0 || s->nranks > EXEC_MAX_RANKS)
		r->c.bad = 1;
	if (r->c.bad)
		return;
	s->ranks = r_alloc_ptrs(r, s->nranks * sizeof(*s->ranks));
	for (unsigned i = 0; i < s->nranks && !r->c.bad; i++) {
		struct exec_rank rk = { 0 };

		rk.program = r_str(r, 2, EXEC_MAX_STR, 0);
		rk.nargs = bb_rd_u8(&r->c);
		if (rk.nargs > EXEC_MAX_ARGS)
			r->c.bad = 1;
		rk.args = r_strs(r, rk.nargs, 1);
		rk.nenv = bb_rd_u8(&r->c);
		if (rk.nenv > EXEC_MAX_ENV)
			r->c.bad = 1;
		rk.env = r_strs(r, rk.nenv, 0);
		if (s->ranks)
			s->ranks[i] = rk;
	}
}

/* STOP, STARTED, EXIT and REFUSED end with a text, read straight into
 * m->text: no arena needed. */
static void r_text(struct erd *r, struct exec_msg *m)
{
	size_t n;
	const uint8_t *p = bb_rd_str(&r->c, 2, EXEC_TEXT_MAX, &n);

	if (p == NULL || !text_ok(p, n)) {
		r->c.bad = 1;
		return;
	}
	memcpy(m->text, p, n);
	m->text[n] = '\0';
}

/* One pass over the body after the header. */
static void r_body(struct erd *r, struct exec_msg *m)
{
	size_t n;

	switch (m->type) {
	case EXEC_START:
		r_start(r, &m->start);
		break;
	case EXEC_OUTPUT:
		m->stream = bb_rd_u8(&r->c);
		n = r->c.left;
		if (m->stream == 0 || m->stream >= EXEC_STREAM_MAX || n == 0 || n > EXEC_MAX_CHUNK)
			r->c.bad = 1;
		m->data = bb_rd_take(&r->c, n);
		m->len = (uint32_t)n;
		break;
	case EXEC_EXIT:
		m->status = (int32_t)bb_rd_be32(&r->c);
		r_text(r, m);
		break;
	case EXEC_REFUSED:
		m->err = (int32_t)bb_rd_be32(&r->c);
		if (m->err <= 0)
			r->c.bad = 1;
		r_text(r, m);
		break;
	case EXEC_STOP:
	case EXEC_STARTED:
	case EXEC_END:
		r_text(r, m);
		break;
	default:
		r->c.bad = 1;
	}
	if (r->c.left != 0)
		r->c.bad = 1;
}

int exec_decode(const uint8_t *buf, size_t len, struct exec_msg *m)
{
	struct erd r = { 0 };
	size_t ptrs;

	bb_rd_init(&r.c, buf, len);
	memset(m, 0, sizeof(*m));
	if (len > EXEC_MAX_MSG)
		return -EBADMSG;
	if (len >= 1 && buf[0] != EXEC_VERSION)
		return -EPROTONOSUPPORT;
	bb_rd_take(&r.c, 2);
	m->type = len >= 2 ? buf[1] : 0;
	m->job = bb_rd_be32(&r.c);
	if (r.c.bad)
		return -EBADMSG;
	r_body(&r, m);
	if (r.c.bad)
		return -EBADMSG;
	if (m->type != EXEC_START)
		return 0;
	/* Second pass: copy into one block sized by the first. */
	ptrs = (r.ptr_used + 15) & ~(size_t)15;
	m->arena = malloc(ptrs + r.str_used + 1);
	if (m->arena == NULL)
		return -ENOMEM;
	r = (struct erd){ .arena = m->arena, .ptr_size = ptrs };
	bb_rd_init(&r.c, buf + HDR_LEN, len - HDR_LEN);
	memset(&m->start, 0, sizeof(m->start));
	r_body(&r, m);
	if (r.c.bad) {
		exec_msg_free(m);
		return -EBADMSG;
	}
	return 0;
}

int exec_peek_requester(const uint8_t *buf, size_t len, uint32_t *uid, char *user)
{
	struct bb_rd r;
	const uint8_t *name;
	size_t n;

	if (len >= 1 && buf[0] != EXEC_VERSION)
		return -EPROTONOSUPPORT;
	bb_rd_init(&r, buf, len);
	bb_rd_take(&r, 1);
	if (bb_rd_u8(&r) != EXEC_START)
		return r.bad ? -EBADMSG : 0;
	bb_rd_take(&r, 4);
	*uid = bb_rd_be32(&r);
	name = bb_rd_str(&r, 1, EXEC_USER_MAX, &n);
	if (name == NULL || !text_ok(name, n))
		return -EBADMSG;
	memcpy(user, name, n);
	user[n] = '\0';
	return exec_user_name_valid(user) ? 1 : -EBADMSG;
}

void exec_msg_free(struct exec_msg *m)
{
	free(m->arena);
	m->arena = NULL;
	memset(&m->start, 0, sizeof(m->start));
}
