/*
 * fuzz_shmring.c - libFuzzer target for ldsd's reader of a client's
 * shared-memory ring (ldsd/clientshm.c behind the client server), as a
 * hostile process would fill it: the input is the bytes it writes into
 * its ring, and positions it writes into the ring's header.
 *
 * A real client server listens on a unix socket in /tmp; each input opens
 * a connection, says HELLO asking for rings, maps the file ldsd hands
 * over, and then:
 *   byte 0       flags: 1 = after the bytes, write the u64 at 1..8 as the
 *                ring's producer position; 2 = write the u64 at 9..16 as
 *                the consumer position of the ring ldsd writes; 4 = write
 *                the bytes without ringing the bell
 *   bytes 17..   written into the ring as the client's frames, committed
 *                as room frees
 * then the event loop runs for a bounded number of rounds, and the
 * connection is closed.  Besides "no crash" (ASan, UBSan), ldsd must have
 * let go of the client once it is closed.
 */
#include <errno.h>
#include <stdint.h>
#include <sys/mman.h>

#include "clientbed.h"
#include "libclient/clientproto.h"
#include "libclient/shmring.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);
#define ROUNDS 48
#define HEAD 17


static struct {
	int fd, efd_ring;
	struct shmmap map;
	int mapped;
	uint8_t in[4096];
	size_t in_len;
	const uint8_t *data;
	size_t size, off;
	int rounds, ended, flags, poked;
} cur;

static void poke(size_t off, const uint8_t *v)
{
	memcpy((uint8_t *)cur.map.hdr + off, v, 8);
}

/* Until the rings are set up: reads WELCOME and SHM with their
 * descriptors. */
static void read_setup(void)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(4 * sizeof(int))];
	} cm;
	struct iovec iov = { cur.in + cur.in_len, sizeof(cur.in) - cur.in_len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.buf, .msg_controllen = sizeof(cm.buf) };
	ssize_t n = recvmsg(cur.fd, &mh, MSG_DONTWAIT);
	struct cmsghdr *c = CMSG_FIRSTHDR(&mh);
	int fds[4];
	size_t off = 0;
	struct cp_hdr h;
	struct cp_msg m;

	if (n == 0)
		cur.ended = 1;
	if (n <= 0)
		return;
	cur.in_len += (size_t)n;
	if (c != NULL && c->cmsg_type == SCM_RIGHTS && c->cmsg_len == CMSG_LEN(sizeof(fds))) {
		memcpy(fds, CMSG_DATA(c), sizeof(fds));
		cur.efd_ring = fds[2];
		close(fds[1]);
		/* WELCOME, then SHM: both in this one read. */
		CHECK(cp_hdr_parse(cur.in, &h) == 0 && h.type == CP_WELCOME);
		off = CP_HDR_LEN + h.len;
		CHECK(cp_hdr_parse(cur.in + off, &h) == 0 && h.type == CP_SHM);
		CHECK(cp_decode(&h, cur.in + off + CP_HDR_LEN, &m) == 0);
		CHECK(shmring_map(&cur.map, fds[0], fds[3], m.ring_size, 0) == 0);
		close(fds[0]);
		close(fds[3]);
		cur.mapped = 1;
	}
}

static void write_ring(void)
{
	struct shmring *r = &cur.map.r[SHMRING_C2D];
	uint8_t drain[65536];
	size_t room;

	while (shmring_read(&cur.map.r[SHMRING_D2C], drain, sizeof(drain)) > 0)
		;
	if (cur.off < cur.size && shmring_space(r, &room) == 0 && room > 0) {
		struct iovec iov = { (void *)(cur.data + cur.off), cur.size - cur.off };
		ssize_t w = shmring_writev(r, &iov, 1);

		if (w > 0)
			cur.off += (size_t)w;
		if (!(cur.flags & 4))
			shmring_ring(cur.efd_ring);
	}
	if (cur.off == cur.size && !cur.poked) {
		cur.poked = 1;
		if (cur.flags & 1)
			poke(SHMRING_PROD_OFF(SHMRING_C2D), cur.data - HEAD + 1);
		if (cur.flags & 2)
			poke(SHMRING_CONS_OFF(SHMRING_D2C), cur.data - HEAD + 9);
		shmring_ring(cur.efd_ring);
	}
}

static void on_idle(void *arg)
{
	uint8_t b[256];

	(void)arg;
	clientsrv_flush(cs);
	if (cur.fd >= 0) {
		if (!cur.mapped)
			read_setup();
		else
			write_ring();
		if (cur.mapped && recv(cur.fd, b, sizeof(b), MSG_DONTWAIT) == 0)
			cur.ended = 1;
	}
	if (++cur.rounds >= ROUNDS || cur.ended)
		evloop_stop(d.ev);
}

static void setup(void)
{
	struct config_clients c = { .max_clients = 16, .max_per_user = 16, .hello_timeout = 5.0,
				    .max_message = 1 << 20, .queue_max = 1 << 16, .input_per_user = 1 << 22,
				    .shm_ring = SHMRING_MIN, .undelivered_share = 50, .undelivered_ttl = 0.001 };

	bed_setup("fuzz_shmring", &c, on_idle);
}

static int connect_server(void)
{
	struct cp_msg m = { .type = CP_HELLO, .version = CP_VERSION, .flags = CP_F_TAKEN | CP_F_SHM };
	uint8_t buf[256];
	size_t n;
	int fd = bed_connect();

	n = cp_encode(buf, sizeof(buf), &m);
	CHECK(n > 0 && write(fd, buf, n) == (ssize_t)n);
	return fd;
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (size < HEAD)
		return 0;
	if (cs == NULL)
		setup();
	memset(&cur, 0, sizeof(cur));
	cur.efd_ring = -1;
	cur.fd = connect_server();
	cur.flags = data[0];
	cur.data = data + HEAD;
	cur.size = size - HEAD;
	CHECK(evloop_run(d.ev) == 0);
	/* The rings were set up: ldsd offers them to a unix client. */
	CHECK(cur.mapped);
	close(cur.fd);
	cur.fd = -1;
	cur.rounds = ROUNDS - 4;
	CHECK(evloop_run(d.ev) == 0);
	CHECK(bed_clients_connected() == 0);
	shmring_unmap(&cur.map);
	if (cur.efd_ring >= 0)
		close(cur.efd_ring);
	return 0;
}
