/*
 * mw_run.h - one run of the runtime as the roles see it: the application,
 * the configuration and the options, and the problem state the master and
 * the serial role share (mw_gather.c).
 */
#ifndef MW_RUN_H
#define MW_RUN_H

#include <stdbool.h>
#include <stdio.h>

#include "launcher/mw.h"
#include "launcher/mw_calib.h"
#include "launcher/mw_config.h"
#include "launcher/mw_journal.h"
#include "launcher/mw_port.h"
#include "launcher/mw_sched.h"
#include "launcher/mw_stats.h"

struct mw_run {
	const struct mw_app *app;
	struct mw_config cfg;
	const char *journal_path;     /* --journal */
	const char *json_path;        /* --json */
	FILE *json_stdout;            /* --json -: the real standard output, for the JSON alone */
	uint64_t args_hash;           /* mw_journal_args of the application's arguments */
	const char *series_path;      /* --stats-log */
	const char *plot_path;        /* --plot */
	bool resume;
	bool quiet;
	const char *cluster;          /* MWL_CLUSTER */
	double t0;                    /* runtime start */

	/* master and serial roles */
	struct mw_sched sched;
	struct mw_stats stats;
	struct mw_journal journal;
	struct mw_buf task;           /* task_pack output */
	double next_tick;             /* next progress line */
	/* A calibration run (MWL_TASK_LIMIT): the scheduler's task k is the
	 * problem's task calib_ids[k]; workers see the problem's ids. */
	uint64_t *calib_ids;          /* NULL: not a calibration run, task k is task k */
};

/* Seconds on the monotonic clock. */
double mw_now(void);
/* CPU seconds (user + system) this process has used so far. */
double mw_cpu(void);
/* Sleeps that many seconds (a fraction). */
void mw_nap(double seconds);

/* mw_gather.c: split the problem for nworkers, open or replay the journal,
 * start the statistics.  0 or -1 (said why on stderr). */
int mw_gather_start(struct mw_run *r, unsigned nworkers);
/* The next task for worker w (the application's pick() applied), and its
 * serialization in r->task.  Returns the kind; MW_SCHED_NONE also when a
 * copy was pruned.  A pruned new task is marked done and the next one
 * tried.  -1 when task_pack() failed (said why). */
int mw_gather_next(struct mw_run *r, unsigned w, uint64_t *id);
/* The problem's id of the scheduler's task k, and back (-1: not one of
 * this run's tasks). */
uint64_t mw_gather_app_id(const struct mw_run *r, uint64_t k);
int64_t mw_gather_index(const struct mw_run *r, uint64_t id);
/* Joins the scheduler's task k's result: journal first, so that a crash
 * never loses a join. */
int mw_gather_join(struct mw_run *r, uint64_t id, const void *res, size_t len);
/* A progress line and a series row when the interval passed. */
void mw_gather_tick(struct mw_run *r, double now);
/* The end report as JSON to r->json_path.  0 or -1 (said why). */
int mw_gather_json(struct mw_run *r);
/* finish(), end report, JSON, plot; releases everything.  Returns the
 * exit status. */
int mw_gather_end(struct mw_run *r, int status);

/* mw_plot.c: the time series (rows every iv seconds) as a PNG through
 * gnuplot, with a panel of WAN traffic when st has communication
 * managers.  0 or -1. */
int mw_plot(const struct mw_stats *st, double iv, const char *series, const char *png, const char *title);

/* The roles. Each returns the process exit status. */
int mw_master_run(struct mw_run *r, struct mw_port *port);
int mw_worker_run(struct mw_run *r, struct mw_port *port);
int mw_serial_run(struct mw_run *r);
int mw_submaster_run(struct mw_run *r, struct mw_port *port);
/* main_side: next to the master (else next to a sub-master). */
int mw_cm_run(struct mw_run *r, struct mw_port *port, bool main_side);

#endif
