/* predict.c - a job's prediction, and the prediction against the run. */
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/modelconf.h"
#include "launcher/modelout.h"
#include "ldsd/json.h"
#include "ldsd/jsonr.h"
#include "tools/mwlaunch/predict.h"

int predict_load(const struct job *j, const char *path, struct prediction *p, char *err, size_t errlen)
{
	char why[512];

	memset(p, 0, sizeof(*p));
	snprintf(p->path, sizeof(p->path), "%s", path);
	if (modelconf_load(path, &p->m, err, errlen) < 0)
		return -1;
	if (p->m.nclusters != j->ncl) {
		snprintf(err, errlen, "%s: %zu clusters, but the job %s has %u: the model must describe the job's "
			 "clusters (mwlaunch --benchmark writes one)", path, p->m.nclusters, j->path, j->ncl);
		return -1;
	}
	for (unsigned i = 0; i < j->ncl; i++) {
		const struct job_cluster *c = &j->cl[i];
		const struct model_cluster *mc = NULL;

		for (unsigned k = 0; k < p->m.nclusters && mc == NULL; k++)
			if (strcmp(p->m.cl[k].name, c->name) == 0) {
				p->map[i] = k;
				mc = &p->m.cl[k];
			}
		why[0] = '\0';
		if (mc == NULL)
			snprintf(why, sizeof(why), "has no cluster of this name");
		else if (mc->main != c->main)
			snprintf(why, sizeof(why), "is %s there, %s in the job", mc->main ? "main" : "remote",
				 c->main ? "main" : "remote");
		else if (mc->nworkers != c->workers)
			snprintf(why, sizeof(why), "has %zu workers there, %u in the job", mc->nworkers, c->workers);
		else if (!c->main && (unsigned long)mc->grain != c->grain)
			snprintf(why, sizeof(why), "has grain %ld there, %u in the job", mc->grain, c->grain);
		if (why[0]) {
			snprintf(err, errlen, "%s: cluster %s %s (job %s): the model must describe the job as it "
				 "runs; measure it again with mwlaunch --benchmark", path, c->name, why, j->path);
			return -1;
		}
	}
	model_predict(&p->m, &p->r);
	return 0;
}

void predict_apply(const struct prediction *p, struct job *j)
{
	for (unsigned i = 0; i < j->ncl; i++) {
		const struct model_cluster_eval *ev = &p->r.cl[p->map[i]];
		double b = j->cl[i].main ? p->r.time_best : ev->time_best;
		double w = j->cl[i].main ? p->r.time_worst : ev->time_worst;

		/* The best- and worst-end balances give a cluster different
		 * shares, so its worst-end time may be the shorter: the
		 * runtime takes an interval, shortest first. */
		j->cl[i].predict_best = fmin(b, w);
		j->cl[i].predict_worst = fmax(b, w);
	}
}

/* What the master measured for one cluster: the tasks its workers (main)
 * or its communication manager (remote) had joined, and when the last of
 * them was joined, from the master's first dispatch. */
struct measured {
	double tasks, time;
};

static void measure(const struct jsonr *rep, const struct job_cluster *c, struct measured *m)
{
	const struct jsonr *w = jsonr_get(rep, "workers");
	char cm[80];

	snprintf(cm, sizeof(cm), "cm:%s", c->name);
	*m = (struct measured){ 0, 0 };
	for (size_t i = 0; w != NULL && w->type == JSONR_ARR && i < w->n; i++) {
		const struct jsonr *e = &w->kids[i];
		int is_cm = strcmp(jsonr_str(jsonr_get(e, "role")), "CommManager") == 0;
		double last = jsonr_num(jsonr_get(e, "last_result"), 0);

		if (c->main ? is_cm : strcmp(jsonr_str(jsonr_get(e, "host")), cm) != 0)
			continue;
		m->tasks += jsonr_num(jsonr_get(e, "done"), 0);
		if (last > m->time)
			m->time = last;
	}
}

/* Eq. 7 for a measurement: the time the cluster's computers would take
 * for its tasks at their available performance, over the time taken. */
static double efficiency(double tasks, double oper, double cperf, double time)
{
	return time > 0 && cperf > 0 ? tasks * oper / cperf / time : 0;
}

/* One line of the comparison: a cluster's, or the job's. */
struct row {
	const char *name;
	double tasks;                    /* measured */
	long tasks_best, tasks_worst;    /* the model's balance */
	double tb, tw, tm;               /* time: predicted best, worst; measured */
	double eb, ew, em;               /* efficiency, the same */
};

static void text_row(FILE *out, const struct row *w)
{
	fprintf(out, "  %-16s %7.0f %7ld %9.2f %9.2f %9.2f %9.3f %6.1f%% %6.1f%% %6.1f%%\n", w->name, w->tasks,
		w->tasks_best, w->tb, w->tw, w->tm, w->tb > 0 ? w->tm / w->tb : 0, 100 * w->eb, 100 * w->ew, 100 * w->em);
}

static void json_row(FILE *json, const struct row *w)
{
	fputs("{\"name\":", json);
	json_str(json, w->name);
	fprintf(json, ",\"tasks_best\":%ld,\"tasks_worst\":%ld,\"tasks_measured\":%.0f,", w->tasks_best, w->tasks_worst,
		w->tasks);
	model_json_num(json, "time_best", w->tb, 1);
	model_json_num(json, "time_worst", w->tw, 1);
	model_json_num(json, "time_measured", w->tm, 1);
	model_json_num(json, "measured_over_best", w->tb > 0 ? w->tm / w->tb : NAN, 1);
	model_json_num(json, "measured_over_worst", w->tw > 0 ? w->tm / w->tw : NAN, 1);
	model_json_num(json, "efficiency_best", w->eb, 1);
	model_json_num(json, "efficiency_worst", w->ew, 1);
	model_json_num(json, "efficiency_measured", w->em, 0);
	fputc('}', json);
}

int predict_compare(const struct job *j, const struct prediction *p, const char *report, FILE *text, FILE *json)
{
	const struct model *m = &p->m;
	struct row rows[JOB_MAX_CLUSTERS + 1], *job = &rows[j->ncl];
	struct jsonr *rep;
	char err[512];
	double mcperf = 0;

	if ((rep = jsonr_read_file(report, err, sizeof(err))) == NULL) {
		if (text != NULL)
			fprintf(text, "mwlaunch: no measurement to set against the prediction: %s\n", err);
		if (json != NULL)
			fputs("null", json);
		return -1;
	}
	*job = (struct row){ .name = "job", .tasks_best = m->app.tasks, .tasks_worst = m->app.tasks,
			     .tb = p->r.time_best, .tw = p->r.time_worst, .tm = jsonr_num(jsonr_get(rep, "total_time"), 0),
			     .eb = p->r.efficiency_best, .ew = p->r.efficiency_worst };
	for (unsigned i = 0; i < j->ncl; i++) {
		const struct model_cluster_eval *ev = &p->r.cl[p->map[i]];
		struct measured me;

		measure(rep, &j->cl[i], &me);
		rows[i] = (struct row){ .name = j->cl[i].name, .tasks = me.tasks, .tasks_best = ev->workload_best,
					.tasks_worst = ev->workload_worst, .tb = ev->time_best, .tw = ev->time_worst,
					.tm = me.time, .eb = ev->efficiency_best, .ew = ev->efficiency_worst,
					.em = efficiency(me.tasks, m->app.oper, ev->cperf, me.time) };
		if (me.tasks > 0)
			mcperf += ev->cperf;
		job->tasks += me.tasks;
	}
	job->em = efficiency(job->tasks, m->app.oper, mcperf, job->tm);
	if (text != NULL) {
		fprintf(text, "\nmwlaunch: predicted (model %s) against measured, seconds from the first task sent:\n",
			p->path);
		fprintf(text, "  %-16s %7s %7s %9s %9s %9s %9s %7s %7s %7s\n", "cluster", "tasks", "model", "predicted",
			"(worst)", "measured", "meas/pred", "eff", "(worst)", "meas");
		for (unsigned i = 0; i <= j->ncl; i++)
			text_row(text, &rows[i]);
	}
	if (json != NULL) {
		fputs("{\"model\":", json);
		json_str(json, p->path);
		fputs(",\"clusters\":[", json);
		for (unsigned i = 0; i < j->ncl; i++) {
			if (i)
				fputc(',', json);
			json_row(json, &rows[i]);
		}
		fputs("],\"job\":", json);
		json_row(json, job);
		fputc('}', json);
	}
	jsonr_free(rep);
	return 0;
}
