/*
 * ldsattack - attacks a gateway's peer port the way docs/security.md's
 * "Before authentication" says an Internet host can, for tests/security.
 *
 *   ldsattack MODE -p PORT [-a ADDR] [-n N] [-t SECONDS] [-s SRC [-S NSRC]]
 *             [-r] [-R MS] [-B BYTES] [-f FROM] [-T TO]
 *
 * Modes, each over N connections (opened at once, from NSRC consecutive
 * source addresses starting at SRC, e.g. 127.0.0.2):
 *   stall     send a valid HELLO (FROM asking for TO), then nothing
 *   hold      send nothing at all
 *   big       send a frame header declaring the largest payload
 *             (16 MiB + 8), then BYTES of it
 *   bighello  a valid HELLO, then such a header and BYTES
 *   wrongkey  N handshakes one after the other, each with an AUTH whose
 *             MAC is random: the wrong key
 * The connection modes run for SECONDS, or until SIGUSR1 (a test that has
 * checked what it needed under attack ends it there); with -r a
 * connection the gateway closes is opened again RMS later (default 500).
 * At the end one line:
 *   opened=.. open=.. closed=.. failed=..        (connection modes)
 *   attempts=.. refused_auth=.. dropped=.. other=.. seconds=..   (wrongkey)
 * open: connections established and not closed by the gateway at the end.
 * Exit status 0, or 2 on bad usage.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <unistd.h>

#include "ldsd/auth.h"
#include "ldsd/clock.h"
#include "ldsd/wire.h"

enum mode { M_STALL, M_HOLD, M_BIG, M_BIGHELLO, M_WRONGKEY };

struct opts {
	enum mode mode;
	const char *addr, *src, *from, *to;
	unsigned port, n, nsrc, reopen_ms;
	int reopen;
	double seconds;
	size_t bytes;
};

struct conn {
	int fd;                  /* -1: closed */
	int connected;
	size_t sent;             /* bytes of the payload sent */
	uint64_t reopen_ns;      /* when a closed one opens again */
};

static uint8_t payload[WIRE_HDR_LEN + 256];
static size_t payload_len;
static uint8_t filler[65536];

static void usage(void)
{
	fprintf(stderr, "usage: ldsattack stall|hold|big|bighello|wrongkey -p PORT [-a ADDR] [-n N] [-t SECONDS]\n"
			"                 [-s SRC [-S NSRC]] [-r] [-R MS] [-B BYTES] [-f FROM] [-T TO]\n");
	exit(2);
}

static size_t hello(uint8_t *buf, size_t cap, const struct opts *o)
{
	struct wire_hello h = { .stream_idx = 0, .nstreams = 1, .max_msg = 1 << 20, .instance = 1, .encryption = WIRE_ENC_AEAD };

	if (auth_random(h.nonce, sizeof(h.nonce)) < 0)
		return 0;
	snprintf(h.from, sizeof(h.from), "%s", o->from);
	snprintf(h.to, sizeof(h.to), "%s", o->to);
	return wire_encode_hello(buf, cap, &h);
}

/* What a connection sends first: a HELLO and/or a header declaring
 * WIRE_MAX_PAYLOAD bytes (whose CRC never matters: it is never complete). */
static void build_payload(const struct opts *o)
{
	if (o->mode == M_STALL || o->mode == M_BIGHELLO)
		payload_len = hello(payload, sizeof(payload), o);
	if (o->mode == M_BIG || o->mode == M_BIGHELLO) {
		uint8_t *h = payload + payload_len;

		h[0] = 0x4C, h[1] = 0x44, h[2] = WIRE_VERSION, h[3] = 1;
		h[4] = (uint8_t)(WIRE_MAX_PAYLOAD >> 24), h[5] = (uint8_t)(WIRE_MAX_PAYLOAD >> 16);
		h[6] = (uint8_t)(WIRE_MAX_PAYLOAD >> 8), h[7] = (uint8_t)WIRE_MAX_PAYLOAD;
		memset(h + 8, 0, 4);
		payload_len += WIRE_HDR_LEN;
	}
}

/* A nonblocking socket connecting to the gateway from source i. */
static int open_conn(const struct opts *o, unsigned i)
{
	struct sockaddr_in sa = { .sin_family = AF_INET, .sin_port = htons((uint16_t)o->port) };
	int fd = socket(AF_INET, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	if (fd < 0)
		return -1;
	if (o->src) {
		struct sockaddr_in ss = { .sin_family = AF_INET };

		inet_pton(AF_INET, o->src, &ss.sin_addr);
		ss.sin_addr.s_addr = htonl(ntohl(ss.sin_addr.s_addr) + i % o->nsrc);
		if (bind(fd, (struct sockaddr *)&ss, sizeof(ss)) < 0) {
			close(fd);
			return -1;
		}
	}
	inet_pton(AF_INET, o->addr, &sa.sin_addr);
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 && errno != EINPROGRESS) {
		close(fd);
		return -1;
	}
	return fd;
}

/* Sends what c still has to send; returns -1 if the connection broke. */
static int conn_send(const struct opts *o, struct conn *c)
{
	size_t total = payload_len + (o->mode == M_BIG || o->mode == M_BIGHELLO ? o->bytes : 0);

	while (c->sent < total) {
		const uint8_t *p = c->sent < payload_len ? payload + c->sent : filler;
		size_t len = c->sent < payload_len ? payload_len - c->sent : total - c->sent;
		ssize_t w = send(c->fd, p, len < sizeof(filler) ? len : sizeof(filler), MSG_NOSIGNAL);

		if (w < 0)
			return errno == EAGAIN ? 0 : -1;
		c->sent += (size_t)w;
	}
	return 0;
}

static void conn_close(const struct opts *o, struct conn *c, unsigned *closed)
{
	close(c->fd);
	c->fd = -1;
	(*closed)++;
	c->reopen_ns = o->reopen ? clock_now_ns() + (uint64_t)o->reopen_ms * 1000000 : UINT64_MAX;
}

static volatile sig_atomic_t stop_now;

static void on_usr1(int sig)
{
	(void)sig;
	stop_now = 1;
}

static void run_conns(const struct opts *o)
{
	struct conn *cs = calloc(o->n, sizeof(*cs));
	struct pollfd *pf = calloc(o->n, sizeof(*pf));
	uint64_t end = clock_now_ns() + (uint64_t)(o->seconds * 1e9);
	unsigned opened = 0, closed = 0, failed = 0, open = 0;
	char junk[4096];

	if (cs == NULL || pf == NULL) {
		perror("ldsattack");
		exit(1);
	}
	for (unsigned i = 0; i < o->n; i++)
		cs[i].fd = -1;
	while (!stop_now && clock_now_ns() < end) {
		uint64_t now = clock_now_ns();

		for (unsigned i = 0; i < o->n; i++) {
			struct conn *c = &cs[i];

			if (c->fd < 0 && now >= c->reopen_ns) {
				c->fd = open_conn(o, i);
				c->connected = 0;
				c->sent = 0;
				if (c->fd < 0) {
					failed++;
					c->reopen_ns = o->reopen ? now + (uint64_t)o->reopen_ms * 1000000 : UINT64_MAX;
				}
			}
			pf[i].fd = c->fd;
			pf[i].events = c->fd < 0 ? 0 : POLLIN | (c->connected && c->sent >= payload_len + o->bytes ? 0 : POLLOUT);
			pf[i].revents = 0;
		}
		if (poll(pf, o->n, 50) < 0 && errno != EINTR)
			break;
		for (unsigned i = 0; i < o->n; i++) {
			struct conn *c = &cs[i];

			if (c->fd < 0 || pf[i].revents == 0)
				continue;
			if (!c->connected && (pf[i].revents & (POLLOUT | POLLERR | POLLHUP))) {
				int err = 0;
				socklen_t el = sizeof(err);

				getsockopt(c->fd, SOL_SOCKET, SO_ERROR, &err, &el);
				if (err) {
					close(c->fd);
					c->fd = -1;
					failed++;
					c->reopen_ns = o->reopen ? clock_now_ns() + (uint64_t)o->reopen_ms * 1000000 : UINT64_MAX;
					continue;
				}
				c->connected = 1;
				opened++;
			}
			if (c->connected && (pf[i].revents & POLLOUT) && conn_send(o, c) < 0) {
				conn_close(o, c, &closed);
				continue;
			}
			if (pf[i].revents & (POLLIN | POLLERR | POLLHUP)) {
				ssize_t r = recv(c->fd, junk, sizeof(junk), MSG_DONTWAIT);

				if (r == 0 || (r < 0 && errno != EAGAIN))
					conn_close(o, c, &closed);
			}
		}
	}
	for (unsigned i = 0; i < o->n; i++) {
		if (cs[i].fd >= 0) {
			open += cs[i].connected;
			close(cs[i].fd);
		}
	}
	printf("opened=%u open=%u closed=%u failed=%u\n", opened, open, closed, failed);
	free(cs);
	free(pf);
}

/* Reads one frame (blocking, with the socket's timeout) into buf. */
static int read_frame(int fd, uint8_t *buf, size_t cap, struct wire_frame *f)
{
	size_t have = 0, need = WIRE_HDR_LEN;

	for (;;) {
		int r = wire_frame_parse(buf, have, f, &need);
		ssize_t n;

		if (r != 0)
			return r;
		if (need > cap)
			return -EMSGSIZE;
		n = recv(fd, buf + have, need - have, 0);
		if (n <= 0)
			return -EPIPE;
		have += (size_t)n;
	}
}

/* One handshake with a wrong key: 1 refused with AUTH, 0 dropped before
 * a CHALLENGE, -1 anything else. */
static int wrong_key_once(const struct opts *o)
{
	uint8_t buf[WIRE_HDR_LEN + 1024];
	struct timeval tv = { .tv_sec = 3 };
	struct wire_frame f;
	struct wire_auth a;
	struct wire_refuse_msg rf;
	size_t n;
	int fd = open_conn(o, 0), r = -1, fl;

	if (fd < 0)
		return 0;
	fl = fcntl(fd, F_GETFL);
	fcntl(fd, F_SETFL, fl & ~O_NONBLOCK);
	{
		struct pollfd p = { .fd = fd, .events = POLLOUT };
		int err = 0;
		socklen_t el = sizeof(err);

		if (poll(&p, 1, 3000) != 1 || getsockopt(fd, SOL_SOCKET, SO_ERROR, &err, &el) < 0 || err) {
			close(fd);
			return 0;
		}
	}
	setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	n = hello(buf, sizeof(buf), o);
	if (send(fd, buf, n, MSG_NOSIGNAL) != (ssize_t)n || read_frame(fd, buf, sizeof(buf), &f) != 1 ||
	    f.type != WIRE_CHALLENGE) {
		close(fd);
		return 0;
	}
	if (auth_random(a.mac, sizeof(a.mac)) == 0 && (n = wire_encode_auth(buf, sizeof(buf), &a)) > 0 &&
	    send(fd, buf, n, MSG_NOSIGNAL) == (ssize_t)n && read_frame(fd, buf, sizeof(buf), &f) == 1 &&
	    f.type == WIRE_REFUSE && wire_decode_refuse(&f, &rf) == 0 && rf.code == WIRE_REFUSE_AUTH)
		r = 1;
	close(fd);
	return r;
}

static void run_wrong_key(const struct opts *o)
{
	uint64_t t0 = clock_now_ns();
	unsigned refused = 0, dropped = 0, other = 0;

	for (unsigned i = 0; i < o->n; i++) {
		int r = wrong_key_once(o);

		refused += r == 1;
		dropped += r == 0;
		other += r < 0;
	}
	printf("attempts=%u refused_auth=%u dropped=%u other=%u seconds=%.3f\n", o->n, refused, dropped, other,
	       (double)(clock_now_ns() - t0) / 1e9);
}

int main(int argc, char **argv)
{
	static const char *const modes[] = { "stall", "hold", "big", "bighello", "wrongkey", NULL };
	struct opts o = { .addr = "127.0.0.1", .from = "clusterA", .to = "clusterB", .n = 1, .nsrc = 1,
			  .reopen_ms = 500, .seconds = 5 };
	int c, m = -1;

	if (argc < 2)
		usage();
	for (int i = 0; modes[i]; i++)
		if (strcmp(argv[1], modes[i]) == 0)
			m = i;
	if (m < 0)
		usage();
	o.mode = (enum mode)m;
	optind = 2;
	while ((c = getopt(argc, argv, "a:p:n:t:s:S:rR:B:f:T:")) != -1) {
		switch (c) {
		case 'a': o.addr = optarg; break;
		case 'p': o.port = (unsigned)atoi(optarg); break;
		case 'n': o.n = (unsigned)atoi(optarg); break;
		case 't': o.seconds = atof(optarg); break;
		case 's': o.src = optarg; break;
		case 'S': o.nsrc = (unsigned)atoi(optarg); break;
		case 'r': o.reopen = 1; break;
		case 'R': o.reopen_ms = (unsigned)atoi(optarg); break;
		case 'B': o.bytes = (size_t)atol(optarg); break;
		case 'f': o.from = optarg; break;
		case 'T': o.to = optarg; break;
		default: usage();
		}
	}
	if (o.port == 0 || o.port > 65535 || o.n == 0 || o.nsrc == 0)
		usage();
	if (o.mode == M_WRONGKEY) {
		run_wrong_key(&o);
		return 0;
	}
	build_payload(&o);
	if (o.mode != M_BIG && o.mode != M_BIGHELLO)
		o.bytes = 0;
	/* Without SA_RESTART: poll() returns at once. */
	sigaction(SIGUSR1, &(struct sigaction){ .sa_handler = on_usr1 }, NULL);
	run_conns(&o);
	return 0;
}
