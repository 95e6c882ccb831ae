/* service.c - detaching, pid file, sd_notify; see service.h. */
#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/file.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>

#include "service.h"

int service_detach(void)
{
	int p[2];
	pid_t pid;
	char ok;

	if (pipe2(p, O_CLOEXEC) < 0)
		return -errno;
	pid = fork();
	if (pid < 0) {
		int e = errno;

		close(p[0]);
		close(p[1]);
		return -e;
	}
	if (pid == 0) {
		close(p[0]);
		setsid();
		if (chdir("/") < 0)
			_exit(1);
		return p[1];
	}
	close(p[1]);
	{
		ssize_t r;
		int st;

		while ((r = read(p[0], &ok, 1)) < 0 && errno == EINTR)
			;
		/* One byte: the child is up.  EOF: it exited during start-up. */
		if (r == 1 && ok == 'R')
			_exit(0);
		while (waitpid(pid, &st, 0) < 0 && errno == EINTR)
			;
		st = WIFEXITED(st) && WEXITSTATUS(st) != 0 ? WEXITSTATUS(st) : 1;
		fprintf(stderr, "ldsd: start-up failed (exit status %d); the reason is in the system log "
				"(journalctl -t ldsd), or run with -f to see it here\n", st);
		_exit(st);
	}
}

/* The sd_notify protocol: one datagram to $NOTIFY_SOCKET, an abstract
 * socket when the name starts with '@'. */
static void notify(const char *state)
{
	const char *path = getenv("NOTIFY_SOCKET");
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	size_t n;
	int fd;

	if (path == NULL || (path[0] != '/' && path[0] != '@') || (n = strlen(path)) >= sizeof(sa.sun_path))
		return;
	memcpy(sa.sun_path, path, n);
	if (path[0] == '@')
		sa.sun_path[0] = '\0';
	fd = socket(AF_UNIX, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return;
	if (sendto(fd, state, strlen(state), MSG_NOSIGNAL, (struct sockaddr *)&sa,
		   (socklen_t)(offsetof(struct sockaddr_un, sun_path) + n)) < 0)
		fprintf(stderr, "ldsd: cannot notify systemd (%s): %s\n", path, strerror(errno));
	close(fd);
}

void service_ready(int fd)
{
	char state[64];

	if (fd >= 0) {
		int null = open("/dev/null", O_RDWR);

		if (null >= 0) {
			dup2(null, 0);
			dup2(null, 1);
			dup2(null, 2);
			if (null > 2)
				close(null);
		}
		if (write(fd, "R", 1) < 0)
			_exit(1);   /* nobody waits: the parent is gone */
		close(fd);
	}
	snprintf(state, sizeof(state), "READY=1\nMAINPID=%ld", (long)getpid());
	notify(state);
}

void service_stopping(void)
{
	notify("STOPPING=1");
}

int service_pidfile_open(const char *path)
{
	char buf[32];
	int fd = open(path, O_RDWR | O_CREAT | O_CLOEXEC | O_NOFOLLOW, 0644);
	int n;

	if (fd < 0)
		return -errno;
	if (flock(fd, LOCK_EX | LOCK_NB) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	n = snprintf(buf, sizeof(buf), "%ld\n", (long)getpid());
	if (ftruncate(fd, 0) < 0 || pwrite(fd, buf, (size_t)n, 0) != n) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

void service_pidfile_close(const char *path, int fd)
{
	if (fd < 0)
		return;
	unlink(path);
	close(fd);
}
