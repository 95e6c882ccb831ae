/*
 * confcheck.h - what ldsd --check verifies beyond config_load: the parts
 * that ask the outside world, which the daemon itself does not do at
 * start-up (a peer's name that does not resolve today may tomorrow, and
 * the daemon keeps trying; an administrator checking a file wants to
 * hear of it now).
 */
#ifndef LDS_CONFCHECK_H
#define LDS_CONFCHECK_H

#include <stddef.h>
#include <stdio.h>

#include "config.h"

/* Every peer's address resolves (blocking lookups).  Returns 0, or -1 with
 * "FILE:LINE: peers.[i].address: ..." in err. */
int confcheck_names(const struct config *cfg, char *err, size_t errlen);
/* Warns on out, "ldsd: warning: FILE:LINE: peers.[i].transport: ...", of
 * each peer whose transport this machine cannot run now (ops->probe: RDMA
 * without a device); the daemon would serve the other peers; likewise of
 * clients.rdma.  Returns the number of warnings. */
int confcheck_transports(const struct config *cfg, FILE *out);

#endif
