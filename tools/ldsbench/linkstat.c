/* linkstat.c - a link's counters and failure log from ldsd's status JSON. */
#include <string.h>

#include "ldsd/jsonr.h"
#include "tools/ldsbench/ldsbench.h"

static void linkstat_fill(const struct jsonr *link, struct linkstat *st)
{
	const struct jsonr *fails = jsonr_get(link, "failures");
	size_t first = 0;

	st->valid = 1;
	st->streams = (unsigned)jsonr_num(jsonr_get(link, "streams"), 0);
	st->streams_up = (unsigned)jsonr_num(jsonr_get(link, "streams_up"), 0);
	st->streams_auto = jsonr_num(jsonr_get(link, "streams_auto"), 0) != 0;
	snprintf(st->congestion, sizeof(st->congestion), "%s", jsonr_str(jsonr_get(link, "congestion")));
	st->blocks_resent = (uint64_t)jsonr_num(jsonr_get(jsonr_get(link, "sent"), "blocks_resent"), 0);
	st->reconnects = (uint64_t)jsonr_num(jsonr_get(link, "reconnects"), 0);
	/* Schema 1 named it after the only transport there was. */
	st->rtt_ms = jsonr_num(jsonr_get(link, "transport_rtt_ms") ? jsonr_get(link, "transport_rtt_ms")
								  : jsonr_get(link, "tcp_rtt_ms"), 0);
	snprintf(st->last_error, sizeof(st->last_error), "%s", jsonr_str(jsonr_get(link, "last_error")));
	st->nfail = 0;
	if (fails == NULL || fails->type != JSONR_ARR)
		return;
	if (fails->n > BENCH_MAX_FAILURES)
		first = fails->n - BENCH_MAX_FAILURES;
	for (size_t i = first; i < fails->n; i++) {
		const struct jsonr *f = &fails->kids[i];
		struct bench_failure *b = &st->fail[st->nfail++];

		b->stream = (int)jsonr_num(jsonr_get(f, "stream"), -1);
		b->down_at = jsonr_num(jsonr_get(f, "down_at"), 0);
		b->up_at = jsonr_num(jsonr_get(f, "up_at"), 0);
		b->resent_at = jsonr_num(jsonr_get(f, "resent_at"), 0);
		b->blocks = (uint64_t)jsonr_num(jsonr_get(f, "blocks_resent"), 0);
		snprintf(b->reason, sizeof(b->reason), "%s", jsonr_str(jsonr_get(f, "reason")));
	}
}

int linkstat_parse(const char *status, const char *peer, struct linkstat *st, char *err, size_t errlen)
{
	char perr[128];
	struct jsonr *doc = jsonr_parse(status, perr, sizeof(perr));
	const struct jsonr *links;
	int rc = -1;

	memset(st, 0, sizeof(*st));
	if (doc == NULL) {
		snprintf(err, errlen, "ldsd's status is not JSON (%s)", perr);
		return -1;
	}
	links = jsonr_get(doc, "links");
	for (size_t i = 0; links && links->type == JSONR_ARR && i < links->n; i++) {
		if (strcmp(jsonr_str(jsonr_get(&links->kids[i], "peer")), peer) == 0) {
			linkstat_fill(&links->kids[i], st);
			rc = 0;
			break;
		}
	}
	if (rc < 0)
		snprintf(err, errlen, "ldsd has no link to cluster \"%s\"", peer);
	jsonr_free(doc);
	return rc;
}
