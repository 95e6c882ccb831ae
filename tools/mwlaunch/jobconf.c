/* jobconf.c - reads and validates mwlaunch's job file. */
#include <ctype.h>
#include <errno.h>
#include <libconfig.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <stdint.h>
#include <string.h>
#include <sys/random.h>

#include "launcher/mw_config.h"
#include "ldsd/execmsg.h"
#include "tools/mwlaunch/jobconf.h"

struct reader {
	const char *path;
	char *err;
	size_t errlen;
};

static int bad(struct reader *r, const config_setting_t *s, const char *name, const char *why)
{
	snprintf(r->err, r->errlen, "%s:%d: %s: %s", r->path, s ? config_setting_source_line(s) : 0, name, why);
	return -1;
}

static int str(struct reader *r, const config_setting_t *g, const char *name, bool need, char *out, size_t n)
{
	const config_setting_t *s = config_setting_get_member(g, name);

	if (s == NULL)
		return need ? bad(r, g, name, "missing") : 0;
	if (config_setting_type(s) != CONFIG_TYPE_STRING || *config_setting_get_string(s) == '\0')
		return bad(r, s, name, "expected a non-empty string");
	if (strlen(config_setting_get_string(s)) >= n)
		return bad(r, s, name, "too long");
	strcpy(out, config_setting_get_string(s));
	return 0;
}

static int num(struct reader *r, const config_setting_t *g, const char *name, double lo, double hi, bool whole,
	       double *out)
{
	const config_setting_t *s = config_setting_get_member(g, name);
	double v;
	char why[128];

	if (s == NULL)
		return 0;
	switch (config_setting_type(s)) {
	case CONFIG_TYPE_INT: case CONFIG_TYPE_INT64: v = (double)config_setting_get_int64(s); break;
	case CONFIG_TYPE_FLOAT: v = config_setting_get_float(s); break;
	default: return bad(r, s, name, "expected a number");
	}
	if (!isfinite(v) || v < lo || v > hi || (whole && v != floor(v))) {
		snprintf(why, sizeof(why), "%g is out of range (%s%g to %g)", v, whole ? "whole numbers " : "", lo, hi);
		return bad(r, s, name, why);
	}
	*out = v;
	return 0;
}

static int boolean(struct reader *r, const config_setting_t *g, const char *name, bool *out)
{
	const config_setting_t *s = config_setting_get_member(g, name);

	if (s == NULL)
		return 0;
	if (config_setting_type(s) != CONFIG_TYPE_BOOL)
		return bad(r, s, name, "expected true or false");
	*out = config_setting_get_bool(s);
	return 0;
}

static int strings(struct reader *r, const config_setting_t *g, const char *name, char **out, int *n)
{
	const config_setting_t *s = config_setting_get_member(g, name);

	*n = 0;
	if (s == NULL)
		return 0;
	if (!config_setting_is_array(s) && !config_setting_is_list(s))
		return bad(r, s, name, "expected a list of strings [ \"...\", ... ]");
	if (config_setting_length(s) > JOB_MAX_ARGS)
		return bad(r, s, name, "more than 64 entries");
	for (int i = 0; i < config_setting_length(s); i++) {
		const config_setting_t *e = config_setting_get_elem(s, (unsigned)i);

		if (config_setting_type(e) != CONFIG_TYPE_STRING)
			return bad(r, e, name, "every entry must be a string");
		if ((out[(*n)++] = strdup(config_setting_get_string(e))) == NULL)
			return bad(r, e, name, "out of memory");
	}
	out[*n] = NULL;
	return 0;
}

/* Settings a group may hold, so that a misspelt one is an error. */
static int only(struct reader *r, const config_setting_t *g, const char *what, const char *const *known)
{
	for (int i = 0; i < config_setting_length(g); i++) {
		const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
		size_t k = 0;

		while (known[k] != NULL && strcmp(known[k], config_setting_name(s)) != 0)
			k++;
		if (known[k] == NULL) {
			char why[128];

			snprintf(why, sizeof(why), "unknown setting in %s", what);
			return bad(r, s, config_setting_name(s), why);
		}
	}
	return 0;
}

/* The framework group as libconfig text for MW_CONFIG, checked here with
 * the runtime's own reader, so that a mistake names the job file's line. */
static int framework(struct reader *r, const config_setting_t *root, struct job *j)
{
	const config_setting_t *g = config_setting_get_member(root, "framework");
	struct mw_config mc;
	size_t off = 0;

	j->framework[0] = '\0';
	if (g == NULL)
		return 0;
	if (!config_setting_is_group(g))
		return bad(r, g, "framework", "expected a group { Name = value; ... }");
	for (int i = 0; i < config_setting_length(g); i++) {
		const config_setting_t *s = config_setting_get_elem(g, (unsigned)i);
		int n;

		switch (config_setting_type(s)) {
		case CONFIG_TYPE_INT: case CONFIG_TYPE_INT64:
			n = snprintf(j->framework + off, sizeof(j->framework) - off, "%s = %lld;\n",
				     config_setting_name(s), (long long)config_setting_get_int64(s));
			break;
		case CONFIG_TYPE_FLOAT:
			n = snprintf(j->framework + off, sizeof(j->framework) - off, "%s = %.17g%s;\n",
				     config_setting_name(s), config_setting_get_float(s),
				     config_setting_get_float(s) == floor(config_setting_get_float(s)) ? ".0" : "");
			break;
		case CONFIG_TYPE_BOOL:
			n = snprintf(j->framework + off, sizeof(j->framework) - off, "%s = %s;\n",
				     config_setting_name(s), config_setting_get_bool(s) ? "true" : "false");
			break;
		default:
			if (strcmp(config_setting_name(s), "WorkerFailure") == 0)
				return bad(r, s, "WorkerFailure", "set on_worker_failure in the job instead (it also "
					   "starts the main cluster's mpirun with --enable-recovery)");
			return bad(r, s, config_setting_name(s), "framework entries are numbers or booleans");
		}
		if (n < 0 || (size_t)n >= sizeof(j->framework) - off)
			return bad(r, s, "framework", "too many entries");
		off += (size_t)n;
	}
	mw_config_defaults(&mc);
	return mw_config_read_group(g, r->path, &mc, r->err, r->errlen);
}

/* A taskset -c list: CPU numbers and ranges. */
static int cpu_list(struct reader *r, const config_setting_t *g, const char *name, char *out, size_t n)
{
	if (str(r, g, name, false, out, n) < 0)
		return -1;
	size_t len = strlen(out);

	if (len > 0 && (out[strspn(out, "0123456789,-")] != '\0' || !isdigit((unsigned char)out[0]) ||
			!isdigit((unsigned char)out[len - 1])))
		return bad(r, config_setting_get_member(g, name), name,
			   "expected CPU numbers and ranges like \"0\" or \"0-3,8\"");
	return 0;
}

static int cluster(struct reader *r, const config_setting_t *g, struct job_cluster *c)
{
	static const char *const known[] = { "name", "main", "start", "hosts", "hostfile", "workers", "socket",
					     "grain", "prefetch", "prefetch_mib", "deadline", "lease", "cache_mib", "cpus",
					     "worker_cpus", NULL };
	double workers = 1, grain = 1, prefetch = 64, prefetch_mib = 16, deadline = 60, lease = 0, cache = 64;
	char start[16] = "";

	if (!config_setting_is_group(g))
		return bad(r, g, "clusters", "every entry is a group { name = ...; ... }");
	if (only(r, g, "a cluster", known) < 0 || str(r, g, "name", true, c->name, sizeof(c->name)) < 0 ||
	    boolean(r, g, "main", &c->main) < 0 || str(r, g, "start", false, start, sizeof(start)) < 0 ||
	    str(r, g, "hosts", false, c->hosts, sizeof(c->hosts)) < 0 ||
	    str(r, g, "hostfile", false, c->hostfile, sizeof(c->hostfile)) < 0 ||
	    cpu_list(r, g, "cpus", c->cpus, sizeof(c->cpus)) < 0 ||
	    cpu_list(r, g, "worker_cpus", c->worker_cpus, sizeof(c->worker_cpus)) < 0 || num(r, g, "workers", 0, 4096, true, &workers) < 0 ||
	    num(r, g, "grain", 1, 65536, true, &grain) < 0 || num(r, g, "prefetch", 1, 4096, true, &prefetch) < 0 ||
	    num(r, g, "prefetch_mib", 0, 1 << 20, false, &prefetch_mib) < 0 ||
	    num(r, g, "deadline", 0.1, 1e6, false, &deadline) < 0 || num(r, g, "lease", 1, 1e7, false, &lease) < 0 ||
	    num(r, g, "cache_mib", 0, 1 << 20, false, &cache) < 0)
		return -1;
	/* A remote cluster is started through its gateway unless the job
	 * file says it can be reached from here. */
	if (start[0] && strcmp(start, "local") != 0 && strcmp(start, "gateway") != 0)
		return bad(r, config_setting_get_member(g, "start"), "start", "expected \"local\" or \"gateway\"");
	c->gateway = c->main ? false : strcmp(start, "local") != 0;
	if (c->main && strcmp(start, "gateway") == 0)
		return bad(r, config_setting_get_member(g, "start"), "start",
			   "the main cluster runs where mwlaunch runs: start = \"local\"");
	if (str(r, g, "socket", !c->gateway, c->socket, sizeof(c->socket)) < 0)
		return -1;
	if (c->gateway && workers > EXEC_MAX_RANKS - 2)
		return bad(r, config_setting_get_member(g, "workers"), "workers",
			   "a cluster started through its gateway has at most 4094 workers");
	if (strchr(c->name, '/') != NULL || strchr(c->name, ' ') != NULL)
		return bad(r, config_setting_get_member(g, "name"), "name", "a cluster name has no '/' or spaces");
	/* Its gateway runs its ranks as its own exec group says. */
	if ((c->cpus[0] || c->worker_cpus[0]) && c->gateway)
		return bad(r, config_setting_get_member(g, c->cpus[0] ? "cpus" : "worker_cpus"), c->cpus[0] ? "cpus" :
			   "worker_cpus", "applies to clusters mwlaunch starts (start = \"local\"); a cluster started "
			   "through its gateway runs where its gateway puts it");
	if (c->hosts[0] && c->hostfile[0])
		return bad(r, g, "hosts", "give hosts or hostfile, not both");
	if (workers == 0 && !c->main)
		return bad(r, config_setting_get_member(g, "workers"), "workers", "a remote cluster needs workers");
	if (c->main && (config_setting_get_member(g, "grain") || config_setting_get_member(g, "prefetch") ||
			config_setting_get_member(g, "prefetch_mib") || config_setting_get_member(g, "deadline") ||
			config_setting_get_member(g, "lease") || config_setting_get_member(g, "cache_mib")))
		return bad(r, g, "grain", "grain, prefetch, prefetch_mib, deadline, lease and cache_mib belong to "
			   "remote clusters");
	c->workers = (unsigned)workers;
	c->grain = (unsigned)grain;
	c->prefetch = (unsigned)prefetch;
	c->prefetch_mib = prefetch_mib;
	c->deadline = deadline;
	/* Long enough to outlast what the main side itself sits out (its
	 * deadline, an outage the link survives), short enough that a
	 * cluster whose job is gone does not compute for nothing for long. */
	c->lease = lease > 0 ? lease : fmax(3 * deadline, 60);
	c->cache_mib = cache;
	return 0;
}

static int clusters(struct reader *r, const config_setting_t *root, struct job *j)
{
	const config_setting_t *l = config_setting_get_member(root, "clusters");
	int nmain = 0;

	if (l == NULL)
		return bad(r, root, "clusters", "missing");
	if (!config_setting_is_list(l) || config_setting_length(l) < 2)
		return bad(r, l, "clusters", "expected a list ( {...}, {...} ) of at least 2 clusters");
	if (config_setting_length(l) > JOB_MAX_CLUSTERS)
		return bad(r, l, "clusters", "more than 16 clusters");
	j->ncl = (unsigned)config_setting_length(l);
	for (unsigned i = 0; i < j->ncl; i++) {
		const config_setting_t *g = config_setting_get_elem(l, i);

		if (cluster(r, g, &j->cl[i]) < 0)
			return -1;
		for (unsigned k = 0; k < i; k++)
			if (strcmp(j->cl[k].name, j->cl[i].name) == 0)
				return bad(r, g, "name", "two clusters have this name");
		if (j->cl[i].main) {
			j->main = i;
			nmain++;
		}
	}
	if (nmain != 1)
		return bad(r, l, "main", "exactly one cluster must have main = true");
	for (unsigned i = 0; i < j->ncl; i++)
		if (i != j->main && strlen(j->cl[i].name) + strlen(j->cl[j->main].name) > JOB_CM_NAMES_MAX)
			return bad(r, config_setting_get_elem(l, i), "name", "this name and the main cluster's take more "
				   "than 106 bytes together: the main cluster's endpoint for it, MAIN/cm-NAME-JOBID, "
				   "would not fit 127 bytes");
	for (unsigned i = 0; i < j->ncl; i++) {
		if (!j->cl[i].gateway)
			continue;
		/* The gateway's allow-list names absolute paths; a request
		 * carries at most EXEC_MAX_ARGS arguments per rank, two of
		 * which may be the sub-master's --json REPORT. */
		if (j->program[0] != '/')
			return bad(r, config_setting_get_elem(l, i), "start", "a cluster started through its gateway "
				   "needs an absolute application.program (its gateway's exec.programs lists it)");
		if (j->nargs > (int)EXEC_MAX_ARGS - 2)
			return bad(r, config_setting_get_elem(l, i), "start", "a cluster started through its gateway "
				   "takes at most 62 application.args");
	}
	return 0;
}

/* --json in the application's arguments: mwlaunch sets it itself for
 * every cluster's report (the last one counts), so the user's was
 * silently replaced. */
static int runtime_args(struct reader *r, const config_setting_t *app, const struct job *j)
{
	for (int i = 0; i < j->nargs; i++)
		if (strcmp(j->args[i], "--json") == 0 || strncmp(j->args[i], "--json=", 7) == 0)
			return bad(r, config_setting_get_member(app, "args"), "application.args",
				   "--json: mwlaunch writes every cluster's report itself: use mwlaunch -j FILE");
	return 0;
}

/* The model file is named relative to the job file, as a user keeps the
 * two side by side. */
static int model_path(struct reader *r, const config_setting_t *root, struct job *j)
{
	char rel[sizeof(j->model)] = "";
	const char *slash = strrchr(j->path, '/');
	int dir = slash ? (int)(slash - j->path) : 0;

	if (str(r, root, "model", false, rel, sizeof(rel)) < 0)
		return -1;
	if (rel[0] == '\0')
		return 0;
	if (rel[0] == '/' || slash == NULL)
		snprintf(j->model, sizeof(j->model), "%s", rel);
	else if (snprintf(j->model, sizeof(j->model), "%.*s/%s", dir, j->path, rel) >= (int)sizeof(j->model))
		return bad(r, config_setting_get_member(root, "model"), "model", "path too long");
	return 0;
}

int job_new_id(struct job *j, char *err, size_t errlen)
{
	uint8_t b[JOB_ID_LEN / 2];

	if (getrandom(b, sizeof(b), 0) != (ssize_t)sizeof(b)) {
		snprintf(err, errlen, "no random job id: getrandom: %s", strerror(errno));
		return -1;
	}
	for (size_t i = 0; i < sizeof(b); i++)
		snprintf(j->id + 2 * i, 3, "%02x", b[i]);
	return 0;
}

int job_read(const char *path, struct job *j, char *err, size_t errlen)
{
	static const char *const known[] = { "application", "framework", "clusters", "mpirun", "mpirun_args",
					     "timeout", "link_timeout", "on_remote_failure", "on_worker_failure", "model",
					     NULL };
	struct reader r = { path, err, errlen };
	config_t cfg;
	const config_setting_t *root, *app;
	/* The main cluster finishes the job without a remote one that
	 * fails: what it held goes to the others (docs/mwlaunch.md). */
	char policy[32] = "continue";
	/* A worker rank of the main cluster that dies ends the job unless
	 * asked otherwise (docs/mwlaunch.md, "Failure model"). */
	char wpolicy[32] = "abort";
	int rc = -1;

	memset(j, 0, sizeof(*j));
	snprintf(j->path, sizeof(j->path), "%s", path);
	strcpy(j->mpirun, "mpirun");
	j->timeout = 3600;
	j->link_timeout = 60;
	config_init(&cfg);
	if (config_read_file(&cfg, path) != CONFIG_TRUE) {
		if (config_error_type(&cfg) == CONFIG_ERR_FILE_IO)
			snprintf(err, errlen, "%s: cannot read the job file", path);
		else
			snprintf(err, errlen, "%s:%d: %s", path, config_error_line(&cfg), config_error_text(&cfg));
		goto out;
	}
	root = config_root_setting(&cfg);
	app = config_setting_get_member(root, "application");
	if (only(&r, root, "the job file", known) < 0)
		goto out;
	if (app == NULL || !config_setting_is_group(app)) {
		bad(&r, app ? app : root, "application", "missing, or not a group { program = ...; args = [...]; }");
		goto out;
	}
	if (only(&r, app, "application", (const char *const[]){ "program", "args", NULL }) < 0 ||
	    str(&r, app, "program", true, j->program, sizeof(j->program)) < 0 ||
	    strings(&r, app, "args", j->args, &j->nargs) < 0 || runtime_args(&r, app, j) < 0 ||
	    framework(&r, root, j) < 0 ||
	    str(&r, root, "mpirun", false, j->mpirun, sizeof(j->mpirun)) < 0 ||
	    strings(&r, root, "mpirun_args", j->mpirun_args, &j->nmpirun_args) < 0 ||
	    num(&r, root, "timeout", 1, 1e7, false, &j->timeout) < 0 ||
	    num(&r, root, "link_timeout", 0.1, 1e6, false, &j->link_timeout) < 0 ||
	    str(&r, root, "on_remote_failure", false, policy, sizeof(policy)) < 0 ||
	    str(&r, root, "on_worker_failure", false, wpolicy, sizeof(wpolicy)) < 0 || clusters(&r, root, j) < 0 ||
	    model_path(&r, root, j) < 0)
		goto out;
	if (mw_config_failure(policy, &j->continue_on_remote_failure) < 0) {
		bad(&r, config_setting_get_member(root, "on_remote_failure"), "on_remote_failure",
		    "expected \"abort\" or \"continue\"");
		goto out;
	}
	if (mw_config_failure(wpolicy, &j->continue_on_worker_failure) < 0) {
		bad(&r, config_setting_get_member(root, "on_worker_failure"), "on_worker_failure",
		    "expected \"abort\" or \"continue\"");
		goto out;
	}
	rc = 0;
out:
	config_destroy(&cfg);
	if (rc < 0)
		job_free(j);
	return rc;
}

void job_free(struct job *j)
{
	for (int i = 0; i < j->nargs; i++)
		free(j->args[i]);
	for (int i = 0; i < j->nmpirun_args; i++)
		free(j->mpirun_args[i]);
	j->nargs = j->nmpirun_args = 0;
}
