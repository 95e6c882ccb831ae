/* mw_wan.c - runtime messages over liblds with an outgoing queue. */
#include <errno.h>
#include <poll.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "launcher/mw.h"
#include "launcher/mw_ring.h"
#include "launcher/mw_wan.h"

struct queued {
	struct queued *next;
	size_t len;
	unsigned char data[];      /* header and payload */
};

/* A message ldsd took, until the remote gateway acknowledges it. */
struct sent {
	uint64_t id;
	size_t len;
};

struct mw_wan {
	struct lds *h;
	char peer[LDS_NAME_MAX];
	struct queued *head, *tail;
	size_t nqueued;
	struct sent *sent;         /* a ring, oldest first */
	size_t shead, sn, scap;
	size_t inflight;           /* bytes of the remembered messages */
	size_t inflight_max;       /* 0: no limit but ldsd's */
	uint64_t bytes_out, bytes_in;
	/* the link's counters: the gateway's last answer, and their growth
	 * since the first (a gateway that restarted counts from 0 again) */
	struct lds_link_bytes link_raw;
	bool link_seen;
	uint64_t link_out, link_in;
	char err[512];
};

static int failed(struct mw_wan *w, int rc, const char *what)
{
	snprintf(w->err, sizeof(w->err), "%s: %s", what, lds_strerror(rc));
	return rc;
}

struct mw_wan *mw_wan_open(const char *socket, const char *name, int timeout_ms, char *err, size_t errlen)
{
	struct mw_wan *w = calloc(1, sizeof(*w));
	int rc = -ENOMEM;

	if (w != NULL && (w->h = lds_open(socket, name, timeout_ms, &rc)) != NULL)
		return w;
	snprintf(err, errlen, "cannot open endpoint %s at the gateway %s: %s", name,
		 lds_socket_path(socket),
		 lds_strerror(rc));
	free(w);
	return NULL;
}

void mw_wan_close(struct mw_wan *w)
{
	struct queued *q;

	if (w == NULL)
		return;
	while ((q = w->head) != NULL) {
		w->head = q->next;
		free(q);
	}
	lds_close(w->h);
	free(w->sent);
	free(w);
}

const char *mw_wan_cluster(const struct mw_wan *w)
{
	return lds_cluster(w->h);
}

const char *mw_wan_error(const struct mw_wan *w)
{
	return w->err;
}

void mw_wan_set_peer(struct mw_wan *w, const char *dst)
{
	snprintf(w->peer, sizeof(w->peer), "%s", dst);
}

const char *mw_wan_peer(const struct mw_wan *w)
{
	return w->peer;
}

size_t mw_wan_queued(const struct mw_wan *w)
{
	return w->nqueued;
}

/* Counts the remembered messages the remote gateway has acknowledged
 * and forgets them.  The pump does it too, so that the ring stays as
 * short as the messages in flight on a side that never asks for the
 * count (the remote CM). */
static void settle(struct mw_wan *w)
{
	uint64_t upto = lds_settled_upto(w->h);

	while (w->sn > 0 && w->sent[w->shead].id <= upto) {
		w->bytes_out += w->sent[w->shead].len;
		w->inflight -= w->sent[w->shead].len;
		w->shead = (w->shead + 1) % w->scap;
		w->sn--;
	}
}

uint64_t mw_wan_bytes_out(struct mw_wan *w)
{
	settle(w);
	return w->bytes_out;
}

/* Remembers a message ldsd took; 0 or -ENOMEM. */
static int remember(struct mw_wan *w, uint64_t id, size_t len)
{
	void *ring = w->sent;

	if (mw_ring_make_room(&ring, &w->scap, &w->shead, w->sn, sizeof(*w->sent)) < 0)
		return -ENOMEM;
	w->sent = ring;
	w->sent[(w->shead + w->sn++) % w->scap] = (struct sent){ id, len };
	w->inflight += len;
	return 0;
}

uint64_t mw_wan_bytes_in(const struct mw_wan *w)
{
	return w->bytes_in;
}

static uint64_t growth(uint64_t now, uint64_t before)
{
	return now >= before ? now - before : now;
}

void mw_wan_link_bytes(struct mw_wan *w, uint64_t *out, uint64_t *in)
{
	char cluster[LDS_NAME_MAX];
	struct lds_link_bytes b;

	int rc;

	snprintf(cluster, sizeof(cluster), "%.*s", (int)strcspn(w->peer, "/"), w->peer);
	rc = lds_link_bytes(w->h, cluster, &b);
	/* The first answer is the base: waited for (a round trip to the
	 * local gateway, at most 1 s), so that counting starts at the call. */
	for (int i = 0; i < 100 && !w->link_seen && rc == 0 && mw_wan_wait(w, 0.01) == 0; i++)
		rc = lds_link_bytes(w->h, cluster, &b);
	if (rc == 1) {
		if (w->link_seen) {
			w->link_out += growth(b.sent, w->link_raw.sent);
			w->link_in += growth(b.received, w->link_raw.received);
		}
		w->link_raw = b;
		w->link_seen = true;
	}
	*out = w->link_out;
	*in = w->link_in;
}

int mw_wan_pump(struct mw_wan *w)
{
	struct queued *q;
	int n = 0, rc;

	settle(w);
	while ((q = w->head) != NULL) {
		uint64_t id;

		/* Past the limit only the first message in flight goes. */
		if (w->inflight_max > 0 && w->sn > 0 && w->inflight + q->len > w->inflight_max)
			break;
		rc = lds_send_nb(w->h, w->peer, q->data, q->len, &id);
		if (rc == -EAGAIN)
			break;
		if (rc < 0)
			return failed(w, rc, w->peer);
		if (remember(w, id, q->len) < 0)
			return failed(w, -ENOMEM, "remembering a message sent");
		w->head = q->next;
		if (w->head == NULL)
			w->tail = NULL;
		free(q);
		w->nqueued--;
		n++;
	}
	settle(w);
	return n;
}

void mw_wan_set_inflight_max(struct mw_wan *w, size_t bytes)
{
	w->inflight_max = bytes;
}

size_t mw_wan_inflight(struct mw_wan *w)
{
	settle(w);
	return w->inflight;
}

size_t mw_wan_drop_queued(struct mw_wan *w, uint8_t type, uint64_t *bytes)
{
	struct queued **pp = &w->head, *q;
	size_t n = 0;

	*bytes = 0;
	w->tail = NULL;
	while ((q = *pp) != NULL) {
		struct mw_hdr h;

		if (mw_hdr_decode(q->data, q->len, &h) == 0 && h.type == type) {
			*pp = q->next;
			*bytes += q->len;
			free(q);
			w->nqueued--;
			n++;
			continue;
		}
		w->tail = q;
		pp = &q->next;
	}
	return n;
}

int mw_wan_send(struct mw_wan *w, const struct mw_hdr *h, const void *data)
{
	size_t len = MW_HDR_LEN + (size_t)h->len;
	struct queued *q;
	int rc;

	if (len > lds_max_msg(w->h)) {
		snprintf(w->err, sizeof(w->err), "%s message of %zu bytes to %s: the gateway takes at most %zu; "
			 "use a smaller grain", mw_msg_names[h->type], len, w->peer, lds_max_msg(w->h));
		return -EMSGSIZE;
	}
	q = malloc(sizeof(*q) + len);
	if (q == NULL)
		return failed(w, -ENOMEM, "queueing a message");
	q->next = NULL;
	q->len = len;
	mw_hdr_encode(q->data, h);
	if (h->len > 0)
		memcpy(q->data + MW_HDR_LEN, data, h->len);
	if (w->tail != NULL)
		w->tail->next = q;
	else
		w->head = q;
	w->tail = q;
	w->nqueued++;
	rc = mw_wan_pump(w);
	return rc < 0 ? rc : 0;
}

/* LOST or ERROR events mean messages that will never arrive: the caller
 * decides whether the run can go on without them. */
static int check_events(struct mw_wan *w)
{
	struct lds_event ev;

	if (lds_next_event(w->h, &ev) == 1) {
		snprintf(w->err, sizeof(w->err), "%s: messages %llu..%llu %s: %s", w->peer,
			 (unsigned long long)ev.first, (unsigned long long)ev.last,
			 ev.type == LDS_EV_LOST ? "were lost" : "failed", ev.text);
		return ev.type == LDS_EV_LOST ? -ECONNRESET : -EPIPE;
	}
	return 0;
}

int mw_wan_poll(struct mw_wan *w, struct mw_msg *m, char src[LDS_NAME_MAX])
{
	struct lds_msg msg;
	int rc = lds_recv(w->h, &msg, 0);

	if (rc == -EAGAIN)
		return check_events(w);
	if (rc < 0)
		return failed(w, rc, "receiving from the gateway");
	if (mw_hdr_decode(msg.data, msg.len, &m->h) < 0) {
		snprintf(w->err, sizeof(w->err), "malformed message of %zu bytes from %s", msg.len, msg.src);
		return -EBADMSG;
	}
	w->bytes_in += msg.len;
	m->peer = 0;
	m->data = (const unsigned char *)msg.data + MW_HDR_LEN;
	snprintf(src, LDS_NAME_MAX, "%s", msg.src);
	return 1;
}

int mw_wan_wait(struct mw_wan *w, double seconds)
{
	/* Only readable: a queue ldsd refuses is retried by the caller's
	 * next pump, and a writable socket would end every wait at once. */
	struct pollfd p = { .fd = lds_fd(w->h), .events = POLLIN };
	int rc = poll(&p, 1, (int)(seconds * 1000));

	if (rc < 0 && errno != EINTR)
		return failed(w, -errno, "waiting for the gateway");
	if (rc > 0 && (rc = lds_process(w->h)) < 0)
		return failed(w, rc, "reading from the gateway");
	return 0;
}

int mw_wan_flush(struct mw_wan *w, int timeout_ms)
{
	struct timespec t0, t;
	int rc;

	clock_gettime(CLOCK_MONOTONIC, &t0);
	for (;;) {
		if ((rc = mw_wan_pump(w)) < 0)
			return rc;
		if (w->head == NULL)
			break;
		clock_gettime(CLOCK_MONOTONIC, &t);
		if ((t.tv_sec - t0.tv_sec) * 1000 + (t.tv_nsec - t0.tv_nsec) / 1000000 >= timeout_ms)
			return failed(w, -ETIMEDOUT, w->peer);
		if ((rc = mw_wan_wait(w, 0.05)) < 0)
			return rc;
	}
	rc = lds_flush(w->h, timeout_ms);
	return rc < 0 ? failed(w, rc, w->peer) : 0;
}

const char *mw_wan_describe_peer(struct mw_wan *w, const char *cluster, char *buf, size_t len)
{
	struct lds_peer p;
	int rc = lds_peer(w->h, cluster, &p, 2000);

	if (rc < 0)
		snprintf(buf, len, "the gateway did not say how its link to %s is (%s)", cluster, lds_strerror(rc));
	else if (p.state == LDS_PEER_UNKNOWN)
		snprintf(buf, len, "the gateway has no link to %s (not among its peers)", cluster);
	else if (p.state == LDS_PEER_UP)
		snprintf(buf, len, "the gateway's link to %s is up, so is its communication manager running?", cluster);
	else
		snprintf(buf, len, "the gateway's link to %s is down (for %u s%s%s) (ldsctl status says more: a wrong key, "
			 "address or port?)", cluster, p.down_s, p.why[0] ? "; last attempt: " : "", p.why);
	return buf;
}
