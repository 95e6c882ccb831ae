/*
 * dial.h - where the streams of a connect-side link connect, and what is
 * logged when they cannot.
 *
 * The peer's address is looked up off the event loop (resolve.h) and
 * every address it gives is tried, in Happy Eyeballs order (RFC 8305:
 * families interleaved, IPv6 first): an attempt that is refused or not
 * answered passes the turn to the next address at once; once every
 * address failed, the slot waits its back-off and the next round starts
 * with the address that last worked.  A name is looked up again when a
 * round fails and the last lookup is DIAL_RELOOKUP_S old (addresses
 * change), and a failed lookup is retried no sooner either.
 *
 * Failed connects are logged at warning level, per address: the first
 * one at once, then one line a minute saying how many more failed, or at
 * once when the reason changes; the connect that succeeds at last says
 * how many failed since the last line.
 *
 * Single-threaded, on the event loop.
 */
#ifndef LDS_DIAL_H
#define LDS_DIAL_H

#include <stdint.h>

#include "config.h"
#include "resolve.h"

#define DIAL_RELOOKUP_S 5.0
#define DIAL_LOG_WINDOW_S 60.0

typedef void dial_ready_cb(void *arg);

struct dial {
	char name[WIRE_NAME_MAX + 1];    /* the link's, for messages */
	char host[CONFIG_ADDR_MAX];
	uint16_t port;
	struct resolver *rs;
	struct resolve_req *req;         /* lookup in flight, or NULL */
	dial_ready_cb *ready;            /* a lookup finished: slots that waited may pick now */
	void *arg;
	int numeric;                     /* host is an address: never looked up */
	char lookup_error[CONFIG_ADDR_MAX + 64]; /* why the last lookup gave nothing; "" if it gave addresses */
	uint64_t looked_up_ns;           /* when the last lookup finished; 0: never */
	struct resolve_addr addrs[RESOLVE_MAX_ADDRS];
	size_t n;
	uint32_t failed;                 /* bit i: addrs[i] failed this round */
	size_t good;                     /* the address that last connected */
	/* The failure log, per address (and one for lookups): what was said
	 * last, when, and how many failed the same way since. */
	struct dial_said {
		char key[RESOLVE_TEXT_MAX];
		char msg[160];
		uint64_t ns;
		unsigned unsaid;
	} said[RESOLVE_MAX_ADDRS + 1];
};

/* Prepares d for host:port (name is the link's).  ready
 * (arg) is called from the loop when a lookup that dial_pick started ends. */
void dial_init(struct dial *d, struct resolver *rs, const char *name, const char *host, uint16_t port,
	       dial_ready_cb *ready, void *arg);
/* Cancels a lookup in flight. */
void dial_fini(struct dial *d);

/* The address the next attempt uses, in *out: returns 1; 0 when a lookup
 * is under way (ready follows); -1 when the name does not resolve (logged;
 * the caller tries again after its back-off). */
int dial_pick(struct dial *d, uint64_t now_ns, struct resolve_addr *out);
/* The attempt to addr (resolve_addr.text) failed for why; logs it (rate
 * limited).  Returns 1 if an address of this round is still untried: the
 * caller tries again at once. */
int dial_failed(struct dial *d, const char *addr, const char *why, uint64_t now_ns);
/* The attempt to addr connected: later rounds start there. */
void dial_up(struct dial *d, const char *addr);

#endif
