/*
 * evloop.h - the event loop: file descriptors, periodic ticks, stop flag.
 *
 * The only module that knows epoll.  Single-threaded: every callback runs on
 * the thread that calls evloop_run().  Callbacks may add and remove watches
 * (including their own) at any time; a watch removed during a dispatch round
 * is not called again in that round.
 */
#ifndef LDS_EVLOOP_H
#define LDS_EVLOOP_H

#include <stdint.h>

#define EV_READ  0x1u
#define EV_WRITE 0x2u
/* Delivered only: hang-up or error on the fd (read it to learn which). */
#define EV_ERROR 0x4u

struct evloop;

typedef void evloop_fd_cb(int fd, unsigned events, void *arg);
typedef void evloop_tick_cb(uint64_t now_ns, void *arg);

/* Returns NULL (errno set) on failure. */
struct evloop *evloop_new(void);
void evloop_free(struct evloop *ev);

/* Starts watching fd for events (EV_READ|EV_WRITE) or, if it is already
 * watched, changes the events and callback.  events may be 0 (keep the fd
 * registered but quiet): then a hang-up or error is reported once, as
 * EV_ERROR alone, not every round while it lasts; asking for EV_READ again
 * reports it again if it is still there.  Returns 0 or -errno. */
int evloop_watch(struct evloop *ev, int fd, unsigned events, evloop_fd_cb *cb, void *arg);
/* Stops watching fd; a no-op if it is not watched.  Call before close(fd). */
void evloop_unwatch(struct evloop *ev, int fd);

/* Calls cb every interval_ms (>= 1) until removed.  Returns an id > 0 or
 * -errno. */
int evloop_tick_add(struct evloop *ev, unsigned interval_ms, evloop_tick_cb *cb, void *arg);
void evloop_tick_del(struct evloop *ev, int id);

/* Calls cb once per loop round, after dispatching events and before
 * sleeping: the place to coalesce work (acks, flushes).  Returns an id > 0
 * or -errno. */
typedef void evloop_idle_cb(void *arg);
int evloop_idle_add(struct evloop *ev, evloop_idle_cb *cb, void *arg);
/* An idle callback for work no fd announces (data a transport holds in
 * memory, a completion queue to drain): cb returns > 0 while work remains,
 * and the loop then polls without sleeping.  Returns an id > 0 or -errno. */
typedef int evloop_pending_cb(void *arg);
int evloop_pending_add(struct evloop *ev, evloop_pending_cb *cb, void *arg);
/* Removes an idle or pending callback; a no-op for an unknown id.  One
 * removed while the callbacks run may keep the next from running in that
 * round. */
void evloop_idle_del(struct evloop *ev, int id);

/* Runs until evloop_stop(); returns 0, or -errno if epoll_wait failed. */
int evloop_run(struct evloop *ev);
/* Async-signal-safe: makes evloop_run() return after the current round. */
void evloop_stop(struct evloop *ev);

#endif
