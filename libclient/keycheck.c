/* keycheck.c - liblds's side of clients.tcp's key check; see keycheck.h. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "clientproto.h"
#include "deadline.h"
#include "keycheck.h"
#include "keyfile.h"

/* Waits until fd is ready for events or deadline_ns passes. */
static int ready(int fd, short events, int64_t deadline_ns)
{
	struct pollfd p = { .fd = fd, .events = events };
	int n, ms;

	do {
		if ((ms = deadline_poll_ms(deadline_ns)) == 0)
			return -ETIMEDOUT;
		n = poll(&p, 1, ms);
	} while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	return n == 0 ? -ETIMEDOUT : 0;
}

/* Writes (out) or reads len bytes whole on the nonblocking fd. */
static int transfer(int fd, int out, uint8_t *p, size_t len, int64_t deadline_ns)
{
	while (len > 0) {
		ssize_t n = out ? write(fd, p, len) : read(fd, p, len);
		int rc;

		if (n == 0 && !out)
			return -ECONNRESET;
		if (n < 0 && errno != EAGAIN && errno != EINTR)
			return -errno;
		if (n > 0) {
			p += n;
			len -= (size_t)n;
		} else if ((rc = ready(fd, out ? POLLOUT : POLLIN, deadline_ns)) < 0) {
			return rc;
		}
	}
	return 0;
}

/* Reads exactly one frame - no byte of the next, which the handle's own
 * reader takes - of type want, or an ERROR (whose errno it returns). */
static int read_frame(int fd, uint8_t want, struct cp_msg *m, int64_t deadline_ns)
{
	uint8_t buf[CP_HDR_LEN + 16 + CP_TEXT_MAX];
	struct cp_hdr h;
	int rc = transfer(fd, 0, buf, CP_HDR_LEN, deadline_ns);

	if (rc < 0)
		return rc;
	if (cp_hdr_parse(buf, &h) < 0 || h.len > sizeof(buf) - CP_HDR_LEN || (h.type != want && h.type != CP_ERROR))
		return -EPROTO;
	if ((rc = transfer(fd, 0, buf + CP_HDR_LEN, h.len, deadline_ns)) < 0)
		return rc;
	if (cp_decode(&h, buf + CP_HDR_LEN, m) < 0)
		return -EPROTO;
	return h.type == CP_ERROR ? (m->err > 0 ? -m->err : -EPROTO) : 0;
}

int keycheck_client(int fd, int64_t deadline_ns)
{
	const char *path = getenv(LDS_KEY_ENV);
	struct cp_msg proof = { .type = CP_PROOF }, in;
	uint8_t key[KEYFILE_MAX], dnonce[CPAUTH_NONCE_LEN], buf[CP_HDR_LEN + CPAUTH_NONCE_LEN + CPAUTH_MAC_LEN];
	size_t key_len = 0, n;
	char why[512];
	int rc;

	if (path == NULL || path[0] == '\0' || keyfile_read(path, key, &key_len, why, sizeof(why)) < 0)
		return -ENOKEY;
	rc = read_frame(fd, CP_CHALLENGE, &in, deadline_ns);
	memcpy(dnonce, in.nonce, sizeof(dnonce));
	if (rc == 0)
		rc = cpauth_nonce(proof.nonce);
	if (rc == 0)
		rc = cpauth_mac(key, key_len, CPAUTH_CLIENT, dnonce, proof.nonce, proof.mac);
	if (rc == 0) {
		n = cp_encode(buf, sizeof(buf), &proof);
		rc = n == 0 ? -EPROTO : transfer(fd, 1, buf, n, deadline_ns);
	}
	if (rc == 0) {
		rc = read_frame(fd, CP_PROOF, &in, deadline_ns);
		/* ldsd refuses a wrong key with EACCES, and closes. */
		if (rc == -EACCES || rc == -ECONNRESET)
			rc = -EKEYREJECTED;
		else if (rc == 0 && (memcmp(in.nonce, proof.nonce, CPAUTH_NONCE_LEN) != 0 ||
				     !cpauth_verify(key, key_len, CPAUTH_DAEMON, dnonce, proof.nonce, in.mac)))
			rc = -EKEYREJECTED;
	}
	explicit_bzero(key, sizeof(key));
	return rc;
}
