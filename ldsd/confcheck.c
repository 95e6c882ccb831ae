/* confcheck.c - ldsd --check's lookups; see confcheck.h. */
#include <stdio.h>

#include "clientsrv.h"
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

int confcheck_transports(const struct config *cfg, FILE *out)
{
	int n = 0;

	for (size_t i = 0; i < cfg->npeers; i++) {
		const struct config_peer *p = &cfg->peers[i];
		const struct lds_transport_ops *ops = transport_find(p->transport);
		char why[256];

		if (ops && ops->probe && ops->probe(why, sizeof(why)) < 0) {
			fprintf(out, "ldsd: warning: %s:%d: peers.[%zu].transport: %s\n", cfg->file, p->line, i, why);
			n++;
		}
	}
	if (cfg->client_rdma[0]) {
		char why[256];

		if (clientrdma_probe(why, sizeof(why)) < 0) {
			fprintf(out, "ldsd: warning: %s:%d: clients.rdma: %s; ldsd would not listen there (for clients "
				"elsewhere, clients.tcp) and would serve its other listeners\n", cfg->file,
				cfg->client_rdma_line, why);
			n++;
		}
	}
	return n;
}
