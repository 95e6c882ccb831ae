/* modelout.c - the model's prediction as a report and as JSON (mwpredict,
 * mwlaunch --predict-only). */
#include <math.h>
#include <stdio.h>

#include "launcher/model.h"
#include "launcher/modelout.h"
#include "ldsd/json.h"

/* JSON has no infinity: an unreachable value is null. */
void model_json_num(FILE *out, const char *key, double v, int comma)
{
	if (isfinite(v))
		fprintf(out, "\"%s\":%.9g%s", key, v, comma ? "," : "");
	else
		fprintf(out, "\"%s\":null%s", key, comma ? "," : "");
}

static void json_cluster(FILE *out, const struct model_cluster *c, const struct model_cluster_eval *ev)
{
	fputs("{\"name\":", out);
	json_str(out, c->name);
	fprintf(out, ",\"main\":%s,\"workers\":%zu,\"grain\":%ld,", c->main ? "true" : "false", c->nworkers, c->grain);
	model_json_num(out, "cperf", ev->cperf, 1);
	model_json_num(out, "steady_performance", ev->steady, 1);
	fprintf(out, "\"bound\":\"%s\",", model_bound_names[ev->bound]);
	model_json_num(out, "startup", ev->startup, 1);
	model_json_num(out, "best_end", ev->best_end, 1);
	model_json_num(out, "worst_end", ev->worst_end, 1);
	model_json_num(out, "min_workload", ceil(ev->min_workload), 1);
	fprintf(out, "\"workload_best\":%ld,\"workload_worst\":%ld,", ev->workload_best, ev->workload_worst);
	model_json_num(out, "time_best", ev->time_best, 1);
	model_json_num(out, "time_worst", ev->time_worst, 1);
	model_json_num(out, "efficiency_best", ev->efficiency_best, 1);
	model_json_num(out, "efficiency_worst", ev->efficiency_worst, 0);
	fputc('}', out);
}

static void json_selection(FILE *out, const struct model *m, const struct model_selection *sel)
{
	fputs(",\"selection\":[", out);
	for (size_t c = 0; c < m->nclusters; c++) {
		int first = 1;

		fprintf(out, "%s{\"name\":", c ? "," : "");
		json_str(out, m->cl[c].name);
		fprintf(out, ",\"kept\":%zu,\"workers\":[", sel->kept[c]);
		for (size_t i = 0; i < m->cl[c].nworkers; i++) {
			fprintf(out, "%s{\"index\":%zu,\"perf\":%.9g,\"state\":\"%s\"}", first ? "" : ",", i, m->cl[c].perf[i],
				model_release_names[sel->state[c][i]]);
			first = 0;
		}
		fputs("]}", out);
	}
	fputc(']', out);
}

static void json_tuning(FILE *out, const struct model *m, const struct model_result *r, const struct model_tuning *t,
			size_t nt)
{
	fputs(",\"tuning\":[", out);
	for (size_t i = 0; i < nt; i++) {
		fprintf(out, "%s{\"name\":", i ? "," : "");
		json_str(out, m->cl[t[i].cluster].name);
		fprintf(out, ",\"grain_from\":%ld,\"grain_to\":%ld,\"kept_from\":%zu,\"kept_to\":%zu,", t[i].grain_from,
			t[i].grain_to, t[i].kept_from, t[i].kept_to);
		model_json_num(out, "time_worst_from", t[i].time_from, 1);
		model_json_num(out, "time_worst_to", t[i].time_to, 1);
		model_json_num(out, "efficiency_worst_from", t[i].efficiency_from, 1);
		model_json_num(out, "efficiency_worst_to", t[i].efficiency_to, 0);
		fputc('}', out);
	}
	fputs("],\"bottlenecks\":[", out);
	for (size_t c = 0, first = 1; c < m->nclusters; c++) {
		if (r->cl[c].bound == MODEL_BOUND_CPU)
			continue;
		fprintf(out, "%s{\"name\":", first ? "" : ",");
		json_str(out, m->cl[c].name);
		fprintf(out, ",\"bound\":\"%s\",", model_bound_names[r->cl[c].bound]);
		model_json_num(out, "bytes_per_task", model_bytes_per_task(&m->app, &m->cl[c], r->cl[c].bound), 1);
		model_json_num(out, "bytes_per_task_allowed",
			 model_bytes_allowed(&m->app, &m->cl[c], m->threshold, r->cl[c].bound), 0);
		fputc('}', out);
		first = 0;
	}
	fputc(']', out);
}

void model_print_json(FILE *out, const char *file, const struct model *in, const struct model *m,
		       const struct model_result *r, const struct model_selection *sel, const struct model_result *rin,
		       const struct model_tuning *t, size_t nt)
{
	fputs("{\"model\":", out);
	json_str(out, file);
	fprintf(out, ",\"threshold\":%.9g,\"tasks\":%ld,\"clusters\":[", m->threshold, m->app.tasks);
	for (size_t c = 0; c < m->nclusters; c++) {
		if (c)
			fputc(',', out);
		json_cluster(out, &m->cl[c], &r->cl[c]);
	}
	fputs("],\"multi\":{", out);
	model_json_num(out, "time_best", r->time_best, 1);
	model_json_num(out, "time_worst", r->time_worst, 1);
	model_json_num(out, "efficiency_best", r->efficiency_best, 1);
	model_json_num(out, "efficiency_worst", r->efficiency_worst, 0);
	fputc('}', out);
	if (sel)
		json_selection(out, in, sel);
	if (rin)
		json_tuning(out, in, rin, t, nt);
	fputs("}\n", out);
}

/* sep, then v in width.prec (prec < 0: 4 significant digits, for rates
 * from tasks/s to Gop/s), or "-" in its place where there is no value. */
static void cell(FILE *out, const char *sep, int width, int prec, double v, int ok)
{
	if (ok && isfinite(v) && prec < 0)
		fprintf(out, "%s%*.4g", sep, width, v);
	else if (ok && isfinite(v))
		fprintf(out, "%s%*.*f", sep, width, prec, v);
	else
		fprintf(out, "%s%*s", sep, width, "-");
}

void model_print_report(FILE *out, const char *file, const struct model *m, const struct model_result *r)
{
	const struct model_app *a = &m->app;

	fprintf(out, "model %s: %ld tasks of %.4g op, %.4g + %.4g bytes; efficiency threshold %.2f\n\n", file, a->tasks,
		a->oper, a->task_bytes, a->result_bytes, m->threshold);
	fprintf(out, "%-12s %4s %5s %11s %11s %-8s %9s %9s %9s %9s %15s %21s %13s\n", "cluster", "wkrs", "grain", "CPerf op/s",
		"steady op/s", "bound", "startup", "end best", "end worst", "min tasks", "tasks best/wst", "time best/worst (s)",
		"eff best/wst");
	for (size_t c = 0; c < m->nclusters; c++) {
		const struct model_cluster_eval *ev = &r->cl[c];
		int used = m->cl[c].nworkers > 0;

		fprintf(out, "%-12.12s %4zu %5ld ", m->cl[c].name, m->cl[c].nworkers, m->cl[c].grain);
		cell(out, "", 11, -1, ev->cperf, used);
		cell(out, " ", 11, -1, ev->steady, used);
		fprintf(out, " %-8s", used ? model_bound_names[ev->bound] : "-");
		cell(out, " ", 9, 3, ev->startup, used);
		cell(out, " ", 9, 3, ev->best_end, used);
		cell(out, " ", 9, 3, ev->worst_end, used);
		cell(out, " ", 9, 0, ceil(ev->min_workload), used);
		fprintf(out, " %7ld/%-7ld", ev->workload_best, ev->workload_worst);
		cell(out, " ", 10, 2, ev->time_best, ev->workload_best > 0);
		cell(out, "/", -10, 2, ev->time_worst, ev->workload_worst > 0);
		cell(out, " ", 5, 1, 100 * ev->efficiency_best, ev->workload_best > 0);
		cell(out, "%/", 5, 1, 100 * ev->efficiency_worst, ev->workload_worst > 0);
		fputc('%', out);
		fputc('\n', out);
	}
	fprintf(out, "\nmulti-cluster: time %.2f s (best) .. %.2f s (worst), efficiency %.1f%% .. %.1f%%\n", r->time_best,
		r->time_worst, 100 * r->efficiency_best, 100 * r->efficiency_worst);
	/* The Local Cluster Analysis verdicts (section 4.3). */
	for (size_t c = 0; c < m->nclusters; c++) {
		const struct model_cluster_eval *ev = &r->cl[c];

		if (!m->cl[c].main || m->cl[c].nworkers == 0)
			continue;
		if (ev->bound != MODEL_BOUND_CPU)
			fprintf(out, "local cluster %s is communication bound (%s): external clusters cannot speed it up; "
				"see --tune\n", m->cl[c].name, model_bound_names[ev->bound]);
		else if (ev->min_workload > (double)a->tasks)
			fprintf(out, "local cluster %s needs at least %.0f tasks to reach the threshold with all its "
				"computers; see --select\n", m->cl[c].name, ceil(ev->min_workload));
	}
	for (size_t c = 0; c < m->nclusters; c++) {
		const struct model_cluster_eval *ev = &r->cl[c];

		if (m->cl[c].nworkers == 0 || ev->workload_worst >= ev->min_workload * (1 - 1e-9))
			continue;
		if (isinf(ev->min_workload))
			fprintf(out, "%s: below the threshold whatever its workload: its links feed %.1f%% of its "
				"computers (see --select, --tune)\n", m->cl[c].name, 100 * ev->steady / ev->cperf);
		else
			fprintf(out, "%s: below the threshold in the worst case: %ld tasks < minimum %.0f (see "
				"--select)\n", m->cl[c].name, ev->workload_worst, ceil(ev->min_workload));
	}
}

void model_print_selection(FILE *out, const struct model *m, const struct model_selection *sel)
{
	fprintf(out, "selection for efficiency >= %.2f in every cluster:\n", m->threshold);
	for (size_t c = 0; c < m->nclusters; c++) {
		const char *sep = " releases";

		fprintf(out, "  %s: keeps %zu of %zu%s", m->cl[c].name, sel->kept[c], m->cl[c].nworkers,
			sel->kept[c] ? ":" : "");
		for (size_t i = 0; i < m->cl[c].nworkers; i++)
			if (sel->state[c][i] == MODEL_KEPT)
				fprintf(out, " %s[%zu]", m->cl[c].name, i);
		for (size_t i = 0; i < m->cl[c].nworkers; i++) {
			if (sel->state[c][i] == MODEL_KEPT)
				continue;
			fprintf(out, ";%s %s[%zu] (%s)", sep, m->cl[c].name, i,
				sel->state[c][i] == MODEL_RELEASED_STEADY ? "links saturated" : "too little work");
			sep = "";
		}
		fputc('\n', out);
	}
	fputc('\n', out);
}

void model_print_tuning(FILE *out, const struct model *m, const struct model_result *r, const struct model_tuning *t,
			 size_t nt)
{
	fprintf(out, "\napplication tuning:\n");
	for (size_t i = 0; i < nt; i++)
		fprintf(out, "  %s: grain %ld -> %ld: keeps %zu -> %zu computers, worst time %.2f -> %.2f s, "
			"efficiency %.1f%% -> %.1f%%\n", m->cl[t[i].cluster].name, t[i].grain_from, t[i].grain_to,
			t[i].kept_from, t[i].kept_to, t[i].time_from, t[i].time_to, 100 * t[i].efficiency_from,
			100 * t[i].efficiency_to);
	if (nt == 0)
		fprintf(out, "  no change of an inter-cluster grain shortens the run\n");
	for (size_t c = 0; c < m->nclusters; c++) {
		enum model_bound b = r->cl[c].bound;
		double allowed = model_bytes_allowed(&m->app, &m->cl[c], m->threshold, b);
		double now = model_bytes_per_task(&m->app, &m->cl[c], b);

		/* Only where the link, not the CPU, keeps computers out. */
		if (b == MODEL_BOUND_CPU || m->cl[c].nworkers == 0 || now <= allowed)
			continue;
		fprintf(out, "  %s is %s bound: to use all %zu computers at the threshold, at most %.4g bytes per task "
			"may cross %s (now %.4g)\n", m->cl[c].name, model_bound_names[b], m->cl[c].nworkers, allowed,
			b == MODEL_BOUND_LAN ? "the LAN (task + result)" : "that Internet direction", now);
	}
}
