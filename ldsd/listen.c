/* listen.c - listening sockets; see listen.h. */
#include <netdb.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "config.h"
#include "listen.h"
#include "log.h"

int listen_tcp(const char *hostport, const char *what)
{
	char host[CONFIG_ADDR_MAX];
	const char *colon = strrchr(hostport, ':');
	struct addrinfo hints = { .ai_socktype = SOCK_STREAM, .ai_flags = AI_PASSIVE }, *res;
	int fd, one = 1, r;

	if (colon == NULL || colon == hostport) {
		log_warnx("%s \"%s\" is not HOST:PORT", what, hostport);
		return -1;
	}
	/* "[::1]:7001": getaddrinfo wants the address without brackets. */
	if (hostport[0] == '[' && colon[-1] == ']')
		snprintf(host, sizeof(host), "%.*s", (int)(colon - hostport - 2), hostport + 1);
	else
		snprintf(host, sizeof(host), "%.*s", (int)(colon - hostport), hostport);
	if ((r = getaddrinfo(host, colon + 1, &hints, &res)) != 0) {
		log_warnx("%s \"%s\": cannot resolve %s: %s", what, hostport, host, gai_strerror(r));
		return -1;
	}
	fd = socket(res->ai_family, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0 || setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &one, sizeof(one)) < 0 ||
	    bind(fd, res->ai_addr, res->ai_addrlen) < 0 || listen(fd, 128) < 0) {
		log_warn("%s: cannot listen on %s", what, hostport);
		if (fd >= 0)
			close(fd);
		freeaddrinfo(res);
		return -1;
	}
	freeaddrinfo(res);
	return fd;
}

int listen_unix(const char *path, mode_t mode, uid_t uid, gid_t gid, const char *what)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	mode_t old;
	int fd, r;

	if (strlen(path) >= sizeof(sa.sun_path)) {
		log_warnx("%s path %s is too long", what, path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0) {
		log_warn("%s: socket(AF_UNIX)", what);
		return -1;
	}
	/* A stale socket file from a crashed ldsd would make bind fail; a
	 * live one belongs to another ldsd, whose socket we must not take. */
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		log_warnx("%s: another ldsd is already serving %s", what, path);
		close(fd);
		return -1;
	}
	unlink(path);
	/* Created closed, opened up once its owner and group are right. */
	old = umask(077);
	r = bind(fd, (struct sockaddr *)&sa, sizeof(sa));
	umask(old);
	if (r < 0 || ((uid != (uid_t)-1 || gid != (gid_t)-1) && chown(path, uid, gid) < 0) || chmod(path, mode) < 0 ||
	    listen(fd, 128) < 0) {
		log_warn("%s: cannot listen on %s", what, path);
		close(fd);
		return -1;
	}
	return fd;
}
