/*
 * tploop.h - a small poll(2) loop that hosts a transport (struct
 * lds_tp_host, transports/transport.h) inside liblds, where there is no
 * ldsd event loop: the RDMA client path (rdmaclient.c) runs the rdma kind
 * and its relay on one, first in the caller of lds_open while it connects,
 * then on the connection's own thread.  Not thread-safe: one thread at a
 * time.  Watches, timers and pending hooks are few (a conn's completion
 * channel, the connection manager, the relay's socket): fixed tables.
 */
#ifndef LDS_TPLOOP_H
#define LDS_TPLOOP_H

#include "transports/transport.h"

struct tploop;

struct tploop *tploop_new(void);
void tploop_free(struct tploop *l);
/* Fills *h to drive a transport from l. */
void tploop_host(struct tploop *l, struct lds_tp_host *h);
/* One round: the pending hooks, then poll for at most timeout_ms (not at
 * all if a hook has work left), the callbacks of the fds that fired, the
 * timers due.  0, or -errno if poll failed. */
int tploop_run_once(struct tploop *l, int timeout_ms);

#endif
