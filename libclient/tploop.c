/* tploop.c - a poll(2) loop hosting a transport in liblds; see tploop.h. */
#include <errno.h>
#include <poll.h>
#include <stdlib.h>

#include "deadline.h"
#include "tploop.h"

#define TPLOOP_FDS 16
#define TPLOOP_TIMERS 4
#define TPLOOP_PENDING 4

struct tploop_fd {
	int fd;                       /* -1: free */
	unsigned events;
	void (*cb)(int fd, unsigned events, void *arg);
	void *arg;
};

struct tploop {
	struct tploop_fd fds[TPLOOP_FDS];
	struct {
		unsigned ms;          /* 0: free */
		uint64_t next_ns;
		void (*cb)(uint64_t now_ns, void *arg);
		void *arg;
	} timers[TPLOOP_TIMERS];
	struct {
		int (*cb)(void *arg); /* NULL: free */
		void *arg;
	} pending[TPLOOP_PENDING];
};

static struct tploop_fd *find_fd(struct tploop *l, int fd)
{
	for (int i = 0; i < TPLOOP_FDS; i++)
		if (l->fds[i].fd == fd)
			return &l->fds[i];
	return NULL;
}

static int loop_watch(void *ctx, int fd, unsigned events, void (*cb)(int fd, unsigned events, void *arg), void *arg)
{
	struct tploop *l = ctx;
	struct tploop_fd *f = find_fd(l, fd);

	if (f == NULL)
		f = find_fd(l, -1);
	if (f == NULL)
		return -ENOSPC;
	*f = (struct tploop_fd){ fd, events, cb, arg };
	return 0;
}

static void loop_unwatch(void *ctx, int fd)
{
	struct tploop_fd *f = find_fd(ctx, fd);

	if (f != NULL && fd >= 0)
		f->fd = -1;
}

static int loop_timer_add(void *ctx, unsigned interval_ms, void (*cb)(uint64_t now_ns, void *arg), void *arg)
{
	struct tploop *l = ctx;

	for (int i = 0; i < TPLOOP_TIMERS; i++) {
		if (l->timers[i].ms == 0) {
			l->timers[i].ms = interval_ms ? interval_ms : 1;
			l->timers[i].next_ns = clock_now_ns() + (uint64_t)l->timers[i].ms * 1000000;
			l->timers[i].cb = cb;
			l->timers[i].arg = arg;
			return i + 1;
		}
	}
	return -ENOSPC;
}

static void loop_timer_del(void *ctx, int id)
{
	struct tploop *l = ctx;

	if (id >= 1 && id <= TPLOOP_TIMERS)
		l->timers[id - 1].ms = 0;
}

static int loop_pending_add(void *ctx, int (*cb)(void *arg), void *arg)
{
	struct tploop *l = ctx;

	for (int i = 0; i < TPLOOP_PENDING; i++) {
		if (l->pending[i].cb == NULL) {
			l->pending[i].cb = cb;
			l->pending[i].arg = arg;
			return i + 1;
		}
	}
	return -ENOSPC;
}

static void loop_pending_del(void *ctx, int id)
{
	struct tploop *l = ctx;

	if (id >= 1 && id <= TPLOOP_PENDING)
		l->pending[id - 1].cb = NULL;
}

struct tploop *tploop_new(void)
{
	struct tploop *l = calloc(1, sizeof(*l));

	for (int i = 0; l != NULL && i < TPLOOP_FDS; i++)
		l->fds[i].fd = -1;
	return l;
}

void tploop_free(struct tploop *l)
{
	free(l);
}

void tploop_host(struct tploop *l, struct lds_tp_host *h)
{
	*h = (struct lds_tp_host){ .ctx = l, .watch = loop_watch, .unwatch = loop_unwatch, .timer_add = loop_timer_add,
				   .timer_del = loop_timer_del, .pending_add = loop_pending_add,
				   .pending_del = loop_pending_del };
}

/* The poll timeout: at most timeout_ms, and not past the next timer. */
static int next_timeout(const struct tploop *l, int timeout_ms, uint64_t now)
{
	for (int i = 0; i < TPLOOP_TIMERS; i++) {
		int64_t left;

		if (l->timers[i].ms == 0)
			continue;
		left = ((int64_t)l->timers[i].next_ns - (int64_t)now + 999999) / 1000000;
		if (left < 0)
			left = 0;
		if (timeout_ms < 0 || left < timeout_ms)
			timeout_ms = (int)left;
	}
	return timeout_ms;
}

int tploop_run_once(struct tploop *l, int timeout_ms)
{
	struct pollfd p[TPLOOP_FDS];
	int n = 0, busy = 0, rc;
	uint64_t now;

	for (int i = 0; i < TPLOOP_PENDING; i++)
		if (l->pending[i].cb != NULL && l->pending[i].cb(l->pending[i].arg) > 0)
			busy = 1;
	for (int i = 0; i < TPLOOP_FDS; i++) {
		if (l->fds[i].fd < 0)
			continue;
		p[n].fd = l->fds[i].fd;
		p[n].events = (short)(((l->fds[i].events & TP_EV_READ) ? POLLIN : 0) |
				      ((l->fds[i].events & TP_EV_WRITE) ? POLLOUT : 0));
		p[n].revents = 0;
		n++;
	}
	rc = poll(p, (nfds_t)n, busy ? 0 : next_timeout(l, timeout_ms, clock_now_ns()));
	if (rc < 0 && errno != EINTR)
		return -errno;
	for (int i = 0; i < n && rc > 0; i++) {
		struct tploop_fd *f;
		unsigned ev;

		if (p[i].revents == 0)
			continue;
		/* A callback may have unwatched it, or watched another. */
		f = find_fd(l, p[i].fd);
		if (f == NULL)
			continue;
		ev = ((p[i].revents & POLLIN) ? TP_EV_READ : 0) | ((p[i].revents & POLLOUT) ? TP_EV_WRITE : 0) |
		     ((p[i].revents & (POLLERR | POLLHUP | POLLNVAL)) ? TP_EV_ERROR : 0);
		f->cb(f->fd, ev, f->arg);
	}
	now = clock_now_ns();
	for (int i = 0; i < TPLOOP_TIMERS; i++) {
		if (l->timers[i].ms == 0 || now < l->timers[i].next_ns)
			continue;
		l->timers[i].next_ns = now + (uint64_t)l->timers[i].ms * 1000000;
		l->timers[i].cb(now, l->timers[i].arg);
	}
	return 0;
}
