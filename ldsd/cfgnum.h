/*
 * cfgnum.h - a number of ldsd.conf as the file wrote it.
 *
 * libconfig 1.5 loses large integers: without an L suffix it keeps the low
 * 32 bits of what strtol() made of the digits (4294967296 reads as 0,
 * 99999999999999999999 as -1), with one it saturates at 2^63 - 1.  A range
 * check on what libconfig returns would then accept a number the file does
 * not hold, or refuse one quoting a value the file does not hold ("must
 * not be negative (got -1)").  So the setting's text is read back from its
 * file at its line and parsed here exactly; the value it gives is used only
 * where it agrees with what libconfig made of it, so a comment or another
 * setting of the same name cannot be taken for it.  Where the text cannot
 * be found (the value several lines below its name, say) libconfig's value
 * stands.  Only cfgfield.c uses this.
 */
#ifndef LDS_CFGNUM_H
#define LDS_CFGNUM_H

#include <libconfig.h>
#include <stdbool.h>

struct cfgnum {
	char text[40];           /* as written, for messages: "99999999999999999999", "1e300", "\"8T\"" */
	bool is_float;           /* written with a point or an exponent */
	bool neg;                /* below zero */
	bool huge;               /* an integer beyond 64 bits (mag is then meaningless) */
	unsigned long long mag;  /* an integer's magnitude */
	double d;                /* the value as a double, whatever the form; inf if beyond double */
};

/*
 * Fills *n from s, an integer or float setting read from the file at path
 * (libconfig names an @include file as written, relative to the include
 * directory, and the top-level file not at all: the caller knows better).
 * Returns 0, or -1 if s is not a number.
 */
int cfgnum_from_setting(const config_setting_t *s, const char *path, struct cfgnum *n);

/* Fills *n from a numeric token (an integer in decimal or 0x hex with an
 * optional L or LL, or a float); text longer than n->text is cut. */
void cfgnum_parse(const char *token, struct cfgnum *n);

#endif
