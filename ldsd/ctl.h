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
 * Replies to bad requests start with "error: ".  The socket is created
 * mode 0600: only the daemon's user may inspect or disturb it.
 */
#ifndef LDS_CTL_H
#define LDS_CTL_H

#include "daemon.h"

struct ctl *ctl_new(struct daemon *d);
void ctl_free(struct ctl *c);

#endif
