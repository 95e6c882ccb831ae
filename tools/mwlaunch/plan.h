/*
 * plan.h - what mwlaunch starts for one cluster: one `mpirun` whose app
 * contexts are the cluster's ranks, each with its role in the environment
 * (-x MWL_ROLE, MWL_CLUSTER, MWL_RANK, LDS_SOCKET, MW_CONFIG and a
 * communication manager's MWL_REMOTE, MWL_GRAIN, MWL_PREFETCH,
 * MWL_LINK_TIMEOUT, MWL_DEADLINE).
 *
 *   main cluster:   0 master, 1..W workers, then one CM per remote cluster
 *   remote cluster: 0 sub-master, 1 CM, 2..W+1 workers
 */
#ifndef MWLAUNCH_PLAN_H
#define MWLAUNCH_PLAN_H

#include <stdbool.h>
#include <stdio.h>

#include "tools/mwlaunch/jobconf.h"

struct plan {
	char **argv;               /* NULL-terminated mpirun command line */
	int argc, cap;
	bool failed;               /* out of memory while building */
	unsigned nranks;
	const char *roles[JOB_MAX_CLUSTERS + 4096 + 2];  /* per rank, for --dry-run */
};

/* The command for cluster c; mw_config: the framework file or NULL;
 * report: the hub's JSON report path.  0 or -1 (out of memory). */
int plan_cluster(const struct job *j, unsigned c, const char *mw_config, const char *report, struct plan *p);
void plan_free(struct plan *p);
/* The command line, quoted for a POSIX shell. */
void plan_print(const struct plan *p, FILE *out);

#endif
