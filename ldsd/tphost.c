/* tphost.c - the event loop as transports see it; see tphost.h. */
#include "tphost.h"

static int host_watch(void *ctx, int fd, unsigned events, void (*cb)(int, unsigned, void *), void *arg)
{
	return evloop_watch(ctx, fd, events, cb, arg);
}

static void host_unwatch(void *ctx, int fd)
{
	evloop_unwatch(ctx, fd);
}

static int host_timer_add(void *ctx, unsigned interval_ms, void (*cb)(uint64_t, void *), void *arg)
{
	return evloop_tick_add(ctx, interval_ms, cb, arg);
}

static void host_timer_del(void *ctx, int id)
{
	evloop_tick_del(ctx, id);
}

static int host_pending_add(void *ctx, int (*cb)(void *), void *arg)
{
	return evloop_pending_add(ctx, cb, arg);
}

static void host_pending_del(void *ctx, int id)
{
	evloop_idle_del(ctx, id);
}

void tphost_init(struct lds_tp_host *h, struct evloop *ev)
{
	*h = (struct lds_tp_host){
		.ctx = ev,
		.watch = host_watch,
		.unwatch = host_unwatch,
		.timer_add = host_timer_add,
		.timer_del = host_timer_del,
		.pending_add = host_pending_add,
		.pending_del = host_pending_del,
	};
}
