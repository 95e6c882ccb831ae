/* cfgprint.c - ldsd.conf's settings printed back; see cfgprint.h. */
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "cfgfield.h"
#include "cfgprint.h"

void cfgprint_string(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		unsigned char ch = (unsigned char)*s;

		if (ch == '"' || ch == '\\')
			fprintf(out, "\\%c", ch);
		else if (ch < ' ' || ch == 0x7f)
			fprintf(out, "\\x%02x", ch);
		else
			fputc(ch, out);
	}
	fputc('"', out);
}

/* The shortest form that reads back as the same double, always with a '.'
 * or an exponent so that libconfig reads a float. */
static void print_double(FILE *out, double v)
{
	char buf[40];

	snprintf(buf, sizeof(buf), "%.15g", v);
	if (strtod(buf, NULL) != v)
		snprintf(buf, sizeof(buf), "%.17g", v);
	fprintf(out, "%s%s", buf, strpbrk(buf, ".e") ? "" : ".0");
}

static bool is_string(enum kind k)
{
	return k == K_STR || k == K_NAME || k == K_HOSTPORT || k == K_WORD;
}

/* ( { row }, ... ): f's rows, each with f->sub's settings or those
 * f->row_table gives it. */
static void print_rows(FILE *out, const struct field *f, const void *base, int indent)
{
	const char *rows = (const char *)base + f->off;
	size_t n = cfgfield_load_uint((const char *)base + f->count_off, sizeof(size_t)), size = f->size / f->max;
	struct field buf[CFGFIELD_TABLE_MAX];

	fputc('(', out);
	for (size_t i = 0; i < n; i++) {
		const char *row = rows + i * size;

		fprintf(out, "%s\n%*s{\n", i ? "," : "", indent + 2, "");
		cfgprint_group(out, f->row_table ? f->row_table(row, buf) : f->sub, row, indent + 4);
		fprintf(out, "%*s}", indent + 2, "");
	}
	fprintf(out, "\n%*s)", indent, "");
}

static void print_value(FILE *out, const struct field *f, const void *base, int indent)
{
	const char *src = (const char *)base + f->off;
	unsigned long long v;
	double d;

	switch (f->kind) {
	case K_STR:
	case K_NAME:
	case K_HOSTPORT:
	case K_WORD:
		cfgprint_string(out, src);
		break;
	case K_ENUM:
		cfgprint_string(out, f->words[cfgfield_load_uint(src, f->size)]);
		break;
	case K_BOOL:
		fputs(cfgfield_load_uint(src, f->size) ? "true" : "false", out);
		break;
	case K_STREAMS:
		if (cfgfield_load_uint(src, f->size) == 0) {
			cfgprint_string(out, "auto");
			break;
		}
		/* fall through */
	case K_UINT:
	case K_BYTES:
		/* libconfig 1.5 silently truncates integers past 2^31 - 1 unless
		 * they carry an L. */
		v = cfgfield_load_uint(src, f->size);
		fprintf(out, "%llu%s", v, v > INT_MAX ? "L" : "");
		break;
	case K_SECONDS:
		memcpy(&d, src, sizeof(d));
		print_double(out, d);
		break;
	case K_GROUP:
	case K_OPTGROUP:
		fputs("{\n", out);
		cfgprint_group(out, f->sub, base, indent + 2);
		fprintf(out, "%*s}", indent, "");
		break;
	case K_LIST:
		fputc('[', out);
		for (size_t i = 0; i < cfgfield_load_uint((const char *)base + f->count_off, sizeof(size_t)); i++) {
			fputs(i ? ", " : " ", out);
			cfgprint_string(out, src + i * (f->size / f->max));
		}
		fputs(" ]", out);
		break;
	case K_ROWS:
	case K_GROUPS:
		print_rows(out, f, base, indent);
		break;
	}
}

void cfgprint_group(FILE *out, const struct field *table, const void *base, int indent)
{
	for (const struct field *f = table; f->name; f++) {
		if (is_string(f->kind) && *((const char *)base + f->off) == '\0')
			continue;   /* an optional string that is not set */
		if (f->kind == K_OPTGROUP && cfgfield_load_uint((const char *)base + f->off, f->size) == 0)
			continue;   /* an optional group that is not there */
		fprintf(out, "%*s%s = ", indent, "", f->name);
		print_value(out, f, base, indent);
		fputs(";\n", out);
	}
}
