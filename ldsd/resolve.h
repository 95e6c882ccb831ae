/*
 * resolve.h - host names to addresses, off the event loop, in the order
 * connections should try them.
 *
 * getaddrinfo blocks for as long as the DNS takes (seconds when a server
 * is down), which would stop every link and client of the daemon.  A
 * lookup here runs on a thread of its own; its result comes back on the
 * event-loop thread through a pipe the loop watches.  Numeric addresses
 * ("192.0.2.1", "::1", "[::1]") need no thread and are answered at once.
 *
 * Threading: every function is called on the event-loop thread; the
 * callback runs there too, from the loop, never from inside
 * resolver_start.
 */
#ifndef LDS_RESOLVE_H
#define LDS_RESOLVE_H

#include <stddef.h>
#include <stdint.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "evloop.h"

#define RESOLVE_MAX_ADDRS 16
/* "[v6 address]:port" */
#define RESOLVE_TEXT_MAX (INET6_ADDRSTRLEN + 10)

struct resolve_addr {
	int family;                      /* AF_INET or AF_INET6 */
	char host[INET6_ADDRSTRLEN];     /* numeric, without brackets */
	char text[RESOLVE_TEXT_MAX];     /* "1.2.3.4:port" or "[::1]:port", for messages */
};

struct resolve_result {
	int gai_err;                     /* 0, or getaddrinfo's EAI_* code */
	int sys_err;                     /* errno, where gai_err is EAI_SYSTEM */
	size_t n;                        /* addresses, in resolve_order's order */
	struct resolve_addr addrs[RESOLVE_MAX_ADDRS];
};

struct resolver;
struct resolve_req;

/* r is valid only during the call. */
typedef void resolve_cb(void *arg, const struct resolve_result *r);

/* A resolver whose results arrive through ev.  NULL (errno set) on
 * failure. */
struct resolver *resolver_new(struct evloop *ev);
/* Cancels what is in flight; lookups still running finish on their own
 * threads and free themselves.  NULL is a no-op. */
void resolver_free(struct resolver *rs);

/* Starts looking up host (a name, a numeric address, or "[v6]") for TCP
 * port; cb(arg, result) follows from the event loop, unless the request
 * is cancelled first.  Returns the request, or NULL (errno set: cannot
 * start a thread, out of memory) with no callback to come. */
struct resolve_req *resolver_start(struct resolver *rs, const char *host, uint16_t port, resolve_cb *cb,
				   void *arg);
/* The callback of req will not be called; req is gone. */
void resolve_cancel(struct resolve_req *req);

/* The same lookup, blocking: for ldsd --check and other start-up work
 * that may wait.  Fills *r; returns 0 if there is at least one address,
 * else -1. */
int resolve_now(const char *host, uint16_t port, struct resolve_result *r);

/* Fills *r without a lookup and returns 0 if host is a numeric address
 * (brackets allowed); else -1. */
int resolve_numeric(const char *host, uint16_t port, struct resolve_result *r);

/* What went wrong with r, as the resolver says it ("Name or service not
 * known"); "no address" for an empty result. */
const char *resolve_strerror(const struct resolve_result *r);

/* Orders a[0..n) as RFC 8305 (Happy Eyeballs) section 4 does: the
 * families interleaved, IPv6 first, each family in the order the resolver
 * gave (which RFC 6724 sorted).  Pure. */
void resolve_order(struct resolve_addr *a, size_t n);

/* "[::1]" -> "::1" into out (len bytes); other strings unchanged.  Returns
 * -1 for an unbalanced bracket or a result too long. */
int resolve_unbracket(const char *host, char *out, size_t len);

#endif
