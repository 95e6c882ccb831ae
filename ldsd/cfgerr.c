/* cfgerr.c - errors of ldsd.conf's readers; see cfgerr.h. */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "cfgerr.h"
#include "config.h"

/* snprintf at buf + *n that leaves *n at the end of what fits. */
void cfg_append(char *buf, size_t len, size_t *n, const char *fmt, ...)
{
	va_list ap;
	int w;

	if (*n >= len)
		return;
	va_start(ap, fmt);
	w = vsnprintf(buf + *n, len - *n, fmt, ap);
	va_end(ap);
	if (w > 0)
		*n = *n + (size_t)w < len ? *n + (size_t)w : len - 1;
}

/* "peers.[1].streams": the notation of libconfig's config_lookup(). */
static void setting_path(const config_setting_t *s, char *buf, size_t len, size_t *n)
{
	if (config_setting_is_root(s))
		return;
	setting_path(config_setting_parent(s), buf, len, n);
	if (config_setting_name(s) != NULL)
		cfg_append(buf, len, n, "%s%s", *n ? "." : "", config_setting_name(s));
	else
		cfg_append(buf, len, n, "%s[%d]", *n ? "." : "", config_setting_index(s));
}

static int report(struct cfgctx *c, const char *prefix, const char *fmt, va_list ap)
{
	size_t n = 0;

	if (c->err == NULL || c->errlen == 0)
		return -1;
	cfg_append(c->err, c->errlen, &n, "%s: ", prefix);
	if (n < c->errlen)
		vsnprintf(c->err + n, c->errlen - n, fmt, ap);
	/* Values quoted from the file may hold anything; the contract is one line. */
	for (char *p = c->err; *p; p++)
		if ((unsigned char)*p < ' ' || *p == 0x7f)
			*p = '?';
	return -1;
}

/* An error with no setting to name: "FILE: message" or "FILE:LINE: message". */
int cfg_fail_at(struct cfgctx *c, const char *where, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	report(c, where, fmt, ap);
	va_end(ap);
	return -1;
}

/* The file s was read from.  libconfig names an @include file as written,
 * relative to the include directory (c->dir), and the top-level one not at
 * all. */
const char *cfg_source_file(const struct cfgctx *c, const config_setting_t *s, char *buf, size_t len)
{
	const char *file = config_setting_source_file(s);
	int n;

	if (file == NULL)
		return c->file;
	if (file[0] == '/' || (n = snprintf(buf, len, "%s/%s", c->dir, file)) < 0 || (size_t)n >= len)
		return file;
	return buf;
}

/*
 * "FILE:LINE: SETTING: message" about setting s, or, when missing is set,
 * about s's member of that name, which is absent, at s's line.  The root
 * group has no line of its own; the file's first line stands for it.
 */
int cfg_fail(struct cfgctx *c, const config_setting_t *s, const char *missing, const char *fmt, ...)
{
	char where[2 * PATH_MAX];
	const char *file = cfg_source_file(c, s, where, sizeof(where));
	unsigned line = config_setting_source_line(s) ? config_setting_source_line(s) : 1;
	char path[CONFIG_PATH_MAX] = "", prefix[sizeof(where) + CONFIG_PATH_MAX + 16];
	size_t pn = 0;
	va_list ap;

	setting_path(s, path, sizeof(path), &pn);
	if (missing != NULL)
		cfg_append(path, sizeof(path), &pn, "%s%s", pn ? "." : "", missing);
	snprintf(prefix, sizeof(prefix), "%s:%u: %s", file, line, path);
	va_start(ap, fmt);
	report(c, prefix, fmt, ap);
	va_end(ap);
	return -1;
}

const char *cfg_type_name(const config_setting_t *s)
{
	switch (config_setting_type(s)) {
	case CONFIG_TYPE_GROUP: return "a group";
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64: return "an integer";
	case CONFIG_TYPE_FLOAT: return "a float";
	case CONFIG_TYPE_STRING: return "a string";
	case CONFIG_TYPE_BOOL: return "a boolean";
	case CONFIG_TYPE_ARRAY: return "an array";
	case CONFIG_TYPE_LIST: return "a list";
	default: return "nothing";
	}
}


/* Cross-field errors name the first of the two settings if the file has it,
 * else the second: the one the user can see and change. */
const config_setting_t *cfg_blame(const config_setting_t *peer, const char *a, const char *b)
{
	const config_setting_t *s = config_setting_get_member(peer, a);

	if (s == NULL)
		s = config_setting_get_member(peer, b);
	return s != NULL ? s : peer;
}


/* Makes a key file's path absolute (relative ones are relative to the
 * config file's directory) so that messages and config_print() show what
 * was read. */
int cfg_resolve_path(struct cfgctx *c, const config_setting_t *s, char *key_file, size_t len)
{
	char path[CONFIG_PATH_MAX];
	int n;

	if (key_file[0] == '/')
		return 0;
	n = snprintf(path, sizeof(path), "%s/%s", c->dir, key_file);
	if (n < 0 || (size_t)n >= sizeof(path) || (size_t)n >= len)
		return cfg_fail(c, s, NULL, "%s/%s: path too long (at most %zu bytes)", c->dir, key_file, len - 1);
	memcpy(key_file, path, (size_t)n + 1);
	return 0;
}

