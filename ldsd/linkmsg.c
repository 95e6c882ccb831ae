/*
 * linkmsg.c - the messages a link carries: what local clients send
 * (checked against the destination's credit), what the send buffer says
 * was delivered or lost, what the receive buffer reassembled from the
 * peer, and the reports of undelivered messages both ways (lostrep.h).
 * See link.h and link_int.h.
 */
#include <errno.h>
#include <inttypes.h>
#include <string.h>

#include "link_int.h"
#include "log.h"

size_t link_max_msg(const struct link *l)
{
	size_t own = l->cfg->send_memory / 2;

	if (own > l->cfg->recv_memory / 2)
		own = l->cfg->recv_memory / 2;
	if (own > WIRE_MAX_MSG)
		own = WIRE_MAX_MSG;
	if (l->peer_max_msg && l->peer_max_msg < own)
		own = l->peer_max_msg;
	return own;
}

/* The peer knows of our drop of its messages first..last: our ACKs may
 * count them settled now. */
static void link_settle(void *arg, uint64_t first, uint64_t last)
{
	struct link *l = arg;

	if (recvbuf_settle(&l->rb, first, last) < 0)
		log_warnx("link %s: out of memory recording dropped messages", l->cfg->cluster);
	l->ack_pending = 1;
	l->deliv_unreported = 1;
}

void linkmsg_acked(void *arg, const struct sb_msg *m)
{
	struct link *l = arg;

	credit_return(&l->credit, m->tag, m->len);
	if (m->client == LOSTREP_CLIENT)
		lostrep_confirmed(&l->lr, m->id, link_settle, l);
	else
		l->d->sink.acked(l->d->sink.arg, m->client, m->id);
}

static void link_lost(struct link *l, const struct sb_msg *m, const char *why)
{
	credit_return(&l->credit, m->tag, m->len);
	l->d->sink.lost(l->d->sink.arg, l, m->client, m->id, why);
}

void linkmsg_lost(void *arg, const struct sb_msg *m)
{
	struct link *l = arg;

	link_lost(l, m, l->lost_why);
}

/* Lost by the peer's report, for the reason in lr.why. */
static void on_lost_reported(void *arg, const struct sb_msg *m)
{
	struct link *l = arg;

	link_lost(l, m, ep_drop_reasons[l->lr.why]);
}

/* A peer may only send from its own cluster to ours: a record claiming
 * another source would let it speak for a third cluster, one for another
 * destination would sit in our memory for ever.  Such a message is dropped
 * (and counted) rather than the stream closed, because the same block
 * would come again after every reconnect and stop the link for good. */
void linkmsg_received(void *arg, struct rb_msg *m)
{
	struct link *l = arg;

	if (!wire_record_between(&m->rec, l->cfg->cluster, l->d->cfg->cluster)) {
		log_warnx("link %s: dropped a message from \"%s\" to \"%s\": a peer may only send from cluster %s "
			  "to cluster %s; the peer's gateway is misbehaving", l->cfg->cluster, m->rec.src, m->rec.dst,
			  l->cfg->cluster, l->d->cfg->cluster);
		l->msgs_misrouted++;
		link_delivered(l, m);
		return;
	}
	l->d->sink.deliver(l->d->sink.arg, l, m);
}

uint8_t *linkmsg_place(void *arg, struct rb_msg *m)
{
	struct link *l = arg;

	if (l->d->sink.place == NULL || !wire_record_between(&m->rec, l->cfg->cluster, l->d->cfg->cluster))
		return NULL;
	return l->d->sink.place(l->d->sink.arg, m);
}

void link_delivered(struct link *l, struct rb_msg *m)
{
	if (recvbuf_delivered(&l->rb, m) < 0)
		log_warnx("link %s: out of memory recording a delivery; the peer will see it later", l->cfg->cluster);
	l->ack_pending = 1;
	l->deliv_unreported = 1;
}

int link_send_from(struct link *l, const struct wire_record *rec, sb_fill_fn *fill, void *arg, uint64_t client)
{
	struct credit_dest *d;
	int r;

	if (l->shutting_down)
		return -ENOTCONN;
	if (rec->len > link_max_msg(l))
		return -EMSGSIZE;
	r = credit_reserve(&l->credit, rec->dst, rec->len, &d);
	if (r == 0)
		r = sendbuf_append_from(&l->sb, rec, fill, arg, client, d);
	else
		d = NULL;
	if (r < 0) {
		l->as_refused |= r == -ENOSPC;
		if (d)
			credit_abandon(&l->credit, d);
		return r;
	}
	credit_commit(d, rec->len);
	l->kick_pending = 1;
	return 0;
}

int link_send(struct link *l, const struct wire_record *rec, const void *payload, uint64_t client)
{
	return link_send_from(l, rec, sendbuf_fill_copy, (void *)payload, client);
}

/* ---- undelivered messages (lostrep.h) ---------------------------------- */

void link_undelivered(struct link *l, struct rb_msg *m, enum ep_drop why)
{
	uint64_t msgno = m->msgno;

	if (recvbuf_discard(&l->rb, m) && lostrep_add(&l->lr, msgno, why) < 0)
		log_warnx("link %s: out of memory recording a dropped message", l->cfg->cluster);
	l->ack_pending = 1;
}

void linkmsg_send_reports(struct link *l)
{
	uint8_t buf[LOSTREP_MAX_LEN];
	struct wire_record rec = { .incarnation = l->instance };
	size_t n;

	snprintf(rec.src, sizeof(rec.src), "%s/%s", l->d->cfg->cluster, LOSTREP_ENDPOINT);
	snprintf(rec.dst, sizeof(rec.dst), "%s/%s", l->cfg->cluster, LOSTREP_ENDPOINT);
	while ((n = lostrep_encode(&l->lr, buf, &rec.msg_id)) > 0) {
		rec.len = (uint32_t)n;
		if (link_send(l, &rec, buf, LOSTREP_CLIENT) < 0)
			return;
		lostrep_sent(&l->lr, rec.msg_id);
	}
}

static void on_peer_lost(void *arg, uint64_t first, uint64_t last, unsigned reason)
{
	struct link *l = arg;

	l->lr.why = (enum ep_drop)reason;
	sendbuf_msgs_lost(&l->sb, first, last, on_lost_reported, l);
}

void link_peer_lost(struct link *l, struct rb_msg *m)
{
	char own[WIRE_ENDPOINT_MAX + 1];

	snprintf(own, sizeof(own), "%s/%s", l->cfg->cluster, LOSTREP_ENDPOINT);
	rb_msg_flatten(m);
	/* Only the peer gateway itself speaks from its ldsd.lost endpoint: no
	 * client may open an ldsd.* name. */
	if (strcmp(m->rec.src, own) != 0 || lostrep_decode(m->data, m->rec.len, on_peer_lost, l) < 0)
		log_warnx("link %s: malformed report of undelivered messages from %s (%" PRIu32 " bytes): ignored",
			  l->cfg->cluster, m->rec.src, m->rec.len);
	link_delivered(l, m);
}
