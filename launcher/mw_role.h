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
 * (unknown role, or one this version does not run yet). */
int mw_role_parse(const char *env_role, int rank, int size, enum mw_role *role,
		  char *err, size_t errlen);

extern const char *const mw_role_names[3];

#endif
