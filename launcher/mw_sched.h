/*
 * mw_sched.h - which task goes to which worker: the master's bookkeeping,
 * pure (no MPI, no clock: callers pass "now"), so that sub-masters and
 * communication managers reuse it and unit tests drive it directly.
 *
 * Tasks are ids 0 .. ntasks-1 and are PENDING, OUTSTANDING (held by one or
 * more workers) or DONE.  Each worker holds at most its depth of tasks,
 * served in the order they were assigned (the worker protocol is FIFO).
 * At the end of the run, when nothing is pending, an idle worker is given
 * a copy of the outstanding task expected to finish last; the first result
 * of a task is joined, every later one is discharged.
 *
 * Groups (a calibration run, mw_calib.h): each task and each worker may
 * belong to a group, and a worker gets new tasks and copies of its own
 * group only.  Without groups everything is in group 0.
 */
#ifndef MW_SCHED_H
#define MW_SCHED_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum mw_sched_kind {
	MW_SCHED_NONE,          /* nothing for this worker now */
	MW_SCHED_NEW,           /* a pending task */
	MW_SCHED_COPY,          /* a copy of an outstanding task (end of run) */
};

enum mw_sched_outcome {
	MW_SCHED_JOIN = 1,      /* first result of the task: join it */
	MW_SCHED_DISCHARGED,    /* task already done: drop the result */
};

struct mw_sched_slot {
	uint64_t id;
	double t;               /* when it was assigned */
};

struct mw_sched_worker {
	struct mw_sched_slot *q;   /* assigned, oldest first; depth entries */
	unsigned depth;
	unsigned n;
	double last_done;          /* when its previous result arrived */
	double avg;                /* its service time per task (EWMA), 0 unknown */
	uint64_t done;             /* results joined */
	uint64_t discharged;       /* results dropped: another copy won */
	uint64_t copies;           /* copies it was given */
	uint64_t forfeited;        /* tasks taken back when it went away */
	bool away;                 /* gets nothing until it is back */
	unsigned group;
};

struct mw_sched {
	uint64_t ntasks;
	uint64_t ndone;            /* joined, replayed or pruned */
	uint64_t npruned;
	uint64_t nreplayed;        /* marked done from the journal */
	uint64_t *cursor;          /* per group: no PENDING task of it below this id */
	unsigned *group;           /* each task's group; NULL: all in group 0 */
	unsigned ngroups;
	uint64_t outstanding;      /* copies held by workers, all of them */
	uint8_t *state;
	uint8_t *ncopies;          /* workers holding each task */
	struct mw_sched_worker *w;
	unsigned nworkers;
	unsigned max_copies;       /* 1 = never copy */
};

/* 0 or -ENOMEM/-EINVAL.  Every worker starts with depth 1. */
int mw_sched_init(struct mw_sched *s, uint64_t ntasks, unsigned nworkers, unsigned max_copies);
void mw_sched_free(struct mw_sched *s);

/* A worker's queue depth (1 .. 4096); 0 or -EINVAL/-ENOMEM.  Only while
 * it holds nothing. */
int mw_sched_set_depth(struct mw_sched *s, unsigned w, unsigned depth);

/* Resume: the task was joined before the crash.  0, or -EINVAL (no such
 * task) / -EALREADY (twice). */
int mw_sched_replayed(struct mw_sched *s, uint64_t id);

/* Puts task t in group task_group[t] and worker w in worker_group[w]
 * (each below ngroups), before any task is assigned.  0, or -EINVAL
 * (too late, a group out of range) / -ENOMEM. */
int mw_sched_set_groups(struct mw_sched *s, const unsigned *task_group, const unsigned *worker_group,
			unsigned ngroups);

/* The group of task id (0 without groups). */
static inline unsigned mw_sched_group_of(const struct mw_sched *s, uint64_t id)
{
	return s->group != NULL ? s->group[id] : 0;
}

/* What worker w should get next, without assigning it. */
enum mw_sched_kind mw_sched_peek(const struct mw_sched *s, unsigned w, uint64_t *id);

/* The oldest pending ids of worker w's group, at most max of them, for the
 * application's pick; returns how many. */
size_t mw_sched_window(const struct mw_sched *s, unsigned w, uint64_t *ids, size_t max);

/* Gives task id to worker w (pending, or outstanding elsewhere for a
 * copy).  0, or -EBUSY (worker full), -EINVAL (done, unknown, or already
 * held by w). */
int mw_sched_assign(struct mw_sched *s, unsigned w, uint64_t id, double now);

/* Worker w went away (a remote cluster silent past its deadline): every
 * task it holds is taken back, pending again unless another worker holds
 * a copy, so that the next refill gives it to others at once; w gets
 * nothing until mw_sched_back().  Its later results are not its to give
 * (mw_sched_complete says -ENOENT).  Returns how many it held. */
unsigned mw_sched_forfeit(struct mw_sched *s, unsigned w);
void mw_sched_back(struct mw_sched *s, unsigned w);

/* A pending task that needs no execution.  0 or -EINVAL. */
int mw_sched_prune(struct mw_sched *s, uint64_t id);

/* Worker w returned task id.  MW_SCHED_JOIN or MW_SCHED_DISCHARGED, or
 * -ENOENT when w did not hold the task (a worker that lies). */
int mw_sched_complete(struct mw_sched *s, unsigned w, uint64_t id, double now);

/* How long every worker that holds tasks stays busy with them at its
 * measured pace: the least time until one of them runs dry, so the
 * master may look away that long without starving anyone.  0 when no
 * worker holds a task or one holding tasks has no measured pace yet. */
double mw_sched_slack(const struct mw_sched *s, double now);

static inline bool mw_sched_finished(const struct mw_sched *s)
{
	return s->ndone == s->ntasks;
}

#endif
