/*
 * report.c - ldsbench's output: text for people; with --json-stream one
 * JSON object per line, {"event": NAME, "data": {...}}, as iperf3's
 * --json-stream (events start, interval, end, sweep, recv_interval,
 * recv_run, error); with -J (--json) the same data as one document at the
 * end, as iperf3's -J: {"start", "intervals", "runs", "end", "sweep",
 * "error"}.  Field names say their unit: *_s seconds (durations, or
 * since the run's start), epoch_s the wall clock, timestamp ISO 8601.
 */
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "ldsd/clock.h"
#include "ldsd/json.h"
#include "tools/ldsbench/ldsbench.h"

/* A list of JSON texts. */
struct jlist {
	char **v;
	size_t n, cap;
};

struct report_doc {
	char *start;               /* the first start's data */
	struct jlist intervals;    /* interval and recv_interval */
	struct jlist runs;         /* end and recv_run */
	char *sweep;
	char *error;               /* the first error's text, a JSON string */
	int oom;                   /* an event was lost for want of memory */
};

/* One event's data, written into memory first. */
struct jbuf {
	FILE *f;
	char *text;
	size_t len;
};

static double mbps(uint64_t bytes, double secs)
{
	return secs > 0 ? (double)bytes * 8 / secs / 1e6 : 0;
}

static const char *dir_name(enum bench_dir d)
{
	return d == DIR_SEND ? "send" : "receive";
}

static FILE *jopen(struct jbuf *b)
{
	b->text = NULL;
	b->f = open_memstream(&b->text, &b->len);
	return b->f;
}

static void jlist_add(struct report_doc *d, struct jlist *l, char *text)
{
	if (l->n == l->cap) {
		size_t cap = l->cap ? 2 * l->cap : 64;
		char **v = realloc(l->v, cap * sizeof(*v));

		if (v == NULL) {
			d->oom = 1;
			free(text);
			return;
		}
		l->v = v;
		l->cap = cap;
	}
	l->v[l->n++] = text;
}

/* Keeps text (or frees it) as part of the document. */
static void doc_add(struct report_doc *d, const char *event, char *text)
{
	char **one = NULL;

	if (strcmp(event, "interval") == 0 || strcmp(event, "recv_interval") == 0) {
		jlist_add(d, &d->intervals, text);
		return;
	}
	if (strcmp(event, "end") == 0 || strcmp(event, "recv_run") == 0) {
		jlist_add(d, &d->runs, text);
		return;
	}
	if (strcmp(event, "start") == 0)
		one = &d->start;
	else if (strcmp(event, "sweep") == 0)
		one = &d->sweep;
	else if (strcmp(event, "error") == 0)
		one = &d->error;
	if (one && *one == NULL)
		*one = text;
	else
		free(text);
}

/* Ends the data written to b and emits it as event. */
static void jemit(const struct report *r, const char *event, struct jbuf *b)
{
	if (fclose(b->f) != 0) {
		free(b->text);
		if (r->doc)
			r->doc->oom = 1;
		return;
	}
	if (r->format == REPORT_JSON_STREAM) {
		fprintf(r->out, "{\"event\":\"%s\",\"data\":%s}\n", event, b->text);
		fflush(r->out);
		free(b->text);
		return;
	}
	doc_add(r->doc, event, b->text);
}

static void jnum_or_null(FILE *f, const char *name, double v, int known)
{
	if (known)
		fprintf(f, ",\"%s\":%.3f", name, v);
	else
		fprintf(f, ",\"%s\":null", name);
}

/* "timestamp" (ISO 8601, UTC) and "epoch_s" of the wall clock now. */
static void jnow(FILE *f)
{
	double wall = clock_wall_s();
	time_t t = (time_t)wall;
	struct tm tm;
	char iso[32] = "";

	if (gmtime_r(&t, &tm))
		strftime(iso, sizeof(iso), "%Y-%m-%dT%H:%M:%S", &tm);
	fprintf(f, ",\"timestamp\":\"%s.%03dZ\",\"epoch_s\":%.3f", iso, (int)((wall - (double)t) * 1000), wall);
}

int report_init(struct report *r, FILE *out, enum report_format format, int quiet)
{
	*r = (struct report){ .out = out, .format = format, .quiet = quiet };
	if (format == REPORT_JSON && (r->doc = calloc(1, sizeof(*r->doc))) == NULL)
		return -1;
	return 0;
}

static void jlist_print(FILE *out, const struct jlist *l)
{
	fputc('[', out);
	for (size_t i = 0; i < l->n; i++)
		fprintf(out, "%s%s", i ? "," : "", l->v[i]);
	fputc(']', out);
}

static void jlist_free(struct jlist *l)
{
	for (size_t i = 0; i < l->n; i++)
		free(l->v[i]);
	free(l->v);
}

void report_finish(struct report *r)
{
	struct report_doc *d = r->doc;

	if (d == NULL)
		return;
	fprintf(r->out, "{\"start\":%s,\"intervals\":", d->start ? d->start : "null");
	jlist_print(r->out, &d->intervals);
	fputs(",\"runs\":", r->out);
	jlist_print(r->out, &d->runs);
	fprintf(r->out, ",\"end\":%s,\"sweep\":%s,\"error\":", d->runs.n ? d->runs.v[d->runs.n - 1] : "null",
		d->sweep ? d->sweep : "null");
	if (d->error)
		fputs(d->error, r->out);
	else if (d->oom)
		fputs("\"out of memory: events are missing\"", r->out);
	else
		fputs("null", r->out);
	fputs("}\n", r->out);
	fflush(r->out);
	free(d->start);
	free(d->sweep);
	free(d->error);
	jlist_free(&d->intervals);
	jlist_free(&d->runs);
	free(d);
	r->doc = NULL;
}

void report_start(const struct report *r, const struct run_start *s)
{
	int reverse = s->dir == DIR_RECEIVE;
	const char *from = reverse ? s->to : s->from, *to = reverse ? s->from : s->to;
	const char *cc = s->congestion ? s->congestion : "";
	struct jbuf b;
	char sn[32];

	if (r->format != REPORT_TEXT) {
		if (jopen(&b) == NULL)
			return;
		fprintf(b.f, "{\"run\":%u,\"direction\":\"%s\",\"mode\":", s->run, dir_name(s->dir));
		json_str(b.f, s->mode);
		fputs(",\"from\":", b.f);
		json_str(b.f, from);
		fputs(",\"to\":", b.f);
		json_str(b.f, to);
		fprintf(b.f, ",\"streams\":%d,\"streams_auto\":%s,\"congestion\":", s->streams > 0 ? s->streams : 0,
			s->streams_auto ? "true" : "false");
		json_str(b.f, cc);
		fprintf(b.f, ",\"size\":%zu,\"duration_s\":%.3f,\"interval_s\":%.3f,\"omit_s\":%.3f", s->size,
			s->seconds, s->interval, s->omit);
		jnow(b.f);
		fputc('}', b.f);
		jemit(r, "start", &b);
		return;
	}
	if (s->streams < 0)
		snprintf(sn, sizeof(sn), "?");
	else
		snprintf(sn, sizeof(sn), "%d%s", s->streams, s->streams_auto ? " (auto)" : "");
	fprintf(r->out, "ldsbench: run %u, %s -> %s through %s%s, %s streams (%s), %zu-byte messages, %.0f s\n", s->run,
		from, to, s->mode, reverse ? " (reverse: the receiver sends)" : "", sn, cc[0] ? cc : "?", s->size,
		s->seconds);
	if (s->omit > 0)
		fprintf(r->out, "          the first %.1f s are not counted in the average\n", s->omit);
	if (!r->quiet && !reverse)
		fprintf(r->out, "  %-15s %12s %12s %8s %7s %8s %8s\n", "interval", "Mb/s", "cum Mb/s", "resent", "reconn",
			"rtt ms", "streams");
	fflush(r->out);
}

void report_interval(const struct report *r, unsigned run, const struct interval *iv)
{
	struct jbuf b;

	if (r->format != REPORT_TEXT) {
		if (jopen(&b) == NULL)
			return;
		fprintf(b.f,
			"{\"run\":%u,\"direction\":\"send\",\"start_s\":%.3f,\"end_s\":%.3f,\"duration_s\":%.3f,"
			"\"epoch_s\":%.3f,\"bytes\":%llu,\"bits_per_second\":%.0f,\"cum_bytes\":%llu,"
			"\"cum_bits_per_second\":%.0f,\"blocks_resent\":%llu,\"reconnects\":%llu,\"rtt_ms\":%.3f,"
			"\"streams\":%u,\"streams_up\":%u,\"omitted\":%s}",
			run, iv->start, iv->end, iv->end - iv->start, iv->wall, (unsigned long long)iv->bytes,
			mbps(iv->bytes, iv->end - iv->start) * 1e6, (unsigned long long)iv->cum_bytes,
			mbps(iv->cum_bytes, iv->end) * 1e6, (unsigned long long)iv->resent,
			(unsigned long long)iv->reconnects, iv->rtt_ms, iv->streams, iv->streams_up,
			iv->omitted ? "true" : "false");
		jemit(r, "interval", &b);
		return;
	}
	if (r->quiet)
		return;
	fprintf(r->out, "  %6.1f-%6.1f s %12.2f %12.2f %8llu %7llu %8.1f %5u/%-3u%s\n", iv->start, iv->end,
		mbps(iv->bytes, iv->end - iv->start), mbps(iv->cum_bytes, iv->end), (unsigned long long)iv->resent,
		(unsigned long long)iv->reconnects, iv->rtt_ms, iv->streams_up, iv->streams,
		iv->omitted ? " (omitted)" : "");
	fflush(r->out);
}

/* One entry of the link's failure log; times are null until they
 * happened. */
static void failure_json(FILE *f, const struct bench_failure *fl, double t0)
{
	fprintf(f, "{\"stream\":%d,\"down_s\":%.3f,\"down_epoch_s\":%.3f", fl->stream, fl->down_at - t0, fl->down_at);
	jnum_or_null(f, "up_epoch_s", fl->up_at, fl->up_at > 0);
	jnum_or_null(f, "resent_epoch_s", fl->resent_at, fl->resent_at > 0);
	jnum_or_null(f, "back_after_s", fl->up_at - fl->down_at, fl->up_at > 0);
	jnum_or_null(f, "resent_after_s", fl->resent_at - fl->down_at, fl->resent_at > 0);
	fprintf(f, ",\"blocks_resent\":%llu,\"reason\":", (unsigned long long)fl->blocks);
	json_str(f, fl->reason);
	fputc('}', f);
}

/* The thesis's failure log: when each disconnection happened, when the
 * link was back, when all lost data was resent. */
static void failure_text(const struct report *r, const struct run_result *res)
{
	fprintf(r->out, "failure log: %u disconnection%s\n", res->nfail, res->nfail == 1 ? "" : "s");
	for (unsigned i = 0; i < res->nfail; i++) {
		const struct bench_failure *f = &res->fail[i];
		char up[32] = "not yet", rs[32] = "not yet";

		if (f->up_at > 0)
			snprintf(up, sizeof(up), "+%.3f s", f->up_at - f->down_at);
		if (f->resent_at > 0)
			snprintf(rs, sizeof(rs), "+%.3f s", f->resent_at - f->down_at);
		fprintf(r->out, "  stream %d down at %.3f s (%s), back %s, %llu blocks resent %s\n", f->stream,
			f->down_at - res->start_wall, f->reason, up, (unsigned long long)f->blocks, rs);
	}
}

/* --latency: round trips timed per second of the measured part. */
static double rtt_rate(const struct run_result *res)
{
	double span = res->seconds - res->omit;

	return span > 0 ? (double)res->rtt_n / span : 0;
}

static void end_json(const struct report *r, const struct run_result *res)
{
	struct jbuf b;

	if (jopen(&b) == NULL)
		return;
	fprintf(b.f, "{\"run\":%u,\"direction\":\"%s\",\"streams\":%u,\"streams_auto\":%s,\"congestion\":", res->run,
		dir_name(res->dir), res->streams, res->streams_auto ? "true" : "false");
	json_str(b.f, res->congestion);
	fprintf(b.f,
		",\"duration_s\":%.3f,\"omit_s\":%.3f,\"messages_sent\":%llu,\"bytes_sent\":%llu,"
		"\"bytes_measured\":%llu,\"bits_per_second\":%.0f,\"disconnections\":%u,\"failures\":[",
		res->seconds, res->omit, (unsigned long long)res->msgs_sent, (unsigned long long)res->bytes_sent,
		(unsigned long long)res->bytes_measured, res->bps, res->nfail);
	for (unsigned i = 0; i < res->nfail; i++) {
		if (i)
			fputc(',', b.f);
		failure_json(b.f, &res->fail[i], res->start_wall);
	}
	fprintf(b.f, "],\"blocks_resent\":%llu,\"reconnects\":%llu,\"receiver\":",
		(unsigned long long)res->blocks_resent, (unsigned long long)res->reconnects);
	if (res->have_report)
		fprintf(b.f, "{\"messages\":%llu,\"bytes\":%llu,\"errors\":%u}", (unsigned long long)res->recv_msgs,
			(unsigned long long)res->recv_bytes, res->recv_errors);
	else
		fputs("null", b.f);
	if (res->rtt_n)
		fprintf(b.f, ",\"latency\":{\"round_trips\":%llu,\"rtt_min_us\":%.1f,\"rtt_p50_us\":%.1f,"
			"\"rtt_p99_us\":%.1f,\"rtt_max_us\":%.1f,\"round_trips_per_second\":%.0f}",
			(unsigned long long)res->rtt_n, res->rtt_min_us, res->rtt_p50_us, res->rtt_p99_us, res->rtt_max_us,
			rtt_rate(res));
	fputs(",\"error\":", b.f);
	if (res->error[0])
		json_str(b.f, res->error);
	else
		fputs("null", b.f);
	fputc('}', b.f);
	jemit(r, "end", &b);
}

void report_end(const struct report *r, const struct run_result *res)
{
	if (r->format != REPORT_TEXT) {
		end_json(r, res);
		return;
	}
	if (res->start_wall == 0) {
		fprintf(r->out, "ldsbench: run %u failed before sending: %s\n", res->run, res->error);
		fflush(r->out);
		return;
	}
	if (res->dir == DIR_RECEIVE)
		fprintf(r->out, "run %u, received: %.2f Mb/s over %.1f s; the other side sent %llu messages (%llu bytes)\n",
			res->run, res->bps / 1e6, res->seconds, (unsigned long long)res->msgs_sent,
			(unsigned long long)res->bytes_sent);
	else
		fprintf(r->out, "run %u: %.2f Mb/s from %.1f to %.1f s; sent %llu messages (%llu bytes) in %.1f s, "
			"%llu blocks resent, %llu reconnects\n",
			res->run, res->bps / 1e6, res->omit, res->seconds, (unsigned long long)res->msgs_sent,
			(unsigned long long)res->bytes_sent, res->seconds, (unsigned long long)res->blocks_resent,
			(unsigned long long)res->reconnects);
	if (res->have_report)
		fprintf(r->out, "%s: %llu messages, %llu bytes intact and in order, %u errors\n",
			res->dir == DIR_RECEIVE ? "checked here" : "receiver", (unsigned long long)res->recv_msgs,
			(unsigned long long)res->recv_bytes, res->recv_errors);
	if (res->rtt_n)
		fprintf(r->out, "round trips: %llu, %.0f per second; round trip min %.1f, median %.1f, p99 %.1f, max "
			"%.1f us\n", (unsigned long long)res->rtt_n, rtt_rate(res), res->rtt_min_us, res->rtt_p50_us,
			res->rtt_p99_us, res->rtt_max_us);
	failure_text(r, res);
	if (res->error[0])
		fprintf(r->out, "ldsbench: run %u failed: %s\n", res->run, res->error);
	fflush(r->out);
}

/* Table A-2 of the thesis: average throughput, disconnections, and the
 * throughput relative to the first run (one stream). */
void report_sweep(const struct report *r, const struct run_result *res, size_t n)
{
	double base = n > 0 && res[0].bps > 0 ? res[0].bps : 0;
	struct jbuf b;

	if (r->format != REPORT_TEXT) {
		if (jopen(&b) == NULL)
			return;
		fputs("{\"rows\":[", b.f);
		for (size_t i = 0; i < n; i++)
			fprintf(b.f, "%s{\"streams\":%u,\"bits_per_second\":%.0f,\"disconnections\":%u,\"relative\":%.3f,"
				"\"ok\":%s}", i ? "," : "", res[i].streams, res[i].bps, res[i].nfail,
				base > 0 ? res[i].bps / base : 0, res[i].error[0] ? "false" : "true");
		fputs("]}", b.f);
		jemit(r, "sweep", &b);
		return;
	}
	fprintf(r->out, "\n%8s %16s %10s %16s %10s\n", "streams", "throughput Mb/s", "KB/s", "disconnections",
		"relative");
	for (size_t i = 0; i < n; i++)
		fprintf(r->out, "%8u %16.2f %10.1f %16u %10.2f%s\n", res[i].streams, res[i].bps / 1e6, res[i].bps / 8 / 1e3,
			res[i].nfail, base > 0 ? res[i].bps / base : 0, res[i].error[0] ? "  (failed)" : "");
	fflush(r->out);
}

void report_error(const struct report *r, const char *fmt, ...)
{
	char text[BENCH_ERR_MAX];
	struct jbuf b;
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	/* A string, as iperf3's error event and -J's "error" are. */
	if (r->format != REPORT_TEXT && jopen(&b)) {
		json_str(b.f, text);
		jemit(r, "error", &b);
	}
	fprintf(stderr, "ldsbench: %s\n", text);
}

void report_recv_ready(const struct report *r, const char *mode, const char *endpoint)
{
	if (r->format != REPORT_TEXT)
		return;
	fprintf(r->out, "ldsbench: receiving as %s (%s)\n", endpoint, mode);
	fflush(r->out);
}

void report_recv_interval(const struct report *r, unsigned run, double start, double end, uint64_t bytes,
			  uint64_t msgs)
{
	struct jbuf b;

	if (r->format != REPORT_TEXT) {
		if (jopen(&b) == NULL)
			return;
		fprintf(b.f, "{\"run\":%u,\"direction\":\"receive\",\"start_s\":%.3f,\"end_s\":%.3f,\"duration_s\":%.3f,"
			"\"epoch_s\":%.3f,\"bytes\":%llu,\"messages\":%llu,\"bits_per_second\":%.0f}", run, start, end,
			end - start, clock_wall_s(), (unsigned long long)bytes, (unsigned long long)msgs,
			mbps(bytes, end - start) * 1e6);
		jemit(r, "recv_interval", &b);
		return;
	}
	if (r->quiet)
		return;
	fprintf(r->out, "  %6.1f-%6.1f s %12.2f Mb/s %8llu messages received\n", start, end, mbps(bytes, end - start),
		(unsigned long long)msgs);
	fflush(r->out);
}

void report_recv_run(const struct report *r, const char *from, unsigned run, uint64_t msgs, uint64_t bytes,
		     double seconds, uint32_t errors, const char *first_error)
{
	struct jbuf b;

	if (r->format != REPORT_TEXT) {
		if (jopen(&b) == NULL)
			return;
		fprintf(b.f, "{\"run\":%u,\"direction\":\"receive\",\"from\":", run);
		json_str(b.f, from);
		fprintf(b.f, ",\"messages\":%llu,\"bytes\":%llu,\"duration_s\":%.3f,\"bits_per_second\":%.0f,"
			"\"errors\":%u,\"first_error\":", (unsigned long long)msgs, (unsigned long long)bytes, seconds,
			mbps(bytes, seconds) * 1e6, errors);
		json_str(b.f, first_error);
		fputc('}', b.f);
		jemit(r, "recv_run", &b);
		return;
	}
	fprintf(r->out, "run %u from %s: %llu messages, %llu bytes in %.1f s (%.2f Mb/s), %s%s\n", run, from,
		(unsigned long long)msgs, (unsigned long long)bytes, seconds, mbps(bytes, seconds),
		errors ? "ERRORS: " : "all intact and in order", errors ? first_error : "");
	fflush(r->out);
}
