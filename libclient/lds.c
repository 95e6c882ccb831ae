/*
 * lds.c - liblds, the modern client API; see lds.h.
 *
 * A handle is one nonblocking socket to ldsd (or, once set up over it,
 * shared-memory rings: shmclient.h) plus three queues: the bytes of the
 * frame being written (at most one message, lds_send_nb), the bytes read
 * but not yet a whole frame, and what those frames produced (received
 * messages, events).  Moving them is ldsio.c's; this file opens, closes
 * and reconnects the handle and turns each call into frames and waits.
 * The zero-copy calls are ldszc.c's.
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

#define CLOSE_FLUSH_MS 10000
#define NAME_RETRY_MS  10            /* our name still held by the old connection */
#define RECONNECT_FIRST_MS 50        /* lds_reconnect's wait for a restarting */
#define RECONNECT_MAX_MS 1000        /* gateway: doubling up to this */
#define DEDUP_SOURCES  16384         /* senders a handle remembers, see dedup.h */

/* ---- the API ---------------------------------------------------------- */

/* Wait conditions (ldsi_wait_for). */
static int is_welcomed(const struct lds *h, uint64_t arg)
{
	(void)arg;
	return h->welcomed && (!h->shm_agreed || h->shm != NULL);
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
	ldsi_out_clear(&h->out);
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
	struct cp_msg m = { .type = CP_HELLO, .version = CP_VERSION, .flags = CP_F_TAKEN | CP_F_LINKBYTES,
			    .incarnation = h->incarnation };
	int rc = daemon_connect(h->path, deadline);

	/* Rings are for a process on the gateway's host: not over TCP or RDMA. */
	if (strncmp(h->path, "tcp:", 4) != 0 && strncmp(h->path, LDS_RDMA_PREFIX, strlen(LDS_RDMA_PREFIX)) != 0 &&
	    shmclient_wanted())
		m.flags |= CP_F_SHM;
	if (rc < 0)
		return rc;
	h->fd = rc;
	memcpy(m.name, h->asked, sizeof(m.name));
	rc = ldsi_out_set(h, &m, NULL, 0);
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
	h->in = malloc(LDSI_IN_SIZE);
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
		rc = ldsi_out_set(h, &bye, NULL, 0);
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
	return ldsi_out_set(h, &m, buf, len);
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
	int rc = ldsi_write_out(h);

	if (rc == 0)
		rc = ldsi_wait_for(h, ldsi_out_idle, 0, DEADLINE_NEVER);
	if (rc < 0)
		ldsi_out_clear(&h->out); /* dead handle: forget buf, which the caller may free */
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
		ldsi_out_clear(&h->out);
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
	rc = ldsi_write_out(h);
	if (rc < 0)
		return rc;
	if (h->out.active)
		return -EAGAIN;
	rc = start_send(h, dst, buf, len, h->last_id + 1);
	if (rc < 0)
		return rc;
	rc = ldsi_write_out(h);
	if (rc == 0 && h->out.active && h->out.hdr_off == 0) {
		/* Not a byte taken: refuse it, the id stays unused. */
		ldsi_out_clear(&h->out);
		return -EAGAIN;
	}
	if (rc == 0)
		rc = out_keep(h);
	if (rc < 0) {
		ldsi_out_clear(&h->out);
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
		ldsi_write_out(h);
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
	rc = ldsi_pump(h, 0);
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
		ldsi_write_out(h);
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
	ldsi_out_clear(&h->out);
	h->ntaken = 0;
	h->ev_stale = h->ev_n;
	/* The daemon gives what this connection did not report taken to our
	 * next one (copies of what we have are then dropped). */
	h->tk.conn++;
	h->tk.on = 0;
	h->tk.delivers = h->tk.queued = h->tk.sent = 0;
	h->tk.bytes = 0;
	h->tk.due = 0;
	h->pq.waiting = 0;
	h->pq.bytes_on = 0;
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
		struct lds_event *ev = ldsi_ev_push(h);

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

int lds_link_bytes(struct lds *h, const char *cluster, struct lds_link_bytes *b)
{
	int rc = 0;

	if (cluster == NULL || !wire_name_valid(cluster))
		return -EINVAL;
	if (h->err)
		return h->err;
	if (!h->pq.bytes_on)
		return -ENOTSUP;
	if (strcmp(h->pq.name, cluster) == 0 && h->pq.answered && h->pq.ans.state == LDS_PEER_UNKNOWN)
		return -ENOENT;
	if (strcmp(h->pq.name, cluster) == 0 && h->pq.bytes_fresh) {
		*b = h->pq.bytes;
		h->pq.bytes_fresh = 0;
		rc = 1;
	}
	if (!h->pq.due && !h->pq.waiting) {
		snprintf(h->pq.name, sizeof(h->pq.name), "%s", cluster);
		h->pq.due = 1;
		h->pq.answered = 0;
		rc = ldsi_write_out(h) < 0 ? h->err : rc;
	}
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
		{ ENODEV, "no RDMA device found (ibv_get_device_list returned none, or liblds was built without "
			  "rdma-core); use the unix socket or tcp:HOST:PORT" },
		{ EKEYREJECTED, "ldsd refused the key in LDS_KEY_FILE (not the one of its clients.tcp_key_file), "
				"or could not prove it holds it" },
	};
	int e = err < 0 ? -err : err;

	for (size_t i = 0; i < sizeof(texts) / sizeof(texts[0]); i++)
		if (texts[i].err == e)
			return texts[i].text;
	return strerror(e);
}
