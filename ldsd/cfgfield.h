/*
 * cfgfield.h - ldsd.conf's table-driven reader.
 *
 * Every setting is described once, in a field table: its name, how to
 * parse it, where it goes and its range.  Parsing, the unknown-setting
 * check (with a "did you mean" for a typo), the required-setting check and
 * printing back (cfgprint.h) all walk the same tables, so a new setting is
 * one table line (plus a default if it has one).  The tables themselves
 * live with what they describe: the daemon's own settings in config.c, a
 * peer's in cfgpeer.c.  Every number is range-checked as the file wrote it
 * (cfgnum.h) before it is stored into a field of the table's size.  Errors
 * go through cfgerr.h.  Only the config readers include this.
 */
#ifndef LDS_CFGFIELD_H
#define LDS_CFGFIELD_H

#include <libconfig.h>
#include <stdbool.h>
#include <stddef.h>

#include "cfgerr.h"

enum kind {
	K_STR,       /* non-empty string of at most .max (or .size - 1) bytes */
	K_NAME,      /* cluster name, wire_name_valid() */
	K_HOSTPORT,  /* "host:port" */
	K_WORD,      /* one of .words, stored as the string */
	K_ENUM,      /* one of .words, stored as its index */
	K_BOOL,      /* stored as int */
	K_UINT,      /* integer in .min .. .max (.max 0: as large as the field holds) */
	K_STREAMS,   /* K_UINT, or "auto" stored as 0 */
	K_BYTES,     /* K_UINT, or a string with a binary suffix ("64M"); at most config_mem_max() */
	K_SECONDS,   /* int or float, > 0 and at most .max seconds (.max 0: SECONDS_MAX), stored as double */
	K_GROUP,     /* group of .sub settings, stored in the same struct */
	K_OPTGROUP,  /* K_GROUP whose presence is stored as int at .off; printed only if present */
	K_LIST,      /* [ "...", ... ] of .elem (K_STR or K_NAME): .max rows of .size / .max bytes, count at .count_off */
	K_ROWS,      /* ( { ... }, ... ) read by .parse; printed like K_GROUPS, each row with the settings
			.row_table gives it (the peers list: each peer's transport adds its own) */
	K_GROUPS,    /* ( { ... }, ... ) of .sub groups: .max rows of .size / .max bytes, count at .count_off */
};

struct field {
	const char *name;
	enum kind kind;
	size_t off;                  /* in the struct the table describes */
	size_t size;
	unsigned long long min, max;  /* K_UINT, K_STREAMS, K_BYTES: the range; K_SECONDS: max in seconds */
	const char *const *words;    /* NULL-terminated */
	const struct field *sub;
	enum kind elem;              /* K_LIST: kind of each element */
	size_t count_off;            /* K_LIST, K_GROUPS, K_ROWS: size_t count of elements */
	bool required;
	/* K_ROWS: reads setting s into base (0, or -1 said why)... */
	int (*parse)(struct cfgctx *c, const config_setting_t *s, void *base);
	/* ...and the table of one row, built in buf (CFGFIELD_TABLE_MAX entries). */
	const struct field *(*row_table)(const void *row, struct field *buf);
};

/* The most entries a table built at run time (a peer's: its own settings
 * and its transport's) may have, the terminating one included. */
#define CFGFIELD_TABLE_MAX 64

/* The longest duration a K_SECONDS setting without a .max of its own may
 * give: a day.  Durations become nanoseconds in a uint64_t (584 years),
 * milliseconds in an int (24 days: TCP_USER_TIMEOUT), deadlines added to
 * the monotonic clock; bounding them here keeps every conversion defined. */
#define SECONDS_MAX 86400

#define AT(type, member) \
	.off = offsetof(struct type, member), .size = sizeof(((struct type *)0)->member)

#define LIST(type, member, count, ek) \
	.kind = K_LIST, AT(type, member), .elem = ek, .count_off = offsetof(struct type, count), \
	.max = sizeof(((struct type *)0)->member) / sizeof(((struct type *)0)->member[0])

/* Every member of group g must be in table, every required entry of table
 * in g; each is read into base.  0, or -1 with the message in c. */
int cfgfield_parse_group(struct cfgctx *c, const config_setting_t *g, const struct field *table, void *base);
/* Reads setting s as f describes into base.  0, or -1 with the message in c. */
int cfgfield_parse_setting(struct cfgctx *c, const config_setting_t *s, const struct field *f, void *base);
/* The entry of table called name, or NULL. */
const struct field *cfgfield_find(const struct field *table, const char *name);
/* An integer field of size bytes (2, 4 or 8) at src. */
unsigned long long cfgfield_load_uint(const void *src, size_t size);

#endif
