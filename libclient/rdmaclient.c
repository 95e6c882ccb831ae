/* rdmaclient.c - liblds's path to a gateway over RDMA; see rdmaclient.h. */
#include <errno.h>
#include <netdb.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "deadline.h"
#include "rdmaclient.h"
#include "tploop.h"
#include "transports/rdma/rdx_relay.h"

#define CLOSE_WAIT_MS 2000   /* a conn given up on: how long its close may take */

struct rclient {
	struct tploop *loop;
	struct lds_tp_host host;
	const struct lds_transport_ops *ops;
	struct lds_transport *tp;
	struct lds_tp_conn *conn;
	int connected;               /* the connected upcall came: with conn_err */
	int conn_err;
	int closed;                  /* the conn's closed upcall came */
	struct rdx_relay *relay;     /* once connected */
};

static void rc_connected(struct lds_tp_conn *c, int err, void *ud)
{
	struct rclient *rc = ud;

	rc->connected = 1;
	rc->conn_err = err;
	if (err < 0)
		rc->conn = NULL;   /* already gone (transport.h) */
}

/* The conn's user data is the rclient throughout: the relay's upcalls go
 * through it. */
static void rc_readable(struct lds_tp_conn *c, void *ud)
{
	rdx_relay_on_readable(c, ((struct rclient *)ud)->relay);
}

static void rc_writable(struct lds_tp_conn *c, void *ud)
{
	rdx_relay_on_writable(c, ((struct rclient *)ud)->relay);
}

static void rc_sent(struct lds_tp_conn *c, void *ctx, void *ud)
{
	rdx_relay_on_sent(c, ctx, ((struct rclient *)ud)->relay);
}

static void rc_closed(struct lds_tp_conn *c, void *ud)
{
	struct rclient *rc = ud;

	rdx_relay_free(rc->relay);
	rc->relay = NULL;
	rc->closed = 1;
}

static void relay_done(struct rdx_relay *r, int err, const char *why, void *arg)
{
	rdx_relay_close(r);
}

static const struct lds_tp_upcalls rc_upcalls = {
	.connected = rc_connected,
	.readable = rc_readable,
	.writable = rc_writable,
	.sent = rc_sent,
	.closed = rc_closed,
};

static void rc_free(struct rclient *rc)
{
	if (rc->tp != NULL)
		rc->ops->fini(rc->tp);
	tploop_free(rc->loop);
	free(rc);
}

/* The connection's thread: the relay until it ends, then the instance. */
static void *rc_thread(void *arg)
{
	struct rclient *rc = arg;

	while (!rc->closed)
		if (tploop_run_once(rc->loop, 1000) < 0)
			break;
	rc_free(rc);
	return NULL;
}

/* Closes a conn given up on and waits a little for the transport to let
 * go of it. */
static void rc_abandon(struct rclient *rc)
{
	int64_t until = deadline_after(CLOSE_WAIT_MS);

	rc->ops->close(rc->conn);
	rc->conn = NULL;
	while (!rc->closed && deadline_poll_ms(until) > 0 && tploop_run_once(rc->loop, 50) == 0)
		;
}

int rdmaclient_open(const struct lds_transport_ops *ops, const char *host, uint16_t port, int64_t deadline)
{
	struct rclient *rc = calloc(1, sizeof(*rc));
	struct lds_tp_opts o = { 0 };
	uint8_t conf[LDS_TP_CONF_MAX];
	pthread_attr_t attr;
	pthread_t th;
	const char *step;
	int sv[2], r;

	if (rc == NULL || (rc->loop = tploop_new()) == NULL) {
		free(rc);
		return -ENOMEM;
	}
	rc->ops = ops;
	tploop_host(rc->loop, &rc->host);
	r = ops->init(&rc->tp, &rc->host, &rc_upcalls);
	if (r < 0) {
		rc->tp = NULL;
		rc_free(rc);
		return r;
	}
	o.conf = rdx_relay_conf(ops, conf);
	if (deadline != DEADLINE_NEVER)
		o.connect_timeout = (double)deadline_poll_ms(deadline) / 1000.0 + 0.001;
	r = ops->connect(rc->tp, host, port, &o, rc, &rc->conn, &step);
	while (r == 0 && !rc->connected && deadline_poll_ms(deadline) != 0)
		r = tploop_run_once(rc->loop, deadline_poll_ms(deadline));
	if (r == 0 && !rc->connected)
		r = -ETIMEDOUT;
	if (r == 0)
		r = rc->conn_err;
	if (r == 0 && socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
		r = -errno;
	if (r == 0 && (r = rdx_relay_new(&rc->relay, &rc->host, ops, rc->conn, sv[1], relay_done, rc)) < 0) {
		close(sv[0]);
		close(sv[1]);
	}
	if (r < 0) {
		if (rc->conn != NULL)
			rc_abandon(rc);
		rc_free(rc);
		return r;
	}
	rc->conn = NULL;   /* the relay's now */
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	r = -pthread_create(&th, &attr, rc_thread, rc);
	pthread_attr_destroy(&attr);
	if (r < 0) {
		/* No thread: end the relay here (it owns sv[1]). */
		rdx_relay_close(rc->relay);
		close(sv[0]);
		while (!rc->closed && tploop_run_once(rc->loop, 50) == 0)
			;
		rc_free(rc);
		return r;
	}
	return sv[0];
}

#ifdef LDS_HAVE_RDMA
extern const struct lds_transport_ops rdma_transport_ops;
#endif

int rdmaclient_connect(const char *host, const char *port, int64_t deadline)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM }, *res;
	char num[64];
	char *end;
	unsigned long p = strtoul(port, &end, 10);
	int r;

	if (*port == '\0' || *end != '\0' || p == 0 || p > 65535)
		return -EINVAL;
#ifndef LDS_HAVE_RDMA
	(void)host;
	(void)deadline;
	(void)hints;
	(void)res;
	(void)num;
	(void)r;
	return -ENODEV;
#else
	r = getaddrinfo(host, NULL, &hints, &res);
	if (r == EAI_SYSTEM)
		return -errno;
	if (r != 0)
		return -EHOSTUNREACH;
	r = getnameinfo(res->ai_addr, res->ai_addrlen, num, sizeof(num), NULL, 0, NI_NUMERICHOST);
	freeaddrinfo(res);
	if (r != 0)
		return -EHOSTUNREACH;
	return rdmaclient_open(&rdma_transport_ops, num, (uint16_t)p, deadline);
#endif
}
