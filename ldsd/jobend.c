/* jobend.c - a job's end, told to its gateways; see jobend.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "client.h"
#include "clock.h"
#include "execmsg.h"
#include "jobend.h"
#include "log.h"

long jobend_end(struct eptab *t, const char *tag, uid_t uid, uint64_t now_ns, ep_drop_fn *drop, void *arg,
		char *why, size_t len)
{
	struct endpoint *e, *next;
	long n = 0;

	if (!jobmark_tag_valid(tag)) {
		snprintf(why, len, "\"%.40s\" is not a job's tag (%u to %u letters and digits)", tag, JOBMARK_TAG_MIN,
			 JOBMARK_TAG_MAX);
		return -EINVAL;
	}
	for (size_t i = 0; i < t->nbuckets; i++)
		for (e = t->buckets[i]; e; e = e->hnext)
			if (e->owned && e->owner != uid && jobmark_endpoint_of(e->name, tag)) {
				snprintf(why, len, "endpoint %s of job %s belongs to uid %d", e->name, tag, (int)e->owner);
				return -EPERM;
			}
	jobmarks_add(&t->ended, tag, now_ns + t->ttl_ns);
	for (e = t->detached; e; e = next) {
		struct rb_msg *m;

		next = e->dnext;
		if (!jobmark_endpoint_of(e->name, tag))
			continue;
		while ((m = eptab_dequeue(t, e)) != NULL) {
			drop(arg, e, m, EP_DROP_ENDED);
			n++;
		}
		eptab_maybe_forget(t, e, now_ns);
	}
	return n;
}

void jobend_local_request(struct client *c, const struct cp_msg *m)
{
	const char *slash = strchr(m->name, '/');
	struct exec_msg req;
	char why[WIRE_ENDPOINT_MAX + 96];
	long n;

	bool end = slash != NULL && strcmp(slash + 1, EXEC_ENDPOINT) == 0 &&
		   exec_decode(m->payload, m->payload_len, &req) == 0;

	if (end && req.type != EXEC_END) {
		exec_msg_free(&req);
		end = false;
	}
	if (!end) {
		client_send_error(c, m->msg_id, EACCES, "%s takes requests from peer gateways only, and END locally",
				  m->name);
		return;
	}
	if (c->tcp) {
		n = -EACCES;
		snprintf(why, sizeof(why), "a job can be ended only over the unix socket, where ldsd knows who asks");
	} else {
		n = jobend_end(&c->cs->eps, req.text, c->uid, clock_now_ns(), clientep_drop, c->cs, why, sizeof(why));
	}
	if (n < 0) {
		log_warnx("client %s (uid %d): END of job %.40s refused: %s", c->peer, (int)c->uid, req.text, why);
		client_send_error(c, m->msg_id, (int)-n, "%s", why);
	} else {
		log_info("client %s (uid %d) ended job %s: %ld messages waiting for it dropped", c->peer, (int)c->uid,
			 req.text, n);
		client_ack(c, m->msg_id);
	}
	exec_msg_free(&req);
}
