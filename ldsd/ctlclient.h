/*
 * ctlclient.h - the client side of the control socket (ldsd/ctl.h): one
 * request, the whole reply.  Used by ldsctl, ldsbench and wanemu ctl
 * (whose control socket speaks the same one-line protocol).
 */
#ifndef LDS_CTLCLIENT_H
#define LDS_CTLCLIENT_H

#include <stddef.h>

/* Sends req (one line, newline included) to server ("ldsd", "wanemu")
 * listening on path and reads its reply into *reply (malloc'd,
 * NUL-terminated; the caller frees it).  Waits at most timeout_s for each
 * read.  Returns 0, or -1 with err saying what failed ("cannot reach ldsd
 * at PATH: ..."). */
int ctlclient_ask(const char *server, const char *path, const char *req, double timeout_s, char **reply, char *err,
		  size_t errlen);

/* For command-line tools: asks, then prints the reply on stdout, or on
 * stderr if it is an error, a failure as "PROG: reason".  An empty reply
 * is an error too.  Returns the exit status: 0, or 1. */
int ctlclient_print(const char *prog, const char *server, const char *path, const char *req, double timeout_s);

/* True if a reply is an error ("error: ..."). */
int ctlclient_is_error(const char *reply);

#endif
