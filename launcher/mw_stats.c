/* mw_stats.c - progress lines, time series, end report (text and JSON). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/mw_stats.h"
#include "ldsd/json.h"

int mw_stats_init(struct mw_stats *st, const char *app, uint64_t ntasks, unsigned nworkers, double now)
{
	memset(st, 0, sizeof(*st));
	st->w = calloc(nworkers ? nworkers : 1, sizeof(*st->w));
	if (st->w == NULL)
		return -ENOMEM;
	for (unsigned i = 0; i < nworkers; i++)
		st->w[i].role = "Worker";
	st->app = app;
	st->cluster = "local";
	st->ntasks = st->problem_tasks = ntasks;
	st->nworkers = nworkers;
	st->t_start = st->t_first = st->t_last = st->t_end = st->iv_t = now;
	return 0;
}

void mw_stats_free(struct mw_stats *st)
{
	for (unsigned i = 0; st->w != NULL && i < st->nworkers; i++)
		free(st->w[i].samples);
	free(st->w);
	st->w = NULL;
}

int mw_stats_predicted(struct mw_stats *st, const char *text)
{
	double b, w;
	int n = -1;

	if (text == NULL || *text == '\0')
		return 0;
	if (sscanf(text, "%lf,%lf%n", &b, &w, &n) != 2 || text[n] != '\0' || !isfinite(w) || !(b > 0) || w < b)
		return -1;
	st->predict_best = b;
	st->predict_worst = w;
	return 0;
}

double mw_stats_work(const struct mw_stats *st)
{
	double sum = 0;

	for (unsigned i = 0; i < st->nworkers; i++)
		sum += st->w[i].work;
	return sum;
}

static double pct(double a, double b)
{
	return b > 0 ? 100.0 * a / b : 0;
}

static void bar(FILE *out, double frac)
{
	int n = (int)(frac * 10 + 0.5);

	fputc('[', out);
	for (int i = 0; i < 10; i++)
		fputc(i < n ? '#' : '-', out);
	fputc(']', out);
}

/* The header line of the time series file: after the runtime's columns,
 * two per communication manager, bytes to and from its cluster in the
 * interval ("to:cm:NAME", "from:cm:NAME"). */
static void series_header(const struct mw_stats *st, FILE *f)
{
	fprintf(f, "# seconds\tdone\ttasks_per_s\tmaster_busy\tworkers_busy");
	for (unsigned i = 0; i < st->nworkers; i++)
		if (mw_stats_is_cm(&st->w[i]))
			fprintf(f, "\tto:%s\tfrom:%s", st->w[i].host, st->w[i].host);
	fputc('\n', f);
}

/* The WAN traffic of every communication manager in this interval: a
 * sample kept for the JSON report, and columns of the series row.  What
 * its gateway's link carried, block by block, once the CM reports it:
 * runtime messages count only when the whole message is acknowledged,
 * which put a 4 MiB message into one interval however long it took to
 * cross (67 Mbit/s on a 50 Mbit/s link). */
static int wan_interval(struct mw_stats *st, double now)
{
	int rc = 0;

	for (unsigned i = 0; i < st->nworkers; i++) {
		struct mw_stats_worker *w = &st->w[i];
		bool link = w->wan.link_out > 0 || w->wan.link_in > 0;
		struct mw_wan_sample smp = { now - st->t_start,
					     link ? w->wan.link_out - w->iv_wan.link_out : w->wan.wan_out - w->iv_wan.wan_out,
					     link ? w->wan.link_in - w->iv_wan.link_in : w->wan.wan_in - w->iv_wan.wan_in };

		if (!mw_stats_is_cm(w))
			continue;
		if (st->series != NULL)
			fprintf(st->series, "\t%llu\t%llu", (unsigned long long)smp.out, (unsigned long long)smp.in);
		w->iv_wan = w->wan;
		if (w->nsamples == w->capsamples) {
			size_t cap = w->capsamples ? 2 * w->capsamples : 64;
			struct mw_wan_sample *s = realloc(w->samples, cap * sizeof(*s));

			if (s == NULL) {
				rc = -ENOMEM;
				continue;
			}
			w->samples = s;
			w->capsamples = cap;
		}
		w->samples[w->nsamples++] = smp;
	}
	return rc;
}

int mw_stats_interval(struct mw_stats *st, double now, uint64_t done, FILE *out, bool tty)
{
	double dt = now - st->iv_t, work = mw_stats_work(st);
	double rate = dt > 0 ? (double)(done - st->iv_done) / dt : 0;
	double mbusy = dt > 0 ? 1 - (st->wait - st->iv_wait) / dt : 0;
	double wbusy = dt > 0 && st->nworkers ? (work - st->iv_work) / (dt * st->nworkers) : 0;
	double run = now - st->t_first;
	uint64_t fresh = done - st->replayed;
	double avg = run > 0 ? (double)fresh / run : 0;
	int rc;

	mbusy = mbusy < 0 ? 0 : mbusy > 1 ? 1 : mbusy;
	wbusy = wbusy < 0 ? 0 : wbusy > 1 ? 1 : wbusy;
	if (out != NULL && st->open_total) {
		fprintf(out, "mw: %llu/%llu tasks done of those received so far, %.1f tasks/s", (unsigned long long)done,
			(unsigned long long)st->ntasks, rate);
	} else if (out != NULL) {
		fprintf(out, "mw: %llu/%llu tasks (%.1f%%) %.1f tasks/s", (unsigned long long)done,
			(unsigned long long)st->ntasks, pct((double)done, (double)st->ntasks), rate);
		/* Under a second of history says little about the rest. */
		if (avg > 0 && run >= 1 && done < st->ntasks) {
			unsigned long eta = (unsigned long)((double)(st->ntasks - done) / avg + 0.5);

			fprintf(out, " ETA %lu:%02lu:%02lu", eta / 3600, eta / 60 % 60, eta % 60);
		}
	}
	if (out != NULL) {
		if (st->predict_best > 0)
			fprintf(out, " | %.1f s, predicted %.1f-%.1f s", run, st->predict_best, st->predict_worst);
		fprintf(out, " | master busy %3.0f%%", 100 * mbusy);
		if (tty)
			bar(out, mbusy);
		fprintf(out, " workers busy %3.0f%%", 100 * wbusy);
		if (tty)
			bar(out, wbusy);
		fputc('\n', out);
		fflush(out);
	}
	if (st->series != NULL && !st->series_named) {
		series_header(st, st->series);
		st->series_named = true;
	}
	if (st->series != NULL)
		fprintf(st->series, "%.3f\t%llu\t%.3f\t%.4f\t%.4f", now - st->t_start,
			(unsigned long long)done, rate, mbusy, wbusy);
	rc = wan_interval(st, now);
	if (st->series != NULL) {
		fputc('\n', st->series);
		fflush(st->series);
	}
	st->iv_t = now;
	st->iv_done = done;
	st->iv_wait = st->wait;
	st->iv_work = work;
	return rc;
}

/* Tasks/s, with flop/s when the application stated its operations. */
static void perf(FILE *out, const struct mw_stats *st, double tasks_per_s)
{
	fprintf(out, "%.6E Tasks/sec", tasks_per_s);
	if (st->ops_per_task > 0)
		fprintf(out, " (%.6E MFlops)", tasks_per_s * st->ops_per_task / 1e6);
}

static uint64_t joined(const struct mw_stats *st)
{
	uint64_t n = 0;

	for (unsigned i = 0; i < st->nworkers; i++)
		n += st->w[i].done;
	return n;
}

void mw_stats_report(const struct mw_stats *st, FILE *out)
{
	double total = st->t_last - st->t_first, overall = st->t_end - st->t_start;
	double avg = total > 0 ? (double)joined(st) / total : 0;

	fprintf(out, "Statistics\n\n");
	fprintf(out, "Execution: %s, tasks %llu (replayed %llu, pruned %llu) in cluster %s. WorkersBuffers: %d, prefetch %u\n",
		st->app, (unsigned long long)st->ntasks, (unsigned long long)st->replayed,
		(unsigned long long)st->pruned, st->cluster, st->behaviour, st->prefetch);
	fprintf(out, "Total Execution Time: %.4f sec\n", total);
	if (st->predict_best > 0)
		fprintf(out, "Predicted Execution Time: %.4f .. %.4f sec (measured / predicted %.3f .. %.3f)\n",
			st->predict_best, st->predict_worst, total / st->predict_best, total / st->predict_worst);
	fprintf(out, "Overall Execution Time: %.4f sec\n", overall);
	fprintf(out, "Total Time Waiting for Workers: %.4f sec (%.4f %%)\n", st->wait, pct(st->wait, overall));
	fprintf(out, "Master CPU Time: %.4f sec (%.4f %% of Overall)\n", st->cpu, pct(st->cpu, overall));
	fprintf(out, "Average Performance: ");
	perf(out, st, avg);
	fprintf(out, "\n");
	for (unsigned i = 0; i < st->nworkers; i++) {
		const struct mw_stats_worker *w = &st->w[i];
		double ran = (double)(w->done + w->discharged);
		double useful = total > 0 ? (double)w->done / total : 0;

		fprintf(out, "\nWorker %u %s Role %s:\n", i + 1, w->host[0] ? w->host : "?", w->role);
		fprintf(out, "  Tasks Done: %llu (%.4f %%)\n", (unsigned long long)w->done,
			pct((double)w->done, (double)st->ntasks));
		fprintf(out, "  Tasks Discharged: %llu (%.4f %%)\n", (unsigned long long)w->discharged,
			pct((double)w->discharged, ran));
		fprintf(out, "  Performance (Useful tasks relative to Master Time): ");
		perf(out, st, useful);
		fprintf(out, " (%.4f %% of the average)\n", pct(useful, avg));
		fprintf(out, "  Working Performance (All tasks relative to Worker Time): ");
		perf(out, st, w->work > 0 ? ran / w->work : 0);
		fprintf(out, "\n  Worker Efficiency (Worker WorkTime / Worker ExecutionTime): %.4f %%\n",
			pct(w->work, w->exec));
		fprintf(out, "  Worker Work Time: %.4f sec\n", w->work);
		fprintf(out, "  Worker Execution Time: %.4f sec\n", w->exec);
		fprintf(out, "  Worker CPU Time: %.4f sec\n", w->cpu);
		if (mw_stats_is_cm(w))
			fprintf(out, "  WAN Bytes Out / In: %llu / %llu (data cache saved %llu)\n"
				"  Tasks Forfeited (cluster away past its deadline): %llu, Late Results Discarded: %llu\n",
				(unsigned long long)w->wan.wan_out, (unsigned long long)w->wan.wan_in,
				(unsigned long long)w->wan.cache_saved, (unsigned long long)w->forfeited,
				(unsigned long long)(w->wan.late + w->late));
		else if (w->lost[0])
			fprintf(out, "  Lost: %s\n  Tasks Forfeited (run again by other workers): %llu, Late Results "
				"Discarded: %llu\n", w->lost, (unsigned long long)w->forfeited, (unsigned long long)w->late);
	}
	fflush(out);
}

void mw_stats_json(const struct mw_stats *st, FILE *out)
{
	double total = st->t_last - st->t_first, overall = st->t_end - st->t_start;
	double avg = total > 0 ? (double)joined(st) / total : 0;

	fprintf(out, "{\"app\": ");
	json_str(out, st->app);
	fprintf(out, ", \"cluster\": ");
	json_str(out, st->cluster);
	fprintf(out, ", \"tasks\": %llu, \"problem_tasks\": %llu, \"joined\": %llu, \"replayed\": %llu, \"pruned\": %llu,"
		" \"worker_behaviour\": %d, \"prefetch\": %u, \"ops_per_task\": %.17g,"
		" \"total_time\": %.6f, \"overall_time\": %.6f, \"master_wait\": %.6f, \"master_cpu\": %.6f,"
		" \"average_tasks_per_s\": %.6f",
		(unsigned long long)st->ntasks, (unsigned long long)st->problem_tasks, (unsigned long long)joined(st),
		(unsigned long long)st->replayed, (unsigned long long)st->pruned, st->behaviour,
		st->prefetch, st->ops_per_task, total, overall, st->wait, st->cpu, avg);
	if (st->predict_best > 0)
		fprintf(out, ", \"predicted_best\": %.6f, \"predicted_worst\": %.6f", st->predict_best, st->predict_worst);
	fprintf(out, ", \"workers\": [");
	for (unsigned i = 0; i < st->nworkers; i++) {
		const struct mw_stats_worker *w = &st->w[i];
		double ran = (double)(w->done + w->discharged);

		fprintf(out, "%s{\"index\": %u, \"host\": ", i ? ", " : "", i + 1);
		json_str(out, w->host);
		fprintf(out, ", \"role\": ");
		json_str(out, w->role);
		fprintf(out, ", \"done\": %llu, \"discharged\": %llu, \"useful_tasks_per_s\": %.6f,"
			" \"working_tasks_per_s\": %.6f, \"efficiency\": %.6f, \"work_time\": %.6f,"
			" \"exec_time\": %.6f, \"cpu_time\": %.6f, \"bytes_out\": %llu, \"bytes_in\": %llu,"
			" \"last_result\": %.6f",
			(unsigned long long)w->done, (unsigned long long)w->discharged,
			total > 0 ? (double)w->done / total : 0, w->work > 0 ? ran / w->work : 0,
			w->exec > 0 ? w->work / w->exec : 0, w->work, w->exec, w->cpu,
			(unsigned long long)w->bytes_out, (unsigned long long)w->bytes_in,
			w->last > 0 ? w->last - st->t_first : 0);
		if (mw_stats_is_cm(w)) {
			fprintf(out, ", \"wan_bytes_out\": %llu, \"wan_bytes_in\": %llu, \"cache_bytes_saved\": %llu,"
				" \"forfeited\": %llu, \"late\": %llu, \"wan_series\": [",
				(unsigned long long)w->wan.wan_out, (unsigned long long)w->wan.wan_in,
				(unsigned long long)w->wan.cache_saved, (unsigned long long)w->forfeited,
				(unsigned long long)(w->wan.late + w->late));
			for (size_t k = 0; k < w->nsamples; k++)
				fprintf(out, "%s{\"t\": %.3f, \"out\": %llu, \"in\": %llu}", k ? ", " : "",
					w->samples[k].t, (unsigned long long)w->samples[k].out,
					(unsigned long long)w->samples[k].in);
			fputc(']', out);
			if (w->left_out[0]) {
				fputs(", \"left_out\": ", out);
				json_str(out, w->left_out);
			}
		} else if (w->lost[0]) {
			fputs(", \"lost\": ", out);
			json_str(out, w->lost);
			fprintf(out, ", \"forfeited\": %llu, \"late\": %llu", (unsigned long long)w->forfeited,
				(unsigned long long)w->late);
		}
		fputc('}', out);
	}
	fprintf(out, "]}\n");
	fflush(out);
}
