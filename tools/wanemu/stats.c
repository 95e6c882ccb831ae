/* stats.c - the counters of every direction and site as one JSON object. */
#include "ldsd/clock.h"
#include "ldsd/json.h"
#include "wanemu.h"

static void stats_dir(FILE *out, const struct dir *d)
{
	const struct dir_stats *s = &d->st;

	fputs("{\"name\":", out);
	json_str(out, d->name);
	fputs(",\"config\":\"", out);
	spec_print(out, &d->conf);
	fprintf(out,
		"\",\"forwarded_packets\":%llu,\"forwarded_bytes\":%llu,\"dropped_loss\":%llu,"
		"\"dropped_queue\":%llu,\"dropped_outage\":%llu,\"dropped_mtu\":%llu,\"dropped_write\":%llu,"
		"\"duplicated\":%llu,\"reordered\":%llu,\"queue_peak_bytes\":%llu,\"in_flight_bytes\":%llu,"
		"\"down\":%s}",
		(unsigned long long)s->fwd_pkts, (unsigned long long)s->fwd_bytes, (unsigned long long)s->drop_loss,
		(unsigned long long)s->drop_queue, (unsigned long long)s->drop_outage,
		(unsigned long long)s->drop_mtu, (unsigned long long)s->drop_write, (unsigned long long)s->dup,
		(unsigned long long)s->reordered, (unsigned long long)s->queue_peak,
		(unsigned long long)d->in_flight_bytes, d->down ? "true" : "false");
}

void stats_json(FILE *out, struct wanemu *w)
{
	const char *sep = "";

	fprintf(out, "{\"seed\":%llu,\"uptime_s\":%.3f,\"directions\":[", (unsigned long long)w->seed,
		(double)(clock_now_ns() - w->t0) / 1e9);
	for (int a = 0; a < w->nsites; a++) {
		for (int b = 0; b < w->nsites; b++) {
			if (!w->linked[a * WE_MAX_SITES + b])
				continue;
			fputs(sep, out);
			stats_dir(out, we_dir(w, a, b));
			sep = ",";
		}
	}
	fputs("],\"sites\":[", out);
	for (int i = 0; i < w->nsites; i++) {
		fprintf(out, "%s{\"name\":", i ? "," : "");
		json_str(out, w->site[i].name);
		fprintf(out, ",\"received_packets\":%llu,\"no_route\":%llu}", (unsigned long long)w->site[i].rx_pkts,
			(unsigned long long)w->site[i].no_route);
	}
	fputs("]}\n", out);
	fflush(out);
}
