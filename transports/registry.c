/* registry.c - the table of transports the daemon can drive. */
#include <string.h>

#include "transport.h"

extern const struct lds_transport_ops tcp_transport_ops;

static const struct lds_transport_ops *const transports[] = {
	&tcp_transport_ops,
};

const struct lds_transport_ops *transport_find(const char *name)
{
	for (size_t i = 0; i < sizeof(transports) / sizeof(transports[0]); i++)
		if (strcmp(transports[i]->name, name) == 0)
			return transports[i];
	return NULL;
}

const char *transport_names(void)
{
	return "tcp";
}
