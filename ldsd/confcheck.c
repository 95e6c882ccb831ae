/* confcheck.c - ldsd --check's lookups; see confcheck.h. */
#include <stdio.h>

#include "confcheck.h"
#include "resolve.h"

int confcheck_names(const struct config *cfg, char *err, size_t errlen)
{
	for (size_t i = 0; i < cfg->npeers; i++) {
		const struct config_peer *p = &cfg->peers[i];
		struct resolve_result r;

		if (resolve_now(p->address, p->port, &r) < 0) {
			snprintf(err, errlen, "%s:%d: peers.[%zu].address: \"%s\" does not resolve: %s", cfg->file,
				 p->line, i, p->address, resolve_strerror(&r));
			return -1;
		}
	}
	return 0;
}
