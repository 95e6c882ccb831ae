/*
 * mw_stats.h - what the master measures and reports: progress lines every
 * StatisticsInterval, the time series behind --stats-log/--plot, and the
 * end report of the design's Figure 4-7 as text and JSON.  No MPI and no
 * clock here (callers pass times in seconds): unit-tested.
 *
 * Definitions (docs/mw.md):
 *   total time      master's first dispatch to the last join
 *   overall time    runtime start to the last worker's goodbye
 *   waiting time    master time with nothing to send and nothing arriving
 *   average perf.   tasks joined in this run / total time
 *   per worker      done (joined) and discharged (a copy lost the race)
 *                   useful perf. = done / total time
 *                   working perf. = (done + discharged) / work time
 *                   efficiency = work time / worker's execution time
 */
#ifndef MW_STATS_H
#define MW_STATS_H

#include <stdbool.h>
#include <stdint.h>
#include <stdio.h>

#include "launcher/mw_proto.h"

/* One statistics interval of a communication manager's link. */
struct mw_wan_sample {
	double t;                  /* end of the interval, s since the start */
	uint64_t out, in;          /* WAN bytes to and from its remote cluster in it */
};

struct mw_stats_worker {
	char host[64];
	const char *role;          /* "Worker", or "CommManager" (a remote cluster) */
	uint64_t done;
	uint64_t discharged;
	double work;               /* seconds inside task_run, as it reported */
	double exec;               /* its execution time, as it reported */
	double cpu;                /* its CPU time (user + system), as it reported */
	double last;               /* when its last joined result came (0: none) */
	uint64_t bytes_out;        /* task bytes sent to it */
	uint64_t bytes_in;         /* result bytes from it */
	uint64_t forfeited;        /* tasks taken back when its cluster went away, or it was lost */
	uint64_t late;             /* late results the master dropped (a CM drops most itself) */
	char lost[96];             /* a worker given up (WorkerFailure = "continue"): why; "" = it was not */
	/* communication managers only */
	char left_out[96];         /* a calibration run left its cluster out: why; "" = it was not */
	struct mw_cm_stats wan;    /* its last STATS */
	struct mw_cm_stats iv_wan; /* ... at the start of this interval */
	struct mw_wan_sample *samples;
	size_t nsamples, capsamples;
};

struct mw_stats {
	const char *app;
	const char *cluster;
	uint64_t ntasks;
	bool open_total;           /* ntasks grows as tasks arrive (a sub-master): no percent, no ETA */
	uint64_t problem_tasks;    /* the problem's tasks; more than ntasks in a calibration run */
	uint64_t replayed;         /* joined from the journal, not run */
	uint64_t pruned;
	int behaviour;             /* WorkerBehaviour */
	unsigned prefetch;
	double ops_per_task;
	unsigned nworkers;
	struct mw_stats_worker *w;

	double t_start;            /* runtime start */
	double t_first;            /* first dispatch */
	double t_last;             /* last join */
	double t_end;              /* last goodbye */
	double wait;               /* master waiting time, s */
	double cpu;                /* master's CPU time (user + system), s */
	double predict_best;       /* the model's total time for this run (mwlaunch), s; 0 = none */
	double predict_worst;

	/* interval sampling */
	double iv_t;
	uint64_t iv_done;
	double iv_wait;
	double iv_work;
	FILE *series;              /* --stats-log, or NULL */
	bool series_named;         /* its header is written */
};

/* 0 or -ENOMEM. */
int mw_stats_init(struct mw_stats *st, const char *app, uint64_t ntasks, unsigned nworkers, double now);
void mw_stats_free(struct mw_stats *st);

/* The model's prediction from the launcher: "BEST,WORST" seconds
 * (MWL_PREDICT; NULL or "" = none).  0, or -1 if it is not two
 * positive numbers (best <= worst). */
int mw_stats_predicted(struct mw_stats *st, const char *text);

/* Sum of the workers' work time. */
double mw_stats_work(const struct mw_stats *st);

static inline bool mw_stats_is_cm(const struct mw_stats_worker *w)
{
	return w->role != NULL && w->role[0] == 'C';
}

/* One interval: a progress line to out (NULL: none; bars when tty), a row
 * to st->series (its header line first, once the communication managers
 * are known) and, for every communication manager, a sample of its
 * WAN traffic.  done counts every finished task (replayed too).  0, or
 * -ENOMEM (no sample kept). */
int mw_stats_interval(struct mw_stats *st, double now, uint64_t done, FILE *out, bool tty);

/* The end report (Figure 4-7) as text, and as one JSON object. */
void mw_stats_report(const struct mw_stats *st, FILE *out);
void mw_stats_json(const struct mw_stats *st, FILE *out);

#endif
