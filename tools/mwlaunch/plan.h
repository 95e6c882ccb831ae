/*
 * plan.h - what mwlaunch starts for one cluster: its ranks, each with its
 * role in the environment (MWL_ROLE, MWL_CLUSTER, MWL_RANK, LDS_SOCKET,
 * MW_CONFIG and a communication manager's MWL_REMOTE, MWL_GRAIN,
 * MWL_PREFETCH, MWL_LINK_TIMEOUT, MWL_DEADLINE; a master's or sub-master's
 * MWL_PREDICT when the job has a prediction, the master's MWL_TASK_LIMIT
 * in a calibration run), and from them one
 * `mpirun` command line whose app contexts are the ranks.
 *
 *   main cluster:   0 master, 1..W workers, then one CM per remote cluster
 *   remote cluster: 0 sub-master, 1 CM, 2..W+1 workers
 *
 * A cluster started through its gateway gets files instead of local
 * paths: the framework entries travel as the file "mw.conf" and the
 * sub-master writes its report to "report.json", both in the job's
 * directory on the gateway (its ranks' working directory), and the
 * request (plan_request) replaces the command line, whose mpirun and
 * options the gateway chooses itself.
 */
#ifndef MWLAUNCH_PLAN_H
#define MWLAUNCH_PLAN_H

#include <stdbool.h>
#include <stdio.h>

#include "ldsd/execmsg.h"
#include "tools/mwlaunch/jobconf.h"

#define PLAN_ENV_MAX 16
#define PLAN_GW_CONFIG "mw.conf"       /* the framework file, in the gateway's job directory */
#define PLAN_GW_REPORT "report.json"   /* the sub-master's report there, sent back at the end */

struct plan_rank {
	const char *role;
	char *env[PLAN_ENV_MAX];   /* "NAME=VALUE" */
	unsigned nenv;
	char *args[JOB_MAX_ARGS + 3];  /* the program's arguments */
	unsigned nargs;
};

struct plan {
	const struct job_cluster *cl;
	char **argv;               /* NULL-terminated mpirun command line */
	int argc, cap;
	bool failed;               /* out of memory while building */
	unsigned nranks;
	struct plan_rank *ranks;
	struct exec_rank *xranks;  /* plan_request's */
};

/* The ranks and command for cluster c; mw_config: the framework file or
 * NULL; report: the sub-master's (or master's) JSON report path.  For a
 * cluster started through its gateway, both are replaced as above.
 * 0 or -1 (out of memory). */
int plan_cluster(const struct job *j, unsigned c, const char *mw_config, const char *report, struct plan *p);
/* Only the command line: argv (NULL-terminated) as two ranks on cluster
 * c's hosts, with the job's mpirun and options, rank 1 on the CPUs of its
 * workers (mwlaunch --benchmark's LAN probe).  0 or -1 (out of memory). */
int plan_probe(const struct job *j, unsigned c, char *const argv[], struct plan *p);
void plan_free(struct plan *p);
/* The command line, quoted for a POSIX shell. */
void plan_print(const struct plan *p, FILE *out);
/* The START request for a cluster started through its gateway: its
 * ranks, the framework file (framework, or NULL) and the report to send
 * back.  Points into p and j.  0 or -1 (out of memory). */
int plan_request(const struct job *j, struct plan *p, const char *framework, struct exec_start *req);

#endif
