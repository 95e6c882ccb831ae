/*
 * clientshm.c - a local client's shared-memory rings (libclient/shmring.h):
 * set up after HELLO, then the bytes to and from the client that the
 * socket carried.  See client.h.
 *
 * ldsd creates and seals the file and the eventfds itself and hands them
 * to the client, so that it never maps or waits on anything the client
 * chose.  The client can still write anything into the rings and their
 * header: every position read from there is checked (shmring.c), and the
 * bytes are copied out before they are parsed (client_read) or read once
 * as payload (clientshm_fill), so that a client changing them meanwhile
 * only changes its own message.
 *
 * A payload for a sealed link is not copied at all where its block will
 * be taken soon: it stays in the ring (sendbuf_defer), held from the
 * client, until a stream seals it from there into its block.  Regions are
 * given back in ring order as they settle; any that a link has not sealed
 * by the next tick but one (its streams down or stalled), and all of a client that
 * goes, are copied into their blocks instead (sendbuf_materialize), so
 * that a ring is never held for long.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/eventfd.h>
#include <sys/ioctl.h>
#include <sys/socket.h>

#include "client.h"
#include "log.h"
#include "sendbuf.h"

#define SHM_DEFER_MAX 64   /* payload regions left in a ring at once; beyond, copied */

/* A payload region left in the ring: where it starts, and its block. */
struct shm_defer {
	uint64_t start;
	struct sendbuf *sb;
	struct sb_block *blk;
	int done;
};

struct clientshm {
	struct shmmap map;
	int efd_daemon;               /* we sleep on it: the client rings it */
	int efd_client;               /* the client sleeps on it: we ring it */
	int memfd, dmemfd;            /* the rings' files (shmring_create), until handed to the client */
	int bad;                      /* the client broke its ring: closing */
	int sock_ready;               /* the socket polled readable: read it when the ring is empty */
	/* Regions left in the ring, oldest first: tokens head .. head +
	 * ndefer - 1, at defer[token % SHM_DEFER_MAX]. */
	struct sb_src src;
	struct shm_defer defer[SHM_DEFER_MAX];
	uint32_t head, ndefer;
	uint32_t head_at_tick;
	uint64_t given;               /* ring position given back when the client was last woken for room */
};

/* The client broke its ring: logged once, then it is closed like any
 * client breaking the protocol. */
static ssize_t ring_broken(struct client *c)
{
	if (!c->shm->bad)
		log_warnx("client %s (uid %d, pid %d, %s): its shared-memory ring holds positions out of bounds; "
			  "closing it", c->peer, (int)c->uid, (int)c->pid, c->ep ? c->ep->name : "no endpoint");
	c->shm->bad = 1;
	client_doom(c);
	errno = EPROTO;
	return -1;
}

/* The bytes of rings this user's clients hold now. */
static size_t user_ring_bytes(const struct client *c)
{
	size_t n = 0;

	for (const struct client *o = c->cs->clients; o; o = o->next)
		if (o->uid == c->uid && o->shm)
			n += 2 * o->shm->map.size;
	return n;
}

/* The socket's events: only its end (or bytes it must not carry) makes
 * it readable, so it is read only after it said so. */
static void clientshm_sock_event(int fd, unsigned events, void *arg)
{
	struct client *c = arg;

	c->shm->sock_ready = 1;
	c->cs->up->event(fd, events, c);
}

static void clientshm_event(int fd, unsigned events, void *arg)
{
	struct client *c = arg;

	shmring_drain(fd);
	/* Writing first: the event may close c after reading. */
	c->cs->up->event(c->fd, EV_READ | (c->want_write ? EV_WRITE : 0), c);
}

/* A link read a region (or let it go): the ring up to the oldest one
 * still held goes back to the client. */
static void shm_settled(struct sb_src *src, uint32_t token)
{
	struct clientshm *s = (struct clientshm *)((char *)src - offsetof(struct clientshm, src));
	struct shmring *r = &s->map.r[SHMRING_C2D];

	s->defer[token % SHM_DEFER_MAX].done = 1;
	if (token != s->head)
		return;
	while (s->ndefer > 0 && s->defer[s->head % SHM_DEFER_MAX].done) {
		s->defer[s->head++ % SHM_DEFER_MAX].done = 0;
		s->ndefer--;
	}
	if (s->ndefer == 0)
		shmring_unhold(r);
	else
		shmring_hold_move(r, s->defer[s->head % SHM_DEFER_MAX].start);
	/* A client waiting for room is woken for a quarter of the ring or
	 * more, not per block: each wake-up costs both sides a system call. */
	if (s->ndefer > 0 && r->hold_pos - s->given < r->size / 4)
		return;
	s->given = s->ndefer ? r->hold_pos : r->cons;
	if (shmring_wake_producer(r))
		shmring_ring(s->efd_client);
}

/* Copies every region still in the ring into its block. */
static void shm_materialize(struct clientshm *s)
{
	while (s->ndefer > 0)
		sendbuf_materialize(s->defer[s->head % SHM_DEFER_MAX].sb, s->defer[s->head % SHM_DEFER_MAX].blk);
}

static void shm_free(struct clientsrv *cs, struct clientshm *s)
{
	shm_materialize(s);
	if (s->memfd >= 0)
		close(s->memfd);
	if (s->dmemfd >= 0)
		close(s->dmemfd);
	if (s->efd_daemon >= 0) {
		evloop_unwatch(cs->d->ev, s->efd_daemon);
		close(s->efd_daemon);
	}
	if (s->efd_client >= 0)
		close(s->efd_client);
	shmring_unmap(&s->map);
	free(s);
}

int clientshm_offer(struct client *c)
{
	const struct config_clients *lim = &c->cs->d->cfg->clients;
	size_t size = shmring_round(lim->shm_ring);
	struct clientshm *s;
	int rc;

	if (size == 0 || c->tcp)
		return 0;
	if (user_ring_bytes(c) + 2 * size > lim->input_per_user) {
		log_info("client %s (uid %d): its user's rings would pass input_per_user = %zu; it uses the socket",
			 c->peer, (int)c->uid, lim->input_per_user);
		return 0;
	}
	s = calloc(1, sizeof(*s));
	if (s == NULL)
		return 0;
	s->src.settled = shm_settled;
	s->efd_daemon = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	s->efd_client = eventfd(0, EFD_NONBLOCK | EFD_CLOEXEC);
	rc = shmring_create(size, &s->memfd, &s->dmemfd);
	if (rc < 0)
		s->memfd = s->dmemfd = -1;
	else
		rc = shmring_map(&s->map, s->memfd, s->dmemfd, size, 1);
	if (rc == 0 && (s->efd_daemon < 0 || s->efd_client < 0))
		rc = -errno;
	if (rc == 0)
		rc = evloop_watch(c->cs->d->ev, s->efd_daemon, EV_READ, clientshm_event, c);
	if (rc < 0) {
		log_warnx("client %s: cannot set up its shared-memory rings (%s); it uses the socket", c->peer,
			  strerror(-rc));
		shm_free(c->cs, s);
		return 0;
	}
	c->shm = s;
	return 1;
}

int clientshm_start(struct client *c)
{
	struct cp_msg m = { .type = CP_SHM, .ring_size = c->shm->map.size };
	uint8_t frame[CP_HDR_LEN + 8];
	int fds[4] = { c->shm->memfd, c->shm->efd_client, c->shm->efd_daemon, c->shm->dmemfd };
	union {
		struct cmsghdr h;
		char buf[CMSG_SPACE(sizeof(fds))];
	} cm = { 0 };
	struct iovec iov[2] = { { c->ctl + c->ctl_off, c->ctl_len - c->ctl_off }, { frame, 0 } };
	struct msghdr mh = { .msg_iov = iov, .msg_iovlen = 2, .msg_control = cm.buf, .msg_controllen = sizeof(cm.buf) };
	ssize_t n;

	iov[1].iov_len = cp_encode(frame, sizeof(frame), &m);
	cm.h.cmsg_level = SOL_SOCKET;
	cm.h.cmsg_type = SCM_RIGHTS;
	cm.h.cmsg_len = CMSG_LEN(sizeof(fds));
	memcpy(CMSG_DATA(&cm.h), fds, sizeof(fds));
	/* The socket is new and nothing else was written to it: WELCOME and
	 * SHM fit its buffer whole, or the client is gone. */
	do
		n = sendmsg(c->fd, &mh, MSG_NOSIGNAL | MSG_DONTWAIT);
	while (n < 0 && errno == EINTR);
	close(c->shm->memfd);
	close(c->shm->dmemfd);
	c->shm->memfd = c->shm->dmemfd = -1;
	if (n != (ssize_t)(iov[0].iov_len + iov[1].iov_len)) {
		log_warnx("client %s: cannot hand it its shared-memory rings: %s", c->peer,
			  n < 0 ? strerror(errno) : "short write");
		return -1;
	}
	c->ctl_off = c->ctl_len = 0;
	c->shm->sock_ready = 1;
	clientshm_set_events(c);
	log_debug("client %s uses shared-memory rings of %zu bytes", c->peer, c->shm->map.size);
	return 0;
}

void clientshm_free(struct client *c)
{
	if (c->shm == NULL)
		return;
	shm_free(c->cs, c->shm);
	c->shm = NULL;
}

struct shmring *clientshm_in_ring(struct client *c)
{
	return c->shm ? &c->shm->map.r[SHMRING_C2D] : NULL;
}

struct shmring *clientshm_out_ring(struct client *c)
{
	return c->shm && !c->shm->bad ? &c->shm->map.r[SHMRING_D2C] : NULL;
}

uint64_t clientshm_taken(struct client *c)
{
	return shmring_taken(&c->shm->map.r[SHMRING_D2C]);
}

void clientshm_wake_reader(struct client *c)
{
	if (shmring_wake_consumer(&c->shm->map.r[SHMRING_D2C]))
		shmring_ring(c->shm->efd_client);
}

/* Bytes were taken from the client's ring: wake it if it waits for room. */
static void taken_from(struct client *c)
{
	if (shmring_wake_producer(&c->shm->map.r[SHMRING_C2D]))
		shmring_ring(c->shm->efd_client);
}

/* The ring is empty: if the socket polled readable since it was last
 * read, it says whether the client is gone (end of file: what it sent is
 * all read); else, or if it is still there, sleep until the client rings. */
static ssize_t ring_empty(struct client *c)
{
	struct shmring *r = &c->shm->map.r[SHMRING_C2D];
	uint8_t b;
	ssize_t n;
	int rc;

	if (c->shm->sock_ready) {
		do
			n = recv(c->fd, &b, 1, MSG_DONTWAIT);
		while (n < 0 && errno == EINTR);
		if (n == 0)
			return 0;
		if (n > 0) {
			log_warnx("client %s: wrote to its socket after switching to shared memory; closing it", c->peer);
			errno = EPROTO;
			return -1;
		}
		if (errno != EAGAIN && errno != EWOULDBLOCK)
			return -1;
		c->shm->sock_ready = 0;
	}
	rc = shmring_consumer_sleep(r);
	if (rc < 0)
		return ring_broken(c);
	errno = EAGAIN;
	return rc > 0 ? -2 : -1;
}

ssize_t client_read(struct client *c, void *buf, size_t len)
{
	for (;;) {
		ssize_t n;

		if (c->shm == NULL)
			return read(c->fd, buf, len);
		if (c->shm->bad)
			return ring_broken(c);
		n = shmring_read(&c->shm->map.r[SHMRING_C2D], buf, len);
		if (n < 0)
			return ring_broken(c);
		if (n > 0) {
			taken_from(c);
			return n;
		}
		n = ring_empty(c);
		if (n != -2)
			return n;
	}
}

int client_waiting(struct client *c, size_t *n)
{
	int waiting = 0;

	if (c->shm != NULL) {
		if (shmring_avail(&c->shm->map.r[SHMRING_C2D], n) < 0)
			return (int)ring_broken(c);
		return 0;
	}
	if (ioctl(c->fd, FIONREAD, &waiting) < 0)
		return -1;
	*n = (size_t)waiting;
	return 0;
}

/* Leaves the want bytes at the ring's next unread one where they are, for
 * dst's block: 0, or -1 if they are to be copied (too many regions, or
 * the block may not be sealed soon: sendbuf_defer). */
static int defer_region(struct clientshm *s, struct sendbuf *sb, uint8_t *dst, size_t want)
{
	struct shmring *r = &s->map.r[SHMRING_C2D];
	uint32_t token = s->head + s->ndefer;
	size_t avail;
	struct sb_block *b;

	if (s->ndefer == SHM_DEFER_MAX || shmring_avail(r, &avail) < 0 || avail < want)
		return -1;
	b = sendbuf_defer(sb, dst, shmring_rptr(r), want, &s->src, token);
	if (b == NULL)
		return -1;
	s->defer[token % SHM_DEFER_MAX] = (struct shm_defer){ r->cons, sb, b, 0 };
	if (s->ndefer++ == 0) {
		shmring_hold(r);
		s->given = r->cons;
	}
	shmring_release(r, want);
	return 0;
}

int clientshm_fill(struct client *c, struct sendbuf *sb, const struct iovec *iov, int n, size_t skip)
{
	struct shmring *r = &c->shm->map.r[SHMRING_C2D];

	for (int i = 0; i < n; i++, skip = 0) {
		uint8_t *dst = (uint8_t *)iov[i].iov_base + skip;
		size_t want = iov[i].iov_len - skip;
		ssize_t got;

		if (sb != NULL && defer_region(c->shm, sb, dst, want) == 0)
			continue;
		got = shmring_read(r, dst, want);
		if (got < 0) {
			ring_broken(c);
			return -EPROTO;
		}
		/* client_send_direct saw the whole frame in the ring. */
		if ((size_t)got != want)
			return -EIO;
	}
	taken_from(c);
	return 0;
}

int clientshm_peek(struct client *c, void *buf, size_t len)
{
	struct shmring *r = &c->shm->map.r[SHMRING_C2D];
	size_t avail;

	if (c->shm->bad || shmring_avail(r, &avail) < 0 || avail < len)
		return 0;
	memcpy(buf, shmring_rptr(r), len);
	return 1;
}

int clientshm_await(struct client *c, size_t need)
{
	struct shmring *r = &c->shm->map.r[SHMRING_C2D];
	int rc;

	/* The socket spoke (the client is gone): the usual path reads what
	 * is there and sees the end. */
	if (c->shm->bad || c->shm->sock_ready || need > r->size)
		return -1;
	rc = shmring_consumer_wait(r, need);
	return rc < 0 ? -1 : rc;
}

void clientshm_tick(struct client *c)
{
	struct clientshm *s = c->shm;

	/* The oldest region was there at the last tick too (a tick or two
	 * ago): its link is not sealing.  With none there, no region can
	 * match the mark. */
	if (s->ndefer > 0 && s->head == s->head_at_tick)
		shm_materialize(s);
	s->head_at_tick = s->ndefer > 0 ? s->head : s->head - 1;
}

ssize_t client_writev(struct client *c, const struct iovec *iov, int n)
{
	struct shmring *r;
	ssize_t w;

	if (c->shm == NULL)
		return writev(c->fd, iov, n);
	r = &c->shm->map.r[SHMRING_D2C];
	for (;;) {
		int rc;

		if (c->shm->bad)
			return ring_broken(c);
		w = shmring_writev(r, iov, n);
		if (w < 0)
			return ring_broken(c);
		if (w > 0) {
			clientshm_wake_reader(c);
			return w;
		}
		rc = shmring_producer_sleep(r, 1);
		if (rc < 0)
			return ring_broken(c);
		if (rc == 0) {
			errno = EAGAIN;
			return -1;
		}
	}
}

void clientshm_kick(struct client *c, int always)
{
	/* Reading stopped: either bytes wait (ring now) or the ring is empty
	 * and the client must ring us for the next ones. */
	if (always || (!c->shm->bad && shmring_consumer_sleep(&c->shm->map.r[SHMRING_C2D]) != 0))
		shmring_ring(c->shm->efd_daemon);
}

void clientshm_set_events(struct client *c)
{
	/* The socket only says the client is gone; reading it while the
	 * client waits for memory would only say so too early. */
	if (evloop_watch(c->cs->d->ev, c->fd, c->paused ? 0 : EV_READ, clientshm_sock_event, c) < 0)
		log_warn("client %s: cannot update its event mask", c->peer);
	/* Bytes it wrote while we did not read ring no bell: look now. */
	if (!c->paused)
		clientshm_kick(c, 0);
}
