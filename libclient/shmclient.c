/* shmclient.c - liblds's side of the shared-memory rings; see shmclient.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/epoll.h>
#include <sys/socket.h>
#include <unistd.h>

#include "shmclient.h"

int shmclient_wanted(void)
{
	const char *v = getenv(SHM_ENV);

	return v == NULL || strcmp(v, "0") != 0;
}

void shmfds_close(struct shmfds *fds)
{
	for (int i = 0; i < fds->n; i++)
		close(fds->fd[i]);
	fds->n = 0;
}

ssize_t shmclient_recv(int sock, void *buf, size_t len, struct shmfds *fds)
{
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(SHMCLIENT_FDS * sizeof(int))];
	} cm;
	struct iovec iov = { buf, len };
	struct msghdr mh = { .msg_iov = &iov, .msg_iovlen = 1, .msg_control = cm.buf,
			     .msg_controllen = sizeof(cm.buf) };
	ssize_t n = recvmsg(sock, &mh, MSG_CMSG_CLOEXEC);

	if (n < 0)
		return n;
	for (struct cmsghdr *c = CMSG_FIRSTHDR(&mh); c != NULL; c = CMSG_NXTHDR(&mh, c)) {
		size_t k;

		if (c->cmsg_level != SOL_SOCKET || c->cmsg_type != SCM_RIGHTS)
			continue;
		k = (c->cmsg_len - CMSG_LEN(0)) / sizeof(int);
		for (size_t i = 0; i < k; i++) {
			int fd;

			memcpy(&fd, CMSG_DATA(c) + i * sizeof(int), sizeof(int));
			if (fds->n < SHMCLIENT_FDS)
				fds->fd[fds->n++] = fd;
			else
				close(fd);
		}
	}
	return n;
}

struct shmclient *shmclient_attach(int sock, struct shmfds *fds, uint64_t size, int *err)
{
	struct shmclient *s;
	struct epoll_event ev = { .events = EPOLLIN };
	int rc = -EPROTO;

	if (fds->n != SHMCLIENT_FDS || size > SHMRING_MAX) {
		shmfds_close(fds);
		*err = -EPROTO;
		return NULL;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL) {
		shmfds_close(fds);
		*err = -ENOMEM;
		return NULL;
	}
	s->efd_wait = fds->fd[1];
	s->efd_ring = fds->fd[2];
	s->pollfd = epoll_create1(EPOLL_CLOEXEC);
	rc = shmring_map(&s->map, fds->fd[0], fds->fd[3], (size_t)size, 0);
	close(fds->fd[0]);
	close(fds->fd[3]);
	fds->n = 0;
	if (rc == 0 && s->pollfd < 0)
		rc = -errno;
	if (rc == 0 && (epoll_ctl(s->pollfd, EPOLL_CTL_ADD, sock, &ev) < 0 ||
			epoll_ctl(s->pollfd, EPOLL_CTL_ADD, s->efd_wait, &ev) < 0))
		rc = -errno;
	if (rc < 0) {
		shmclient_free(s);
		*err = rc;
		return NULL;
	}
	return s;
}

void shmclient_free(struct shmclient *s)
{
	if (s == NULL)
		return;
	shmring_unmap(&s->map);
	close(s->efd_wait);
	close(s->efd_ring);
	if (s->pollfd >= 0)
		close(s->pollfd);
	free(s);
}

ssize_t shmclient_read(struct shmclient *s, void *buf, size_t len)
{
	struct shmring *r = &s->map.r[SHMRING_D2C];
	ssize_t n = shmring_read(r, buf, len);

	if (n > 0 && shmring_wake_producer(r))
		shmring_ring(s->efd_ring);
	return n;
}

ssize_t shmclient_writev(struct shmclient *s, const struct iovec *iov, int n)
{
	struct shmring *r = &s->map.r[SHMRING_C2D];
	ssize_t w = shmring_writev(r, iov, n);

	if (w > 0 && shmring_wake_consumer(r))
		shmring_ring(s->efd_ring);
	return w;
}

int shmclient_ready(struct shmclient *s, size_t need_in, size_t need_out)
{
	struct shmring *in = &s->map.r[SHMRING_D2C], *out = &s->map.r[SHMRING_C2D];
	size_t avail, room = 0;
	int rc;

	/* Work waiting needs no flag (which would make ldsd ring for
	 * nothing). */
	if (shmring_avail(in, &avail) < 0 || (need_out > 0 && shmring_space(out, &room) < 0))
		return -EPROTO;
	if (avail >= need_in || (need_out > 0 && room >= need_out))
		return 1;
	rc = shmring_consumer_sleep(in);
	if (rc == 0 && need_out > 0)
		rc = shmring_producer_sleep(out, need_out);
	/* Woken for fewer bytes than needed: a frame not yet whole. */
	if (rc == 1 && shmring_avail(in, &avail) == 0 && avail < need_in &&
	    (need_out == 0 || (shmring_space(out, &room) == 0 && room < need_out)))
		rc = 0;
	return rc;
}
