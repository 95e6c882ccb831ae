/* calibrate.c - mwlaunch --benchmark: measure the model's parameters. */
#include <errno.h>
#include <fcntl.h>
#include <math.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "launcher/mw_calib.h"
#include "launcher/mw_config.h"
#include "ldsd/jsonr.h"
#include "tools/mwlaunch/calibrate.h"
#include "tools/mwlaunch/calstat.h"
#include "tools/mwlaunch/plan.h"
#include "tools/mwlaunch/run.h"

#define PROBE_GRACE 30.0           /* s beyond a probe's own time before it is killed */
#define MIN_PROBE_BYTES 4096       /* ldsbench's messages carry a header and a checked pattern */

/* Each cluster's tasks of a calibration run, dealt as the runtime deals
 * them (mw_calib.h): by its workers x grain, so that each of its workers
 * gets about as many of the master's tasks in fine tasks.  0 or -1. */
static int shares(struct job *j, const struct calib_opts *o)
{
	double weight[JOB_MAX_CLUSTERS], sum = 0;
	unsigned *group;

	for (unsigned i = 0; i < j->ncl; i++) {
		weight[i] = (double)j->cl[i].workers * (j->cl[i].main ? 1 : j->cl[i].grain);
		sum += weight[i];
		j->cl[i].calib_tasks = 0;
	}
	j->task_limit = o->tasks > 0 ? o->tasks : 16L * (long)sum;
	if (j->task_limit < 64 && o->tasks == 0)
		j->task_limit = 64;
	if (j->task_limit < (long)sum) {
		fprintf(stderr, "mwlaunch: --calibrate-tasks %ld: every cluster needs a task per worker and grain, "
			"%.0f in all: give at least that many\n", j->task_limit, sum);
		return -1;
	}
	if ((group = malloc((size_t)j->task_limit * sizeof(*group))) == NULL ||
	    mw_calib_deal((uint64_t)j->task_limit, weight, j->ncl, group) < 0) {
		free(group);
		fprintf(stderr, "mwlaunch: --benchmark: out of memory for %ld calibration tasks\n", j->task_limit);
		return -1;
	}
	for (long k = 0; k < j->task_limit; k++)
		j->cl[group[k]].calib_tasks++;
	free(group);
	return 0;
}

int calib_prepare(struct job *j, const struct calib_opts *o, struct calib_runs *s)
{
	for (unsigned i = 0; i < j->ncl; i++) {
		/* The probes run on both sides of a link; a cluster behind
		 * its gateway would need them on its allow-list. */
		if (j->cl[i].gateway) {
			fprintf(stderr, "mwlaunch: --benchmark: cluster %s is started through its gateway; the "
				"benchmark runs its probes (mw_lanprobe, ldsbench) only for clusters with start = "
				"\"local\": measure it from a machine that reaches it, or write its part of the model "
				"by hand (docs/model.md)\n", j->cl[i].name);
			return -1;
		}
		if (j->cl[i].workers == 0) {
			fprintf(stderr, "mwlaunch: --benchmark: cluster %s has no workers to measure\n", j->cl[i].name);
			return -1;
		}
		j->cl[i].predict_best = j->cl[i].predict_worst = 0;
	}
	/* The main cluster's CMs give up on a silent cluster after
	 * link_timeout: the master must decide before. */
	j->join_wait = o->join_wait >= 0 ? o->join_wait : j->link_timeout / 2;
	if (j->join_wait >= j->link_timeout) {
		fprintf(stderr, "mwlaunch: --join-wait %g s is not below the job's link_timeout (%g s), after which "
			"the communication managers give up on a silent cluster\n", j->join_wait, j->link_timeout);
		return -1;
	}
	if (shares(j, o) < 0)
		return -1;
	*s = (struct calib_runs){ .m = calloc(o->repeat, sizeof(*s->m)) };
	if (s->m == NULL) {
		fprintf(stderr, "mwlaunch: --benchmark: out of memory\n");
		return -1;
	}
	printf("mwlaunch: benchmark: %u calibration run%s of %ld tasks spread over the job's tasks:", o->repeat,
	       o->repeat > 1 ? "s" : "", j->task_limit);
	for (unsigned i = 0; i < j->ncl; i++)
		printf("%s %s %ld", i ? "," : "", j->cl[i].name, j->cl[i].calib_tasks);
	printf("; each run waits up to %g s for every cluster to join\n", j->join_wait);
	fflush(stdout);
	return 0;
}

/* A program next to mwlaunch (build/bin, or where make install put it),
 * else found in PATH. */
static void sibling(const char *name, char *out, size_t len)
{
	char self[PATH_MAX];
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);
	char *slash;

	if (n > 0) {
		self[n] = '\0';
		if ((slash = strrchr(self, '/')) != NULL) {
			snprintf(out, len, "%.*s/%s", (int)(slash - self), self, name);
			if (access(out, X_OK) == 0)
				return;
		}
	}
	snprintf(out, len, "%s", name);
}

static pid_t spawn(char *const argv[], int out_fd)
{
	pid_t pid = fork();

	if (pid == 0) {
		int null = open("/dev/null", O_RDWR);

		dup2(null, STDIN_FILENO);
		dup2(out_fd >= 0 ? out_fd : null, STDOUT_FILENO);
		dup2(out_fd >= 0 ? out_fd : null, STDERR_FILENO);
		setpgid(0, 0);
		execvp(argv[0], argv);
		fprintf(stderr, "%s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	return pid;
}

/* Waits for pid at most until deadline, then kills its group; its exit
 * status, or -1 when it had to be killed. */
static int reap(pid_t pid, double deadline)
{
	int st;

	while (waitpid(pid, &st, WNOHANG) == 0) {
		if (run_now() > deadline) {
			kill(-pid, SIGKILL);
			waitpid(pid, &st, 0);
			return -1;
		}
		nanosleep(&(struct timespec){ 0, 20000000 }, NULL);
	}
	return WIFEXITED(st) ? WEXITSTATUS(st) : -1;
}

/* A probe process whose output (stdout and stderr) goes to a temporary file, so
 * that several can run at once without anyone draining a pipe. */
struct probe_proc {
	pid_t pid;
	FILE *out;
};

/* Starts argv; -1 with errno set if it could not be. */
static int proc_start(struct probe_proc *c, char *const argv[])
{
	c->pid = -1;
	if ((c->out = tmpfile()) == NULL || (c->pid = spawn(argv, fileno(c->out))) < 0)
		return -1;
	return 0;
}

/* Waits for the process at most until deadline (then kills it), puts the
 * tail of its output into out (the newest lines hold the results) and
 * frees it.  Its exit status, or -1 (killed, or never started). */
static int proc_end(struct probe_proc *c, double deadline, char *out, size_t len)
{
	int rc = c->pid > 0 ? reap(c->pid, deadline) : -1;
	size_t n = 0;

	if (c->out != NULL) {
		if (fseek(c->out, 0, SEEK_END) == 0 && ftell(c->out) > (long)len - 1)
			fseek(c->out, -(long)(len - 1), SEEK_END);
		else
			rewind(c->out);
		n = fread(out, 1, len - 1, c->out);
		fclose(c->out);
		c->out = NULL;
	}
	out[n] = '\0';
	return rc;
}

/* Runs argv for at most limit seconds with the tail of its output in out;
 * its exit status, or -1 (timed out, could not start). */
static int capture(char *const argv[], double limit, char *out, size_t len)
{
	struct probe_proc c;

	if (proc_start(&c, argv) < 0) {
		int e = errno;

		proc_end(&c, 0, out, len);
		snprintf(out, len, "cannot start %s: %s", argv[0], strerror(e));
		return -1;
	}
	return proc_end(&c, run_now() + limit, out, len);
}

/* The workers' performance in a report, in the master's tasks: scale is
 * the master's tasks per task of this report (a sub-master splitting
 * with coarse hooks runs finer tasks). */
static int workers_perf(const struct jsonr *rep, const char *cluster, double oper, double scale, struct calib_meas *m)
{
	const struct jsonr *w = jsonr_get(rep, "workers");

	m->nperf = 0;
	for (size_t i = 0; w != NULL && w->type == JSONR_ARR && i < w->n && m->nperf < CALIB_MAX_WORKERS; i++) {
		const struct jsonr *e = &w->kids[i];
		double ran = jsonr_num(jsonr_get(e, "done"), 0) + jsonr_num(jsonr_get(e, "discharged"), 0);
		double work = jsonr_num(jsonr_get(e, "work_time"), 0);

		if (strcmp(jsonr_str(jsonr_get(e, "role")), "Worker") != 0)
			continue;
		if (ran <= 0 || work <= 0) {
			fprintf(stderr, "mwlaunch: --benchmark: cluster %s: worker %u ran no calibration task: give "
				"more with --calibrate-tasks\n", cluster, m->nperf + 1);
			return -1;
		}
		m->perf[m->nperf++] = oper * scale * ran / work;
	}
	return 0;
}

static const struct jsonr *cm_of(const struct jsonr *master, const char *cluster)
{
	const struct jsonr *w = jsonr_get(master, "workers");
	char host[80];

	snprintf(host, sizeof(host), "cm:%s", cluster);
	for (size_t i = 0; w != NULL && w->type == JSONR_ARR && i < w->n; i++)
		if (strcmp(jsonr_str(jsonr_get(&w->kids[i], "host")), host) == 0)
			return &w->kids[i];
	return NULL;
}

/* LAN throughput of cluster i with task + result sized messages, depth of
 * them in flight as the workers' PrefetchDepth, on its hosts with the job's
 * mpirun and options. */
static int probe_lan(const struct job *j, unsigned i, double task, double result, unsigned depth, double secs,
		     double *lan)
{
	const struct job_cluster *c = &j->cl[i];
	char prog[PATH_MAX], a_task[32], a_res[32], a_secs[32], a_depth[16], out[8192];
	char *argv[] = { prog, a_task, a_res, a_secs, a_depth, NULL };
	struct plan p;
	const char *at;
	int rc;

	sibling("mw_lanprobe", prog, sizeof(prog));
	snprintf(a_task, sizeof(a_task), "%.0f", task < 1 ? 1 : task);
	snprintf(a_res, sizeof(a_res), "%.0f", result < 1 ? 1 : result);
	snprintf(a_secs, sizeof(a_secs), "%g", secs);
	snprintf(a_depth, sizeof(a_depth), "%u", depth);
	if (plan_probe(j, i, argv, &p) < 0) {
		plan_free(&p);
		fprintf(stderr, "mwlaunch: --benchmark: out of memory\n");
		return -1;
	}
	printf("mwlaunch: benchmark: cluster %s: LAN, %g s of %s-byte tasks and %s-byte results, %s in flight\n",
	       c->name, secs, a_task, a_res, a_depth);
	fflush(stdout);
	rc = capture(p.argv, secs + PROBE_GRACE, out, sizeof(out));
	plan_free(&p);
	if (rc != 0 || (at = strstr(out, "lan_bytes_per_s ")) == NULL || (*lan = atof(at + 16)) <= 0) {
		fprintf(stderr, "mwlaunch: --benchmark: cluster %s: the LAN probe (%s) failed: %s\n", c->name, prog, out);
		return -1;
	}
	return 0;
}

/* The run's throughput in bytes/s from ldsbench --json-stream's "end" event;
 * 0 when there is none, it names an error, or it measured nothing. */
static double end_throughput(const char *out)
{
	const char *at = strstr(out, "{\"event\":\"end\"");
	const struct jsonr *d;
	struct jsonr *ev;
	double tput = 0;
	char *line, err[128];

	if (at == NULL || (line = strndup(at, strcspn(at, "\n"))) == NULL)
		return 0;
	if ((ev = jsonr_parse(line, err, sizeof(err))) != NULL) {
		d = jsonr_get(ev, "data");
		if (jsonr_str(jsonr_get(d, "error"))[0] == '\0')
			tput = jsonr_num(jsonr_get(d, "bits_per_second"), 0) / 8;
		jsonr_free(ev);
	}
	free(line);
	return tput;
}

/* One Internet probe: ldsbench send through the gateway at one socket to
 * a receiver at the other, with its output in a temporary file. */
struct inet_probe {
	pid_t recv;
	struct probe_proc send;
	char to[160];
};

/* Starts a probe from the gateway at from_sock to endpoint to (a receiver
 * at to_sock) with messages of size bytes. */
static int inet_start(struct inet_probe *p, const char *from_sock, const char *to_sock, const char *to, double size,
		      double secs)
{
	char prog[PATH_MAX], a_size[32], a_secs[32], a_omit[32], a_iv[32];
	char name[80], *slash = strchr(to, '/');

	sibling("ldsbench", prog, sizeof(prog));
	snprintf(p->to, sizeof(p->to), "%s", to);
	snprintf(name, sizeof(name), "%s", slash + 1);
	snprintf(a_size, sizeof(a_size), "%.0f", size < MIN_PROBE_BYTES ? MIN_PROBE_BYTES : size);
	snprintf(a_secs, sizeof(a_secs), "%g", secs);
	/* The first quarter is the link's ramp-up, not its throughput;
	 * ldsbench omits whole intervals. */
	snprintf(a_omit, sizeof(a_omit), "%g", secs / 4);
	snprintf(a_iv, sizeof(a_iv), "%g", secs / 8);
	char *rargv[] = { prog, "recv", "-s", (char *)to_sock, "-n", name, "-1", "-q", "-i", "0", NULL };
	char *sargv[] = { prog, "send", "-s", (char *)from_sock, "-T", (char *)to, "-l", a_size, "-t", a_secs,
			  "-O", a_omit, "-i", a_iv, "--json-stream", "-q", "--wait", "20", NULL };

	p->send = (struct probe_proc){ .pid = -1 };
	if ((p->recv = spawn(rargv, -1)) < 0 || proc_start(&p->send, sargv) < 0) {
		fprintf(stderr, "mwlaunch: --benchmark: cannot start %s to %s: %s\n", prog, to, strerror(errno));
		return -1;
	}
	return 0;
}

/* Waits for a probe (at most until deadline) and frees it; its throughput
 * in bytes/s in *tput, or -1 when it did not start or measure. */
static int inet_end(struct inet_probe *p, double deadline, double *tput)
{
	static char out[65536];
	int started = p->send.pid > 0, rc = proc_end(&p->send, deadline, out, sizeof(out));

	if (p->recv > 0)
		reap(p->recv, run_now() + 5);
	if (!started)
		return -1;
	if (rc != 0 || (*tput = end_throughput(out)) <= 0) {
		fprintf(stderr, "mwlaunch: --benchmark: ldsbench to %s failed (exit %d): %.2000s\n", p->to, rc, out);
		return -1;
	}
	return 0;
}

/* The Internet throughput of every remote cluster, in (from the main
 * cluster, messages of its inter-cluster task size) or out (to it, of
 * its result size): all links at once, as the run uses them, so that what
 * they share (the main cluster's gateway and uplink) is shared as in the
 * run. */
static int probe_inets(const struct job *j, const struct calib_runs *s, struct calib_meas *m, bool in, double secs)
{
	static struct inet_probe pr[JOB_MAX_CLUSTERS];
	const struct job_cluster *mc = &j->cl[j->main];
	double deadline = run_now() + secs + PROBE_GRACE;
	char to[160];
	int rc = 0;

	for (unsigned i = 0; i < j->ncl; i++) {
		const struct job_cluster *c = &j->cl[i];
		double size = in ? m[i].inter_task : m[i].inter_result;

		pr[i] = (struct inet_probe){ .recv = -1, .send = { .pid = -1 } };
		if (c->main || s->left_out[i][0] || rc < 0)
			continue;
		printf("mwlaunch: benchmark: cluster %s: Internet %s, %g s of %.0f-byte messages %s %s\n", c->name,
		       in ? "in" : "out", secs, fmax(size, MIN_PROBE_BYTES), in ? "from" : "to", mc->name);
		fflush(stdout);
		if (in)
			snprintf(to, sizeof(to), "%s/mwlbench-in", c->name);
		else
			snprintf(to, sizeof(to), "%s/mwlbench-%s", mc->name, c->name);
		rc = inet_start(&pr[i], in ? mc->socket : c->socket, in ? c->socket : mc->socket, to, size, secs);
	}
	for (unsigned i = 0; i < j->ncl; i++)
		if (!j->cl[i].main && (pr[i].send.out != NULL || pr[i].recv > 0) &&
		    inet_end(&pr[i], deadline, in ? &m[i].inet_in : &m[i].inet_out) < 0)
			rc = -1;
	return rc;
}

static int write_model(const struct job *j, const struct calib_opts *o, const struct calib_runs *s,
		       const struct calib_meas *m, double oper, double task, double result, bool reassign)
{
	const struct jsonr *master = s->master;
	FILE *f = strcmp(o->out, "-") == 0 ? stdout : fopen(o->out, "w");
	time_t now = time(NULL);
	double tasks = jsonr_num(jsonr_get(master, "problem_tasks"), 0);
	char when[64];

	if (f == NULL) {
		fprintf(stderr, "mwlaunch: --benchmark: %s: %s\n", o->out, strerror(errno));
		return -1;
	}
	strftime(when, sizeof(when), "%Y-%m-%d %H:%M:%S", localtime(&now));
	fprintf(f, "# Model of job %s, measured by mwlaunch --benchmark on %s (docs/model.md):\n"
		"# %u calibration run%s of %.0f tasks (each worker's performance: the median of\n"
		"# the runs); LAN and Internet probes of %g s each.\n", j->path, when, s->n, s->n > 1 ? "s" : "",
		jsonr_num(jsonr_get(master, "joined"), 0), o->seconds);
	if (jsonr_num(jsonr_get(master, "ops_per_task"), 0) <= 0)
		fprintf(f, "# The application states no operations per task: one task is the operation,\n"
			"# performances are tasks/s.\n");
	for (unsigned i = 0; i < j->ncl; i++)
		if (s->left_out[i][0])
			fprintf(f, "# Cluster %s is not in this model: it %s in a calibration run.\n", j->cl[i].name,
				s->left_out[i]);
	/* Numbers as libconfig reads them back: %.9g writes any value that
	 * does not fit an int with a point or an exponent (a float); a whole
	 * count beyond an int needs libconfig's L. */
	fprintf(f, "efficiency_threshold = %g;\n\napplication = {\n\ttasks = %.0f%s;\n\toper = %.9g;\n"
		"\ttask_bytes = %.9g;\n\tresult_bytes = %.9g;\n\treassign_last_task = %s;\n};\n\nclusters = (",
		o->threshold, tasks, tasks > INT_MAX ? "L" : "", oper, task, result, reassign ? "true" : "false");
	for (unsigned i = 0, n = 0; i < j->ncl; i++) {
		const struct job_cluster *c = &j->cl[i];

		if (s->left_out[i][0])
			continue;
		fprintf(f, "%s\n\t{\n\t\tname = \"%s\";\n\t\tmain = %s;\n\t\tlan_throughput = %.6g;\n\t\tworkers = ( ",
			n++ ? "," : "", c->name, c->main ? "true" : "false", m[i].lan);
		for (unsigned k = 0; k < m[i].nperf; k++)
			fprintf(f, "%s%.6g", k ? ", " : "", m[i].perf[k]);
		fputs(" );\n", f);
		if (!c->main)
			fprintf(f, "\t\tinet_in = %.6g;\n\t\tinet_out = %.6g;\n\t\tgrain = %u;\n"
				"\t\tinter_task_bytes = %.9g;\n\t\tinter_result_bytes = %.9g;\n", m[i].inet_in,
				m[i].inet_out, c->grain, m[i].inter_task, m[i].inter_result);
		fputs("\t}", f);
	}
	fputs("\n);\n", f);
	if (f != stdout ? fclose(f) != 0 : fflush(f) != 0) {
		fprintf(stderr, "mwlaunch: --benchmark: %s: %s\n", o->out, strerror(errno));
		return -1;
	}
	return 0;
}

/* The task and result sizes of the main cluster's workers. */
static void sizes(const struct jsonr *master, double *task, double *result)
{
	const struct jsonr *w = jsonr_get(master, "workers");
	double n = 0, out = 0, in = 0;

	for (size_t i = 0; w != NULL && w->type == JSONR_ARR && i < w->n; i++) {
		const struct jsonr *e = &w->kids[i];

		if (strcmp(jsonr_str(jsonr_get(e, "role")), "Worker") != 0)
			continue;
		n += jsonr_num(jsonr_get(e, "done"), 0) + jsonr_num(jsonr_get(e, "discharged"), 0);
		out += jsonr_num(jsonr_get(e, "bytes_out"), 0);
		in += jsonr_num(jsonr_get(e, "bytes_in"), 0);
	}
	*task = n > 0 ? out / n : 0;
	*result = n > 0 ? in / n : 0;
}

/* The operations per task a report states; 1 when it states none (a
 * task is then the operation). */
static double oper_of(const struct jsonr *master)
{
	double oper = jsonr_num(jsonr_get(master, "ops_per_task"), 0);

	return oper > 0 ? oper : 1;
}

/* Cluster i's part of one calibration run: its workers' performance, and
 * for a remote cluster the bytes per inter-cluster task and result. */
static int cluster_meas(const struct job *j, unsigned i, struct jsonr *const rep[], struct calib_meas *m)
{
	const struct job_cluster *c = &j->cl[i];
	double scale = 1;

	if (!c->main) {
		const struct jsonr *cm = cm_of(rep[j->main], c->name);
		/* What the cluster ran, also the tasks whose copies elsewhere won at the end. */
		double done = jsonr_num(jsonr_get(cm, "done"), 0) + jsonr_num(jsonr_get(cm, "discharged"), 0);
		double fine = jsonr_num(jsonr_get(rep[i], "joined"), 0);

		if (done <= 0 || fine <= 0) {
			fprintf(stderr, "mwlaunch: --benchmark: cluster %s did no calibration task: give more "
				"with --calibrate-tasks\n", c->name);
			return -1;
		}
		scale = done / fine;
		/* Bytes that crossed the link per inter-cluster task (after the data cache). */
		m->inter_task = jsonr_num(jsonr_get(cm, "wan_bytes_out"), 0) * c->grain / done;
		m->inter_result = jsonr_num(jsonr_get(cm, "wan_bytes_in"), 0) * c->grain / done;
	}
	if (workers_perf(rep[i], c->name, oper_of(rep[j->main]), scale, m) < 0)
		return -1;
	if (m->nperf != c->workers) {
		fprintf(stderr, "mwlaunch: --benchmark: cluster %s: the report has %u workers, the job %u\n",
			c->name, m->nperf, c->workers);
		return -1;
	}
	return 0;
}

/* "NAME: P1, P2 ... op/s" for each cluster measured, after head. */
static void print_perf(const struct job *j, const char *head, const struct calib_runs *s, const struct calib_meas *m)
{
	bool first = true;

	printf("mwlaunch: benchmark: %s:", head);
	for (unsigned i = 0; i < j->ncl; i++) {
		if (s->left_out[i][0])
			continue;
		printf("%s %s", first ? "" : ";", j->cl[i].name);
		first = false;
		for (unsigned k = 0; k < m[i].nperf; k++)
			printf("%s %.4g", k ? "," : "", m[i].perf[k]);
	}
	printf(" op/s\n");
}

/* Remote clusters the master's report says this run left out (the
 * first reason each one had is kept). */
static void note_left_out(const struct job *j, const struct jsonr *master, struct calib_runs *s, unsigned run)
{
	for (unsigned i = 0; i < j->ncl; i++) {
		const char *why = jsonr_str(jsonr_get(cm_of(master, j->cl[i].name), "left_out"));

		if (j->cl[i].main || why[0] == '\0' || s->left_out[i][0])
			continue;
		snprintf(s->left_out[i], sizeof(s->left_out[i]), "%s", why);
		printf("mwlaunch: benchmark: calibration %u: cluster %s %s; it is left out\n", run, j->cl[i].name, why);
	}
}

int calib_take(const struct job *j, char reports[][PATH_MAX], struct calib_runs *s, const struct calib_opts *o)
{
	struct jsonr *rep[JOB_MAX_CLUSTERS] = { NULL };
	char err[512], head[64];
	int rc = -1;

	if ((rep[j->main] = jsonr_read_file(reports[j->main], err, sizeof(err))) == NULL) {
		fprintf(stderr, "mwlaunch: --benchmark: cluster %s's report: %s\n", j->cl[j->main].name, err);
		goto out;
	}
	note_left_out(j, rep[j->main], s, s->n + 1);
	for (unsigned i = 0; i < j->ncl; i++)
		if (rep[i] == NULL && !s->left_out[i][0] &&
		    (rep[i] = jsonr_read_file(reports[i], err, sizeof(err))) == NULL) {
			fprintf(stderr, "mwlaunch: --benchmark: cluster %s's report: %s\n", j->cl[i].name, err);
			goto out;
		}
	for (unsigned i = 0; i < j->ncl; i++)
		if (!s->left_out[i][0] && cluster_meas(j, i, rep, &s->m[s->n][i]) < 0)
			goto out;
	snprintf(head, sizeof(head), "calibration %u of %u, workers", s->n + 1, o->repeat);
	print_perf(j, head, s, s->m[s->n]);
	s->n++;
	/* The problem's size, the operations and bytes per task: the same in every run. */
	jsonr_free(s->master);
	s->master = rep[j->main];
	rep[j->main] = NULL;
	rc = 0;
out:
	for (unsigned i = 0; i < j->ncl; i++)
		jsonr_free(rep[i]);
	return rc;
}

/* Each cluster's workers and inter-cluster sizes: the median of the runs. */
static int merge_runs(const struct job *j, const struct calib_runs *s, struct calib_meas *m)
{
	const struct calib_meas *runs[CALIB_MAX_RUNS];
	int rc = 0;

	for (unsigned i = 0; i < j->ncl && rc == 0; i++) {
		if (s->left_out[i][0])
			continue;
		for (unsigned r = 0; r < s->n; r++)
			runs[r] = &s->m[r][i];
		rc = calib_merge(runs, s->n, &m[i]);
	}
	if (rc < 0)
		fprintf(stderr, "mwlaunch: --benchmark: the calibration runs do not match (%u runs)\n", s->n);
	else if (s->n > 1)
		print_perf(j, "the median of the calibrations, workers", s, m);
	return rc;
}

int calib_finish(const struct job *j, struct calib_runs *s, const char *mwconf, const struct calib_opts *o)
{
	static struct calib_meas m[JOB_MAX_CLUSTERS];
	struct mw_config cfg;
	double oper, task, result;
	char err[512], names[JOB_MAX_CLUSTERS * 66] = "";
	size_t n = 0;

	mw_config_defaults(&cfg);
	if (mwconf[0] && mw_config_load(mwconf, &cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "mwlaunch: --benchmark: %s\n", err);
		return -1;
	}
	if (merge_runs(j, s, m) < 0)
		return -1;
	oper = oper_of(s->master);
	sizes(s->master, &task, &result);
	printf("mwlaunch: benchmark: %g op per task, %.0f + %.0f bytes per task and result\n", oper, task, result);
	for (unsigned i = 0; i < j->ncl; i++) {
		if (s->left_out[i][0])
			continue;
		if (probe_lan(j, i, task, result, cfg.prefetch, o->seconds, &m[i].lan) < 0)
			return -1;
		printf("mwlaunch: benchmark: cluster %s: LAN %.4g bytes/s\n", j->cl[i].name, m[i].lan);
	}
	if (j->ncl > 2)
		printf("mwlaunch: benchmark: the remote clusters' Internet links are measured all at once\n");
	if (probe_inets(j, s, m, true, o->seconds) < 0 || probe_inets(j, s, m, false, o->seconds) < 0)
		return -1;
	for (unsigned i = 0; i < j->ncl; i++)
		if (!j->cl[i].main && !s->left_out[i][0])
			printf("mwlaunch: benchmark: cluster %s: Internet in %.4g bytes/s, out %.4g bytes/s\n",
			       j->cl[i].name, m[i].inet_in, m[i].inet_out);
	if (write_model(j, o, s, m, oper, task, result, cfg.load_balance) < 0)
		return -1;
	if (strcmp(o->out, "-") != 0)
		printf("mwlaunch: benchmark: model written to %s (mwpredict %s; or model = \"...\" in the job)\n",
		       o->out, o->out);
	for (unsigned i = 0; i < j->ncl; i++)
		if (s->left_out[i][0])
			n += (size_t)snprintf(names + n, sizeof(names) - n, "%s%s", n ? ", " : "", j->cl[i].name);
	if (n == 0)
		return 0;
	fprintf(stderr, "mwlaunch: --benchmark: the model describes the other clusters only, without %s (why: "
		"above); to measure the whole job, start every cluster sooner or give them longer with "
		"--join-wait, and run the benchmark again\n", names);
	return 1;
}

void calib_free(struct calib_runs *s)
{
	free(s->m);
	jsonr_free(s->master);
	*s = (struct calib_runs){ 0 };
}
