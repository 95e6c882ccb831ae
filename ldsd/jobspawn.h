/*
 * jobspawn.h - starts one job of the exec service (jobexec.c) as the
 * configured unprivileged user, and nothing else.
 *
 * The daemon forks a supervisor that never returns to daemon code.  It
 * starts a new session (its pid is the job's process group), becomes a
 * child subreaper (the job's orphans become its children), puts its
 * stdout and stderr on two pipes and the collected file on a third,
 * closes every other descriptor, forgets the daemon's keys, and - when
 * the daemon is root - drops to the configured user and group
 * (initgroups, setresgid, setresuid, then checks that root cannot be
 * regained).  Only then does it touch the file system: it creates the
 * job's directory (mode 0700), writes the request's files and the rank
 * file (EXECSPEC_NAME, mode 0400) into it and runs mpirun there, with the
 * given environment, as a child.  SIGTERM, SIGINT and SIGHUP it passes on
 * to every process of the job (proctree.h), also to those that left its
 * process group.  When mpirun ends it SIGKILLs whatever of the job is
 * left and reaps it, so nothing of a job outlives it; then it writes the
 * collected file (if any, at most JOBSPAWN_COLLECT_MAX bytes, a regular
 * file not reached through a symbolic link) to the third pipe, removes
 * the directory and ends the way mpirun ended (same exit code, or killed
 * by the same signal).  So every file operation of a job happens with the
 * job user's rights, and the daemon reads only pipes.
 *
 * Problems after the fork (the directory cannot be made, mpirun cannot
 * be run) are written to the job's stderr as "ldsd exec: ..." lines and
 * end the supervisor with exit status 126 or 127.
 */
#ifndef LDS_JOBSPAWN_H
#define LDS_JOBSPAWN_H

#include <sys/types.h>

#include "config.h"
#include "execmsg.h"

#define JOBSPAWN_COLLECT_MAX (1u << 20)

struct jobspawn_spec {
	const struct config_exec *x;  /* user, group (resolved uid/gid) */
	char *const *argv;            /* mpirun's command line; argv[0] is run */
	char *const *envp;            /* mpirun's environment */
	const char *dir;              /* the job's directory: created, must not exist */
	const struct exec_file *files;
	unsigned nfiles;
	const char *collect;          /* name in dir sent back on fd collected, or "" */
	const char *spec;             /* the rank file's contents (execspec.h) */
	size_t spec_len;
	struct config *daemon_cfg;    /* its peers' keys are wiped in the child */
};

struct jobspawn_proc {
	pid_t pid;                    /* the supervisor; also the job's process group */
	int out, err, collected;      /* read ends, nonblocking and close-on-exec */
};

/* Forks the supervisor.  Returns 0 and fills *p, or a negative errno
 * (pipes or fork failed; nothing is left behind). */
int jobspawn_start(const struct jobspawn_spec *sp, struct jobspawn_proc *p);

#endif
