/* mw_role.c - role from the launcher's environment or the rank. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/mw_role.h"

const char *const mw_role_names[5] = { "master", "worker", "serial", "submaster", "cm" };

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
	else if (strcmp(env_role, "submaster") == 0)
		*role = MW_ROLE_SUBMASTER;
	else if (strcmp(env_role, "cm") == 0)
		*role = MW_ROLE_CM;
	else {
		snprintf(err, errlen, "MWL_ROLE=%s: unknown role (master, worker, submaster or cm)", env_role);
		return -1;
	}
	return 0;
}

int mw_role_check(const int *roles, int size, char *err, size_t errlen)
{
	int hubs = 0, masters = 0, cms = 0;

	for (int i = 0; i < size; i++) {
		hubs += roles[i] == MW_ROLE_MASTER || roles[i] == MW_ROLE_SUBMASTER;
		masters += roles[i] == MW_ROLE_MASTER;
		cms += roles[i] == MW_ROLE_CM;
	}
	if (hubs != 1) {
		snprintf(err, errlen, "%d ranks have MWL_ROLE=master or submaster; exactly one must", hubs);
		return -1;
	}
	if (masters == 0 && cms != 1) {
		snprintf(err, errlen, "a remote cluster (MWL_ROLE=submaster) needs exactly one rank with "
			 "MWL_ROLE=cm, not %d", cms);
		return -1;
	}
	for (int i = 0; i < size; i++)
		if (roles[i] == MW_ROLE_MASTER || roles[i] == MW_ROLE_SUBMASTER)
			return i;
	return -1;
}

const char *mw_getenv(const char *name)
{
	return getenv(name);
}

/* A number in [lo, hi] from variable name; unset keeps *v. */
static int number(const char *(*get)(const char *), const char *name, double lo, double hi, double *v,
		  char *err, size_t errlen)
{
	const char *s = get(name);
	char *end;
	double d;

	if (s == NULL || *s == '\0')
		return 0;
	d = strtod(s, &end);
	if (*end != '\0' || !isfinite(d) || d < lo || d > hi) {
		snprintf(err, errlen, "%s=%s: expected a number from %g to %g", name, s, lo, hi);
		return -1;
	}
	*v = d;
	return 0;
}

int mw_cm_env_read(struct mw_cm_env *e, const char *(*get)(const char *), char *err, size_t errlen)
{
	double grain = 1, prefetch = 64, link = 60, deadline = 60, lease = 180, cache = 64 << 20;
	double prefetch_bytes = 16 << 20;

	e->remote = get("MWL_REMOTE");
	e->main = get("MWL_MAIN");
	e->job = get("MWL_JOB");
	if (e->job != NULL && *e->job == '\0')
		e->job = NULL;
	if (e->job != NULL && (strlen(e->job) > 16 || e->job[strspn(e->job, "0123456789abcdef")] != '\0')) {
		snprintf(err, errlen, "MWL_JOB=%s: expected a job id of 1 to 16 hexadecimal digits", e->job);
		return -1;
	}
	if (number(get, "MWL_GRAIN", 1, 65536, &grain, err, errlen) < 0 ||
	    number(get, "MWL_PREFETCH", 1, 4096, &prefetch, err, errlen) < 0 ||
	    number(get, "MWL_PREFETCH_BYTES", 0, 1e12, &prefetch_bytes, err, errlen) < 0 ||
	    number(get, "MWL_LINK_TIMEOUT", 0.1, 1e6, &link, err, errlen) < 0 ||
	    number(get, "MWL_DEADLINE", 0.1, 1e6, &deadline, err, errlen) < 0 ||
	    number(get, "MWL_LEASE", 1, 1e7, &lease, err, errlen) < 0 ||
	    number(get, "MWL_CACHE", 0, 1e12, &cache, err, errlen) < 0)
		return -1;
	if (grain != floor(grain) || prefetch != floor(prefetch)) {
		snprintf(err, errlen, "MWL_GRAIN and MWL_PREFETCH must be whole numbers");
		return -1;
	}
	e->grain = (unsigned)grain;
	e->prefetch = (unsigned)prefetch;
	e->prefetch_bytes = prefetch_bytes;
	e->link_timeout = link;
	e->deadline = deadline;
	e->lease = lease;
	e->cache = cache;
	return 0;
}
