/* tp_addr.h - addresses for socket transports (tcp, udp). */
#ifndef LDS_TP_ADDR_H
#define LDS_TP_ADDR_H

#include <stdint.h>
#include <netdb.h>

/* host:port for a socket of socktype (SOCK_STREAM, SOCK_DGRAM): host is
 * numeric for connect (never a lookup: see transport.h) and may be a name
 * for listen (passive), which runs at start-up.  0 with *res to free with
 * freeaddrinfo, -EADDRNOTAVAIL (no such host), -EINVAL or -errno. */
int tp_addr_resolve(const char *host, uint16_t port, int socktype, int passive, struct addrinfo **res);

#endif
