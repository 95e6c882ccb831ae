/*
 * sender.c - one timed run of ldsbench send (thesis A.3, Figure A-11).
 *
 * Phases: the stream count is set and the streams come up; a START
 * message reaches the receiver (proof that the path and the receiver are
 * there, bounded by --wait); DATA messages go out for --time seconds,
 * their delivery to the receiving process sampled every --interval; the
 * sender waits until all are delivered (failing if none is delivered for
 * --wait seconds), sends END and waits for
 * the receiver's REPORT, which says how many arrived intact and in order.
 * Throughput counts messages delivered to the receiving process, as the
 * gateway acknowledges them, not bytes handed to the local daemon.
 *
 * With -R the START asks the receiver to send the run back, and this side
 * waits until its own receiver (session.c) has checked it; with --bidir
 * it sends its run and waits for the other one as well.
 *
 * With --latency the START asks the receiver to send every DATA message
 * back (MSG_F_ECHO) and the run has one message out at a time: each is
 * sent when the one before has come back, checked, and its round trip
 * timed (sockperf's ping-pong, qperf's tcp_lat).
 */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/clock.h"
#include "tools/ldsbench/ldsbench.h"

#define TICK_MS 10
#define NS 1e9
/* Per pump call, so that other events get a turn: at most PUMP_BYTES,
 * and PUMP_MAX messages; with pumps every 10 ms tick (and on room) that
 * caps 64-byte messages at 410,000 a second, above what the path takes
 * (256, which it was, capped them at exactly 25,600). */
#define PUMP_MAX 4096
#define PUMP_BYTES (4u << 20)
#define POLL_S 0.1         /* how often the link's status is asked while waiting */
/* Data sent ahead of what is delivered: enough to keep any path full
 * (twice the bandwidth-delay product, so that a stream stalled for a
 * round trip does not starve the others: 15 MB at 200 Mbit/s and
 * 300 ms; the gateway's own per-destination limit, a quarter of
 * recv_memory, may bind first), little enough that the end of a run does
 * not wait long for a backlog (AHEAD_S at the run's best interval's rate,
 * 1.3 s at 50 Mbit/s; the gateway's limit, 32 MiB by default, caps it). */
#define AHEAD_MIN (8u << 20)
#define AHEAD_S 2.0

enum phase { P_STREAMS, P_START, P_DATA, P_DRAIN, P_REPORT, P_REMOTE, P_DONE };

struct sender {
	struct bench_io *io;
	const struct send_opts *o;
	const struct report *r;
	struct run_result *res;
	struct run_result *rev;    /* the run the other side sends (-R: res) */
	int remote_done;           /* that run ended, checked by our receiver */
	char peer[64];             /* the destination's cluster */
	struct msg_pattern pat;
	uint8_t *buf;
	enum phase phase;
	uint64_t phase_ns, t0_ns, poll_ns;
	uint64_t start_id, last_id;
	uint64_t sent;             /* DATA messages accepted by the io */
	double next_iv;            /* seconds after t0 of the next sample */
	uint64_t iv_bytes;         /* delivered at the previous sample */
	double iv_t;
	struct linkstat first, prev;
	uint64_t omit_bytes;
	double omit_t;
	int omit_taken;
	size_t iv_cap;
	uint64_t ahead;            /* bytes that may be sent and not yet delivered */
	uint64_t progress_ns;      /* when the delivered count last moved */
	uint64_t progress_at;
	/* --latency */
	uint64_t echoed;           /* the last DATA that came back */
	uint64_t echo_ns;          /* when the one out was sent */
	uint64_t *rtt;             /* round trips after the omitted start, ns */
	size_t nrtt, rtt_cap;
};

static void sender_fail(struct sender *s, const char *fmt, ...) __attribute__((format(printf, 2, 3)));

static void sender_fail(struct sender *s, const char *fmt, ...)
{
	va_list ap;

	if (s->res->error[0] == '\0') {
		va_start(ap, fmt);
		vsnprintf(s->res->error, sizeof(s->res->error), fmt, ap);
		va_end(ap);
	}
	s->phase = P_DONE;
}

static void set_phase(struct sender *s, enum phase p)
{
	s->phase = p;
	s->phase_ns = clock_now_ns();
}

static double since(uint64_t ns)
{
	return (double)(clock_now_ns() - ns) / NS;
}

/* DATA messages delivered to the receiving process, as bytes. */
static uint64_t delivered_bytes(struct sender *s)
{
	uint64_t d = s->io->ops->delivered(s->io);
	uint64_t n = d > s->start_id ? d - s->start_id : 0;

	return (n < s->sent ? n : s->sent) * s->o->size;
}

static void send_control(struct sender *s, const struct msg_hdr *h, uint64_t *id)
{
	uint8_t buf[MSG_HDR];
	char err[BENCH_ERR_MAX];
	int r;

	msg_build(h, buf);
	/* Control messages are small; one that finds no room waits for the
	 * next tick. */
	r = s->io->ops->send(s->io, s->o->to, buf, sizeof(buf), id, err, sizeof(err));
	if (r < 0 && r != -EAGAIN)
		sender_fail(s, "%s", err);
}

/* START proves the path and the receiver (and asks for the run back with
 * -R or --bidir); s->start_id stays 0 until the io takes it. */
static void send_start(struct sender *s)
{
	const struct send_opts *o = s->o;
	struct msg_start st = { .size = o->size, .seconds = o->seconds, .interval = o->interval, .omit = o->omit,
				.wait = o->wait };
	uint8_t buf[MSG_START_LEN];
	char err[BENCH_ERR_MAX];
	int r;

	st.flags = (o->reverse ? MSG_F_REVERSE : 0) | (o->bidir ? MSG_F_BIDIR : 0) | (o->last ? MSG_F_LAST : 0) |
		   (o->latency ? MSG_F_ECHO : 0);
	msg_build_start(s->res->run, &st, buf);
	r = s->io->ops->send(s->io, o->to, buf, sizeof(buf), &s->start_id, err, sizeof(err));
	if (r < 0 && r != -EAGAIN)
		sender_fail(s, "%s", err);
}

static void pump(struct sender *s)
{
	char err[BENCH_ERR_MAX];

	for (size_t i = 0; i < PUMP_MAX && i * s->o->size < PUMP_BYTES && s->phase == P_DATA; i++) {
		uint64_t id, now;
		int r;

		if ((s->sent + 1) * s->o->size > delivered_bytes(s) + s->ahead || (s->o->latency && s->echoed < s->sent))
			return;
		msg_build_data(&s->pat, s->res->run, s->sent + 1, s->buf);
		now = clock_now_ns();
		r = s->io->ops->send(s->io, s->o->to, s->buf, s->o->size, &id, err, sizeof(err));
		if (r == -EAGAIN)
			return;
		if (r < 0) {
			sender_fail(s, "%s", err);
			return;
		}
		s->sent++;
		s->last_id = id;
		s->echo_ns = now;
	}
}

int sender_latency(const struct sender *s)
{
	return s->o->latency;
}

void sender_echo(struct sender *s, const char *src, const uint8_t *buf, size_t len, const struct msg_hdr *h)
{
	char why[256];
	uint64_t now = clock_now_ns();

	if ((s->phase != P_DATA && s->phase != P_DRAIN) || h->run != s->res->run || h->seq != s->sent ||
	    s->echoed == s->sent) {
		fprintf(stderr, "ldsbench: ignoring message %llu of run %u from %s: not the one out\n",
			(unsigned long long)h->seq, h->run, src);
		return;
	}
	if (len != s->o->size || msg_check_data(buf, len, h, why, sizeof(why)) < 0) {
		sender_fail(s, "the echo from %s: %s", src, len != s->o->size ? "not the size sent" : why);
		return;
	}
	s->echoed = h->seq;
	if (since(s->t0_ns) >= s->o->omit) {
		if (s->nrtt == s->rtt_cap) {
			size_t cap = s->rtt_cap ? 2 * s->rtt_cap : 4096;
			uint64_t *v = realloc(s->rtt, cap * sizeof(*v));

			if (v == NULL) {
				sender_fail(s, "out of memory for round-trip times");
				return;
			}
			s->rtt = v;
			s->rtt_cap = cap;
		}
		s->rtt[s->nrtt++] = now - s->echo_ns;
	}
	pump(s);
}

void sender_room(struct sender *s)
{
	pump(s);
}

void sender_fatal(struct sender *s, const char *text)
{
	sender_fail(s, "%s", text);
}

/* After our own run (or its START with -R), the other side's, if asked. */
static void run_sent(struct sender *s)
{
	if (s->rev && !s->remote_done)
		set_phase(s, P_REMOTE);
	else
		s->phase = P_DONE;
}

void sender_message(struct sender *s, const char *src, const struct msg_hdr *h)
{
	if (h->run != s->res->run || s->phase != P_REPORT) {
		fprintf(stderr, "ldsbench: ignoring a message from %s: a report of run %u, not awaited\n", src, h->run);
		return;
	}
	s->res->have_report = 1;
	s->res->recv_msgs = h->a;
	s->res->recv_bytes = h->b;
	s->res->recv_errors = h->errors;
	run_sent(s);
}

void sender_remote_run(struct sender *s, const struct rx_run *rr)
{
	struct run_result *v = s->rev;

	if (v == NULL || rr->run != s->res->run || s->remote_done) {
		fprintf(stderr, "ldsbench: a run %u arrived that this command did not ask for\n", rr->run);
		return;
	}
	s->remote_done = 1;
	if (v->start_wall == 0)
		v->start_wall = clock_wall_s() - rr->seconds;
	v->have_report = 1;
	v->msgs_sent = rr->sent_msgs;
	v->bytes_sent = rr->sent_bytes;
	v->recv_msgs = rr->msgs;
	v->recv_bytes = v->bytes_measured = rr->bytes;
	v->recv_errors = rr->errors;
	v->seconds = rr->seconds;
	v->bps = rr->seconds > 0 ? (double)rr->bytes * 8 / rr->seconds : 0;
	if (rr->errors > 0 || rr->msgs != rr->sent_msgs || rr->bytes != rr->sent_bytes)
		snprintf(v->error, sizeof(v->error), "%llu of %llu messages the other side sent arrived intact and in "
			 "order (%u errors; first: %s)", (unsigned long long)rr->msgs,
			 (unsigned long long)rr->sent_msgs, rr->errors, rr->first_error[0] ? rr->first_error : "none");
	if (s->phase == P_REMOTE)
		s->phase = P_DONE;
}

int sender_done(const struct sender *s)
{
	return s->phase == P_DONE;
}

/* One sample: the interval since the previous one. */
static void sample(struct sender *s, double t)
{
	struct interval *iv;
	struct linkstat st;
	uint64_t bytes = delivered_bytes(s);

	s->io->ops->stats(s->io, s->peer, &st);
	if (s->res->niv < s->iv_cap) {
		iv = &s->res->iv[s->res->niv++];
		memset(iv, 0, sizeof(*iv));
		iv->start = s->iv_t;
		iv->end = t;
		iv->wall = clock_wall_s();
		iv->bytes = bytes - s->iv_bytes;
		iv->cum_bytes = bytes;
		iv->omitted = t <= s->o->omit + 1e-9;
		if (st.valid && s->prev.valid) {
			iv->resent = st.blocks_resent - s->prev.blocks_resent;
			iv->reconnects = st.reconnects - s->prev.reconnects;
		}
		iv->rtt_ms = st.rtt_ms;
		iv->streams = st.streams;
		iv->streams_up = st.streams_up;
		report_interval(s->r, s->res->run, iv);
	}
	if (!s->omit_taken && t >= s->o->omit - 1e-9) {
		s->omit_taken = 1;
		s->omit_bytes = bytes;
		s->omit_t = t;
	}
	if (st.valid)
		s->prev = st;
	/* The best interval of the run sets it, not the last: a link that
	 * delivers in order delivers in bursts, and sized by a slow interval
	 * (a stall behind a lost packet) the window held the next one back
	 * too, so that the tool, not the link, set the pace. */
	if (t > s->iv_t) {
		uint64_t want = (uint64_t)((bytes - s->iv_bytes) * AHEAD_S / (t - s->iv_t));

		if (want > s->ahead)
			s->ahead = want;
	}
	s->iv_bytes = bytes;
	s->iv_t = t;
}

/* Where the run stands: why it waits, for an error message. */
static void link_state(struct sender *s, char *buf, size_t len)
{
	struct linkstat st;

	s->io->ops->stats(s->io, s->peer, &st);
	if (!st.valid)
		snprintf(buf, len, "no status of the link to %s", s->peer);
	else
		snprintf(buf, len, "link %s: %u of %u streams up%s%s", s->peer, st.streams_up, st.streams,
			 st.last_error[0] ? ", last connection attempt: " : "", st.last_error);
}

void sender_tick(struct sender *s, uint64_t now)
{
	struct linkstat st;
	char state[256];
	double t;

	switch (s->phase) {
	case P_STREAMS:
		if (since(s->poll_ns) < POLL_S)
			break;
		s->poll_ns = now;
		s->io->ops->stats(s->io, s->peer, &st);
		if ((st.valid && st.streams_up >= st.streams && st.streams_up > 0) || since(s->phase_ns) > s->o->wait) {
			set_phase(s, P_START);
			send_start(s);
		}
		break;
	case P_START:
		if (s->start_id == 0) {
			send_start(s);
		} else if (s->io->ops->delivered(s->io) >= s->start_id && s->o->reverse) {
			s->res->start_wall = clock_wall_s();
			run_sent(s);
			break;
		} else if (s->io->ops->delivered(s->io) >= s->start_id) {
			set_phase(s, P_DATA);
			s->t0_ns = s->phase_ns;
			s->res->start_wall = clock_wall_s();
			s->io->ops->stats(s->io, s->peer, &s->first);
			s->prev = s->first;
			s->next_iv = s->o->interval;
			pump(s);
			break;
		}
		if (since(s->phase_ns) > s->o->wait) {
			link_state(s, state, sizeof(state));
			sender_fail(s, "%s did not answer within %.0f s: is `ldsbench recv` running there, and the path up? (%s)",
				    s->o->to, s->o->wait, state);
		}
		break;
	case P_DATA:
		t = since(s->t0_ns);
		if (bench_interrupts > 0 && t < s->o->seconds) {
			/* ^C: end the run here, with what it measured. */
			s->res->seconds = t;
		}
		/* The sample's time is when the count was read, not when it
		 * was due: a late tick (a busy CPU) must not count bytes
		 * delivered after the run's end as delivered within it. */
		if (t >= s->next_iv || t >= s->res->seconds) {
			sample(s, t);
			s->next_iv += s->o->interval;
		}
		if (t >= s->res->seconds) {
			set_phase(s, P_DRAIN);
			s->progress_ns = now;
			break;
		}
		pump(s);
		break;
	case P_DRAIN:
		if (s->io->ops->delivered(s->io) != s->progress_at) {
			s->progress_at = s->io->ops->delivered(s->io);
			s->progress_ns = now;
		}
		if (s->io->ops->delivered(s->io) >= s->last_id && (!s->o->latency || s->echoed == s->sent)) {
			struct msg_hdr h = { .kind = MSG_END, .run = s->res->run, .seq = s->sent,
					     .a = s->sent * s->o->size, .b = (uint64_t)s->o->last };
			uint64_t id = 0;

			send_control(s, &h, &id);
			if (id)
				set_phase(s, P_REPORT);
		} else if (since(s->progress_ns) > s->o->wait || bench_interrupts > 1) {
			link_state(s, state, sizeof(state));
			sender_fail(s, "%llu of %llu messages not delivered %.0f s after the run's end, none for %.0f s (%s)",
				    (unsigned long long)(s->last_id - s->io->ops->delivered(s->io)),
				    (unsigned long long)s->sent, since(s->phase_ns), since(s->progress_ns), state);
		}
		break;
	case P_REPORT:
		if (since(s->phase_ns) > s->o->wait || bench_interrupts > 1)
			sender_fail(s, "%s did not report on the run within %.0f s", s->o->to, s->o->wait);
		break;
	case P_REMOTE:
		/* -R: the other side's whole run, its drain and ours; --bidir:
		 * what is left of it after ours. */
		if (since(s->phase_ns) > (s->o->reverse ? s->o->seconds + 2 * s->o->wait : s->o->wait) ||
		    bench_interrupts > 1)
			sender_fail(s, "the run %s was to send back did not end within %.0f s", s->o->to,
				    since(s->phase_ns));
		break;
	case P_DONE:
		break;
	}
}

static int cmp_u64(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/* --latency: the spread of the round trips timed. */
static void rtt_summary(struct sender *s)
{
	struct run_result *res = s->res;
	size_t n = s->nrtt;

	if (n == 0)
		return;
	qsort(s->rtt, n, sizeof(*s->rtt), cmp_u64);
	res->rtt_n = n;
	res->rtt_min_us = (double)s->rtt[0] / 1e3;
	res->rtt_p50_us = (double)s->rtt[(n - 1) / 2] / 1e3;
	res->rtt_p99_us = (double)s->rtt[(n * 99 + 99) / 100 - 1] / 1e3;
	res->rtt_max_us = (double)s->rtt[n - 1] / 1e3;
}

/* The run's summary from its samples and the link's failure log. */
static void finish(struct sender *s)
{
	struct run_result *res = s->res;
	struct linkstat st;
	double span = (res->niv > 0 ? res->iv[res->niv - 1].end : res->seconds) - s->omit_t;

	s->io->ops->stats(s->io, s->peer, &st);
	if (st.valid) {
		for (struct run_result *v = res; v; v = v == s->rev ? NULL : s->rev) {
			snprintf(v->congestion, sizeof(v->congestion), "%s", st.congestion);
			if (s->first.valid) {
				v->blocks_resent = st.blocks_resent - s->first.blocks_resent;
				v->reconnects = st.reconnects - s->first.reconnects;
			}
			for (unsigned i = 0; i < st.nfail && v->nfail < BENCH_MAX_FAILURES; i++)
				if (st.fail[i].down_at >= res->start_wall && res->start_wall > 0)
					v->fail[v->nfail++] = st.fail[i];
		}
	}
	if (s->o->reverse)
		return;
	res->msgs_sent = s->sent;
	res->bytes_sent = s->sent * s->o->size;
	res->omit = s->omit_t;
	rtt_summary(s);
	if (res->niv > 0) {
		res->bytes_measured = res->iv[res->niv - 1].cum_bytes - s->omit_bytes;
		res->bps = span > 0 ? (double)res->bytes_measured * 8 / span : 0;
	}
	if (res->error[0] == '\0' && res->have_report &&
	    (res->recv_errors > 0 || res->recv_msgs != s->sent || res->recv_bytes != res->bytes_sent))
		snprintf(res->error, sizeof(res->error),
			 "the receiver got %llu of %llu messages intact and in order (%u errors): see its output",
			 (unsigned long long)res->recv_msgs, (unsigned long long)s->sent, res->recv_errors);
}

/* A run's fields before it starts (rev: the other direction's). */
static void result_init(struct run_result *res, const struct send_opts *o, unsigned run, enum bench_dir dir)
{
	memset(res, 0, sizeof(*res));
	res->run = run;
	res->dir = dir;
	res->streams = o->streams;
	res->streams_auto = o->set_streams && o->streams == 0;
	res->seconds = o->seconds;
}

struct sender *sender_begin(struct bench_io *io, const struct send_opts *o, const struct report *r, unsigned run,
			    struct run_result *res, struct run_result *rev)
{
	struct sender *s = calloc(1, sizeof(*s));
	char err[BENCH_ERR_MAX - 64];
	size_t cap = (size_t)(o->seconds / o->interval) + 16;
	struct linkstat st;
	struct run_start rs = { .mode = io->ops->name, .from = io->ops->endpoint(io), .to = o->to, .run = run,
				.size = o->size, .seconds = o->seconds, .interval = o->interval, .omit = o->omit };

	result_init(res, o, run, o->reverse ? DIR_RECEIVE : DIR_SEND);
	if (rev)
		result_init(rev, o, run, DIR_RECEIVE);
	if (s == NULL) {
		snprintf(res->error, sizeof(res->error), "out of memory");
		report_end(r, res);
		return NULL;
	}
	*s = (struct sender){ .io = io, .o = o, .r = r, .res = res, .rev = o->reverse ? res : rev };
	s->iv_cap = cap < BENCH_MAX_INTERVALS ? cap : BENCH_MAX_INTERVALS;
	/* Without an omitted start the measurement starts with the run. */
	s->omit_taken = o->omit <= 0;
	s->ahead = AHEAD_MIN;
	snprintf(s->peer, sizeof(s->peer), "%.*s", (int)strcspn(o->to, "/"), o->to);
	if ((res->iv = calloc(s->iv_cap, sizeof(*res->iv))) == NULL || msg_pattern_init(&s->pat, o->size) < 0 ||
	    (s->buf = malloc(o->size)) == NULL) {
		snprintf(res->error, sizeof(res->error), "out of memory");
		s->phase = P_DONE;
		return s;
	}
	if (o->set_streams && io->ops->set_streams(io, s->peer, o->streams, err, sizeof(err)) < 0) {
		snprintf(res->error, sizeof(res->error), "cannot set %u streams: %s", o->streams, err);
		s->phase = P_DONE;
		return s;
	}
	set_phase(s, o->set_streams && o->streams > 0 ? P_STREAMS : P_START);
	if (s->phase == P_START)
		send_start(s);
	io->ops->stats(io, s->peer, &st);
	if (st.valid && (!o->set_streams || o->streams == 0)) {
		res->streams = st.streams;
		res->streams_auto = st.streams_auto;
	}
	if (rev) {
		rev->streams = res->streams;
		rev->streams_auto = res->streams_auto;
	}
	rs.dir = res->dir;
	rs.streams = o->set_streams || st.valid ? (int)res->streams : -1;
	rs.streams_auto = res->streams_auto;
	rs.congestion = st.congestion;
	report_start(r, &rs);
	return s;
}

int sender_end(struct sender *s)
{
	struct run_result *res = s->res;
	int failed;

	if (res->iv)
		finish(s);
	msg_pattern_free(&s->pat);
	free(s->buf);
	free(s->rtt);
	report_end(s->r, res);
	failed = res->error[0] != '\0';
	if (s->rev && s->rev != res) {
		if (!s->remote_done && s->rev->error[0] == '\0')
			snprintf(s->rev->error, sizeof(s->rev->error), "%s", res->error[0] ? res->error :
				 "the other side's run did not end");
		report_end(s->r, s->rev);
		failed |= s->rev->error[0] != '\0';
	}
	free(s);
	return failed ? -1 : 0;
}
