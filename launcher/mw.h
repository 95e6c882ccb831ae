/*
 * mw.h - the master-worker runtime (libmw): the application's view.
 *
 * An application fills a struct mw_app with callbacks that mirror the
 * framework classes of the design (configuration = setup, problem = split,
 * task = task_pack/task_run, result = result_join, gatherer = finish,
 * scheduler = pick, sub-master grains = coarse_split/coarse_result) and
 * calls mw_main() from main().  The runtime decides the role of the calling
 * MPI rank (master, worker, sub-master, communication manager) from the
 * launcher's environment, never from the application:
 *
 *   MWL_ROLE     master | worker | submaster | cm  (set by mwlaunch; absent:
 *                rank 0 is the master, every other rank a worker)
 *   MWL_CLUSTER  cluster name, for the report (default "local")
 *   MWL_REMOTE, MWL_GRAIN, MWL_PREFETCH, MWL_LINK_TIMEOUT, MWL_DEADLINE,
 *   LDS_SOCKET   communication managers only (docs/mwlaunch.md)
 *   MWL_WORKER_FAILURE  "continue" or "abort": overrides WorkerFailure
 *                (mwlaunch's on_worker_failure, docs/mw.md)
 *
 * Tasks and results cross the wire as byte buffers that the application
 * serializes itself; the runtime numbers tasks 0 .. ntasks-1 (a uint64 id)
 * and carries that id with every task and result.
 *
 * Threading: every callback is called from the thread that called
 * mw_main(), never concurrently.  Callbacks return 0 on success and a
 * negative value on failure; a failure stops the run with a message naming
 * the callback and the task id, and mw_main() returns non-zero.
 */
#ifndef MW_H
#define MW_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#ifdef __cplusplus
extern "C" {
#endif

#define MW_VERSION "0.2.0"

/* A growable byte buffer the callbacks serialize into.  The runtime owns
 * it and reuses it; callbacks only append (mw_buf_put / mw_buf_reserve). */
struct mw_buf {
	unsigned char *data;
	size_t len;      /* bytes written */
	size_t cap;      /* bytes allocated */
};

/* Appends len bytes; 0 or -ENOMEM. */
int mw_buf_put(struct mw_buf *b, const void *p, size_t len);
/* Makes room for len more bytes and returns where they go (the caller
 * writes them and adds len to b->len), or NULL when out of memory. */
void *mw_buf_reserve(struct mw_buf *b, size_t len);

/* SUBMASTER and CM run the runtime's own code only (mwlaunch's remote
 * clusters and inter-cluster bridges): setup() sees them so that it can
 * skip what only the master needs. */
enum mw_role { MW_ROLE_MASTER, MW_ROLE_WORKER, MW_ROLE_SERIAL, MW_ROLE_SUBMASTER, MW_ROLE_CM };

/* Returned by task_pack: the task needs no execution (branch and bound
 * pruned it); it counts as done and is neither sent nor joined. */
#define MW_PRUNED 1

/* A range of a packed task that other tasks share (matmul: a block of A
 * or B), named by the application's key: between clusters its bytes
 * cross the WAN once (task_blocks). */
struct mw_block {
	uint64_t key;
	size_t off, len;
};

/* What pick() chooses from: the oldest pending task ids, at most n. */
struct mw_pick {
	const uint64_t *ids;
	size_t n;
	unsigned worker;        /* 0-based worker index */
	int remote;             /* the worker is a remote cluster (mwlaunch) */
};

struct mw_app {
	/* Size of this struct as the application was compiled (sizeof), so
	 * that callbacks added later are seen as absent by older binaries. */
	size_t size;
	const char *name;             /* for the report and the journal */
	void *ctx;                    /* passed to every callback */
	/* Basic operations (e.g. flops) of one task; 0 if unknown.  The
	 * report then states tasks/s only.  Read after setup(), which may
	 * set it once the problem's parameters are known. */
	double ops_per_task;

	/* configuration: every rank, before anything else.  argv holds the
	 * arguments mw_main() did not consume.  Return -2 for a usage error
	 * (mw_main() then exits 2 after the callback printed why). */
	int (*setup)(void *ctx, int argc, char **argv, enum mw_role role);

	/* problem: master only; the number of tasks. */
	int (*split)(void *ctx, uint64_t *ntasks);
	/* task, master side: serialize task id into out (empty on entry).
	 * May return MW_PRUNED. */
	int (*task_pack)(void *ctx, uint64_t id, struct mw_buf *out);
	/* task, worker side: deserialize, execute, serialize the result into
	 * out (empty on entry). */
	int (*task_run)(void *ctx, const void *task, size_t len, struct mw_buf *out);
	/* result: master side, deserialize and join.  Called exactly once per
	 * task id, also for results replayed from the journal on --resume. */
	int (*result_join)(void *ctx, uint64_t id, const void *res, size_t len);
	/* gatherer: master, after every task was joined: check and print the
	 * answer.  Optional. */
	int (*finish)(void *ctx);

	/* scheduler: optional.  Chooses which of the pending tasks goes to
	 * the worker next; returns an index into p->ids, or a negative value
	 * for the default (the oldest). */
	long (*pick)(void *ctx, const struct mw_pick *p);

	/* Coarse grains for sub-masters (optional; these two and fine_pack,
	 * fine_join below, all or none).  A task the master sent to a remote
	 * cluster is split there into *nfine finer tasks for that cluster's
	 * workers, whose results are joined into the task's result, which
	 * the master joins as if one worker had run the task.  Several such
	 * tasks are in flight at once, each with the state coarse_split
	 * makes (task stays valid until coarse_result).  coarse_result:
	 * after the last fine_join, the task's result into out, and releases
	 * state; with out NULL (the run stopped) it only releases. */
	int (*coarse_split)(void *ctx, const void *task, size_t len, void **state, uint64_t *nfine);
	int (*coarse_result)(void *ctx, void *state, struct mw_buf *out);

	/* Release what setup allocated.  Optional. */
	void (*cleanup)(void *ctx);

	/* Coarse grains, continued: fine task i (0 .. nfine-1) of a coarse
	 * task, serialized for task_run; its result joined. */
	int (*fine_pack)(void *ctx, void *state, uint64_t i, struct mw_buf *out);
	int (*fine_join)(void *ctx, void *state, uint64_t i, const void *res, size_t len);

	/* Data cache between clusters (optional): the ranges of packed task
	 * id (len bytes) that other tasks share, at most max, sorted by
	 * offset; returns how many, or a negative value on failure.  Called
	 * by the main cluster's communication managers, which have the
	 * packed bytes, the id and what setup() made of the arguments. */
	long (*task_blocks)(void *ctx, uint64_t id, const void *task, size_t len, struct mw_block *b, size_t max);

	/* Resume (optional): a hash of what the problem depends on beyond its
	 * arguments (an input file's contents, a seed read from elsewhere).
	 * The journal keeps it with the arguments, and --resume refuses a
	 * journal of another job.  Called on the master after setup(). */
	uint64_t (*fingerprint)(void *ctx);
};

/* Whether app (of app->size bytes) has callback member m. */
#define MW_HAS(app, m) \
	((app)->size >= offsetof(struct mw_app, m) + sizeof((app)->m) && (app)->m != NULL)

/* Initializes MPI, reads the runtime options and the configuration, runs
 * this rank's role and finalizes MPI.  Runtime options (removed from argv
 * before setup sees it):
 *   -c, --config FILE   libconfig file (default $MW_CONFIG, else built-ins)
 *   --journal FILE      journal of joined results (master)
 *   --resume            replay the journal, run only what is missing
 *   --json FILE         end report as JSON ("-" = stdout)
 *   --stats-log FILE    one row per statistics interval
 *   --plot FILE.png     gnuplot of tasks done and throughput over time
 *   --quiet             no progress lines and no text report
 * Returns the process exit status: 0 success, 1 failure, 2 usage error. */
int mw_main(int argc, char **argv, const struct mw_app *app);

/* Prints the runtime options above, for the application's --help. */
void mw_usage(FILE *out);

#ifdef __cplusplus
}
#endif

#endif
