/*
 * jsonr.h - a small JSON reader, the counterpart of json.h: enough to take
 * ldsd's status (ldsbench) and libmw's reports (mwlaunch) apart.
 *
 * Parses a whole document into a tree; numbers are doubles, strings are
 * NUL-terminated with escapes decoded (\u escapes beyond ASCII become '?').
 * Nesting is limited to JSONR_DEPTH.  One thread per tree; no globals.
 */
#ifndef LDS_JSONR_H
#define LDS_JSONR_H

#include <stddef.h>

#define JSONR_DEPTH 32

enum jsonr_type { JSONR_NULL, JSONR_BOOL, JSONR_NUM, JSONR_STR, JSONR_ARR, JSONR_OBJ };

struct jsonr {
	enum jsonr_type type;
	double num;                /* NUM, and BOOL as 0 or 1 */
	char *str;                 /* STR */
	size_t n;                  /* ARR, OBJ: members */
	struct jsonr *kids;        /* ARR, OBJ */
	char **keys;               /* OBJ */
};

/* The tree of text, or NULL with err filled ("offset N: what"). */
struct jsonr *jsonr_parse(const char *text, char *err, size_t errlen);
void jsonr_free(struct jsonr *v);
/* The tree of the file at path, or NULL with err filled ("PATH: what"). */
struct jsonr *jsonr_read_file(const char *path, char *err, size_t errlen);

/* Member key of object v; NULL if v is no object or has none. */
const struct jsonr *jsonr_get(const struct jsonr *v, const char *key);
/* v's number, or dflt if v is NULL or no number. */
double jsonr_num(const struct jsonr *v, double dflt);
/* v's string, or "" if v is NULL or no string. */
const char *jsonr_str(const struct jsonr *v);

#endif
