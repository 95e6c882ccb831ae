/*
 * ctl.h - the control socket ldsctl talks to.
 *
 * One request line per connection, one reply, then close:
 *   "status"            human-readable status
 *   "status json"       the same as one JSON object
 *   "streams PEER N|auto"         the link's stream count from now on
 *                                 (connect side; link_set_stream_count)
 *   "fault break PEER [STREAM]"   break streams (only with allow_faults)
 *   "fault stall PEER [STREAM]"   stop reading and writing streams without
 *                                 closing them, as a black hole would
 *   "metrics"           OpenMetrics text (metrics.h)
 * Replies to bad requests start with "error: ".  The socket is created
 * mode 0600: only the daemon's user may inspect or disturb it.
 *
 * The status socket (status_socket, mode 0660, group status_group) takes
 * the requests that only read: status, status json, metrics; so a
 * monitoring agent needs no root.  With metrics_listen the metrics are
 * also served over HTTP (GET /metrics), for Prometheus and its kin.
 * Every connection has 5 s to ask and read its answer, and at most
 * CTL_CONNS_MAX are open at once.
 */

/* Version of the status document's layout ("schema" in status json).
 * Within one schema keys are only ever added, never renamed, removed or
 * given another type or unit; anything else raises the schema
 * (ldsctl(1), "JSON status"). */
#define CTL_STATUS_SCHEMA 2
#ifndef LDS_CTL_H
#define LDS_CTL_H

#include "daemon.h"

struct ctl *ctl_new(struct daemon *d);
void ctl_free(struct ctl *c);

#endif
