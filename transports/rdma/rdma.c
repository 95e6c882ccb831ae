/*
 * rdma.c - the RDMA transport: reliable-connected queue pairs set up by
 * the RDMA connection manager (InfiniBand, RoCE, iWARP; docs/rdma.md).
 *
 * A message kind (transport.h): the core's messages go as two-sided sends
 * from registered memory, chunked to the peer's receive buffers, under
 * credit-based flow control (rdx_data.c).  This file owns the instance,
 * the connection manager's events (resolve address and route, connect or
 * accept with the buffers' sizes as private data, established,
 * disconnected) and each conn's resources, built by rdx_conn_setup and
 * undone by rdx_conn_teardown, which is safe on a half-built conn (the
 * ladder of rping.c).  Events are acknowledged as soon as what they carry
 * is copied, so that destroying an id never waits for one.  A conn is
 * freed only from the before-sleep hook, so that close is safe inside any
 * upcall; its queue pair is destroyed first, after which the adapter
 * touches none of its memory nor the core's.  Our symbols take the prefix
 * rdx_ (files rdx_*.c): rdma_ and ibv_ are librdmacm's and libibverbs'.
 */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <arpa/inet.h>

#include "ldsd/clock.h"
#include "rdx_int.h"

#define RDMA_RESOLVE_MS 2000        /* address and route resolution, when no connect timeout is set */
#define RDMA_CONNECT_MS 10000       /* the whole connect, likewise */
#define RDMA_CM_BATCH 32            /* events handled per wake-up */
#define RDMA_BACKLOG 128
#define RDMA_DEADLINE_MS 250        /* how often connect deadlines are checked */
#define RDMA_MAX_ACCEPTING 64       /* accepted, not yet established: each has pinned its buffers */

static const char nodev_msg[] = "no RDMA device found (ibv_get_device_list returned none); use transport tcp";

static int rdx_probe(char *buf, size_t len)
{
	int n = 0;
	struct ibv_device **l = ibv_get_device_list(&n);

	if (l != NULL)
		ibv_free_device_list(l);
	if (l == NULL || n == 0) {
		snprintf(buf, len, "%s", nodev_msg);
		return -ENODEV;
	}
	return 0;
}

static void rdx_conn_free(struct lds_tp_conn *c);
static int rdx_pending(void *arg);
static void rdx_deadlines(uint64_t now_ns, void *arg);
static void rdx_cm_event(int fd, unsigned events, void *arg);

static void rdx_fini(struct lds_transport *tp)
{
	while (tp->conns) {
		struct lds_tp_conn *c = tp->conns;

		/* Closed conns get their closed upcall; those never handed
		 * to the core go silently. */
		if (c->state == RS_DEAD && tp->up.closed && !c->silent)
			tp->up.closed(c, c->ud);
		rdx_conn_free(c);
	}
	if (tp->pending_id > 0)
		tp->host.pending_del(tp->host.ctx, tp->pending_id);
	if (tp->timer > 0)
		tp->host.timer_del(tp->host.ctx, tp->timer);
	if (tp->cm) {
		tp->host.unwatch(tp->host.ctx, tp->cm->fd);
		rdma_destroy_event_channel(tp->cm);
	}
	for (int i = 0; i < tp->ndevs && tp->pd; i++)
		if (tp->pd[i])
			ibv_dealloc_pd(tp->pd[i]);
	free(tp->pd);
	if (tp->devs)
		rdma_free_devices(tp->devs);
	free(tp);
}

static int rdx_init(struct lds_transport **out, const struct lds_tp_host *host, const struct lds_tp_upcalls *up)
{
	struct lds_transport *tp;
	char why[128];
	int r;

	/* Before any other verbs call, and so before any registration:
	 * registered pages are then not shared with a child of fork, and
	 * ldsd forks for the exec service (jobspawn.c) while conns are up. */
	r = ibv_fork_init();
	if (r != 0)
		return -r;
	r = rdx_probe(why, sizeof(why));
	if (r < 0)
		return r;
	tp = calloc(1, sizeof(*tp));
	if (tp == NULL)
		return -ENOMEM;
	tp->host = *host;
	tp->up = *up;
	tp->devs = rdma_get_devices(&tp->ndevs);
	if (tp->devs == NULL || tp->ndevs == 0) {
		r = -ENODEV;
		goto fail;
	}
	tp->pd = calloc((size_t)tp->ndevs, sizeof(*tp->pd));
	if (tp->pd == NULL) {
		r = -ENOMEM;
		goto fail;
	}
	for (int i = 0; i < tp->ndevs; i++)
		if ((tp->pd[i] = ibv_alloc_pd(tp->devs[i])) == NULL) {
			r = -ENOMEM;
			goto fail;
		}
	tp->cm = rdma_create_event_channel();
	if (tp->cm == NULL) {
		r = errno ? -errno : -ENODEV;
		goto fail;
	}
	if (fcntl(tp->cm->fd, F_SETFL, fcntl(tp->cm->fd, F_GETFL) | O_NONBLOCK) < 0 ||
	    (r = host->watch(host->ctx, tp->cm->fd, TP_EV_READ, rdx_cm_event, tp)) < 0) {
		r = r < 0 ? r : -errno;
		host->unwatch(host->ctx, tp->cm->fd);
		rdma_destroy_event_channel(tp->cm);
		tp->cm = NULL;
		goto fail;
	}
	tp->pending_id = host->pending_add(host->ctx, rdx_pending, tp);
	if (tp->pending_id < 0) {
		r = tp->pending_id;
		tp->pending_id = 0;
		goto fail;
	}
	tp->timer = host->timer_add(host->ctx, RDMA_DEADLINE_MS, rdx_deadlines, tp);
	if (tp->timer < 0) {
		r = tp->timer;
		tp->timer = 0;
		goto fail;
	}
	*out = tp;
	return 0;
fail:
	rdx_fini(tp);
	return r;
}

/* host:port as a socket address; host numeric unless passive. */
static int rdx_addr(const char *host, uint16_t port, int passive, struct sockaddr_storage *ss)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM,
				  .ai_flags = passive ? AI_PASSIVE : AI_NUMERICHOST };
	struct addrinfo *res;
	char ps[8];
	int r;

	snprintf(ps, sizeof(ps), "%u", port);
	r = getaddrinfo(host, ps, &hints, &res);
	if (r != 0)
		return r == EAI_SYSTEM ? -errno : -EADDRNOTAVAIL;
	memcpy(ss, res->ai_addr, res->ai_addrlen);
	freeaddrinfo(res);
	return 0;
}

static void rdx_peer_name(struct lds_tp_conn *c)
{
	struct sockaddr *sa = rdma_get_peer_addr(c->id);
	char host[INET6_ADDRSTRLEN] = "?", port[8] = "?";
	socklen_t sl = sa->sa_family == AF_INET6 ? sizeof(struct sockaddr_in6) : sizeof(struct sockaddr_in);

	getnameinfo(sa, sl, host, sizeof(host), port, sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(c->peer, sizeof(c->peer), sa->sa_family == AF_INET6 ? "[%s]:%s" : "%s:%s", host, port);
}

static struct lds_tp_conn *rdx_conn_new(struct lds_transport *tp, const void *conf, void *ud)
{
	struct lds_tp_conn *c = calloc(1, sizeof(*c));

	if (c == NULL)
		return NULL;
	c->tp = tp;
	c->ud = ud;
	c->pdi = -1;
	if (conf)
		c->conf = *(const struct rdx_conf *)conf;
	else
		rdx_conf_defaults(&c->conf);
	c->next = tp->conns;
	tp->conns = c;
	return c;
}

static void rdx_give_slot(void *pool, uint32_t slot)
{
	(void)rdx_pool_give(pool, slot);
}

/* A registered pool's registration and memory, whatever was done of them. */
static void rdx_pool_free(struct rdx_pool *p)
{
	if (p->mr)
		ibv_dereg_mr(p->mr);
	rdx_pool_fini(p);
}

/* Undoes rdx_conn_setup in reverse, whatever it got to. */
static void rdx_conn_teardown(struct lds_tp_conn *c)
{
	struct lds_transport *tp = c->tp;

	if (c->cc)
		tp->host.unwatch(tp->host.ctx, c->cc->fd);
	/* From here on the adapter touches none of the conn's memory. */
	if (c->id && c->id->qp)
		rdma_destroy_qp(c->id);
	if (c->sq.e) {
		rdx_sendq_flush(&c->sq, rdx_give_slot, &c->tx);
		rdx_sendq_fini(&c->sq);
	}
	rdx_recvq_fini(&c->rq);
	if (c->cq) {
		ibv_ack_cq_events(c->cq, c->cq_events);
		ibv_destroy_cq(c->cq);
	}
	if (c->cc)
		ibv_destroy_comp_channel(c->cc);
	rdx_pool_free(&c->rx);
	rdx_pool_free(&c->tx);
	rdx_pool_free(&c->wr);
	if (c->id)
		rdma_destroy_id(c->id);
	c->id = NULL;
	c->cq = NULL;
	c->cc = NULL;
}

/* A pool of n of the conn's buffers of size bytes, registered for local
 * access and `access` besides. */
static int rdx_pool_setup(struct lds_tp_conn *c, struct rdx_pool *p, uint32_t n, size_t size, int access)
{
	int r = rdx_pool_init(p, n, size);
	struct ibv_mr *mr;

	if (r < 0)
		return r;
	mr = ibv_reg_mr(c->tp->pd[c->pdi], p->base, p->len, IBV_ACCESS_LOCAL_WRITE | access);
	p->mr = mr;
	return mr ? 0 : (errno ? -errno : -ENOMEM);
}

/* The conn's completion channel, completion queue, pools, queue pair and
 * posted receives, for its id's device.  0, or -errno with *step set;
 * rdx_conn_teardown undoes what was done either way. */
static int rdx_conn_setup(struct lds_tp_conn *c, const char **step)
{
	struct lds_transport *tp = c->tp;
	struct ibv_device_attr da;
	struct ibv_qp_init_attr qa;
	int r;

	*step = "device";
	for (int i = 0; i < tp->ndevs && c->pdi < 0; i++)
		if (tp->devs[i] == c->id->verbs)
			c->pdi = i;
	if (c->pdi < 0)
		return -ENODEV;   /* a device that came after the instance */
	if ((r = ibv_query_device(c->id->verbs, &da)) != 0)
		return -r;
	*step = "completion channel";
	c->cc = ibv_create_comp_channel(c->id->verbs);
	if (c->cc == NULL)
		return -errno;
	if (fcntl(c->cc->fd, F_SETFL, fcntl(c->cc->fd, F_GETFL) | O_NONBLOCK) < 0)
		return -errno;
	*step = "completion queue";
	c->cq = ibv_create_cq(c->id->verbs, (int)(2 * c->conf.buffers), c, c->cc, 0);
	if (c->cq == NULL)
		return -errno;
	if ((r = ibv_req_notify_cq(c->cq, 0)) != 0)
		return -r;
	*step = "memory registration";
	if ((r = rdx_pool_setup(c, &c->rx, c->conf.buffers, c->conf.buffer_size, 0)) < 0 ||
	    (r = rdx_pool_setup(c, &c->tx, c->conf.buffers, c->conf.buffer_size, 0)) < 0 ||
	    (r = rdx_sendq_init(&c->sq, c->tx.n, RDMA_SIGNAL_EVERY(c->tx.n))) < 0 ||
	    (r = rdx_recvq_init(&c->rq, c->rx.n, RDMA_MAX_MSG)) < 0)
		return r;
	/* The write ring: one buffer the peer may write into, registered once. */
	if (c->conf.write_ring > 0 &&
	    (r = rdx_pool_setup(c, &c->wr, 1, c->conf.write_ring, IBV_ACCESS_REMOTE_WRITE)) < 0)
		return r;
	rdx_wspace_init(&c->ws, c->wr.base, (uint32_t)c->conf.write_ring, c->conf.write_threshold);
	if ((r = rdx_recvq_writes(&c->rq, &c->ws)) < 0)
		return r;
	*step = "queue pair";
	c->max_sge = (uint32_t)(da.max_sge < RDMA_CHUNK_IOV + 1 ? da.max_sge : RDMA_CHUNK_IOV + 1);
	memset(&qa, 0, sizeof(qa));
	qa.send_cq = qa.recv_cq = c->cq;
	qa.qp_type = IBV_QPT_RC;
	qa.sq_sig_all = 0;   /* rdx_sendq says which sends are signalled */
	qa.cap.max_send_wr = c->tx.n;
	qa.cap.max_recv_wr = c->rx.n;
	qa.cap.max_send_sge = c->max_sge;
	qa.cap.max_recv_sge = 1;
	qa.cap.max_inline_data = (uint32_t)c->conf.inline_max;
	if (rdma_create_qp(c->id, tp->pd[c->pdi], &qa) != 0) {
		/* Some adapters have no inline sends: without them. */
		qa.cap.max_inline_data = 0;
		if (rdma_create_qp(c->id, tp->pd[c->pdi], &qa) != 0)
			return -errno;
	}
	c->inline_max = qa.cap.max_inline_data;
	*step = "receive buffers";
	if ((r = rdx_data_start(c)) < 0)
		return r;
	*step = "completion channel";
	return tp->host.watch(tp->host.ctx, c->cc->fd, TP_EV_READ, rdx_data_cq_event, c);
}

/* What the peer's private data says: chunk size, credits, its write ring. */
static void rdx_conn_peer(struct lds_tp_conn *c, const struct rp_priv *peer)
{
	size_t mine = c->conf.buffer_size, theirs = peer->buf_size;

	c->chunk = (mine < theirs ? mine : theirs) - RP_HDR_LEN;
	rdx_credit_init(&c->cr, (uint16_t)c->rx.n, peer->depth);
	rdx_wspace_peer(&c->ws, peer->ring_addr, peer->ring_rkey, peer->ring_size);
}

static void rdx_conn_priv(const struct lds_tp_conn *c, uint8_t *buf, struct rdma_conn_param *p)
{
	struct rp_priv mine = { .buf_size = (uint32_t)c->conf.buffer_size, .depth = (uint16_t)c->rx.n };

	if (c->wr.mr) {
		mine.ring_addr = (uintptr_t)c->wr.base;
		mine.ring_rkey = ((struct ibv_mr *)c->wr.mr)->rkey;
		mine.ring_size = (uint32_t)c->conf.write_ring;
	}

	rp_priv_encode(&mine, buf);
	memset(p, 0, sizeof(*p));
	p->private_data = buf;
	p->private_data_len = RP_PRIV_LEN;
	p->retry_count = 7;
	p->rnr_retry_count = 7;   /* credits make receiver-not-ready a bug; retry rather than fail */
}

static void rdx_conn_free(struct lds_tp_conn *c)
{
	struct lds_tp_conn **pp = &c->tp->conns;

	rdx_conn_teardown(c);
	while (*pp != c)
		pp = &(*pp)->next;
	*pp = c->next;
	free(c);
}

/* Ends a conn on an error: the core reads it and closes the conn; one
 * the core never had is freed by the pending hook (an outgoing one's
 * connect upcall told first). */
static void rdx_conn_fail(struct lds_tp_conn *c, int err)
{
	struct lds_transport *tp = c->tp;
	enum rdx_state was = c->state;

	if (was == RS_DEAD)
		return;
	if (was == RS_UP) {
		/* The core reads the error and closes the conn. */
		if (c->err == 0)
			c->err = err;
		return;
	}
	c->state = RS_DEAD;
	c->silent = 1;
	if (c->cc)
		tp->host.unwatch(tp->host.ctx, c->cc->fd);
	if (was == RS_RESOLVING || was == RS_CONNECTING)
		tp->up.connected(NULL, err, c->ud);
}

/* Connects and accepts past their deadline fail: the connection
 * manager's own timeouts (REQ retries) can run for minutes, and an
 * accepted conn holds pinned memory until it is established. */
static void rdx_deadlines(uint64_t now_ns, void *arg)
{
	struct lds_transport *tp = arg;

	for (struct lds_tp_conn *c = tp->conns; c; c = c->next)
		if (c->state < RS_UP && now_ns > c->deadline_ns)
			rdx_conn_fail(c, -ETIMEDOUT);
}

/* Conns accepted and not yet established. */
static unsigned rdx_accepting(const struct lds_transport *tp)
{
	unsigned n = 0;

	for (const struct lds_tp_conn *c = tp->conns; c; c = c->next)
		n += c->state == RS_ACCEPTING;
	return n;
}

static void rdx_on_request(struct lds_transport *tp, struct rdma_cm_id *listen_id, struct rdma_cm_id *id,
			    const uint8_t *priv, size_t plen)
{
	struct lds_tp_listener *l = tp->listeners;
	struct rdma_conn_param param;
	uint8_t mine[RP_PRIV_LEN];
	struct rp_priv peer;
	struct lds_tp_conn *c;
	const char *step;

	while (l && l->id != listen_id)
		l = l->next;
	/* Paused (out of descriptors or memory), or too many half-open:
	 * refused at once, the connection manager having no backlog to leave
	 * it in. */
	if (l == NULL || l->paused || rdx_accepting(tp) >= RDMA_MAX_ACCEPTING ||
	    rp_priv_decode(priv, plen, &peer) < 0 || (c = rdx_conn_new(tp, &l->conf, NULL)) == NULL) {
		rdma_reject(id, NULL, 0);
		rdma_destroy_id(id);
		return;
	}
	c->id = id;
	id->context = c;
	c->l = l;
	c->state = RS_ACCEPTING;
	c->deadline_ns = clock_now_ns() + RDMA_CONNECT_MS * 1000000ull;
	if (rdx_conn_setup(c, &step) < 0) {
		rdma_reject(id, NULL, 0);
		rdx_conn_fail(c, -EIO);
		return;
	}
	rdx_conn_peer(c, &peer);
	rdx_conn_priv(c, mine, &param);
	if (rdma_accept(id, &param) != 0)
		rdx_conn_fail(c, -errno);
}

static void rdx_on_established(struct lds_tp_conn *c, const uint8_t *priv, size_t plen)
{
	struct lds_transport *tp = c->tp;
	struct lds_tp_listener *l = c->l;
	struct rp_priv peer;

	if (c->state == RS_CONNECTING) {
		if (rp_priv_decode(priv, plen, &peer) < 0) {
			rdx_conn_fail(c, -EPROTO);
			return;
		}
		rdx_conn_peer(c, &peer);
	}
	rdx_peer_name(c);
	c->state = RS_UP;
	c->l = NULL;
	if (l)
		tp->up.accepted(l, c, l->ud);
	else
		tp->up.connected(c, 0, c->ud);
}

/* The connection manager's failure events, as errno values. */
static const struct {
	enum rdma_cm_event_type type;
	int err;
} cm_errors[] = {
	{ RDMA_CM_EVENT_ADDR_ERROR, EADDRNOTAVAIL },   { RDMA_CM_EVENT_ROUTE_ERROR, ENETUNREACH },
	{ RDMA_CM_EVENT_UNREACHABLE, EHOSTUNREACH },   { RDMA_CM_EVENT_REJECTED, ECONNREFUSED },
	{ RDMA_CM_EVENT_CONNECT_ERROR, ECONNRESET },    { RDMA_CM_EVENT_DEVICE_REMOVAL, ENODEV },
};

/* An event for a conn's id (not a connect request). */
static void rdx_on_event(struct lds_tp_conn *c, enum rdma_cm_event_type type, const uint8_t *priv, size_t plen)
{
	struct rdma_conn_param param;
	uint8_t mine[RP_PRIV_LEN];
	const char *step;
	int r;

	if (c == NULL || c->state == RS_DEAD)
		return;
	switch (type) {
	case RDMA_CM_EVENT_ADDR_RESOLVED:
		if (rdma_resolve_route(c->id, RDMA_RESOLVE_MS) != 0)
			rdx_conn_fail(c, -errno);
		break;
	case RDMA_CM_EVENT_ROUTE_RESOLVED:
		if ((r = rdx_conn_setup(c, &step)) < 0) {
			rdx_conn_fail(c, r);
			break;
		}
		rdx_conn_priv(c, mine, &param);
		c->state = RS_CONNECTING;
		if (rdma_connect(c->id, &param) != 0)
			rdx_conn_fail(c, -errno);
		break;
	case RDMA_CM_EVENT_ESTABLISHED:
		if (c->state == RS_CONNECTING || c->state == RS_ACCEPTING)
			rdx_on_established(c, priv, plen);
		break;
	case RDMA_CM_EVENT_DISCONNECTED:
		if (c->state == RS_UP)
			c->eof = 1;   /* what arrived before is still handed up, then -EPIPE */
		else
			rdx_conn_fail(c, -ECONNRESET);
		break;
	default:
		/* Failures end the conn; TIMEWAIT_EXIT and the like: nothing. */
		for (size_t i = 0; i < sizeof(cm_errors) / sizeof(cm_errors[0]); i++)
			if (cm_errors[i].type == type)
				rdx_conn_fail(c, -cm_errors[i].err);
		break;
	}
}

static void rdx_cm_event(int fd, unsigned events, void *arg)
{
	struct lds_transport *tp = arg;

	for (int i = 0; i < RDMA_CM_BATCH; i++) {
		struct rdma_cm_event *ev;
		enum rdma_cm_event_type type;
		struct rdma_cm_id *id, *listen_id;
		uint8_t priv[UINT8_MAX];
		size_t plen = 0;

		if (rdma_get_cm_event(tp->cm, &ev) != 0)
			return;   /* EAGAIN: all handled */
		type = ev->event;
		id = ev->id;
		listen_id = ev->listen_id;
		if ((type == RDMA_CM_EVENT_CONNECT_REQUEST || type == RDMA_CM_EVENT_ESTABLISHED) &&
		    ev->param.conn.private_data != NULL) {
			plen = ev->param.conn.private_data_len;   /* a uint8_t */
			memcpy(priv, ev->param.conn.private_data, plen);
		}
		/* Acknowledged before anything is done: destroying an id
		 * waits for its events' acknowledgements. */
		rdma_ack_cm_event(ev);
		if (type == RDMA_CM_EVENT_CONNECT_REQUEST)
			rdx_on_request(tp, listen_id, id, priv, plen);
		else
			rdx_on_event(id->context, type, priv, plen);   /* listeners' ids have none */
	}
}

static int rdx_listen_op(struct lds_transport *tp, const char *addr, uint16_t port, const struct lds_tp_opts *o,
			  void *ud, struct lds_tp_listener **out)
{
	struct sockaddr_storage ss;
	struct lds_tp_listener *l;
	int r = rdx_addr(addr, port, 1, &ss);

	if (r < 0)
		return r;
	l = calloc(1, sizeof(*l));
	if (l == NULL)
		return -ENOMEM;
	l->tp = tp;
	l->ud = ud;
	if (o && o->conf)
		l->conf = *(const struct rdx_conf *)o->conf;
	else
		rdx_conf_defaults(&l->conf);
	/* No context: its connect requests' ids inherit it, and they are
	 * conns. */
	if (rdma_create_id(tp->cm, &l->id, NULL, RDMA_PS_TCP) != 0) {
		r = -errno;
		free(l);
		return r;
	}
	if (rdma_bind_addr(l->id, (struct sockaddr *)&ss) != 0 || rdma_listen(l->id, RDMA_BACKLOG) != 0) {
		r = -errno;
		rdma_destroy_id(l->id);
		free(l);
		return r;
	}
	l->next = tp->listeners;
	tp->listeners = l;
	*out = l;
	return 0;
}

static void rdx_listener_close(struct lds_tp_listener *l)
{
	struct lds_tp_listener **pp = &l->tp->listeners;

	while (*pp != l)
		pp = &(*pp)->next;
	*pp = l->next;
	/* Conns it accepted that are not yet established go with it. */
	for (struct lds_tp_conn *c = l->tp->conns; c; c = c->next)
		if (c->state == RS_ACCEPTING && c->l == l)
			rdx_conn_fail(c, -ECONNABORTED);
	rdma_destroy_id(l->id);
	free(l);
}

static int rdx_listener_pause(struct lds_tp_listener *l, int paused)
{
	l->paused = paused;
	return 0;
}

static int rdx_connect_op(struct lds_transport *tp, const char *host, uint16_t port, const struct lds_tp_opts *o,
			   void *ud, struct lds_tp_conn **out, const char **step)
{
	struct sockaddr_storage ss;
	struct lds_tp_conn *c;
	uint64_t ms = o && o->connect_timeout > 0 ? (unsigned)(o->connect_timeout * 1000.0) : RDMA_CONNECT_MS;
	int r;

	*step = "address";
	r = rdx_addr(host, port, 0, &ss);
	if (r < 0)
		return r;
	c = rdx_conn_new(tp, o ? o->conf : NULL, ud);
	if (c == NULL)
		return -ENOMEM;
	*step = "rdma_create_id";
	if (rdma_create_id(tp->cm, &c->id, c, RDMA_PS_TCP) != 0) {
		r = -errno;
		goto fail;
	}
	*step = "resolve address";
	if (rdma_resolve_addr(c->id, NULL, (struct sockaddr *)&ss, (int)(ms < RDMA_RESOLVE_MS ? ms : RDMA_RESOLVE_MS)) != 0) {
		r = -errno;
		goto fail;
	}
	c->deadline_ns = clock_now_ns() + ms * 1000000ull;
	c->state = RS_RESOLVING;
	*out = c;
	return 0;
fail:
	rdx_conn_free(c);
	return r;
}

static void rdx_set_userdata(struct lds_tp_conn *c, void *ud)
{
	c->ud = ud;
}

static void rdx_close(struct lds_tp_conn *c)
{
	/* The peer hears of it (DREQ); what was posted is flushed when the
	 * pending hook destroys the queue pair. */
	if (c->state == RS_UP && !c->eof)
		rdma_disconnect(c->id);
	c->state = RS_DEAD;
	if (c->cc)
		c->tp->host.unwatch(c->tp->host.ctx, c->cc->fd);
}

/* Before the loop sleeps: completions and upcalls of live conns, then the
 * closed ones freed, each closed upcall after its conn is gone. */
static int rdx_pending(void *arg)
{
	struct lds_transport *tp = arg;
	int work = 0;

	for (struct lds_tp_conn *c = tp->conns; c; c = c->next)
		if (c->state == RS_UP)
			work |= rdx_data_progress(c) > 0;
	for (struct lds_tp_conn *c = tp->conns, *next; c; c = next) {
		void *ud = c->ud;
		int told = !c->silent;

		next = c->next;   /* upcalls mark conns dead or add new ones at the head: never free them */
		if (c->state != RS_DEAD)
			continue;
		rdx_conn_free(c);
		if (told && tp->up.closed)
			tp->up.closed(c, ud);
	}
	return work;
}

const struct lds_transport_ops rdma_transport_ops = {
	.size = LDS_TP_OPS_SIZE,
	.name = "rdma",
	/* Not FORK_SAFE: its buffers are pinned (ibv_fork_init keeps a
	 * forked child off them); not INTEGRITY: the adapter's CRC covers
	 * the wire only, the core's covers the path through host memory. */
	.caps = { .flags = LDS_TP_CAP_MESSAGE | LDS_TP_CAP_ORDERED | LDS_TP_CAP_RELIABLE | LDS_TP_CAP_REGMEM,
		  .max_msg = RDMA_MAX_MSG },
	.options = rdx_options,
	.conf_size = sizeof(struct rdx_conf),
	.conf_defaults = rdx_conf_defaults,
	.check = rdx_conf_check,
	.init = rdx_init,
	.fini = rdx_fini,
	.listen = rdx_listen_op,
	.listener_close = rdx_listener_close,
	.listener_pause = rdx_listener_pause,
	.connect = rdx_connect_op,
	.set_userdata = rdx_set_userdata,
	.send_msg = rdx_send_msg,
	.recv_msg = rdx_recv_msg,
	.msg_done = rdx_msg_done,
	.mem_reg = rdx_mem_reg,
	.mem_dereg = rdx_mem_dereg,
	.want_write = rdx_want_write,
	.want_read = rdx_want_read,
	.close = rdx_close,
	.query = rdx_query,
	.status = rdx_conf_status,
	.describe = rdx_conf_describe,
	.probe = rdx_probe,
};
