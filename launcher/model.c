/*
 * model.c - the analytical model (thesis ch. 3) and the methodology's
 * selection and tuning steps (ch. 4); see model.h and docs/model.md.
 */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "model.h"

const char *const model_bound_names[] = { "cpu", "lan", "inet_in", "inet_out" };
const char *const model_release_names[] = { "kept", "steady", "workload" };

/* Relative slack for comparisons of sums of doubles. */
#define EPS 1e-9

/* bytes / tput, a transfer time; a link that moves no bytes takes no time. */
static double xfer(double bytes, double tput)
{
	return bytes > 0 ? bytes / tput : 0.0;
}

/* Oper per `bytes` over a link of `tput`: the op/s the link can feed. */
static double feed(double oper, double bytes, double tput)
{
	return bytes > 0 ? oper * tput / bytes : INFINITY;
}

double model_pipeline_wait(size_t nworkers, long grain, double t_inter, double t_lan)
{
	double sum = 0;

	if (nworkers == 0)
		return 0;
	for (size_t i = 0; i < nworkers; i++)
		sum += (double)(i / (size_t)grain + 1) * t_inter + (double)(i % (size_t)grain + 1) * t_lan;
	return sum / (double)nworkers;
}

double model_cperf(const struct model_cluster *c)
{
	double s = 0;

	for (size_t i = 0; i < c->nworkers; i++)
		s += c->perf[i];
	return s;
}

double model_steady(const struct model_app *a, const struct model_cluster *c, enum model_bound *bound)
{
	double lim[4];
	enum model_bound b = MODEL_BOUND_CPU;

	lim[MODEL_BOUND_CPU] = model_cperf(c);
	lim[MODEL_BOUND_LAN] = feed(a->oper, a->task_bytes + a->result_bytes, c->lan);
	lim[MODEL_BOUND_INET_IN] = c->main ? INFINITY : feed(a->oper * (double)c->grain, c->inter_task_bytes, c->inet_in);
	lim[MODEL_BOUND_INET_OUT] = c->main ? INFINITY : feed(a->oper * (double)c->grain, c->inter_result_bytes, c->inet_out);
	/* Strictly smaller: on a tie the cluster counts as computation bound. */
	for (int i = 1; i < 4; i++)
		if (lim[i] < lim[b])
			b = (enum model_bound)i;
	if (bound)
		*bound = b;
	return lim[b];
}

double model_comm_limit(const struct model_app *a, const struct model_cluster *c)
{
	struct model_cluster nocpu = *c;

	/* A single infinitely fast worker leaves the links as the only limit. */
	nocpu.nworkers = 1;
	nocpu.perf[0] = INFINITY;
	return model_steady(a, &nocpu, NULL);
}

double model_startup(const struct model_app *a, const struct model_cluster *c)
{
	double tc_task = xfer(a->task_bytes, c->lan);

	if (c->main)
		return model_pipeline_wait(c->nworkers, 1, tc_task, 0);
	return model_pipeline_wait(c->nworkers, c->grain, xfer(c->inter_task_bytes, c->inet_in), tc_task);
}

double model_best_end(const struct model_app *a, const struct model_cluster *c)
{
	double tc_result = xfer(a->result_bytes, c->lan);

	if (c->main)
		return model_pipeline_wait(c->nworkers, 1, tc_result, 0);
	return model_pipeline_wait(c->nworkers, c->grain, xfer(c->inter_result_bytes, c->inet_out), tc_result);
}

double model_worst_end(const struct model_app *a, const struct model_cluster *c)
{
	double tc_result = xfer(a->result_bytes, c->lan);
	double tc_inet = c->main ? 0 : xfer(c->inter_result_bytes, c->inet_out);
	double w = (double)c->nworkers, slowest = INFINITY, fastest = 0, sum = 0, comp, comm;
	enum model_bound bound;

	if (c->nworkers == 0)
		return 0;
	for (size_t i = 0; i < c->nworkers; i++) {
		slowest = fmin(slowest, c->perf[i]);
		fastest = fmax(fastest, c->perf[i]);
		sum += a->oper / c->perf[i];
	}
	if (a->reassign)    /* eq. 43, 50, 55: all but the best worker waste one task */
		comp = tc_result + (sum - a->oper / fastest) / w + tc_inet;
	else                /* eq. 39, 49, 54: the last task on the slowest worker */
		comp = a->oper / slowest * (w - 1) / w + tc_result + tc_inet;
	model_steady(a, c, &bound);
	if (bound == MODEL_BOUND_CPU)
		return comp;
	if (c->main)        /* eq. 44 */
		comm = w * tc_result;
	else                /* eq. 51 (grain 1) and 56 */
		comm = (double)c->grain * tc_result + ceil(w / (double)c->grain) * tc_inet;
	return fmax(comp, comm);
}

double model_min_workload_ops(double startup, double worst_end, double steady, double cperf, double threshold)
{
	double need = cperf * threshold;

	if (!(steady > need))
		return INFINITY;
	return (startup + worst_end) * steady * need / (steady - need);
}

void model_cluster_evaluate(const struct model_app *a, const struct model_cluster *c, double threshold,
			    struct model_cluster_eval *ev)
{
	memset(ev, 0, sizeof(*ev));
	ev->bound = MODEL_BOUND_CPU;
	if (c->nworkers == 0) {
		ev->min_workload = INFINITY;
		return;
	}
	ev->cperf = model_cperf(c);
	ev->steady = model_steady(a, c, &ev->bound);
	ev->startup = model_startup(a, c);
	ev->best_end = model_best_end(a, c);
	ev->worst_end = model_worst_end(a, c);
	ev->min_workload = model_min_workload_ops(ev->startup, ev->worst_end, ev->steady, ev->cperf, threshold) / a->oper;
}

double model_balance(size_t n, const double *steady, const double *overhead, long tasks, double oper, double *w)
{
	bool in[MODEL_MAX_CLUSTERS];
	double t = INFINITY;

	for (size_t i = 0; i < n; i++) {
		in[i] = steady[i] > 0;
		w[i] = 0;
	}
	/* Each round either settles or drops one cluster: at most n + 1 rounds. */
	for (size_t round = 0; round <= n; round++) {
		double sp = 0, so = 0;
		size_t drop = n;

		for (size_t i = 0; i < n; i++) {
			if (in[i]) {
				sp += steady[i];
				so += overhead[i] * steady[i];
			}
		}
		if (sp == 0)
			return INFINITY;
		/* sum_i (T - O_i) * P_i / Oper = Tasks, solved for T. */
		t = ((double)tasks * oper + so) / sp;
		for (size_t i = 0; i < n; i++)
			if (in[i] && overhead[i] > t && (drop == n || overhead[i] > overhead[drop]))
				drop = i;
		if (drop == n)
			break;
		in[drop] = false;
	}
	for (size_t i = 0; i < n; i++)
		w[i] = in[i] ? (t - overhead[i]) * steady[i] / oper : 0;
	return t;
}

void model_round(size_t n, const double *w, const long *grain, size_t sink, long tasks, long *out)
{
	long sum = 0;

	for (size_t i = 0; i < n; i++) {
		out[i] = i == sink ? 0 : lround(w[i] / (double)grain[i]) * grain[i];
		sum += out[i];
	}
	out[sink] = tasks - sum;
	while (out[sink] < 0) {
		size_t big = sink;

		for (size_t i = 0; i < n; i++)
			if (i != sink && out[i] > 0 && (big == sink || out[i] > out[big]))
				big = i;
		out[big] -= grain[big];
		out[sink] += grain[big];
	}
}

/* The latest end time of the clusters with work, and which one it is. */
static double slowest(size_t n, const double *base, const double *per_task, const long *out, size_t *which)
{
	double t = 0;

	*which = n;
	for (size_t i = 0; i < n; i++) {
		double ti = out[i] > 0 ? base[i] + (double)out[i] * per_task[i] : 0;

		if (*which == n || ti > t) {
			t = ti;
			*which = i;
		}
	}
	return t;
}

/* The slowest end time if g tasks moved from cluster `from` to `to`
 * (INFINITY if they cannot, or if that took `from` below a minimum
 * workload it met); out[] is left as it was. */
static double moved(size_t n, const double *base, const double *per_task, const double *keep, long *out, size_t from,
		    size_t to, long g)
{
	size_t w;
	double t;

	if (out[from] < g || per_task[to] <= 0 ||
	    (keep != NULL && (double)out[from] >= keep[from] && (double)(out[from] - g) < keep[from]))
		return INFINITY;
	out[from] -= g;
	out[to] += g;
	t = slowest(n, base, per_task, out, &w);
	out[from] += g;
	out[to] -= g;
	return t;
}

void model_round_fastest(size_t n, const long *grain, size_t sink, const double *base, const double *per_task,
			 const double *keep, long *out)
{
	/* Each step strictly shortens the slowest end; the cap only bounds
	 * the work on huge task counts. */
	for (size_t step = 0; step < 64 * n; step++) {
		size_t s, from, to = n;
		double t = slowest(n, base, per_task, out, &s), best = t;

		/* The slowest gives a grain to the sink; or, if the sink is the
		 * slowest, a grain goes to whichever cluster then ends the run
		 * earliest. */
		from = s;
		if (s != sink && moved(n, base, per_task, keep, out, s, sink, grain[s]) < t)
			to = sink;
		for (size_t k = 0; s == sink && k < n; k++) {
			double tk = k == sink ? INFINITY : moved(n, base, per_task, keep, out, sink, k, grain[k]);

			if (tk < best) {
				best = tk;
				to = k;
			}
		}
		if (to == n)
			return;
		out[from] -= grain[s == sink ? to : s];
		out[to] += grain[s == sink ? to : s];
	}
}

/* The cluster that takes the rounding remainder: the finest grain among
 * those with work, then the main cluster, then the largest share. */
static size_t pick_sink(const struct model *m, const double *w)
{
	size_t s = m->nclusters;

	for (size_t i = 0; i < m->nclusters; i++) {
		const struct model_cluster *c = &m->cl[i];

		if (w[i] <= 0)
			continue;
		if (s == m->nclusters || c->grain < m->cl[s].grain ||
		    (c->grain == m->cl[s].grain && (c->main > m->cl[s].main ||
						      (c->main == m->cl[s].main && w[i] > w[s]))))
			s = i;
	}
	return s;
}

/* One balance (best or worst ends) into the workload/time/efficiency fields. */
static void predict_case(const struct model *m, struct model_result *r, bool worst)
{
	double steady[MODEL_MAX_CLUSTERS], overhead[MODEL_MAX_CLUSTERS], w[MODEL_MAX_CLUSTERS];
	double per_task[MODEL_MAX_CLUSTERS], keep[MODEL_MAX_CLUSTERS];
	long grain[MODEL_MAX_CLUSTERS], out[MODEL_MAX_CLUSTERS] = { 0 };
	double tmax = 0, mcperf = 0, ops = (double)m->app.tasks * m->app.oper;
	size_t sink;

	for (size_t i = 0; i < m->nclusters; i++) {
		const struct model_cluster_eval *ev = &r->cl[i];

		steady[i] = ev->steady;
		overhead[i] = ev->startup + (worst ? ev->worst_end : ev->best_end);
		grain[i] = m->cl[i].grain;
		per_task[i] = ev->steady > 0 ? m->app.oper / ev->steady : 0;
		keep[i] = ev->min_workload;
	}
	model_balance(m->nclusters, steady, overhead, m->app.tasks, m->app.oper, w);
	sink = pick_sink(m, w);
	if (sink < m->nclusters) {
		model_round(m->nclusters, w, grain, sink, m->app.tasks, out);
		model_round_fastest(m->nclusters, grain, sink, overhead, per_task, keep, out);
	}
	for (size_t i = 0; i < m->nclusters; i++) {
		struct model_cluster_eval *ev = &r->cl[i];
		double t = 0, eff = 0;

		if (out[i] > 0) {
			double work = (double)out[i] * m->app.oper;

			t = ev->startup + work / ev->steady + (worst ? ev->worst_end : ev->best_end);
			eff = work / ev->cperf / t;
			mcperf += ev->cperf;
			tmax = fmax(tmax, t);
		}
		if (worst) {
			ev->workload_worst = out[i];
			ev->time_worst = t;
			ev->efficiency_worst = eff;
		} else {
			ev->workload_best = out[i];
			ev->time_best = t;
			ev->efficiency_best = eff;
		}
	}
	if (worst) {
		r->time_worst = tmax;
		r->efficiency_worst = tmax > 0 ? ops / mcperf / tmax : 0;
	} else {
		r->time_best = tmax;
		r->efficiency_best = tmax > 0 ? ops / mcperf / tmax : 0;
	}
}

void model_predict(const struct model *m, struct model_result *r)
{
	memset(r, 0, sizeof(*r));
	r->nclusters = m->nclusters;
	for (size_t i = 0; i < m->nclusters; i++)
		model_cluster_evaluate(&m->app, &m->cl[i], m->threshold, &r->cl[i]);
	predict_case(m, r, false);
	predict_case(m, r, true);
}

/* ---- selection ------------------------------------------------------------ */

/* Removes worker k of cluster c (the kept set stays in input order). */
static void drop_worker(struct model_cluster *c, size_t k)
{
	memmove(&c->perf[k], &c->perf[k + 1], (c->nworkers - k - 1) * sizeof(c->perf[0]));
	memmove(&c->index[k], &c->index[k + 1], (c->nworkers - k - 1) * sizeof(c->index[0]));
	c->nworkers--;
}

/* Eq. 60 for one cluster: keep, fastest first, what the links can feed at
 * the threshold; a computer that would overflow is skipped, so a slower one
 * may still fit. */
static void select_steady(const struct model_app *a, double threshold, struct model_cluster *c,
			  enum model_release *state)
{
	double cap = model_comm_limit(a, c) / threshold, sum = 0;
	bool keep[MODEL_MAX_WORKERS] = { false };

	if (model_cperf(c) <= cap * (1 + EPS))
		return;
	for (size_t n = 0; n < c->nworkers; n++) {
		size_t best = c->nworkers;

		for (size_t i = 0; i < c->nworkers; i++)
			if (!keep[i] && state[c->index[i]] == MODEL_KEPT && (best == c->nworkers || c->perf[i] > c->perf[best]))
				best = i;
		if (best == c->nworkers)
			break;
		if (sum + c->perf[best] <= cap * (1 + EPS)) {
			keep[best] = true;
			sum += c->perf[best];
		} else {
			state[c->index[best]] = MODEL_RELEASED_STEADY;
		}
	}
	for (size_t i = c->nworkers; i-- > 0;)
		if (!keep[i])
			drop_worker(c, i);
}

void model_select(const struct model *m, struct model *out, struct model_selection *sel)
{
	struct model_result r;
	size_t total = 0;

	*out = *m;
	memset(sel, 0, sizeof(*sel));
	for (size_t c = 0; c < m->nclusters; c++) {
		total += m->cl[c].nworkers;
		select_steady(&m->app, m->threshold, &out->cl[c], sel->state[c]);
	}
	/* Resources adjustment: each round releases one computer. */
	for (size_t round = 0; round <= total; round++) {
		size_t worst = m->nclusters, slow = 0;
		double worst_score = INFINITY;

		model_predict(out, &r);
		for (size_t c = 0; c < out->nclusters; c++) {
			double have = (double)r.cl[c].workload_worst, need = r.cl[c].min_workload, score;

			if (out->cl[c].nworkers == 0 || have >= need * (1 - EPS))
				continue;
			score = isinf(need) ? 0 : have / need;
			if (score < worst_score) {
				worst_score = score;
				worst = c;
			}
		}
		if (worst == m->nclusters)
			break;
		for (size_t i = 1; i < out->cl[worst].nworkers; i++)
			if (out->cl[worst].perf[i] < out->cl[worst].perf[slow])
				slow = i;
		sel->state[worst][out->cl[worst].index[slow]] = MODEL_RELEASED_WORKLOAD;
		drop_worker(&out->cl[worst], slow);
	}
	for (size_t c = 0; c < out->nclusters; c++)
		sel->kept[c] = out->cl[c].nworkers;
}

/* ---- tuning ----------------------------------------------------------------- */

struct trial {
	long grain;
	size_t kept;
	double time, efficiency;
};

/* Selection and prediction for m with cluster c at grain n. */
static void try_grain(const struct model *m, size_t c, long n, struct trial *t)
{
	struct model tuned = *m, chosen;
	struct model_selection sel;
	struct model_result r;
	struct model_cluster *cl = &tuned.cl[c];
	double scale = (double)n / (double)cl->grain;

	cl->inter_task_bytes *= pow(scale, m->app.task_growth);
	cl->inter_result_bytes *= pow(scale, m->app.result_growth);
	cl->grain = n;
	model_select(&tuned, &chosen, &sel);
	model_predict(&chosen, &r);
	t->grain = n;
	t->kept = sel.kept[c];
	t->time = r.time_worst > 0 ? r.time_worst : INFINITY;
	t->efficiency = r.efficiency_worst;
}

static bool better(const struct trial *a, const struct trial *b, long current)
{
	if (a->time < b->time * (1 - EPS))
		return true;
	if (a->time > b->time * (1 + EPS))
		return false;
	if (a->kept != b->kept)
		return a->kept > b->kept;
	return labs(a->grain - current) < labs(b->grain - current);
}

size_t model_tune(const struct model *m, struct model_tuning *out, size_t max)
{
	size_t n = 0;
	long top = m->app.tasks < MODEL_MAX_GRAIN ? m->app.tasks : MODEL_MAX_GRAIN;

	for (size_t c = 0; c < m->nclusters && n < max; c++) {
		struct trial base, best, t;

		if (m->cl[c].main)
			continue;
		try_grain(m, c, m->cl[c].grain, &base);
		best = base;
		for (long g = 1; g <= top; g++) {
			try_grain(m, c, g, &t);
			if (better(&t, &best, m->cl[c].grain))
				best = t;
		}
		if (best.grain == base.grain)
			continue;
		out[n++] = (struct model_tuning){
			.cluster = c,
			.grain_from = base.grain, .grain_to = best.grain,
			.kept_from = base.kept, .kept_to = best.kept,
			.time_from = base.time, .time_to = best.time,
			.efficiency_from = base.efficiency, .efficiency_to = best.efficiency,
		};
	}
	return n;
}

double model_bytes_allowed(const struct model_app *a, const struct model_cluster *c, double threshold,
			   enum model_bound bound)
{
	double need = model_cperf(c) * threshold;

	switch (bound) {
	case MODEL_BOUND_LAN:
		return a->oper * c->lan / need;
	case MODEL_BOUND_INET_IN:
		return a->oper * c->inet_in / need;
	case MODEL_BOUND_INET_OUT:
		return a->oper * c->inet_out / need;
	case MODEL_BOUND_CPU:
		break;
	}
	return INFINITY;
}

double model_bytes_per_task(const struct model_app *a, const struct model_cluster *c, enum model_bound bound)
{
	switch (bound) {
	case MODEL_BOUND_LAN:
		return a->task_bytes + a->result_bytes;
	case MODEL_BOUND_INET_IN:
		return c->inter_task_bytes / (double)c->grain;
	case MODEL_BOUND_INET_OUT:
		return c->inter_result_bytes / (double)c->grain;
	case MODEL_BOUND_CPU:
		break;
	}
	return 0;
}
