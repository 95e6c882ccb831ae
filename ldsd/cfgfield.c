/* cfgfield.c - ldsd.conf's table-driven reader; see cfgfield.h. */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>
#include <sys/resource.h>

#include "cfgerr.h"
#include "cfgfield.h"
#include "cfgnum.h"
#include "config.h"
#include "wire.h"

/* Edit distance, case-insensitive, for "did you mean" on a misspelt name. */
static size_t distance(const char *a, const char *b)
{
	size_t lb = strlen(b), row[64];

	if (lb >= sizeof(row) / sizeof(row[0]))
		return SIZE_MAX;
	for (size_t j = 0; j <= lb; j++)
		row[j] = j;
	for (size_t i = 1; a[i - 1]; i++) {
		size_t diag = row[0];

		row[0] = i;
		for (size_t j = 1; j <= lb; j++) {
			size_t up = row[j];
			size_t sub = diag + (tolower((unsigned char)a[i - 1]) != tolower((unsigned char)b[j - 1]));
			size_t best = up + 1 < row[j - 1] + 1 ? up + 1 : row[j - 1] + 1;

			row[j] = sub < best ? sub : best;
			diag = up;
		}
	}
	return row[lb];
}

/* The known name closest to name if it is a plausible typo of it: at most a
 * third of its characters wrong ("stream", "BlockSize", "keepalvie"). */
static const char *suggest(const char *name, const struct field *table)
{
	const char *best = NULL;
	size_t best_d = SIZE_MAX;

	for (const struct field *f = table; f->name; f++) {
		size_t d = distance(name, f->name);

		if (d <= strlen(f->name) / 3 && d < best_d) {
			best = f->name;
			best_d = d;
		}
	}
	return best;
}

static int fail_unknown(struct cfgctx *c, const config_setting_t *s, const struct field *table)
{
	const char *hint = suggest(config_setting_name(s), table);

	if (hint != NULL)
		return cfg_fail(c, s, NULL, "unknown setting; did you mean \"%s\"?", hint);
	return cfg_fail(c, s, NULL, "unknown setting");
}

/* ---- scalar parsing ------------------------------------------------------ */

/* Integer settings land in fields of several widths (uint16_t port,
 * unsigned streams, size_t sizes, int and enum): the table gives the size. */
static void store_uint(void *dst, size_t size, unsigned long long v)
{
	if (size == sizeof(uint16_t)) {
		uint16_t x = (uint16_t)v;
		memcpy(dst, &x, size);
	} else if (size == sizeof(uint32_t)) {
		uint32_t x = (uint32_t)v;
		memcpy(dst, &x, size);
	} else {
		uint64_t x = v;
		memcpy(dst, &x, sizeof(x));
	}
}

unsigned long long cfgfield_load_uint(const void *src, size_t size)
{
	if (size == sizeof(uint16_t)) {
		uint16_t x;
		memcpy(&x, src, size);
		return x;
	} else if (size == sizeof(uint32_t)) {
		uint32_t x;
		memcpy(&x, src, size);
		return x;
	} else {
		uint64_t x;
		memcpy(&x, src, sizeof(x));
		return x;
	}
}

/* Decimal digits at s (at least one) into *v; *end after them.  Unlike
 * strtoull, no sign, no blanks, and overflow is an error. */
static int parse_digits(const char *s, const char **end, unsigned long long *v)
{
	const char *p = s;

	*v = 0;
	for (; *p >= '0' && *p <= '9'; p++) {
		if (*v > (ULLONG_MAX - (unsigned)(*p - '0')) / 10)
			return -1;
		*v = *v * 10 + (unsigned)(*p - '0');
	}
	*end = p;
	return p == s ? -1 : 0;
}

/* "65536", "512k", "64M", "1G", "1T", also "64MiB" and the like: binary
 * multiples, because memory is allocated in them. */
int config_parse_size(const char *s, unsigned long long *v)
{
	static const char units[] = "kmgt";
	size_t ndigits = strspn(s, "0123456789");
	const char *p = s + ndigits, *u;
	unsigned shift = 0;

	if (*p != '\0') {
		u = strchr(units, tolower((unsigned char)*p));
		if (u == NULL || (p[1] != '\0' && strcasecmp(p + 1, "iB") != 0))
			ndigits = 0;
		else
			shift = 10 * (unsigned)(u - units + 1);
	}
	if (ndigits == 0) {
		errno = EINVAL;
		return -1;
	}
	if (parse_digits(s, &p, v) < 0 || *v > ULLONG_MAX >> shift) {
		errno = ERANGE;
		return -1;
	}
	*v <<= shift;
	return 0;
}

/* "host:port" or "[v6]:port", port 1..65535: enough to catch a missing port
 * here; the daemon resolves the host. */
static bool hostport_valid(const char *s)
{
	const char *colon = strrchr(s, ':'), *end;
	unsigned long long port;

	if (colon == NULL || colon == s)
		return false;
	if (parse_digits(colon + 1, &end, &port) < 0 || *end != '\0')
		return false;
	return port >= 1 && port <= 65535;
}

static int word_index(const char *const *words, const char *s)
{
	for (int i = 0; words[i]; i++)
		if (strcmp(words[i], s) == 0)
			return i;
	return -1;
}

static int fail_word(struct cfgctx *c, const config_setting_t *s, const struct field *f, const char *got)
{
	char list[128];
	size_t n = 0;

	for (int i = 0; f->words[i]; i++)
		cfg_append(list, sizeof(list), &n, "%s\"%s\"", i ? ", " : "", f->words[i]);
	return cfg_fail(c, s, NULL, "must be one of %s (got \"%s\")", list, got);
}

static int parse_string(struct cfgctx *c, const config_setting_t *s, const struct field *f, void *dst)
{
	const char *v = config_setting_get_string(s);
	size_t max = f->max ? f->max : f->size - 1;
	int i;

	if (v == NULL)
		return cfg_fail(c, s, NULL, "must be a string (got %s)", cfg_type_name(s));
	if (*v == '\0')
		return cfg_fail(c, s, NULL, "must not be empty");
	if (f->words != NULL) {
		if ((i = word_index(f->words, v)) < 0)
			return fail_word(c, s, f, v);
		if (f->kind == K_ENUM) {
			store_uint(dst, f->size, (unsigned)i);
			return 0;
		}
	}
	if (strlen(v) > max)
		return cfg_fail(c, s, NULL, "too long: at most %zu bytes (got %zu)", max, strlen(v));
	if (f->kind == K_NAME && !wire_name_valid(v))
		return cfg_fail(c, s, NULL, "\"%s\" is not a valid cluster name: use letters, digits, '.', '_' and '-'", v);
	if (f->kind == K_HOSTPORT && !hostport_valid(v))
		return cfg_fail(c, s, NULL, "must be \"host:port\" with a port 1..65535 (got \"%s\")", v);
	memcpy(dst, v, strlen(v) + 1);
	return 0;
}

static int parse_bool(struct cfgctx *c, const config_setting_t *s, const struct field *f, void *dst)
{
	if (config_setting_type(s) != CONFIG_TYPE_BOOL)
		return cfg_fail(c, s, NULL, "must be true or false (got %s)", cfg_type_name(s));
	store_uint(dst, f->size, (unsigned)config_setting_get_bool(s));
	return 0;
}

size_t config_mem_max(const char **what)
{
	long pages = sysconf(_SC_PHYS_PAGES), page = sysconf(_SC_PAGESIZE);
	unsigned long long mem = pages > 0 && page > 0 ? (unsigned long long)pages * (unsigned long long)page : SIZE_MAX;
	const char *why = "this machine's physical memory";
	struct rlimit rl;

	if (getrlimit(RLIMIT_AS, &rl) == 0 && rl.rlim_cur != RLIM_INFINITY && rl.rlim_cur < mem) {
		mem = rl.rlim_cur;
		why = "this process's address-space limit (RLIMIT_AS, ulimit -v)";
	}
	if (what != NULL)
		*what = why;
	return mem < SIZE_MAX ? (size_t)mem : SIZE_MAX;
}

/* The largest value f takes: its own .max, what its field holds, and for
 * sizes what the machine has (*mem then says which limit that is). */
static unsigned long long uint_max(const struct field *f, const char **mem)
{
	unsigned long long max = f->size == sizeof(uint16_t)   ? UINT16_MAX
				 : f->size == sizeof(uint32_t) ? UINT32_MAX
							       : UINT64_MAX;
	const char *why = NULL;

	if (f->max != 0 && f->max < max)
		max = f->max;
	if (f->kind == K_BYTES) {
		size_t machine = config_mem_max(&why);

		if (machine < max)
			max = machine;
		else
			why = NULL;
	}
	*mem = why;
	return max;
}

static unsigned long long seconds_max(const struct field *f)
{
	return f->max ? f->max : SECONDS_MAX;
}

/* s as the file wrote it. */
static int number_of(struct cfgctx *c, const config_setting_t *s, struct cfgnum *n)
{
	char path[2 * PATH_MAX];

	return cfgnum_from_setting(s, cfg_source_file(c, s, path, sizeof(path)), n);
}

/*
 * Every numeric setting out of its range ends here, so that each message
 * has the same parts: which way it is wrong, the range, the value as
 * written: "too large: must be 1..65535 (got 99999999999999999999)".
 */
static int fail_range(struct cfgctx *c, const config_setting_t *s, const struct field *f, const struct cfgnum *n,
		      bool high)
{
	char range[128], got[96];
	const char *mem = NULL;

	if (f->kind == K_SECONDS)
		snprintf(range, sizeof(range), "more than 0 and at most %llu seconds", seconds_max(f));
	else
		snprintf(range, sizeof(range), "%llu..%llu%s", f->min, uint_max(f, &mem),
			 f->kind == K_STREAMS ? " or \"auto\"" : "");
	/* A size string's bytes, unless it is too large to have any. */
	if (n->text[0] == '"' && !n->huge)
		snprintf(got, sizeof(got), "%s = %llu", n->text, n->mag);
	else
		snprintf(got, sizeof(got), "%s", n->text);
	return cfg_fail(c, s, NULL, "too %s: must be %s (got %s)%s%s", high ? "large" : "small", range, got,
		    high && mem ? "; the upper bound is " : "", high && mem ? mem : "");
}

/* A size string ("64M") into *n; -1 if it is none. */
static int parse_size_string(const char *v, struct cfgnum *n)
{
	memset(n, 0, sizeof(*n));
	snprintf(n->text, sizeof(n->text), "\"%.*s%s\"", (int)sizeof(n->text) - 6, v,
		 strlen(v) > sizeof(n->text) - 6 ? "..." : "");
	if (config_parse_size(v, &n->mag) == 0)
		return 0;
	n->huge = errno == ERANGE;
	return n->huge ? 0 : -1;
}

/* Range-checked on the number as the file wrote it, before it is stored
 * into a field of the table's size. */
static int parse_uint(struct cfgctx *c, const config_setting_t *s, const struct field *f, void *dst)
{
	const char *mem;
	struct cfgnum n;

	switch (config_setting_type(s)) {
	case CONFIG_TYPE_INT:
	case CONFIG_TYPE_INT64:
		number_of(c, s, &n);
		break;
	case CONFIG_TYPE_STRING:
		if (f->kind == K_STREAMS && strcmp(config_setting_get_string(s), "auto") == 0) {
			store_uint(dst, f->size, 0);
			return 0;
		}
		if (f->kind == K_BYTES) {
			if (parse_size_string(config_setting_get_string(s), &n) < 0)
				return cfg_fail(c, s, NULL, "\"%s\" is not a byte count: use an integer, or a "
					    "string like \"512k\", \"64M\", \"1G\" or \"64MiB\" (binary multiples)",
					    config_setting_get_string(s));
			break;
		}
		/* fall through */
	default:
		return cfg_fail(c, s, NULL, "must be an integer%s (got %s)",
			    f->kind == K_BYTES     ? " or a size string like \"64M\""
			    : f->kind == K_STREAMS ? " or \"auto\""
						   : "",
			    cfg_type_name(s));
	}
	if (n.neg || n.mag < f->min)
		return fail_range(c, s, f, &n, false);
	if (n.huge || n.mag > uint_max(f, &mem))
		return fail_range(c, s, f, &n, true);
	store_uint(dst, f->size, n.mag);
	return 0;
}

static int parse_seconds(struct cfgctx *c, const config_setting_t *s, const struct field *f, void *dst)
{
	struct cfgnum n;

	if (number_of(c, s, &n) < 0)
		return cfg_fail(c, s, NULL, "must be a number of seconds (got %s)", cfg_type_name(s));
	/* Written this way, NaN (which libconfig cannot read anyway) fails too. */
	if (!(n.d > 0))
		return fail_range(c, s, f, &n, false);
	if (n.d > (double)seconds_max(f))
		return fail_range(c, s, f, &n, true);
	memcpy(dst, &n.d, sizeof(n.d));
	return 0;
}

/* ---- groups and lists ---------------------------------------------------- */

/* Each element is parsed as a setting of kind f->elem into its row. */
static int parse_list(struct cfgctx *c, const config_setting_t *s, const struct field *f, void *base)
{
	const struct field row = { .kind = f->elem, .size = f->size / f->max };
	int n = config_setting_length(s);

	if (!config_setting_is_array(s) && !config_setting_is_list(s))
		return cfg_fail(c, s, NULL, "must be a list of strings [ \"...\", ... ] (got %s)", cfg_type_name(s));
	if (n == 0 && f->required)
		return cfg_fail(c, s, NULL, "must not be empty");
	if ((unsigned long long)n > f->max)
		return cfg_fail(c, s, NULL, "at most %llu entries (got %d)", f->max, n);
	for (int i = 0; i < n; i++)
		if (parse_string(c, config_setting_get_elem(s, (unsigned)i), &row,
				 (char *)base + f->off + (size_t)i * row.size) < 0)
			return -1;
	store_uint((char *)base + f->count_off, sizeof(size_t), (unsigned)n);
	return 0;
}

/* Each element is a group of f->sub settings parsed into its row. */
static int parse_groups(struct cfgctx *c, const config_setting_t *s, const struct field *f, void *base)
{
	int n = config_setting_length(s);

	if (!config_setting_is_list(s))
		return cfg_fail(c, s, NULL, "must be a list of groups ( { ... }, ... ) (got %s)", cfg_type_name(s));
	if ((unsigned long long)n > f->max)
		return cfg_fail(c, s, NULL, "at most %llu entries (got %d)", f->max, n);
	for (int i = 0; i < n; i++) {
		const config_setting_t *g = config_setting_get_elem(s, (unsigned)i);

		if (!config_setting_is_group(g))
			return cfg_fail(c, g, NULL, "must be a group { ... } (got %s)", cfg_type_name(g));
		if (cfgfield_parse_group(c, g, f->sub, (char *)base + f->off + (size_t)i * (f->size / f->max)) < 0)
			return -1;
	}
	store_uint((char *)base + f->count_off, sizeof(size_t), (unsigned)n);
	return 0;
}

int cfgfield_parse_setting(struct cfgctx *c, const config_setting_t *s, const struct field *f, void *base)
{
	void *dst = (char *)base + f->off;

	switch (f->kind) {
	case K_STR:
	case K_NAME:
	case K_HOSTPORT:
	case K_WORD:
	case K_ENUM:
		return parse_string(c, s, f, dst);
	case K_BOOL:
		return parse_bool(c, s, f, dst);
	case K_UINT:
	case K_STREAMS:
	case K_BYTES:
		return parse_uint(c, s, f, dst);
	case K_SECONDS:
		return parse_seconds(c, s, f, dst);
	case K_GROUP:
	case K_OPTGROUP:
		if (!config_setting_is_group(s))
			return cfg_fail(c, s, NULL, "must be a group { ... } (got %s)", cfg_type_name(s));
		if (f->kind == K_OPTGROUP)
			store_uint(dst, f->size, 1);
		return cfgfield_parse_group(c, s, f->sub, base);
	case K_LIST:
		return parse_list(c, s, f, base);
	case K_ROWS:
		return f->parse(c, s, base);
	case K_GROUPS:
		return parse_groups(c, s, f, base);
	}
	return cfg_fail(c, s, NULL, "internal error: unhandled kind %d", (int)f->kind);
}

const struct field *cfgfield_find(const struct field *table, const char *name)
{
	for (const struct field *f = table; f->name; f++)
		if (strcmp(f->name, name) == 0)
			return f;
	return NULL;
}

/* Every member of g must be in table; every required entry of table in g. */
int cfgfield_parse_group(struct cfgctx *c, const config_setting_t *g, const struct field *table, void *base)
{
	for (int i = 0; i < config_setting_length(g); i++) {
		const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
		const struct field *f = cfgfield_find(table, config_setting_name(s));

		if (f == NULL)
			return fail_unknown(c, s, table);
		if (cfgfield_parse_setting(c, s, f, base) < 0)
			return -1;
	}
	for (const struct field *f = table; f->name; f++)
		if (f->required && config_setting_get_member(g, f->name) == NULL)
			return cfg_fail(c, g, f->name, "required setting missing");
	return 0;
}
