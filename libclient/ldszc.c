/* ldszc.c - liblds's zero-copy calls (lds_send_reserve, lds_recv_zc, and
 * their partners; see lds.h): in place in the shared-memory rings when the
 * handle has them and the message fits, else through a copy. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "deadline.h"
#include "lds_int.h"

static int ring_room(const struct lds *h, uint64_t need)
{
	size_t room;

	return h->shm != NULL && shmring_space(&h->shm->map.r[SHMRING_C2D], &room) == 0 && room >= need;
}

int lds_send_reserve(struct lds *h, const char *dst, size_t len, void **buf)
{
	struct cp_msg m = { .type = CP_SEND, .payload_len = (uint32_t)len };
	uint8_t hdr[OUT_FIELDS_MAX];
	size_t hl;
	int rc;

	if (h->zc.reserved)
		return -EBUSY;
	if (dst == NULL || buf == NULL)
		return -EINVAL;
	if (len > h->max_msg)
		return -EMSGSIZE;
	rc = ldsi_full_dst(h, dst, m.name);
	if (rc == 0)
		rc = ldsi_wait_for(h, ldsi_out_idle, 0, DEADLINE_NEVER);
	if (rc < 0)
		return rc;
	m.msg_id = h->last_id + 1;
	hl = cp_encode(hdr, sizeof(hdr), &m);
	if (hl == 0)
		return -EINVAL;
	h->zc.len = len;
	if (h->shm != NULL && hl + len <= h->shm->map.size) {
		struct shmring *r = &h->shm->map.r[SHMRING_C2D];

		h->zc.need_out = hl + len;
		rc = ldsi_wait_for(h, ring_room, hl + len, DEADLINE_NEVER);
		h->zc.need_out = 0;
		if (rc < 0)
			return rc;
		memcpy(shmring_wptr(r), hdr, hl);
		*buf = shmring_wptr(r) + hl;
		h->zc.frame = hl + len;
		h->zc.reserved = ZC_RING;
		return 0;
	}
	if (len > h->zc.cap || h->zc.buf == NULL) {
		uint8_t *p = realloc(h->zc.buf, len ? len : 1);

		if (p == NULL)
			return -ENOMEM;
		h->zc.buf = p;
		h->zc.cap = len;
	}
	memcpy(h->zc.dst, m.name, sizeof(m.name));
	*buf = h->zc.buf;
	h->zc.reserved = ZC_BUF;
	return 0;
}

int lds_send_commit(struct lds *h, uint64_t *id)
{
	int kind = h->zc.reserved;
	struct shmring *r;

	h->zc.reserved = ZC_NONE;
	if (kind == ZC_NONE)
		return -EINVAL;
	if (kind == ZC_BUF)
		return lds_send(h, h->zc.dst, h->zc.buf, h->zc.len, id);
	if (h->err)
		return h->err;
	r = &h->shm->map.r[SHMRING_C2D];
	shmring_commit(r, h->zc.frame);
	if (shmring_wake_consumer(r))
		shmring_ring(h->shm->efd_ring);
	ldsi_accept_send(h, h->zc.len, id);
	return 0;
}

int lds_send_cancel(struct lds *h)
{
	if (h->zc.reserved == ZC_NONE)
		return -EINVAL;
	h->zc.reserved = ZC_NONE;
	return 0;
}

/* A queued message, or a whole DELIVER first in the ring. */
static int zc_ready(const struct lds *h, uint64_t arg)
{
	size_t avail;

	(void)arg;
	return h->rx_head != NULL ||
	       (h->zc.need_in > 0 && h->shm != NULL && shmring_avail(&h->shm->map.r[SHMRING_D2C], &avail) == 0 &&
		avail >= h->zc.need_in);
}

/* The whole DELIVER first in the ring becomes the held message, in place.
 * Returns 1, 0 if it was a copy of one received before (dropped: look
 * again), or -errno. */
static int zc_take(struct lds *h, struct lds_msg *msg)
{
	struct shmring *r = &h->shm->map.r[SHMRING_D2C];
	struct cp_hdr hd;
	struct cp_msg m;
	size_t avail, frame;
	int rc = ldsi_ring_head(h, &hd, &avail);

	h->zc.need_in = 0;
	if (rc <= 0)
		return rc;
	frame = CP_HDR_LEN + hd.len;
	if (hd.type != CP_DELIVER || avail < frame)
		return 0;
	if (cp_decode(&hd, shmring_rptr(r) + CP_HDR_LEN, &m) < 0 || !wire_endpoint_valid(m.name))
		return ldsi_fail(h, -EPROTO);
	rc = ldsi_rx_admit(h, m.name, m.incarnation, m.msg_id);
	if (rc <= 0) {
		shmring_release(r, frame);
		if (shmring_wake_producer(r))
			shmring_ring(h->shm->efd_ring);
		return rc;
	}
	/* Read, so that what follows can be, but not given back. */
	shmring_hold(r);
	shmring_release(r, frame);
	memset(msg, 0, sizeof(*msg));
	memcpy(msg->src, m.name, sizeof(m.name));
	msg->id = m.msg_id;
	msg->len = m.payload_len;
	msg->data = (void *)m.payload;
	h->st.received++;
	h->st.bytes_received += m.payload_len;
	h->zc.held = ZC_RING;
	h->zc.held_len = m.payload_len;
	return 1;
}

int lds_recv_zc(struct lds *h, struct lds_msg *msg, int timeout_ms)
{
	int64_t deadline = deadline_after(timeout_ms);

	if (h->zc.held)
		return -EBUSY;
	if (h->rx_cur)
		ldsi_rx_recycle(h, h->rx_cur);
	h->rx_cur = NULL;
	for (;;) {
		int rc;

		h->zc.want = 1;
		rc = ldsi_wait_for(h, zc_ready, 0, deadline);
		h->zc.want = 0;
		if (rc < 0)
			return ldsi_timed(rc, timeout_ms);
		if (h->rx_head != NULL) {
			h->zc.copy = ldsi_rx_take(h, msg);
			h->zc.held = ZC_BUF;
			return 0;
		}
		rc = zc_take(h, msg);
		if (rc != 0)
			return rc < 0 ? rc : 0;
	}
}

int lds_recv_release(struct lds *h, struct lds_msg *msg)
{
	struct shmring *r;

	if (h->zc.held == ZC_NONE || msg == NULL)
		return -EINVAL;
	if (h->zc.held == ZC_BUF) {
		ldsi_rx_taken(h, h->zc.copy);
		ldsi_rx_recycle(h, h->zc.copy);
		h->zc.copy = NULL;
	} else if (h->zc.old != NULL) {
		/* Its connection is gone: the daemon queues it for us again. */
		shmclient_free(h->zc.old);
		h->zc.old = NULL;
	} else {
		r = &h->shm->map.r[SHMRING_D2C];
		shmring_unhold(r);
		if (shmring_wake_producer(r))
			shmring_ring(h->shm->efd_ring);
		ldsi_note_taken(h, h->zc.held_len);
	}
	h->zc.held = ZC_NONE;
	return 0;
}
