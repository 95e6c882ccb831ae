/* cfgnum.c - numbers of ldsd.conf as written; see cfgnum.h. */
#include <ctype.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfgnum.h"

/* Enough of the file from a setting's line to hold its name and value. */
#define CFGNUM_WINDOW 1024

void cfgnum_parse(const char *token, struct cfgnum *n)
{
	const char *p = token + (*token == '+' || *token == '-');
	unsigned base = 10;
	size_t len = strlen(token);

	memset(n, 0, sizeof(*n));
	if (len < sizeof(n->text))
		memcpy(n->text, token, len + 1);
	else
		snprintf(n->text, sizeof(n->text), "%.*s...", (int)sizeof(n->text) - 4, token);
	n->d = strtod(token, NULL);
	if (p[0] == '0' && (p[1] == 'x' || p[1] == 'X')) {
		base = 16;
		p += 2;
	} else if (strpbrk(p, ".eE") != NULL) {
		n->is_float = true;
		n->neg = n->d < 0;
		return;
	}
	for (; base == 16 ? isxdigit((unsigned char)*p) : isdigit((unsigned char)*p); p++) {
		unsigned digit = isdigit((unsigned char)*p) ? (unsigned)(*p - '0')
							     : (unsigned)(tolower((unsigned char)*p) - 'a' + 10);

		if (n->huge || n->mag > (ULLONG_MAX - digit) / base)
			n->huge = true;
		else
			n->mag = n->mag * base + digit;
	}
	n->neg = token[0] == '-' && (n->huge || n->mag > 0);
}

/* token is what libconfig read as s: the same value exactly, or what
 * libconfig 1.5 makes of it (atoi, atoll, strtoul for hex: see cfgnum.h). */
static bool agrees(const char *token, const config_setting_t *s)
{
	const char *p = token + (*token == '+' || *token == '-');
	bool hex = p[0] == '0' && (p[1] == 'x' || p[1] == 'X'), wide = strchr(token, 'L') != NULL;
	long long v, as_read;
	struct cfgnum n;

	cfgnum_parse(token, &n);
	if (config_setting_type(s) == CONFIG_TYPE_FLOAT)
		return n.is_float && n.d == config_setting_get_float(s);
	if (n.is_float)
		return false;
	v = config_setting_get_int64(s);
	if (!n.huge && n.mag <= (unsigned long long)LLONG_MAX + n.neg &&
	    (n.neg ? (long long)(0ull - n.mag) : (long long)n.mag) == v)
		return true;
	if (hex)
		as_read = wide ? (long long)strtoull(token, NULL, 16) : (int)strtoul(token, NULL, 16);
	else
		as_read = wide ? strtoll(token, NULL, 10) : (int)strtol(token, NULL, 10);
	return as_read == v;
}

/* Up to len - 1 bytes of file from the start of its line `line` (from 1). */
static void read_from_line(const char *file, unsigned line, char *buf, size_t len)
{
	FILE *f = fopen(file, "re");
	unsigned at = 1;
	size_t n = 0;
	int ch;

	if (f != NULL) {
		while (at < line && (ch = getc(f)) != EOF)
			at += ch == '\n';
		if (at == line)
			n = fread(buf, 1, len - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
}

static bool name_char(char ch)
{
	return isalnum((unsigned char)ch) || ch == '_' || ch == '-' || ch == '*';
}

/* "name = TOKEN" or "name : TOKEN" starting on s's line, TOKEN agreeing
 * with s; the value may be on a later line. */
static int source_token(const config_setting_t *s, const char *path, char *tok, size_t len)
{
	const char *name = config_setting_name(s);
	char buf[CFGNUM_WINDOW];
	size_t first, nl;

	if (name == NULL || config_setting_source_line(s) == 0)
		return -1;
	read_from_line(path, config_setting_source_line(s), buf, sizeof(buf));
	first = strcspn(buf, "\n");
	nl = strlen(name);
	for (const char *p = buf; (p = strstr(p, name)) != NULL && p < buf + first; p++) {
		const char *q = p + nl;
		size_t k;

		if ((p > buf && name_char(p[-1])) || name_char(*q))
			continue;
		q += strspn(q, " \t\r\n");
		if (*q != '=' && *q != ':')
			continue;
		q++;
		q += strspn(q, " \t\r\n");
		k = strspn(q, "0123456789abcdefABCDEFxXL.+-");
		if (k == 0 || k >= len)
			continue;
		memcpy(tok, q, k);
		tok[k] = '\0';
		if (agrees(tok, s))
			return 0;
	}
	return -1;
}

int cfgnum_from_setting(const config_setting_t *s, const char *path, struct cfgnum *n)
{
	char tok[CFGNUM_WINDOW];   /* any token the window can hold: cfgnum_parse shortens the text */

	switch (config_setting_type(s)) {
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		if (source_token(s, path, tok, sizeof(tok)) < 0)
			snprintf(tok, sizeof(tok), "%lld", config_setting_get_int64(s));
		cfgnum_parse(tok, n);
		return 0;
	case CONFIG_TYPE_FLOAT:
		if (source_token(s, path, tok, sizeof(tok)) == 0) {
			cfgnum_parse(tok, n);
			return 0;
		}
		memset(n, 0, sizeof(*n));
		n->is_float = true;
		n->d = config_setting_get_float(s);
		n->neg = n->d < 0;
		snprintf(n->text, sizeof(n->text), "%g", n->d);
		return 0;
	default:
		return -1;
	}
}
