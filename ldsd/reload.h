/*
 * reload.h - SIGHUP: the configuration file read again and applied.
 *
 * The new file is loaded and validated as at start-up (config_load); if it
 * is bad, the error (FILE:LINE: setting: ...) is logged and the daemon
 * runs on with the configuration it has.  Settings that the running
 * daemon cannot change (cluster, the client, control and status sockets,
 * clients.tcp, metrics_listen, the exec group) keep their old values, each
 * logged as needing a restart; log_level, allow_faults and drain_timeout
 * apply at once; peers are applied by daemon_reconfigure (daemon.h).
 */
#ifndef LDS_RELOAD_H
#define LDS_RELOAD_H

#include "daemon.h"

/* Reloads path (absolute: the daemon runs in "/") into d.  d->cfg must
 * have come from malloc: it is freed when the new one takes over.  Returns
 * 0, or -1 (logged) with d unchanged. */
int reload_config(struct daemon *d, const char *path);

#endif
