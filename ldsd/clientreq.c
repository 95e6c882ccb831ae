/*
 * clientreq.c - what a client's frames do once its connection
 * (clientconn.c) has read, checked and decoded them: HELLO opens an
 * endpoint, SEND routes a message to a link or a local endpoint, RESUME
 * lifts a fence, PEERQ and TAKEN answer and count.  The connection layer
 * calls them through clientreq_handlers; nothing here calls it back.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>

#include "client.h"
#include "clock.h"
#include "endpoint.h"
#include "execmsg.h"
#include "execpolicy.h"
#include "jobend.h"
#include "link.h"
#include "log.h"
#include "lostrep.h"

#define CS_DIRECT_MIN (64u << 10)     /* SEND bodies read straight into blocks */

/* The application has taken m->count LOST events naming the peer.  Frames
 * on the socket keep their order, so every SEND it wrote before this
 * RESUME was already refused by the fence; if it has taken all those
 * refusals too, what follows is written knowing every loss, resends first.
 * If not, the fence stays until a RESUME counts them all. */
static int req_resume(struct client *c, const struct cp_msg *m)
{
	struct link *l = link_find(c->cs->d, m->name);
	struct fence *f = l ? client_fence(c, l) : NULL;

	if (f == NULL || !f->up || m->count < f->reported)
		return 0;
	f->up = 0;
	log_debug("client %s: resumes sending to %s", c->peer, m->name);
	return 0;
}

/* An anonymous name nobody can guess, so nobody can take it first. */
static void cs_anon_name(struct clientsrv *cs, char *full, size_t len)
{
	uint64_t r;

	do {
		if (getrandom(&r, sizeof(r), 0) != (ssize_t)sizeof(r))
			r = clock_now_ns() * 0x9e3779b97f4a7c15ull ^ cs->next_id;
		snprintf(full, len, "%s/anon-%016" PRIx64, cs->d->cfg->cluster, r);
	} while (eptab_find(&cs->eps, full) != NULL);
}

static int req_hello(struct client *c, const struct cp_msg *m)
{
	struct clientsrv *cs = c->cs;
	const char *cluster = cs->d->cfg->cluster;
	struct cp_msg w = { .type = CP_WELCOME, .version = CP_VERSION };
	/* Room for any cluster and name: wire_endpoint_valid checks the length. */
	char full[WIRE_NAME_MAX + 2 + WIRE_ENDPOINT_MAX + 1];
	struct endpoint *e;
	size_t maxmsg = 0;

	if (m->version != CP_VERSION) {
		client_send_error(c, 0, EPROTONOSUPPORT, "client protocol version %u not supported (ldsd speaks %u)",
				  m->version, CP_VERSION);
		return -1;
	}
	if (m->name[0] == '\0')
		cs_anon_name(cs, full, sizeof(full));
	else
		snprintf(full, sizeof(full), "%s/%s", cluster, m->name);
	if (!wire_endpoint_valid(full)) {
		client_send_error(c, 0, EINVAL, "endpoint name \"%s\" is invalid: use letters, digits, '.', '_', '-'",
				  m->name);
		return -1;
	}
	if (exec_reserved_name(full)) {
		client_send_error(c, 0, EACCES, "endpoint names starting with \"%s\" belong to the gateway's services",
				  EXEC_RESERVED);
		return -1;
	}
	e = eptab_find(&cs->eps, full);
	if (e && e->owned && e->owner != c->uid) {
		log_warnx("client %s (uid %d, pid %d) refused endpoint %s: it belongs to uid %d", c->peer, (int)c->uid,
			  (int)c->pid, full, (int)e->owner);
		client_send_error(c, 0, EACCES, "endpoint %s belongs to %s %d: names are kept for the user that "
				  "opened them while messages wait and for undelivered_ttl after", full,
				  e->owner == CS_UID_TCP ? "the TCP clients, not uid" : "uid", (int)e->owner);
		return -1;
	}
	if (e && e->client) {
		client_send_error(c, 0, EADDRINUSE, "endpoint %s is %s", full,
				  e->client->hung_up ? "still held for a process that exited: ldsd reads the last "
						       "messages it sent when memory frees; try again later"
						     : "already open by another process");
		return -1;
	}
	e = eptab_get(&cs->eps, full, clock_now_ns());
	if (e == NULL)
		return -1;
	eptab_attach(&cs->eps, e, c, clock_now_ns());
	e->owner = c->uid;
	e->owned = 1;
	e->anonymous = m->name[0] == '\0';
	e->warned = 0;
	c->ep = e;
	c->incarnation = m->incarnation;
	for (size_t i = 0; i < cs->d->nlinks; i++) {
		size_t lm = link_max_msg(cs->d->links[i]);

		if (maxmsg == 0 || lm < maxmsg)
			maxmsg = lm;
	}
	if (maxmsg == 0)
		maxmsg = CS_LOCAL_MEMORY / 2;
	if (maxmsg > cs->d->cfg->clients.max_message)
		maxmsg = cs->d->cfg->clients.max_message;
	w.max_msg = c->max_msg = (uint32_t)maxmsg;
	c->takes = (m->flags & CP_F_TAKEN) != 0;
	c->link_bytes = (m->flags & CP_F_LINKBYTES) != 0;
	w.flags = m->flags & (CP_F_TAKEN | CP_F_LINKBYTES);
	if ((m->flags & CP_F_SHM) && clientshm_offer(c))
		w.flags |= CP_F_SHM;
	snprintf(w.name, sizeof(w.name), "%s", cluster);
	memcpy(w.endpoint, full, strlen(full) + 1); /* fits: validated above */
	if (client_ctl_append(c, &w) < 0 || (c->shm && clientshm_start(c) < 0))
		return -1;
	log_debug("client %s opened endpoint %s", c->peer, full);
	return 0;
}

enum route {
	ROUTE_BAD,       /* not a valid "cluster/name" */
	ROUTE_RESERVED,  /* a gateway's own CLUSTER/ldsd.lost */
	ROUTE_LOCAL,     /* an endpoint of this cluster */
	ROUTE_NOLINK,    /* a cluster we have no link to */
	ROUTE_FENCED,    /* an earlier message to its cluster was lost */
	ROUTE_LINK,      /* over *l */
};

/* Where SEND m goes; *cluster gets the destination's cluster. */
static enum route client_route(struct client *c, const struct cp_msg *m, char cluster[WIRE_NAME_MAX + 1],
			       struct link **l)
{
	const char *slash = strchr(m->name, '/');
	struct fence *f;

	if (!wire_endpoint_valid(m->name) || slash == NULL)
		return ROUTE_BAD;
	if (strcmp(slash + 1, LOSTREP_ENDPOINT) == 0)
		return ROUTE_RESERVED;
	snprintf(cluster, WIRE_NAME_MAX + 1, "%.*s", (int)(slash - m->name), m->name);
	if (strcmp(cluster, c->cs->d->cfg->cluster) == 0)
		return ROUTE_LOCAL;
	*l = link_find(c->cs->d, cluster);
	if (*l == NULL)
		return ROUTE_NOLINK;
	f = client_fence(c, *l);
	return f && f->up ? ROUTE_FENCED : ROUTE_LINK;
}

static void client_record(const struct client *c, const struct cp_msg *m, struct wire_record *rec)
{
	rec->len = m->payload_len;
	rec->msg_id = m->msg_id;
	rec->incarnation = c->incarnation;
	snprintf(rec->src, sizeof(rec->src), "%s", c->ep->name);
	snprintf(rec->dst, sizeof(rec->dst), "%s", m->name);
}

/* Queues a message for an endpoint of this cluster. */
static int client_send_local(struct client *c, const struct cp_msg *m, const struct wire_record *rec,
			     struct payload_src *src)
{
	struct clientsrv *cs = c->cs;
	struct rb_msg *lm;
	struct endpoint *e;

	if (exec_reserved_name(m->name)) {
		jobend_local_request(c, m);
		return 0;
	}
	if (m->payload_len > CS_LOCAL_MEMORY / 2) {
		client_send_error(c, m->msg_id, EMSGSIZE, "message of %u bytes exceeds the local limit of %u",
				  m->payload_len, CS_LOCAL_MEMORY / 2);
		return 0;
	}
	if (cs->local_bytes + m->payload_len > CS_LOCAL_MEMORY)
		return -ENOSPC;
	lm = calloc(1, sizeof(*lm));
	e = eptab_get(&cs->eps, m->name, clock_now_ns());
	if (lm == NULL || e == NULL || (lm->data = malloc(m->payload_len ? m->payload_len : 1)) == NULL) {
		free(lm);
		client_send_error(c, m->msg_id, ENOMEM, "ldsd is out of memory");
		return 0;
	}
	clientsock_fill_payload(src, NULL, &(struct iovec){ lm->data, m->payload_len }, 1);
	lm->rec = *rec;
	lm->client = c->id;
	cs->local_bytes += m->payload_len;
	cs->msgs_local++;
	clientep_enqueue(cs, e, lm);
	return 0;
}

/* Routes one SEND whose whole payload is in the input buffer.  Returns 0
 * if consumed (sent or refused with an ERROR), -ENOSPC if the client must
 * wait for memory. */
static int client_send(struct client *c, const struct cp_msg *m)
{
	struct payload_src src = { .have = m->payload, .have_len = m->payload_len, .fd = -1 };
	char cluster[WIRE_NAME_MAX + 1];
	struct wire_record rec;
	struct link *l = NULL;
	int r;

	switch (client_route(c, m, cluster, &l)) {
	case ROUTE_BAD:
		client_send_error(c, m->msg_id, EINVAL, "destination \"%s\" is not a valid \"cluster/name\"", m->name);
		return 0;
	case ROUTE_RESERVED:
		client_send_error(c, m->msg_id, EACCES, "%s takes reports from gateways only", m->name);
		return 0;
	case ROUTE_NOLINK:
		client_send_error(c, m->msg_id, EHOSTUNREACH, "no link to cluster \"%s\" in %s", cluster,
				  c->cs->d->cfg->file);
		return 0;
	case ROUTE_FENCED:
		client_report_lost(c, l, m->msg_id, "not sent: an earlier message to this cluster was lost; resend in order");
		return 0;
	case ROUTE_LOCAL:
	case ROUTE_LINK:
		break;
	}
	if (l != NULL && exec_reserved_name(m->name)) {
		char why[160];

		r = execpolicy_vouch(c->fd, m->payload, m->payload_len, why, sizeof(why));
		if (r < 0) {
			client_send_error(c, m->msg_id, -r, "%s", why);
			return 0;
		}
	}
	client_record(c, m, &rec);
	if (l == NULL)
		return client_send_local(c, m, &rec, &src);
	r = link_send_from(l, &rec, clientsock_fill_payload, &src, c->id);
	if (r == -ENOSPC)
		return -ENOSPC;
	if (r == -EMSGSIZE)
		client_send_error(c, m->msg_id, EMSGSIZE, "message of %u bytes exceeds the link limit of %zu to %s",
				  m->payload_len, link_max_msg(l), cluster);
	else if (r < 0)
		client_send_error(c, m->msg_id, -r, "cannot queue message for %s: %s", cluster, strerror(-r));
	return 0;
}

static int req_send(struct client *c, const struct cp_msg *m)
{
	int r = client_send(c, m);

	if (r == -ENOSPC)
		return r;
	c->msgs_in++;
	c->bytes_in += m->payload_len;
	return 0;
}

/*
 * A large SEND of which only the start (body, avail bytes) is in the input
 * buffer: if the rest is all waiting in the socket and the message goes to
 * a link, the payload is read straight into the link's send buffer, saving
 * a copy of every byte.  Returns 1 if the frame was consumed, 0 if it is left to
 * the usual path (which reads it whole and then reports any refusal),
 * -ENOSPC if the client must wait for memory, -1 if it must be closed.
 */
static int client_send_direct(struct client *c, const struct cp_hdr *h, const uint8_t *body, size_t avail)
{
	struct payload_src src = { .fd = c->fd, .ring = clientshm_in_ring(c) ? c : NULL };
	char cluster[WIRE_NAME_MAX + 1];
	struct wire_record rec;
	struct cp_msg m;
	struct link *l = NULL;
	size_t waiting = 0;
	int r;

	if (h->type != CP_SEND || h->len < CS_DIRECT_MIN || c->ep == NULL ||
	    cp_decode_head(h, body, avail, &m) < 0 || exec_reserved_name(m.name) ||   /* execpolicy_vouch them */
	    client_route(c, &m, cluster, &l) != ROUTE_LINK || client_waiting(c, &waiting) < 0)
		return 0;
	/* From a ring, the rest is worth waiting for: it is then sealed from
	 * there, where read into the input buffer it would be copied twice. */
	if (waiting < h->len - avail) {
		int w = src.ring ? clientshm_await(c, h->len - avail) : -1;

		if (w == 0)
			return 2;
		if (w < 0)
			return 0;
	}
	src.have = m.payload;
	src.have_len = avail - (size_t)(m.payload - body);
	client_record(c, &m, &rec);
	r = link_send_from(l, &rec, clientsock_fill_payload, &src, c->id);
	if (src.err) {
		log_warnx("client %s: reading a message failed: %s", c->peer, strerror(src.err));
		return -1;
	}
	if (r < 0)
		return r == -ENOSPC ? -ENOSPC : 0;
	c->msgs_in++;
	c->bytes_in += m.payload_len;
	return 1;
}

static int req_peerq(struct client *c, const struct cp_msg *m)
{
	client_answer_peer(c, m->name);
	return 0;
}

static int req_taken(struct client *c, const struct cp_msg *m)
{
	return client_on_taken(c, m->count);
}

static int req_bye(struct client *c, const struct cp_msg *m)
{
	return -1;
}

/* A half-written DELIVER, and those written but not taken, stay in the
 * queue, in order, and are written again to the next process on this
 * name. */
static void req_closed(struct client *c)
{
	if (c->ep)
		clientep_detach(c->cs, c->ep);
}

const struct client_handlers clientreq_handlers = {
	.frame = {
		[CP_HELLO] = req_hello,
		[CP_SEND] = req_send,
		[CP_RESUME] = req_resume,
		[CP_PEERQ] = req_peerq,
		[CP_TAKEN] = req_taken,
		[CP_BYE] = req_bye,
	},
	.head = client_send_direct,
	.closed = req_closed,
};
