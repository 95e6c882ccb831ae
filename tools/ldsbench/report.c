/*
 * report.c - ldsbench's output: text for people, or with --json one JSON
 * object per line, {"event": NAME, "data": {...}}, like iperf3's
 * --json-stream: events start, interval, failure, end, sweep, receiver
 * interval (recv_interval), receiver run (recv_run) and error.
 */
#include <stdarg.h>
#include <string.h>

#include "ldsd/clock.h"
#include "ldsd/json.h"
#include "tools/ldsbench/ldsbench.h"

static double mbps(uint64_t bytes, double secs)
{
	return secs > 0 ? (double)bytes * 8 / secs / 1e6 : 0;
}

static void json_event(const struct report *r, const char *event)
{
	fprintf(r->out, "{\"event\":\"%s\",\"data\":", event);
}

static void json_done(const struct report *r)
{
	fputs("}\n", r->out);
	fflush(r->out);
}

void report_start(const struct report *r, const char *mode, const char *from, const char *to, unsigned run,
		  int streams, const char *congestion, size_t size, double seconds, double interval, double omit)
{
	char sn[16];

	if (streams > 0)
		snprintf(sn, sizeof(sn), "%d", streams);
	else
		snprintf(sn, sizeof(sn), "%s", streams == 0 ? "auto" : "?");
	if (r->json) {
		json_event(r, "start");
		fprintf(r->out, "{\"run\":%u,\"mode\":", run);
		json_str(r->out, mode);
		fputs(",\"from\":", r->out);
		json_str(r->out, from);
		fputs(",\"to\":", r->out);
		json_str(r->out, to);
		fprintf(r->out, ",\"streams\":\"%s\",\"congestion\":", sn);
		json_str(r->out, congestion);
		fprintf(r->out, ",\"size\":%zu,\"time\":%.3f,\"interval\":%.3f,\"omit\":%.3f,\"timestamp\":%.3f}", size,
			seconds, interval, omit, clock_wall_s());
		json_done(r);
		return;
	}
	fprintf(r->out, "ldsbench: run %u, %s -> %s through %s, %s streams (%s), %zu-byte messages, %.0f s\n", run,
		from, to, mode, sn, congestion[0] ? congestion : "?", size, seconds);
	if (omit > 0)
		fprintf(r->out, "          the first %.1f s are not counted in the average\n", omit);
	if (!r->quiet)
		fprintf(r->out, "  %-15s %12s %12s %8s %7s %8s %8s\n", "interval", "Mb/s", "cum Mb/s", "resent", "reconn",
			"rtt ms", "streams");
	fflush(r->out);
}

void report_interval(const struct report *r, unsigned run, const struct interval *iv)
{
	if (r->json) {
		json_event(r, "interval");
		fprintf(r->out,
			"{\"run\":%u,\"start\":%.3f,\"end\":%.3f,\"time\":%.3f,\"bytes\":%llu,\"bits_per_second\":%.0f,"
			"\"cum_bytes\":%llu,\"cum_bits_per_second\":%.0f,\"blocks_resent\":%llu,\"reconnects\":%llu,"
			"\"rtt_ms\":%.3f,\"streams\":%u,\"streams_up\":%u,\"omitted\":%s}",
			run, iv->start, iv->end, iv->wall, (unsigned long long)iv->bytes,
			mbps(iv->bytes, iv->end - iv->start) * 1e6, (unsigned long long)iv->cum_bytes,
			mbps(iv->cum_bytes, iv->end) * 1e6, (unsigned long long)iv->resent,
			(unsigned long long)iv->reconnects, iv->rtt_ms, iv->streams, iv->streams_up,
			iv->omitted ? "true" : "false");
		json_done(r);
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

static void failure_json(const struct report *r, unsigned run, const struct bench_failure *f, double t0)
{
	json_event(r, "failure");
	fprintf(r->out,
		"{\"run\":%u,\"stream\":%d,\"down_at\":%.3f,\"up_at\":%.3f,\"resent_at\":%.3f,\"down\":%.3f,"
		"\"back_after\":%.3f,\"resent_after\":%.3f,\"blocks_resent\":%llu,\"reason\":",
		run, f->stream, f->down_at, f->up_at, f->resent_at, f->down_at - t0,
		f->up_at > 0 ? f->up_at - f->down_at : -1.0, f->resent_at > 0 ? f->resent_at - f->down_at : -1.0,
		(unsigned long long)f->blocks);
	json_str(r->out, f->reason);
	fputc('}', r->out);
	json_done(r);
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

void report_end(const struct report *r, const struct run_result *res)
{
	if (r->json) {
		for (unsigned i = 0; i < res->nfail; i++)
			failure_json(r, res->run, &res->fail[i], res->start_wall);
		json_event(r, "end");
		fprintf(r->out,
			"{\"run\":%u,\"streams\":%u,\"congestion\":", res->run, res->streams);
		json_str(r->out, res->congestion);
		fprintf(r->out,
			",\"seconds\":%.3f,\"omit\":%.3f,\"messages_sent\":%llu,\"bytes_sent\":%llu,"
			"\"bytes_measured\":%llu,\"bits_per_second\":%.0f,\"disconnections\":%u,"
			"\"blocks_resent\":%llu,\"reconnects\":%llu,\"receiver\":",
			res->seconds, res->omit, (unsigned long long)res->msgs_sent, (unsigned long long)res->bytes_sent,
			(unsigned long long)res->bytes_measured, res->bps, res->nfail,
			(unsigned long long)res->blocks_resent, (unsigned long long)res->reconnects);
		if (res->have_report)
			fprintf(r->out, "{\"messages\":%llu,\"bytes\":%llu,\"errors\":%u}",
				(unsigned long long)res->recv_msgs, (unsigned long long)res->recv_bytes,
				res->recv_errors);
		else
			fputs("null", r->out);
		fputs(",\"error\":", r->out);
		if (res->error[0])
			json_str(r->out, res->error);
		else
			fputs("null", r->out);
		fputc('}', r->out);
		json_done(r);
		return;
	}
	if (res->start_wall == 0) {
		fprintf(r->out, "ldsbench: run %u failed before sending: %s\n", res->run, res->error);
		fflush(r->out);
		return;
	}
	fprintf(r->out, "run %u: %.2f Mb/s from %.1f to %.1f s; sent %llu messages (%llu bytes) in %.1f s, "
		"%llu blocks resent, %llu reconnects\n",
		res->run, res->bps / 1e6, res->omit, res->seconds, (unsigned long long)res->msgs_sent,
		(unsigned long long)res->bytes_sent, res->seconds, (unsigned long long)res->blocks_resent,
		(unsigned long long)res->reconnects);
	if (res->have_report)
		fprintf(r->out, "receiver: %llu messages, %llu bytes intact and in order, %u errors\n",
			(unsigned long long)res->recv_msgs, (unsigned long long)res->recv_bytes, res->recv_errors);
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

	if (r->json) {
		json_event(r, "sweep");
		fputs("{\"rows\":[", r->out);
		for (size_t i = 0; i < n; i++)
			fprintf(r->out, "%s{\"streams\":%u,\"bits_per_second\":%.0f,\"disconnections\":%u,\"relative\":%.3f,"
				"\"ok\":%s}", i ? "," : "", res[i].streams, res[i].bps, res[i].nfail,
				base > 0 ? res[i].bps / base : 0, res[i].error[0] ? "false" : "true");
		fputs("]}", r->out);
		json_done(r);
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
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	if (r->json) {
		json_event(r, "error");
		fputs("{\"text\":", r->out);
		json_str(r->out, text);
		fputc('}', r->out);
		json_done(r);
	}
	fprintf(stderr, "ldsbench: %s\n", text);
}

void report_recv_interval(const struct report *r, double start, double end, uint64_t bytes, uint64_t msgs)
{
	if (r->json) {
		json_event(r, "recv_interval");
		fprintf(r->out, "{\"start\":%.3f,\"end\":%.3f,\"time\":%.3f,\"bytes\":%llu,\"messages\":%llu,"
			"\"bits_per_second\":%.0f}", start, end, clock_wall_s(), (unsigned long long)bytes,
			(unsigned long long)msgs, mbps(bytes, end - start) * 1e6);
		json_done(r);
		return;
	}
	if (r->quiet)
		return;
	fprintf(r->out, "  %6.1f-%6.1f s %12.2f Mb/s %8llu messages\n", start, end, mbps(bytes, end - start),
		(unsigned long long)msgs);
	fflush(r->out);
}

void report_recv_run(const struct report *r, const char *from, unsigned run, uint64_t msgs, uint64_t bytes,
		     double seconds, uint32_t errors, const char *first_error)
{
	if (r->json) {
		json_event(r, "recv_run");
		fputs("{\"from\":", r->out);
		json_str(r->out, from);
		fprintf(r->out, ",\"run\":%u,\"messages\":%llu,\"bytes\":%llu,\"seconds\":%.3f,\"errors\":%u,"
			"\"first_error\":", run, (unsigned long long)msgs, (unsigned long long)bytes, seconds, errors);
		json_str(r->out, first_error);
		fputc('}', r->out);
		json_done(r);
		return;
	}
	fprintf(r->out, "run %u from %s: %llu messages, %llu bytes in %.1f s (%.2f Mb/s), %s%s\n", run, from,
		(unsigned long long)msgs, (unsigned long long)bytes, seconds, mbps(bytes, seconds),
		errors ? "ERRORS: " : "all intact and in order", errors ? first_error : "");
	fflush(r->out);
}
