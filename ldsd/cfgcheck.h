/*
 * cfgcheck.h - what ldsd.conf's table-driven reader (cfgfield.c) cannot check
 * setting by setting: the peers' names against the cluster's, the sockets
 * derived from clients.socket and their owner, group and mode,
 * clients.tcp's key, the exec service (programs resolved, user and group
 * looked up, rules), the handshake limits against each other.  Only
 * config.c includes it; errors go through cfgerr.h.
 */
#ifndef LDS_CFGCHECK_H
#define LDS_CFGCHECK_H

#include <libconfig.h>
#include <sys/un.h>

#include "cfgerr.h"
#include "config.h"

/* Longest path a unix socket can bind to: checked when the file is read so
 * that a long path fails at --check time rather than at start-up. */
#define UNIX_PATH_LEN (sizeof(((struct sockaddr_un *)0)->sun_path) - 1)

/* The exec group's defaults, before the file is read. */
void cfgcheck_exec_defaults(struct config_exec *x);
/* The checks above on cfg as read from lc, filling in what they derive.
 * 0, or -1 with the message in c. */
int cfgcheck_file(struct cfgctx *c, const config_t *lc, struct config *cfg);

#endif
