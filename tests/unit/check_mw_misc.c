/*
 * check_mw_misc.c - the runtime's small pure modules: configuration
 * (errors name file, line and setting; print round trip), message header
 * decoding of bad input, role selection, and the statistics report.
 */
#include <check.h>
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/mw_config.h"
#include "launcher/mw_proto.h"
#include "launcher/mw_ring.h"
#include "launcher/mw_role.h"
#include "launcher/mw_stats.h"
#include "suites.h"

static char path[PATH_MAX];
static char err[1024];

static void write_conf(const char *text)
{
	FILE *f;
	int fd;

	snprintf(path, sizeof(path), "%s/mw-conf-XXXXXX", getenv("TMPDIR") ? getenv("TMPDIR") : "/tmp");
	fd = mkstemp(path);
	ck_assert_int_ge(fd, 0);
	f = fdopen(fd, "w");
	fputs(text, f);
	ck_assert_int_eq(fclose(f), 0);
}

START_TEST(config_reads_and_prints)
{
	struct mw_config c, d;
	char text[1024], again[1024];

	mw_config_defaults(&c);
	ck_assert(!c.worker_continue && c.worker_timeout == 10);
	write_conf("StatisticsInterval = 2.5;\nWorkerBehaviour = 2;\nLoadBalance = false;\nPrefetchDepth = 8;\n"
		   "WorkerFailure = \"continue\";\nWorkerTimeout = 2.5;\n");
	ck_assert_int_eq(mw_config_load(path, &c, err, sizeof(err)), 0);
	ck_assert(c.worker_continue && c.worker_timeout == 2.5);
	ck_assert(c.stats_interval == 2.5);
	ck_assert(!c.load_balance);
	ck_assert_uint_eq(c.prefetch, 8);
	ck_assert_int_eq(mw_config_print(&c, text, sizeof(text)), 0);
	unlink(path);
	write_conf(text);
	mw_config_defaults(&d);
	ck_assert_int_eq(mw_config_load(path, &d, err, sizeof(err)), 0);
	ck_assert_int_eq(mw_config_print(&d, again, sizeof(again)), 0);
	ck_assert_str_eq(text, again);
	ck_assert(d.stats_interval == 2.5 && !d.load_balance && d.prefetch == 8);
	ck_assert(d.worker_continue && d.worker_timeout == 2.5);
	ck_assert_ptr_nonnull(strstr(text, "WorkerFailure = \"continue\";\n"));
	unlink(path);
}
END_TEST

START_TEST(config_behaviour_one_means_one_buffer)
{
	struct mw_config c;

	mw_config_defaults(&c);
	write_conf("WorkerBehaviour = 1;\nPrefetchDepth = 8;\n");
	ck_assert_int_eq(mw_config_load(path, &c, err, sizeof(err)), 0);
	ck_assert_uint_eq(c.prefetch, 1);
	unlink(path);
}
END_TEST

static const struct {
	const char *text, *want;
} bad_confs[] = {
	{ "StatisticsInterval = 1;\nWorkerBehavior = 2;\n", ":2: unknown setting WorkerBehavior" },
	{ "WorkerBehaviour = 3;\n", ":1: WorkerBehaviour = 3 is out of range" },
	{ "WorkerBehaviour = 0;\n", ":1: WorkerBehaviour = 0 is out of range" },
	{ "LoadBalance = 1;\n", ":1: LoadBalance must be true or false" },
	{ "PrefetchDepth = 1.5;\n", ":1: PrefetchDepth must be an integer" },
	{ "StatisticsInterval = \"10\";\n", ":1: StatisticsInterval must be a number of seconds" },
	{ "PrefetchDepth = 0;\n", "PrefetchDepth must be at least 1" },
	{ "MasterNap = 1.5;\n", ":1: MasterNap = 1.5 is out of range (0 to 1)" },
	{ "StatisticsInterval = 1;\nWorkerBehaviour = = 2;\n", ":2: syntax error" },
	{ "WorkerFailure = \"retry\";\n", ":1: WorkerFailure must be \"abort\" or \"continue\"" },
	{ "WorkerFailure = true;\n", ":1: WorkerFailure must be \"abort\" or \"continue\"" },
	{ "WorkerFailure = \"continue\";\nWorkerTimeout = 0;\n", "WorkerTimeout must be more than 0" },
};

START_TEST(config_errors)
{
	struct mw_config c;

	mw_config_defaults(&c);
	write_conf(bad_confs[_i].text);
	ck_assert_int_eq(mw_config_load(path, &c, err, sizeof(err)), -1);
	ck_assert_msg(strstr(err, path) != NULL && strstr(err, bad_confs[_i].want) != NULL,
		      "error \"%s\" lacks \"%s\"", err, bad_confs[_i].want);
	unlink(path);
	ck_assert_int_eq(mw_config_load("/nonexistent/mw.conf", &c, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "/nonexistent/mw.conf: cannot read"));
}
END_TEST

START_TEST(proto_round_trip_and_bad_input)
{
	unsigned char msg[MW_HDR_LEN + 3];
	struct mw_hdr h = { .type = MW_MSG_RESULT, .len = 3, .id = 0x1122334455667788ULL, .aux = 42 }, g;

	mw_hdr_encode(msg, &h);
	memcpy(msg + MW_HDR_LEN, "abc", 3);
	ck_assert_int_eq(msg[8], 0x88);               /* little endian on the wire */
	ck_assert_int_eq(mw_hdr_decode(msg, sizeof(msg), &g), 0);
	ck_assert_mem_eq(&h, &g, sizeof(h));
	ck_assert_int_eq(mw_hdr_decode(msg, sizeof(msg) - 1, &g), -EBADMSG);
	ck_assert_int_eq(mw_hdr_decode(msg, MW_HDR_LEN - 1, &g), -EBADMSG);
	msg[0] = MW_MSG_MAX;
	ck_assert_int_eq(mw_hdr_decode(msg, sizeof(msg), &g), -EBADMSG);
	msg[0] = 0;
	ck_assert_int_eq(mw_hdr_decode(msg, sizeof(msg), &g), -EBADMSG);
}
END_TEST

/* A communication manager's settings: defaults, values, bad values. */
static const char *const *fake_env;

static const char *fake_get(const char *name)
{
	for (const char *const *e = fake_env; *e != NULL; e += 2)
		if (strcmp(e[0], name) == 0)
			return e[1];
	return NULL;
}

START_TEST(cm_env)
{
	static const char *const none[] = { NULL };
	static const char *const set[] = { "MWL_REMOTE", "clusterB", "MWL_GRAIN", "4", "MWL_DEADLINE", "2.5",
					   "MWL_CACHE", "1048576", "MWL_JOB", "0123456789abcdef",
					   "MWL_PREFETCH_BYTES", "1048576", NULL };
	static const char *const bad[] = { "MWL_CACHE", "-1", NULL };
	static const char *const bad_bytes[] = { "MWL_PREFETCH_BYTES", "1M", NULL };
	/* A job id becomes part of endpoint names: hex digits only, 16 at most. */
	static const char *const bad_job[] = { "MWL_JOB", "12/cm", NULL };
	static const char *const long_job[] = { "MWL_JOB", "0123456789abcdef0", NULL };
	struct mw_cm_env e;

	fake_env = none;
	ck_assert_int_eq(mw_cm_env_read(&e, fake_get, err, sizeof(err)), 0);
	ck_assert_ptr_null(e.job);
	ck_assert(e.grain == 1 && e.prefetch == 64 && e.deadline == 60 && e.cache == 64 << 20);
	ck_assert(e.prefetch_bytes == 16 << 20);
	fake_env = set;
	ck_assert_int_eq(mw_cm_env_read(&e, fake_get, err, sizeof(err)), 0);
	ck_assert_str_eq(e.remote, "clusterB");
	ck_assert_str_eq(e.job, "0123456789abcdef");
	ck_assert(e.grain == 4 && e.deadline == 2.5 && e.cache == 1048576 && e.prefetch_bytes == 1048576);
	fake_env = bad_bytes;
	ck_assert_int_eq(mw_cm_env_read(&e, fake_get, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "MWL_PREFETCH_BYTES=1M"));
	fake_env = bad;
	ck_assert_int_eq(mw_cm_env_read(&e, fake_get, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "MWL_CACHE=-1"));
	fake_env = bad_job;
	ck_assert_int_eq(mw_cm_env_read(&e, fake_get, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "MWL_JOB=12/cm: expected a job id"));
	fake_env = long_job;
	ck_assert_int_eq(mw_cm_env_read(&e, fake_get, err, sizeof(err)), -1);
}
END_TEST

/* A ring that wrapped grows with its elements in order, its new slots
 * zeroed. */
START_TEST(ring_grows_in_order)
{
	size_t cap = 0, head = 0, n = 0, next = 0, grew = 0;
	void *v = NULL;
	int *r;

	for (int i = 0; i < 1000; i++) {
		size_t was = cap;

		ck_assert_int_eq(mw_ring_make_room(&v, &cap, &head, n, sizeof(int)), 0);
		r = v;
		if (cap != was) {
			grew++;
			for (size_t k = n; k < cap; k++)
				ck_assert_int_eq(r[k], 0);
		}
		r[(head + n++) % cap] = i + 1;
		/* take one out every third time, so that the ring wraps */
		if (i % 3 == 0) {
			ck_assert_int_eq(r[head], (int)++next);
			head = (head + 1) % cap;
			n--;
		}
	}
	r = v;
	for (size_t k = 0; k < n; k++)
		ck_assert_int_eq(r[(head + k) % cap], (int)(next + k + 1));
	ck_assert_uint_eq(next + n, 1000);
	ck_assert_uint_ge(grew, 2);
	free(v);
}
END_TEST

/* A communication manager's link counters to the master and back. */
START_TEST(stats_message)
{
	struct mw_cm_stats s = { .wan_out = 1ULL << 40, .wan_in = 7, .cache_saved = 123456789, .late = 3,
				 .link_out = (1ULL << 40) + 5, .link_in = 1ULL << 63 }, t;
	unsigned char p[MW_STATS_LEN];
	struct mw_hdr h = { .type = MW_MSG_STATS, .len = MW_STATS_LEN, .id = s.wan_out, .aux = s.wan_in };

	mw_stats_msg_encode(p, &s);
	ck_assert_int_eq(mw_stats_msg_decode(&h, p, &t), 0);
	ck_assert_mem_eq(&s, &t, sizeof(s));
	h.len = MW_STATS_LEN - 1;
	ck_assert_int_eq(mw_stats_msg_decode(&h, p, &t), -EBADMSG);
	ck_assert_str_eq(mw_msg_names[MW_MSG_PING], "PING");
	ck_assert_str_eq(mw_msg_names[MW_MSG_AWAY], "AWAY");
}
END_TEST

START_TEST(roles)
{
	enum mw_role r;

	ck_assert_int_eq(mw_role_parse(NULL, 0, 4, &r, err, sizeof(err)), 0);
	ck_assert_int_eq(r, MW_ROLE_MASTER);
	ck_assert_int_eq(mw_role_parse("", 3, 4, &r, err, sizeof(err)), 0);
	ck_assert_int_eq(r, MW_ROLE_WORKER);
	ck_assert_int_eq(mw_role_parse(NULL, 0, 1, &r, err, sizeof(err)), 0);
	ck_assert_int_eq(r, MW_ROLE_SERIAL);
	ck_assert_int_eq(mw_role_parse("master", 2, 4, &r, err, sizeof(err)), 0);
	ck_assert_int_eq(r, MW_ROLE_MASTER);
	ck_assert_int_eq(mw_role_parse("worker", 0, 4, &r, err, sizeof(err)), 0);
	ck_assert_int_eq(r, MW_ROLE_WORKER);
	ck_assert_int_eq(mw_role_parse("cm", 1, 4, &r, err, sizeof(err)), 0);
	ck_assert_int_eq(r, MW_ROLE_CM);
	ck_assert_int_eq(mw_role_parse("submaster", 0, 4, &r, err, sizeof(err)), 0);
	ck_assert_int_eq(r, MW_ROLE_SUBMASTER);
	ck_assert_int_eq(mw_role_parse("boss", 1, 4, &r, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "unknown role"));
}
END_TEST

START_TEST(roles_of_a_cluster)
{
	int main_cl[] = { MW_ROLE_WORKER, MW_ROLE_MASTER, MW_ROLE_CM, MW_ROLE_CM };
	int remote[] = { MW_ROLE_SUBMASTER, MW_ROLE_CM, MW_ROLE_WORKER };
	int two_hubs[] = { MW_ROLE_SUBMASTER, MW_ROLE_MASTER, MW_ROLE_CM };
	int no_cm[] = { MW_ROLE_SUBMASTER, MW_ROLE_WORKER };

	ck_assert_int_eq(mw_role_check(main_cl, 4, err, sizeof(err)), 1);
	ck_assert_int_eq(mw_role_check(remote, 3, err, sizeof(err)), 0);
	ck_assert_int_eq(mw_role_check(two_hubs, 3, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "2 ranks"));
	ck_assert_int_eq(mw_role_check(no_cm, 2, err, sizeof(err)), -1);
	ck_assert_ptr_nonnull(strstr(err, "exactly one rank with MWL_ROLE=cm, not 0"));
}
END_TEST

START_TEST(coarse_items)
{
	struct mw_buf b = { 0 };
	struct mw_item it;
	size_t off = 0;

	ck_assert_int_eq(mw_item_put(&b, 7, 0, "abc", 3), 0);
	ck_assert_int_eq(mw_item_put(&b, 1ULL << 40, 99, NULL, 0), 0);
	ck_assert_uint_eq(b.len, 2 * MW_ITEM_LEN + 3);
	ck_assert_int_eq(mw_item_next(b.data, b.len, &off, &it), 1);
	ck_assert_uint_eq(it.id, 7);
	ck_assert_uint_eq(it.len, 3);
	ck_assert_int_eq(memcmp(it.data, "abc", 3), 0);
	ck_assert_int_eq(mw_item_next(b.data, b.len, &off, &it), 1);
	ck_assert_uint_eq(it.id, 1ULL << 40);
	ck_assert_uint_eq(it.aux, 99);
	ck_assert_int_eq(mw_item_next(b.data, b.len, &off, &it), 0);
	/* Truncated: in the item header, and in the bytes. */
	off = 0;
	ck_assert_int_eq(mw_item_next(b.data, 10, &off, &it), -EBADMSG);
	off = 0;
	ck_assert_int_eq(mw_item_next(b.data, MW_ITEM_LEN + 2, &off, &it), -EBADMSG);
	free(b.data);
}
END_TEST

START_TEST(stats_report)
{
	struct mw_stats st;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	ck_assert_int_eq(mw_stats_init(&st, "app", 10, 2, 100.0), 0);
	st.ops_per_task = 2e6;
	st.t_first = 101;
	st.t_last = 103;            /* total 2 s */
	st.t_end = 104;             /* overall 4 s */
	st.wait = 1;
	st.cpu = 0.5;
	st.w[0].done = 6;
	st.w[0].work = 1.5;
	st.w[0].exec = 3;
	st.w[1].done = 4;
	st.w[1].discharged = 1;
	st.w[1].work = 2.5;
	st.w[1].exec = 3.5;
	st.w[1].cpu = 3.25;
	snprintf(st.w[1].lost, sizeof(st.w[1].lost), "silent for 2.0 s");
	st.w[1].forfeited = 3;
	st.w[1].late = 1;
	f = open_memstream(&buf, &len);
	mw_stats_report(&st, f);
	fclose(f);
	/* A lost worker is named, with the tasks others ran again; the other
	 * is not. */
	ck_assert_ptr_nonnull(strstr(buf, "  Lost: silent for 2.0 s\n  Tasks Forfeited (run again by other workers): 3, "
					  "Late Results Discarded: 1\n"));
	ck_assert_ptr_null(strstr(strstr(buf, "Lost:") + 1, "Lost:"));
	ck_assert_ptr_nonnull(strstr(buf, "Total Execution Time: 2.0000 sec"));
	ck_assert_ptr_nonnull(strstr(buf, "Overall Execution Time: 4.0000 sec"));
	ck_assert_ptr_nonnull(strstr(buf, "Total Time Waiting for Workers: 1.0000 sec (25.0000 %)"));
	ck_assert_ptr_nonnull(strstr(buf, "Master CPU Time: 0.5000 sec (12.5000 % of Overall)"));
	ck_assert_ptr_nonnull(strstr(buf, "Worker CPU Time: 3.2500 sec"));
	ck_assert_ptr_nonnull(strstr(buf, "Average Performance: 5.000000E+00 Tasks/sec (1.000000E+01 MFlops)"));
	ck_assert_ptr_nonnull(strstr(buf, "Tasks Done: 6 (60.0000 %)"));
	ck_assert_ptr_nonnull(strstr(buf, "Tasks Discharged: 1 (20.0000 %)"));
	ck_assert_ptr_nonnull(strstr(buf, "Working Performance (All tasks relative to Worker Time): 2.000000E+00 Tasks/sec"));
	ck_assert_ptr_nonnull(strstr(buf, "Worker Efficiency (Worker WorkTime / Worker ExecutionTime): 50.0000 %"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	mw_stats_json(&st, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "\"tasks\": 10, \"problem_tasks\": 10, \"joined\": 10,"));
	ck_assert_ptr_nonnull(strstr(buf, "\"done\": 4, \"discharged\": 1,"));
	ck_assert_ptr_nonnull(strstr(buf, "\"master_cpu\": 0.500000,"));
	ck_assert_ptr_nonnull(strstr(buf, "\"cpu_time\": 3.250000,"));
	ck_assert_ptr_nonnull(strstr(buf, ", \"lost\": \"silent for 2.0 s\", \"forfeited\": 3, \"late\": 1}"));
	ck_assert_ptr_null(strstr(strstr(buf, "\"lost\"") + 1, "\"lost\""));
	free(buf);
	buf = NULL;
	/* an interval: 4 tasks in 2 s, master waited 0.5 s of it */
	st.iv_t = 101;
	st.wait = 0.5;
	st.iv_wait = 0;
	st.iv_work = 0;
	st.w[0].work = 1;
	st.w[1].work = 1;
	f = open_memstream(&buf, &len);
	mw_stats_interval(&st, 103, 4, f, true);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "mw: 4/10 tasks (40.0%) 2.0 tasks/s ETA 0:00:03 | master busy  75%[########--] workers busy  50%[#####-----]"));
	free(buf);
	buf = NULL;
	/* A sub-master's total is what it received so far: no percent and
	 * no ETA (it said ETA 0:00:00 at 54 %). */
	st.open_total = true;
	f = open_memstream(&buf, &len);
	mw_stats_interval(&st, 105, 6, f, false);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "mw: 6/10 tasks done of those received so far, 1.0 tasks/s | master busy"));
	ck_assert_ptr_null(strstr(buf, "ETA"));
	free(buf);
	mw_stats_free(&st);
}
END_TEST

/* The launcher's prediction: parsed from MWL_PREDICT, shown beside the
 * elapsed time in the progress line, against the total time in the
 * report (measured / predicted), in the JSON; and each worker's last
 * result, the end of its share. */
START_TEST(stats_prediction)
{
	struct mw_stats st;
	char *buf = NULL;
	size_t len = 0;
	FILE *f;

	ck_assert_int_eq(mw_stats_init(&st, "app", 10, 1, 100.0), 0);
	ck_assert_int_eq(mw_stats_predicted(&st, NULL), 0);
	ck_assert_int_eq(mw_stats_predicted(&st, ""), 0);
	ck_assert(st.predict_best == 0);
	ck_assert_int_eq(mw_stats_predicted(&st, "5"), -1);
	ck_assert_int_eq(mw_stats_predicted(&st, "5,4"), -1);
	ck_assert_int_eq(mw_stats_predicted(&st, "0,4"), -1);
	ck_assert_int_eq(mw_stats_predicted(&st, "4,5x"), -1);
	ck_assert(st.predict_best == 0);
	ck_assert_int_eq(mw_stats_predicted(&st, "4,5"), 0);
	ck_assert(st.predict_best == 4 && st.predict_worst == 5);
	st.t_first = 101;
	st.t_last = 106;              /* total 5 s */
	st.w[0].done = 10;
	st.w[0].last = 105.5;
	f = open_memstream(&buf, &len);
	mw_stats_interval(&st, 103, 4, f, false);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "ETA 0:00:03 | 2.0 s, predicted 4.0-5.0 s | master busy"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	mw_stats_report(&st, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "Predicted Execution Time: 4.0000 .. 5.0000 sec (measured / predicted 1.250 .. 1.000)"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	mw_stats_json(&st, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "\"predicted_best\": 4.000000, \"predicted_worst\": 5.000000, \"workers\""));
	ck_assert_ptr_nonnull(strstr(buf, "\"last_result\": 4.500000"));
	free(buf);
	mw_stats_free(&st);
}
END_TEST

/* Statistics of 10 tasks over a worker and cm:clusterB, the series in
 * memory (*ser, once st->series is closed). */
static void stats_with_cm(struct mw_stats *st, char **ser, size_t *slen)
{
	ck_assert_int_eq(mw_stats_init(st, "app", 10, 2, 100.0), 0);
	st->w[1].role = "CommManager";
	snprintf(st->w[1].host, sizeof(st->w[1].host), "cm:clusterB");
	st->series = open_memstream(ser, slen);
}

/* A communication manager's WAN traffic per interval: in the series file
 * (two columns named after it), in the JSON report, and in the text. */
START_TEST(stats_wan_series)
{
	struct mw_stats st;
	char *buf = NULL, *ser = NULL;
	size_t len = 0, slen = 0;
	FILE *f;

	stats_with_cm(&st, &ser, &slen);
	st.w[1].wan = (struct mw_cm_stats){ .wan_out = 1000, .wan_in = 200 };
	ck_assert_int_eq(mw_stats_interval(&st, 101, 1, NULL, false), 0);
	st.w[1].wan = (struct mw_cm_stats){ .wan_out = 1500, .wan_in = 1200, .cache_saved = 77, .late = 3 };
	st.w[1].forfeited = 5;
	ck_assert_int_eq(mw_stats_interval(&st, 102, 2, NULL, false), 0);
	fclose(st.series);
	st.series = NULL;
	ck_assert_ptr_nonnull(strstr(ser, "workers_busy\tto:cm:clusterB\tfrom:cm:clusterB\n"));
	ck_assert_ptr_nonnull(strstr(ser, "\t1000\t200\n"));
	ck_assert_ptr_nonnull(strstr(ser, "\t500\t1000\n"));
	f = open_memstream(&buf, &len);
	mw_stats_json(&st, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "\"wan_bytes_out\": 1500, \"wan_bytes_in\": 1200, \"cache_bytes_saved\": 77,"
					  " \"forfeited\": 5, \"late\": 3, \"wan_series\": [{\"t\": 1.000, \"out\": 1000, \"in\": 200},"
					  " {\"t\": 2.000, \"out\": 500, \"in\": 1000}]}"));
	free(buf);
	buf = NULL;
	f = open_memstream(&buf, &len);
	mw_stats_report(&st, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "WAN Bytes Out / In: 1500 / 1200 (data cache saved 77)"));
	ck_assert_ptr_nonnull(strstr(buf, "Tasks Forfeited (cluster away past its deadline): 5, Late Results Discarded: 3"));
	free(buf);
	free(ser);
	mw_stats_free(&st);
}
END_TEST

/* Once the CM reports its gateway's link counters, the series follows
 * them, block by block: a 4 MiB message acknowledged whole in the second
 * interval crossed the link over both. */
START_TEST(stats_wan_series_link)
{
	struct mw_stats st;
	char *ser = NULL;
	size_t slen = 0;

	stats_with_cm(&st, &ser, &slen);
	st.w[1].wan = (struct mw_cm_stats){ .link_out = 2097152, .link_in = 100 };
	ck_assert_int_eq(mw_stats_interval(&st, 101, 0, NULL, false), 0);
	st.w[1].wan = (struct mw_cm_stats){ .wan_out = 4194304, .wan_in = 64, .link_out = 4194400, .link_in = 200 };
	ck_assert_int_eq(mw_stats_interval(&st, 102, 1, NULL, false), 0);
	fclose(st.series);
	st.series = NULL;
	ck_assert_ptr_nonnull(strstr(ser, "\t2097152\t100\n"));
	ck_assert_ptr_nonnull(strstr(ser, "\t2097248\t100\n"));
	ck_assert_uint_eq(st.w[1].nsamples, 2);
	ck_assert_uint_eq(st.w[1].samples[1].out, 2097248);
	free(ser);
	mw_stats_free(&st);
}
END_TEST

Suite *make_mw_misc_suite(void)
{
	Suite *s = suite_create("mw_misc");
	TCase *tc = tcase_create("core");

	tcase_add_test(tc, config_reads_and_prints);
	tcase_add_test(tc, config_behaviour_one_means_one_buffer);
	tcase_add_loop_test(tc, config_errors, 0, sizeof(bad_confs) / sizeof(bad_confs[0]));
	tcase_add_test(tc, proto_round_trip_and_bad_input);
	tcase_add_test(tc, stats_message);
	tcase_add_test(tc, cm_env);
	tcase_add_test(tc, ring_grows_in_order);
	tcase_add_test(tc, roles);
	tcase_add_test(tc, roles_of_a_cluster);
	tcase_add_test(tc, coarse_items);
	tcase_add_test(tc, stats_report);
	tcase_add_test(tc, stats_wan_series);
	tcase_add_test(tc, stats_wan_series_link);
	tcase_add_test(tc, stats_prediction);
	suite_add_tcase(s, tc);
	return s;
}
