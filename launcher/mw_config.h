/*
 * mw_config.h - the runtime's configuration (libconfig), kept apart from
 * run-time state.  Setting names follow the design's framework entries
 * (StatisticsInterval, WorkerBehaviour, LoadBalance) plus what the runtime
 * needs; docs/mw.md lists them all.  No MPI here: unit-tested.
 */
#ifndef MW_CONFIG_H
#define MW_CONFIG_H

#include <libconfig.h>
#include <stdbool.h>
#include <stddef.h>

struct mw_config {
	double stats_interval;     /* StatisticsInterval, s; 0 = silent */
	int worker_behaviour;      /* WorkerBehaviour: 1 no overlap, 2 overlap */
	bool load_balance;         /* LoadBalance: end-of-run replicas */
	unsigned prefetch;         /* PrefetchDepth: tasks queued per worker */
	unsigned max_copies;       /* MaxCopies: copies of one task at the end */
	unsigned step_limit;       /* StepLimit: messages per scheduling step */
	unsigned pick_window;      /* PickWindow: pending tasks offered to pick() */
	double idle_sleep_max;     /* IdleSleepMax, s: longest idle nap; 0 = spin */
	double master_nap;         /* MasterNap, s: longest nap of an idle master
	                            * while its workers have queued work; 0 = never */
	bool journal_sync;         /* JournalSync: fdatasync every record */
	bool worker_continue;      /* WorkerFailure: "continue" (a lost worker's tasks go to the
	                            * others) or "abort" (false: the MPI library ends the job) */
	double worker_timeout;     /* WorkerTimeout, s: with "continue", a worker holding tasks
	                            * silent this long (no result, no heartbeat) is lost */
};

/* The built-in defaults. */
void mw_config_defaults(struct mw_config *c);

/* Reads path over the defaults and validates.  0, or -1 with a message
 * naming the file, the line and the setting in err. */
int mw_config_load(const char *path, struct mw_config *c, char *err, size_t errlen);

/* The same for the settings of group, which came from file path (mwlaunch
 * reads a job file's framework group so, naming the job file's lines). */
int mw_config_read_group(const config_setting_t *group, const char *path, struct mw_config *c, char *err,
			 size_t errlen);

/* WorkerFailure's words: "continue" (*cont true) or "abort".  0, or -1
 * for anything else (NULL too). */
int mw_config_failure(const char *text, bool *cont);

/* Checks ranges and cross-field rules (WorkerBehaviour 1 means one task at
 * a time); 0 or -1 with a message in err. */
int mw_config_validate(struct mw_config *c, char *err, size_t errlen);

/* The configuration as libconfig text that mw_config_load() reads back. */
int mw_config_print(const struct mw_config *c, char *out, size_t outlen);

#endif
