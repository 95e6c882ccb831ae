/*
 * calstat.h - mwlaunch --benchmark: what one calibration run measured of
 * a cluster, and several runs combined into one measurement by their
 * medians (docs/model.md, "Measuring the parameters").  Pure functions,
 * no I/O: unit-tested in tests/unit/check_calstat.c.
 *
 * Why several runs: a worker's available performance is taken from a
 * run of a second or two, and a shared machine's CPU can be taken by
 * another program or run slower for about that long; the median of an
 * odd number of runs ignores the one that met such a spell.
 */
#ifndef MWLAUNCH_CALSTAT_H
#define MWLAUNCH_CALSTAT_H

#include <stddef.h>

#define CALIB_MAX_WORKERS 4096
#define CALIB_MAX_RUNS 9         /* --calibrate-repeat at most */

/* One cluster, as measured by one calibration run (perf, inter_*) and
 * the probes after the last one (lan, inet_*). */
struct calib_meas {
	double perf[CALIB_MAX_WORKERS]; /* each worker's available performance, op/s */
	unsigned nperf;
	double lan;                /* bytes/s */
	double inet_in, inet_out;  /* bytes/s, remote only */
	double inter_task, inter_result; /* bytes per inter-cluster task and result, remote only */
};

/* The median of v[0..n-1] (the mean of the middle two when n is even;
 * 0 when n is 0).  Reorders v. */
double calib_median(double *v, size_t n);

/* out = the median over *runs[0..nruns-1] of each worker's performance and
 * of the inter-cluster task and result sizes, worker by worker (worker k
 * of every run is the same rank).  lan and inet_* are left 0 (the probes
 * measure them once).  0, or -1 when nruns is 0 or above CALIB_MAX_RUNS,
 * or the runs do not have the same number of workers. */
int calib_merge(const struct calib_meas *const runs[], size_t nruns, struct calib_meas *out);

#endif
