/*
 * modelconf.h - reads the model file (libconfig) that mwpredict and
 * mwlaunch --predict-only take: the application's and each cluster's
 * parameters of the analytical model (launcher/model.h).  docs/model.md
 * describes every setting; conf/model-example.conf is the annotated example.
 *
 * Every error is one line "FILE:LINE: SETTING: what is wrong", e.g.
 *   "model.conf:12: clusters.[1].workers.[2]: must be > 0 (got -3)".
 * Unknown settings are errors (typos would otherwise be silently ignored).
 */
#ifndef LDS_MODELCONF_H
#define LDS_MODELCONF_H

#include <libconfig.h>
#include <stddef.h>

#include "model.h"

/* Reads and validates path into *m (zeroed first); 0, or -1 with the error
 * in err (one line, no newline). */
int modelconf_load(const char *path, struct model *m, char *err, size_t errlen);

/* The same from a parsed configuration whose root holds the model settings
 * (for a job file that carries them; file names it in messages).  Settings
 * other than the model's at the root are left to the caller when
 * allow_other is non-zero, errors otherwise. */
int modelconf_parse(const config_t *cfg, const char *file, int allow_other, struct model *m, char *err,
		    size_t errlen);

#endif
