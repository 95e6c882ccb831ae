/*
 * ldsio.c - a liblds handle's connection to its ldsd: frames from the
 * daemon read (from the socket or its shared-memory ring) and turned into
 * received messages and events, the one frame being written, and the
 * waiting both ways at once (ldsi_wait_for): a client blocked writing to a
 * daemon that is itself blocked writing to the client would otherwise
 * deadlock.  lds.c's API calls down into it; nothing here calls the API.
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

#define READ_BURST     16            /* reads per round, so sends keep moving */
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

struct lds_event *ldsi_ev_push(struct lds *h)
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
	h->pq.bytes_on = (m->flags & CP_F_LINKBYTES) != 0;
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

	/* ldsd reads it when it needs the room the taken ones hold in its
	 * ring, before the TAKEN frame arrives. */
	if (h->tk.on && h->shm)
		shmring_set_taken(&h->shm->map.r[SHMRING_D2C], taken);
	if (h->tk.on && taken > h->tk.sent &&
	    (h->tk.queued == 0 || taken - h->tk.sent >= TAKEN_BATCH_MSGS || h->tk.bytes >= TAKEN_BATCH_BYTES ||
	     clock_now_ns() - h->tk.sent_ns >= TAKEN_BATCH_NS))
		h->tk.due = 1;
}

int ldsi_rx_admit(struct lds *h, const char *src, uint64_t incarnation, uint64_t id)
{
	int rc = dedup_admit(&h->seen, src, incarnation, id);

	h->tk.delivers++;
	if (rc < 0)
		return ldsi_fail(h, -ENOMEM);
	if (rc == 0) {
		h->st.duplicates++;
		ldsi_taken_check(h);
		return 0;
	}
	h->tk.queued++;
	return 1;
}

/* A message arrived whole: queued unless it is a copy. */
static int rx_complete(struct lds *h, struct rxmsg *r)
{
	int rc = ldsi_rx_admit(h, r->m.src, r->incarnation, r->m.id);

	if (rc <= 0) {
		ldsi_rx_recycle(h, r);
		return rc;
	}
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
	ev = ldsi_ev_push(h);
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
		h->pq.waiting = 0;
		if (strcmp(m.name, h->pq.name) == 0 && !h->pq.due) {
			h->pq.ans.state = (enum lds_peer_state)m.state;
			h->pq.ans.down_s = m.seconds;
			snprintf(h->pq.ans.why, sizeof(h->pq.ans.why), "%s", m.text);
			h->pq.answered = 1;
			h->pq.bytes_fresh = m.has_bytes;
			h->pq.bytes = (struct lds_link_bytes){ m.bytes_out, m.bytes_in };
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
			rc = need > LDSI_IN_SIZE ? fill_start(h, &hdr, off) : 0;
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
		size_t room = f ? f->m.len - h->fill_have : LDSI_IN_SIZE - h->in_len;
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

void ldsi_out_clear(struct outmsg *o)
{
	free(o->owned);
	memset(o, 0, sizeof(*o));
}

int ldsi_out_set(struct lds *h, const struct cp_msg *m, const void *payload, size_t len)
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
		ldsi_out_clear(o);
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
	if (ldsi_out_set(h, &m, NULL, 0) < 0)
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
	if (ldsi_out_set(h, &m, NULL, 0) < 0)
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
	if (ldsi_out_set(h, &m, NULL, 0) < 0)
		return 0;
	h->pq.due = 0;
	h->pq.waiting = 1;
	return 1;
}

/* Writes as much of the pending frame as the socket takes now; the payload
 * goes straight from its buffer, never copied. */
int ldsi_write_out(struct lds *h)
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
		rc = ldsi_write_out(h);
	/* The daemon's last frames are read before its end counts. */
	if (rc == 0 && h->shm != NULL && (p[0].revents & (POLLIN | POLLHUP | POLLERR)) &&
	    shmring_avail(&h->shm->map.r[SHMRING_D2C], &left) == 0 && left == 0)
		rc = socket_gone(h);
	return rc;
}

/* One round: waits until the socket is ready or the deadline passes, then
 * reads and writes what it can.  Returns 0, -ETIMEDOUT if nothing became
 * ready, or a negative errno. */
int ldsi_pump(struct lds *h, int64_t deadline)
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
		return ldsi_write_out(h);
	return 0;
}

int ldsi_out_idle(const struct lds *h, uint64_t arg)
{
	(void)arg;
	return !h->out.active && !h->tk.due && resume_due(h) == NULL && !h->pq.due;
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
		rc = ldsi_pump(h, deadline);
		if (rc < 0 && h->err == 0)
			return rc;
	}
}
