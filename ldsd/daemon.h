/*
 * daemon.h - the state one ldsd process shares between its modules.
 *
 * Built by main.c; links (link.c), the client server (clientsrv.c), the
 * control socket (ctl.c) and the exec service (jobexec.c) hold a pointer
 * to it.  Single-threaded.
 */
#ifndef LDS_DAEMON_H
#define LDS_DAEMON_H

#include <stdint.h>

#include "config.h"
#include "evloop.h"
#include "transports/transport.h"

struct link;
struct clientsrv;
struct ctl;
struct jobexec;

#define DAEMON_MAX_LISTENERS CONFIG_MAX_PEERS

struct daemon_listener {
	struct daemon *d;
	const struct lds_transport_ops *ops;
	struct lds_tp_listener *l;
	char address[CONFIG_ADDR_MAX];
	uint16_t port;
};

struct daemon {
	struct config *cfg;
	struct evloop *ev;
	uint64_t instance;          /* random per process: peers detect restarts by it */
	uint64_t started_ns;
	struct lds_tp_host host;    /* the event loop, as transports see it */
	struct lds_transport *tcp;  /* one instance per transport kind in use */
	struct link *links[CONFIG_MAX_PEERS];
	size_t nlinks;
	struct daemon_listener listeners[DAEMON_MAX_LISTENERS];
	size_t nlisteners;
	struct clientsrv *cs;
	struct ctl *ctl;
	struct jobexec *jx;         /* the exec service (jobexec.c) */
	int draining;               /* SIGTERM seen: finishing unacknowledged data */
	uint64_t drain_deadline_ns;
};

#endif
