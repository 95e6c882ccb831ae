/* tp_addr.c - addresses for socket transports; see tp_addr.h. */
#include <errno.h>
#include <stdio.h>
#include <sys/socket.h>

#include "tp_addr.h"

int tp_addr_resolve(const char *host, uint16_t port, int socktype, int passive, struct addrinfo **res)
{
	struct addrinfo hints = { 0 };
	char ps[8];
	int r;

	hints.ai_family = AF_UNSPEC;
	hints.ai_socktype = socktype;
	hints.ai_flags = passive ? AI_PASSIVE : AI_NUMERICHOST;
	snprintf(ps, sizeof(ps), "%u", port);
	r = getaddrinfo(host, ps, &hints, res);
	if (r == EAI_SYSTEM)
		return -errno;
	if (r == EAI_NONAME)
		return -EADDRNOTAVAIL;
	return r != 0 ? -EINVAL : 0;
}
