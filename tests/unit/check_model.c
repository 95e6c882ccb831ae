/*
 * check_model.c - the analytical model (launcher/model.c) against cases
 * computed by hand, each step written out next to its assertion, and the
 * model file reader (launcher/modelconf.c).
 *
 * The extracted thesis has no worked numbers for chapters 3-4 (chapter 5
 * is missing), so every expected value here is derived from the formulas
 * as docs/model.md states them.
 */
#include <check.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/model.h"
#include "launcher/modelconf.h"
#include "suites.h"

#define NEAR(a, b) ck_assert_double_eq_tol((a), (b), 1e-9 * fmax(1.0, fabs((double)(b))))

/* Large: static, filled per test. */
static struct model m, sel_out;
static struct model_result r;
static struct model_selection sel;

static struct model_cluster *cluster(size_t i, const char *name, bool is_main, double lan, size_t n,
				     const double *perf)
{
	struct model_cluster *c = &m.cl[i];

	memset(c, 0, sizeof(*c));
	snprintf(c->name, sizeof(c->name), "%s", name);
	c->main = is_main;
	c->lan = lan;
	c->grain = 1;
	c->nworkers = n;
	for (size_t k = 0; k < n; k++) {
		c->perf[k] = perf[k];
		c->index[k] = (int)k;
	}
	if (m.nclusters <= i)
		m.nclusters = i + 1;
	return c;
}

static void remote(struct model_cluster *c, double in, double out, long grain, double task, double result)
{
	c->inet_in = in;
	c->inet_out = out;
	c->grain = grain;
	c->inter_task_bytes = task;
	c->inter_result_bytes = result;
}

static void app(long tasks, double oper, double task, double result)
{
	memset(&m, 0, sizeof(m));
	m.threshold = 0.9;
	m.app = (struct model_app){ .tasks = tasks, .oper = oper, .task_bytes = task, .result_bytes = result,
				    .task_growth = 1, .result_growth = 1 };
}

START_TEST(test_pipeline_wait)
{
	/* W = 4, one group: (1 + 2 + 3 + 4) / 4 = 2.5 transfers. */
	NEAR(model_pipeline_wait(4, 1, 1.0, 0), 2.5);
	/* W = 5, N = 2, t_inter = 10, t_lan = 1: groups 1,1,2,2,3, positions
	 * 1,2,1,2,1: 11 + 12 + 21 + 22 + 31 = 97; / 5 = 19.4. */
	NEAR(model_pipeline_wait(5, 2, 10.0, 1.0), 19.4);
	NEAR(model_pipeline_wait(0, 1, 1.0, 1.0), 0);
}
END_TEST

/* Local cluster, computation bound. */
START_TEST(test_local_cpu_bound)
{
	struct model_cluster_eval ev;
	struct model_cluster *c;

	app(100, 1e6, 1000, 500);
	c = cluster(0, "local", true, 1e6, 3, (double[]){ 2e6, 2e6, 1e6 });
	/* CPerf = 2e6 + 2e6 + 1e6 = 5e6 op/s.  LAN feeds Oper * TPut / S_Comm
	 * = 1e6 * 1e6 / 1500 = 6.67e8 op/s > 5e6: CPU bound, Perf_Ste = 5e6. */
	model_cluster_evaluate(&m.app, c, 0.9, &ev);
	NEAR(ev.cperf, 5e6);
	NEAR(ev.steady, 5e6);
	ck_assert_int_eq(ev.bound, MODEL_BOUND_CPU);
	/* Eq. 12: Tc_Task = 1000 / 1e6 = 1e-3 s; T_Up = 1e-3 * (3 + 1) / 2 = 2e-3. */
	NEAR(ev.startup, 2e-3);
	/* Eq. 37: Tc_Result = 500 / 1e6 = 5e-4; T_BestEnd = 5e-4 * 4 / 2 = 1e-3. */
	NEAR(ev.best_end, 1e-3);
	/* Eq. 39: Tp_TaskWorst = 1e6 / 1e6 = 1 s; 1 * 2 / 3 + 5e-4 = 0.66716667. */
	NEAR(ev.worst_end, 2.0 / 3 + 5e-4);
	/* Eq. 59 (P = C): (2e-3 + 0.66716667) * 5e6 * 0.9 / 0.1 = 30112500 op
	 * = 30.1125 tasks. */
	NEAR(ev.min_workload, 30.1125);

	/* Eq. 43 with reassignment: task times 0.5, 0.5, 1; all but the best
	 * (0.5) wasted: (0.5 + 1) / 3 = 0.5; + 5e-4. */
	m.app.reassign = true;
	NEAR(model_worst_end(&m.app, c), 0.5005);
	m.app.reassign = false;

	/* The whole run, one cluster, 100 tasks: T_Ste = 100 * 1e6 / 5e6 = 20 s. */
	model_predict(&m, &r);
	ck_assert_int_eq(r.cl[0].workload_best, 100);
	ck_assert_int_eq(r.cl[0].workload_worst, 100);
	NEAR(r.cl[0].time_best, 2e-3 + 20 + 1e-3);
	NEAR(r.cl[0].time_worst, 2e-3 + 20 + 2.0 / 3 + 5e-4);
	/* Eq. 7: T_Best = 20 s (eq. 6); 20 / 20.003 and 20 / 20.66916667. */
	NEAR(r.cl[0].efficiency_best, 20 / 20.003);
	NEAR(r.cl[0].efficiency_worst, 20 / (20.0025 + 2.0 / 3));
	NEAR(r.time_worst, r.cl[0].time_worst);
	NEAR(r.efficiency_worst, r.cl[0].efficiency_worst);
}
END_TEST

/* The minimum workload is where the worst efficiency crosses the threshold. */
START_TEST(test_min_workload_threshold)
{
	app(31, 1e6, 1000, 500);
	cluster(0, "local", true, 1e6, 3, (double[]){ 2e6, 2e6, 1e6 });
	/* 30.1125 tasks is the minimum (test_local_cpu_bound): 31 tasks reach
	 * 0.9, 30 do not.  31: T_Best = 6.2, T_Ex = 6.2 + 0.66916667 = 6.86916667. */
	model_predict(&m, &r);
	NEAR(r.cl[0].efficiency_worst, 6.2 / (6.2 + 2e-3 + 2.0 / 3 + 5e-4));
	ck_assert(r.cl[0].efficiency_worst >= 0.9);
	m.app.tasks = 30;
	model_predict(&m, &r);
	ck_assert(r.cl[0].efficiency_worst < 0.9);
	/* At exactly 30.1125 tasks the efficiency is the threshold:
	 * T_Best = 6.0225; T_Ex = 2e-3 + 6.0225 + 0.66716667 = 6.69166667. */
	NEAR(6.0225 / (2e-3 + 6.0225 + 2.0 / 3 + 5e-4), 0.9);
	/* Eq. 58, P < C: (1 + 1) * 2e6 * 1.8e6 / (2e6 - 1.8e6) = 3.6e7 op. */
	NEAR(model_min_workload_ops(1, 1, 2e6, 4e6, 0.45), 3.6e7);
	/* Eq. 60 not met (P <= C * E): no workload is enough. */
	ck_assert(isinf(model_min_workload_ops(1, 1, 2e6, 4e6, 0.5)));
}
END_TEST

/* Local cluster, LAN bound. */
START_TEST(test_local_lan_bound)
{
	struct model_cluster_eval ev;
	struct model_cluster *c;

	app(100, 1e6, 1000, 4000);
	c = cluster(0, "local", true, 1e4, 4, (double[]){ 1e6, 1e6, 1e6, 1e6 });
	/* LAN: 1e6 * 1e4 / (1000 + 4000) = 2e6 op/s < CPerf 4e6: LAN bound. */
	model_cluster_evaluate(&m.app, c, 0.45, &ev);
	NEAR(ev.steady, 2e6);
	ck_assert_int_eq(ev.bound, MODEL_BOUND_LAN);
	/* Tc_Task = 0.1 s: T_Up = 0.1 * 5 / 2 = 0.25.  Tc_Result = 0.4 s:
	 * T_BestEnd = 0.4 * 5 / 2 = 1.0. */
	NEAR(ev.startup, 0.25);
	NEAR(ev.best_end, 1.0);
	/* Worst: eq. 39 gives 1 * 3 / 4 + 0.4 = 1.15; eq. 44 gives 4 * 0.4 =
	 * 1.6; communication bound: the larger, 1.6. */
	NEAR(ev.worst_end, 1.6);
	/* Eq. 58 at 0.45: (0.25 + 1.6) * 2e6 * 1.8e6 / (2e6 - 1.8e6) = 3.33e7 op = 33.3 tasks. */
	NEAR(ev.min_workload, 33.3);
	/* Eq. 60: at 0.9 the LAN can never keep 90 % of 4e6 busy. */
	model_cluster_evaluate(&m.app, c, 0.9, &ev);
	ck_assert(isinf(ev.min_workload));
	/* All four computers need S_Comm <= 1e6 * 1e4 / (4e6 * 0.9) = 2777.8 bytes. */
	NEAR(model_bytes_allowed(&m.app, c, 0.9, MODEL_BOUND_LAN), 1e10 / 3.6e6);
}
END_TEST

/* Remote cluster, one-to-one, bound by the incoming and the outgoing Internet. */
START_TEST(test_remote_one_to_one_inet)
{
	struct model_cluster_eval ev;
	struct model_cluster *c;

	app(100, 1e6, 1000, 200);
	c = cluster(0, "far", false, 1e6, 2, (double[]){ 1e6, 1e6 });
	remote(c, 1e3, 1e4, 1, 1000, 200);
	/* Limits: CPU 2e6; LAN 1e6 * 1e6 / 1200 = 8.3e8; in 1e6 * 1e3 / 1000 =
	 * 1e6; out 1e6 * 1e4 / 200 = 5e7.  Internet-in bound at 1e6. */
	model_cluster_evaluate(&m.app, c, 0.9, &ev);
	NEAR(ev.steady, 1e6);
	ck_assert_int_eq(ev.bound, MODEL_BOUND_INET_IN);
	/* Eq. 18: Tc_TaskMSM = 1000 / 1e3 = 1 s, Tc_TaskSC = 1e-3:
	 * 1 * (2 + 1) / 2 + 1e-3 = 1.501. */
	NEAR(ev.startup, 1.501);
	/* Eq. 45 (re-derived 47): Tc_ResultSMM = 200 / 1e4 = 0.02, Tc_ResultSC
	 * = 2e-4: 2e-4 + 0.02 * (2 + 1) / 2 = 0.0302. */
	NEAR(ev.best_end, 0.0302);
	/* Eq. 49: 1 * 1 / 2 + 2e-4 + 0.02 = 0.5202; eq. 51: 2e-4 + 2 * 0.02 =
	 * 0.0402; communication bound: the larger. */
	NEAR(ev.worst_end, 0.5202);
	/* Eq. 60: 1e6 / 2e6 = 0.5 < 0.9: unreachable. */
	ck_assert(isinf(ev.min_workload));
	/* Per task at most 1e6 * 1e3 / (2e6 * 0.9) = 555.6 bytes may come in. */
	NEAR(model_bytes_allowed(&m.app, c, 0.9, MODEL_BOUND_INET_IN), 1e9 / 1.8e6);

	/* Outgoing: in 1e5 (limit 1e8), out 100: 1e6 * 100 / 200 = 5e5. */
	remote(c, 1e5, 100, 1, 1000, 200);
	NEAR(model_steady(&m.app, c, &ev.bound), 5e5);
	ck_assert_int_eq(ev.bound, MODEL_BOUND_INET_OUT);
	/* Eq. 49: 0.5 + 2e-4 + 200 / 100 = 2.5002; eq. 51: 2e-4 + 2 * 2 = 4.0002. */
	NEAR(model_worst_end(&m.app, c), 4.0002);
}
END_TEST

/* Remote cluster, one-to-many (grain 2, three workers). */
START_TEST(test_remote_one_to_many)
{
	struct model_cluster_eval ev;
	struct model_cluster *c;

	app(100, 1e6, 1000, 500);
	c = cluster(0, "far", false, 1e6, 3, (double[]){ 1e6, 1e6, 1e6 });
	remote(c, 1e4, 1e4, 2, 1500, 1000);
	/* Limits: CPU 3e6; LAN 1e6 * 1e6 / 1500; in 1e6 * 2 * 1e4 / 1500 =
	 * 1.33e7; out 1e6 * 2 * 1e4 / 1000 = 2e7.  CPU bound. */
	model_cluster_evaluate(&m.app, c, 0.9, &ev);
	NEAR(ev.steady, 3e6);
	ck_assert_int_eq(ev.bound, MODEL_BOUND_CPU);
	/* Eq. 20-21: Tc_TaskMSM = 1500 / 1e4 = 0.15, Tc_TaskSC = 1e-3.  Worker
	 * 1: 0.15 + 1e-3; worker 2: 0.15 + 2e-3; worker 3 (second inter-cluster
	 * task): 0.30 + 1e-3.  (0.151 + 0.152 + 0.301) / 3 = 0.20133333. */
	NEAR(ev.startup, 0.604 / 3);
	/* Eq. 52-53: Tc_ResultSMM = 1000 / 1e4 = 0.1, Tc_ResultSC = 5e-4:
	 * (0.1005 + 0.101 + 0.2005) / 3 = 0.134. */
	NEAR(ev.best_end, 0.134);
	/* Eq. 54: 1 * 2 / 3 + 5e-4 + 0.1 = 0.76716667 (CPU bound: no eq. 56). */
	NEAR(ev.worst_end, 2.0 / 3 + 0.1005);
	/* Eq. 59: (0.20133333 + 0.76716667) * 3e6 * 9 = 26149500 op = 26.1495 tasks. */
	NEAR(ev.min_workload, (0.604 / 3 + 2.0 / 3 + 0.1005) * 27);

	/* Outgoing bound: out 500: 1e6 * 2 * 500 / 1000 = 1e6 op/s. */
	remote(c, 1e4, 500, 2, 1500, 1000);
	model_cluster_evaluate(&m.app, c, 0.3, &ev);
	NEAR(ev.steady, 1e6);
	ck_assert_int_eq(ev.bound, MODEL_BOUND_INET_OUT);
	/* Best end: Tc_ResultSMM = 2 s: (2.0005 + 2.001 + 4.0005) / 3. */
	NEAR(ev.best_end, 8.002 / 3);
	/* Eq. 54: 2/3 + 5e-4 + 2 = 2.66716667; eq. 56: 2 * 5e-4 + ceil(3 / 2)
	 * * 2 = 4.001: the larger. */
	NEAR(ev.worst_end, 4.001);
	/* 1000 bytes per inter-cluster result of 2 tasks: 500 per task; all 3
	 * computers at 0.3 need at most 1e6 * 500 / (3e6 * 0.3) = 555.6. */
	NEAR(model_bytes_per_task(&m.app, c, MODEL_BOUND_INET_OUT), 500);
	NEAR(model_bytes_allowed(&m.app, c, 0.3, MODEL_BOUND_INET_OUT), 5e8 / 9e5);
	/* Grain 2 gives the Internet twice the feed of one-to-one with the same
	 * inter-cluster result size: 1e6 * 1 * 500 / 1000 = 5e5. */
	c->grain = 1;
	NEAR(model_steady(&m.app, c, NULL), 5e5);
}
END_TEST

START_TEST(test_balance_and_round)
{
	double w[2];
	long out[2];

	/* Eq. 61: T = (100 * 1e5 + 1 * 1e6 + 4 * 2e6) / 3e6 = 6.3333 s;
	 * w0 = (6.3333 - 1) * 1e6 / 1e5 = 53.333, w1 = (6.3333 - 4) * 2e6 / 1e5 = 46.667. */
	NEAR(model_balance(2, (double[]){ 1e6, 2e6 }, (double[]){ 1, 4 }, 100, 1e5, w), 19.0 / 3);
	NEAR(w[0], 160.0 / 3);
	NEAR(w[1], 140.0 / 3);
	/* Grain 4 for cluster 1: 46.667 / 4 = 11.67 -> 12 inter-cluster tasks =
	 * 48; the remainder 52 to cluster 0. */
	model_round(2, w, (long[]){ 1, 4 }, 0, 100, out);
	ck_assert_int_eq(out[0], 52);
	ck_assert_int_eq(out[1], 48);
	/* Overhead 60 s: T = (1e7 + 1e6 + 1.2e8) / 3e6 = 43.67 < 60: cluster 1
	 * is left out and cluster 0 does it all in (1e7 + 1e6) / 1e6 = 11 s. */
	NEAR(model_balance(2, (double[]){ 1e6, 2e6 }, (double[]){ 1, 60 }, 100, 1e5, w), 11);
	NEAR(w[0], 100);
	NEAR(w[1], 0);
	/* Rounding up past the total: 99.8 / 4 -> 25 * 4 = 100 > 99; one grain
	 * goes back: 96 and 3. */
	model_round(2, (double[]){ 0.2, 99.8 }, (long[]){ 1, 4 }, 0, 99, out);
	ck_assert_int_eq(out[0], 3);
	ck_assert_int_eq(out[1], 96);
	/* No cluster at all. */
	ck_assert(isinf(model_balance(1, (double[]){ 0 }, (double[]){ 0 }, 10, 1, w)));
	/* Rounding to nearest can make the sink the slowest: main (sink,
	 * 4 s per task) and a remote cluster of grain 4 (2.78 s per task),
	 * balanced at 4.1 and 5.9 tasks.  5.9 / 4 rounds to one grain, so the
	 * main cluster gets 6 tasks and ends at 24 s; two grains to the remote
	 * end both by 22.2 s. */
	model_round(2, (double[]){ 4.1, 5.9 }, (long[]){ 1, 4 }, 0, 10, out);
	ck_assert(out[0] == 6 && out[1] == 4);
	model_round_fastest(2, (long[]){ 1, 4 }, 0, (double[]){ 0, 0 }, (double[]){ 4, 2.78 }, NULL, out);
	ck_assert_int_eq(out[0], 2);
	ck_assert_int_eq(out[1], 8);
	/* Already the fastest: the search leaves it (52 and 48 above end at
	 * 1 + 52 * 0.1 = 6.2 s and 4 + 48 * 0.05 = 6.4 s). */
	out[0] = 52;
	out[1] = 48;
	model_round_fastest(2, (long[]){ 1, 4 }, 0, (double[]){ 1, 4 }, (double[]){ 0.1, 0.05 }, NULL, out);
	ck_assert(out[0] == 52 && out[1] == 48);
	/* The slowest is not the sink: a grain of it goes to the sink. */
	out[0] = 40;
	out[1] = 60;
	model_round_fastest(2, (long[]){ 1, 4 }, 0, (double[]){ 1, 4 }, (double[]){ 0.1, 0.05 }, NULL, out);
	ck_assert_msg(out[0] == 52 && out[1] == 48, "%ld %ld", out[0], out[1]);
	/* ...but not below a minimum workload it met: 60 >= 58, 56 < 58. */
	out[0] = 40;
	out[1] = 60;
	model_round_fastest(2, (long[]){ 1, 4 }, 0, (double[]){ 1, 4 }, (double[]){ 0.1, 0.05 }, (double[]){ 0, 58 },
			    out);
	ck_assert_msg(out[0] == 40 && out[1] == 60, "%ld %ld", out[0], out[1]);
}
END_TEST

/* Two clusters moving no bytes: only the last task's wait remains. */
START_TEST(test_multi_cluster)
{
	struct model_cluster *c;

	app(100, 1e6, 0, 0);
	cluster(0, "local", true, 1e6, 2, (double[]){ 1e6, 1e6 });
	c = cluster(1, "far", false, 1e6, 2, (double[]){ 1e6, 1e6 });
	remote(c, 1e4, 1e4, 2, 0, 0);
	model_predict(&m, &r);
	/* No transfers: T_Up = T_BestEnd = 0; T_WorstEnd = 1 * 1 / 2 = 0.5. */
	NEAR(r.cl[1].startup, 0);
	NEAR(r.cl[1].worst_end, 0.5);
	/* Best: T = 1e8 / 4e6 = 25 s, 50 tasks each (50 a multiple of 2). */
	ck_assert_int_eq(r.cl[0].workload_best, 50);
	ck_assert_int_eq(r.cl[1].workload_best, 50);
	NEAR(r.time_best, 25);
	NEAR(r.efficiency_best, 1);
	/* Worst: T = (1e8 + 0.5 * 4e6) / 4e6 = 25.5 s, still 50 each;
	 * efficiency (1e8 / 4e6) / 25.5 = 0.98039. */
	ck_assert_int_eq(r.cl[1].workload_worst, 50);
	NEAR(r.time_worst, 25.5);
	NEAR(r.efficiency_worst, 25 / 25.5);
	NEAR(r.cl[0].efficiency_worst, 25 / 25.5);
}
END_TEST

START_TEST(test_select_steady)
{
	struct model_cluster *c;

	app(1000000, 1e6, 0, 0);
	m.threshold = 0.8;
	cluster(0, "local", true, 1e6, 1, (double[]){ 1e6 });
	c = cluster(1, "far", false, 1e9, 4, (double[]){ 8e5, 5e5, 3e5, 2e5 });
	remote(c, 1e3, 1e9, 1, 1000, 0);
	/* Internet in feeds 1e6 * 1e3 / 1000 = 1e6 op/s; at 0.8 the computers
	 * may add up to 1.25e6.  Fastest first: 8e5 (sum 8e5) kept, 5e5 (1.3e6)
	 * released, 3e5 (1.1e6) kept, 2e5 (1.3e6) released. */
	model_select(&m, &sel_out, &sel);
	ck_assert_int_eq(sel.kept[1], 2);
	ck_assert_int_eq(sel.state[1][0], MODEL_KEPT);
	ck_assert_int_eq(sel.state[1][1], MODEL_RELEASED_STEADY);
	ck_assert_int_eq(sel.state[1][2], MODEL_KEPT);
	ck_assert_int_eq(sel.state[1][3], MODEL_RELEASED_STEADY);
	ck_assert_int_eq(sel_out.cl[1].nworkers, 2);
	ck_assert_int_eq(sel_out.cl[1].index[1], 2);
	ck_assert_int_eq(sel.kept[0], 1);
}
END_TEST

START_TEST(test_select_workload)
{
	app(100, 1e6, 0, 0);
	cluster(0, "local", true, 1e6, 3, (double[]){ 1e6, 1e6, 1e5 });
	/* With the slow one: T_WorstEnd = (1e6 / 1e5) * 2 / 3 = 6.667 s; eq.
	 * 59: 6.667 * 2.1e6 * 9 = 1.26e8 op = 126 tasks > 100: release it.
	 * Without: 1 * 1 / 2 = 0.5 s; 0.5 * 2e6 * 9 = 9e6 op = 9 tasks <= 100. */
	model_predict(&m, &r);
	NEAR(r.cl[0].min_workload, 126);
	model_select(&m, &sel_out, &sel);
	ck_assert_int_eq(sel.kept[0], 2);
	ck_assert_int_eq(sel.state[0][2], MODEL_RELEASED_WORKLOAD);
	model_predict(&sel_out, &r);
	NEAR(r.cl[0].min_workload, 9);
	ck_assert(r.cl[0].efficiency_worst >= 0.9);
}
END_TEST

START_TEST(test_tune_grain)
{
	struct model_tuning t[4];
	struct model_cluster *c;

	app(1000, 1e6, 0, 0);
	m.app.task_growth = 0;    /* an inter-cluster task of any grain is 1000 bytes */
	cluster(0, "local", true, 1e6, 1, (double[]){ 1e6 });
	c = cluster(1, "far", false, 1e6, 2, (double[]){ 1e6, 1e6 });
	remote(c, 1e3, 1e3, 1, 1000, 0);
	/* Grain N: the Internet feeds 1e6 * N * 1e3 / 1000 = N * 1e6 op/s.
	 * N = 1: one computer fits (cap 1e6 / 0.9); T_Up = 1 s, ends 0;
	 * T = (1e9 + 1e6) / 2e6 = 500.5; far gets 499.5 -> 500 tasks:
	 * 1 + 500 = 501 s.
	 * N = 2: both fit (2e6 = CPerf); T_Up = 1 s (both in the first
	 * inter-cluster task), T_WorstEnd = 1 * 1 / 2 = 0.5; local overhead 0:
	 * T = (1e9 + 1.5 * 2e6) / 3e6 = 334.33; far (334.33 - 1.5) * 2 =
	 * 665.67 -> 333 * 2 = 666 tasks: 1 + 333 + 0.5 = 334.5 s; local 334 s.
	 * N = 3 also gives 666 tasks and 334.5 s; the grain nearer 1 wins. */
	ck_assert_uint_eq(model_tune(&m, t, 4), 1);
	ck_assert_uint_eq(t[0].cluster, 1);
	ck_assert_int_eq(t[0].grain_from, 1);
	ck_assert_int_eq(t[0].grain_to, 2);
	ck_assert_uint_eq(t[0].kept_from, 1);
	ck_assert_uint_eq(t[0].kept_to, 2);
	NEAR(t[0].time_from, 501);
	NEAR(t[0].time_to, 334.5);
}
END_TEST

/* ---- the model file ------------------------------------------------------ */

static char path[64];
static char err[512];

static void write_model(const char *text)
{
	FILE *f;

	snprintf(path, sizeof(path), "/tmp/lds-model-%d.conf", (int)getpid());
	f = fopen(path, "w");
	ck_assert_ptr_nonnull(f);
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

#define GOOD_APP "efficiency_threshold = 0.9;\napplication = { tasks = 10; oper = 1e6; task_bytes = 100; result_bytes = 10; };\n"

START_TEST(test_conf_ok)
{
	write_model(GOOD_APP
		    "clusters = ( { name = \"a\"; main = true; lan_throughput = 1e6; workers = [ 1e6, 2e6 ]; },\n"
		    "  { name = \"b\"; lan_throughput = 1e6; workers = [ 5 ]; inet_in = 1e3; inet_out = 2e3; grain = 2; } );\n");
	ck_assert_int_eq(modelconf_load(path, &m, err, sizeof(err)), 0);
	unlink(path);
	ck_assert_int_eq(m.app.tasks, 10);
	NEAR(m.threshold, 0.9);
	ck_assert_uint_eq(m.nclusters, 2);
	ck_assert(m.cl[0].main);
	NEAR(m.cl[0].perf[1], 2e6);
	ck_assert_int_eq(m.cl[1].grain, 2);
	/* Defaults: grain * task_bytes and grain * result_bytes, growth 1. */
	NEAR(m.cl[1].inter_task_bytes, 200);
	NEAR(m.cl[1].inter_result_bytes, 20);
	NEAR(m.app.task_growth, 1);
	/* The runtime reassigns the last tasks by default (LoadBalance), so
	 * an unset reassign_last_task means it too. */
	ck_assert(m.app.reassign);
}
END_TEST

static const struct {
	const char *clusters;
	const char *expect;
} bad_confs[] = {
	{ "clusters = ( { name = \"a\"; main = true; lan_throughput = 1e6;\n workers = [ 1e6, -2.0 ]; } );",
	  ":4: clusters.[0].workers.[1]: must be > 0 (got -2)" },
	{ "clusters = ( { name = \"a\"; main = true; lan_throughput = 1e6; workers = [ 1e6 ]; },\n"
	  "{ name = \"b\"; lan_throughput = 1e6; workers = [ 1e6 ]; inet_in = 1e3; } );",
	  ":4: clusters.[1].inet_out: missing (required)" },
	{ "clusters = ( { name = \"a\"; lan_throughput = 1e6; workers = [ 1e6 ]; inet_in = 1; inet_out = 1; } );",
	  ":3: clusters: no cluster has main = true" },
	{ "clusters = ( { name = \"a\"; main = true; lan_throughput = 1e6; workers = [ 1e6 ];\n grain = 2; } );",
	  ":4: clusters.[0].grain: only for remote clusters" },
	{ "clusters = ( { name = \"a\"; main = true; lan_thruput = 1e6; workers = [ 1e6 ]; } );",
	  ":3: clusters.[0].lan_thruput: unknown setting" },
	{ "clusters = ( { name = \"a\"; main = true; lan_throughput = 1e6; workers = [ 1e6 ]; },\n"
	  "{ name = \"a\"; lan_throughput = 1e6; workers = [ 1 ]; inet_in = 1; inet_out = 1; } );",
	  ":4: clusters.[1]: name \"a\" is also the name of clusters.[0]" },
	{ "clusters = ( { name = \"a\"; main = true; lan_throughput = 1e6; workers = [ 1e6 ]; },\n"
	  "{ name = \"b\"; lan_throughput = 1e6; workers = [ 1 ]; inet_in = 1; inet_out = 1; grain = 2.5; } );",
	  ":4: clusters.[1].grain: must be a whole number" },
	{ "clusters = ( { name = \"a\"; main = true; lan_throughput = = 1e6; workers = [ 1e6 ]; } );",
	  ":3: syntax error" },
};

START_TEST(test_conf_bad)
{
	char text[1024];

	snprintf(text, sizeof(text), "%s%s\n", GOOD_APP, bad_confs[_i].clusters);
	write_model(text);
	ck_assert_int_eq(modelconf_load(path, &m, err, sizeof(err)), -1);
	unlink(path);
	ck_assert_msg(strstr(err, bad_confs[_i].expect) != NULL, "error \"%s\" lacks \"%s\"", err,
		      bad_confs[_i].expect);
	ck_assert_msg(strncmp(err, path, strlen(path)) == 0, "error \"%s\" does not start with the file", err);
}
END_TEST

Suite *make_model_suite(void)
{
	Suite *s = suite_create("model");
	TCase *tc = tcase_create("model");

	tcase_add_test(tc, test_pipeline_wait);
	tcase_add_test(tc, test_local_cpu_bound);
	tcase_add_test(tc, test_min_workload_threshold);
	tcase_add_test(tc, test_local_lan_bound);
	tcase_add_test(tc, test_remote_one_to_one_inet);
	tcase_add_test(tc, test_remote_one_to_many);
	tcase_add_test(tc, test_balance_and_round);
	tcase_add_test(tc, test_multi_cluster);
	tcase_add_test(tc, test_select_steady);
	tcase_add_test(tc, test_select_workload);
	tcase_add_test(tc, test_tune_grain);
	tcase_add_test(tc, test_conf_ok);
	tcase_add_loop_test(tc, test_conf_bad, 0, (int)(sizeof(bad_confs) / sizeof(bad_confs[0])));
	suite_add_tcase(s, tc);
	return s;
}
