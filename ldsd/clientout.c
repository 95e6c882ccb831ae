/* clientout.c - what the client server writes to a client: control
 * frames, deliveries, losses; see client.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/uio.h>

#include "client.h"
#include "clock.h"
#include "link.h"
#include "log.h"

/* iovecs per write to a client: a 1 MiB message in 64 KiB blocks is at
 * most 33 pieces (recvbuf.h, parts); a longer one goes in more writes. */
#define CLIENT_OUT_IOV 64
#define CS_CTL_INITIAL 4096

int client_ctl_append(struct client *c, const struct cp_msg *m)
{
	uint8_t buf[CP_HDR_LEN + 64 + WIRE_ENDPOINT_MAX * 2 + CP_TEXT_MAX];
	size_t n = cp_encode(buf, sizeof(buf), m);

	if (n == 0)
		return -EINVAL;
	if (c->hung_up || c->doomed)
		return 0; /* nobody left to tell */
	/* A client that does not read what it is told is closed rather than
	 * told more: its notices would grow without end. */
	if (c->ctl_len - c->ctl_off + n > c->cs->d->cfg->clients.queue_max) {
		log_warnx("client %s (uid %d): more than %zu bytes of notices unread; closing it", c->peer,
			  (int)c->uid, c->cs->d->cfg->clients.queue_max);
		client_doom(c);
		return 0;
	}
	if (c->ctl_off > 0 && c->ctl_off >= c->ctl_len / 2) {
		memmove(c->ctl, c->ctl + c->ctl_off, c->ctl_len - c->ctl_off);
		c->ctl_len -= c->ctl_off;
		c->ctl_off = 0;
	}
	if (c->ctl_len + n > c->ctl_cap) {
		size_t cap = c->ctl_cap ? c->ctl_cap : CS_CTL_INITIAL;
		uint8_t *p;

		while (cap < c->ctl_len + n)
			cap *= 2;
		p = realloc(c->ctl, cap);
		if (p == NULL)
			return -ENOMEM;
		c->ctl = p;
		c->ctl_cap = cap;
	}
	memcpy(c->ctl + c->ctl_len, buf, n);
	c->ctl_len += n;
	return 0;
}

void client_tell_closing(int fd, int err, const char *text)
{
	struct cp_msg m = { .type = CP_ERROR, .err = err };
	uint8_t buf[CP_HDR_LEN + 16 + CP_TEXT_MAX];
	size_t n;

	snprintf(m.text, sizeof(m.text), "%s", text);
	n = cp_encode(buf, sizeof(buf), &m);
	if (n > 0 && write(fd, buf, n) < 0)
		log_debug("could not tell a client why it is closed: %s", strerror(errno));
}

void client_send_error(struct client *c, uint64_t id, int err, const char *fmt, ...)
{
	struct cp_msg m = { .type = CP_ERROR, .msg_id = id, .err = err };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m.text, sizeof(m.text), fmt, ap);
	va_end(ap);
	c->cs->msgs_refused++;
	if (client_ctl_append(c, &m) < 0)
		log_warnx("client %s: could not queue error \"%s\"", c->peer, m.text);
}

void client_answer_peer(struct client *c, const char *cluster)
{
	struct link *l = link_find(c->cs->d, cluster);
	struct cp_msg m = { .type = CP_PEER, .state = CP_PEER_UNKNOWN };
	double down;

	snprintf(m.name, sizeof(m.name), "%s", cluster);
	if (l != NULL) {
		down = link_down_for(l);
		m.state = down > 0 ? CP_PEER_DOWN : CP_PEER_UP;
		m.seconds = down > UINT32_MAX ? UINT32_MAX : (uint32_t)down;
		snprintf(m.text, sizeof(m.text), "%s", link_last_error(l));
		m.has_bytes = c->link_bytes;
		link_byte_counts(l, &m.bytes_out, &m.bytes_in);
	}
	if (client_ctl_append(c, &m) < 0)
		log_warnx("client %s: could not queue the state of peer %s", c->peer, cluster);
}

void client_flush_acks(struct client *c)
{
	struct cp_msg m = { .type = CP_ACKED };

	if (c->ack_first == 0)
		return;
	m.first = c->ack_first;
	m.last = c->ack_last;
	if (client_ctl_append(c, &m) == 0)
		c->ack_first = c->ack_last = 0;
}

void client_ack(struct client *c, uint64_t id)
{
	if (c->ack_first && id == c->ack_last + 1) {
		c->ack_last = id;
		return;
	}
	client_flush_acks(c);
	c->ack_first = c->ack_last = id;
}

void client_set_events(struct client *c)
{
	unsigned ev = (c->paused ? 0 : EV_READ) | (c->want_write ? EV_WRITE : 0);

	if (c->shm) {
		clientshm_set_events(c);
		return;
	}
	if (evloop_watch(c->cs->d->ev, c->fd, ev, c->cs->up->event, c) < 0)
		log_warn("client %s: cannot update its event mask", c->peer);
}

/*
 * The client's socket hung up or failed: its process exited or closed the
 * connection.  Nothing more is written to it, but what it sent is still
 * read, up to the end, which closes it; if it waits for memory, that
 * happens when memory frees.  lds_send returned once a message was in the
 * socket, so a sender that exits (or calls lds_close) without waiting for
 * acknowledgements still has every whole message delivered.
 */
void client_hung_up(struct client *c, const char *why)
{
	if (c->hung_up)
		return;
	log_debug("client %s (%s) hung up (%s)%s", c->peer, c->ep ? c->ep->name : "no endpoint", why,
		  c->paused ? "; its last messages are read when memory frees" : "");
	c->hung_up = 1;
	c->want_write = 0;
	client_set_events(c);
}

/* The head of the endpoint's queue, m, reached the application: it is
 * delivered. */
static void client_delivered(struct client *c, struct rb_msg *m)
{
	struct clientsrv *cs = c->cs;

	eptab_dequeue(&cs->eps, c->ep);
	c->msgs_out++;
	c->bytes_out += m->rec.len;
	if (m->origin) {
		link_delivered(m->origin, m);
	} else {
		cs->local_bytes -= m->rec.len;
		cs->up->acked(cs, m->client, m->rec.msg_id);
		rb_msg_free(m);
		cs->resume_pending = 1;
	}
}

/* The DELIVER frame's header and fields for m, in buf (c->cur_hdr's
 * size); returns their length. */
static size_t client_deliver_hdr(const struct rb_msg *m, uint8_t *buf, size_t len)
{
	struct cp_msg h = { .type = CP_DELIVER, .msg_id = m->rec.msg_id, .incarnation = m->rec.incarnation,
			    .payload_len = m->rec.len };

	snprintf(h.name, sizeof(h.name), "%s", m->rec.src);
	return cp_encode(buf, len, &h);
}

static void client_prepare_deliver(struct client *c, struct rb_msg *m)
{
	c->cur = m;
	c->cur_hdr_len = client_deliver_hdr(m, c->cur_hdr, sizeof(c->cur_hdr));
	c->cur_off = 0;
}

int client_on_taken(struct client *c, uint64_t count)
{
	if (!c->takes || (count > c->taken && count - c->taken > c->written)) {
		log_warnx("client %s: TAKEN %" PRIu64 " but %" PRIu64 " taken and %zu more written; closing it",
			  c->peer, count, c->taken, c->written);
		return -1;
	}
	for (; c->taken < count; c->taken++) {
		if (--c->written == 0)
			c->last_written = NULL;
		client_delivered(c, c->ep->head);
	}
	return 0;
}

void client_take_written(struct client *c)
{
	if (c->written > 0)
		(void)client_on_taken(c, c->taken + c->written);
}

/* The next message to write: after those written and not yet taken. */
static struct rb_msg *client_next_out(const struct client *c)
{
	if (c->ep == NULL)
		return NULL;
	return c->last_written ? c->last_written->next : c->ep->head;
}

/* DELIVER m was written whole. */
static void client_written(struct client *c, struct rb_msg *m)
{
	if (!c->takes) {
		client_delivered(c, m);
		return;
	}
	c->written++;
	c->last_written = m;
}

/* Control frames or a DELIVER wait to be written to c. */
static int client_output_waits(const struct client *c)
{
	return c->ctl_len > c->ctl_off || c->cur || client_next_out(c);
}

uint8_t *client_place(struct client *c, struct rb_msg *m)
{
	uint8_t hdr[sizeof(c->cur_hdr)];
	uint64_t taken;

	/* Its frame must be the next thing the client reads, and the client
	 * must say when it took it: TAKEN. */
	if (!c->takes || c->hung_up || c->doomed || c->shm == NULL || client_output_waits(c))
		return NULL;
	/* Messages kept in the ring that the application took already, its
	 * TAKEN still on the way, make room now. */
	taken = clientshm_taken(c);
	if (taken > c->taken && client_on_taken(c, taken) < 0) {
		client_doom(c);
		return NULL;
	}
	return clientplace_start(c, m, hdr, client_deliver_hdr(m, hdr, sizeof(hdr)));
}

void client_deliver_placed(struct client *c, struct rb_msg *m)
{
	/* First of those not written yet: its frame is in the ring before
	 * theirs. */
	eptab_insert(&c->cs->eps, c->ep, c->last_written, m, clock_now_ns());
	clientplace_publish(c, m);
	client_written(c, m);
	client_write(c);
}

void client_write(struct client *c)
{
	int more = 1;

	if (c->hung_up)
		return;
	/* Nothing goes into the ring after a frame still being filled. */
	if (client_output_waits(c) && clientplace_busy(c)) {
		if (!c->want_write) {
			c->want_write = 1;
			client_set_events(c);
		}
		return;
	}
	for (int rounds = 0; rounds < 64; rounds++) {
		/* Control frames, the DELIVER header, the payload's pieces. */
		struct iovec iov[CLIENT_OUT_IOV];
		size_t ctl_part = 0, total = 0;
		int n = 0;
		ssize_t w;

		if (c->cur == NULL && client_next_out(c))
			client_prepare_deliver(c, client_next_out(c));
		if (c->ctl_len > c->ctl_off && (c->cur == NULL || c->cur_off == 0)) {
			ctl_part = c->ctl_len - c->ctl_off;
			iov[n].iov_base = c->ctl + c->ctl_off;
			iov[n++].iov_len = ctl_part;
		}
		if (c->cur) {
			size_t off = c->cur_off;

			if (off < c->cur_hdr_len) {
				iov[n].iov_base = c->cur_hdr + off;
				iov[n++].iov_len = c->cur_hdr_len - off;
				off = c->cur_hdr_len;
			}
			n += rb_msg_iov(c->cur, off - c->cur_hdr_len, iov + n, CLIENT_OUT_IOV - n);
		}
		for (int i = 0; i < n; i++)
			total += iov[i].iov_len;
		more = total > 0;
		if (!more)
			break;
		do
			w = client_writev(c, iov, n);
		while (w < 0 && errno == EINTR);
		if (w < 0) {
			if (errno == EAGAIN || errno == EWOULDBLOCK) {
				if (!c->want_write) {
					c->want_write = 1;
					client_set_events(c);
				}
				return;
			}
			/* The read side closes it once it has read the rest. */
			client_hung_up(c, strerror(errno));
			return;
		}
		if ((size_t)w <= ctl_part) {
			c->ctl_off += (size_t)w;
			w = 0;
		} else {
			c->ctl_off += ctl_part;
			w -= (ssize_t)ctl_part;
		}
		if (c->ctl_off == c->ctl_len)
			c->ctl_off = c->ctl_len = 0;
		if (c->cur) {
			c->cur_off += (size_t)w;
			if (c->cur_off == c->cur_hdr_len + c->cur->rec.len) {
				struct rb_msg *m = c->cur;

				c->cur = NULL;
				client_written(c, m);
			}
		}
	}
	/* Plenty written this round: what is left waits for the next
	 * writable event, so that other clients and links get a turn. */
	if (c->want_write != more) {
		c->want_write = more;
		client_set_events(c);
	}
	if (more && c->shm)
		clientshm_kick(c, 1);
}

struct fence *client_fence(struct client *c, const struct link *l)
{
	for (size_t i = 0; i < c->nfences; i++)
		if (c->fences[i].link == l)
			return &c->fences[i];
	return NULL;
}

/* Reports message id, sent over l, lost; later messages to l wait for
 * RESUME. */
void client_report_lost(struct client *c, struct link *l, uint64_t id, const char *reason)
{
	struct cp_msg m = { .type = CP_LOST, .first = id, .last = id };
	struct fence *f = client_fence(c, l);

	client_flush_acks(c);
	snprintf(m.name, sizeof(m.name), "%s", link_name(l));
	snprintf(m.text, sizeof(m.text), "%s", reason);
	if (client_ctl_append(c, &m) < 0) {
		log_warnx("client %s: could not report message %" PRIu64 " lost", c->peer, id);
		return;
	}
	/* One entry per link at most: there are no more links than that. */
	if (f == NULL && c->nfences < CONFIG_MAX_PEERS) {
		f = &c->fences[c->nfences++];
		f->link = l;
		f->reported = 0;
	}
	if (f) {
		f->reported++;
		f->up = 1;
	}
}
