/*
 * mwlaunch - runs a master-worker job across clusters linked by ldsd
 * (thesis 000, chapter 2): one mpirun per cluster with every rank's role
 * in its environment, output tagged with cluster and rank, failures
 * propagated, everything bounded in time.  docs/mwlaunch.md, mwlaunch(1).
 */
#include <errno.h>
#include <getopt.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "launcher/mw_config.h"
#include "ldsd/json.h"
#include "tools/mwlaunch/calibrate.h"
#include "tools/mwlaunch/ended.h"
#include "tools/mwlaunch/failover.h"
#include "tools/mwlaunch/gwstart.h"
#include "tools/mwlaunch/jobconf.h"
#include "launcher/modelout.h"
#include "tools/mwlaunch/plan.h"
#include "tools/mwlaunch/predict.h"
#include "tools/mwlaunch/run.h"

#define GRACE_EXTRA 15.0        /* s beyond the largest deadline */

struct opts {
	bool dry_run, keep, quiet, predict_only, benchmark;
	const char *workdir, *json, *model;
	FILE *json_stdout;         /* -j -: the real standard output, which carries the JSON alone */
	struct calib_opts calib;
};

/* Where -j writes: the file, opened for this document, or the saved
 * standard output.  NULL after saying why. */
static FILE *json_open(const struct opts *o)
{
	FILE *f = o->json_stdout;

	if (f == NULL && (f = fopen(o->json, "w")) == NULL)
		fprintf(stderr, "mwlaunch: %s: %s\n", o->json, strerror(errno));
	return f;
}

/* Ends a document json_open gave: 0, or -1 after saying why. */
static int json_close(const struct opts *o, FILE *f)
{
	if (fflush(f) != 0 || ferror(f) || (f != o->json_stdout && fclose(f) != 0)) {
		fprintf(stderr, "mwlaunch: writing %s: %s\n", f == o->json_stdout ? "the JSON" : o->json, strerror(errno));
		return -1;
	}
	return 0;
}

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mwlaunch [-n] [-k] [-w DIR] [-j FILE] [-m MODEL] JOB.conf\n"
		"       mwlaunch --predict-only [-j FILE] [-m MODEL] JOB.conf\n"
		"       mwlaunch --benchmark [-o MODEL] [--calibrate-tasks N] [--calibrate-repeat R]\n"
		"                [--join-wait S] [--probe-seconds S] JOB.conf\n"
		"Runs a master-worker job over the clusters of JOB.conf, one mpirun per\n"
		"cluster, joined by their ldsd gateways (docs/mwlaunch.md).\n"
		"  -n, --dry-run       print what would be started where, start nothing\n"
		"  -p, --predict-only  print the model's prediction for the job (mwpredict's\n"
		"                      report; with -j its JSON), start nothing\n"
		"  -m, --model FILE    the model file (docs/model.md) instead of the job's `model'\n"
		"  -b, --benchmark     measure the model's parameters of the job (calibration runs\n"
		"                      of tasks spread over it, LAN and Internet probes), write a model\n"
		"  -o, --output FILE   --benchmark's model file (default model.conf; - = stdout)\n"
		"      --calibrate-tasks N  tasks of a calibration run, dealt to the clusters by workers\n"
		"                      x grain (default 16 per worker x grain, >= 64)\n"
		"      --join-wait S   a calibration run waits that long for every cluster to join;\n"
		"                      one that does not is left out of the model (default: half\n"
		"                      the job's link_timeout)\n"
		"      --calibrate-repeat R calibration runs; each worker's performance is their\n"
		"                      median (default 3, at most 9)\n"
		"      --probe-seconds S    each LAN and Internet probe (default 4)\n"
		"      --threshold E   efficiency_threshold written into the model (default 0.8)\n"
		"  -w, --workdir DIR   runtime configuration and reports here (kept)\n"
		"  -k, --keep          keep the temporary work directory\n"
		"  -j, --json FILE     job summary with every cluster's report as JSON (- = stdout)\n"
		"                      (--predict-only: the prediction as JSON)\n"
		"  -q, --quiet         only the summary and errors (no ranks' output)\n"
		"  -h, --help          this text\n"
		"  -V, --version       print the version\n"
		"exit status: 0 job done, 1 a cluster failed or could not start, 2 usage or\n"
		"job file error, 3 job timeout, 130 interrupted\n");
}

/* The framework entries (job_read checked them) become the runtime's
 * configuration file. */
static int write_framework(const struct job *j, const char *dir, char *path, size_t len)
{
	FILE *f;

	if (j->framework[0] == '\0') {
		path[0] = '\0';
		return 0;
	}
	snprintf(path, len, "%s/mw.conf", dir);
	f = fopen(path, "w");
	if (f == NULL || fputs(j->framework, f) < 0 || fclose(f) != 0) {
		fprintf(stderr, "mwlaunch: %s: cannot write: %s\n", path, strerror(errno));
		return -1;
	}
	return 0;
}

/* What a start would trip over, said before anything starts. */
static int preflight(const struct job *j)
{
	struct stat st;

	if (strchr(j->program, '/') != NULL && access(j->program, X_OK) != 0) {
		fprintf(stderr, "mwlaunch: %s: application program %s: %s\n", j->path, j->program, strerror(errno));
		return -1;
	}
	for (unsigned i = 0; i < j->ncl; i++)
		if (!j->cl[i].gateway && (stat(j->cl[i].socket, &st) != 0 || !S_ISSOCK(st.st_mode))) {
			fprintf(stderr, "mwlaunch: cluster %s: no gateway socket at %s (%s): start that cluster's "
				"ldsd, or fix its socket in %s\n", j->cl[i].name, j->cl[i].socket,
				errno && stat(j->cl[i].socket, &st) != 0 ? strerror(errno) : "not a socket", j->path);
			return -1;
		}
	return 0;
}

static void dry_run(const struct job *j, struct plan *p)
{
	const char *main_sock = j->cl[j->main].socket;

	printf("# mwlaunch --dry-run %s: %u clusters, main %s\n", j->path, j->ncl, j->cl[j->main].name);
	for (unsigned i = 0; i < j->ncl; i++) {
		const struct job_cluster *c = &j->cl[i];
		const char *where = c->hosts[0] ? c->hosts : c->hostfile[0] ? c->hostfile : NULL;

		printf("\ncluster %s (%s): %u ranks on %s", c->name, c->main ? "main" : "remote", p[i].nranks,
		       where ? where : c->gateway ? "its gateway's node" : "this machine");
		if (!c->main)
			printf(", grain %u, prefetch %u (%g MiB on the WAN), deadline %g s, cache %g MiB", c->grain,
			       c->prefetch, c->prefetch_mib, c->deadline, c->cache_mib);
		if (c->gateway)
			printf("\n  started by its gateway: the request goes through %s (ldsd of %s) to %s/%s, which "
			       "runs it as its exec.user: exec.mpirun and exec.mpirun_args start ldsd-exec for every "
			       "rank, which runs the rank's program as listed below (mpirun sees none of it); files "
			       "sent: %s; sent back: %s\n", main_sock, j->cl[j->main].name, c->name, EXEC_ENDPOINT,
			       j->framework[0] ? PLAN_GW_CONFIG : "none", PLAN_GW_REPORT);
		else
			printf("\n  started here; its gateway: %s\n", c->socket);
		for (unsigned r = 0; r < p[i].nranks; r++)
			printf("  rank %u: %s\n", r, p[i].ranks[r].role);
		if (c->gateway)
			printf("  ranks as one mpirun would start them (%s's gateway runs each through ldsd-exec): ", c->name);
		plan_print(&p[i], stdout);
	}
}

static void json_report(FILE *out, const char *path)
{
	FILE *f = fopen(path, "r");
	char buf[4096];
	size_t n;

	if (f == NULL) {
		fputs("null", out);
		return;
	}
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0) {
		while (n > 0 && (buf[n - 1] == '\n' || buf[n - 1] == ' '))
			n--;
		fwrite(buf, 1, n, out);
	}
	fclose(f);
}

static const char *const outcome_names[] = { [RUN_OK] = "ok", [RUN_FAILED] = "failed",
					     [RUN_TIMEOUT] = "timeout", [RUN_INTERRUPTED] = "interrupted" };

static void summary(const struct job *j, const struct child *c, const struct plan *p, char reports[][PATH_MAX],
		    enum run_outcome out, double seconds, const struct opts *o, const struct prediction *pr)
{
	FILE *f;
	char st[sizeof(c->why) + 64];

	printf("\nmwlaunch: job %s (id %s): %u clusters, %.1f s, %s\n", j->path, j->id, j->ncl, seconds,
	       outcome_names[out]);
	printf("  %-16s %-6s %5s %-22s %8s\n", "cluster", "role", "ranks", "status", "seconds");
	for (unsigned i = 0; i < j->ncl; i++)
		printf("  %-16s %-6s %5u %-22s %8.1f\n", j->cl[i].name, j->cl[i].main ? "main" : "remote", p[i].nranks,
		       run_status_text(&c[i], st, sizeof(st)), c[i].t_end - c[i].t_start);
	if (pr != NULL && out == RUN_OK)
		predict_compare(j, pr, reports[j->main], stdout, NULL);
	if (o->json == NULL || (f = json_open(o)) == NULL)
		return;
	fputs("{\"job\":", f);
	json_str(f, j->path);
	fprintf(f, ",\"id\":\"%s\"", j->id);
	fprintf(f, ",\"status\":\"%s\",\"seconds\":%.3f,", outcome_names[out], seconds);
	if (pr != NULL && out == RUN_OK) {
		fputs("\"prediction\":", f);
		predict_compare(j, pr, reports[j->main], NULL, f);
		fputc(',', f);
	}
	fputs("\"clusters\":[", f);
	for (unsigned i = 0; i < j->ncl; i++) {
		fputs(i ? ",{\"name\":" : "{\"name\":", f);
		json_str(f, j->cl[i].name);
		fprintf(f, ",\"main\":%s,\"ranks\":%u,\"status\":", j->cl[i].main ? "true" : "false", p[i].nranks);
		json_str(f, run_status_text(&c[i], st, sizeof(st)));
		fprintf(f, ",\"seconds\":%.3f,\"report\":", c[i].t_end - c[i].t_start);
		json_report(f, reports[i]);
		fputc('}', f);
	}
	fputs("]}\n", f);
	json_close(o, f);
}

/* run_policy's remote_gone: the main CM for that cluster hears it now. */
static void tell_main_cm(void *arg, const char *cluster, const char *why)
{
	const struct job *j = arg;

	failover_tell(j->cl[j->main].socket, j->cl[j->main].name, cluster, j->id, why);
}

static int parse(int argc, char **argv, struct opts *o)
{
	static const struct option lo[] = {
		{ "dry-run", no_argument, NULL, 'n' }, { "keep", no_argument, NULL, 'k' },
		{ "workdir", required_argument, NULL, 'w' }, { "json", required_argument, NULL, 'j' },
		{ "quiet", no_argument, NULL, 'q' }, { "help", no_argument, NULL, 'h' },
		{ "predict-only", no_argument, NULL, 'p' }, { "model", required_argument, NULL, 'm' },
		{ "benchmark", no_argument, NULL, 'b' }, { "output", required_argument, NULL, 'o' },
		{ "calibrate-tasks", required_argument, NULL, 'T' }, { "probe-seconds", required_argument, NULL, 'S' },
		{ "threshold", required_argument, NULL, 'E' }, { "calibrate-repeat", required_argument, NULL, 'R' },
		{ "join-wait", required_argument, NULL, 'J' }, { "version", no_argument, NULL, 'V' },
		{ NULL, 0, NULL, 0 },
	};
	char *end;
	int c;

	o->calib = (struct calib_opts){ .repeat = 3, .seconds = 4, .threshold = 0.8, .out = "model.conf", .join_wait = -1 };
	while ((c = getopt_long(argc, argv, "nkw:j:qhpm:bo:V", lo, NULL)) != -1)
		switch (c) {
		case 'b': o->benchmark = true; break;
		case 'o': o->calib.out = optarg; break;
		case 'T':
			o->calib.tasks = strtol(optarg, &end, 10);
			if (*end != '\0' || o->calib.tasks < 1) {
				fprintf(stderr, "mwlaunch: --calibrate-tasks: expected a number of tasks >= 1, got '%s'\n", optarg);
				return -1;
			}
			break;
		case 'R':
			o->calib.repeat = (unsigned)strtoul(optarg, &end, 10);
			if (*end != '\0' || optarg[0] == '-' || o->calib.repeat < 1 || o->calib.repeat > CALIB_MAX_RUNS) {
				fprintf(stderr, "mwlaunch: --calibrate-repeat: expected 1 to %d runs, got '%s'\n",
					CALIB_MAX_RUNS, optarg);
				return -1;
			}
			break;
		case 'S':
			o->calib.seconds = strtod(optarg, &end);
			if (*end != '\0' || !(o->calib.seconds >= 0.5 && o->calib.seconds <= 600)) {
				fprintf(stderr, "mwlaunch: --probe-seconds: expected 0.5 to 600 seconds, got '%s'\n", optarg);
				return -1;
			}
			break;
		case 'J':
			o->calib.join_wait = strtod(optarg, &end);
			if (*end != '\0' || !(o->calib.join_wait >= 0 && o->calib.join_wait <= 3600)) {
				fprintf(stderr, "mwlaunch: --join-wait: expected 0 to 3600 seconds, got '%s'\n", optarg);
				return -1;
			}
			break;
		case 'E':
			o->calib.threshold = strtod(optarg, &end);
			if (*end != '\0' || !(o->calib.threshold > 0 && o->calib.threshold < 1)) {
				fprintf(stderr, "mwlaunch: --threshold: expected a fraction between 0 and 1, got '%s'\n", optarg);
				return -1;
			}
			break;
		case 'p': o->predict_only = true; break;
		case 'm': o->model = optarg; break;
		case 'n': o->dry_run = true; break;
		case 'k': o->keep = true; break;
		case 'w': o->workdir = optarg; break;
		case 'j': o->json = optarg; break;
		case 'q': o->quiet = true; break;
		case 'h': usage(stdout); exit(0);
		case 'V': puts("mwlaunch " LDS_VERSION); exit(0);
		default: usage(stderr); return -1;
		}
	if (optind != argc - 1) {
		fprintf(stderr, "mwlaunch: expected one job file\n");
		usage(stderr);
		return -1;
	}
	return optind;
}

/* Starts cluster i here, or asks its gateway to. */
static int start_cluster(const struct job *j, unsigned i, struct plan *p, struct gw *gw, struct child *c,
			 const char *report)
{
	struct exec_start req;

	*c = (struct child){ .name = j->cl[i].name, .main = j->cl[i].main, .fd = { -1, -1 }, .job = i + 1,
			     .report = report };
	if (!j->cl[i].gateway)
		return run_start(c, p->argv);
	if (plan_request(j, p, j->framework, &req) < 0) {
		fprintf(stderr, "mwlaunch: out of memory\n");
		return -1;
	}
	return gw_start(gw, c, &req, j->link_timeout);
}

static void remove_workdir(const char *dir, char reports[][PATH_MAX], unsigned n, const char *mwconf)
{
	for (unsigned i = 0; i < n; i++)
		unlink(reports[i]);
	if (mwconf[0])
		unlink(mwconf);
	rmdir(dir);
}

/* The prediction for the job as mwpredict prints it (text, or JSON to
 * o->json).  Returns the exit status. */
static int predict_only(const struct prediction *pr, const struct opts *o)
{
	FILE *f;

	if (o->json == NULL) {
		model_print_report(stdout, pr->path, &pr->m, &pr->r);
		return fflush(stdout) == 0 && !ferror(stdout) ? 0 : 1;
	}
	if ((f = json_open(o)) == NULL)
		return 1;
	model_print_json(f, pr->path, &pr->m, &pr->m, &pr->r, NULL, NULL, NULL, 0);
	return json_close(o, f) < 0 ? 1 : 0;
}

/* Runs the job once: starts every cluster, waits for them, prints the
 * summary; how it ended. */
static enum run_outcome run_job(const struct job *j, struct plan *p, struct child *c, char reports[][PATH_MAX],
				struct gw *gw, const struct run_policy *pol, const struct opts *o,
				const struct prediction *pr)
{
	enum run_outcome out = RUN_OK;
	double t0 = run_now();
	int rc;

	for (unsigned i = 0; i < j->ncl; i++) {
		c[i] = (struct child){ .name = j->cl[i].name, .main = j->cl[i].main, .fd = { -1, -1 }, .done = true };
		snprintf(c[i].why, sizeof(c[i].why), "not started");
	}
	/* Clusters started through gateways first: their requests cross
	 * the WAN, so they take longest to come up. */
	for (unsigned n = 0; n < 2 * j->ncl && out == RUN_OK; n++) {
		unsigned i = n % j->ncl;

		if (j->cl[i].gateway != (n < j->ncl))
			continue;
		if (start_cluster(j, i, &p[i], gw, &c[i], reports[i]) < 0) {
			c[i].done = true;
			snprintf(c[i].why, sizeof(c[i].why), "could not start");
			/* Half a job is no job: the clusters started go too. */
			out = RUN_FAILED;
			run_stop_all(c, j->ncl);
		}
	}
	rc = run_wait(c, j->ncl, pol);
	if (out == RUN_OK)
		out = rc;
	summary(j, c, p, reports, out, run_now() - t0, o, pr);
	return out;
}

int main(int argc, char **argv)
{
	static struct job j;
	static struct prediction pr;
	static struct plan p[JOB_MAX_CLUSTERS];
	static struct child c[JOB_MAX_CLUSTERS];
	static char reports[JOB_MAX_CLUSTERS][PATH_MAX];
	struct gw *gw = NULL;
	char err[2048], dir[2048], mwconf[PATH_MAX];
	struct opts o = { 0 };
	const char *model;
	struct calib_runs cal = { 0 };
	struct run_policy pol;
	enum run_outcome out = RUN_OK;
	bool measured = true;
	double grace = 0;
	int arg = parse(argc, argv, &o);

	if (arg < 0)
		return 2;
	/* -j -: standard output carries the JSON document alone, as iperf3's
	 * -J does; the lines of the ranks and the text report go to standard
	 * error. */
	if (o.json != NULL && strcmp(o.json, "-") == 0) {
		int fd = dup(STDOUT_FILENO);

		if (fd < 0 || (o.json_stdout = fdopen(fd, "w")) == NULL || dup2(STDERR_FILENO, STDOUT_FILENO) < 0) {
			fprintf(stderr, "mwlaunch: -j -: cannot set standard output aside: %s\n", strerror(errno));
			return 1;
		}
	}
	if (job_read(argv[arg], &j, err, sizeof(err)) < 0) {
		fprintf(stderr, "mwlaunch: %s\n", err);
		return 2;
	}
	if (job_new_id(&j, err, sizeof(err)) < 0) {
		fprintf(stderr, "mwlaunch: %s\n", err);
		return 1;
	}
	if (o.benchmark && (o.predict_only || o.dry_run)) {
		fprintf(stderr, "mwlaunch: --benchmark runs the job: not with --predict-only or --dry-run\n");
		return 2;
	}
	model = o.model != NULL ? o.model : j.model[0] ? j.model : NULL;
	/* A calibration run predicts nothing: it measures for the model. */
	if (o.benchmark) {
		if (calib_prepare(&j, &o.calib, &cal) < 0) {
			calib_free(&cal);
			return 1;
		}
		model = NULL;
		o.quiet = true;
	}
	if (o.predict_only && model == NULL) {
		fprintf(stderr, "mwlaunch: --predict-only needs a model: set `model' in %s or give -m FILE "
			"(mwlaunch --benchmark writes one)\n", j.path);
		return 2;
	}
	if (model != NULL && predict_load(&j, model, &pr, err, sizeof(err)) < 0) {
		fprintf(stderr, "mwlaunch: %s\n", err);
		return 2;
	}
	if (o.predict_only)
		return predict_only(&pr, &o);
	if (model != NULL)
		predict_apply(&pr, &j);
	if (o.workdir != NULL && strlen(o.workdir) >= sizeof(dir)) {
		fprintf(stderr, "mwlaunch: --workdir: path too long\n");
		return 2;
	}
	if (o.workdir != NULL)
		snprintf(dir, sizeof(dir), "%s", o.workdir);
	else
		snprintf(dir, sizeof(dir), "%s/mwlaunch.XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	if (o.dry_run && o.workdir == NULL)
		snprintf(dir, sizeof(dir), "WORKDIR");
	else if (o.workdir != NULL ? mkdir(dir, 0700) < 0 && errno != EEXIST : mkdtemp(dir) == NULL) {
		fprintf(stderr, "mwlaunch: work directory %s: %s\n", dir, strerror(errno));
		return 1;
	}
	if (!o.dry_run && write_framework(&j, dir, mwconf, sizeof(mwconf)) < 0)
		return 1;
	if (o.dry_run && j.framework[0])
		snprintf(mwconf, sizeof(mwconf), "%s/mw.conf", dir);
	else if (o.dry_run)
		mwconf[0] = '\0';
	for (unsigned i = 0; i < j.ncl; i++) {
		snprintf(reports[i], sizeof(reports[i]), "%s/%s.json", dir, j.cl[i].name);
		if (plan_cluster(&j, i, mwconf[0] ? mwconf : NULL, reports[i], &p[i]) < 0) {
			fprintf(stderr, "mwlaunch: out of memory\n");
			return 1;
		}
		if (!j.cl[i].main && j.cl[i].deadline > grace)
			grace = j.cl[i].deadline;
	}
	if (o.dry_run) {
		dry_run(&j, p);
		return 0;
	}
	if (preflight(&j) < 0) {
		remove_workdir(dir, reports, 0, mwconf);
		return 1;
	}
	for (unsigned i = 0; i < j.ncl && gw == NULL; i++)
		if (j.cl[i].gateway && (gw = gw_open(j.cl[j.main].socket, err, sizeof(err))) == NULL) {
			fprintf(stderr, "mwlaunch: %s\n", err);
			remove_workdir(dir, reports, 0, mwconf);
			return 1;
		}
	pol = (struct run_policy){ .timeout = j.timeout, .grace = grace + GRACE_EXTRA, .quiet = o.quiet,
				   .continue_on_remote_failure = j.continue_on_remote_failure, .gw = gw,
				   .remote_gone = tell_main_cm, .remote_gone_arg = &j };
	if (model != NULL)
		printf("mwlaunch: predicted %.1f s (best end) to %.1f s (worst end), efficiency %.1f%% to %.1f%% "
		       "(model %s)\n", pr.r.time_best, pr.r.time_worst, 100 * pr.r.efficiency_best,
		       100 * pr.r.efficiency_worst, pr.path);
	for (unsigned r = 0; out == RUN_OK && measured && r < (o.benchmark ? o.calib.repeat : 1); r++) {
		out = run_job(&j, p, c, reports, gw, &pol, &o, model != NULL ? &pr : NULL);
		if (o.benchmark && out == RUN_OK)
			measured = calib_take(&j, reports, &cal, &o.calib) == 0;
	}
	/* Its runs share the id: the end is told once, after the last. */
	ended_tell(&j, gw, c);
	if (o.benchmark && out != RUN_OK)
		fprintf(stderr, "mwlaunch: --benchmark: a calibration run failed; no model written\n");
	else if (o.benchmark && (!measured || calib_finish(&j, &cal, mwconf, &o.calib) != 0))
		out = RUN_FAILED;
	calib_free(&cal);
	if (o.workdir == NULL && !o.keep)
		remove_workdir(dir, reports, j.ncl, mwconf);
	else
		printf("mwlaunch: reports and configuration kept in %s\n", dir);
	for (unsigned i = 0; i < j.ncl; i++)
		plan_free(&p[i]);
	gw_close(gw);
	job_free(&j);
	return (int)out;
}
