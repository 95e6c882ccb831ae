/*
 * calibrate.h - mwlaunch --benchmark: the model's parameters of a job
 * measured (thesis Table 4-1) and written as a model file (docs/model.md)
 * that mwpredict and mwlaunch --predict-only read.
 *
 *   1. A calibration run of the job itself limited to its first tasks
 *      (MWL_TASK_LIMIT): every worker's available performance from its
 *      work time, the task and result sizes, the problem's task count and
 *      operations per task, the inter-cluster task and result sizes.
 *   2. Each cluster's LAN: mw_lanprobe, task- and result-sized messages
 *      between two ranks of its mpirun.
 *   3. The Internet in and out of each remote cluster: ldsbench through
 *      the two gateways with inter-cluster task- and result-sized messages.
 * Every step is bounded in time and says what it does on stdout.
 */
#ifndef MWLAUNCH_CALIBRATE_H
#define MWLAUNCH_CALIBRATE_H

#include <limits.h>

#include "tools/mwlaunch/jobconf.h"

struct calib_opts {
	long tasks;                /* calibration tasks; 0 = 16 per worker of the job times the largest grain, >= 64 */
	double seconds;            /* each LAN and Internet measurement */
	double threshold;          /* efficiency_threshold written into the model */
	const char *out;           /* the model file to write; "-" = stdout */
};

/* Sets up j for the calibration run (task limit, no prediction shown);
 * 0, or -1 when a cluster cannot be measured from here (said why). */
int calib_prepare(struct job *j, const struct calib_opts *o);

/* After the calibration run: the reports (reports[i]: cluster i's), the
 * framework file (or ""), the probes, the model file.  0 or -1 (said why). */
int calib_finish(const struct job *j, char reports[][PATH_MAX], const char *mwconf, const struct calib_opts *o);

#endif
