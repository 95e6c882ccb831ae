/*
 * listen.h - listening sockets the daemon offers beside its links: TCP
 * on "host:port" ("[v6]:port" too) and unix sockets with a given mode
 * and group.
 */
#ifndef LDS_LISTEN_H
#define LDS_LISTEN_H

#include <sys/types.h>

/* A nonblocking listening TCP socket on hostport, or -1 after logging why
 * (naming `what`, the setting it came from). */
int listen_tcp(const char *hostport, const char *what);

/* A nonblocking listening unix socket at path (a stale one is replaced,
 * one another process serves is refused), mode `mode`, owner uid and group
 * gid unless (uid_t)-1 / (gid_t)-1 (another owner needs root); or -1 after
 * logging why. */
int listen_unix(const char *path, mode_t mode, uid_t uid, gid_t gid, const char *what);

#endif
