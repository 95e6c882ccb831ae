/* clientsock.c - the client server's sockets: listening, and payloads read
 * straight from a client's socket; see client.h. */
#include <errno.h>
#include <limits.h>
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "client.h"
#include "log.h"

int clientsock_listen_unix(const char *path)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		log_warnx("client socket path %s is too long (max %zu)", path, sizeof(sa.sun_path) - 1);
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		log_warn("socket(AF_UNIX)");
		return -1;
	}
	/* A stale socket file from a crashed ldsd would make bind fail. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		log_warnx("another ldsd is already serving %s", path);
		close(fd);
		return -1;
	}
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 128) < 0) {
		log_warn("cannot listen on %s", path);
		close(fd);
		return -1;
	}
	chmod(path, 0666);
	return fd;
}

int clientsock_listen_tcp(const char *hostport)
{
	char host[CONFIG_ADDR_MAX];
	const char *colon = strrchr(hostport, ':');
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *res;
	int fd, one = 1;

	if (colon == NULL || colon == hostport) {
		log_warnx("clients.tcp \"%s\" is not HOST:PORT", hostport);
		return -1;
	}
	/* "[::1]:7001": getaddrinfo wants the address without brackets. */
	if (hostport[0] == '[' && colon[-1] == ']')
		snprintf(host, sizeof(host), "%.*s", (int)(colon - hostport - 2), hostport + 1);
	else
		snprintf(host, sizeof(host), "%.*s", (int)(colon - hostport), hostport);
	if (getaddrinfo(host, colon + 1, &hints, &res) != 0) {
		log_warnx("clients.tcp \"%s\": cannot resolve", hostport);
		return -1;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 128) < 0) {
		log_warn("cannot listen for clients on %s", hostport);
		if (fd >= 0)
			close(fd);
		freeaddrinfo(res);
		return -1;
	}
	freeaddrinfo(res);
	return fd;
}

/* Reads iov[0..n) whole from fd, the first region from offset skip on. */
static int read_regions(int fd, const struct iovec *iov, int n, size_t skip)
{
	struct iovec v[IOV_MAX];

	while (n > 0) {
		int m = n < IOV_MAX ? n : IOV_MAX;
		ssize_t r;

		memcpy(v, iov, (size_t)m * sizeof(*v));
		v[0].iov_base = (uint8_t *)v[0].iov_base + skip;
		v[0].iov_len -= skip;
		r = readv(fd, v, m);
		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return r == 0 ? -ECONNRESET : -errno;
		for (skip += (size_t)r; n > 0 && skip >= iov[0].iov_len; iov++, n--)
			skip -= iov[0].iov_len;
	}
	return 0;
}

int clientsock_fill_payload(void *arg, const struct iovec *iov, int n)
{
	struct payload_src *src = arg;
	size_t skip = 0;
	int k, r;

	for (k = 0; k < n && src->have_len > 0; k++) {
		size_t take = iov[k].iov_len < src->have_len ? iov[k].iov_len : src->have_len;

		memcpy(iov[k].iov_base, src->have, take);
		src->have += take;
		src->have_len -= take;
		if (take < iov[k].iov_len) {
			skip = take;
			break;
		}
	}
	if (k == n)
		return 0;
	r = src->fd < 0 ? -EIO : read_regions(src->fd, iov + k, n - k, skip);
	if (r < 0)
		src->err = -r;
	return r;
}
