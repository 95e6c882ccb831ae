/*
 * clientattack - a hostile local client of ldsd, for tests/security/t_client_*.sh.
 *
 *   clientattack bigframe -s SOCK [-c CONNS] [-T S]   each conn declares a 256 MiB frame before HELLO, then waits
 *   clientattack partial -s SOCK -c CONNS -b BYTES [-T S]
 *                                                  each conn says HELLO, then writes all but the last
 *                                                  byte of a SEND of BYTES (as far as ldsd reads in
 *                                                  S/2 s), then waits; prints the bytes written
 *   clientattack conns -s SOCK -c CONNS [-T S]        opens CONNS connections without HELLO; prints how many
 *                                                  ldsd refused (ERROR) or closed, then holds the rest
 *   clientattack noread -s SOCK -c COUNT [-T S]       HELLO, then COUNT SENDs to a bad destination, never
 *                                                  reading the ERRORs; prints whether ldsd closed it
 *   clientattack flood -s SOCK -t CLUSTER -c COUNT [-b BYTES]
 *                                                  COUNT messages of BYTES to CLUSTER/never-1..COUNT (liblds)
 *   clientattack lost -s SOCK -n NAME -t DST -c COUNT -b BYTES [-T S]
 *                                                  sends a message of BYTES to each of DST1..DSTCOUNT
 *                                                  and waits up to S for each to be acked, lost or
 *                                                  refused; prints the counts
 *   clientattack hold -s SOCK -n NAME [-T S]          opens NAME (HELLO) and holds it, its socket shut
 *                                                  for reading
 *   clientattack open -s SOCK [-n NAME]               opens NAME (or an anonymous name): prints
 *                                                  "opened NAME" (exit 0) or "refused: TEXT" (exit 1)
 *   clientattack end -s SOCK -t TAG [-n CLUSTER] [-c JOB]
 *                                                  sends an exec-service END of job TAG (number JOB) to
 *                                                  CLUSTER/ldsd.exec (default: the gateway's own cluster):
 *                                                  prints "acked" (exit 0) or "refused: TEXT" (exit 1)
 *   clientattack squat -s SOCK -n PREFIX -c COUNT [-o FIRST] [-T S]
 *                                                  opens PREFIXFIRST.. (COUNT names; FIRST default 1)
 *                                                  and holds them
 *
 * Every wait is bounded by -T (default 10 s).  Exit 0 unless stated, 2 on
 * usage errors, 3 if the attack itself could not be carried out.
 */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <inttypes.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ldsd/clock.h"
#include "libclient/clientproto.h"
#include "ldsd/execmsg.h"
#include "libclient/lds.h"
#include "tests/security/sockio.h"

#define MAX_CONNS 4096

struct opts {
	const char *sock, *name, *dst;
	unsigned long count, first;
	size_t bytes;
	double timeout;
};

static int unix_connect(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);

	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	if (fd >= 0 && connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		close(fd);
		return -1;
	}
	return fd;
}

/* 1 if ldsd closed fd (or reset it) within ms, else 0; an ERROR text it
 * sent first goes to why. */
static int closed_within(int fd, int ms, char *why, size_t len)
{
	uint64_t end = clock_now_ns() + (uint64_t)ms * 1000000u;
	uint8_t buf[4096];
	size_t have = 0;

	for (;;) {
		int left = (int)(((int64_t)(end - clock_now_ns())) / 1000000);
		struct pollfd p = { .fd = fd, .events = POLLIN };
		ssize_t n;

		if (left <= 0 || poll(&p, 1, left) <= 0)
			return 0;
		n = read(fd, buf + have, sizeof(buf) - have);
		if (n <= 0) {
			struct cp_hdr h;
			struct cp_msg m;

			if (why && have >= CP_HDR_LEN && cp_hdr_parse(buf, &h) == 0 && h.type == CP_ERROR &&
			    have >= CP_HDR_LEN + h.len && cp_decode(&h, buf + CP_HDR_LEN, &m) == 0)
				snprintf(why, len, "%s", m.text);
			return 1;
		}
		have += (size_t)n;
		if (have == sizeof(buf))
			have = 0;
	}
}

static int send_hello(int fd, const char *name)
{
	struct cp_msg m = { .type = CP_HELLO, .version = CP_VERSION, .incarnation = 1 };
	uint8_t buf[CP_HDR_LEN + CP_HELLO_MAX_BODY];
	size_t n;

	snprintf(m.name, sizeof(m.name), "%s", name);
	n = cp_encode(buf, sizeof(buf), &m);
	return n ? write_all(fd, buf, n) : -1;
}

static int do_bigframe(const struct opts *o)
{
	static int fds[MAX_CONNS];
	unsigned long n = o->count ? o->count : 4, closed = 0;
	uint8_t hdr[CP_HDR_LEN + 64] = { 0 };

	/* A SEND header claiming the largest body, and a little of it. */
	cp_hdr_write(hdr, CP_SEND, CP_MAX_BODY);
	for (unsigned long i = 0; i < n && i < MAX_CONNS; i++) {
		fds[i] = unix_connect(o->sock);
		if (fds[i] < 0 || write_all(fds[i], hdr, sizeof(hdr)) < 0) {
			fprintf(stderr, "clientattack: connection %lu: %s\n", i, strerror(errno));
			return 3;
		}
	}
	for (unsigned long i = 0; i < n && i < MAX_CONNS; i++)
		closed += closed_within(fds[i], (int)(o->timeout * 1000 / (double)n) + 1, NULL, 0);
	printf("bigframe: %lu connections, %lu closed by ldsd\n", n, closed);
	return 0;
}

/* Polls the open fds of p until ms pass or all closed; each that ldsd
 * closes is closed here and counted (its ERROR text, if any, in why). */
static unsigned long wait_closed(struct pollfd *p, unsigned long n, int ms, char *why, size_t len)
{
	uint64_t end = clock_now_ns() + (uint64_t)ms * 1000000u;
	unsigned long closed = 0, open = 0;

	for (unsigned long i = 0; i < n; i++)
		open += p[i].fd >= 0;
	while (closed < open && clock_now_ns() < end) {
		if (poll(p, n, 50) <= 0)
			continue;
		for (unsigned long i = 0; i < n; i++) {
			if (p[i].fd >= 0 && p[i].revents && closed_within(p[i].fd, 10, why, len)) {
				close(p[i].fd);
				p[i].fd = -1;
				closed++;
			}
		}
	}
	return closed;
}

static int do_conns(const struct opts *o)
{
	static struct pollfd p[MAX_CONNS];
	unsigned long n = o->count < MAX_CONNS ? o->count : MAX_CONNS, refused, closed;
	char why[256] = "";

	for (unsigned long i = 0; i < n; i++) {
		p[i] = (struct pollfd){ .fd = unix_connect(o->sock), .events = POLLIN };
		if (p[i].fd < 0) {
			fprintf(stderr, "clientattack: connection %lu: %s\n", i, strerror(errno));
			return 3;
		}
	}
	/* A refused connection is answered and closed at once: well within
	 * the first second, before any hello_timeout of the tests. */
	refused = wait_closed(p, n, 1000, why, sizeof(why));
	printf("conns: %lu opened, %lu refused%s%s\n", n, refused, why[0] ? ": " : "", why);
	fflush(stdout);
	/* The others: does ldsd close them for not saying HELLO? */
	closed = wait_closed(p, n, (int)(o->timeout * 1000), NULL, 0);
	printf("conns: %lu of %lu closed by ldsd within %.0f s\n", closed, n - refused, o->timeout);
	return 0;
}

static int do_partial(const struct opts *o)
{
	static int fds[MAX_CONNS];
	static size_t done[MAX_CONNS];
	static uint8_t chunk[1 << 16];
	unsigned long n = o->count < MAX_CONNS ? o->count : MAX_CONNS;
	struct cp_msg m = { .type = CP_SEND, .msg_id = 1, .payload_len = (uint32_t)o->bytes };
	uint8_t hdr[CP_HDR_LEN + 64];
	size_t hl, total = 0, want;
	uint64_t end = clock_now_ns() + (uint64_t)(o->timeout * 1e9 / 2);
	int busy = 1;

	snprintf(m.name, sizeof(m.name), "x/y");
	hl = cp_encode(hdr, sizeof(hdr), &m);
	want = hl + o->bytes - 1;
	for (unsigned long i = 0; i < n; i++) {
		fds[i] = unix_connect(o->sock);
		if (fds[i] < 0 || send_hello(fds[i], "") < 0 || write_all(fds[i], hdr, hl) < 0) {
			fprintf(stderr, "clientattack: connection %lu: %s\n", i, strerror(errno));
			return 3;
		}
		done[i] = hl;
		fcntl(fds[i], F_SETFL, O_NONBLOCK);
	}
	while (busy && clock_now_ns() < end) {
		busy = 0;
		for (unsigned long i = 0; i < n; i++) {
			size_t k = want - done[i] < sizeof(chunk) ? want - done[i] : sizeof(chunk);
			ssize_t w = k ? write(fds[i], chunk, k) : 0;

			if (w > 0)
				done[i] += (size_t)w;
			busy |= done[i] < want;
		}
		if (busy)
			usleep(1000);
	}
	for (unsigned long i = 0; i < n; i++)
		total += done[i];
	printf("partial: %lu connections, %zu MiB written\n", n, total >> 20);
	fflush(stdout);
	sleep((unsigned)(o->timeout / 2));
	return 0;
}

static int do_noread(const struct opts *o)
{
	struct cp_msg m = { .type = CP_SEND };
	uint8_t buf[CP_HDR_LEN + 64];
	int fd = unix_connect(o->sock);
	unsigned long sent = 0;
	uint64_t end = clock_now_ns() + (uint64_t)(o->timeout * 1e9);
	size_t n;

	snprintf(m.name, sizeof(m.name), "no/such//destination");
	if (fd < 0 || send_hello(fd, "") < 0) {
		fprintf(stderr, "clientattack: %s\n", strerror(errno));
		return 3;
	}
	for (; sent < o->count && clock_now_ns() < end; sent++) {
		m.msg_id = sent + 1;
		n = cp_encode(buf, sizeof(buf), &m);
		if (write_all(fd, buf, n) < 0)
			break;
	}
	printf("noread: %lu SENDs written, connection %s\n", sent,
	       sent < o->count ? "closed by ldsd" : closed_within(fd, 2000, NULL, 0) ? "closed by ldsd" : "still open");
	return 0;
}

static struct lds *open_or_die(const struct opts *o, const char *name)
{
	int err = 0;
	struct lds *h = lds_open(o->sock, name, 5000, &err);

	if (h == NULL)
		fprintf(stderr, "clientattack: cannot open %s: %s\n", name ? name : "(anonymous)", lds_strerror(err));
	return h;
}

static int do_flood(const struct opts *o)
{
	struct lds *h = open_or_die(o, NULL);
	static uint8_t payload[1 << 16];
	char dst[LDS_NAME_MAX];
	struct lds_event ev;

	if (h == NULL)
		return 3;
	lds_set_ack_events(h, 0);
	for (unsigned long i = 1; i <= o->count; i++) {
		snprintf(dst, sizeof(dst), "%s/never-%lu", o->dst, i);
		if (lds_send(h, dst, payload, o->bytes < sizeof(payload) ? o->bytes : sizeof(payload), NULL) < 0) {
			fprintf(stderr, "clientattack: send %lu failed\n", i);
			return 3;
		}
		while (lds_next_event(h, &ev) == 1)
			;
	}
	lds_flush(h, (int)(o->timeout * 1000));
	printf("flood: %lu messages sent\n", o->count);
	lds_close(h);
	return 0;
}

static int do_lost(const struct opts *o)
{
	struct lds *h = open_or_die(o, o->name);
	uint64_t end = clock_now_ns() + (uint64_t)(o->timeout * 1e9);
	unsigned long acked = 0, lost = 0, failed = 0;
	uint8_t *buf = calloc(1, o->bytes ? o->bytes : 1);
	struct lds_event ev;
	char text[256] = "";

	if (h == NULL || buf == NULL)
		return 3;
	lds_set_ack_events(h, 1);
	for (unsigned long i = 1; i <= o->count; i++) {
		char dst[LDS_NAME_MAX];

		snprintf(dst, sizeof(dst), "%s%lu", o->dst, i);
		if (lds_send(h, dst, buf, o->bytes, NULL) < 0) {
			fprintf(stderr, "clientattack: send failed\n");
			return 3;
		}
	}
	while (acked + lost + failed < o->count && clock_now_ns() < end) {
		int r = lds_next_event(h, &ev);

		if (r < 0)
			break;
		if (r == 0) {
			struct pollfd p = { .fd = lds_fd(h), .events = POLLIN };

			poll(&p, 1, 100);
			lds_process(h);
			continue;
		}
		if (ev.type == LDS_EV_ACKED)
			acked += ev.last - ev.first + 1;
		else if (ev.type == LDS_EV_LOST)
			lost += ev.last - ev.first + 1;
		else
			failed += ev.first ? 1 : 0;
		if (ev.type != LDS_EV_ACKED)
			snprintf(text, sizeof(text), "%s", ev.text);
	}
	printf("lost: %lu acked, %lu lost, %lu refused%s%s\n", acked, lost, failed, text[0] ? "; last reason: " : "",
	       text);
	free(buf);
	lds_close(h);
	return 0;
}

static int do_hold(const struct opts *o)
{
	int fd = unix_connect(o->sock);

	/* Shut for reading, the socket takes nothing from ldsd: what arrives
	 * for the name stays in ldsd's memory. */
	if (fd < 0 || send_hello(fd, o->name) < 0 || shutdown(fd, SHUT_RD) < 0)
		return 3;
	printf("hold: %s\n", o->name);
	fflush(stdout);
	sleep((unsigned)o->timeout);
	return 0;
}

static int do_open(const struct opts *o)
{
	int err = 0;
	struct lds *h = lds_open(o->sock, o->name, 5000, &err);
	struct lds_event ev;

	if (h == NULL) {
		printf("refused: %s\n", lds_strerror(err));
		return 1;
	}
	printf("opened %s\n", lds_name(h));
	while (lds_next_event(h, &ev) == 1)
		;
	lds_close(h);
	return 0;
}

static int do_squat(const struct opts *o)
{
	static struct lds *hs[MAX_CONNS];
	unsigned long n = o->count < MAX_CONNS ? o->count : MAX_CONNS, got = 0;
	char name[LDS_NAME_MAX];

	for (unsigned long i = 0; i < n; i++) {
		snprintf(name, sizeof(name), "%s%lu", o->name, o->first + i);
		hs[i] = lds_open(o->sock, name, 5000, NULL);
		got += hs[i] != NULL;
	}
	printf("squat: holding %lu of %lu names\n", got, n);
	fflush(stdout);
	sleep((unsigned)o->timeout);
	return 0;
}

static int do_end(const struct opts *o)
{
	struct exec_msg m = { .type = EXEC_END, .job = (uint32_t)o->count };
	struct lds *h = lds_open(o->sock, NULL, 5000, NULL);
	char dst[LDS_NAME_MAX];
	struct lds_event ev;
	uint8_t buf[512];
	uint64_t id = 0;
	size_t n;

	if (h == NULL || o->dst == NULL)
		return 3;
	snprintf(m.text, sizeof(m.text), "%s", o->dst);
	n = exec_encode(&m, buf, sizeof(buf));
	snprintf(dst, sizeof(dst), "%s/%s", o->name ? o->name : lds_cluster(h), EXEC_ENDPOINT);
	if (n == 0 || lds_send(h, dst, buf, n, &id) < 0 || lds_wait_settled(h, id, (int)(o->timeout * 1000)) < 0)
		return 3;
	while (lds_next_event(h, &ev) == 1)
		if (ev.type == LDS_EV_ERROR || ev.type == LDS_EV_LOST) {
			printf("refused: %s\n", ev.text);
			lds_close(h);
			return 1;
		}
	printf("acked\n");
	lds_close(h);
	return 0;
}

int main(int argc, char **argv)
{
	static const struct {
		const char *name;
		int (*fn)(const struct opts *o);
	} modes[] = {
		{ "bigframe", do_bigframe }, { "partial", do_partial }, { "conns", do_conns }, { "noread", do_noread }, { "flood", do_flood },
		{ "lost", do_lost },         { "hold", do_hold },   { "open", do_open },     { "squat", do_squat },
		{ "end", do_end },
	};
	struct opts o = { .count = 1, .first = 1, .timeout = 10, .bytes = 0 };
	char *end;
	int ch;

	if (argc < 2) {
		fprintf(stderr, "usage: clientattack MODE -s SOCK [-n NAME] [-t DST] [-c COUNT] [-b BYTES] [-T S]\n");
		return 2;
	}
	optind = 2;
	while ((ch = getopt(argc, argv, "s:n:t:c:o:b:T:")) != -1) {
		switch (ch) {
		case 's': o.sock = optarg; break;
		case 'n': o.name = optarg; break;
		case 't': o.dst = optarg; break;
		case 'c': o.count = strtoul(optarg, NULL, 10); break;
		case 'o': o.first = strtoul(optarg, NULL, 10); break;
		case 'b':
			o.bytes = strtoul(optarg, &end, 10);
			if (*end == 'k')
				o.bytes <<= 10;
			else if (*end == 'M')
				o.bytes <<= 20;
			break;
		case 'T': o.timeout = strtod(optarg, NULL); break;
		default: return 2;
		}
	}
	if (o.sock == NULL) {
		fprintf(stderr, "clientattack: -s SOCK is required\n");
		return 2;
	}
	/* Every mode ends: a test must.  A write to a socket ldsd closed
	 * fails rather than kills. */
	alarm((unsigned)o.timeout + 30);
	signal(SIGPIPE, SIG_IGN);
	for (size_t i = 0; i < sizeof(modes) / sizeof(modes[0]); i++)
		if (strcmp(argv[1], modes[i].name) == 0)
			return modes[i].fn(&o);
	fprintf(stderr, "clientattack: unknown mode %s\n", argv[1]);
	return 2;
}
