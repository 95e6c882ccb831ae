/*
 * session.c - one command's traffic over one io: the io's events go to
 * this process's sender (REPORT messages) and receiver (START, DATA,
 * END).  send has a receiver too with -R and --bidir, for the run the
 * other side sends back; recv has a sender while it sends such a run.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/wire.h"
#include "tools/ldsbench/ldsbench.h"

#define TICK_MS 10
#define MAX_SIZE (256u << 20)

struct session {
	struct bench_io *io;
	const struct report *r;
	int serving;               /* recv */
	struct sender *snd;
	struct receiver *rx;
	/* recv: the run asked back, while it runs */
	struct send_opts back;
	struct run_result back_res;
	char back_to[WIRE_ENDPOINT_MAX + 1];
	int back_ends;             /* it is the last run of a send -R */
	int failed;
};

static void on_message(void *arg, const char *src, const uint8_t *buf, size_t len)
{
	struct session *ss = arg;
	struct msg_hdr h;
	char why[256];
	int ok = msg_parse(buf, len, &h, why, sizeof(why)) == 0;

	if (ok && h.kind == MSG_DATA && ss->snd && !ss->serving && sender_latency(ss->snd)) {
		sender_echo(ss->snd, src, buf, len, &h);
	} else if (ok && h.kind == MSG_REPORT) {
		if (ss->snd)
			sender_message(ss->snd, src, &h);
		else
			fprintf(stderr, "ldsbench: ignoring a report of run %u from %s: no run of ours is under way\n",
				h.run, src);
	} else if (ss->rx) {
		receiver_message(ss->rx, src, buf, len, ok ? &h : NULL, why);
	} else {
		fprintf(stderr, "ldsbench: ignoring a message from %s: %s\n", src, ok ? "this side only sends" : why);
	}
}

static void on_room(void *arg)
{
	struct session *ss = arg;

	if (ss->snd)
		sender_room(ss->snd);
	if (ss->rx)
		receiver_room(ss->rx);
}

static void on_fatal(void *arg, const char *text)
{
	struct session *ss = arg;

	if (ss->snd)
		sender_fatal(ss->snd, text);
	if (ss->rx)
		receiver_fatal(ss->rx, text);
	else if (ss->snd == NULL)
		report_error(ss->r, "%s", text);
}

/* recv: the run a sender asked back is over. */
static void back_end(struct session *ss)
{
	ss->failed |= sender_end(ss->snd) < 0;
	ss->snd = NULL;
	free(ss->back_res.iv);
	ss->back_res.iv = NULL;
	if (ss->back_ends)
		receiver_sent_last(ss->rx);
}

static void on_tick(uint64_t now, void *arg)
{
	struct session *ss = arg;
	int stop;

	if (ss->snd)
		sender_tick(ss->snd, now);
	if (ss->rx)
		receiver_tick(ss->rx, now);
	if (!ss->serving) {
		/* -R, --bidir: our REPORT on the run sent back is out too. */
		stop = sender_done(ss->snd) && (ss->rx == NULL || !receiver_reporting(ss->rx));
	} else {
		if (ss->snd && sender_done(ss->snd))
			back_end(ss);
		stop = (ss->snd == NULL && (receiver_done(ss->rx) || bench_interrupts > 0)) || bench_interrupts > 1;
	}
	if (stop)
		evloop_stop(ss->io->ev);
}

/* recv: a START asked for a run back; its parameters come from the
 * network and are checked as the command line's are. */
static void send_back(void *arg, const char *src, unsigned run, const struct msg_start *st)
{
	struct session *ss = arg;
	const char *bad = NULL;

	if (ss->snd)
		bad = "a run is being sent back already";
	else if (st->size < MSG_HDR || st->size > MAX_SIZE)
		bad = "message size out of range";
	else if (st->seconds < 0.1 || st->seconds > 1e6 || st->interval <= 0 || st->omit >= st->seconds ||
		 st->wait < 0.1 || st->wait > 1e6)
		bad = "times out of range";
	else if (strlen(src) >= sizeof(ss->back_to) || strchr(src, '/') == NULL)
		bad = "its sender has no endpoint name";
	if (bad) {
		report_error(ss->r, "%s asked for run %u back: refused (%s)", src, run, bad);
		return;
	}
	snprintf(ss->back_to, sizeof(ss->back_to), "%s", src);
	/* With --bidir, recv --once ends with the other run's END, as
	 * without: only a run that is sent back alone ends the command. */
	ss->back = (struct send_opts){ .to = ss->back_to, .size = st->size, .seconds = st->seconds,
				       .interval = st->interval, .omit = st->omit, .wait = st->wait,
				       .last = (st->flags & MSG_F_LAST) != 0 };
	ss->back_ends = (st->flags & MSG_F_LAST) && (st->flags & MSG_F_REVERSE);
	ss->snd = sender_begin(ss->io, &ss->back, ss->r, run, &ss->back_res, NULL);
	if (ss->snd == NULL)
		ss->failed = 1;
}

/* send -R or --bidir: our receiver checked the run sent back. */
static void run_ended(void *arg, const struct rx_run *rr)
{
	struct session *ss = arg;

	if (!ss->serving && ss->snd)
		sender_remote_run(ss->snd, rr);
}

/* Runs the loop until on_tick stops it; 0, or -1 with the error reported.
 * The io's events are ss's only meanwhile: messages that come later (while
 * the link drains on closing) go to those it had before. */
static int session_loop(struct session *ss)
{
	struct bench_io_events saved = ss->io->events;
	int tick, rc = 0;

	ss->io->events = (struct bench_io_events){ .arg = ss, .message = on_message, .room = on_room,
						   .fatal = on_fatal };
	tick = evloop_tick_add(ss->io->ev, TICK_MS, on_tick, ss);
	if (tick < 0) {
		report_error(ss->r, "cannot add a timer: %s", strerror(-tick));
		return -1;
	}
	if (evloop_run(ss->io->ev) < 0) {
		report_error(ss->r, "event loop failed: %s", strerror(errno));
		rc = -1;
	}
	evloop_tick_del(ss->io->ev, tick);
	ss->io->events = saved;
	return rc;
}

int session_send(struct bench_io *io, const struct send_opts *o, const struct report *r, unsigned run,
		 struct run_result *res, struct run_result *rev)
{
	struct session ss = { .io = io, .r = r };
	struct receiver_hooks hooks = { .arg = &ss, .run_ended = run_ended };
	int rc;

	if ((o->reverse || o->bidir) && (ss.rx = receiver_new(io, r, o->interval, 0, &hooks)) == NULL) {
		report_error(r, "out of memory");
		return -1;
	}
	ss.snd = sender_begin(io, o, r, run, res, o->bidir ? rev : NULL);
	if (ss.snd == NULL) {
		receiver_free(ss.rx);
		return -1;
	}
	if (!sender_done(ss.snd) && session_loop(&ss) < 0)
		sender_fatal(ss.snd, "the event loop failed");
	rc = sender_end(ss.snd);
	receiver_free(ss.rx);
	return rc;
}

int session_recv(struct bench_io *io, const struct report *r, double interval, int once)
{
	struct session ss = { .io = io, .r = r, .serving = 1 };
	struct receiver_hooks hooks = { .arg = &ss, .send_back = send_back };

	if ((ss.rx = receiver_new(io, r, interval, once, &hooks)) == NULL) {
		report_error(r, "out of memory");
		return BENCH_EXIT_FAIL;
	}
	report_recv_ready(r, io->ops->name, io->ops->endpoint(io));
	ss.failed |= session_loop(&ss) < 0;
	if (ss.snd)
		back_end(&ss);
	ss.failed |= receiver_failed(ss.rx);
	receiver_free(ss.rx);
	return ss.failed ? BENCH_EXIT_FAIL : BENCH_EXIT_OK;
}
