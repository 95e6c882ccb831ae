/* connect.h - reaching the local ldsd, before any frame of the handle. */
#ifndef LDS_CONNECT_H
#define LDS_CONNECT_H

#include <stdint.h>

/* A connected nonblocking socket to the daemon at path ("tcp:HOST:PORT"
 * for its TCP port, "rdma://HOST:PORT" for its RDMA port (a socket
 * relayed over RDMA, rdmaclient.h), both of which first prove the key of
 * LDS_KEY_FILE; else a unix socket), by deadline (deadline.h), or a
 * negative errno (-ENODEV: rdma:// with no RDMA device). */
int daemon_connect(const char *path, int64_t deadline);

#endif
