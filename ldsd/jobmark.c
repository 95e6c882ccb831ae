/* jobmark.c - the tags of ended jobs; see jobmark.h. */
#include <string.h>

#include "jobmark.h"

bool jobmark_tag_valid(const char *tag)
{
	size_t n = strspn(tag, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789");

	return tag[n] == '\0' && n >= JOBMARK_TAG_MIN && n <= JOBMARK_TAG_MAX;
}

bool jobmark_endpoint_of(const char *endpoint, const char *tag)
{
	const char *slash = strchr(endpoint, '/');
	size_t n = strlen(endpoint), t = strlen(tag);

	/* "cluster/" + at least one byte + "-" + tag */
	return slash != NULL && n >= (size_t)(slash - endpoint) + 3 + t && endpoint[n - t - 1] == '-' &&
	       strcmp(endpoint + n - t, tag) == 0;
}

void jobmarks_add(struct jobmarks *jm, const char *tag, uint64_t until_ns)
{
	unsigned i;

	for (i = 0; i < JOBMARK_MAX; i++)
		if (strcmp(jm->m[i].tag, tag) == 0)
			break;
	if (i == JOBMARK_MAX) {
		i = jm->next;
		jm->next = (jm->next + 1) % JOBMARK_MAX;
	}
	memcpy(jm->m[i].tag, tag, strlen(tag) + 1);
	jm->m[i].until_ns = until_ns;
}

bool jobmarks_has(const struct jobmarks *jm, const char *endpoint)
{
	/* The tag is what follows the name's last '-': one compare per mark. */
	const char *dash = strrchr(endpoint, '-');

	if (dash == NULL || !jobmark_tag_valid(dash + 1))
		return false;
	for (unsigned i = 0; i < JOBMARK_MAX; i++)
		if (jm->m[i].tag[0] && strcmp(jm->m[i].tag, dash + 1) == 0)
			return jobmark_endpoint_of(endpoint, jm->m[i].tag);
	return false;
}

void jobmarks_expire(struct jobmarks *jm, uint64_t now_ns)
{
	for (unsigned i = 0; i < JOBMARK_MAX; i++)
		if (jm->m[i].tag[0] && now_ns >= jm->m[i].until_ns)
			jm->m[i].tag[0] = '\0';
}

void jobrecent_add(struct jobrecent *jr, const char *requester, uint32_t id)
{
	unsigned i = jr->next;

	jr->next = (jr->next + 1) % JOBMARK_RECENT;
	strncpy(jr->r[i].requester, requester, WIRE_ENDPOINT_MAX);
	jr->r[i].requester[WIRE_ENDPOINT_MAX] = '\0';
	jr->r[i].id = id;
}

bool jobrecent_has(const struct jobrecent *jr, const char *requester, uint32_t id)
{
	for (unsigned i = 0; i < JOBMARK_RECENT; i++)
		if (jr->r[i].requester[0] && jr->r[i].id == id && strcmp(jr->r[i].requester, requester) == 0)
			return true;
	return false;
}
