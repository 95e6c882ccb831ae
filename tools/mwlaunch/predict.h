/*
 * predict.h - the analytical model (launcher/model.h) applied to a job:
 * its model file checked against the job file, the prediction handed to
 * the master and sub-masters for their progress lines and reports
 * (MWL_PREDICT), and after the run the prediction set against what the
 * master measured, per cluster and for the job (docs/mwlaunch.md,
 * "Prediction").
 */
#ifndef MWLAUNCH_PREDICT_H
#define MWLAUNCH_PREDICT_H

#include <stdio.h>

#include "launcher/model.h"
#include "tools/mwlaunch/jobconf.h"

struct prediction {
	char path[1024];                 /* the model file */
	struct model m;                  /* as read */
	struct model_result r;           /* model_predict(m) */
	unsigned map[JOB_MAX_CLUSTERS];  /* job cluster i is m.cl[map[i]] */
};

/* Reads the model file at path and predicts; the file must describe j's
 * clusters (the same names, main cluster, workers and grains).  0, or -1
 * with one line in err naming the file, line or cluster. */
int predict_load(const struct job *j, const char *path, struct prediction *p, char *err, size_t errlen);

/* Each cluster's predicted time into j (the main cluster's: the job's),
 * for MWL_PREDICT: its best- and worst-end times, the shorter first. */
void predict_apply(const struct prediction *p, struct job *j);

/* The prediction against the measurement in the master's JSON report
 * (report): a table to text (NULL: none), and to json (NULL: none) the object
 * "prediction" (without a key; the caller writes it).  0, or -1 when the
 * report cannot be read (said so in the table and as null). */
int predict_compare(const struct job *j, const struct prediction *p, const char *report, FILE *text, FILE *json);

#endif
