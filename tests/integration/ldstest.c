/*
 * ldstest - sends or verifies a stream of checksummed messages through ldsd.
 *
 *   ldstest send -s SOCK -n NAME -t DST -c COUNT [-b MIN] [-B MAX] [-S SEED]
 *                [--resend-lost] [--lost-file F]
 *   ldstest recv -s SOCK -n NAME -f SRC -c COUNT [-T TIMEOUT_S] [--reconnect]
 *                [--first N] [--delay-ms MS] [--taken-file F]
 *
 * Message i (1-based) carries a 24-byte header (magic, i, length, CRC-32C of
 * the body) and a body derived from (seed, i), so the receiver checks
 * content, order and exactly-once delivery without seeing the sender.  The
 * receiver exits 0 only if messages 1..COUNT all arrived intact, in order,
 * each once.  --resend-lost resends every message reported lost with
 * lds_resend (same id); --reconnect reconnects the receiving handle with
 * lds_reconnect when its gateway goes away, so that liblds still drops
 * copies of what it received before.  Every wait is bounded.
 *
 * A slow receiver (--delay-ms: a pause after each message) that is killed
 * is followed by another on the same name with --first N: it expects
 * messages N..COUNT; --taken-file gets the number of each message taken,
 * a line each, as it is taken.
 *
 * --zc: the zero-copy calls (lds_send_reserve/lds_send_commit, then
 * lds_recv_zc/lds_recv_release) instead of lds_send and lds_recv.
 *
 * --fast (benchmarks, on both sides): bodies are one pattern written once
 * (the sender only rewrites each message's header), and
 * the receiver checks header, order and CRC-32C but does not rebuild the
 * pattern, so that the tool costs little next to what it measures.
 */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#include "ldsd/clock.h"
#include "ldsd/crc32c.h"
#include "libclient/lds.h"

#define MAGIC 0x4C445354u /* "LDST" */
#define HDR 24

struct opts {
	const char *sock, *name, *peer, *lost_file;
	uint64_t count, seed;
	size_t min, max;
	double timeout;
	int resend_lost, reconnect, fast, zc;
	uint64_t first;            /* recv: the first message expected */
	long delay_ms;             /* recv: pause after each message */
	const char *taken_file;    /* recv: numbers of the messages taken */
};

static uint64_t mix(uint64_t x)
{
	x += 0x9E3779B97F4A7C15ull;
	x = (x ^ (x >> 30)) * 0xBF58476D1CE4E5B9ull;
	x = (x ^ (x >> 27)) * 0x94D049BB133111EBull;
	return x ^ (x >> 31);
}

static size_t msg_len(const struct opts *o, uint64_t i)
{
	uint64_t r = mix(o->seed ^ (i * 0x100000001B3ull));

	if (o->max <= o->min)
		return o->min;
	/* Mostly small, sometimes up to max: log-uniform sizes. */
	{
		double lo = (double)(o->min ? o->min : 1), hi = (double)o->max;
		double u = (double)(r >> 11) / 9007199254740992.0;
		size_t n = (size_t)(lo * __builtin_pow(hi / lo, u));

		return n < o->min ? o->min : n > o->max ? o->max : n;
	}
}

static void fill(uint8_t *p, size_t n, uint64_t seed, uint64_t i)
{
	uint64_t s = mix(seed + i);

	for (size_t k = 0; k < n; k += 8) {
		s = mix(s);
		memcpy(p + k, &s, n - k < 8 ? n - k : 8);
	}
}

static void put32(uint8_t *p, uint32_t v) { memcpy(p, &v, 4); }
static void put64(uint8_t *p, uint64_t v) { memcpy(p, &v, 8); }
static uint32_t get32(const uint8_t *p) { uint32_t v; memcpy(&v, p, 4); return v; }
static uint64_t get64(const uint8_t *p) { uint64_t v; memcpy(&v, p, 8); return v; }

/* Builds message i in buf.  With --fast, buf holds the pattern already
 * (every body is a prefix of it) and the CRC of the last length is kept. */
static size_t build(const struct opts *o, uint64_t i, uint8_t *buf)
{
	static size_t crc_len = SIZE_MAX;
	static uint32_t crc;
	size_t body = msg_len(o, i);

	if (!o->fast)
		fill(buf + HDR, body, o->seed, i);
	if (!o->fast || body != crc_len)
		crc = crc32c(0, buf + HDR, body);
	crc_len = body;
	put32(buf, MAGIC);
	put64(buf + 4, i);
	put32(buf + 12, (uint32_t)body);
	put32(buf + 16, crc);
	put32(buf + 20, 0);
	return HDR + body;
}

static struct lds *open_retry(const struct opts *o, double timeout)
{
	uint64_t deadline = clock_now_ns() + (uint64_t)(timeout * 1e9);

	for (;;) {
		int err = 0;
		struct lds *h = lds_open(o->sock, o->name, 5000, &err);

		if (h)
			return h;
		if (clock_now_ns() > deadline) {
			fprintf(stderr, "ldstest: cannot open %s on %s: %s\n", o->name, lds_socket_path(o->sock),
				lds_strerror(err));
			return NULL;
		}
		usleep(100000);
	}
}

/* Drains pending events; records lost ids. */
static int drain_events(struct lds *h, uint64_t **lost, size_t *nlost, size_t *cap)
{
	struct lds_event ev;
	int bad = 0;

	while (lds_next_event(h, &ev) == 1) {
		if (ev.type == LDS_EV_LOST) {
			for (uint64_t id = ev.first; id <= ev.last; id++) {
				if (*nlost == *cap) {
					*cap = *cap ? *cap * 2 : 1024;
					*lost = realloc(*lost, *cap * sizeof(**lost));
					if (*lost == NULL)
						abort();
				}
				(*lost)[(*nlost)++] = id;
			}
		} else if (ev.type == LDS_EV_ERROR) {
			fprintf(stderr, "ldstest: message %" PRIu64 " refused: %s\n", ev.first, ev.text);
			bad = 1;
		}
	}
	return bad;
}

/* lds_send through the zero-copy calls: the message is built in place. */
static int send_zc(struct lds *h, const char *dst, const uint8_t *msg, size_t n, uint64_t *id)
{
	void *p;
	int r = lds_send_reserve(h, dst, n, &p);

	if (r < 0)
		return r;
	memcpy(p, msg, n);
	return lds_send_commit(h, id);
}

static int do_send(const struct opts *o)
{
	uint8_t *buf = malloc(HDR + o->max + 1);
	uint64_t *id2seq = calloc(o->count + 1, sizeof(uint64_t)), *lost = NULL;
	size_t nlost = 0, lcap = 0, done_lost = 0, seen_lost = 0;
	uint64_t bytes = 0, t0 = clock_now_ns(), last_id = 0, resent = 0;
	struct lds *h;
	FILE *lf = NULL;
	int bad = 0;

	if (buf == NULL || id2seq == NULL)
		return 1;
	if (o->fast)
		fill(buf + HDR, o->max, o->seed, 0);
	h = open_retry(o, o->timeout);
	if (h == NULL)
		return 1;
	if (o->lost_file && (lf = fopen(o->lost_file, "w")) == NULL) {
		perror(o->lost_file);
		return 1;
	}
	for (uint64_t i = 1; i <= o->count || done_lost < nlost;) {
		uint64_t seq, id;
		size_t n;
		int r;

		if (o->resend_lost && done_lost < nlost && seen_lost < nlost) {
			/* New losses: first wait until nothing is in doubt and
			 * take every event.  The gateway refuses messages to the
			 * peer until we have taken every loss it reported, so
			 * resending at once would only have them refused too. */
			r = lds_wait_settled(h, last_id, (int)(o->timeout * 1000));
			bad |= drain_events(h, &lost, &nlost, &lcap);
			if (r < 0) {
				fprintf(stderr, "ldstest: messages not settled after a loss: %s\n", lds_strerror(r));
				return 1;
			}
			seen_lost = nlost;
			continue;
		}
		if (o->resend_lost && done_lost < nlost) {
			/* Losses are reported in the order the daemon refused the
			 * messages, which after a resend refused again is not
			 * the application's order: resend the oldest first. */
			size_t min = done_lost;

			for (size_t k = done_lost + 1; k < nlost; k++)
				if (lost[k] < lost[min])
					min = k;
			id = lost[min];
			lost[min] = lost[done_lost];
			lost[done_lost++] = id;
			seq = id2seq[id];
			resent++;
			if (lf)
				fprintf(lf, "%" PRIu64 "\n", seq);
			n = build(o, seq, buf);
			r = lds_resend(h, o->peer, buf, n, id);
		} else if (i <= o->count) {
			seq = i++;
			n = build(o, seq, buf);
			r = o->zc ? send_zc(h, o->peer, buf, n, &id) : lds_send(h, o->peer, buf, n, &id);
		} else {
			break;
		}
		if (r < 0) {
			fprintf(stderr, "ldstest: send %" PRIu64 ": %s\n", seq, lds_strerror(r));
			return 1;
		}
		if (id > last_id) {
			id2seq[id] = seq;
			last_id = id;
		}
		bytes += n;
		bad |= drain_events(h, &lost, &nlost, &lcap);
		if (i > o->count && done_lost == nlost && o->resend_lost) {
			/* Wait until every message is settled: late LOST events
			 * mean more to resend. */
			r = lds_wait_settled(h, last_id, (int)(o->timeout * 1000));
			bad |= drain_events(h, &lost, &nlost, &lcap);
			if (r < 0 && done_lost == nlost) {
				fprintf(stderr, "ldstest: not all messages settled: %s\n", lds_strerror(r));
				return 1;
			}
		}
	}
	if (!o->resend_lost) {
		int r = lds_wait_settled(h, last_id, (int)(o->timeout * 1000));

		bad |= drain_events(h, &lost, &nlost, &lcap);
		if (r < 0) {
			fprintf(stderr, "ldstest: not all messages acknowledged within %.0f s: %s\n", o->timeout,
				lds_strerror(r));
			return 1;
		}
	}
	{
		struct lds_stats st;
		double secs = (double)(clock_now_ns() - t0) / 1e9;

		lds_get_stats(h, &st);
		printf("sent %" PRIu64 " messages (%" PRIu64 " resent after loss), %" PRIu64 " bytes in %.2f s "
		       "(%.1f MB/s); acked %" PRIu64 ", lost %" PRIu64 ", failed %" PRIu64 "\n",
		       o->count, resent, bytes, secs, (double)bytes / secs / 1e6, st.acked, st.lost, st.failed);
		if (st.lost > 0 && !o->resend_lost)
			bad = 1;
	}
	if (lf)
		fclose(lf);
	lds_close(h);
	free(buf);
	free(id2seq);
	free(lost);
	return bad;
}

static int verify(const struct opts *o, const struct lds_msg *m, uint64_t *seq)
{
	const uint8_t *p = m->data;
	uint8_t *want;
	size_t body;
	int ok;

	if (m->len < HDR || get32(p) != MAGIC) {
		fprintf(stderr, "ldstest: message from %s without test header (%zu bytes)\n", m->src, m->len);
		return -1;
	}
	*seq = get64(p + 4);
	body = get32(p + 12);
	if (body != m->len - HDR || body != msg_len(o, *seq) || crc32c(0, p + HDR, body) != get32(p + 16)) {
		fprintf(stderr, "ldstest: message %" PRIu64 " corrupt (len %zu)\n", *seq, m->len);
		return -1;
	}
	if (o->fast)
		return 0;
	want = malloc(body + 1);
	fill(want, body, o->seed, *seq);
	ok = memcmp(want, p + HDR, body) == 0;
	free(want);
	if (!ok) {
		fprintf(stderr, "ldstest: message %" PRIu64 " has the wrong content\n", *seq);
		return -1;
	}
	return 0;
}

/* The gateway went away: reconnect the same handle until the deadline. */
static int reconnect(struct lds *h, uint64_t got, uint64_t deadline)
{
	int r;

	fprintf(stderr, "ldstest: ldsd went away after %" PRIu64 " messages; reconnecting\n", got);
	while ((r = lds_reconnect(h, 1000)) < 0 && clock_now_ns() < deadline)
		usleep(100000);
	if (r < 0)
		fprintf(stderr, "ldstest: cannot reconnect: %s\n", lds_strerror(r));
	return r;
}

static int do_recv(const struct opts *o)
{
	uint8_t *seen = calloc(o->count + 1, 1);
	uint64_t got = 0, expect = o->first, bytes = 0, t0 = clock_now_ns(), last_print = t0;
	uint64_t deadline = t0 + (uint64_t)(o->timeout * 1e9);
	struct lds *h = open_retry(o, o->timeout);
	FILE *tf = o->taken_file ? fopen(o->taken_file, "w") : NULL;
	struct lds_stats st;

	if (h == NULL || seen == NULL || (o->taken_file && tf == NULL))
		return 1;
	while (got < o->count - o->first + 1) {
		struct lds_msg m;
		uint64_t seq, now = clock_now_ns();
		int r;

		if (now > deadline) {
			fprintf(stderr, "ldstest: timeout after %.0f s: %" PRIu64 " of %" PRIu64 " messages\n", o->timeout,
				got, o->count);
			return 1;
		}
		r = o->zc ? lds_recv_zc(h, &m, 1000) : lds_recv(h, &m, 1000);
		if (r == -ETIMEDOUT)
			continue;
		if (r == -ECONNRESET && o->reconnect) {
			if (reconnect(h, got, deadline) < 0)
				return 1;
			continue;
		}
		if (r < 0) {
			fprintf(stderr, "ldstest: recv: %s\n", lds_strerror(r));
			return 1;
		}
		if (o->peer && strcmp(m.src, o->peer) != 0) {
			fprintf(stderr, "ldstest: message from unexpected sender %s\n", m.src);
			return 1;
		}
		if (verify(o, &m, &seq) < 0)
			return 1;
		if (seq == 0 || seq > o->count) {
			fprintf(stderr, "ldstest: message number %" PRIu64 " out of range\n", seq);
			return 1;
		}
		if (seen[seq]) {
			fprintf(stderr, "ldstest: message %" PRIu64 " delivered twice\n", seq);
			return 1;
		}
		if (seq != expect) {
			fprintf(stderr, "ldstest: message %" PRIu64 " arrived when %" PRIu64 " was expected\n", seq,
				expect);
			return 1;
		}
		seen[seq] = 1;
		got++;
		bytes += m.len;
		/* Taken once released: only then is it the taken file's. */
		if (o->zc && (r = lds_recv_release(h, &m)) < 0) {
			fprintf(stderr, "ldstest: release: %s\n", lds_strerror(r));
			return 1;
		}
		if (tf) {
			fprintf(tf, "%" PRIu64 "\n", seq);
			fflush(tf);
		}
		if (o->delay_ms > 0)
			usleep((useconds_t)o->delay_ms * 1000);
		while (expect <= o->count && seen[expect])
			expect++;
		if (now - last_print > 2000000000ull) {
			last_print = now;
			fprintf(stderr, "ldstest: %" PRIu64 "/%" PRIu64 " messages, %.1f MB\n", got, o->count,
				(double)bytes / 1e6);
		}
	}
	lds_get_stats(h, &st);
	printf("received %" PRIu64 " messages intact, in order and once, %" PRIu64 " bytes in %.2f s, "
	       "liblds dropped %" PRIu64 " copies of messages it had\n",
	       got, bytes, (double)(clock_now_ns() - t0) / 1e9, st.duplicates);
	lds_close(h);
	free(seen);
	if (tf)
		fclose(tf);
	return 0;
}

static size_t parse_size(const char *s)
{
	char *end;
	double v = strtod(s, &end);

	if (*end == 'k' || *end == 'K')
		v *= 1024;
	else if (*end == 'm' || *end == 'M')
		v *= 1024 * 1024;
	return (size_t)v;
}

static void on_time_limit(int sig)
{
	static const char msg[] = "ldstest: time limit (-T) passed while blocked in liblds; giving up\n";

	(void)sig;
	(void)!write(2, msg, sizeof(msg) - 1);
	_exit(3);
}

int main(int argc, char **argv)
{
	static const struct option lopts[] = {
		{ "resend-lost", no_argument, NULL, 'R' }, { "lost-file", required_argument, NULL, 'L' },
		{ "reconnect", no_argument, NULL, 'r' },
		{ "fast", no_argument, NULL, 'F' }, { "zc", no_argument, NULL, 'Z' },
		{ "first", required_argument, NULL, '1' }, { "delay-ms", required_argument, NULL, 'D' },
		{ "taken-file", required_argument, NULL, 'K' },
		{ NULL, 0, NULL, 0 },
	};
	struct opts o = { .count = 1000, .seed = 1, .min = 1, .max = 65536, .timeout = 120, .first = 1 };
	int ch;

	if (argc < 2 || (strcmp(argv[1], "send") != 0 && strcmp(argv[1], "recv") != 0)) {
		fprintf(stderr, "usage: ldstest send|recv -s SOCK -n NAME (-t DST | -f SRC) -c COUNT ...\n");
		return 2;
	}
	optind = 2;
	while ((ch = getopt_long(argc, argv, "s:n:t:f:c:b:B:S:T:", lopts, NULL)) != -1) {
		switch (ch) {
		case 's': o.sock = optarg; break;
		case 'n': o.name = optarg; break;
		case 't': case 'f': o.peer = optarg; break;
		case 'c': o.count = strtoull(optarg, NULL, 10); break;
		case 'b': o.min = parse_size(optarg); break;
		case 'B': o.max = parse_size(optarg); break;
		case 'S': o.seed = strtoull(optarg, NULL, 10); break;
		case 'T': o.timeout = strtod(optarg, NULL); break;
		case 'R': o.resend_lost = 1; break;
		case 'L': o.lost_file = optarg; break;
		case 'r': o.reconnect = 1; break;
		case 'F': o.fast = 1; break;
		case 'Z': o.zc = 1; break;
		case '1': o.first = strtoull(optarg, NULL, 10); break;
		case 'D': o.delay_ms = strtol(optarg, NULL, 10); break;
		case 'K': o.taken_file = optarg; break;
		default: return 2;
		}
	}
	if (o.sock == NULL || o.name == NULL || o.count == 0 || (argv[1][0] == 's' && o.peer == NULL)) {
		fprintf(stderr, "ldstest: -s, -n, -c and (for send) -t are required\n");
		return 2;
	}
	if (o.first == 0 || o.first > o.count) {
		fprintf(stderr, "ldstest: --first must be 1..COUNT\n");
		return 2;
	}
	/* -T bounds the whole run, blocking calls included: a test must end. */
	signal(SIGALRM, on_time_limit);
	alarm((unsigned)o.timeout + 5);
	return argv[1][0] == 's' ? do_send(&o) : do_recv(&o);
}
