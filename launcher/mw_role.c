/* mw_role.c - role from the launcher's environment or the rank. */
#include <stdio.h>
#include <string.h>

#include "launcher/mw_role.h"

const char *const mw_role_names[3] = { "master", "worker", "serial" };

int mw_role_parse(const char *env_role, int rank, int size, enum mw_role *role,
		  char *err, size_t errlen)
{
	if (env_role == NULL || *env_role == '\0') {
		*role = size == 1 ? MW_ROLE_SERIAL : rank == 0 ? MW_ROLE_MASTER : MW_ROLE_WORKER;
		return 0;
	}
	if (strcmp(env_role, "master") == 0)
		*role = size == 1 ? MW_ROLE_SERIAL : MW_ROLE_MASTER;
	else if (strcmp(env_role, "worker") == 0)
		*role = MW_ROLE_WORKER;
	else if (strcmp(env_role, "submaster") == 0 || strcmp(env_role, "cm") == 0) {
		snprintf(err, errlen, "MWL_ROLE=%s: this runtime runs one cluster only; "
			 "sub-masters and communication managers come with mwlaunch", env_role);
		return -1;
	} else {
		snprintf(err, errlen, "MWL_ROLE=%s: unknown role (master, worker, submaster or cm)", env_role);
		return -1;
	}
	return 0;
}
