/* ended.c - a job's end, told to its gateways; see ended.h. */
#include <stdio.h>

#include "ldsd/execmsg.h"
#include "libclient/lds.h"
#include "tools/mwlaunch/ended.h"

#define ENDED_TIMEOUT_MS 3000

/* The local request: an END to the gateway's own CLUSTER/ldsd.exec. */
static void tell_local(const char *socket, const char *cluster, const char *tag)
{
	struct exec_msg m = { .type = EXEC_END };
	uint8_t buf[64];
	char dst[LDS_NAME_MAX];
	struct lds_event ev;
	uint64_t id = 0;
	size_t n;
	struct lds *h;
	int rc;

	snprintf(m.text, sizeof(m.text), "%s", tag);
	n = exec_encode(&m, buf, sizeof(buf));
	h = lds_open(socket, NULL, ENDED_TIMEOUT_MS, &rc);
	if (h != NULL) {
		snprintf(dst, sizeof(dst), "%s/%s", lds_cluster(h), EXEC_ENDPOINT);
		rc = lds_send(h, dst, buf, n, &id);
		if (rc == 0)
			rc = lds_wait_settled(h, id, ENDED_TIMEOUT_MS);
		while (rc == 0 && lds_next_event(h, &ev) == 1)
			if (ev.type == LDS_EV_ERROR && ev.first <= id && id <= ev.last) {
				fprintf(stderr, "mwlaunch: cluster %s: its gateway did not drop what waits for job %s: %s\n",
					cluster, tag, ev.text);
				rc = 1;
			}
		lds_close(h);
	}
	if (rc < 0)
		fprintf(stderr, "mwlaunch: cluster %s: cannot tell its gateway that job %s ended (%s): what waits for "
			"it there is dropped after its undelivered_ttl instead\n", cluster, tag, lds_strerror(rc));
}

void ended_tell(const struct job *j, struct gw *gw, const struct child *c)
{
	for (unsigned i = 0; i < j->ncl; i++) {
		if (!j->cl[i].gateway)
			tell_local(j->cl[i].socket, j->cl[i].name, j->id);
		else if (gw != NULL && c[i].gw != NULL && c[i].running)
			gw_end(gw, &c[i], j->id);
	}
}
