/*
 * shmclient.h - liblds's side of the shared-memory rings (shmring.h):
 * receiving them from ldsd, the bytes to and from the daemon through
 * them, and the one descriptor an application polls.
 *
 * ldsd hands over, with SCM_RIGHTS on the SHM frame, the rings' memfd and
 * two eventfds: one ldsd rings to wake us, one we ring to wake it.  The
 * socket stays open: its end says that ldsd is gone.  lds_fd then returns
 * an epoll descriptor watching both the socket and our eventfd.
 */
#ifndef LDS_SHMCLIENT_H
#define LDS_SHMCLIENT_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>
#include <sys/uio.h>

#include "shmring.h"

#define SHMCLIENT_FDS 4   /* memfd, the eventfd we sleep on, the one we ring, the memfd we only read */
#define SHM_ENV "LDS_SHM" /* "0": use the socket only */

struct shmclient {
	struct shmmap map;
	int efd_wait;             /* ldsd rings it */
	int efd_ring;             /* we ring it */
	int pollfd;               /* epoll: the socket and efd_wait */
};

/* Descriptors received with the daemon's frames, kept until its SHM frame
 * takes them. */
struct shmfds {
	int fd[SHMCLIENT_FDS];
	int n;
};

/* Whether this process asks for rings (LDS_SHM is not "0"). */
int shmclient_wanted(void);
/* read(2) on the socket that keeps descriptors passed with the bytes in
 * *fds (closing any beyond SHMCLIENT_FDS). */
ssize_t shmclient_recv(int sock, void *buf, size_t len, struct shmfds *fds);
void shmfds_close(struct shmfds *fds);
/* The SHM frame: maps the rings of size bytes with the descriptors in
 * *fds (taken from it).  Returns a new shmclient or NULL (*err set). */
struct shmclient *shmclient_attach(int sock, struct shmfds *fds, uint64_t size, int *err);
void shmclient_free(struct shmclient *s);

/* Bytes from ldsd: up to len, 0 if none waits, -EPROTO. */
ssize_t shmclient_read(struct shmclient *s, void *buf, size_t len);
/* Bytes to ldsd: as much of iov as fits, 0 if none does, -EPROTO. */
ssize_t shmclient_writev(struct shmclient *s, const struct iovec *iov, int n);
/* Before sleeping: 1 if need_in bytes wait or (need_out > 0) need_out
 * bytes of room are free, so do not sleep; 0 once the flags that make
 * ldsd ring are set; -EPROTO. */
int shmclient_ready(struct shmclient *s, size_t need_in, size_t need_out);

#endif
