/*
 * run.h - mwlaunch's supervision of its clusters: each local mpirun in its
 * own process group with stdout and stderr on pipes, each cluster started
 * through its gateway as messages (gwstart.c); every line a cluster
 * prints comes out tagged "[cluster:rank]" on the same stream; every
 * cluster is bounded in time, and a failure ends the job (or, for a
 * remote cluster under on_remote_failure = "continue", is reported and
 * survived).
 */
#ifndef MWLAUNCH_RUN_H
#define MWLAUNCH_RUN_H

#include <stdbool.h>
#include <sys/types.h>

struct gw;

struct child {
	const char *name;          /* cluster */
	bool main;
	pid_t pid;                 /* local mpirun; 0 through a gateway */
	int fd[2];                 /* its stdout, stderr; -1 at EOF */
	char buf[2][8192];
	size_t len[2];
	double t_start, t_end;
	int status;                /* wait status */
	bool done;
	bool stopped;              /* we signalled it */
	/* Started through its gateway (gwstart.c): */
	struct gw *gw;
	uint32_t job;              /* our number for it in the requests */
	uint64_t msg_id;           /* liblds id of its START */
	bool running;              /* STARTED came */
	bool exited;               /* EXIT came, or it was refused or given up (why) */
	double answer_by;          /* no answer to START by then: give up */
	double give_up_at;         /* stopped, no EXIT by then: give up */
	const char *report;        /* the collected report goes there */
	FILE *report_f;
	char why[320];             /* not started or lost: why, instead of a status */
};

struct run_policy {
	double timeout;            /* whole job, s */
	double grace;              /* remote clusters' time to finish after the main one, s */
	bool continue_on_remote_failure;
	bool quiet;                /* the ranks' stdout is not shown */
	struct gw *gw;             /* clusters started through gateways, or NULL */
	/* A remote cluster ended while the job goes on (why: its status):
	 * whoever can tells the main cluster now.  May be NULL. */
	void (*remote_gone)(void *arg, const char *cluster, const char *why);
	void *remote_gone_arg;
};

enum run_outcome { RUN_OK = 0, RUN_FAILED = 1, RUN_TIMEOUT = 3, RUN_INTERRUPTED = 130 };

/* Starts argv (argv[0] looked up in PATH).  0 or -1 (said why). */
int run_start(struct child *c, char *const argv[]);
/* Output of a cluster started elsewhere (stream 0 stdout, 1 stderr):
 * lines are tagged and printed as they complete; run_feed_end prints
 * what is left of the last one. */
void run_feed(struct child *c, int stream, const void *data, size_t len);
void run_feed_end(struct child *c, int stream);
/* Supervises until every child ended; returns the job's outcome. */
enum run_outcome run_wait(struct child *c, unsigned n, const struct run_policy *pol);
/* SIGTERM to every child's process group (their failures are then not
 * reported as the cause). */
void run_stop_all(struct child *c, unsigned n);
/* Seconds on the monotonic clock. */
double run_now(void);
/* "exit 0", "exit 3", "killed by signal 9" */
const char *run_status_text(const struct child *c, char *buf, size_t len);

#endif
