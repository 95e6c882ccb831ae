/* probe.c - `wanemu probe`: a UDP echo client and server that measure what
 * a path really does (round-trip times, loss, the longest silence), with
 * the kernel's clock and sockets only, to check the emulator from outside. */
#include <errno.h>
#include <getopt.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "ldsd/clock.h"
#include "wanemu.h"

#define PROBE_MAGIC 0x57414e45u /* "WANE" */
#define PROBE_DEFAULT_PORT 7777

struct probe_opts {
	int server, tcp;
	uint64_t tcp_bytes;
	unsigned port;
	unsigned long count;
	uint64_t interval_ns, wait_ns, lifetime_ns;
	size_t size;
	const char *host;
};

struct probe_msg {
	uint32_t magic, seq;
	uint64_t sent_ns;
};

static void probe_usage(FILE *out)
{
	fputs("usage: wanemu probe [-p PORT] [-c COUNT] [-i INTERVAL] [-s SIZE] [-w WAIT] ADDRESS\n"
	      "       wanemu probe --server [-p PORT] [-t LIFETIME]\n"
	      "       wanemu probe --tcp BYTES [-p PORT] ADDRESS | --tcp-server [-p PORT]\n"
	      "  -S, --server          echo every datagram back (run it in the far site)\n"
	      "  -p, --port N          UDP port (default 7777)\n"
	      "  -c, --count N         datagrams to send (default 100)\n"
	      "  -i, --interval DUR    between datagrams (default 10ms; 100us, 1ms, 1s)\n"
	      "  -s, --size BYTES      UDP payload (default 64, at least 16)\n"
	      "  -w, --wait DUR        how long to wait for late echoes (default 1s)\n"
	      "  -t, --lifetime DUR    server: exit after this long (default: on SIGTERM)\n"
	      "  -T, --tcp BYTES       send BYTES of a position-keyed pattern over TCP\n"
	      "  -R, --tcp-server      accept one TCP connection and check the pattern:\n"
	      "                        prints {bytes, mismatch_at (-1: none)}, exit 1 on mismatch\n"
	      "prints one JSON object: sent, received, lost, duplicates, reordered,\n"
	      "rtt_ms {min, median, mean, p99, max}, loss_runs, longest_loss_run,\n"
	      "longest_gap_ms\n"
	      "exit status: 0 ok, 1 network error, 2 usage\n", out);
}

/* Byte off of the TCP check stream: a hash of its position, so that a
 * segment copied to the wrong place cannot look right. */
static unsigned char probe_pattern(uint64_t off)
{
	uint64_t z = (off >> 3) * 0x9e3779b97f4a7c15ull;

	z = (z ^ (z >> 31)) * 0xbf58476d1ce4e5b9ull;
	return (unsigned char)((z ^ (z >> 29)) >> ((off & 7) * 8));
}

/* Accepts one connection and checks every byte against the pattern. */
static int probe_tcp_server(int lfd, const struct probe_opts *o)
{
	unsigned char buf[65536];
	uint64_t got = 0, bad = UINT64_MAX;
	ssize_t n;
	int fd;

	if (listen(lfd, 1) < 0 || (fd = accept(lfd, NULL, NULL)) < 0) {
		fprintf(stderr, "wanemu probe: no TCP connection on port %u: %s\n", o->port, strerror(errno));
		return 1;
	}
	while ((n = read(fd, buf, sizeof(buf))) > 0) {
		for (ssize_t i = 0; i < n && bad == UINT64_MAX; i++)
			if (buf[i] != probe_pattern(got + (uint64_t)i))
				bad = got + (uint64_t)i;
		got += (uint64_t)n;
	}
	close(fd);
	printf("{\"bytes\":%llu,\"mismatch_at\":%lld,\"error\":", (unsigned long long)got,
	       bad == UINT64_MAX ? -1ll : (long long)bad);
	if (n < 0)
		printf("\"%s\"}\n", strerror(errno));
	else
		printf("null}\n");
	return n < 0 || bad != UINT64_MAX;
}

static int probe_tcp_client(const struct sockaddr_in *sa, const struct probe_opts *o)
{
	unsigned char buf[65536];
	uint64_t sent = 0;
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);

	if (fd < 0 || connect(fd, (const struct sockaddr *)sa, sizeof(*sa)) < 0) {
		fprintf(stderr, "wanemu probe: TCP connect to %s:%u: %s\n", o->host, o->port, strerror(errno));
		goto fail;
	}
	while (sent < o->tcp_bytes) {
		size_t n = o->tcp_bytes - sent < sizeof(buf) ? (size_t)(o->tcp_bytes - sent) : sizeof(buf);
		ssize_t w;

		for (size_t i = 0; i < n; i++)
			buf[i] = probe_pattern(sent + i);
		w = write(fd, buf, n);
		if (w <= 0) {
			fprintf(stderr, "wanemu probe: TCP write to %s after %llu bytes: %s\n", o->host,
				(unsigned long long)sent, strerror(errno));
			goto fail;
		}
		/* A short write leaves the rest of buf for the next round. */
		sent += (uint64_t)w;
	}
	close(fd);
	printf("{\"bytes_sent\":%llu}\n", (unsigned long long)sent);
	return 0;
fail:
	if (fd >= 0)
		close(fd);
	return 1;
}

static int probe_server(const struct probe_opts *o)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)o->port) };
	uint64_t end = o->lifetime_ns ? clock_now_ns() + o->lifetime_ns : UINT64_MAX;
	char buf[65536];
	int fd = socket(AF_INET, (o->tcp ? SOCK_STREAM : SOCK_DGRAM) | SOCK_CLOEXEC, 0);

	if (fd >= 0)
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &(int){ 1 }, sizeof(int));
	if (fd < 0 || bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "wanemu probe: cannot bind %s port %u: %s\n", o->tcp ? "TCP" : "UDP", o->port,
			strerror(errno));
		return 1;
	}
	if (o->tcp) {
		int rc;

		/* SO_RCVTIMEO bounds accept() and each read by the lifetime. */
		if (o->lifetime_ns)
			setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &(struct timeval){ .tv_sec = (time_t)(o->lifetime_ns / 1000000000ull),
				   .tv_usec = (long)(o->lifetime_ns % 1000000000ull / 1000) }, sizeof(struct timeval));
		rc = probe_tcp_server(fd, o);

		close(fd);
		return rc;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &(struct timeval){ .tv_usec = 100000 }, sizeof(struct timeval));
	while (clock_now_ns() < end) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(fd, buf, sizeof(buf), 0, (struct sockaddr *)&from, &fl);

		if (n > 0)
			sendto(fd, buf, (size_t)n, 0, (struct sockaddr *)&from, fl);
	}
	close(fd);
	return 0;
}

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

struct probe_result {
	unsigned char *got;             /* per sequence number */
	double *rtt;
	unsigned long nrtt, dups, reordered;
	uint32_t max_seq;
	uint64_t last_arrival, longest_gap;
};

static void probe_receive(int fd, const struct probe_opts *o, struct probe_result *r)
{
	unsigned char buf[65536];
	struct probe_msg m;
	ssize_t n;

	while ((n = recv(fd, buf, sizeof(buf), MSG_DONTWAIT)) >= (ssize_t)sizeof(m)) {
		uint64_t now = clock_now_ns();

		memcpy(&m, buf, sizeof(m));
		if (m.magic != PROBE_MAGIC || m.seq >= o->count)
			continue;
		if (r->got[m.seq]) {
			r->dups++;
			continue;
		}
		r->got[m.seq] = 1;
		r->rtt[r->nrtt++] = (double)(now - m.sent_ns) / 1e6;
		if (r->nrtt > 1 && m.seq < r->max_seq)
			r->reordered++;
		if (m.seq > r->max_seq)
			r->max_seq = m.seq;
		if (r->last_arrival && now - r->last_arrival > r->longest_gap)
			r->longest_gap = now - r->last_arrival;
		r->last_arrival = now;
	}
}

static void probe_report(const struct probe_opts *o, struct probe_result *r)
{
	unsigned long run = 0, longest = 0, runs = 0;
	double sum = 0;

	for (unsigned long i = 0; i < o->count; i++) {
		runs += !r->got[i] && run == 0;
		run = r->got[i] ? 0 : run + 1;
		if (run > longest)
			longest = run;
	}
	for (unsigned long i = 0; i < r->nrtt; i++)
		sum += r->rtt[i];
	qsort(r->rtt, r->nrtt, sizeof(double), cmp_double);
	printf("{\"sent\":%lu,\"received\":%lu,\"lost\":%lu,\"duplicates\":%lu,\"reordered\":%lu,", o->count,
	       r->nrtt, o->count - r->nrtt, r->dups, r->reordered);
	if (r->nrtt)
		printf("\"rtt_ms\":{\"min\":%.3f,\"median\":%.3f,\"mean\":%.3f,\"p99\":%.3f,\"max\":%.3f},",
		       r->rtt[0], r->rtt[r->nrtt / 2], sum / (double)r->nrtt, r->rtt[(r->nrtt - 1) * 99 / 100],
		       r->rtt[r->nrtt - 1]);
	else
		printf("\"rtt_ms\":null,");
	printf("\"loss_runs\":%lu,\"longest_loss_run\":%lu,\"longest_gap_ms\":%.3f}\n", runs, longest,
	       (double)r->longest_gap / 1e6);
}

/* Until fd is readable or ns have passed. */
static void probe_wait(int fd, uint64_t ns)
{
	struct pollfd p = { .fd = fd, .events = POLLIN };
	struct timespec ts = { .tv_sec = (time_t)(ns / 1000000000ull), .tv_nsec = (long)(ns % 1000000000ull) };

	ppoll(&p, 1, &ts, NULL);
}

static int probe_client(const struct probe_opts *o)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)o->port) };
	struct probe_result r = { 0 };
	unsigned char *msg = calloc(1, o->size);
	uint64_t start, end;
	unsigned long sent = 0;
	int fd, rc = 1;

	r.got = calloc(o->count, 1);
	r.rtt = calloc(o->count, sizeof(double));
	if (inet_pton(AF_INET, o->host, &sa.sin_addr) != 1) {
		fprintf(stderr, "wanemu probe: '%s' is not an IPv4 address\n", o->host);
		free(msg), free(r.got), free(r.rtt);
		return 2;
	}
	if (o->tcp) {
		free(msg), free(r.got), free(r.rtt);
		return probe_tcp_client(&sa, o);
	}
	fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (msg == NULL || r.got == NULL || r.rtt == NULL || fd < 0 ||
	    connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		fprintf(stderr, "wanemu probe: cannot reach %s:%u: %s\n", o->host, o->port, strerror(errno));
		goto out;
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVBUF, &(int){ 4 << 20 }, sizeof(int));
	start = clock_now_ns();
	while (sent < o->count) {
		uint64_t now = clock_now_ns(), due = start + sent * o->interval_ns;
		struct probe_msg m = { PROBE_MAGIC, (uint32_t)sent, now };

		if (now < due) {
			probe_wait(fd, due - now);
			probe_receive(fd, o, &r);
			continue;
		}
		memcpy(msg, &m, sizeof(m));
		/* ECONNREFUSED: an ICMP error for an earlier datagram (no
		 * server yet); the path itself is what is being measured. */
		if (send(fd, msg, o->size, 0) < 0 && errno != ECONNREFUSED) {
			fprintf(stderr, "wanemu probe: sending to %s: %s\n", o->host, strerror(errno));
			goto out;
		}
		sent++;
	}
	end = clock_now_ns() + o->wait_ns;
	for (uint64_t now = clock_now_ns(); r.nrtt < o->count && now < end; now = clock_now_ns()) {
		probe_wait(fd, end - now);
		probe_receive(fd, o, &r);
	}
	probe_report(o, &r);
	rc = 0;
out:
	if (fd >= 0)
		close(fd);
	free(msg);
	free(r.got);
	free(r.rtt);
	return rc;
}

int probe_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "server", no_argument, NULL, 'S' }, { "port", required_argument, NULL, 'p' },
		{ "count", required_argument, NULL, 'c' }, { "interval", required_argument, NULL, 'i' },
		{ "size", required_argument, NULL, 's' }, { "wait", required_argument, NULL, 'w' },
		{ "lifetime", required_argument, NULL, 't' }, { "tcp", required_argument, NULL, 'T' },
		{ "tcp-server", no_argument, NULL, 'R' }, { "help", no_argument, NULL, 'h' }, { 0 }
	};
	struct probe_opts o = { .port = PROBE_DEFAULT_PORT, .count = 100, .interval_ns = 10000000ull,
				.wait_ns = 1000000000ull, .size = 64 };
	uint64_t v;
	int c;

	while ((c = getopt_long(argc, argv, "Sp:c:i:s:w:t:T:Rh", opts, NULL)) != -1) {
		const char *bad = NULL;

		switch (c) {
		case 'S':
			o.server = 1;
			break;
		case 'p':
			if (spec_size(optarg, &v) < 0 || v == 0 || v > 65535)
				bad = "port";
			o.port = (unsigned)v;
			break;
		case 'c':
			if (spec_size(optarg, &v) < 0 || v == 0 || v > 100000000)
				bad = "count";
			o.count = (unsigned long)v;
			break;
		case 'i':
			if (spec_duration(optarg, &o.interval_ns) < 0)
				bad = "interval";
			break;
		case 's':
			if (spec_size(optarg, &v) < 0 || v < sizeof(struct probe_msg) || v > 65000)
				bad = "size";
			o.size = (size_t)v;
			break;
		case 'w':
			if (spec_duration(optarg, &o.wait_ns) < 0)
				bad = "wait";
			break;
		case 't':
			if (spec_duration(optarg, &o.lifetime_ns) < 0)
				bad = "lifetime";
			break;
		case 'T':
			if (spec_size(optarg, &o.tcp_bytes) < 0)
				bad = "byte count";
			o.tcp = 1;
			break;
		case 'R':
			o.server = o.tcp = 1;
			break;
		case 'h':
			probe_usage(stdout);
			return 0;
		default:
			probe_usage(stderr);
			return 2;
		}
		if (bad != NULL) {
			fprintf(stderr, "wanemu probe: bad %s '%s'\n", bad, optarg);
			return 2;
		}
	}
	if (o.server)
		return optind == argc ? probe_server(&o) : (probe_usage(stderr), 2);
	if (optind != argc - 1) {
		probe_usage(stderr);
		return 2;
	}
	o.host = argv[optind];
	return probe_client(&o);
}
