/*
 * run.h - mwlaunch's supervision of its mpirun processes: each in its own
 * process group with stdout and stderr on pipes; every line it prints
 * comes out tagged "[cluster:rank]" on the same stream; every process is
 * bounded in time, and a failure ends the job (or, for a remote cluster
 * under on_remote_failure = "continue", is reported and survived).
 */
#ifndef MWLAUNCH_RUN_H
#define MWLAUNCH_RUN_H

#include <stdbool.h>
#include <sys/types.h>

struct child {
	const char *name;          /* cluster */
	bool main;
	pid_t pid;
	int fd[2];                 /* its stdout, stderr; -1 at EOF */
	char buf[2][8192];
	size_t len[2];
	double t_start, t_end;
	int status;                /* wait status */
	bool done;
	bool stopped;              /* we signalled it */
};

struct run_policy {
	double timeout;            /* whole job, s */
	double grace;              /* remote clusters' time to finish after the main one, s */
	bool continue_on_remote_failure;
	bool quiet;                /* the ranks' stdout is not shown */
};

enum run_outcome { RUN_OK = 0, RUN_FAILED = 1, RUN_TIMEOUT = 3, RUN_INTERRUPTED = 130 };

/* Starts argv (argv[0] looked up in PATH).  0 or -1 (said why). */
int run_start(struct child *c, char *const argv[]);
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
