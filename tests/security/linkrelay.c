/*
 * linkrelay - an attacker on the path between two gateways, for the
 * tests in tests/security (docs/security.md, "Sealed link").
 *
 *   linkrelay -l LISTEN_PORT -t TARGET_PORT -m MODE [-T SECONDS]
 *
 * Accepts the connecting gateway's streams on 127.0.0.1:LISTEN_PORT and
 * relays each to 127.0.0.1:TARGET_PORT, whole frames at a time.  The
 * handshake is always relayed as it is (the attacker has no key); what the
 * relay does with the connector's frames after AUTH is MODE:
 *   pass    nothing
 *   tamper  flips one byte in the middle of the first DATA block of 1 KiB
 *           or more, and, if the frame is in clear, recomputes its CRC, so
 *           that only a MAC can tell
 *   replay  sends the first DATA frame twice
 *   inject  right after the first AUTH, sends a DATA frame of its own:
 *           block 0 of the session, a message "pay 999 EUR to mallo" from
 *           clusterA/mallory to clusterB/sink, CRC correct
 *   hello   (the handshake after all) lowers max_msg in the first HELLO to
 *           4096 bytes and recomputes its CRC: a field the MACs of protocol
 *           version 2 did not cover
 * Each attack is made once, on the first stream that offers the chance,
 * and printed on stdout ("attack: ..."), so that a test can tell that it
 * happened.  Exits after SECONDS (default 120).  Loopback only.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <getopt.h>
#include <netinet/in.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "ldsd/crc32c.h"
#include "ldsd/wire.h"
#include "tests/security/sockio.h"

#define MAX_CONNS 64
#define READ_CHUNK (256u * 1024)

enum mode { M_PASS, M_TAMPER, M_REPLAY, M_INJECT, M_HELLO };

/* One direction of a relayed stream: bytes read, not yet whole frames. */
struct dir {
	int from, to;
	uint8_t *buf;
	size_t len, cap;
	int c2l;                /* connector to listener: the attacked direction */
	int after_auth;         /* AUTH went by: the handshake is over */
};

struct conn {
	struct dir d[2];
	int open;
};

static enum mode mode;
static int attacked;

static uint32_t get_be32(const uint8_t *p)
{
	return (uint32_t)p[0] << 24 | (uint32_t)p[1] << 16 | (uint32_t)p[2] << 8 | p[3];
}

static void put_be32(uint8_t *p, uint32_t v)
{
	for (int i = 0; i < 4; i++)
		p[i] = (uint8_t)(v >> (24 - 8 * i));
}

/* The CRC the sender would have written, as wire.c computes it. */
static void fix_crc(uint8_t *frame, size_t n)
{
	put_be32(frame + 8, 0);
	put_be32(frame + 8, crc32c(0, frame, n));
}

/* A DATA frame of block 0 carrying one forged message. */
static int inject(int fd)
{
	static const char text[] = "pay 999 EUR to mallo";
	struct wire_record r = { .len = sizeof(text) - 1, .msg_id = 1, .incarnation = 0x6d616c6c6f7279ull };
	uint8_t frame[512];
	size_t h;

	snprintf(r.src, sizeof(r.src), "clusterA/mallory");
	snprintf(r.dst, sizeof(r.dst), "clusterB/sink");
	h = wire_encode_record_hdr(frame + WIRE_DATA_HDR_LEN, sizeof(frame) - WIRE_DATA_HDR_LEN, &r);
	if (h == 0)
		return -1;
	memcpy(frame + WIRE_DATA_HDR_LEN + h, text, r.len);
	wire_encode_data_hdr(frame, 0, frame + WIRE_DATA_HDR_LEN, (uint32_t)(h + r.len));
	printf("attack: injected DATA block 0 with \"%s\" from %s to %s\n", text, r.src, r.dst);
	return write_all(fd, frame, WIRE_DATA_HDR_LEN + h + r.len);
}

/* Relays one whole frame, attacked as the mode says. */
static int relay_frame(struct dir *d, uint8_t *f, size_t n)
{
	uint8_t type = f[3] & (uint8_t)~WIRE_SEALED;
	int sealed = (f[3] & WIRE_SEALED) != 0;
	int data = d->c2l && d->after_auth && type == WIRE_DATA && n >= WIRE_DATA_HDR_LEN + 1024;

	if (data && mode == M_TAMPER && !attacked) {
		size_t at = WIRE_DATA_HDR_LEN + (n - WIRE_DATA_HDR_LEN) / 2;

		f[at] ^= 0x5a;
		if (!sealed)
			fix_crc(f, n);
		attacked = 1;
		printf("attack: flipped byte %zu of a %zu-byte %s DATA frame%s\n", at, n, sealed ? "sealed" : "clear",
		       sealed ? "" : ", CRC recomputed");
	}
	if (d->c2l && mode == M_HELLO && !attacked && f[3] == WIRE_HELLO && n >= WIRE_HDR_LEN + 8) {
		put_be32(f + WIRE_HDR_LEN + 4, 4096);
		fix_crc(f, n);
		attacked = 1;
		printf("attack: HELLO max_msg lowered to 4096, CRC recomputed\n");
	}
	if (write_all(d->to, f, n) < 0)
		return -1;
	if (data && mode == M_REPLAY && !attacked) {
		attacked = 1;
		printf("attack: replayed a %zu-byte %s DATA frame\n", n, sealed ? "sealed" : "clear");
		if (write_all(d->to, f, n) < 0)
			return -1;
	}
	if (d->c2l && type == WIRE_AUTH && !sealed) {
		d->after_auth = 1;
		if (mode == M_INJECT && !attacked) {
			attacked = 1;
			return inject(d->to);
		}
	}
	return 0;
}

/* Reads what there is and relays the whole frames; -1 when the stream is
 * over (either side closed, or the bytes are no LDS frames). */
static int pump(struct dir *d)
{
	size_t off = 0;
	ssize_t n;

	if (d->cap - d->len < READ_CHUNK) {
		uint8_t *p = realloc(d->buf, d->len + READ_CHUNK);

		if (p == NULL)
			return -1;
		d->buf = p;
		d->cap = d->len + READ_CHUNK;
	}
	n = read(d->from, d->buf + d->len, READ_CHUNK);
	if (n < 0 && errno == EINTR)
		return 0;
	if (n <= 0)
		return -1;
	d->len += (size_t)n;
	while (d->len - off >= WIRE_HDR_LEN) {
		size_t whole = WIRE_HDR_LEN + (size_t)get_be32(d->buf + off + 4);

		if (get_be32(d->buf + off + 4) > WIRE_MAX_PAYLOAD)
			return -1;
		if (d->len - off < whole)
			break;
		if (relay_frame(d, d->buf + off, whole) < 0)
			return -1;
		off += whole;
	}
	memmove(d->buf, d->buf + off, d->len - off);
	d->len -= off;
	return 0;
}

static void conn_close(struct conn *c)
{
	close(c->d[0].from);
	close(c->d[1].from);
	free(c->d[0].buf);
	free(c->d[1].buf);
	memset(c, 0, sizeof(*c));
}

static int tcp_socket(uint16_t port, int listening)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_port = htons(port) };
	int fd = socket(AF_INET, SOCK_STREAM, 0), one = 1;

	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (fd < 0)
		return -1;
	if (listening) {
		setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one));
		if (bind(fd, (struct sockaddr *)&a, sizeof(a)) == 0 && listen(fd, 64) == 0)
			return fd;
	} else if (connect(fd, (struct sockaddr *)&a, sizeof(a)) == 0) {
		return fd;
	}
	close(fd);
	return -1;
}

static void accept_one(int lfd, uint16_t target, struct conn *conns)
{
	int a = accept(lfd, NULL, NULL), b;

	if (a < 0)
		return;
	b = tcp_socket(target, 0);
	for (int i = 0; b >= 0 && i < MAX_CONNS; i++) {
		if (!conns[i].open) {
			conns[i] = (struct conn){ .open = 1 };
			conns[i].d[0] = (struct dir){ .from = a, .to = b, .c2l = 1 };
			conns[i].d[1] = (struct dir){ .from = b, .to = a };
			return;
		}
	}
	close(a);
	if (b >= 0)
		close(b);
}

static int usage(void)
{
	fprintf(stderr, "usage: linkrelay -l LISTEN_PORT -t TARGET_PORT -m pass|tamper|replay|inject|hello [-T SECONDS]\n");
	return 2;
}

int main(int argc, char **argv)
{
	static const char *const modes[] = { "pass", "tamper", "replay", "inject", "hello" };
	static struct conn conns[MAX_CONNS];
	long lport = 0, tport = 0;
	double limit = 120;
	int ch, lfd, m = -1;
	time_t start = time(NULL);

	while ((ch = getopt(argc, argv, "l:t:m:T:")) != -1) {
		switch (ch) {
		case 'l': lport = strtol(optarg, NULL, 10); break;
		case 't': tport = strtol(optarg, NULL, 10); break;
		case 'T': limit = strtod(optarg, NULL); break;
		case 'm':
			for (int i = 0; i < 5; i++)
				if (strcmp(optarg, modes[i]) == 0)
					m = i;
			break;
		default: return usage();
		}
	}
	if (lport < 1 || lport > 65535 || tport < 1 || tport > 65535 || m < 0 || !(limit > 0))
		return usage();
	mode = (enum mode)m;
	setvbuf(stdout, NULL, _IOLBF, 0);
	/* A gateway closes the stream an attack hit while the relay may still
	 * be writing to it: that must end the connection, not the relay. */
	signal(SIGPIPE, SIG_IGN);
	lfd = tcp_socket((uint16_t)lport, 1);
	if (lfd < 0) {
		perror("linkrelay: listen");
		return 1;
	}
	while (difftime(time(NULL), start) < limit) {
		struct pollfd p[1 + 2 * MAX_CONNS];
		int at[1 + 2 * MAX_CONNS], n = 1;

		p[0] = (struct pollfd){ .fd = lfd, .events = POLLIN };
		for (int i = 0; i < MAX_CONNS; i++) {
			for (int k = 0; conns[i].open && k < 2; k++) {
				p[n] = (struct pollfd){ .fd = conns[i].d[k].from, .events = POLLIN };
				at[n++] = 2 * i + k;
			}
		}
		if (poll(p, (nfds_t)n, 200) < 0 && errno != EINTR)
			return 1;
		if (p[0].revents & POLLIN)
			accept_one(lfd, (uint16_t)tport, conns);
		for (int j = 1; j < n; j++) {
			struct conn *c = &conns[at[j] / 2];

			if (c->open && (p[j].revents & (POLLIN | POLLHUP | POLLERR)) && pump(&c->d[at[j] % 2]) < 0)
				conn_close(c);
		}
	}
	return 0;
}
