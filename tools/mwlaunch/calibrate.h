/*
 * calibrate.h - mwlaunch --benchmark: the model's parameters of a job
 * measured (thesis Table 4-1) and written as a model file (docs/model.md)
 * that mwpredict and mwlaunch --predict-only read.
 *
 *   1. Calibration runs of the job itself limited to some of its tasks,
 *      spread over the problem and dealt to the clusters by their workers
 *      x grain (MWL_TASK_LIMIT, MWL_CALIB_SHARES; launcher/mw_calib.h),
 *      each run waiting for every cluster to join first (MWL_JOIN_WAIT),
 *      --calibrate-repeat of them one after the other:
 *      every worker's available performance from its work time, the
 *      inter-cluster task and result sizes (each the median of the runs,
 *      calstat.h), the task and result sizes, the problem's task count
 *      and operations per task.
 *   2. Each cluster's LAN: mw_lanprobe, task- and result-sized messages
 *      between two ranks of its mpirun.
 *   3. The Internet in and out of each remote cluster: ldsbench through
 *      the two gateways with inter-cluster task- and result-sized messages.
 * Every step is bounded in time and says what it does on stdout.  A
 * remote cluster that a run left out (it did not join in time, or went
 * silent) is named, left out of the probes and the model, and the model
 * of the others is written.
 */
#ifndef MWLAUNCH_CALIBRATE_H
#define MWLAUNCH_CALIBRATE_H

#include <limits.h>

#include "ldsd/jsonr.h"
#include "tools/mwlaunch/calstat.h"
#include "tools/mwlaunch/jobconf.h"

struct calib_opts {
	long tasks;                /* calibration tasks; 0 = 16 per worker x its cluster's grain, >= 64 */
	double join_wait;          /* s a run waits for every cluster to join; < 0 = half the job's link_timeout */
	unsigned repeat;           /* calibration runs, 1 .. CALIB_MAX_RUNS */
	double seconds;            /* each LAN and Internet measurement */
	double threshold;          /* efficiency_threshold written into the model */
	const char *out;           /* the model file to write; "-" = stdout */
};

/* What the calibration runs so far measured. */
struct calib_runs {
	struct calib_meas (*m)[JOB_MAX_CLUSTERS]; /* m[run][cluster], room for o->repeat runs */
	unsigned n;                /* runs taken */
	struct jsonr *master;      /* the last run's main cluster report (problem size, bytes per task) */
	char left_out[JOB_MAX_CLUSTERS][128]; /* why a run left cluster i out; "" = measured */
};

/* Sets up j for the calibration runs (task limit, no prediction shown)
 * and s for their measurements; 0, or -1 when a cluster cannot be
 * measured from here or memory is short (said why).  s is freed by
 * calib_free, also after a failure. */
int calib_prepare(struct job *j, const struct calib_opts *o, struct calib_runs *s);

/* After each calibration run that ended well: its reports (reports[i]:
 * cluster i's) into s, each worker's performance printed.  At most
 * o->repeat times.  0 or -1 (said why). */
int calib_take(const struct job *j, char reports[][PATH_MAX], struct calib_runs *s, const struct calib_opts *o);

/* After the last calibration run: the medians of s's runs, the framework
 * file's settings (mwconf, or ""), the probes, the model file.  0; 1 when
 * the model was written without a cluster a run left out (said which);
 * -1 (said why). */
int calib_finish(const struct job *j, struct calib_runs *s, const char *mwconf, const struct calib_opts *o);

void calib_free(struct calib_runs *s);

#endif
