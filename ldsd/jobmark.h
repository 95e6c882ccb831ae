/*
 * jobmark.h - the tags of ended jobs, and who may end one through a link.
 *
 * A job names its endpoints with a tag: "cluster/NAME-TAG" (mwlaunch:
 * its random 16-hex-digit id, docs/mwlaunch.md).  When the job has ended
 * (ldsd/jobend.h), its tag is marked for a while, so that messages that
 * arrive later for its endpoints without a process are dropped at once
 * instead of waiting for undelivered_ttl.  The table is bounded: past
 * JOBMARK_MAX marks the oldest is forgotten (its late messages then wait
 * for the ttl, as without a mark).
 *
 * The exec service remembers the last JOBMARK_RECENT jobs it started
 * (their requester and number), so that an END through a link is taken
 * from the endpoint that asked for that job only, also after the job's
 * exit was reported and the job forgotten.  Pure bookkeeping: no I/O.
 */
#ifndef LDS_JOBMARK_H
#define LDS_JOBMARK_H

#include <stdbool.h>
#include <stdint.h>

#include "wire.h"

#define JOBMARK_TAG_MIN 8u      /* a tag: 8..32 of [A-Za-z0-9], unguessable enough to name a job */
#define JOBMARK_TAG_MAX 32u
#define JOBMARK_MAX 256u
#define JOBMARK_RECENT 64u

struct jobmarks {
	struct {
		char tag[JOBMARK_TAG_MAX + 1];   /* "" = free */
		uint64_t until_ns;
	} m[JOBMARK_MAX];
	unsigned next;                       /* the slot to take (the oldest) */
};

struct jobrecent {
	struct {
		char requester[WIRE_ENDPOINT_MAX + 1];
		uint32_t id;
	} r[JOBMARK_RECENT];
	unsigned next;
};

bool jobmark_tag_valid(const char *tag);
/* True if endpoint ("cluster/name") is one of tag's: its name ends in
 * "-" tag after at least one byte. */
bool jobmark_endpoint_of(const char *endpoint, const char *tag);

/* A zeroed struct jobmarks is empty. */
void jobmarks_add(struct jobmarks *jm, const char *tag, uint64_t until_ns);
/* True if endpoint belongs to a marked tag. */
bool jobmarks_has(const struct jobmarks *jm, const char *endpoint);
/* Forgets the marks whose time is up. */
void jobmarks_expire(struct jobmarks *jm, uint64_t now_ns);

/* A zeroed struct jobrecent is empty. */
void jobrecent_add(struct jobrecent *jr, const char *requester, uint32_t id);
bool jobrecent_has(const struct jobrecent *jr, const char *requester, uint32_t id);

#endif
