/*
 * lds.c - liblds, the modern client API; see lds.h.
 *
 * A handle is one nonblocking socket to ldsd (or, once set up over it,
 * shared-memory rings: shmclient.h) plus three queues: the bytes
 * of the frame being written (at most one message, lds_send_nb), the bytes
 * read but not yet a whole frame, and what those frames produced (received
 * messages, events).  Every wait goes through ldsi_wait_for(), which polls for
 * both directions at once: a client blocked writing to a daemon that is
 * itself blocked writing to the client would otherwise deadlock.
 */
#include <errno.h>
#include <poll.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/uio.h>
#include <unistd.h>

#include "../ldsd/clock.h"
#include "clientproto.h"
#include "connect.h"
#include "deadline.h"
#include "lds_int.h"

#define IN_SIZE        (64u * 1024)  /* input buffer */
#define READ_BURST     16            /* reads per round, so sends keep moving */
#define CLOSE_FLUSH_MS 10000
#define NAME_RETRY_MS  10            /* our name still held by the old connection */
#define RECONNECT_FIRST_MS 50        /* lds_reconnect's wait for a restarting */
#define RECONNECT_MAX_MS 1000        /* gateway: doubling up to this */
#define DEDUP_SOURCES  16384         /* senders a handle remembers, see dedup.h */
/* TAKEN is sent once the application has taken all that arrived, or this
 * many messages or bytes more, or after this long: no frame per message on
 * the fast path, the gateway's memory not held long for a busy reader, and
 * a slow reader's every message reported when lds_recv returns it (what
 * was taken and not reported when the process dies goes to the next). */
#define TAKEN_BATCH_MSGS  64
#define TAKEN_BATCH_BYTES (256u << 10)
#define TAKEN_BATCH_NS    2000000ull
/* Buffers of large messages given back are kept for the next ones: a fresh
 * large allocation per message costs a page fault per page (and the heap
 * shrinks and grows again).  Several, since one read may bring a few
 * messages; below RX_POOL_MIN malloc is cheap anyway. */
#define RX_POOL_MIN    (64u << 10)
#define RX_POOL_MAX    8

#define FIELD_SIZE(type, field) sizeof(((type *)0)->field)
/* Names and texts are copied whole from decoded frames. */
_Static_assert(FIELD_SIZE(struct lds_msg, src) >= FIELD_SIZE(struct cp_msg, name), "src too small");
_Static_assert(FIELD_SIZE(struct lds_event, peer) >= FIELD_SIZE(struct cp_msg, name), "peer too small");
_Static_assert(FIELD_SIZE(struct lds_event, text) >= FIELD_SIZE(struct cp_msg, text), "text too small");

int ldsi_fail(struct lds *h, int err)
{
	if (h->err == 0)
		h->err = err;
	return h->err;
}

/* ---- time ------------------------------------------------------------- */

/* lds.h promises -EAGAIN, not -ETIMEDOUT, when the caller did not wait. */
int ldsi_timed(int rc, int timeout_ms)
{
	return rc == -ETIMEDOUT && timeout_ms == 0 ? -EAGAIN : rc;
}

/* ---- events ----------------------------------------------------------- */

static struct lds_event *ev_push(struct lds *h)
{
	struct lds_event *ev;

	if (h->ev_n == h->ev_cap) {
		size_t cap = h->ev_cap ? 2 * h->ev_cap : 16;
		struct lds_event *v = malloc(cap * sizeof(*v));

		if (v == NULL)
			return NULL;
		for (size_t i = 0; i < h->ev_n; i++)
			v[i] = h->ev[(h->ev_head + i) % h->ev_cap];
		free(h->ev);
		h->ev = v;
		h->ev_cap = cap;
		h->ev_head = 0;
	}
	ev = &h->ev[(h->ev_head + h->ev_n++) % h->ev_cap];
	memset(ev, 0, sizeof(*ev));
	return ev;
}

/* ---- frames from the daemon ------------------------------------------- */

static int daemon_errno(const struct cp_msg *m)
{
	return m->err > 0 ? -m->err : -EPROTO;
}

static int on_welcome(struct lds *h, const struct cp_msg *m)
{
	size_t cl = strlen(m->name);

	if (h->welcomed || m->max_msg == 0 || !wire_name_valid(m->name) || !wire_endpoint_valid(m->endpoint) ||
	    strncmp(m->endpoint, m->name, cl) != 0 || m->endpoint[cl] != '/')
		return ldsi_fail(h, -EPROTO);
	if (m->version != CP_VERSION)
		return ldsi_fail(h, -EPROTONOSUPPORT);
	memcpy(h->cluster, m->name, cl + 1);
	memcpy(h->name, m->endpoint, strlen(m->endpoint) + 1);
	h->tk.on = (m->flags & CP_F_TAKEN) != 0;
	h->shm_agreed = (m->flags & CP_F_SHM) != 0;
	h->max_msg = m->max_msg < WIRE_MAX_MSG ? m->max_msg : WIRE_MAX_MSG;
	h->welcomed = 1;
	return 0;
}

/* A message for DELIVER m, payload not yet copied; NULL: h->err is set. */
static struct rxmsg *rx_new(struct lds *h, const struct cp_msg *m)
{
	struct rxmsg *r = NULL;

	if (!wire_endpoint_valid(m->name)) {
		ldsi_fail(h, -EPROTO);
		return NULL;
	}
	for (struct rxmsg **pp = &h->rx_pool; *pp; pp = &(*pp)->next) {
		if ((*pp)->cap >= m->payload_len) {
			r = *pp;
			*pp = r->next;
			h->rx_npool--;
			break;
		}
	}
	if (r == NULL) {
		r = malloc(sizeof(*r) + m->payload_len);
		if (r == NULL) {
			ldsi_fail(h, -ENOMEM);
			return NULL;
		}
		r->cap = m->payload_len;
	}
	r->next = NULL;
	r->incarnation = m->incarnation;
	r->conn = h->tk.conn;
	memcpy(r->m.src, m->name, sizeof(m->name));
	r->m.id = m->msg_id;
	r->m.len = m->payload_len;
	r->m.data = r->data;
	return r;
}

void ldsi_rx_recycle(struct lds *h, struct rxmsg *r)
{
	if (r->cap < RX_POOL_MIN || h->rx_npool == RX_POOL_MAX) {
		free(r);
		return;
	}
	r->next = h->rx_pool;
	h->rx_pool = r;
	h->rx_npool++;
}

/* Whether a TAKEN is due: the application took everything that arrived,
 * or a batch. */
void ldsi_taken_check(struct lds *h)
{
	uint64_t taken = h->tk.delivers - h->tk.queued;

	if (h->tk.on && taken > h->tk.sent &&
	    (h->tk.queued == 0 || taken - h->tk.sent >= TAKEN_BATCH_MSGS || h->tk.bytes >= TAKEN_BATCH_BYTES ||
	     clock_now_ns() - h->tk.sent_ns >= TAKEN_BATCH_NS))
		h->tk.due = 1;
}

/* A message arrived whole: it is queued unless the application was given
 * it before (its sender resent it after a gateway crash); a copy counts
 * as taken at once. */
static int rx_complete(struct lds *h, struct rxmsg *r)
{
	int rc = dedup_admit(&h->seen, r->m.src, r->incarnation, r->m.id);

	h->tk.delivers++;
	if (rc <= 0) {
		ldsi_rx_recycle(h, r);
		if (rc < 0)
			return ldsi_fail(h, -ENOMEM);
		h->st.duplicates++;
		ldsi_taken_check(h);
		return 0;
	}
	h->tk.queued++;
	if (h->rx_tail)
		h->rx_tail->next = r;
	else
		h->rx_head = r;
	h->rx_tail = r;
	return 0;
}

static int on_deliver(struct lds *h, const struct cp_msg *m)
{
	struct rxmsg *r = rx_new(h, m);

	if (r == NULL)
		return h->err;
	memcpy(r->data, m->payload, m->payload_len);
	return rx_complete(h, r);
}

/* A frame that does not fit the input buffer can only be a DELIVER: its
 * payload goes straight into its message, saving a copy of every byte.
 * Returns 1 once filling has started (every buffered byte taken), 0 if its
 * fields have not all arrived, or a negative error. */
static int fill_start(struct lds *h, const struct cp_hdr *hdr, size_t off)
{
	const uint8_t *body = h->in + off + CP_HDR_LEN;
	size_t avail = h->in_len - off - CP_HDR_LEN, have;
	struct cp_msg m;
	int rc;

	if (!h->welcomed || hdr->type != CP_DELIVER)
		return ldsi_fail(h, -EPROTO);
	rc = cp_decode_head(hdr, body, avail, &m);
	if (rc == -EAGAIN)
		return 0;
	if (rc < 0)
		return ldsi_fail(h, -EPROTO);
	h->fill = rx_new(h, &m);
	if (h->fill == NULL)
		return h->err;
	have = avail - (size_t)(m.payload - body);
	memcpy(h->fill->data, m.payload, have);
	h->fill_have = have;
	return 1;
}

/* ACKED, LOST and ERROR about message ids: settles them, counts what was
 * new and queues the event the application asked for. */
static int on_outcome(struct lds *h, const struct cp_msg *m)
{
	uint64_t first = m->type == CP_ERROR ? m->msg_id : m->first;
	uint64_t last = m->type == CP_ERROR ? m->msg_id : m->last;
	struct lds_event *ev;
	int64_t added = 0;

	/* The daemon may refuse the message being written from its header. */
	if (last > h->last_id && !(h->out.active && last == h->out.id))
		return ldsi_fail(h, -EPROTO);
	if (first != 0 && (added = idset_add(&h->settled, first, last)) < 0)
		return ldsi_fail(h, -ENOMEM);
	if (m->type == CP_ACKED) {
		h->st.acked += (uint64_t)added;
		if (!h->ack_events)
			return 0;
	}
	ev = ev_push(h);
	if (ev == NULL)
		return ldsi_fail(h, -ENOMEM);
	ev->first = first;
	ev->last = last;
	memcpy(ev->text, m->text, sizeof(m->text));
	switch (m->type) {
	case CP_ACKED:
		ev->type = LDS_EV_ACKED;
		break;
	case CP_LOST:
		ev->type = LDS_EV_LOST;
		memcpy(ev->peer, m->name, sizeof(m->name));
		h->st.lost += (uint64_t)added;
		break;
	default:
		ev->type = LDS_EV_ERROR;
		ev->err = daemon_errno(m);
		h->st.failed += (uint64_t)added;
		break;
	}
	return 0;
}

/* The rings: every later frame goes through them. */
static int on_shm(struct lds *h, const struct cp_msg *m)
{
	int err = 0;

	if (!h->shm_agreed || h->shm != NULL)
		return ldsi_fail(h, -EPROTO);
	h->shm = shmclient_attach(h->fd, &h->fds, m->ring_size, &err);
	return h->shm ? 0 : ldsi_fail(h, err);
}

static int handle_frame(struct lds *h, const struct cp_hdr *hdr, const uint8_t *body)
{
	struct cp_msg m;

	if (cp_decode(hdr, body, &m) < 0)
		return ldsi_fail(h, -EPROTO);
	/* Until WELCOME the daemon can only accept or refuse us. */
	if (!h->welcomed && m.type == CP_ERROR)
		return ldsi_fail(h, daemon_errno(&m));
	if (!h->welcomed && m.type != CP_WELCOME)
		return ldsi_fail(h, -EPROTO);
	switch (m.type) {
	case CP_WELCOME:
		return on_welcome(h, &m);
	case CP_SHM:
		return on_shm(h, &m);
	case CP_DELIVER:
		return on_deliver(h, &m);
	case CP_ACKED:
	case CP_LOST:
	case CP_ERROR:
		return on_outcome(h, &m);
	case CP_PEER:
		/* An answer to an earlier question that timed out is dropped. */
		if (strcmp(m.name, h->pq.name) == 0 && !h->pq.due) {
			h->pq.ans.state = (enum lds_peer_state)m.state;
			h->pq.ans.down_s = m.seconds;
			snprintf(h->pq.ans.why, sizeof(h->pq.ans.why), "%s", m.text);
			h->pq.answered = 1;
		}
		return 0;
	default:
		return ldsi_fail(h, -EPROTO);
	}
}

/* Handles every whole frame in the input buffer and keeps the start of
 * the next one. */
static int parse_input(struct lds *h)
{
	size_t off = 0;
	struct cp_hdr hdr;
	int rc;

	while (h->in_len - off >= CP_HDR_LEN) {
		size_t need;

		if (cp_hdr_parse(h->in + off, &hdr) < 0)
			return ldsi_fail(h, -EPROTO);
		need = CP_HDR_LEN + (size_t)hdr.len;
		if (h->in_len - off < need) {
			rc = need > IN_SIZE ? fill_start(h, &hdr, off) : 0;
			if (rc < 0)
				return rc;
			if (rc == 1)
				off = h->in_len;
			break;
		}
		rc = handle_frame(h, &hdr, h->in + off + CP_HDR_LEN);
		if (rc < 0)
			return rc;
		off += need;
	}
	memmove(h->in, h->in + off, h->in_len - off);
	h->in_len -= off;
	return 0;
}

/* The header of the first frame in the daemon's ring, read in place:
 * 1, 0 if it has not all arrived, or -EPROTO.  *avail: bytes there. */
int ldsi_ring_head(struct lds *h, struct cp_hdr *hdr, size_t *avail)
{
	struct shmring *r = &h->shm->map.r[SHMRING_D2C];

	if (shmring_avail(r, avail) < 0)
		return ldsi_fail(h, -EPROTO);
	if (*avail < CP_HDR_LEN)
		return 0;
	if (cp_hdr_parse(shmring_rptr(r), hdr) < 0)
		return ldsi_fail(h, -EPROTO);
	return 1;
}

/* Bytes from the daemon: its rings (0: none waits), or its socket. */
static ssize_t read_bytes(struct lds *h, void *dst, size_t room)
{
	ssize_t n;

	if (h->shm == NULL) {
		n = shmclient_recv(h->fd, dst, room, &h->fds);
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
			return 0;
		return n <= 0 ? ldsi_fail(h, -ECONNRESET) : n;
	}
	h->zc.need_in = 0;
	if (h->zc.want && h->in_len == 0 && h->fill == NULL) {
		/* One frame at a time, so that lds_recv_zc finds a DELIVER that
		 * fits the ring there, whole, to be read in place. */
		struct cp_hdr hd;
		size_t avail;
		int rc = ldsi_ring_head(h, &hd, &avail);

		if (rc < 0)
			return rc;
		if (rc == 1 && hd.type == CP_DELIVER && CP_HDR_LEN + hd.len <= h->shm->map.size) {
			h->zc.need_in = CP_HDR_LEN + hd.len;
			return 0;
		}
		if (rc == 1 && room > CP_HDR_LEN + hd.len)
			room = CP_HDR_LEN + hd.len;
	}
	/* Empty: the flag that makes ldsd ring is set before we return, so
	 * that an application polling lds_fd wakes for what comes next. */
	for (int armed = 0; armed < 2; armed++) {
		n = shmclient_read(h->shm, dst, room);
		if (n != 0)
			return n < 0 ? ldsi_fail(h, -EPROTO) : n;
		n = armed ? 0 : shmring_consumer_sleep(&h->shm->map.r[SHMRING_D2C]);
		if (n <= 0)
			return n < 0 ? ldsi_fail(h, -EPROTO) : 0;
	}
	return 0;
}

/* With rings the socket carries nothing more: readable, it says the
 * daemon is gone.  Only then, and once the ring is empty, is it read. */
static int socket_gone(struct lds *h)
{
	uint8_t b;
	ssize_t n = recv(h->fd, &b, 1, MSG_DONTWAIT);

	if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK || errno == EINTR))
		return 0;
	return ldsi_fail(h, n > 0 ? -EPROTO : -ECONNRESET);
}

static int read_input(struct lds *h)
{
	for (int i = 0; i < READ_BURST; i++) {
		struct rxmsg *f = h->fill;
		uint8_t *dst = f ? f->data + h->fill_have : h->in + h->in_len;
		size_t room = f ? f->m.len - h->fill_have : IN_SIZE - h->in_len;
		ssize_t n = read_bytes(h, dst, room);
		int rc = 0;

		if (n <= 0)
			return (int)n;
		if (f) {
			h->fill_have += (size_t)n;
			if (h->fill_have == f->m.len) {
				h->fill = NULL;
				rc = rx_complete(h, f);
			}
		} else {
			h->in_len += (size_t)n;
			rc = parse_input(h);
		}
		if (rc < 0)
			return rc;
		if ((size_t)n < room)
			return 0;
	}
	return 0;
}

/* ---- the frame being written ------------------------------------------ */

static void out_clear(struct outmsg *o)
{
	free(o->owned);
	memset(o, 0, sizeof(*o));
}

static int out_set(struct lds *h, const struct cp_msg *m, const void *payload, size_t len)
{
	struct outmsg *o = &h->out;

	o->hdr_len = cp_encode(o->hdr, sizeof(o->hdr), m);
	if (o->hdr_len == 0)
		return -EINVAL;
	o->id = m->msg_id;
	o->hdr_off = 0;
	o->payload = payload;
	o->payload_len = len;
	o->payload_off = 0;
	o->active = 1;
	return 0;
}

static void out_advance(struct outmsg *o, size_t n)
{
	size_t h = o->hdr_len - o->hdr_off;

	if (n < h) {
		o->hdr_off += n;
		return;
	}
	o->hdr_off = o->hdr_len;
	o->payload_off += n - h;
	if (o->payload_off == o->payload_len)
		out_clear(o);
}

/* The first peer whose RESUME is due, or NULL. */
static struct resume_count *resume_due(const struct lds *h)
{
	for (size_t i = 0; i < h->ntaken; i++)
		if (h->taken[i].due)
			return &h->taken[i];
	return NULL;
}

/* Starts the next RESUME that is due if the output is free; 1 if it did. */
static int out_next_resume(struct lds *h)
{
	struct cp_msg m = { .type = CP_RESUME };
	struct resume_count *t;

	if (h->out.active || (t = resume_due(h)) == NULL)
		return 0;
	m.count = t->taken;
	memcpy(m.name, t->peer, sizeof(m.name));
	if (out_set(h, &m, NULL, 0) < 0)
		return 0;
	t->due = 0;
	return 1;
}

/* Starts the TAKEN that is due if the output is free; 1 if it did. */
static int out_next_taken(struct lds *h)
{
	struct cp_msg m = { .type = CP_TAKEN };

	if (h->out.active || !h->tk.due)
		return 0;
	m.count = h->tk.delivers - h->tk.queued;
	if (out_set(h, &m, NULL, 0) < 0)
		return 0;
	h->tk.sent = m.count;
	h->tk.sent_ns = clock_now_ns();
	h->tk.bytes = 0;
	h->tk.due = 0;
	return 1;
}

/* Starts lds_peer's question if it is due and the output is free; 1 if
 * it did. */
static int out_next_peerq(struct lds *h)
{
	struct cp_msg m = { .type = CP_PEERQ };

	if (h->out.active || !h->pq.due)
		return 0;
	memcpy(m.name, h->pq.name, sizeof(h->pq.name));
	if (out_set(h, &m, NULL, 0) < 0)
		return 0;
	h->pq.due = 0;
	return 1;
}

/* Writes as much of the pending frame as the socket takes now; the payload
 * goes straight from its buffer, never copied. */
static int write_out(struct lds *h)
{
	struct outmsg *o = &h->out;

	/* A message being built in the ring: nothing may come before it. */
	if (h->zc.reserved == ZC_RING)
		return 0;
	while (o->active || out_next_taken(h) || out_next_resume(h) || out_next_peerq(h)) {
		struct iovec iov[2];
		struct msghdr mh = { .msg_iov = iov };
		ssize_t n;

		if (o->hdr_off < o->hdr_len)
			iov[mh.msg_iovlen++] = (struct iovec){ o->hdr + o->hdr_off, o->hdr_len - o->hdr_off };
		if (o->payload_off < o->payload_len)
			iov[mh.msg_iovlen++] = (struct iovec){ (void *)(o->payload + o->payload_off),
							       o->payload_len - o->payload_off };
		if (h->shm) {
			n = shmclient_writev(h->shm, iov, (int)mh.msg_iovlen);
			if (n == 0) {
				/* Full: armed before we return, as in read_bytes. */
				int rc = shmring_producer_sleep(&h->shm->map.r[SHMRING_C2D], 1);

				if (rc <= 0)
					return rc < 0 ? ldsi_fail(h, -EPROTO) : 0;
				continue;
			}
			if (n < 0)
				return ldsi_fail(h, -EPROTO);
			out_advance(o, (size_t)n);
			continue;
		}
		/* MSG_NOSIGNAL: a vanished daemon is an error code, not SIGPIPE. */
		n = sendmsg(h->fd, &mh, MSG_NOSIGNAL);
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return 0;
		if (n < 0)
			return ldsi_fail(h, -ECONNRESET);
		out_advance(o, (size_t)n);
	}
	return 0;
}

/* ---- waiting ---------------------------------------------------------- */

/* pump's round with rings: it sleeps (polls the eventfd ldsd rings, and
 * the socket for its end) only when the rings give nothing to do. */
static int pump_shm(struct lds *h, int64_t deadline, int want_out)
{
	struct pollfd p[2] = { { .fd = h->fd, .events = POLLIN }, { .fd = h->shm->efd_wait, .events = POLLIN } };
	size_t left = 0;
	int rc = shmclient_ready(h->shm, h->zc.need_in ? h->zc.need_in : 1, want_out ? 1 : h->zc.need_out);

	if (rc < 0)
		return ldsi_fail(h, -EPROTO);
	if (rc == 0) {
		int n = poll(p, 2, deadline_poll_ms(deadline));

		if (n < 0)
			return errno == EINTR ? 0 : -errno;
		if (n == 0)
			return -ETIMEDOUT;
		if (p[1].revents & POLLIN)
			shmring_drain(h->shm->efd_wait);
	}
	rc = read_input(h);
	if (rc == 0)
		rc = write_out(h);
	/* The daemon's last frames are read before its end counts. */
	if (rc == 0 && h->shm != NULL && (p[0].revents & (POLLIN | POLLHUP | POLLERR)) &&
	    shmring_avail(&h->shm->map.r[SHMRING_D2C], &left) == 0 && left == 0)
		rc = socket_gone(h);
	return rc;
}

/* One round: waits until the socket is ready or the deadline passes, then
 * reads and writes what it can.  Returns 0, -ETIMEDOUT if nothing became
 * ready, or a negative errno. */
static int pump(struct lds *h, int64_t deadline)
{
	struct pollfd p = { .fd = h->fd, .events = POLLIN };
	int want_out = h->out.active || h->tk.due || resume_due(h) || h->pq.due;
	int n;

	if (h->shm)
		return pump_shm(h, deadline, want_out);
	if (want_out)
		p.events |= POLLOUT;
	n = poll(&p, 1, deadline_poll_ms(deadline));
	if (n < 0)
		return errno == EINTR ? 0 : -errno;
	if (n == 0)
		return -ETIMEDOUT;
	if (p.revents & POLLNVAL)
		return ldsi_fail(h, -EBADF);
	/* Input first: after a hang-up the daemon's last frames are still
	 * worth reading (an ERROR explaining why, messages for us). */
	if (p.revents & (POLLIN | POLLHUP | POLLERR)) {
		int rc = read_input(h);

		if (rc < 0)
			return rc;
	}
	if (p.revents & (POLLOUT | POLLHUP | POLLERR))
		return write_out(h);
	return 0;
}

static int is_welcomed(const struct lds *h, uint64_t arg)
{
	(void)arg;
	return h->welcomed && (!h->shm_agreed || h->shm != NULL);
}

int ldsi_out_idle(const struct lds *h, uint64_t arg)
{
	(void)arg;
	return !h->out.active && !h->tk.due && resume_due(h) == NULL && !h->pq.due;
}

static int has_msg(const struct lds *h, uint64_t arg)
{
	(void)arg;
	return h->rx_head != NULL;
}

static int is_settled(const struct lds *h, uint64_t id)
{
	return idset_prefix(&h->settled) >= id;
}

/* Moves bytes both ways until done(h, arg) or the deadline.  What already
 * arrived counts even once the connection is dead. */
int ldsi_wait_for(struct lds *h, ldsi_wait_cond done, uint64_t arg, int64_t deadline)
{
	for (;;) {
		int rc;

		if (done(h, arg))
			return 0;
		if (h->err)
			return h->err;
		rc = pump(h, deadline);
		if (rc < 0 && h->err == 0)
			return rc;
	}
}

/* ---- the API ---------------------------------------------------------- */

/* Returns close's verdict on the socket. */
static int free_handle(struct lds *h)
{
	int rc = 0;

	if (h->fd >= 0 && close(h->fd) < 0 && errno != EINTR)
		rc = -errno;
	shmclient_free(h->shm);
	shmclient_free(h->zc.old);
	shmfds_close(&h->fds);
	free(h->zc.copy);
	free(h->zc.buf);
	while (h->rx_head) {
		struct rxmsg *r = h->rx_head;

		h->rx_head = r->next;
		free(r);
	}
	free(h->rx_cur);
	while (h->rx_pool) {
		struct rxmsg *r = h->rx_pool;

		h->rx_pool = r->next;
		free(r);
	}
	free(h->fill);
	out_clear(&h->out);
	free(h->taken);
	free(h->in);
	free(h->path);
	idset_free(&h->settled);
	idset_free(&h->resendable);
	dedup_free(&h->seen);
	free(h->ev);
	free(h);
	return rc;
}

/* Connects to the daemon and registers the name asked for. */
static int hello(struct lds *h, int64_t deadline)
{
	struct cp_msg m = { .type = CP_HELLO, .version = CP_VERSION, .flags = CP_F_TAKEN,
			    .incarnation = h->incarnation };
	int rc = daemon_connect(h->path, deadline);

	/* Rings are for a process on the gateway's host: not over TCP. */
	if (strncmp(h->path, "tcp:", 4) != 0 && shmclient_wanted())
		m.flags |= CP_F_SHM;
	if (rc < 0)
		return rc;
	h->fd = rc;
	memcpy(m.name, h->asked, sizeof(m.name));
	rc = out_set(h, &m, NULL, 0);
	if (rc == 0)
		rc = ldsi_wait_for(h, is_welcomed, 0, deadline);
	return rc;
}

/* A random number that tells this handle's messages from those of an
 * earlier process that had the same endpoint name.  Not a secret, so if
 * the kernel has no random source, time and process id do. */
static uint64_t new_incarnation(void)
{
	uint64_t x = 0;

	while (x == 0) {
		if (getrandom(&x, sizeof(x), 0) != (ssize_t)sizeof(x)) {
			x = clock_now_ns() ^ ((uint64_t)getpid() << 40);
			x = (x ^ (x >> 31)) * 0x9E3779B97F4A7C15ull;
		}
	}
	return x;
}

static struct lds *open_failed(struct lds *h, int rc, int timeout_ms, int *err)
{
	/* The open failed already; how the socket closes changes nothing. */
	if (h != NULL)
		(void)free_handle(h);
	if (err != NULL)
		*err = ldsi_timed(rc, timeout_ms);
	return NULL;
}

/* A name this process may take: the part after "cluster/", which the
 * daemon prefixes itself (so no '/'), with the same characters. */
static int local_name_valid(const char *name)
{
	char probe[WIRE_ENDPOINT_MAX + 3];

	if (strchr(name, '/') != NULL || strlen(name) > WIRE_ENDPOINT_MAX)
		return 0;
	snprintf(probe, sizeof(probe), "c/%s", name);
	return wire_endpoint_valid(probe);
}

struct lds *lds_open(const char *socket_path, const char *name, int timeout_ms, int *err)
{
	int64_t deadline = deadline_after(timeout_ms);
	struct lds *h;
	int rc;

	if (name == NULL)
		name = "";
	if (name[0] != '\0' && !local_name_valid(name))
		return open_failed(NULL, -EINVAL, timeout_ms, err);
	h = calloc(1, sizeof(*h));
	if (h == NULL)
		return open_failed(NULL, -ENOMEM, timeout_ms, err);
	h->fd = -1;
	memcpy(h->asked, name, strlen(name) + 1);
	h->incarnation = new_incarnation();
	dedup_init(&h->seen, DEDUP_SOURCES);
	h->in = malloc(IN_SIZE);
	h->path = strdup(lds_socket_path(socket_path));
	rc = h->in == NULL || h->path == NULL ? -ENOMEM : hello(h, deadline);
	if (rc < 0)
		return open_failed(h, rc, timeout_ms, err);
	return h;
}

int lds_close(struct lds *h)
{
	int64_t deadline = deadline_after(CLOSE_FLUSH_MS);
	struct cp_msg bye = { .type = CP_BYE };
	int rc, err;

	if (h == NULL)
		return 0;
	rc = ldsi_wait_for(h, ldsi_out_idle, 0, deadline);
	if (rc == 0 && h->err == 0) {
		rc = out_set(h, &bye, NULL, 0);
		if (rc == 0)
			rc = ldsi_wait_for(h, ldsi_out_idle, 0, deadline);
	}
	err = free_handle(h);
	return rc < 0 ? rc : err;
}

const char *lds_name(const struct lds *h)
{
	return h->name;
}

const char *lds_cluster(const struct lds *h)
{
	return h->cluster;
}

size_t lds_max_msg(const struct lds *h)
{
	return h->max_msg;
}

int lds_fd(const struct lds *h)
{
	return h->shm ? h->shm->pollfd : h->fd;
}

/* "name" means this cluster's "cluster/name". */
int ldsi_full_dst(const struct lds *h, const char *dst, char out[WIRE_ENDPOINT_MAX + 1])
{
	int n;

	if (strchr(dst, '/') != NULL)
		n = snprintf(out, WIRE_ENDPOINT_MAX + 1, "%s", dst);
	else
		n = snprintf(out, WIRE_ENDPOINT_MAX + 1, "%s/%s", h->cluster, dst);
	if (n < 0 || n > (int)WIRE_ENDPOINT_MAX || !wire_endpoint_valid(out))
		return -EINVAL;
	return 0;
}

/* Checks a message and makes it the frame being written, with its id. */
static int start_send(struct lds *h, const char *dst, const void *buf, size_t len, uint64_t id)
{
	struct cp_msg m = { .type = CP_SEND, .payload_len = (uint32_t)len };
	int rc;

	if (h->err)
		return h->err;
	if (dst == NULL || (buf == NULL && len > 0))
		return -EINVAL;
	if (len > h->max_msg)
		return -EMSGSIZE;
	rc = ldsi_full_dst(h, dst, m.name);
	if (rc < 0)
		return rc;
	m.msg_id = id;
	return out_set(h, &m, buf, len);
}

/* A new message was handed over: lost ones the application knew of before
 * can no longer be resent, as this one could overtake them (lds_resend). */
void ldsi_accept_send(struct lds *h, size_t len, uint64_t *id)
{
	h->last_id++;
	h->st.sent++;
	h->st.bytes_sent += len;
	idset_remove_upto(&h->resendable, h->last_id);
	if (id != NULL)
		*id = h->last_id;
}

/* Writes the frame start_send made, blocking until it is all out. */
static int finish_send(struct lds *h)
{
	/* Most messages fit the socket at once: poll only when they do not. */
	int rc = write_out(h);

	if (rc == 0)
		rc = ldsi_wait_for(h, ldsi_out_idle, 0, DEADLINE_NEVER);
	if (rc < 0)
		out_clear(&h->out); /* dead handle: forget buf, which the caller may free */
	return rc;
}

int lds_send(struct lds *h, const char *dst, const void *buf, size_t len, uint64_t *id)
{
	int rc;

	if (h->zc.reserved)
		return -EBUSY;
	/* A message left by lds_send_nb goes first: ids leave in order. */
	rc = ldsi_wait_for(h, ldsi_out_idle, 0, DEADLINE_NEVER);
	if (rc == 0)
		rc = start_send(h, dst, buf, len, h->last_id + 1);
	if (rc == 0)
		rc = finish_send(h);
	if (rc < 0)
		return rc;
	ldsi_accept_send(h, len, id);
	return 0;
}

int lds_resend(struct lds *h, const char *dst, const void *buf, size_t len, uint64_t id)
{
	int rc;

	if (h->zc.reserved)
		return -EBUSY;
	if (!idset_contains(&h->resendable, id))
		return -EINVAL;
	rc = ldsi_wait_for(h, ldsi_out_idle, 0, DEADLINE_NEVER);
	if (rc == 0)
		rc = start_send(h, dst, buf, len, id);
	if (rc < 0)
		return rc;
	/* In doubt again from here on: its new outcome may come while it is
	 * being written. */
	if (idset_remove(&h->settled, id) < 0) {
		out_clear(&h->out);
		return ldsi_fail(h, -ENOMEM);
	}
	idset_remove_upto(&h->resendable, id);
	h->st.lost--;
	h->st.resent++;
	h->st.bytes_sent += len;
	return finish_send(h);
}

/* The rest of a partly written message must outlive the caller's buffer. */
static int out_keep(struct lds *h)
{
	struct outmsg *o = &h->out;
	size_t rest = o->payload_len - o->payload_off;
	uint8_t *copy;

	if (!o->active || rest == 0)
		return 0;
	copy = malloc(rest);
	if (copy == NULL)
		return ldsi_wait_for(h, ldsi_out_idle, 0, DEADLINE_NEVER); /* finish it while buf is valid */
	memcpy(copy, o->payload + o->payload_off, rest);
	o->owned = copy;
	o->payload = copy;
	o->payload_len = rest;
	o->payload_off = 0;
	return 0;
}

int lds_send_nb(struct lds *h, const char *dst, const void *buf, size_t len, uint64_t *id)
{
	int rc;

	if (h->zc.reserved)
		return -EBUSY;
	rc = write_out(h);
	if (rc < 0)
		return rc;
	if (h->out.active)
		return -EAGAIN;
	rc = start_send(h, dst, buf, len, h->last_id + 1);
	if (rc < 0)
		return rc;
	rc = write_out(h);
	if (rc == 0 && h->out.active && h->out.hdr_off == 0) {
		/* Not a byte taken: refuse it, the id stays unused. */
		out_clear(&h->out);
		return -EAGAIN;
	}
	if (rc == 0)
		rc = out_keep(h);
	if (rc < 0) {
		out_clear(&h->out);
		return rc;
	}
	ldsi_accept_send(h, len, id);
	return 0;
}

int lds_flush(struct lds *h, int timeout_ms)
{
	if (h->zc.reserved)
		return -EBUSY;
	return ldsi_timed(ldsi_wait_for(h, ldsi_out_idle, 0, deadline_after(timeout_ms)), timeout_ms);
}

/* The application took a message of len bytes that came on this
 * connection: TAKEN may be due. */
void ldsi_note_taken(struct lds *h, size_t len)
{
	h->tk.queued--;
	h->tk.bytes += len;
	ldsi_taken_check(h);
	if (h->tk.due && !h->err)
		write_out(h);
}

/* Hands the first queued message to the application; it counts as taken
 * once the caller says so (ldsi_rx_taken). */
struct rxmsg *ldsi_rx_take(struct lds *h, struct lds_msg *msg)
{
	struct rxmsg *r = h->rx_head;

	h->rx_head = r->next;
	if (h->rx_head == NULL)
		h->rx_tail = NULL;
	*msg = r->m;
	h->st.received++;
	h->st.bytes_received += r->m.len;
	return r;
}

void ldsi_rx_taken(struct lds *h, const struct rxmsg *r)
{
	if (r->conn == h->tk.conn)
		ldsi_note_taken(h, r->m.len);
}

int lds_recv(struct lds *h, struct lds_msg *msg, int timeout_ms)
{
	int rc;

	if (h->rx_cur)
		ldsi_rx_recycle(h, h->rx_cur);
	h->rx_cur = NULL;
	rc = ldsi_timed(ldsi_wait_for(h, has_msg, 0, deadline_after(timeout_ms)), timeout_ms);
	if (rc < 0)
		return rc;
	h->rx_cur = ldsi_rx_take(h, msg);
	ldsi_rx_taken(h, h->rx_cur);
	return 0;
}

int lds_process(struct lds *h)
{
	int rc;

	if (h->err)
		return h->err;
	rc = pump(h, 0);
	return rc == -ETIMEDOUT ? 0 : rc;
}

/* The application took one more LOST naming peer: tell the daemon, which
 * holds back (reports lost) newer messages to that peer until the
 * application has taken every loss it reported, so that the application's
 * resends cannot be overtaken. */
static void queue_resume(struct lds *h, const char *peer)
{
	struct resume_count *t = NULL;

	for (size_t i = 0; i < h->ntaken && t == NULL; i++)
		if (strcmp(h->taken[i].peer, peer) == 0)
			t = &h->taken[i];
	if (t == NULL) {
		t = realloc(h->taken, (h->ntaken + 1) * sizeof(*t));
		if (t == NULL) {
			ldsi_fail(h, -ENOMEM);
			return;
		}
		h->taken = t;
		t = &h->taken[h->ntaken++];
		memcpy(t->peer, peer, sizeof(t->peer));
		t->taken = 0;
	}
	t->taken++;
	t->due = 1;
}

int lds_next_event(struct lds *h, struct lds_event *ev)
{
	int stale = h->ev_stale > 0;

	if (h->ev_n == 0)
		return 0;
	*ev = h->ev[h->ev_head];
	h->ev_head = (h->ev_head + 1) % h->ev_cap;
	h->ev_n--;
	if (stale)
		h->ev_stale--;
	/* Losses of the connection itself (empty peer) were resendable from
	 * lds_reconnect on, and concern no fence. */
	if (ev->type != LDS_EV_LOST || ev->peer[0] == '\0')
		return 1;
	if (idset_add(&h->resendable, ev->first, ev->last) < 0)
		ldsi_fail(h, -ENOMEM);
	/* Losses reported on an earlier connection concern no fence of this
	 * one. */
	if (!h->err && !stale) {
		queue_resume(h, ev->peer);
		write_out(h);
	}
	return 1;
}

/* Forgets the connection to the daemon and whatever was half read or
 * written on it. */
static void drop_connection(struct lds *h)
{
	if (h->fd >= 0)
		(void)close(h->fd); /* given up on: how it closes changes nothing */
	h->fd = -1;
	/* A message held in place stays readable until released. */
	if (h->zc.held == ZC_RING && h->zc.old == NULL)
		h->zc.old = h->shm;
	else
		shmclient_free(h->shm);
	h->shm = NULL;
	h->shm_agreed = 0;
	shmfds_close(&h->fds);
	h->zc.reserved = ZC_NONE;
	h->zc.need_in = h->zc.need_out = 0;
	h->err = 0;
	h->welcomed = 0;
	h->in_len = 0;
	free(h->fill);
	h->fill = NULL;
	h->fill_have = 0;
	out_clear(&h->out);
	h->ntaken = 0;
	h->ev_stale = h->ev_n;
	/* The daemon gives what this connection did not report taken to our
	 * next one (copies of what we have are then dropped). */
	h->tk.conn++;
	h->tk.on = 0;
	h->tk.delivers = h->tk.queued = h->tk.sent = 0;
	h->tk.bytes = 0;
	h->tk.due = 0;
}

/* The messages whose outcome the old connection did not report: the daemon
 * we reach next knows nothing of them, and they may or may not have
 * arrived.  They are reported lost, and may be resent at once: no daemon
 * holds newer messages back until the application knows, so it must
 * resend them before it sends anything new (which makes them unsendable,
 * see lds_resend).  Receivers drop copies of what they already have. */
static int report_in_doubt(struct lds *h)
{
	uint64_t first, last, from = 1;

	while (idset_gap(&h->settled, from, h->last_id, &first, &last)) {
		struct lds_event *ev = ev_push(h);

		if (ev == NULL || idset_add(&h->settled, first, last) < 0 ||
		    idset_add(&h->resendable, first, last) < 0)
			return -ENOMEM;
		ev->type = LDS_EV_LOST;
		ev->first = first;
		ev->last = last;
		snprintf(ev->text, sizeof(ev->text), "connection to the local ldsd lost: outcome unknown");
		h->st.lost += last - first + 1;
		from = last + 1;
	}
	return 0;
}

/* Errors that mean the gateway is not (yet) there, as while it restarts:
 * its socket is missing or refuses, or it closed us during the hello.
 * EADDRINUSE: it may not have seen our old connection close yet. */
static int gateway_not_back(int rc)
{
	return rc == -ENOENT || rc == -ECONNREFUSED || rc == -EAGAIN || rc == -ECONNRESET || rc == -EPIPE ||
	       rc == -EADDRINUSE;
}

int lds_reconnect(struct lds *h, int timeout_ms)
{
	int64_t deadline = deadline_after(timeout_ms);
	int backoff = RECONNECT_FIRST_MS;
	int rc;

	if (h->zc.reserved)
		return -EBUSY;
	drop_connection(h);
	rc = report_in_doubt(h);
	while (rc == 0) {
		int left;

		rc = hello(h, deadline);
		if (!gateway_not_back(rc) || (left = deadline_poll_ms(deadline)) == 0)
			break;
		drop_connection(h);
		if (left > 0 && left < backoff)
			backoff = left;
		rc = poll(NULL, 0, rc == -EADDRINUSE ? NAME_RETRY_MS : backoff) < 0 && errno != EINTR ? -errno : 0;
		backoff = backoff * 2 < RECONNECT_MAX_MS ? backoff * 2 : RECONNECT_MAX_MS;
	}
	if (rc < 0) {
		/* Not connected: every call fails until a reconnect works. */
		ldsi_fail(h, -ECONNRESET);
		return ldsi_timed(rc, timeout_ms);
	}
	return 0;
}

int lds_set_ack_events(struct lds *h, int on)
{
	h->ack_events = on != 0;
	return 0;
}

uint64_t lds_settled_upto(const struct lds *h)
{
	return idset_prefix(&h->settled);
}

int lds_wait_settled(struct lds *h, uint64_t id, int timeout_ms)
{
	if (id > h->last_id)
		return -EINVAL;
	return ldsi_timed(ldsi_wait_for(h, is_settled, id, deadline_after(timeout_ms)), timeout_ms);
}

void lds_get_stats(const struct lds *h, struct lds_stats *st)
{
	*st = h->st;
}

static int peer_answered(const struct lds *h, uint64_t unused)
{
	(void)unused;
	return h->pq.answered;
}

int lds_peer(struct lds *h, const char *cluster, struct lds_peer *p, int timeout_ms)
{
	int rc;

	if (cluster == NULL || !wire_name_valid(cluster))
		return -EINVAL;
	if (h->err)
		return h->err;
	snprintf(h->pq.name, sizeof(h->pq.name), "%s", cluster);
	h->pq.due = 1;
	h->pq.answered = 0;
	rc = ldsi_timed(ldsi_wait_for(h, peer_answered, 0, deadline_after(timeout_ms)), timeout_ms);
	if (rc == 0)
		*p = h->pq.ans;
	return rc;
}

const char *lds_strerror(int err)
{
	static const struct {
		int err;
		const char *text;
	} texts[] = {
		{ EAGAIN, "would block: the gateway's send memory is full or no message is waiting" },
		{ ETIMEDOUT, "timed out" },
		{ EMSGSIZE, "message larger than the gateway accepts (see lds_max_msg)" },
		{ EHOSTUNREACH, "no gateway link to the destination's cluster" },
		{ ECONNRESET, "connection to the local ldsd lost; call lds_reconnect (it waits for a restarting gateway "
			       "and keeps the record of what was received; a new handle would not)" },
		{ EADDRINUSE, "endpoint name already taken by another client" },
		{ EACCES, "Permission denied: the socket, or the endpoint name (another user's, or the gateway's ldsd.*)" },
		{ EUSERS, "the gateway serves as many clients as it may, or as many of this user" },
		{ EPROTO, "protocol error in the conversation with ldsd" },
		{ EPROTONOSUPPORT, "ldsd speaks another client protocol version" },
		{ EINVAL, "invalid argument (endpoint names are [A-Za-z0-9._-], \"cluster/name\")" },
		{ ENOKEY, "a TCP connection to ldsd needs its key: set LDS_KEY_FILE to a file (mode 0600) holding "
			  "the key of the gateway's clients.tcp_key_file" },
		{ EKEYREJECTED, "ldsd refused the key in LDS_KEY_FILE (not the one of its clients.tcp_key_file), "
				"or could not prove it holds it" },
	};
	int e = err < 0 ? -err : err;

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		if (texts[i].err == e)
			return texts[i].text;
	return strerror(e);
}
