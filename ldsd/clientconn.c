/*
 * clientconn.c - the client server's connections: accepting them within
 * the limits, reading a client's bytes (socket or rings) into frames,
 * checking each frame's size before any buffer grows for it, pausing a
 * client that waits for memory, and closing it.  What a decoded frame does
 * is clientreq.c's, reached only through cs->handlers (client.h): nothing
 * here calls a request's code by name.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdarg.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "client.h"
#include "clock.h"
#include "fdreserve.h"
#include "log.h"

#define CS_READS_PER_EVENT 8
#define CS_SOCKET_BUFFER (4 << 20)    /* SO_SNDBUF of client connections */
#define CS_IN_MIN (64u << 10)         /* input buffer: first size, and growth step */
#define CS_IN_KEEP (1u << 20)         /* an empty input buffer larger than this is freed */
#define CS_HEAD_READ 512u             /* a large frame's start read from a ring: any SEND's id and name */

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

/* Hands decoded frame m to its handler: a HELLO first, and only once.
 * Returns what the handler does (client.h), or -1: close the client. */
static int client_dispatch(struct client *c, const struct cp_msg *m)
{
	client_frame_fn *fn = c->cs->handlers->frame[m->type];

	if (c->ep == NULL && m->type != CP_HELLO) {
		log_warnx("client %s: sent %s before HELLO; closing it", c->peer, cp_type_names[m->type]);
		return -1;
	}
	if (m->type == CP_HELLO && c->ep != NULL)
		return -1;
	if (fn == NULL) {
		log_warnx("client %s: unexpected %s frame; closing it", c->peer, cp_type_names[m->type]);
		return -1;
	}
	return fn(c, m);
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
		int r;

		if (client_frame_check(c, c->in + off, &h) < 0) {
			ret = -1;
			break;
		}
		if (c->in_len - off < CP_HDR_LEN + h.len) {
			r = c->cs->handlers->head(c, &h, c->in + off + CP_HDR_LEN, c->in_len - off - CP_HDR_LEN);
			if (r == 1) {
				off = c->in_len;
			} else if (r == 2) {
				c->await_rest = 1;
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
		r = client_dispatch(c, &m);
		if (r == -ENOSPC) {
			client_pause(c);
			break;
		}
		if (r < 0) {
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
		uint8_t peek[CP_HDR_LEN];
		struct cp_hdr h0;
		ssize_t n;

		if (c->await_rest) {
			c->await_rest = 0;
			if (client_process(c) < 0) {
				client_close(c, "protocol error or goodbye");
				return;
			}
			if (c->await_rest)
				return;
		}
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
		/* From a ring, only a large frame's start: its handler may take
		 * the rest from the ring itself (head), uncopied. */
		if (c->in_len == 0 && c->shm && clientshm_peek(c, peek, sizeof(peek)) == 1 &&
		    cp_hdr_parse(peek, &h0) == 0 && h0.len > CS_IN_MIN)
			need = CP_HDR_LEN + CS_HEAD_READ;
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

void client_close(struct client *c, const char *why)
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
	clientplace_free(c);
	cs->handlers->closed(c);
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

/* Starts serving connection cfd (kind NULL: the unix socket; "tcp" or
 * "rdma": it proves the key first) within the limits; NULL if refused. */
static struct client *client_start(struct clientsrv *cs, int cfd, const char *kind)
{
	struct client *c = client_admit(cs, cfd, kind != NULL);

	if (c == NULL)
		return NULL;
	/* Deliveries go out in large writes, the client wakes less often;
	 * the kernel caps the size at net.core.wmem_max, and failing
	 * only costs speed. */
	(void)setsockopt(cfd, SOL_SOCKET, SO_SNDBUF, &(int){ CS_SOCKET_BUFFER }, sizeof(int));
	c->cs = cs;
	c->fd = cfd;
	c->id = ++cs->next_id;
	c->accepted_ns = clock_now_ns();
	snprintf(c->peer, sizeof(c->peer), "#%" PRIu64 "%s%s%s", c->id, kind ? " (" : "", kind ? kind : "",
		 kind ? ")" : "");
	if (evloop_watch(cs->d->ev, cfd, EV_READ, client_event, c) < 0) {
		close(cfd);
		free(c);
		return NULL;
	}
	c->next = cs->clients;
	cs->clients = c;
	cs->nclients++;
	return c;
}

/* A TCP or RDMA client's first frame must be its key proof. */
static void client_challenge(struct client *c)
{
	if (clientkey_challenge(c) < 0) {
		client_close(c, "cannot send it the key challenge");
		return;
	}
	client_write(c);
}

void clientconn_accept(int fd, unsigned events, void *arg)
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
		c = client_start(cs, cfd, fd == cs->tcp_fd ? "tcp" : NULL);
		if (c == NULL || !c->tcp)
			continue;
		clientkey_from(c, (const struct sockaddr *)&ss, sl);
		client_challenge(c);
	}
}

void clientconn_adopt(struct clientsrv *cs, int fd, const char *kind, const char *from)
{
	struct client *c = client_start(cs, fd, kind);

	if (c == NULL)
		return;
	snprintf(c->from, sizeof(c->from), "%s", from);
	client_challenge(c);
}

void clientconn_expire(struct clientsrv *cs, uint64_t now_ns)
{
	uint64_t limit = (uint64_t)(cs->d->cfg->clients.hello_timeout * 1e9);

	for (struct client *c = cs->clients; c; c = c->next) {
		if (c->shm != NULL) {
			clientshm_tick(c);
			clientplace_tick(c);
		}
		if (c->ep == NULL && !c->doomed && now_ns - c->accepted_ns >= limit) {
			log_warnx("client %s (uid %d): no HELLO within hello_timeout = %g s; closing it", c->peer,
				  (int)c->uid, cs->d->cfg->clients.hello_timeout);
			client_doom(c);
		}
	}
}

void clientconn_resume(struct clientsrv *cs)
{
	struct client *c, *next;

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
