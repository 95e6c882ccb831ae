/*
 * ctlclient.h - the client side of the control socket (ldsd/ctl.h): one
 * request, the whole reply.  Used by ldsctl and ldsbench.
 */
#ifndef LDS_CTLCLIENT_H
#define LDS_CTLCLIENT_H

#include <stddef.h>

/* Sends req (one line, newline included) to the ldsd listening on path
 * and reads its reply into *reply (malloc'd, NUL-terminated; the caller
 * frees it).  Waits at most timeout_s for each read.  Returns 0, or -1
 * with err saying what failed ("cannot reach ldsd at PATH: ..."). */
int ctlclient_ask(const char *path, const char *req, double timeout_s, char **reply, char *err, size_t errlen);

/* True if a reply is an error ("error: ..."). */
int ctlclient_is_error(const char *reply);

#endif
