/*
 * jobend.h - a job's end, told to its gateways: what waits for the job's
 * endpoints is dropped at once, not after undelivered_ttl.
 *
 * A job names its endpoints with a tag, "cluster/NAME-TAG" (jobmark.h).
 * An exec-service END (execmsg.h) with the tag as its text ends it: the
 * messages held for its endpoints that no process has open are dropped
 * (EP_DROP_ENDED: reported to their senders as not delivered, counted),
 * and the tag is marked for undelivered_ttl, so that what arrives later
 * for such endpoints is dropped as it comes.  An endpoint a process has
 * open keeps what it gets.
 *
 * Who may end a tag (docs/security.md, "Ending a job"):
 *  - a local client, over the unix socket, with an END to this cluster's
 *    own CLUSTER/ldsd.exec: if every endpoint of the tag that a process
 *    opened was opened by the client's uid (SO_PEERCRED);
 *  - through a link, the endpoint that requested exec-service job N here
 *    (START's requester, jobrecent), for its job N: then the tag's
 *    endpoints must all be exec.user's, the uid its jobs run as.
 * Anything else is refused and logged; the local client gets an ERROR.
 */
#ifndef LDS_JOBEND_H
#define LDS_JOBEND_H

#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

#include "endpoint.h"
#include "libclient/clientproto.h"

struct client;

/* Ends tag for uid in t: -EINVAL (not a tag) or -EPERM (an endpoint of
 * the tag belongs to another uid), with why; else drops the messages held
 * for its endpoints without a process through drop(arg, e, m,
 * EP_DROP_ENDED), marks the tag until now + ttl, and returns how many it
 * dropped. */
long jobend_end(struct eptab *t, const char *tag, uid_t uid, uint64_t now_ns, ep_drop_fn *drop, void *arg,
		char *why, size_t len);

/* A local client's SEND m to a reserved name of this cluster (exec_reserved_name):
 * an END to CLUSTER/ldsd.exec is the one request taken.  Answers it with
 * ACKED (done) or ERROR (why not). */
void jobend_local_request(struct client *c, const struct cp_msg *m);

#endif
