/* plan.c - one cluster's ranks, and its mpirun command line or gateway request. */
#include <math.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>

#include "tools/mwlaunch/plan.h"

static char *vformat(struct plan *p, const char *fmt, va_list ap)
{
	char *s;

	if (p->failed)
		return NULL;
	if (vasprintf(&s, fmt, ap) < 0) {
		p->failed = true;
		return NULL;
	}
	return s;
}

/* Appends one argument to the command line; out of memory sets
 * p->failed, checked once at the end, so that building reads as the
 * command it builds. */
static void add(struct plan *p, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void add(struct plan *p, const char *fmt, ...)
{
	va_list ap;
	char *s;

	if (!p->failed && p->argc + 2 > p->cap) {
		int cap = p->cap ? p->cap * 2 : 64;
		char **v = realloc(p->argv, (size_t)cap * sizeof(*v));

		if (v == NULL)
			p->failed = true;
		else {
			p->argv = v;
			p->cap = cap;
		}
	}
	va_start(ap, fmt);
	s = vformat(p, fmt, ap);
	va_end(ap);
	if (s == NULL)
		return;
	p->argv[p->argc++] = s;
	p->argv[p->argc] = NULL;
}

/* NAME=VALUE into rank r's environment. */
static void env(struct plan *p, struct plan_rank *r, const char *fmt, ...) __attribute__((format(printf, 3, 4)));
static void env(struct plan *p, struct plan_rank *r, const char *fmt, ...)
{
	va_list ap;
	char *s;

	va_start(ap, fmt);
	s = vformat(p, fmt, ap);
	va_end(ap);
	/* The set of variables is the code's, not the job file's: a full
	 * table is a bug here, failed loudly rather than written past. */
	if (s != NULL && r->nenv == PLAN_ENV_MAX) {
		free(s);
		p->failed = true;
	} else if (s != NULL) {
		r->env[r->nenv++] = s;
	}
}

static void arg(struct plan *p, struct plan_rank *r, const char *a)
{
	char *s = p->failed ? NULL : strdup(a);

	if (s == NULL)
		p->failed = true;
	else
		r->args[r->nargs++] = s;
}

/* A calibration run's master: how many tasks, each cluster's share of
 * them, how long it waits for the clusters to join (mw_calib.h). */
static void calib_env(const struct job *j, struct plan *p, struct plan_rank *r)
{
	char shares[JOB_MAX_CLUSTERS * 88] = "";
	size_t n = 0;

	for (unsigned i = 0; i < j->ncl && n < sizeof(shares); i++)
		n += (size_t)snprintf(shares + n, sizeof(shares) - n, "%s%s:%ld", i ? "," : "", j->cl[i].name,
				      j->cl[i].calib_tasks);
	env(p, r, "MWL_TASK_LIMIT=%ld", j->task_limit);
	env(p, r, "MWL_CALIB_SHARES=%s", shares);
	env(p, r, "MWL_JOIN_WAIT=%g", j->join_wait);
}

/* --stats-log and --plot describe the whole job: only the main cluster's
 * master takes them, since every cluster's hub would write the same file.
 * 0 for another argument, 1 for the option with its value (--plot=F), 2
 * when the value is the next argument. */
static int whole_job_option(const char *a)
{
	static const char *const opts[] = { "--stats-log", "--plot" };

	for (size_t k = 0; k < sizeof(opts) / sizeof(opts[0]); k++) {
		size_t n = strlen(opts[k]);

		if (strncmp(a, opts[k], n) == 0 && (a[n] == '\0' || a[n] == '='))
			return a[n] == '=' ? 1 : 2;
	}
	return 0;
}

/* One rank with its role.  A main-side CM serves peer; the remote
 * cluster's entry says how the link between them is used. */
static void rank(const struct job *j, unsigned c, const char *role, const struct job_cluster *peer,
		 const char *mw_config, const char *report, struct plan *p)
{
	const struct job_cluster *cl = &j->cl[c];
	struct plan_rank *r = &p->ranks[p->nranks];

	r->role = role;
	env(p, r, "MWL_ROLE=%s", role);
	env(p, r, "MWL_CLUSTER=%s", cl->name);
	env(p, r, "MWL_RANK=%u", p->nranks);
	if (cl->socket[0])
		env(p, r, "LDS_SOCKET=%s", cl->socket);
	if (mw_config != NULL)
		env(p, r, "MW_CONFIG=%s", mw_config);
	if (strcmp(role, "cm") == 0) {
		if (peer != NULL) {
			env(p, r, "MWL_REMOTE=%s", peer->name);
			env(p, r, "MWL_GRAIN=%u", peer->grain);
			env(p, r, "MWL_PREFETCH=%u", peer->prefetch);
			env(p, r, "MWL_PREFETCH_BYTES=%.0f", peer->prefetch_mib * 1048576);
		}
		env(p, r, "MWL_LINK_TIMEOUT=%g", j->link_timeout);
		env(p, r, "MWL_DEADLINE=%g", (peer ? peer : cl)->deadline);
		if (peer == NULL) {
			env(p, r, "MWL_LEASE=%g", cl->lease);
			env(p, r, "MWL_MAIN=%s", j->cl[j->main].name);
		}
		if (j->id[0])
			env(p, r, "MWL_JOB=%s", j->id);
	}
	/* The data cache: its main-side mirror and the sub-master hold as
	 * much as the remote cluster's entry says. */
	if (strcmp(role, "submaster") == 0 || (strcmp(role, "cm") == 0 && peer != NULL))
		env(p, r, "MWL_CACHE=%.0f", (peer ? peer : cl)->cache_mib * 1048576.0);
	if (cl->main && j->continue_on_worker_failure)
		env(p, r, "MWL_WORKER_FAILURE=continue");
	if (cl->predict_best > 0 && (strcmp(role, "master") == 0 || strcmp(role, "submaster") == 0))
		env(p, r, "MWL_PREDICT=%.6f,%.6f", cl->predict_best, cl->predict_worst);
	if (j->task_limit > 0 && strcmp(role, "master") == 0)
		calib_env(j, p, r);
	for (int i = 0; i < j->nargs; i++) {
		int skip = strcmp(role, "master") == 0 ? 0 : whole_job_option(j->args[i]);

		if (skip == 0)
			arg(p, r, j->args[i]);
		i += skip > 1;
	}
	if (report != NULL && (strcmp(role, "master") == 0 || strcmp(role, "submaster") == 0)) {
		arg(p, r, "--json");
		arg(p, r, report);
	}
	p->nranks++;
}

/* mpirun with its options for the cluster's hosts.  Through a gateway
 * it shows what the gateway will run: its own mpirun and options
 * (exec.mpirun, exec.mpirun_args) come in front instead of the job
 * file's. */
static void mpirun(const struct job *j, struct plan *p, bool tag_output)
{
	const struct job_cluster *cl = p->cl;

	add(p, "%s", cl->gateway ? "mpirun" : j->mpirun);
	if (!cl->gateway)
		add(p, "--oversubscribe");
	if (tag_output)
		add(p, "--tag-output");
	/* A dead worker rank does not end the main cluster's job: the master
	 * gives its tasks to the others (on_worker_failure).  MPI_Finalize
	 * then skips its opening barrier: it includes the dead rank, and
	 * Open MPI 4.1 sometimes never releases it (every survivor spun in
	 * it until the job's timeout, seen under load); the runtime's own
	 * goodbyes have ended all traffic by then. */
	if (cl->main && j->continue_on_worker_failure) {
		add(p, "--enable-recovery");
		add(p, "--mca");
		add(p, "async_mpi_finalize");
		add(p, "1");
	}
	if (cl->hosts[0]) {
		add(p, "-H");
		add(p, "%s", cl->hosts);
	}
	if (cl->hostfile[0]) {
		add(p, "--hostfile");
		add(p, "%s", cl->hostfile);
	}
	for (int i = 0; !cl->gateway && i < j->nmpirun_args; i++)
		add(p, "%s", j->mpirun_args[i]);
}

/* The CPUs a rank of the cluster with this role runs on ("" = any). */
static const char *rank_cpus(const struct job_cluster *cl, const char *role)
{
	return strcmp(role, "worker") == 0 && cl->worker_cpus[0] ? cl->worker_cpus : cl->cpus;
}

/* The program of one app context, behind taskset where the rank has its
 * own CPUs: per rank, which mpirun's --cpu-set (one set for all) cannot
 * say, and after mpirun's own binding, so that it decides. */
static void program(struct plan *p, const char *cpus, const char *prog)
{
	if (cpus[0]) {
		add(p, "taskset");
		add(p, "-c");
		add(p, "%s", cpus);
	}
	add(p, "%s", prog);
}

/* The command line: mpirun, then one app context per rank. */
static void command(const struct job *j, struct plan *p)
{
	mpirun(j, p, true);
	for (unsigned r = 0; r < p->nranks; r++) {
		if (r > 0)
			add(p, ":");
		add(p, "-np");
		add(p, "1");
		for (unsigned k = 0; k < p->ranks[r].nenv; k++) {
			add(p, "-x");
			add(p, "%s", p->ranks[r].env[k]);
		}
		program(p, rank_cpus(p->cl, p->ranks[r].role), j->program);
		for (unsigned k = 0; k < p->ranks[r].nargs; k++)
			add(p, "%s", p->ranks[r].args[k]);
	}
}

int plan_cluster(const struct job *j, unsigned c, const char *mw_config, const char *report, struct plan *p)
{
	const struct job_cluster *cl = &j->cl[c];
	unsigned n = cl->main ? 1 + cl->workers + (j->ncl - 1) : 2 + cl->workers;

	memset(p, 0, sizeof(*p));
	p->cl = cl;
	p->ranks = calloc(n, sizeof(*p->ranks));
	if (p->ranks == NULL)
		return -1;
	if (cl->gateway) {
		mw_config = mw_config ? PLAN_GW_CONFIG : NULL;
		report = PLAN_GW_REPORT;
	}
	if (cl->main) {
		rank(j, c, "master", NULL, mw_config, report, p);
		for (unsigned w = 0; w < cl->workers; w++)
			rank(j, c, "worker", NULL, mw_config, report, p);
		for (unsigned k = 0; k < j->ncl; k++)
			if (k != c)
				rank(j, c, "cm", &j->cl[k], mw_config, report, p);
	} else {
		rank(j, c, "submaster", NULL, mw_config, report, p);
		rank(j, c, "cm", NULL, mw_config, report, p);
		for (unsigned w = 0; w < cl->workers; w++)
			rank(j, c, "worker", NULL, mw_config, report, p);
	}
	command(j, p);
	return p->failed ? -1 : 0;
}

int plan_probe(const struct job *j, unsigned c, char *const argv[], struct plan *p)
{
	memset(p, 0, sizeof(*p));
	p->cl = &j->cl[c];
	mpirun(j, p, false);
	/* Rank 0 where the master (or sub-master) runs, rank 1 where a
	 * worker does: the path a task takes. */
	for (int r = 0; r < 2; r++) {
		if (r > 0)
			add(p, ":");
		add(p, "-np");
		add(p, "1");
		program(p, rank_cpus(p->cl, r ? "worker" : "master"), argv[0]);
		for (int i = 1; argv[i] != NULL; i++)
			add(p, "%s", argv[i]);
	}
	return p->failed ? -1 : 0;
}

int plan_request(const struct job *j, struct plan *p, const char *framework, struct exec_start *req)
{
	memset(req, 0, sizeof(*req));
	p->xranks = calloc(p->nranks, sizeof(*p->xranks));
	if (p->xranks == NULL)
		return -1;
	/* Whole seconds, rounded up: the gateway stops it no earlier than we would. */
	req->timeout = (uint32_t)ceil(j->timeout);
	/* The gateway's own check of what the cluster's CM does: a job whose
	 * requester stays unreachable past the lease is stopped there too. */
	req->lease = (uint32_t)ceil(p->cl->lease);
	req->hosts = p->cl->hosts;
	req->hostfile = p->cl->hostfile;
	req->collect = PLAN_GW_REPORT;
	if (framework != NULL && framework[0]) {
		req->files[0] = (struct exec_file){ PLAN_GW_CONFIG, (const uint8_t *)framework, (uint32_t)strlen(framework) };
		req->nfiles = 1;
	}
	for (unsigned r = 0; r < p->nranks; r++)
		p->xranks[r] = (struct exec_rank){ .program = j->program, .args = (const char **)p->ranks[r].args,
						   .nargs = p->ranks[r].nargs, .env = (const char **)p->ranks[r].env,
						   .nenv = p->ranks[r].nenv };
	req->ranks = p->xranks;
	req->nranks = p->nranks;
	return 0;
}

void plan_free(struct plan *p)
{
	for (int i = 0; i < p->argc; i++)
		free(p->argv[i]);
	for (unsigned r = 0; p->ranks && r < p->nranks; r++) {
		for (unsigned k = 0; k < p->ranks[r].nenv; k++)
			free(p->ranks[r].env[k]);
		for (unsigned k = 0; k < p->ranks[r].nargs; k++)
			free(p->ranks[r].args[k]);
	}
	free(p->ranks);
	free(p->xranks);
	free(p->argv);
	memset(p, 0, sizeof(*p));
}

void plan_print(const struct plan *p, FILE *out)
{
	for (int i = 0; i < p->argc; i++) {
		const char *a = p->argv[i];

		if (i > 0)
			fputc(' ', out);
		if (a[strcspn(a, " \t\n'\"\\$`*?[]{}()<>|&;#~")] == '\0' && *a != '\0') {
			fputs(a, out);
			continue;
		}
		fputc('\'', out);
		for (; *a; a++)
			a[0] == '\'' ? fputs("'\\''", out) : fputc(*a, out);
		fputc('\'', out);
	}
	fputc('\n', out);
}
