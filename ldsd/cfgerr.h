/*
 * cfgerr.h - how ldsd.conf's readers (cfgfield.c, the generic table-driven
 * reader; config.c and cfgpeer.c, the file and its peers; cfgcheck.c, the
 * checks across settings) name what is wrong: "FILE:LINE: SETTING:
 * message", one line.  Only they include it.
 */
#ifndef LDS_CFGERR_H
#define LDS_CFGERR_H

#include <libconfig.h>
#include <limits.h>
#include <stddef.h>

struct cfgctx {
	const char *file;     /* the file as the caller named it */
	char dir[PATH_MAX];   /* its directory, absolute: base of relative key files */
	char *err;
	size_t errlen;
};

/* "FILE:LINE: SETTING: message" about setting s, or, when missing is set,
 * about s's member of that name, which is absent, at s's line.  Returns -1. */
int cfg_fail(struct cfgctx *c, const config_setting_t *s, const char *missing, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
/* An error with no setting to name: "FILE: message" or "FILE:LINE: message". */
int cfg_fail_at(struct cfgctx *c, const char *where, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
/* snprintf at buf + *n that leaves *n at the end of what fits. */
void cfg_append(char *buf, size_t len, size_t *n, const char *fmt, ...) __attribute__((format(printf, 4, 5)));
/* The file s was read from (an @include names its file relative to c->dir;
 * the top-level one is c->file); buf holds the path it makes. */
const char *cfg_source_file(const struct cfgctx *c, const config_setting_t *s, char *buf, size_t len);
/* "an integer", "a group"...: what the file holds at s, for messages. */
const char *cfg_type_name(const config_setting_t *s);
/* Cross-field errors name the first of the two settings if the group has
 * it, else the second (else the group): the one the user can see and change. */
const config_setting_t *cfg_blame(const config_setting_t *group, const char *a, const char *b);
/* Makes path (a key file's) absolute, relative to the file's directory, so
 * that messages and config_print() show what was read; len is its buffer's
 * size.  0, or -1 (said why, naming s). */
int cfg_resolve_path(struct cfgctx *c, const config_setting_t *s, char *path, size_t len);

#endif
