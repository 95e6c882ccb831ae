/* connect.c - reaching the gateway's ldsd: its unix socket, or its TCP or
 * RDMA port with the key check; see connect.h. */
#include <errno.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <unistd.h>

#include "connect.h"
#include "deadline.h"
#include "keycheck.h"
#include "lds.h"
#include "rdmaclient.h"

#define SOCKET_BUFFER  (4 << 20)   /* SO_SNDBUF of the daemon socket */
#define CONNECT_RETRY_MS 10         /* unix listener backlog full: try again */

static int connect_wait(int fd, const struct sockaddr *sa, socklen_t len, int64_t deadline)
{
	struct pollfd p = { .fd = fd, .events = POLLOUT };
	socklen_t elen = sizeof(int);
	int soerr = 0, n;

	/* Messages go to the daemon in large writes, so both sides wake less
	 * often; the kernel caps the size at net.core.wmem_max, and failing
	 * only costs speed. */
	(void)setsockopt(fd, SOL_SOCKET, SO_SNDBUF, &(int){ SOCKET_BUFFER }, sizeof(int));
	while (connect(fd, sa, len) < 0) {
		/* EINTR: the nonblocking connect goes on in the background. */
		if (errno == EINPROGRESS || errno == EINTR)
			break;
		if (errno != EAGAIN)
			return -errno;
		if (deadline_poll_ms(deadline) == 0)
			return -ETIMEDOUT;
		if (poll(NULL, 0, CONNECT_RETRY_MS) < 0 && errno != EINTR)
			return -errno;
	}
	do
		n = poll(&p, 1, deadline_poll_ms(deadline));
	while (n < 0 && errno == EINTR);
	if (n < 0)
		return -errno;
	if (n == 0)
		return -ETIMEDOUT;
	if (getsockopt(fd, SOL_SOCKET, SO_ERROR, &soerr, &elen) < 0)
		return -errno;
	return -soerr;
}

/* Returns a connected nonblocking socket, or a negative errno. */
static int connect_addr(int family, const struct sockaddr *sa, socklen_t len, int64_t deadline)
{
	int fd = socket(family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	int rc, one = 1;

	if (fd < 0)
		return -errno;
	rc = connect_wait(fd, sa, len, deadline);
	/* Frames are small and latency-bound: do not let Nagle hold them. */
	if (rc == 0 && family != AF_UNIX && setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof(one)) < 0)
		rc = -errno;
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}

static int connect_unix(const char *path, int64_t deadline)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n = strlen(path);

	if (n >= sizeof(sa.sun_path))
		return -ENAMETOOLONG;
	memcpy(sa.sun_path, path, n + 1);
	return connect_addr(AF_UNIX, (const struct sockaddr *)&sa, sizeof(sa), deadline);
}

/* Splits spec, "HOST:PORT" or "[V6ADDR]:PORT", into host and *port (a
 * pointer into spec): 0 or -EINVAL. */
static int split_hostport(const char *spec, char host[256], const char **port)
{
	const char *colon = strrchr(spec, ':');
	size_t n;

	if (colon == NULL || colon[1] == '\0')
		return -EINVAL;
	n = (size_t)(colon - spec);
	if (n >= 2 && spec[0] == '[' && spec[n - 1] == ']') {
		spec++;
		n -= 2;
	}
	if (n == 0 || n >= 256)
		return -EINVAL;
	memcpy(host, spec, n);
	host[n] = '\0';
	*port = colon + 1;
	return 0;
}

static int connect_tcp(const char *spec, int64_t deadline)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM };
	struct addrinfo *res, *ai;
	const char *port;
	char host[256];
	int rc = split_hostport(spec, host, &port);

	if (rc < 0)
		return rc;
	rc = getaddrinfo(host, port, &hints, &res);
	if (rc == EAI_SYSTEM)
		return -errno;
	if (rc != 0)
		return -EHOSTUNREACH;
	rc = -EHOSTUNREACH;
	for (ai = res; ai != NULL; ai = ai->ai_next) {
		rc = connect_addr(ai->ai_family, ai->ai_addr, ai->ai_addrlen, deadline);
		if (rc >= 0)
			break;
	}
	freeaddrinfo(res);
	return rc;
}

static int connect_rdma(const char *spec, int64_t deadline)
{
	const char *port;
	char host[256];
	int rc = split_hostport(spec, host, &port);

	return rc < 0 ? rc : rdmaclient_connect(host, port, deadline);
}

const char *lds_socket_path(const char *path)
{
	if (path == NULL || path[0] == '\0')
		path = getenv(LDS_GATEWAY_ENV);
	if (path == NULL || path[0] == '\0')
		path = getenv(LDS_SOCKET_ENV);
	if (path == NULL || path[0] == '\0')
		path = LDS_DEFAULT_SOCKET;
	return path;
}

/* Over TCP or RDMA the kernel cannot say who connects: the connection
 * first proves it holds the gateway's key (keycheck.h). */
int daemon_connect(const char *path, int64_t deadline)
{
	int fd, rc;

	if (strncmp(path, "tcp:", 4) == 0)
		fd = connect_tcp(path + 4, deadline);
	else if (strncmp(path, LDS_RDMA_PREFIX, strlen(LDS_RDMA_PREFIX)) == 0)
		fd = connect_rdma(path + strlen(LDS_RDMA_PREFIX), deadline);
	else
		return connect_unix(path, deadline);
	if (fd < 0)
		return fd;
	rc = keycheck_client(fd, deadline);
	if (rc < 0) {
		close(fd);
		return rc;
	}
	return fd;
}
