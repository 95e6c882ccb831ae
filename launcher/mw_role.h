/*
 * mw_role.h - which role this process plays, from the launcher's
 * environment (MWL_ROLE, MWL_CLUSTER) or, for a plain `mpirun -np N app`,
 * rank 0 master and every other rank a worker.  Pure: unit-tested.
 */
#ifndef MW_ROLE_H
#define MW_ROLE_H

#include <stddef.h>

#include "launcher/mw.h"

/* env_role: the value of MWL_ROLE or NULL.  0, or -1 with why in err
 * (unknown role). */
int mw_role_parse(const char *env_role, int rank, int size, enum mw_role *role,
		  char *err, size_t errlen);

/* The roles of every rank of one cluster (roles[rank], enum mw_role)
 * make sense: exactly one hub (master or sub-master), and a sub-master's
 * cluster has exactly one communication manager.  Returns the hub's rank,
 * or -1 with why in err. */
int mw_role_check(const int *roles, int size, char *err, size_t errlen);

extern const char *const mw_role_names[5];

/* A communication manager's settings from mwlaunch's environment. */
struct mw_cm_env {
	const char *remote;        /* MWL_REMOTE: the remote cluster (main side) */
	const char *main;          /* MWL_MAIN: the main cluster (remote side); NULL if not set */
	const char *job;           /* MWL_JOB: the job's id, 1..16 of [0-9a-f]; NULL: none (endpoints as before ids) */
	unsigned grain;            /* MWL_GRAIN: fine tasks per coarse task, 1 .. 65536 */
	unsigned prefetch;         /* MWL_PREFETCH: tasks it asks the master for, 1 .. 4096 */
	double prefetch_bytes;     /* MWL_PREFETCH_BYTES (main side): task bytes on the WAN at once, handed
				    * to the gateway and not yet acknowledged; 0 = only ldsd's limit */
	double link_timeout;       /* MWL_LINK_TIMEOUT, s: the peer CM must answer by then */
	double deadline;           /* MWL_DEADLINE, s: longest silence of the remote cluster */
	double lease;              /* MWL_LEASE, s (remote side): longest silence of the main side, then the
				    * cluster ends itself */
	double cache;              /* MWL_CACHE, bytes: the sub-master's data cache; 0 = none */
};

/* getenv, as mw_cm_env_read takes it. */
const char *mw_getenv(const char *name);

/* Reads the variables through get (getenv in the runtime); unset ones
 * take the defaults (grain 1, prefetch 64, prefetch_bytes 16 MiB, 60 s, 60 s, lease 180 s, 64 MiB).
 * 0, or -1 with
 * the variable and why in err. */
int mw_cm_env_read(struct mw_cm_env *e, const char *(*get)(const char *), char *err, size_t errlen);

#endif
