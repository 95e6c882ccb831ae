/*
 * cfgprint.h - ldsd.conf's settings printed back as libconfig text, by the
 * same field tables that read them (cfgfield.h), so that what ldsd --check
 * prints loads again to the same settings.  Only the config readers
 * include this.
 */
#ifndef LDS_CFGPRINT_H
#define LDS_CFGPRINT_H

#include <stdio.h>

#include "cfgfield.h"

/* "name = value;" per setting of table set in base, one a line, indent
 * blanks in; unset optional strings and absent optional groups left out. */
void cfgprint_group(FILE *out, const struct field *table, const void *base, int indent);
/* s quoted as libconfig reads it back ('"', '\\' and control bytes escaped). */
void cfgprint_string(FILE *out, const char *s);

#endif
