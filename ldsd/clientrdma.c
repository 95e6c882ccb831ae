/*
 * clientrdma.c - clients.rdma: liblds processes on other nodes of the
 * cluster reaching this gateway over RDMA (docs/rdma.md, "The client
 * path"); see client.h.
 *
 * An instance of the rdma kind of its own (its upcalls are these, not the
 * links'), one listener, and per accepted conn a relay
 * (transports/rdma/rdx_relay.h) to a socketpair whose other end the
 * client server serves like a TCP client: the key proof first, then
 * every limit of clients.*.  The relays are counted, so that conns
 * beyond max_clients and a few being refused are closed at once rather
 * than each holding its pinned buffers.
 */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "client.h"
#include "log.h"
#include "transports/rdma/rdx_relay.h"

#define CR_REFUSING 16   /* relays beyond max_clients: refusals being told */

struct crelay {
	struct clientrdma *cr;
	struct rdx_relay *r;
	struct crelay *next, **pprev;
};

struct clientrdma {
	struct clientsrv *cs;
	const struct lds_transport_ops *ops;
	struct lds_transport *tp;
	struct lds_tp_listener *l;
	struct crelay *relays;
	unsigned nrelays;
	uint64_t dropped;            /* conns closed at once: too many */
};

static void cr_done(struct rdx_relay *r, int err, const char *why, void *arg)
{
	if (err < 0)
		log_info("rdma client relay: %s (%s)", why, strerror(-err));
	rdx_relay_close(r);
}

static void cr_closed(struct lds_tp_conn *c, void *ud)
{
	struct crelay *n = rdx_relay_arg(ud);

	*n->pprev = n->next;
	if (n->next)
		n->next->pprev = n->pprev;
	n->cr->nrelays--;
	rdx_relay_free(n->r);
	free(n);
}

static void cr_accepted(struct lds_tp_listener *l, struct lds_tp_conn *c, void *ud)
{
	struct clientrdma *cr = ud;
	struct lds_tp_info info = { .peer = "?" };
	struct crelay *n = NULL;
	int sv[2] = { -1, -1 };

	if (cr->nrelays >= cr->cs->d->cfg->clients.max_clients + CR_REFUSING) {
		if (cr->dropped++ % 1000 == 0)
			log_warnx("clients.rdma: more RDMA clients than max_clients = %u; closing new ones (%" PRIu64
				  " so far)", cr->cs->d->cfg->clients.max_clients, cr->dropped);
		goto drop;
	}
	n = calloc(1, sizeof(*n));
	if (n == NULL || socketpair(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0, sv) < 0)
		goto drop;
	n->cr = cr;
	if (rdx_relay_new(&n->r, &cr->cs->d->host, cr->ops, c, sv[1], cr_done, n) < 0)
		goto drop;
	cr->ops->set_userdata(c, n->r);
	n->next = cr->relays;
	n->pprev = &cr->relays;
	if (n->next)
		n->next->pprev = &n->next;
	cr->relays = n;
	cr->nrelays++;
	(void)cr->ops->query(c, &info);
	clientconn_adopt(cr->cs, sv[0], "rdma", info.peer);
	return;
drop:
	if (sv[0] >= 0) {
		close(sv[0]);
		close(sv[1]);
	}
	free(n);
	/* No relay: its closed upcall finds no user data to free. */
	cr->ops->set_userdata(c, NULL);
	cr->ops->close(c);
}

static void cr_accept_failed(struct lds_tp_listener *l, int err, void *ud)
{
	struct clientrdma *cr = ud;

	if (cr->dropped++ % 1000 == 0)
		log_warnx("clients.rdma: cannot accept an RDMA client: %s (%" PRIu64 " so far)", strerror(-err),
			  cr->dropped);
}

static void cr_closed_any(struct lds_tp_conn *c, void *ud)
{
	if (ud != NULL)
		cr_closed(c, ud);
}

static const struct lds_tp_upcalls cr_upcalls = {
	.accepted = cr_accepted,
	.accept_failed = cr_accept_failed,
	.readable = rdx_relay_on_readable,
	.writable = rdx_relay_on_writable,
	.sent = rdx_relay_on_sent,
	.closed = cr_closed_any,
};

/* addr:port of clients.rdma, "[v6]:port" too: 0 or -EINVAL. */
static int split_addr(const char *spec, char *host, size_t len, uint16_t *port)
{
	const char *colon = strrchr(spec, ':');
	char *end;
	unsigned long p;

	if (colon == NULL)
		return -EINVAL;
	p = strtoul(colon + 1, &end, 10);
	if (colon[1] == '\0' || *end != '\0' || p == 0 || p > 65535)
		return -EINVAL;
	if (spec[0] == '[' && colon > spec + 1 && colon[-1] == ']')
		snprintf(host, len, "%.*s", (int)(colon - spec - 2), spec + 1);
	else
		snprintf(host, len, "%.*s", (int)(colon - spec), spec);
	*port = (uint16_t)p;
	return 0;
}

int clientrdma_probe(char *why, size_t len)
{
	const struct lds_transport_ops *ops = transport_find("rdma");
	char *advice;
	int r;

	why[0] = '\0';
	if (ops == NULL) {
		snprintf(why, len, "transport \"rdma\" is not built in (no rdma-core at build time)");
		return -ENOSYS;
	}
	if (ops->probe == NULL || (r = ops->probe(why, len)) == 0)
		return 0;
	/* The kind's advice is for peers ("use transport tcp"). */
	advice = strstr(why, "; use ");
	if (advice != NULL)
		*advice = '\0';
	return r;
}

int clientrdma_start(struct clientsrv *cs)
{
	const struct config *cfg = cs->d->cfg;
	struct clientrdma *cr;
	char host[CONFIG_ADDR_MAX], why[256];
	uint8_t conf[LDS_TP_CONF_MAX];
	struct lds_tp_opts o = { 0 };
	uint16_t port;
	int r;

	if (cfg->client_rdma[0] == '\0')
		return 0;
	if (split_addr(cfg->client_rdma, host, sizeof(host), &port) < 0) {
		log_warnx("%s:%d: clients.rdma \"%s\" is not ADDR:PORT", cfg->file, cfg->client_rdma_line, cfg->client_rdma);
		return -1;
	}
	cr = calloc(1, sizeof(*cr));
	if (cr == NULL)
		return -1;
	cr->cs = cs;
	cr->ops = transport_find("rdma");
	r = clientrdma_probe(why, sizeof(why));
	if (r == 0)
		r = cr->ops->init(&cr->tp, &cs->d->host, &cr_upcalls);
	if (r < 0) {
		if (why[0] == '\0')
			snprintf(why, sizeof(why), "%s", strerror(-r));
		log_warnx("%s:%d: clients.rdma: %s; not listening on %s (clients elsewhere in the cluster can use "
			  "clients.tcp); the unix socket and the other listeners are served", cfg->file,
			  cfg->client_rdma_line, why, cfg->client_rdma);
		free(cr);
		return 0;
	}
	cs->rdma = cr;
	o.conf = rdx_relay_conf(cr->ops, conf);
	r = cr->ops->listen(cr->tp, host[0] ? host : NULL, port, &o, cr, &cr->l);
	if (r < 0) {
		log_warnx("%s:%d: clients.rdma: cannot listen on %s: %s", cfg->file, cfg->client_rdma_line,
			  cfg->client_rdma, strerror(-r));
		return -1;
	}
	log_info("clients.rdma: listening on %s", cfg->client_rdma);
	return 0;
}

void clientrdma_stop_accepting(struct clientsrv *cs)
{
	struct clientrdma *cr = cs->rdma;

	if (cr == NULL || cr->l == NULL)
		return;
	cr->ops->listener_close(cr->l);
	cr->l = NULL;
}

void clientrdma_free(struct clientsrv *cs)
{
	struct clientrdma *cr = cs->rdma;

	if (cr == NULL)
		return;
	clientrdma_stop_accepting(cs);
	for (struct crelay *n = cr->relays; n; n = n->next)
		rdx_relay_close(n->r);
	/* fini makes the closed upcalls of the conns closed above. */
	cr->ops->fini(cr->tp);
	while (cr->relays)
		cr_closed(NULL, cr->relays->r);
	free(cr);
	cs->rdma = NULL;
}
