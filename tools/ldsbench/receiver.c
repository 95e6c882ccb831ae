/*
 * receiver.c - checks every message of every run and answers each run's
 * END with a REPORT of what arrived intact and in order.  A run is the
 * messages between a sender's START and its END; a START from anyone
 * begins a new run (one sender at a time).  A START that asks for a run
 * back (-R, --bidir) goes to the session, which sends it.  A run whose
 * START says MSG_F_ECHO (send --latency) gets every DATA message that
 * checked out sent back as it came; its sender has one out at a time.
 */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/clock.h"
#include "tools/ldsbench/ldsbench.h"

struct receiver {
	struct bench_io *io;
	const struct report *r;
	struct receiver_hooks hooks;
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
	int echo;                  /* this run's DATA goes back (MSG_F_ECHO) */
	uint8_t *echo_buf;         /* one that found no room yet */
	size_t echo_len, echo_cap;
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

/* Sends the echo waiting in echo_buf; it keeps waiting on -EAGAIN. */
static void rx_send_echo(struct receiver *rx)
{
	char err[200];
	uint64_t id;
	int r = rx->io->ops->send(rx->io, rx->src, rx->echo_buf, rx->echo_len, &id, err, sizeof(err));

	if (r == -EAGAIN)
		return;
	rx->echo_len = 0;
	if (r < 0)
		rx_error(rx, err);
}

static void rx_echo(struct receiver *rx, const uint8_t *buf, size_t len)
{
	if (rx->echo_len > 0) {
		rx_error(rx, "--latency: a second message came before the first could be sent back");
		return;
	}
	if (len > rx->echo_cap) {
		uint8_t *p = realloc(rx->echo_buf, len);

		if (p == NULL) {
			rx_error(rx, "--latency: out of memory for the echo");
			return;
		}
		rx->echo_buf = p;
		rx->echo_cap = len;
	}
	memcpy(rx->echo_buf, buf, len);
	rx->echo_len = len;
	rx_send_echo(rx);
}

void receiver_room(struct receiver *rx)
{
	if (rx->report_pending)
		rx_send_report(rx);
	if (rx->echo_len > 0)
		rx_send_echo(rx);
}

void receiver_fatal(struct receiver *rx, const char *text)
{
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
	if (rx->echo)
		rx_echo(rx, buf, len);
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
	/* Whoever takes run_ended (send -R, --bidir) reports the run itself. */
	if (rx->hooks.run_ended == NULL)
		report_recv_run(rx->r, rx->src, rx->run, rx->msgs, rx->bytes,
				(double)(clock_now_ns() - rx->t0_ns) / 1e9, rx->errors, rx->first_error);
	msg_build(&rep, rx->report);
	snprintf(rx->report_to, sizeof(rx->report_to), "%s", rx->src);
	rx->report_pending = 1;
	rx->exit_after_report = rx->once && h->b == 1;
	rx->active = 0;
	rx_send_report(rx);
	if (rx->hooks.run_ended) {
		struct rx_run rr = { .run = rx->run, .msgs = rx->msgs, .bytes = rx->bytes, .sent_msgs = h->seq,
				     .sent_bytes = h->a, .errors = rx->errors,
				     .seconds = (double)(clock_now_ns() - rx->t0_ns) / 1e9, .first_error = rx->first_error };

		rx->hooks.run_ended(rx->hooks.arg, &rr);
	}
}

void receiver_message(struct receiver *rx, const char *src, const uint8_t *buf, size_t len,
		      const struct msg_hdr *h, const char *why)
{
	char text[256];

	if (h == NULL) {
		rx_error(rx, why);
		return;
	}
	if (h->kind == MSG_START) {
		struct msg_start st;

		msg_parse_start(buf, len, h, &st);
		if (!(st.flags & MSG_F_REVERSE)) {
			rx_start(rx, src, h);
			rx->echo = (st.flags & MSG_F_ECHO) != 0;
			rx->echo_len = 0;
		}
		if ((st.flags & (MSG_F_REVERSE | MSG_F_BIDIR)) && rx->hooks.send_back)
			rx->hooks.send_back(rx->hooks.arg, src, h->run, &st);
		return;
	}
	if (!rx->active || h->run != rx->run || strcmp(src, rx->src) != 0) {
		snprintf(text, sizeof(text), "a message of run %u from %s, outside any run", h->run, src);
		fprintf(stderr, "ldsbench: ignoring %s\n", text);
		return;
	}
	if (h->kind == MSG_DATA)
		rx_data(rx, buf, len, h);
	else if (h->kind == MSG_END)
		rx_end(rx, h);
}

void receiver_tick(struct receiver *rx, uint64_t now)
{
	double t = (double)(now - rx->t0_ns) / 1e9;

	if (rx->report_pending)
		rx_send_report(rx);
	if (rx->echo_len > 0)
		rx_send_echo(rx);
	if (rx->active && rx->interval > 0 && t >= rx->next_iv) {
		report_recv_interval(rx->r, rx->run, rx->iv_t, t, rx->bytes - rx->iv_bytes, rx->msgs - rx->iv_msgs);
		rx->iv_t = t;
		rx->iv_bytes = rx->bytes;
		rx->iv_msgs = rx->msgs;
		rx->next_iv += rx->interval;
	}
}

int receiver_done(const struct receiver *rx)
{
	return rx->done;
}

void receiver_sent_last(struct receiver *rx)
{
	if (rx->once)
		rx->done = 1;
}

int receiver_reporting(const struct receiver *rx)
{
	return rx->report_pending;
}

int receiver_failed(const struct receiver *rx)
{
	return rx->any_errors;
}

struct receiver *receiver_new(struct bench_io *io, const struct report *r, double interval, int once,
			      const struct receiver_hooks *hooks)
{
	struct receiver *rx = calloc(1, sizeof(*rx));

	if (rx == NULL)
		return NULL;
	*rx = (struct receiver){ .io = io, .r = r, .hooks = *hooks, .interval = interval, .once = once };
	return rx;
}

void receiver_free(struct receiver *rx)
{
	if (rx)
		free(rx->echo_buf);
	free(rx);
}
