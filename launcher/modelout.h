/*
 * modelout.h - the model's prediction (launcher/model.h) as the readable
 * report and as the JSON object that mwpredict prints and
 * mwlaunch --predict-only repeats; docs/model.md describes both.
 */
#ifndef LDS_MODELOUT_H
#define LDS_MODELOUT_H

#include <stdio.h>

#include "launcher/model.h"

/* "key":v (null when v is not finite: JSON has no infinity), then a
 * comma when comma is non-zero. */
void model_json_num(FILE *out, const char *key, double v, int comma);

/* The whole prediction as one JSON object and newline.  file: the model's
 * name in it; in: the model as read, m: as predicted (the selection's when
 * sel is not NULL); rin/t/nt: the tuning of in, when rin is not NULL. */
void model_print_json(FILE *out, const char *file, const struct model *in, const struct model *m,
		      const struct model_result *r, const struct model_selection *sel, const struct model_result *rin,
		      const struct model_tuning *t, size_t nt);

/* The readable report of a prediction with the Local Cluster Analysis's
 * verdicts; the computers selection kept and released; the tuning. */
void model_print_report(FILE *out, const char *file, const struct model *m, const struct model_result *r);
void model_print_selection(FILE *out, const struct model *m, const struct model_selection *sel);
void model_print_tuning(FILE *out, const struct model *m, const struct model_result *r, const struct model_tuning *t,
			size_t nt);

#endif
