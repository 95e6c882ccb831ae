/* jsonr.c - a small JSON reader; see jsonr.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "jsonr.h"

struct parser {
	const char *s, *p;
	char *err;
	size_t errlen;
	int failed;
};

static int jp_fail(struct parser *ps, const char *what)
{
	if (!ps->failed)
		snprintf(ps->err, ps->errlen, "offset %zu: %s", (size_t)(ps->p - ps->s), what);
	ps->failed = 1;
	return -1;
}

static void jp_ws(struct parser *ps)
{
	while (*ps->p == ' ' || *ps->p == '\t' || *ps->p == '\n' || *ps->p == '\r')
		ps->p++;
}

static int jp_value(struct parser *ps, struct jsonr *v, int depth);

static int jp_string(struct parser *ps, char **out)
{
	size_t cap = 16, n = 0;
	char *b = malloc(cap);

	if (b == NULL)
		return jp_fail(ps, "out of memory");
	ps->p++; /* the opening quote */
	for (;;) {
		char c = *ps->p++;

		if (c == '\0' || (unsigned char)c < 0x20) {
			free(b);
			return jp_fail(ps, "unterminated string");
		}
		if (c == '"')
			break;
		if (c == '\\') {
			char e = *ps->p++;

			switch (e) {
			case '"': case '\\': case '/': c = e; break;
			case 'b': c = '\b'; break;
			case 'f': c = '\f'; break;
			case 'n': c = '\n'; break;
			case 'r': c = '\r'; break;
			case 't': c = '\t'; break;
			case 'u': {
				unsigned u;

				if (sscanf(ps->p, "%4x", &u) != 1 || strlen(ps->p) < 4) {
					free(b);
					return jp_fail(ps, "bad \\u escape");
				}
				ps->p += 4;
				c = u < 0x80 ? (char)u : '?';
				break;
			}
			default:
				free(b);
				return jp_fail(ps, "bad escape");
			}
		}
		if (n + 2 > cap) {
			char *nb = realloc(b, cap *= 2);

			if (nb == NULL) {
				free(b);
				return jp_fail(ps, "out of memory");
			}
			b = nb;
		}
		b[n++] = c;
	}
	b[n] = '\0';
	*out = b;
	return 0;
}

/* Appends one member to an array or object; returns the new slot. */
static struct jsonr *jp_add(struct parser *ps, struct jsonr *v, char *key)
{
	struct jsonr *k = realloc(v->kids, (v->n + 1) * sizeof(*k));

	if (k == NULL) {
		jp_fail(ps, "out of memory");
		return NULL;
	}
	v->kids = k;
	if (v->type == JSONR_OBJ) {
		char **keys = realloc(v->keys, (v->n + 1) * sizeof(*keys));

		if (keys == NULL) {
			jp_fail(ps, "out of memory");
			return NULL;
		}
		v->keys = keys;
		keys[v->n] = key;
	}
	memset(&v->kids[v->n], 0, sizeof(v->kids[0]));
	return &v->kids[v->n++];
}

static int jp_container(struct parser *ps, struct jsonr *v, int depth)
{
	char close = *ps->p == '{' ? '}' : ']';

	v->type = close == '}' ? JSONR_OBJ : JSONR_ARR;
	if (depth >= JSONR_DEPTH)
		return jp_fail(ps, "nested too deeply");
	ps->p++;
	jp_ws(ps);
	if (*ps->p == close) {
		ps->p++;
		return 0;
	}
	for (;;) {
		char *key = NULL;
		struct jsonr *slot;

		jp_ws(ps);
		if (v->type == JSONR_OBJ) {
			if (*ps->p != '"' || jp_string(ps, &key) < 0)
				return jp_fail(ps, "expected a member name");
			jp_ws(ps);
			if (*ps->p++ != ':') {
				free(key);
				return jp_fail(ps, "expected ':'");
			}
		}
		slot = jp_add(ps, v, key);
		if (slot == NULL) {
			free(key);
			return -1;
		}
		if (jp_value(ps, slot, depth + 1) < 0)
			return -1;
		jp_ws(ps);
		if (*ps->p == ',') {
			ps->p++;
			continue;
		}
		if (*ps->p++ == close)
			return 0;
		return jp_fail(ps, "expected ',' or the end of the container");
	}
}

static int jp_value(struct parser *ps, struct jsonr *v, int depth)
{
	char *end;

	jp_ws(ps);
	switch (*ps->p) {
	case '{':
	case '[':
		return jp_container(ps, v, depth);
	case '"':
		v->type = JSONR_STR;
		return jp_string(ps, &v->str);
	case 't':
	case 'f':
	case 'n': {
		static const char *const words[] = { "true", "false", "null" };

		for (int i = 0; i < 3; i++) {
			if (strncmp(ps->p, words[i], strlen(words[i])) == 0) {
				ps->p += strlen(words[i]);
				v->type = i < 2 ? JSONR_BOOL : JSONR_NULL;
				v->num = i == 0;
				return 0;
			}
		}
		return jp_fail(ps, "unexpected word");
	}
	default:
		errno = 0;
		v->num = strtod(ps->p, &end);
		if (end == ps->p || errno == ERANGE)
			return jp_fail(ps, "expected a value");
		v->type = JSONR_NUM;
		ps->p = end;
		return 0;
	}
}

struct jsonr *jsonr_parse(const char *text, char *err, size_t errlen)
{
	struct parser ps = { .s = text, .p = text, .err = err, .errlen = errlen };
	struct jsonr *v = calloc(1, sizeof(*v));

	if (v == NULL) {
		snprintf(err, errlen, "out of memory");
		return NULL;
	}
	if (jp_value(&ps, v, 0) == 0) {
		jp_ws(&ps);
		if (*ps.p == '\0')
			return v;
		jp_fail(&ps, "text after the document");
	}
	jsonr_free(v);
	return NULL;
}

static void jsonr_clear(struct jsonr *v)
{
	for (size_t i = 0; i < v->n; i++) {
		jsonr_clear(&v->kids[i]);
		if (v->keys)
			free(v->keys[i]);
	}
	free(v->kids);
	free(v->keys);
	free(v->str);
}

void jsonr_free(struct jsonr *v)
{
	if (v == NULL)
		return;
	jsonr_clear(v);
	free(v);
}

const struct jsonr *jsonr_get(const struct jsonr *v, const char *key)
{
	if (v == NULL || v->type != JSONR_OBJ)
		return NULL;
	for (size_t i = 0; i < v->n; i++)
		if (strcmp(v->keys[i], key) == 0)
			return &v->kids[i];
	return NULL;
}

double jsonr_num(const struct jsonr *v, double dflt)
{
	return v && (v->type == JSONR_NUM || v->type == JSONR_BOOL) ? v->num : dflt;
}

const char *jsonr_str(const struct jsonr *v)
{
	return v && v->type == JSONR_STR ? v->str : "";
}

struct jsonr *jsonr_read_file(const char *path, char *err, size_t errlen)
{
	FILE *f = fopen(path, "r");
	char *text = NULL;
	size_t len = 0, cap = 0, n;
	struct jsonr *v = NULL;

	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
		return NULL;
	}
	do {
		char *t = len + 4096 >= cap ? realloc(text, cap = 2 * cap + 8192) : text;

		if (t == NULL) {
			snprintf(err, errlen, "%s: out of memory", path);
			goto out;
		}
		text = t;
		len += n = fread(text + len, 1, cap - len - 1, f);
	} while (n > 0);
	text[len] = '\0';
	if (ferror(f))
		snprintf(err, errlen, "%s: %s", path, strerror(errno));
	else if ((v = jsonr_parse(text, err, errlen)) == NULL)
		snprintf(err + strlen(err), errlen - strlen(err), " (in %s)", path);
out:
	free(text);
	fclose(f);
	return v;
}
