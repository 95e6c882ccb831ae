/* clientsrv.c - client sessions, endpoints, accepting clients; see clientsrv.h and client.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/random.h>

#include "client.h"
#include "clock.h"
#include "endpoint.h"
#include "execmsg.h"
#include "execpolicy.h"
#include "fdreserve.h"
#include "jobend.h"
#include "jobexec.h"
#include "libclient/clientproto.h"
#include "link.h"
#include "listen.h"
#include "log.h"
#include "lostrep.h"

#define CS_READS_PER_EVENT 8
#define CS_SOCKET_BUFFER (4 << 20)    /* SO_SNDBUF of client connections */
#define CS_DIRECT_MIN (64u << 10)     /* SEND bodies read straight into blocks */
#define CS_IN_MIN (64u << 10)         /* input buffer: first size, and growth step */
#define CS_IN_KEEP (1u << 20)         /* an empty input buffer larger than this is freed */
#define CS_TICK_MS 500               /* expiry of held messages, names and silent clients */


static void client_close(struct client *c, const char *why);

/* Stops reading c until memory frees.  Its TAKEN frames wait behind the
 * SEND it blocks in, so what was written to it counts as taken now: else
 * two processes sending to each other through full gateways could each
 * wait for the other's TAKEN. */
static void client_pause(struct client *c)
{
	c->paused = 1;
	client_take_written(c);
	client_set_events(c);
}

/* ---- endpoints ---------------------------------------------------------- */

/* ep_drop_fn: m, from a link or a local client, will never be delivered. */
static void cs_drop(void *arg, struct endpoint *e, struct rb_msg *m, enum ep_drop why)
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

/* e lost its process: messages for an anonymous name can never be
 * delivered; a named one keeps them, and its owner, for a while. */
static void ep_detach(struct clientsrv *cs, struct endpoint *e)
{
	uint64_t now = clock_now_ns();
	struct rb_msg *m;

	eptab_attach(&cs->eps, e, NULL, now);
	while (e->anonymous && (m = eptab_dequeue(&cs->eps, e)) != NULL)
		cs_drop(cs, e, m, EP_DROP_GONE);
	if (e->anonymous)
		e->owned = 0;
	eptab_maybe_forget(&cs->eps, e, now);
}

/* Queues m for e, or drops it if nobody has e open and its share is full. */
static void ep_enqueue(struct clientsrv *cs, struct endpoint *e, struct rb_msg *m)
{
	enum ep_drop why = eptab_admit(&cs->eps, e, m);

	if (why != EP_DROP_NONE) {
		cs_drop(cs, e, m, why);
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

/* ---- input from a client ------------------------------------------------- */

struct client *client_by_id(struct clientsrv *cs, uint64_t id)
{
	if (cs->last_lookup && cs->last_lookup->id == id)
		return cs->last_lookup;
	for (struct client *c = cs->clients; c; c = c->next) {
		if (c->id == id) {
			cs->last_lookup = c;
			return c;
		}
	}
	return NULL;
}

/* The application has taken m->count LOST events naming the peer.  Frames
 * on the socket keep their order, so every SEND it wrote before this
 * RESUME was already refused by the fence; if it has taken all those
 * refusals too, what follows is written knowing every loss, resends first.
 * If not, the fence stays until a RESUME counts them all. */
static void client_on_resume(struct client *c, const struct cp_msg *m)
{
	struct link *l = link_find(c->cs->d, m->name);
	struct fence *f = l ? client_fence(c, l) : NULL;

	if (f == NULL || !f->up || m->count < f->reported)
		return;
	f->up = 0;
	log_debug("client %s: resumes sending to %s", c->peer, m->name);
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

static int client_on_hello(struct client *c, const struct cp_msg *m)
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
	clientsock_fill_payload(src, &(struct iovec){ lm->data, m->payload_len }, 1);
	lm->rec = *rec;
	lm->client = c->id;
	cs->local_bytes += m->payload_len;
	cs->msgs_local++;
	ep_enqueue(cs, e, lm);
	return 0;
}

/* Routes one SEND whose whole payload is in the input buffer.  Returns 0
 * if consumed (sent or refused with an ERROR), -ENOSPC if the client must
 * wait for memory. */
static int client_on_send(struct client *c, const struct cp_msg *m)
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

/*
 * A large SEND of which only the start is in the input buffer, at off: if
 * the rest is all waiting in the socket and the message goes to a link,
 * the payload is read straight into the link's send buffer, saving a copy
 * of every byte.  Returns 1 if the frame was consumed, 0 if it is left to
 * the usual path (which reads it whole and then reports any refusal),
 * -ENOSPC if the client must wait for memory, -1 if it must be closed.
 */
static int client_send_direct(struct client *c, const struct cp_hdr *h, size_t off)
{
	const uint8_t *body = c->in + off + CP_HDR_LEN;
	size_t avail = c->in_len - off - CP_HDR_LEN;
	struct payload_src src = { .fd = c->fd, .ring = clientshm_in_ring(c) ? c : NULL };
	char cluster[WIRE_NAME_MAX + 1];
	struct wire_record rec;
	struct cp_msg m;
	struct link *l = NULL;
	size_t waiting = 0;
	int r;

	if (h->type != CP_SEND || h->len < CS_DIRECT_MIN || c->ep == NULL ||
	    cp_decode_head(h, body, avail, &m) < 0 || exec_reserved_name(m.name) ||   /* execpolicy_vouch them */
	    client_route(c, &m, cluster, &l) != ROUTE_LINK ||
	    client_waiting(c, &waiting) < 0 || waiting < h->len - avail)
		return 0;
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

/*
 * Before a client's input buffer grows past CS_IN_MIN for a frame, the
 * frame's size is taken from its user's input_per_user, so that the
 * unfinished frames of one user's clients cannot take all memory; a user
 * holding none may always take one, so every frame can be received.
 * Returns 0, or -EAGAIN: the client must wait for another frame of its
 * user to be done.
 */
static int client_input_budget(struct client *c, size_t frame)
{
	size_t held = 0;

	if (c->in_budget >= frame)
		return 0;
	for (const struct client *o = c->cs->clients; o; o = o->next)
		if (o != c && o->uid == c->uid)
			held += o->in_budget;
	if (held > 0 && held + frame > c->cs->d->cfg->clients.input_per_user)
		return -EAGAIN;
	c->in_budget = frame;
	return 0;
}

/* The frame c took a budget for is done (or c is gone): clients of the
 * user waiting for it may read on. */
static void client_input_done(struct client *c)
{
	if (c->in_budget == 0)
		return;
	c->in_budget = 0;
	c->cs->resume_pending = 1;
}

/* Parses the frame header at p and checks it against what this client may
 * send: before WELCOME a HELLO, after it a SEND of WELCOME's max_msg, so
 * that no buffer is grown for a frame that will be refused.  Returns 0, or
 * -1 (logged) if the client must be closed. */
static int client_frame_check(struct client *c, const uint8_t *p, struct cp_hdr *h)
{
	size_t max = cp_client_body_max(c->ep != NULL, c->max_msg);

	if (cp_hdr_parse(p, h) < 0) {
		log_warnx("client %s: malformed frame header; closing it", c->peer);
		return -1;
	}
	if (h->len > max) {
		log_warnx("client %s (uid %d): frame of %" PRIu32 " bytes exceeds its limit of %zu (%s); closing it",
			  c->peer, (int)c->uid, h->len, max,
			  c->ep ? "max_msg told in WELCOME" : "a HELLO is all it may send first");
		return -1;
	}
	return 0;
}

/* Handles complete frames in the input buffer.  Returns -1 if the client
 * must be closed. */
static int client_process(struct client *c)
{
	size_t off = 0;
	int ret = 0;

	while (c->in_len - off >= CP_HDR_LEN && !c->doomed) {
		struct cp_hdr h;
		struct cp_msg m;

		if (client_frame_check(c, c->in + off, &h) < 0) {
			ret = -1;
			break;
		}
		if (c->in_len - off < CP_HDR_LEN + h.len) {
			int r = client_send_direct(c, &h, off);

			if (r == 1) {
				off = c->in_len;
			} else if (r == -ENOSPC) {
				client_pause(c);
			} else if (r < 0) {
				ret = -1;
			}
			break;
		}
		if (cp_decode(&h, c->in + off + CP_HDR_LEN, &m) < 0) {
			log_warnx("client %s: malformed %s frame; closing it", c->peer,
				  h.type < CP_TYPE_MAX ? cp_type_names[h.type] : "unknown");
			ret = -1;
			break;
		}
		if (c->tcp && !c->keyed) {
			if (clientkey_check(c, &m) < 0) {
				ret = -1;
				break;
			}
			off += CP_HDR_LEN + h.len;
			continue;
		}
		if (c->ep == NULL && m.type != CP_HELLO) {
			log_warnx("client %s: sent %s before HELLO; closing it", c->peer, cp_type_names[m.type]);
			ret = -1;
			break;
		}
		if (m.type == CP_HELLO) {
			if (c->ep != NULL || client_on_hello(c, &m) < 0) {
				ret = -1;
				break;
			}
		} else if (m.type == CP_SEND) {
			if (client_on_send(c, &m) == -ENOSPC) {
				client_pause(c);
				break;
			}
			c->msgs_in++;
			c->bytes_in += m.payload_len;
		} else if (m.type == CP_RESUME) {
			client_on_resume(c, &m);
		} else if (m.type == CP_PEERQ) {
			client_answer_peer(c, m.name);
		} else if (m.type == CP_TAKEN) {
			if (client_on_taken(c, m.count) < 0) {
				ret = -1;
				break;
			}
		} else if (m.type == CP_BYE) {
			ret = -1;
			break;
		} else {
			log_warnx("client %s: unexpected %s frame; closing it", c->peer, cp_type_names[m.type]);
			ret = -1;
			break;
		}
		off += CP_HDR_LEN + h.len;
	}
	if (off > 0) {
		memmove(c->in, c->in + off, c->in_len - off);
		c->in_len -= off;
		client_input_done(c);
	}
	if (c->in_len == 0 && c->in_cap > CS_IN_KEEP) {
		free(c->in);
		c->in = NULL;
		c->in_cap = 0;
	}
	client_write(c);
	return c->doomed ? -1 : ret;
}

static int client_in_reserve(struct client *c, size_t need)
{
	size_t cap = c->in_cap ? c->in_cap : CS_IN_MIN;
	uint8_t *p;

	if (need <= c->in_cap)
		return 0;
	while (cap < need)
		cap *= 2;
	if (cap > need && need > CS_IN_MIN)
		cap = need;
	if (cap == c->in_cap)
		return 0;
	p = realloc(c->in, cap);
	if (p == NULL)
		return -ENOMEM;
	c->in = p;
	c->in_cap = cap;
	return 0;
}

static void client_readable(struct client *c)
{
	for (int reads = 0; reads < CS_READS_PER_EVENT && !c->paused; reads++) {
		size_t need = c->in_len + CS_IN_MIN;
		ssize_t n;

		/* Grow towards the whole frame (its header was checked by
		 * client_process, which could not read its payload straight into
		 * the send buffer): doubling with what arrives, so memory follows
		 * the bytes really sent, not what a header claims. */
		if (c->in_len >= CP_HDR_LEN) {
			struct cp_hdr h;

			if (client_frame_check(c, c->in, &h) < 0) {
				client_close(c, "frame too large");
				return;
			}
			if (c->in_len > CS_IN_MIN)
				need = c->in_len * 2;
			if (need > CP_HDR_LEN + (size_t)h.len)
				need = CP_HDR_LEN + (size_t)h.len;
			if (need <= c->in_len)
				need = c->in_len + CS_IN_MIN;
			if (need > CS_IN_MIN && client_input_budget(c, CP_HDR_LEN + (size_t)h.len) < 0) {
				log_debug("client %s (uid %d): waits for its user's other frames (input_per_user)",
					  c->peer, (int)c->uid);
				client_pause(c);
				return;
			}
		}
		if (client_in_reserve(c, need) < 0) {
			client_close(c, "out of memory");
			return;
		}
		do
			n = client_read(c, c->in + c->in_len, need - c->in_len);
		while (n < 0 && errno == EINTR);
		if (n == 0) {
			client_close(c, c->in_len ? "disconnected in the middle of a message" : "disconnected");
			return;
		}
		if (n < 0) {
			if (errno != EAGAIN && errno != EWOULDBLOCK)
				client_close(c, strerror(errno));
			return;
		}
		c->in_len += (size_t)n;
		if (client_process(c) < 0) {
			client_close(c, "protocol error or goodbye");
			return;
		}
	}
	/* Its turn is over; a socket would say again that bytes wait. */
	if (c->shm && !c->paused)
		clientshm_kick(c, 0);
}

void client_event(int fd, unsigned events, void *arg)
{
	struct client *c = arg;

	if (events & EV_ERROR)
		client_hung_up(c, "socket closed or failed");
	if (events & EV_WRITE)
		client_write(c);
	if (events & (EV_READ | EV_ERROR))
		client_readable(c);
}

static void client_close(struct client *c, const char *why)
{
	struct clientsrv *cs = c->cs;

	log_debug("client %s (%s) closed: %s", c->peer, c->ep ? c->ep->name : "no endpoint", why);
	for (struct client **pp = &cs->clients; *pp; pp = &(*pp)->next) {
		if (*pp == c) {
			*pp = c->next;
			break;
		}
	}
	cs->nclients--;
	client_input_done(c);
	if (cs->last_lookup == c)
		cs->last_lookup = NULL;
	/* A half-written DELIVER, and those written but not taken, stay in
	 * the queue, in order, and are written again to the next process on
	 * this name. */
	if (c->ep)
		ep_detach(cs, c->ep);
	clientshm_free(c);
	evloop_unwatch(cs->d->ev, c->fd);
	close(c->fd);
	free(c->in);
	free(c->ctl);
	free(c);
}

/* Refuses a connection beyond max_clients: an ERROR says why (best
 * effort: the socket is new, its buffer empty), then it is closed. */
static void client_refuse(struct clientsrv *cs, int fd, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));
static void client_refuse(struct clientsrv *cs, int fd, const char *fmt, ...)
{
	char text[CP_TEXT_MAX + 1];
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(text, sizeof(text), fmt, ap);
	va_end(ap);
	cs->clients_refused++;
	if (cs->clients_refused == 1 || cs->clients_refused % 1000 == 0)
		log_warnx("client refused: %s (%" PRIu64 " refused so far)", text, cs->clients_refused);
	client_tell_closing(fd, EUSERS, text);
	close(fd);
}

/* Admits connection fd within max_clients and max_clients_per_user, and
 * learns its process (unix socket) or makes it a TCP client. */
static struct client *client_admit(struct clientsrv *cs, int fd, int tcp)
{
	const struct config_clients *lim = &cs->d->cfg->clients;
	struct ucred cred = { .pid = 0, .uid = CS_UID_TCP, .gid = (gid_t)-1 };
	socklen_t len = sizeof(cred);
	struct client *c;
	unsigned same = 0;

	if (!tcp && getsockopt(fd, SOL_SOCKET, SO_PEERCRED, &cred, &len) < 0) {
		log_warn("client socket: cannot learn the peer's credentials");
		close(fd);
		return NULL;
	}
	if (cs->nclients >= lim->max_clients) {
		client_refuse(cs, fd, "ldsd serves max_clients = %u clients already", lim->max_clients);
		return NULL;
	}
	for (c = cs->clients; c; c = c->next)
		same += c->uid == cred.uid;
	if (same >= lim->max_per_user) {
		client_refuse(cs, fd, "%s %d has max_clients_per_user = %u connections already",
			      tcp ? "TCP clients (as one user), not uid" : "uid", (int)cred.uid, lim->max_per_user);
		return NULL;
	}
	c = calloc(1, sizeof(*c));
	if (c == NULL) {
		close(fd);
		return NULL;
	}
	c->uid = cred.uid;
	c->gid = cred.gid;
	c->pid = cred.pid;
	c->tcp = tcp;
	return c;
}

static void client_accept(int fd, unsigned events, void *arg)
{
	struct clientsrv *cs = arg;

	for (int i = 0; i < 16; i++) {
		struct sockaddr_storage ss = { 0 };
		socklen_t sl = sizeof(ss);
		int cfd = accept4(fd, (struct sockaddr *)&ss, &sl, SOCK_NONBLOCK | SOCK_CLOEXEC);
		struct client *c;

		if (cfd < 0) {
			fdreserve_drop(fd, errno);
			return;
		}
		c = client_admit(cs, cfd, fd == cs->tcp_fd);
		if (c == NULL)
			continue;
		/* Deliveries go out in large writes, the client wakes less often;
		 * the kernel caps the size at net.core.wmem_max, and failing
		 * only costs speed. */
		(void)setsockopt(cfd, SOL_SOCKET, SO_SNDBUF, &(int){ CS_SOCKET_BUFFER }, sizeof(int));
		c->cs = cs;
		c->fd = cfd;
		c->id = ++cs->next_id;
		c->accepted_ns = clock_now_ns();
		snprintf(c->peer, sizeof(c->peer), "#%" PRIu64 "%s", c->id, fd == cs->tcp_fd ? " (tcp)" : "");
		if (evloop_watch(cs->d->ev, cfd, EV_READ, client_event, c) < 0) {
			close(cfd);
			free(c);
			continue;
		}
		c->next = cs->clients;
		cs->clients = c;
		cs->nclients++;
		if (c->tcp)
			clientkey_from(c, (const struct sockaddr *)&ss, sl);
		if (c->tcp && clientkey_challenge(c) < 0) {
			client_close(c, "cannot send it the key challenge");
			continue;
		}
		if (c->tcp)
			client_write(c);
	}
}

/* Every CS_TICK_MS: closes connections silent past hello_timeout, drops
 * held messages past undelivered_ttl, forgets names past their linger. */
static void cs_tick(uint64_t now_ns, void *arg)
{
	struct clientsrv *cs = arg;
	uint64_t limit = (uint64_t)(cs->d->cfg->clients.hello_timeout * 1e9);

	for (struct client *c = cs->clients; c; c = c->next) {
		if (c->ep == NULL && !c->doomed && now_ns - c->accepted_ns >= limit) {
			log_warnx("client %s (uid %d): no HELLO within hello_timeout = %g s; closing it", c->peer,
				  (int)c->uid, cs->d->cfg->clients.hello_timeout);
			c->doomed = 1;
			cs->resume_pending = 1;
		}
	}
	eptab_expire(&cs->eps, now_ns, cs_drop, cs);
}

/* ---- from links ---------------------------------------------------------- */

/* True if endpoint is this gateway's own CLUSTER/ldsd.lost. */
static int cs_lostrep_name(const struct clientsrv *cs, const char *endpoint)
{
	size_t n = strlen(cs->d->cfg->cluster);

	return strncmp(endpoint, cs->d->cfg->cluster, n) == 0 && endpoint[n] == '/' &&
	       strcmp(endpoint + n + 1, LOSTREP_ENDPOINT) == 0;
}

void clientsrv_deliver(struct clientsrv *cs, struct link *from, struct rb_msg *m)
{
	struct endpoint *e;

	if (cs_lostrep_name(cs, m->rec.dst)) {
		link_peer_lost(from, m);
		return;
	}
	if (exec_reserved_name(m->rec.dst)) {
		jobexec_request(cs->d->jx, from, m);
		return;
	}
	m->origin = from;
	e = eptab_get(&cs->eps, m->rec.dst, clock_now_ns());
	if (e == NULL) {
		log_warnx("out of memory queueing a message for %s: dropped", m->rec.dst);
		link_undelivered(from, m, EP_DROP_POOL);
		return;
	}
	ep_enqueue(cs, e, m);
}

void clientsrv_acked(struct clientsrv *cs, uint64_t client, uint64_t id)
{
	struct client *c = client_by_id(cs, client);

	if (c == NULL)
		return;
	if (c->ack_first && id == c->ack_last + 1) {
		c->ack_last = id;
		return;
	}
	client_flush_acks(c);
	c->ack_first = c->ack_last = id;
}

void clientsrv_lost(struct clientsrv *cs, struct link *l, uint64_t client, uint64_t id, const char *reason)
{
	struct client *c = client_by_id(cs, client);

	if (c == NULL)
		return;
	client_report_lost(c, l, id, reason);
}

void clientsrv_space(struct clientsrv *cs, struct link *l)
{
	cs->resume_pending = 1;
}

long clientsrv_end_job(struct clientsrv *cs, const char *tag, uid_t uid, char *why, size_t len)
{
	return jobend_end(&cs->eps, tag, uid, clock_now_ns(), cs_drop, cs, why, len);
}

void clientsrv_flush(struct clientsrv *cs)
{
	struct client *c, *next;

	if (cs->resume_pending) {
		cs->resume_pending = 0;
		for (c = cs->clients; c; c = next) {
			next = c->next;
			if (c->doomed) {
				client_close(c, "over a limit");
				continue;
			}
			if (!c->paused)
				continue;
			c->paused = 0;
			client_set_events(c);
			if (client_process(c) < 0)
				client_close(c, "protocol error or goodbye");
		}
	}
	for (c = cs->clients; c; c = c->next) {
		client_flush_acks(c);
		if (c->ctl_len > c->ctl_off || (c->ep && c->ep->queued > c->written && c->cur == NULL))
			client_write(c);
	}
}

int clientsrv_links_changed(struct clientsrv *cs)
{
	for (size_t i = 0; i < cs->d->nlinks; i++) {
		const struct link *l = cs->d->links[i];

		if (eptab_pool_of(&cs->eps, l) == NULL &&
		    eptab_pool(&cs->eps, l, link_recv_memory(l) / 100 * cs->d->cfg->clients.undelivered_share) < 0) {
			log_warnx("link %s: no room for its share of undelivered messages (%u links since start); "
				  "restart ldsd", link_name(l), EP_MAX_POOLS - 1);
			return -1;
		}
	}
	return 0;
}

struct clientsrv *clientsrv_new(struct daemon *d)
{
	struct clientsrv *cs = calloc(1, sizeof(*cs));
	const struct config_clients *lim = &d->cfg->clients;

	if (cs == NULL)
		return NULL;
	cs->d = d;
	cs->tcp_fd = -1;
	cs->unix_fd = -1;
	cs->tick_id = -1;
	if (eptab_init(&cs->eps, (uint64_t)(lim->undelivered_ttl * 1e9), (uint64_t)(lim->undelivered_ttl * 1e9)) < 0 ||
	    eptab_pool(&cs->eps, NULL, CS_LOCAL_MEMORY / 100 * lim->undelivered_share) < 0)
		goto fail;
	if (clientsrv_links_changed(cs) < 0)
		goto fail;
	cs->tick_id = evloop_tick_add(d->ev, CS_TICK_MS, cs_tick, cs);
	if (cs->tick_id < 0)
		goto fail;
	cs->unix_fd = listen_unix(d->cfg->client_socket, d->cfg->clients.socket_perm, d->cfg->clients.socket_uid,
				  d->cfg->clients.socket_gid, "clients.socket");
	if (cs->unix_fd < 0)
		goto fail;
	if (evloop_watch(d->ev, cs->unix_fd, EV_READ, client_accept, cs) < 0)
		goto fail;
	if (d->cfg->client_tcp[0]) {
		cs->tcp_fd = listen_tcp(d->cfg->client_tcp, "clients.tcp");
		if (cs->tcp_fd < 0 || evloop_watch(d->ev, cs->tcp_fd, EV_READ, client_accept, cs) < 0)
			goto fail;
	}
	return cs;
fail:
	clientsrv_free(cs);
	return NULL;
}

void clientsrv_stop_accepting(struct clientsrv *cs)
{
	if (cs->unix_fd >= 0) {
		evloop_unwatch(cs->d->ev, cs->unix_fd);
		close(cs->unix_fd);
		unlink(cs->d->cfg->client_socket);
		cs->unix_fd = -1;
	}
	if (cs->tcp_fd >= 0) {
		evloop_unwatch(cs->d->ev, cs->tcp_fd);
		close(cs->tcp_fd);
		cs->tcp_fd = -1;
	}
}

void clientsrv_free(struct clientsrv *cs)
{
	if (cs == NULL)
		return;
	clientsrv_stop_accepting(cs);
	if (cs->tick_id > 0)
		evloop_tick_del(cs->d->ev, cs->tick_id);
	while (cs->clients)
		client_close(cs->clients, "shutting down");
	eptab_free(&cs->eps);
	free(cs);
}

int clientsrv_drained(const struct clientsrv *cs)
{
	for (const struct client *c = cs->clients; c; c = c->next)
		if (!c->hung_up && (c->ctl_len > c->ctl_off || c->ack_first || (c->ep && c->ep->head)))
			return 0;
	return 1;
}

struct status_ctx {
	FILE *out;
	int first;
};

static void ep_status_json(void *arg, const struct endpoint *e)
{
	struct status_ctx *x = arg;
	const struct client *c = e->client;

	fprintf(x->out, "%s{\"name\":\"%s\",\"connected\":%s,\"queued\":%zu,\"queued_bytes\":%zu", x->first ? "" : ",",
		e->name, c ? "true" : "false", e->queued, e->queued_bytes);
	if (e->owned)
		fprintf(x->out, ",\"owner_uid\":%d", (int)e->owner);
	if (c)
		fprintf(x->out, ",\"msgs_in\":%" PRIu64 ",\"bytes_in\":%" PRIu64 ",\"msgs_out\":%" PRIu64
			",\"bytes_out\":%" PRIu64 ",\"waiting_for_memory\":%s,\"hung_up\":%s,\"pid\":%d,\"shm\":%s",
			c->msgs_in, c->bytes_in, c->msgs_out, c->bytes_out, c->paused ? "true" : "false",
			c->hung_up ? "true" : "false", (int)c->pid, c->shm ? "true" : "false");
	fputc('}', x->out);
	x->first = 0;
}

void clientsrv_status_json(const struct clientsrv *cs, FILE *out)
{
	struct status_ctx x = { out, 1 };

	fprintf(out, "{\"local_messages\":%" PRIu64 ",\"refused\":%" PRIu64 ",\"undelivered\":%" PRIu64
		",\"undelivered_job_ended\":%" PRIu64 ",\"clients\":%zu,\"clients_refused\":%" PRIu64
		",\"tcp_key_failures\":%" PRIu64 ",\"endpoints\":[",
		cs->msgs_local, cs->msgs_refused, cs->msgs_undelivered, cs->msgs_ended, cs->nclients,
		cs->clients_refused, cs->tcp_key_failures);
	eptab_foreach(&cs->eps, ep_status_json, &x);
	fputs("]}", out);
}

static void ep_status_text(void *arg, const struct endpoint *e)
{
	struct status_ctx *x = arg;
	const struct client *c = e->client;

	fprintf(x->out, "  %-32s %s, %zu queued (%zu bytes)", e->name,
		c == NULL ? "no process" : c->hung_up ? "hung up" : "connected", e->queued, e->queued_bytes);
	if (c)
		fprintf(x->out, ", in %" PRIu64 " msgs/%" PRIu64 " B, out %" PRIu64 " msgs/%" PRIu64 " B%s",
			c->msgs_in, c->bytes_in, c->msgs_out, c->bytes_out, c->paused ? ", waiting for memory" : "");
	fputc('\n', x->out);
}

void clientsrv_status_text(const struct clientsrv *cs, FILE *out)
{
	struct status_ctx x = { out, 1 };

	fprintf(out, "clients: %zu connected, %" PRIu64 " refused; %" PRIu64 " messages not delivered (%" PRIu64
		" of ended jobs)\n", cs->nclients, cs->clients_refused, cs->msgs_undelivered, cs->msgs_ended);
	fprintf(out, "endpoints:\n");
	eptab_foreach(&cs->eps, ep_status_text, &x);
}
