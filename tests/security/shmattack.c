/*
 * shmattack - a hostile local client of ldsd that breaks its own
 * shared-memory ring, for tests/security/t_shm_garbage.sh.
 *
 *   shmattack MODE -s SOCK -n NAME [-T S]
 *
 * Says HELLO asking for rings, maps the file ldsd hands over, writes one
 * valid SEND (to NAME itself), and then, by MODE:
 *   positions  a producer position past the end of what the ring holds
 *   back       a producer position going back
 *   header     a frame header claiming a 4 GiB body, then bytes
 *   ring1      (no SEND) tries to write into the file of the ring ldsd
 *              writes, every way: prints "ring 1 read-only" if none works
 *   consumer   a consumer position (of the ring ldsd writes) ahead of
 *              what ldsd wrote
 *   taken      a count of messages taken (in the ring header) far beyond
 *              what ldsd wrote; the test sends it a large message
 * rings ldsd's bell, and waits up to S seconds (default 10) for ldsd to
 * close the connection: prints "closed" (exit 0) or "not closed" (exit 1).
 * Exit 2 on usage errors, 3 if the attack could not be set up.
 */
#include <fcntl.h>
#include <getopt.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "ldsd/clock.h"
#include "libclient/clientproto.h"
#include "libclient/shmring.h"
#include "tests/security/sockio.h"

struct ring {
	int sock, efd_ring;
	int ring1_writable;   /* ldsd's ring (SHMRING_D2C) could be written through its file */
	struct shmmap map;
	uint64_t size;
};

/* Tries every way to write into the file of ldsd's ring: a writable
 * mapping, write(), a read-only mapping made writable, the seals taken
 * off.  1 if any worked. */
static int ring1_writable(int fd, size_t size)
{
	uint8_t b = 0;
	void *p = mmap(NULL, size, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	int seals, w = p != MAP_FAILED;

	if (w)
		munmap(p, size);
	w |= pwrite(fd, &b, 1, 0) >= 0;
	p = mmap(NULL, size, PROT_READ, MAP_SHARED, fd, 0);
	if (p != MAP_FAILED) {
		w |= mprotect(p, size, PROT_READ | PROT_WRITE) == 0;
		munmap(p, size);
	}
	seals = fcntl(fd, F_GET_SEALS);
	w |= seals < 0 || !(seals & F_SEAL_FUTURE_WRITE) || fcntl(fd, F_ADD_SEALS, F_SEAL_WRITE) == 0;
	return w;
}

static int setup(const char *path, const char *name, struct ring *r)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct cp_msg m = { .type = CP_HELLO, .version = CP_VERSION, .flags = CP_F_SHM | CP_F_TAKEN, .incarnation = 7 };
	uint8_t buf[4096];
	union {
		struct cmsghdr h;
		char b[CMSG_SPACE(4 * sizeof(int))];
	} cm;
	struct iovec iov = { buf, sizeof(buf) };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.b, .msg_controllen = sizeof(cm.b) };
	struct cmsghdr *c;
	struct cp_hdr h;
	int fds[4];
	size_t n, off;
	ssize_t got;

	r->sock = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	snprintf(m.name, sizeof(m.name), "%s", name);
	n = cp_encode(buf, sizeof(buf), &m);
	if (r->sock < 0 || connect(r->sock, (struct sockaddr *)&sa, sizeof(sa)) < 0 || write_all(r->sock, buf, n) < 0)
		return -1;
	got = recvmsg(r->sock, &mh, 0);
	c = CMSG_FIRSTHDR(&mh);
	if (got < (ssize_t)CP_HDR_LEN || c == NULL || c->cmsg_type != SCM_RIGHTS ||
	    c->cmsg_len != CMSG_LEN(sizeof(fds)) || cp_hdr_parse(buf, &h) < 0 || h.type != CP_WELCOME)
		return -1;
	memcpy(fds, CMSG_DATA(c), sizeof(fds));
	off = CP_HDR_LEN + h.len;
	if ((size_t)got < off + CP_HDR_LEN + 8 || cp_hdr_parse(buf + off, &h) < 0 || h.type != CP_SHM ||
	    cp_decode(&h, buf + off + CP_HDR_LEN, &m) < 0)
		return -1;
	r->size = m.ring_size;
	r->efd_ring = fds[2];
	close(fds[1]);
	r->ring1_writable = ring1_writable(fds[3], m.ring_size);
	if (shmring_map(&r->map, fds[0], fds[3], m.ring_size, 0) < 0)
		return -1;
	close(fds[0]);
	close(fds[3]);
	return 0;
}

/* A valid SEND to the attacker's own name: ldsd is reading the ring. */
static void send_one(struct ring *r, const char *name)
{
	struct cp_msg m = { .type = CP_SEND, .msg_id = 1, .payload_len = 5 };
	uint8_t buf[CP_HDR_LEN + 300];
	struct iovec iov[2] = { { buf, 0 }, { "hello", 5 } };

	snprintf(m.name, sizeof(m.name), "%s", name);
	iov[0].iov_len = cp_encode(buf, sizeof(buf), &m);
	shmring_writev(&r->map.r[SHMRING_C2D], iov, 2);
}

static void poke(struct ring *r, size_t off, uint64_t v)
{
	memcpy((uint8_t *)r->map.hdr + off, &v, sizeof(v));
}

int main(int argc, char **argv)
{
	const char *sock = NULL, *name = "attacker", *mode = argc > 1 ? argv[1] : "";
	char dst[300];
	double timeout = 10;
	struct ring r;
	uint64_t end;
	int ch;

	optind = 2;
	while ((ch = getopt(argc, argv, "s:n:T:")) != -1) {
		switch (ch) {
		case 's': sock = optarg; break;
		case 'n': name = optarg; break;
		case 'T': timeout = strtod(optarg, NULL); break;
		default: return 2;
		}
	}
	if (sock == NULL || argc < 2) {
		fprintf(stderr, "usage: shmattack positions|back|header|consumer|taken|ring1 -s SOCK [-n NAME] [-T S]\n");
		return 2;
	}
	alarm((unsigned)timeout + 30);
	if (setup(sock, name, &r) < 0) {
		fprintf(stderr, "shmattack: no rings from ldsd\n");
		return 3;
	}
	if (strcmp(mode, "ring1") == 0) {
		printf("%s\n", r.ring1_writable ? "ring 1 writable" : "ring 1 read-only");
		return r.ring1_writable;
	}
	/* A cluster with no link: ldsd reads the frame and answers ERROR. */
	snprintf(dst, sizeof(dst), "nocluster/%s", name);
	send_one(&r, dst);
	if (strcmp(mode, "positions") == 0) {
		poke(&r, SHMRING_PROD_OFF(SHMRING_C2D), r.map.r[SHMRING_C2D].prod + r.size + 4096);
	} else if (strcmp(mode, "back") == 0) {
		shmring_ring(r.efd_ring);
		usleep(200000);
		poke(&r, SHMRING_PROD_OFF(SHMRING_C2D), 1);
	} else if (strcmp(mode, "header") == 0) {
		uint8_t h[CP_HDR_LEN + 64];
		struct iovec iov = { h, sizeof(h) };

		memset(h, 0x5a, sizeof(h));
		cp_hdr_write(h, CP_SEND, 0xfffffff0u);
		shmring_writev(&r.map.r[SHMRING_C2D], &iov, 1);
	} else if (strcmp(mode, "taken") == 0) {
		/* Claims its application took far more than ldsd wrote: ldsd
		 * reads it when a large message for it arrives. */
		poke(&r, SHMRING_TAKEN_OFF(SHMRING_D2C), (uint64_t)1 << 40);
	} else if (strcmp(mode, "consumer") == 0) {
		/* ldsd answered the SEND with an ERROR into the other ring:
		 * claim to have read far more. */
		shmring_ring(r.efd_ring);
		usleep(200000);
		poke(&r, SHMRING_CONS_OFF(SHMRING_D2C), (uint64_t)1 << 40);
		send_one(&r, dst);
	} else {
		fprintf(stderr, "shmattack: unknown mode %s\n", mode);
		return 2;
	}
	shmring_ring(r.efd_ring);
	end = clock_now_ns() + (uint64_t)(timeout * 1e9);
	while (clock_now_ns() < end) {
		struct pollfd p = { .fd = r.sock, .events = POLLIN };
		uint8_t b[256];

		if (poll(&p, 1, 100) > 0 && recv(r.sock, b, sizeof(b), MSG_DONTWAIT) <= 0) {
			printf("closed\n");
			return 0;
		}
	}
	printf("not closed\n");
	return 1;
}
