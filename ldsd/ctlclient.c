/* ctlclient.c - one request to ldsd's control socket; see ctlclient.h. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>

#include "ctlclient.h"

int ctlclient_ask(const char *server, const char *path, const char *req, double timeout_s, char **reply, char *err,
		  size_t errlen)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	struct timeval tv = { .tv_sec = (time_t)timeout_s, .tv_usec = (suseconds_t)((timeout_s - (time_t)timeout_s) * 1e6) };
	size_t len = 0, cap = 4096;
	char *buf;
	ssize_t n;
	int fd;

	*reply = NULL;
	if (strlen(path) >= sizeof(sa.sun_path)) {
		snprintf(err, errlen, "control socket path %s is too long", path);
		return -1;
	}
	strcpy(sa.sun_path, path);
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0) {
		snprintf(err, errlen, "cannot reach %s at %s: %s (is it running? is that its control socket?)", server,
			 path, strerror(errno));
		if (fd >= 0)
			close(fd);
		return -1;
	}
	(void)setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv));
	if (write(fd, req, strlen(req)) != (ssize_t)strlen(req) || shutdown(fd, SHUT_WR) < 0) {
		snprintf(err, errlen, "cannot send request to %s: %s", path, strerror(errno));
		close(fd);
		return -1;
	}
	buf = malloc(cap);
	while (buf != NULL && (n = read(fd, buf + len, cap - len - 1)) > 0) {
		len += (size_t)n;
		if (len + 1 == cap) {
			char *nb = realloc(buf, cap *= 2);

			if (nb == NULL)
				free(buf);
			buf = nb;
		}
	}
	if (buf == NULL || n < 0) {
		snprintf(err, errlen, "reading the reply from %s: %s", path, buf ? strerror(errno) : "out of memory");
		free(buf);
		close(fd);
		return -1;
	}
	close(fd);
	buf[len] = '\0';
	*reply = buf;
	return 0;
}

int ctlclient_print(const char *prog, const char *server, const char *path, const char *req, double timeout_s)
{
	char err[512], *reply;
	int bad;

	if (ctlclient_ask(server, path, req, timeout_s, &reply, err, sizeof(err)) < 0) {
		fprintf(stderr, "%s: %s\n", prog, err);
		return 1;
	}
	if (reply[0] == '\0') {
		fprintf(stderr, "%s: %s at %s closed without a reply\n", prog, server, path);
		free(reply);
		return 1;
	}
	bad = ctlclient_is_error(reply);
	fputs(reply, bad ? stderr : stdout);
	free(reply);
	return bad;
}

int ctlclient_is_error(const char *reply)
{
	return strncmp(reply, "error: ", 7) == 0;
}
