/*
 * model.h - the analytical performance model of a hierarchical master-worker
 * run over several clusters (thesis chapter 3) and the methodology built on
 * it (chapter 4: Local Cluster Analysis, Multi-Cluster Analysis, Application
 * Tuning).  docs/model.md gives every formula with its units and equation
 * number; the comments here name the equations.
 *
 * Pure functions: no I/O, no allocation, no global state, so mwpredict, the
 * launcher and the unit tests call them freely (reentrant, thread-safe).
 * Units throughout: basic operations (op), bytes, seconds; performances in
 * op/s, throughputs in bytes/s, workloads in fine tasks unless a name says
 * otherwise.  A value that cannot be reached (a division by a zero limit)
 * is INFINITY, never a trap.
 */
#ifndef LDS_MODEL_H
#define LDS_MODEL_H

#include <stdbool.h>
#include <stddef.h>

#define MODEL_NAME_MAX 63
#define MODEL_MAX_CLUSTERS 16
#define MODEL_MAX_WORKERS 512    /* per cluster */
#define MODEL_MAX_GRAIN 1024     /* largest grain Application Tuning tries */

/* Application parameters (section 3.2.1), the same for every cluster. */
struct model_app {
	long tasks;              /* Tasks: fine tasks of the whole workload, >= 1 */
	double oper;             /* Oper: basic operations of one task, > 0 */
	double task_bytes;       /* S_Task: bytes master -> worker per task, >= 0 */
	double result_bytes;     /* S_Result: bytes worker -> master per task, >= 0 */
	bool reassign;           /* the master hands the last task to every idle worker (eq. 43/50/55) */
	/* How an inter-cluster task and result grow with the grain N, for
	 * Application Tuning only: S(N) = S(N0) * (N / N0)^growth.  1 = no
	 * saving from aggregation, 0 = size independent of N (a joined sum). */
	double task_growth;
	double result_growth;
};

/* System parameters of one cluster (section 3.2.2). */
struct model_cluster {
	char name[MODEL_NAME_MAX + 1];
	bool main;               /* holds the master: no Internet link */
	double lan;              /* TPut_LAN, bytes/s, > 0 */
	double inet_in;          /* TPut_InetIN, main cluster -> this one, bytes/s (remote only) */
	double inet_out;         /* TPut_InetOUT, this one -> main cluster, bytes/s (remote only) */
	long grain;              /* N fine tasks per inter-cluster task; 1 = one-to-one; main: 1 */
	double inter_task_bytes;   /* S_TaskInter: bytes of one inter-cluster task (remote only) */
	double inter_result_bytes; /* S_ResultInter: bytes of one inter-cluster result (remote only) */
	size_t nworkers;
	double perf[MODEL_MAX_WORKERS]; /* Perf_Avail of each worker, op/s, > 0 */
	int index[MODEL_MAX_WORKERS];   /* the worker's position in the input file (selection keeps it) */
};

struct model {
	double threshold;        /* Eff_Threshold, 0 < e < 1 */
	struct model_app app;
	size_t nclusters;
	struct model_cluster cl[MODEL_MAX_CLUSTERS];
};

/* What limits a cluster's steady state (eq. 26, 32, 36). */
enum model_bound { MODEL_BOUND_CPU, MODEL_BOUND_LAN, MODEL_BOUND_INET_IN, MODEL_BOUND_INET_OUT };
extern const char *const model_bound_names[];   /* "cpu", "lan", "inet_in", "inet_out" */

/* ---- the formulas of chapter 3 (exposed for tests and the launcher) ---- */

/*
 * Average idle time per worker of a two-level pipeline fill or drain
 * (eq. 8-10, 16-18, 20-21, 37, 45-47, 52-53): workers come in groups of
 * grain; worker i (0-based) waits (i / grain + 1) inter-cluster transfers of
 * t_inter seconds and (i % grain + 1) LAN transfers of t_lan seconds.
 * Returns the sum over the nworkers workers divided by nworkers; 0 if none.
 */
double model_pipeline_wait(size_t nworkers, long grain, double t_inter, double t_lan);

/* CPerf_Avail (eq. 3): the sum of the workers' Perf_Avail. */
double model_cperf(const struct model_cluster *c);

/* Perf_Ste (eq. 26, 32, 36) and what bounds it (*bound may be NULL). */
double model_steady(const struct model_app *a, const struct model_cluster *c, enum model_bound *bound);

/* The steady performance the cluster's links allow, CPU aside: the smallest
 * of the LAN and (remote) Internet terms of eq. 36; INFINITY if no bytes move. */
double model_comm_limit(const struct model_app *a, const struct model_cluster *c);

/* T_Up (eq. 12 local, 18 one-to-one, 21 one-to-many). */
double model_startup(const struct model_app *a, const struct model_cluster *c);

/* T_BestEnd (eq. 37 local, 45-47 one-to-one as re-derived, 52-53 one-to-many). */
double model_best_end(const struct model_app *a, const struct model_cluster *c);

/* T_WorstEnd: the computation-bound case (eq. 39 or, with reassignment, 43;
 * remote: 49/50, 54/55), or when the steady state is communication bound the
 * larger of that and the communication-bound case (eq. 44, 51, 56). */
double model_worst_end(const struct model_app *a, const struct model_cluster *c);

/* Minimum workload, in basic operations, for which the worst efficiency
 * reaches threshold (eq. 58; eq. 59 when Perf_Ste = CPerf_Avail).
 * INFINITY when steady <= cperf * threshold (eq. 60 not met). */
double model_min_workload_ops(double startup, double worst_end, double steady, double cperf, double threshold);

/* ---- one cluster, one multi-cluster run ---------------------------------- */

struct model_cluster_eval {
	double cperf;            /* CPerf_Avail, op/s */
	double steady;           /* Perf_Ste, op/s */
	enum model_bound bound;
	double startup;          /* T_Up, s */
	double best_end;         /* T_BestEnd, s */
	double worst_end;        /* T_WorstEnd, s */
	double min_workload;     /* tasks (not rounded), INFINITY if unreachable */
	long workload_best;      /* tasks from the balance with best ends (multiple of grain but for the remainder cluster) */
	long workload_worst;     /* tasks from the balance with worst ends */
	double time_best;        /* T_Ex with best end for workload_best, s; 0 if no work */
	double time_worst;       /* T_Ex with worst end for workload_worst, s; 0 if no work */
	double efficiency_best;  /* eq. 7 per cluster: (workload * Oper / CPerf) / T_Ex; 0 if no work */
	double efficiency_worst;
};

struct model_result {
	size_t nclusters;
	struct model_cluster_eval cl[MODEL_MAX_CLUSTERS];
	double time_best, time_worst;             /* the slowest cluster's T_Ex, s */
	double efficiency_best, efficiency_worst; /* eq. 6-7 over the clusters with work */
};

/* Evaluates one cluster's workload-independent terms (steady, startup,
 * ends, minimum workload); leaves the workload fields zero. */
void model_cluster_evaluate(const struct model_app *a, const struct model_cluster *c, double threshold,
			    struct model_cluster_eval *ev);

/*
 * Multi-cluster load balancing (eq. 61): the real workloads w[i] (tasks)
 * for which every cluster with work ends at the same time, given each
 * cluster's steady performance steady[i] (op/s; 0 = not in the run) and
 * overhead[i] = T_Up + T_End (s), summing to tasks.  A cluster whose
 * overhead exceeds the common end time gets 0 and the rest is balanced
 * again.  Returns the common end time (s), or INFINITY if no cluster runs.
 */
double model_balance(size_t n, const double *steady, const double *overhead, long tasks, double oper, double *w);

/*
 * Rounds balanced real workloads to whole tasks, each a multiple of
 * grain[i], summing to tasks: every cluster but one is rounded to the
 * nearest multiple of its grain, the remainder goes to the cluster `sink`
 * (which must have w[sink] > 0); a negative remainder is taken back from the
 * others, one grain at a time, largest first.
 */
void model_round(size_t n, const double *w, const long *grain, size_t sink, long tasks, long *out);

/*
 * Improves rounded workloads out[] (as model_round left them) so that the
 * slowest cluster ends as early as whole tasks allow: cluster i with
 * out[i] > 0 ends at base[i] + out[i] * per_task[i] (s); one grain moves
 * at a time between the sink and another cluster, while that shortens
 * the slowest end time, but never below a cluster's minimum workload
 * keep[i] (tasks; eq. 58-59) that it met, which resource selection
 * compares with (keep may be NULL).  Rounding to nearest can hand the
 * sink a remainder that makes it the slowest by far; the search undoes
 * that.
 */
void model_round_fastest(size_t n, const long *grain, size_t sink, const double *base, const double *per_task,
			 const double *keep, long *out);

/* The whole prediction for m (every worker in m is used). */
void model_predict(const struct model *m, struct model_result *r);

/* ---- chapter 4: resource selection and tuning ---------------------------- */

enum model_release {
	MODEL_KEPT,
	MODEL_RELEASED_STEADY,     /* eq. 60: the links cannot feed it at the threshold */
	MODEL_RELEASED_WORKLOAD,   /* its cluster's share was below the minimum workload */
};
extern const char *const model_release_names[];  /* "kept", "steady", "workload" */

struct model_selection {
	/* Per cluster of the input, per worker in input order. */
	enum model_release state[MODEL_MAX_CLUSTERS][MODEL_MAX_WORKERS];
	size_t kept[MODEL_MAX_CLUSTERS];
};

/*
 * Resource selection of the Multi-Cluster Analysis (section 4.4, also the
 * Local Cluster Analysis of the main cluster): first each cluster keeps,
 * fastest first, the computers whose sum stays within comm_limit /
 * threshold (eq. 60); then, while a cluster's balanced worst-case workload
 * is below its minimum workload, its slowest computer is released
 * (resources adjustment).  *out is m with only the kept workers.
 */
void model_select(const struct model *m, struct model *out, struct model_selection *sel);

struct model_tuning {
	size_t cluster;          /* index in the model */
	long grain_from, grain_to;
	size_t kept_from, kept_to;       /* computers selection keeps in this cluster */
	double time_from, time_to;       /* the run's worst time after selection, s */
	double efficiency_from, efficiency_to;  /* the run's worst efficiency */
};

/*
 * Application Tuning (section 4.5) of the inter-cluster grain: for each
 * remote cluster, tries grains 1..min(tasks, MODEL_MAX_GRAIN) with the
 * inter-cluster sizes scaled by the growth exponents, the other clusters
 * unchanged, selection run each time, and keeps the grain with the
 * shortest worst time (ties: more computers kept, then the grain nearest
 * the current one).  Writes one entry per remote cluster whose best grain
 * differs from its current one; returns how many.
 */
size_t model_tune(const struct model *m, struct model_tuning *out, size_t max);

/* Bytes per fine task the cluster's bottleneck link may carry for all its
 * computers to run at the threshold: Oper * TPut / (CPerf * threshold) for
 * the link named by ev->bound (the LAN counts task + result, the Internet
 * S_Inter / N); INFINITY for a CPU-bound cluster. */
double model_bytes_allowed(const struct model_app *a, const struct model_cluster *c, double threshold,
			   enum model_bound bound);

/* Bytes per fine task the link named by bound carries now: S_Comm on the
 * LAN, S_TaskInter / N or S_ResultInter / N on the Internet; 0 for cpu. */
double model_bytes_per_task(const struct model_app *a, const struct model_cluster *c, enum model_bound bound);

#endif
