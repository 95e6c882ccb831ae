/*
 * receiver.c - ldsbench recv: checks every message of every run and
 * answers each run's END with a REPORT of what arrived intact and in
 * order.  A run is the messages between a sender's START and its END;
 * a START from anyone begins a new run (one sender at a time).
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/clock.h"
#include "tools/ldsbench/ldsbench.h"

#define TICK_MS 10

struct receiver {
	struct bench_io *io;
	const struct report *r;
	double interval;
	int once;
	int active;                /* a run is under way */
	char src[256];             /* its sender */
	unsigned run;
	uint64_t expect;           /* next DATA sequence number */
	uint64_t msgs, bytes;      /* intact and in order */
	uint32_t errors;
	char first_error[256];
	uint64_t t0_ns;
	double next_iv, iv_t;
	uint64_t iv_bytes, iv_msgs;
	uint8_t report[MSG_HDR];   /* a REPORT that found no room yet */
	char report_to[256];
	int report_pending;
	int exit_after_report;     /* --once, and the sender's last run ended */
	int any_errors, done;
};

static void rx_error(struct receiver *rx, const char *why)
{
	if (rx->errors++ == 0)
		snprintf(rx->first_error, sizeof(rx->first_error), "%s", why);
}

static void rx_send_report(struct receiver *rx)
{
	char err[BENCH_ERR_MAX];
	uint64_t id;
	int r = rx->io->ops->send(rx->io, rx->report_to, rx->report, sizeof(rx->report), &id, err, sizeof(err));

	if (r == -EAGAIN)
		return;
	rx->report_pending = 0;
	if (r < 0)
		fprintf(stderr, "ldsbench: cannot answer %s: %s\n", rx->report_to, err);
	if (rx->exit_after_report)
		rx->done = 1;
}

static void rx_room(void *arg)
{
	struct receiver *rx = arg;

	if (rx->report_pending)
		rx_send_report(rx);
}

static void rx_fatal(void *arg, const char *text)
{
	struct receiver *rx = arg;

	report_error(rx->r, "%s", text);
	rx->any_errors = 1;
	rx->done = 1;
}

static void rx_start(struct receiver *rx, const char *src, const struct msg_hdr *h)
{
	if (rx->active)
		fprintf(stderr, "ldsbench: run %u from %s abandoned after %llu messages: %s starts run %u\n", rx->run,
			rx->src, (unsigned long long)rx->msgs, src, h->run);
	rx->active = 1;
	snprintf(rx->src, sizeof(rx->src), "%s", src);
	rx->run = h->run;
	rx->expect = 1;
	rx->msgs = rx->bytes = rx->iv_bytes = rx->iv_msgs = 0;
	rx->errors = 0;
	rx->first_error[0] = '\0';
	rx->t0_ns = clock_now_ns();
	rx->next_iv = rx->interval;
	rx->iv_t = 0;
}

static void rx_data(struct receiver *rx, const uint8_t *buf, size_t len, const struct msg_hdr *h)
{
	char why[256];

	if (h->seq != rx->expect) {
		snprintf(why, sizeof(why), "expected message %llu, got %llu", (unsigned long long)rx->expect,
			 (unsigned long long)h->seq);
		rx_error(rx, why);
		rx->expect = h->seq + 1;
		return;
	}
	rx->expect++;
	if (msg_check_data(buf, len, h, why, sizeof(why)) < 0) {
		rx_error(rx, why);
		return;
	}
	rx->msgs++;
	rx->bytes += len;
}

static void rx_end(struct receiver *rx, const struct msg_hdr *h)
{
	struct msg_hdr rep = { .kind = MSG_REPORT, .run = rx->run, .a = rx->msgs, .b = rx->bytes };
	char why[256];

	if (h->seq != rx->expect - 1) {
		snprintf(why, sizeof(why), "the sender sent %llu messages, %llu arrived", (unsigned long long)h->seq,
			 (unsigned long long)(rx->expect - 1));
		rx_error(rx, why);
	}
	rep.errors = rx->errors;
	rx->any_errors |= rx->errors > 0;
	report_recv_run(rx->r, rx->src, rx->run, rx->msgs, rx->bytes, (double)(clock_now_ns() - rx->t0_ns) / 1e9,
			rx->errors, rx->first_error);
	msg_build(&rep, rx->report);
	snprintf(rx->report_to, sizeof(rx->report_to), "%s", rx->src);
	rx->report_pending = 1;
	rx->exit_after_report = rx->once && h->b == 1;
	rx->active = 0;
	rx_send_report(rx);
}

static void rx_message(void *arg, const char *src, const uint8_t *buf, size_t len)
{
	struct receiver *rx = arg;
	struct msg_hdr h;
	char why[256];

	if (msg_parse(buf, len, &h, why, sizeof(why)) < 0) {
		rx_error(rx, why);
		return;
	}
	if (h.kind == MSG_START) {
		rx_start(rx, src, &h);
		return;
	}
	if (!rx->active || h.run != rx->run || strcmp(src, rx->src) != 0) {
		snprintf(why, sizeof(why), "a message of run %u from %s, outside any run", h.run, src);
		fprintf(stderr, "ldsbench: ignoring %s\n", why);
		return;
	}
	if (h.kind == MSG_DATA)
		rx_data(rx, buf, len, &h);
	else if (h.kind == MSG_END)
		rx_end(rx, &h);
}

static void rx_tick(uint64_t now, void *arg)
{
	struct receiver *rx = arg;
	double t = (double)(now - rx->t0_ns) / 1e9;

	if (rx->report_pending)
		rx_send_report(rx);
	if (rx->active && rx->interval > 0 && t >= rx->next_iv) {
		report_recv_interval(rx->r, rx->iv_t, t, rx->bytes - rx->iv_bytes, rx->msgs - rx->iv_msgs);
		rx->iv_t = t;
		rx->iv_bytes = rx->bytes;
		rx->iv_msgs = rx->msgs;
		rx->next_iv += rx->interval;
	}
	if (rx->done || bench_interrupts > 0)
		evloop_stop(rx->io->ev);
}

int receiver_serve(struct bench_io *io, const struct report *r, double interval, int once)
{
	struct receiver rx = { .io = io, .r = r, .interval = interval, .once = once };
	int tick;

	io->events = (struct bench_io_events){ .arg = &rx, .message = rx_message, .room = rx_room, .fatal = rx_fatal };
	tick = evloop_tick_add(io->ev, TICK_MS, rx_tick, &rx);
	if (tick < 0) {
		report_error(r, "cannot add a timer: %s", strerror(-tick));
		return BENCH_EXIT_FAIL;
	}
	if (!r->json)
		fprintf(r->out, "ldsbench: receiving as %s (%s)\n", io->ops->endpoint(io), io->ops->name);
	fflush(r->out);
	if (evloop_run(io->ev) < 0) {
		report_error(r, "event loop failed: %s", strerror(errno));
		rx.any_errors = 1;
	}
	evloop_tick_del(io->ev, tick);
	return rx.any_errors ? BENCH_EXIT_FAIL : BENCH_EXIT_OK;
}
