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
struct admission;
struct rb_msg;

#define DAEMON_MAX_LISTENERS CONFIG_MAX_PEERS

#define DAEMON_MAX_TRANSPORTS 8

struct daemon_transport {
	const struct lds_transport_ops *ops;
	struct lds_transport *tp;
};

struct daemon_listener {
	struct daemon *d;
	const struct lds_transport_ops *ops;
	struct lds_tp_listener *l;
	struct lds_transport *tp;   /* the instance of kind ops */
	char address[CONFIG_ADDR_MAX];
	uint16_t port;
	uint64_t resume_ns;         /* paused until then (out of descriptors); 0 = accepting */
};

/* Where links hand what concerns local processes: the client server in
 * ldsd, the benchmark itself in ldsbench --direct.  Every call gets arg. */
struct daemon_sink {
	void *arg;
	/* A message from link `from` for a local endpoint: the sink owns m
	 * and calls link_delivered(from, m) once it is consumed. */
	void (*deliver)(void *arg, struct link *from, struct rb_msg *m);
	/* Optional: where m, whose header just arrived from a link, may be
	 * reassembled instead of in a buffer of its own (recvbuf.h, place),
	 * or NULL. */
	uint8_t *(*place)(void *arg, struct rb_msg *m);
	/* Message id of local client `client` reached its destination. */
	void (*acked)(void *arg, uint64_t client, uint64_t id);
	/* Message id of client, sent over l, will never be delivered (the
	 * peer gateway lost its state). */
	void (*lost)(void *arg, struct link *l, uint64_t client, uint64_t id, const char *reason);
	/* Link l has send memory again: senders waiting on it may go on. */
	void (*space)(void *arg, struct link *l);
};

struct daemon {
	struct config *cfg;
	struct evloop *ev;          /* the caller's, if set before daemon_init */
	int own_ev;                 /* daemon_init made ev: daemon_fini frees it */
	uint64_t instance;          /* random per process: peers detect restarts by it */
	uint64_t started_ns;
	struct lds_tp_host host;    /* the event loop, as transports see it */
	struct daemon_transport transports[DAEMON_MAX_TRANSPORTS]; /* one instance per kind in use */
	size_t ntransports;
	struct lds_tp_upcalls tp_up; /* what they call: link_upcalls, and the listeners' (daemon.c) */
	struct resolver *resolver;  /* peers' names, looked up off the loop (resolve.h) */
	struct link *links[CONFIG_MAX_PEERS];
	size_t nlinks;
	struct link **gone;         /* links a reload retired (link_retire), freed by daemon_fini */
	size_t ngone;
	struct daemon_listener listeners[DAEMON_MAX_LISTENERS];
	size_t nlisteners;
	struct admission *adm;      /* bounds on connections not yet authenticated */
	struct daemon_sink sink;
	struct clientsrv *cs;       /* ldsd only: links reach it through sink */
	struct ctl *ctl;
	struct jobexec *jx;         /* the exec service (jobexec.c) */
	int draining;               /* SIGTERM seen: finishing unacknowledged data */
	uint64_t drain_deadline_ns;
};

/* daemon.c: the parts of a daemon that drive links, shared by ldsd and
 * by ldsbench --direct, which runs a link in-process.  The caller owns
 * cfg and fills d->sink before daemon_start. */

/* Event loop (unless d->ev is set), instance id, transports, one link per
 * configured peer (not started), except for peers whose transport this
 * machine cannot run (ops->probe: RDMA without a device), which are logged
 * and left out.  Returns 0, or -1 after logging what failed. */
int daemon_init(struct daemon *d, struct config *cfg);
/* Listens for the listen-role peers (not those whose transport cannot
 * run here: logged), then starts connecting the connect-role ones.
 * Returns 0, or -1 after logging. */
int daemon_start(struct daemon *d);
/* Applies a reloaded configuration's peers; cfg becomes d->cfg (the caller
 * frees the old one after this returns, and has kept in cfg the settings
 * that cannot change at run time).  A peer no longer in cfg has its link
 * retired: its senders are told their undelivered messages were lost.  A
 * new peer gets a link, started.  A peer whose role, address, port,
 * transport, block_size or memory changed has its link replaced (retired,
 * then new); the others take the new settings in place (link_reconfigure),
 * their streams and data untouched.  Listeners no peer uses are closed,
 * new ones opened.  What fails is logged (a listener that cannot be
 * opened leaves its peers without one, until the next reload). */
void daemon_reconfigure(struct daemon *d, struct config *cfg);
/* The instance of transport kind ops, created (ops->init) at its first
 * use; NULL after logging why it cannot be.  Links and listeners of that
 * kind share it until daemon_fini. */
struct lds_transport *daemon_transport(struct daemon *d, const struct lds_transport_ops *ops);
/* Periodic link work (call every 50 ms or so); returns 1 when every link
 * is drained (link_drained). */
int daemon_tick(struct daemon *d, uint64_t now_ns);
/* Once per loop round: coalesced ACKs and new data on every link. */
void daemon_flush(struct daemon *d);
/* Says goodbye on every link, closes listeners, frees links, transports
 * and the event loop if daemon_init made it.  Safe on a half-initialised
 * d. */
void daemon_fini(struct daemon *d);

#endif
