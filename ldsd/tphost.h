/*
 * tphost.h - the event loop as transports see it (struct lds_tp_host,
 * transports/transport.h): fd watches, periodic timers and before-sleep
 * pending hooks, each the evloop call of the same job.
 */
#ifndef LDS_TPHOST_H
#define LDS_TPHOST_H

#include "evloop.h"
#include "transports/transport.h"

/* Fills *h to drive transports from ev. */
void tphost_init(struct lds_tp_host *h, struct evloop *ev);

#endif
