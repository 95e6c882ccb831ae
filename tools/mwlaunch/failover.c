/* failover.c - a remote cluster's end, told to its communication manager;
 * see failover.h. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "launcher/mw_proto.h"
#include "libclient/lds.h"
#include "tools/mwlaunch/failover.h"

#define FAILOVER_OPEN_MS 2000
#define FAILOVER_WHY_MAX 200

int failover_tell(const char *socket, const char *main_cluster, const char *remote, const char *job, const char *why)
{
	unsigned char msg[MW_HDR_LEN + FAILOVER_WHY_MAX];
	struct mw_hdr h = { .type = MW_MSG_GONE };
	char name[LDS_NAME_MAX], dst[LDS_NAME_MAX];
	size_t n = strnlen(why, FAILOVER_WHY_MAX);
	struct lds *l;
	int rc;

	snprintf(name, sizeof(name), "mwlaunch-%s", job);
	snprintf(dst, sizeof(dst), "%s/cm-%s-%s", main_cluster, remote, job);
	l = lds_open(socket, name, FAILOVER_OPEN_MS, &rc);
	if (l != NULL) {
		h.len = (uint32_t)n;
		mw_hdr_encode(msg, &h);
		memcpy(msg + MW_HDR_LEN, why, n);
		rc = lds_send(l, dst, msg, MW_HDR_LEN + n, NULL);
		/* lds_close flushes what the gateway has not taken yet. */
		if (lds_close(l) < 0 && rc == 0)
			rc = -EIO;
	}
	if (rc < 0)
		fprintf(stderr, "mwlaunch: cannot tell %s that %s ended (%s): it gives up on it after its deadline "
			"instead\n", dst, remote, lds_strerror(rc));
	return rc;
}
