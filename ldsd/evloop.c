/* evloop.c - epoll event loop with periodic ticks and idle hooks; see evloop.h. */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/epoll.h>

#include "clock.h"
#include "evloop.h"

#define EV_MAX_TICKS 32
#define EV_MAX_IDLE 16
#define EV_BATCH 64

struct ev_watch {
	int fd;
	unsigned events;
	evloop_fd_cb *cb;
	void *arg;
	/* Bumped on every (re)registration so that a stale epoll event for an
	 * fd that was unwatched and reused in the same round is ignored. */
	uint32_t gen;
	int active;
};

struct ev_tick {
	int id;
	uint64_t interval_ns, next_ns;
	evloop_tick_cb *cb;
	void *arg;
};

struct ev_idle {
	int id;
	evloop_idle_cb *cb;          /* one of cb and pending is set */
	evloop_pending_cb *pending;
	void *arg;
};

struct evloop {
	int epfd;
	volatile sig_atomic_t stop;
	struct ev_watch *w;       /* indexed by fd */
	size_t nw;
	struct ev_tick ticks[EV_MAX_TICKS];
	int nticks, next_tick_id;
	struct ev_idle idle[EV_MAX_IDLE];
	int nidle, next_idle_id;
};

struct evloop *evloop_new(void)
{
	struct evloop *ev = calloc(1, sizeof(*ev));

	if (ev == NULL)
		return NULL;
	ev->epfd = epoll_create1(EPOLL_CLOEXEC);
	if (ev->epfd < 0) {
		free(ev);
		return NULL;
	}
	ev->next_tick_id = 1;
	ev->next_idle_id = 1;
	return ev;
}

void evloop_free(struct evloop *ev)
{
	if (ev == NULL)
		return;
	close(ev->epfd);
	free(ev->w);
	free(ev);
}

static int ev_grow(struct evloop *ev, int fd)
{
	size_t n = ev->nw ? ev->nw : 64;
	struct ev_watch *w;

	while (n <= (size_t)fd)
		n *= 2;
	if (n == ev->nw)
		return 0;
	w = realloc(ev->w, n * sizeof(*w));
	if (w == NULL)
		return -ENOMEM;
	memset(w + ev->nw, 0, (n - ev->nw) * sizeof(*w));
	ev->w = w;
	ev->nw = n;
	return 0;
}

static uint32_t ev_epoll_events(unsigned events)
{
	/* epoll reports hang-up and error whatever the mask, and level-
	 * triggered they would come back every round for a quiet watch whose
	 * owner has chosen not to read (a client waiting for memory whose
	 * process exited): the loop would spin instead of sleeping.  Edge-
	 * triggered, a quiet watch hears of them once. */
	if (events == 0)
		return EPOLLET;
	return (events & EV_READ ? EPOLLIN | EPOLLRDHUP : 0) | (events & EV_WRITE ? EPOLLOUT : 0);
}

int evloop_watch(struct evloop *ev, int fd, unsigned events, evloop_fd_cb *cb, void *arg)
{
	struct epoll_event ee = { 0 };
	struct ev_watch *w;
	int r, op;

	if (fd < 0)
		return -EBADF;
	r = ev_grow(ev, fd);
	if (r < 0)
		return r;
	w = &ev->w[fd];
	op = w->active ? EPOLL_CTL_MOD : EPOLL_CTL_ADD;
	if (!w->active)
		w->gen++;
	ee.events = ev_epoll_events(events);
	ee.data.u64 = (uint64_t)(unsigned)fd | (uint64_t)w->gen << 32;
	if (!w->active || w->events != events) {
		if (epoll_ctl(ev->epfd, op, fd, &ee) < 0)
			return -errno;
	}
	w->fd = fd;
	w->events = events;
	w->cb = cb;
	w->arg = arg;
	w->active = 1;
	return 0;
}

void evloop_unwatch(struct evloop *ev, int fd)
{
	if (fd < 0 || (size_t)fd >= ev->nw || !ev->w[fd].active)
		return;
	epoll_ctl(ev->epfd, EPOLL_CTL_DEL, fd, NULL);
	ev->w[fd].active = 0;
	ev->w[fd].cb = NULL;
}

int evloop_tick_add(struct evloop *ev, unsigned interval_ms, evloop_tick_cb *cb, void *arg)
{
	struct ev_tick *t;

	if (interval_ms == 0)
		return -EINVAL;
	if (ev->nticks == EV_MAX_TICKS)
		return -ENOSPC;
	t = &ev->ticks[ev->nticks++];
	t->id = ev->next_tick_id++;
	t->interval_ns = (uint64_t)interval_ms * 1000000ull;
	t->next_ns = clock_now_ns() + t->interval_ns;
	t->cb = cb;
	t->arg = arg;
	return t->id;
}

void evloop_tick_del(struct evloop *ev, int id)
{
	for (int i = 0; i < ev->nticks; i++) {
		if (ev->ticks[i].id == id) {
			ev->ticks[i] = ev->ticks[--ev->nticks];
			return;
		}
	}
}

static int ev_idle_add(struct evloop *ev, evloop_idle_cb *cb, evloop_pending_cb *pending, void *arg)
{
	if (ev->nidle == EV_MAX_IDLE)
		return -ENOSPC;
	ev->idle[ev->nidle] = (struct ev_idle){ .id = ev->next_idle_id++, .cb = cb, .pending = pending, .arg = arg };
	return ev->idle[ev->nidle++].id;
}

int evloop_idle_add(struct evloop *ev, evloop_idle_cb *cb, void *arg)
{
	return ev_idle_add(ev, cb, NULL, arg);
}

int evloop_pending_add(struct evloop *ev, evloop_pending_cb *cb, void *arg)
{
	return ev_idle_add(ev, NULL, cb, arg);
}

void evloop_idle_del(struct evloop *ev, int id)
{
	for (int i = 0; i < ev->nidle; i++) {
		if (ev->idle[i].id == id) {
			/* Kept in order: idle work runs in the order it was added. */
			memmove(&ev->idle[i], &ev->idle[i + 1], (size_t)(ev->nidle - i - 1) * sizeof(ev->idle[0]));
			ev->nidle--;
			return;
		}
	}
}

static int ev_timeout_ms(struct evloop *ev, uint64_t now)
{
	uint64_t soonest = UINT64_MAX;

	for (int i = 0; i < ev->nticks; i++)
		if (ev->ticks[i].next_ns < soonest)
			soonest = ev->ticks[i].next_ns;
	if (soonest == UINT64_MAX)
		return -1;
	if (soonest <= now)
		return 0;
	/* Round up so that we never wake just before a deadline and spin. */
	return (int)((soonest - now + 999999) / 1000000);
}

static void ev_run_ticks(struct evloop *ev)
{
	uint64_t now = clock_now_ns();

	for (int i = 0; i < ev->nticks; i++) {
		struct ev_tick *t = &ev->ticks[i];

		if (t->next_ns > now)
			continue;
		t->next_ns += t->interval_ns;
		if (t->next_ns <= now)
			t->next_ns = now + t->interval_ns;
		t->cb(now, t->arg);
	}
}

void evloop_stop(struct evloop *ev)
{
	ev->stop = 1;
}

int evloop_run(struct evloop *ev)
{
	struct epoll_event evs[EV_BATCH];

	ev->stop = 0;
	while (!ev->stop) {
		int n, timeout, busy = 0;

		for (int i = 0; i < ev->nidle; i++) {
			if (ev->idle[i].cb)
				ev->idle[i].cb(ev->idle[i].arg);
			else
				busy |= ev->idle[i].pending(ev->idle[i].arg) > 0;
		}
		/* An idle callback may have stopped the loop: no sleep then. */
		timeout = busy || ev->stop ? 0 : ev_timeout_ms(ev, clock_now_ns());
		n = epoll_wait(ev->epfd, evs, EV_BATCH, timeout);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		for (int i = 0; i < n && !ev->stop; i++) {
			int fd = (int)(evs[i].data.u64 & 0xffffffffu);
			uint32_t gen = (uint32_t)(evs[i].data.u64 >> 32);
			struct ev_watch *w;
			unsigned got = 0;

			if ((size_t)fd >= ev->nw)
				continue;
			w = &ev->w[fd];
			if (!w->active || w->gen != gen || w->cb == NULL)
				continue;
			if (evs[i].events & (EPOLLIN | EPOLLRDHUP))
				got |= EV_READ;
			if (evs[i].events & EPOLLOUT)
				got |= EV_WRITE;
			if (evs[i].events & (EPOLLERR | EPOLLHUP))
				got |= EV_ERROR;
			got &= w->events | EV_ERROR;
			if (got)
				w->cb(fd, got, w->arg);
		}
		ev_run_ticks(ev);
	}
	return 0;
}
