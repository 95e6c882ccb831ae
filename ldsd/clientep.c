/* clientep.c - the endpoints' queues as the client server fills and
 * empties them: messages from links and local senders queued for a name,
 * held while nobody has it open, dropped (and their sender told) when they
 * cannot be delivered; see client.h. */
#include <errno.h>

#include "client.h"
#include "clock.h"
#include "link.h"
#include "log.h"

void clientep_drop(void *arg, struct endpoint *e, struct rb_msg *m, enum ep_drop why)
{
	struct clientsrv *cs = arg;

	cs->msgs_undelivered++;
	cs->msgs_ended += why == EP_DROP_ENDED;
	log_debug("message from %s to %s dropped: %s", m->rec.src, e->name, ep_drop_reasons[why]);
	if (m->origin) {
		link_undelivered(m->origin, m, why);
	} else {
		struct client *sender = client_by_id(cs, m->client);

		if (sender)
			client_send_error(sender, m->rec.msg_id,
					  why == EP_DROP_EXPIRED ? ETIMEDOUT : why == EP_DROP_GONE || why == EP_DROP_ENDED ? ECONNRESET : ENOBUFS,
					  "%s (%s)", ep_drop_reasons[why], e->name);
		cs->local_bytes -= m->rec.len;
		cs->resume_pending = 1; /* local senders may wait for that memory */
		rb_msg_free(m);
	}
}

void clientep_detach(struct clientsrv *cs, struct endpoint *e)
{
	uint64_t now = clock_now_ns();
	struct rb_msg *m;

	eptab_attach(&cs->eps, e, NULL, now);
	while (e->anonymous && (m = eptab_dequeue(&cs->eps, e)) != NULL)
		clientep_drop(cs, e, m, EP_DROP_GONE);
	if (e->anonymous)
		e->owned = 0;
	eptab_maybe_forget(&cs->eps, e, now);
}

void clientep_enqueue(struct clientsrv *cs, struct endpoint *e, struct rb_msg *m)
{
	enum ep_drop why;

	/* Reassembled in the ring of the process that has e open: it only
	 * has to be published.  (Had the process gone, the message would
	 * have been moved out first: m->store would be NULL.) */
	if (m->store && e->client) {
		client_deliver_placed(e->client, m);
		return;
	}
	why = eptab_admit(&cs->eps, e, m);
	if (why != EP_DROP_NONE) {
		clientep_drop(cs, e, m, why);
		eptab_maybe_forget(&cs->eps, e, clock_now_ns());
		return;
	}
	eptab_enqueue(&cs->eps, e, m, clock_now_ns());
	if (e->client)
		client_write(e->client);
	else if (!e->warned) {
		e->warned = 1;
		log_debug("holding messages for %s until a process opens that endpoint", e->name);
	}
}
