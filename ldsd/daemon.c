/* daemon.c - event loop, transports, links and listeners; see daemon.h. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "auth.h"
#include "clock.h"
#include "fdreserve.h"
#include "link.h"
#include "log.h"
#include "resolve.h"
#include "tphost.h"

struct lds_transport *daemon_transport(struct daemon *d, const struct lds_transport_ops *ops)
{
	struct daemon_transport *t;
	int r;

	for (size_t i = 0; i < d->ntransports; i++)
		if (d->transports[i].ops == ops)
			return d->transports[i].tp;
	if (d->ntransports == DAEMON_MAX_TRANSPORTS) {
		log_warnx("%s transport: more than %d kinds of transport in use", ops->name, DAEMON_MAX_TRANSPORTS);
		return NULL;
	}
	t = &d->transports[d->ntransports];
	r = ops->init(&t->tp, &d->host, &d->tp_up);
	if (r < 0) {
		char why[256];

		/* The kind's own words for what this machine lacks. */
		if (ops->probe == NULL || ops->probe(why, sizeof(why)) == 0)
			snprintf(why, sizeof(why), "%s", strerror(-r));
		log_warnx("%s transport: %s", ops->name, why);
		return NULL;
	}
	t->ops = ops;
	d->ntransports++;
	return t->tp;
}

/* A peer whose transport this machine cannot run (RDMA without a device)
 * gets no link, and the daemon serves the others; daemon_transport said
 * why. */
static int daemon_peer_runnable(struct daemon *d, const struct config_peer *p)
{
	const struct lds_transport_ops *ops = transport_find(p->transport);

	if (ops == NULL || daemon_transport(d, ops) != NULL)
		return 1;   /* daemon_link_new reports the rest */
	log_warnx("%s:%d: peers: cluster %s: no link: transport \"%s\" cannot run on this machine; the other "
		  "peers are served", d->cfg->file, p->line, p->cluster, p->transport);
	return 0;
}

/* The link to peer p over its kind's instance, or NULL (logged). */
static struct link *daemon_link_new(struct daemon *d, const struct config_peer *p)
{
	const struct lds_transport_ops *ops = transport_find(p->transport);
	struct lds_transport *tp = NULL;

	if (ops == NULL || !config_transport_usable(ops) || (tp = daemon_transport(d, ops)) == NULL) {
		log_warnx("%s:%d: peers: cluster %s: transport \"%s\" cannot start (available: %s)", d->cfg->file,
			  p->line, p->cluster, p->transport, transport_names());
		return NULL;
	}
	return link_new(d, p, ops, tp);
}

/* The transports' accepted upcall (ud: the struct daemon_listener). */
static void daemon_accepted(struct lds_tp_listener *lis, struct lds_tp_conn *c, void *ud)
{
	struct daemon_listener *dl = ud;

	link_accept(dl->d, dl->ops, dl->tp, c);
}

/* The transports' accept_failed upcall (ud: the struct daemon_listener):
 * pauses the listener for admission's back-off. */
static void daemon_accept_failed(struct lds_tp_listener *l, int err, void *ud)
{
	struct daemon_listener *dl = ud;
	uint64_t now = clock_now_ns();
	uint64_t wait = admission_accept_failed(dl->d->adm, err, now);

	if (dl->ops->listener_pause(l, 1) == 0)
		dl->resume_ns = now + wait;
}

int daemon_init(struct daemon *d, struct config *cfg)
{
	d->cfg = cfg;
	if (d->ev == NULL) {
		d->ev = evloop_new();
		if (d->ev == NULL) {
			log_warn("cannot create the event loop");
			return -1;
		}
		d->own_ev = 1;
	}
	d->started_ns = clock_now_ns();
	/* 0 means "no peer seen yet" to links, so it is never an instance. */
	while (d->instance == 0 && auth_random(&d->instance, sizeof(d->instance)) == 0)
		;
	if (d->instance == 0) {
		log_warnx("cannot read random bytes for the instance id");
		return -1;
	}
	/* Not fatal: only the local sockets would spin out of descriptors. */
	if (fdreserve_init() < 0)
		log_warn("cannot open /dev/null to keep a descriptor in reserve");
	d->adm = admission_new(&cfg->handshake);
	if (d->adm == NULL) {
		log_warn("cannot allocate the admission table (max_unauth %u)", cfg->handshake.max_unauth);
		return -1;
	}
	d->resolver = resolver_new(d->ev);
	if (d->resolver == NULL) {
		log_warn("cannot set up name lookups");
		return -1;
	}
	tphost_init(&d->host, d->ev);
	/* Conns report to their link; listeners are the daemon's. */
	d->tp_up = link_upcalls;
	d->tp_up.accepted = daemon_accepted;
	d->tp_up.accept_failed = daemon_accept_failed;
	for (size_t i = 0; i < cfg->npeers; i++) {
		if (!daemon_peer_runnable(d, &cfg->peers[i]))
			continue;
		d->links[d->nlinks] = daemon_link_new(d, &cfg->peers[i]);
		if (d->links[d->nlinks] == NULL)
			return -1;
		d->nlinks++;
	}
	return 0;
}

static int listener_wanted(const struct config *cfg, const struct daemon_listener *dl)
{
	for (size_t i = 0; i < cfg->npeers; i++) {
		const struct config_peer *p = &cfg->peers[i];

		if (p->role == CONFIG_ROLE_LISTEN && strcmp(dl->address, p->address) == 0 && dl->port == p->port)
			return 1;
	}
	return 0;
}

/* Closes the listeners no listen-role peer uses any longer and opens those
 * that are missing.  Returns 0, or -1 after logging a listener that could
 * not be opened (the others are). */
static int daemon_listen(struct daemon *d)
{
	const struct lds_tp_opts o = { 0 };
	int ret = 0;

	for (size_t j = 0; j < d->nlisteners; j++) {
		struct daemon_listener *dl = &d->listeners[j];

		if (dl->l == NULL || listener_wanted(d->cfg, dl))
			continue;
		log_info("no longer listening for peer gateways on %s:%u", dl->address, dl->port);
		dl->ops->listener_close(dl->l);
		dl->l = NULL; /* a free slot: a transport holds the others' addresses */
	}
	for (size_t i = 0; i < d->cfg->npeers; i++) {
		const struct config_peer *p = &d->cfg->peers[i];
		struct daemon_listener *dl = NULL;
		struct lds_transport *tp;
		int r;

		if (p->role != CONFIG_ROLE_LISTEN)
			continue;
		for (size_t j = 0; j < d->nlisteners && dl == NULL; j++)
			if (d->listeners[j].l && strcmp(d->listeners[j].address, p->address) == 0 &&
			    d->listeners[j].port == p->port)
				dl = &d->listeners[j];
		if (dl)
			continue; /* peers sharing an address are told apart by HELLO */
		for (size_t j = 0; j < d->nlisteners && dl == NULL; j++)
			if (d->listeners[j].l == NULL)
				dl = &d->listeners[j];
		if (dl == NULL)
			dl = &d->listeners[d->nlisteners];
		dl->d = d;
		dl->ops = transport_find(p->transport);
		tp = dl->ops ? daemon_transport(d, dl->ops) : NULL;
		dl->tp = tp;
		snprintf(dl->address, sizeof(dl->address), "%s", p->address);
		dl->port = p->port;
		dl->l = NULL;
		if (dl->ops && tp == NULL) {
			/* daemon_transport said why; the peer has no link either. */
			log_warnx("%s:%d: peers: cluster %s: not listening on %s:%u: transport \"%s\" cannot run on "
				  "this machine", d->cfg->file, p->line, p->cluster, p->address, p->port, p->transport);
			continue;
		}
		r = tp ? dl->ops->listen(tp, p->address, p->port, &o, dl, &dl->l) : -ENOPROTOOPT;
		if (r < 0) {
			log_warnx("%s:%d: peers: cluster %s: cannot listen on %s:%u: %s", d->cfg->file, p->line,
				  p->cluster, p->address, p->port, strerror(-r));
			ret = -1;
			continue;
		}
		log_info("listening for peer gateways on %s:%u", p->address, p->port);
		if (dl == &d->listeners[d->nlisteners])
			d->nlisteners++;
	}
	return ret;
}

int daemon_start(struct daemon *d)
{
	if (daemon_listen(d) < 0)
		return -1;
	for (size_t i = 0; i < d->nlinks; i++)
		link_start(d->links[i]);
	return 0;
}

/* What a running link cannot take from a reload: the link is replaced. */
static const char *peer_structural_change(const struct config_peer *a, const struct config_peer *b)
{
	if (a->role != b->role)
		return "role";
	if (strcmp(a->address, b->address) != 0 || a->port != b->port)
		return "address or port";
	if (strcmp(a->transport, b->transport) != 0)
		return "transport";
	if (a->block_size != b->block_size || a->send_memory != b->send_memory || a->recv_memory != b->recv_memory)
		return "block_size or memory";
	return NULL;
}

/* Retired links stay allocated until daemon_fini (link_retire). */
static void daemon_retire(struct daemon *d, size_t i, const char *why)
{
	struct link **gone = realloc(d->gone, (d->ngone + 1) * sizeof(*gone));
	struct link *l = d->links[i];

	link_retire(l, why);
	if (gone != NULL) {
		d->gone = gone;
		d->gone[d->ngone++] = l;
	} else {
		/* Freeing it would leave what still refers to it dangling. */
		log_warnx("link %s: out of memory listing the retired link: it stays in memory until exit",
			  link_name(l));
	}
	memmove(&d->links[i], &d->links[i + 1], (d->nlinks - i - 1) * sizeof(d->links[0]));
	d->nlinks--;
}

void daemon_reconfigure(struct daemon *d, struct config *cfg)
{
	struct link *fresh[CONFIG_MAX_PEERS];
	size_t nfresh = 0;

	for (size_t i = 0; i < d->nlinks;) {
		struct link *l = d->links[i];
		const struct config_peer *p = config_peer_find(cfg, link_name(l));
		const char *what = p ? peer_structural_change(config_peer_find(d->cfg, link_name(l)), p) : NULL;

		if (p == NULL) {
			daemon_retire(d, i, "peer removed from the configuration");
			continue;
		}
		if (what != NULL) {
			log_info("link %s: %s changed: replacing the link", link_name(l), what);
			daemon_retire(d, i, "peer's link replaced at a configuration reload");
			continue;
		}
		link_reconfigure(l, p);
		i++;
	}
	d->cfg = cfg;
	for (size_t i = 0; i < cfg->npeers; i++) {
		struct link *l;

		if (link_find(d, cfg->peers[i].cluster) != NULL)
			continue;
		l = daemon_link_new(d, &cfg->peers[i]);
		if (l == NULL)
			continue;
		if (link_new_session(l) < 0) {
			log_warnx("link %s: cannot read random bytes for its session; not added", link_name(l));
			link_free(l);
			continue;
		}
		log_info("link %s: added by a configuration reload", link_name(l));
		d->links[d->nlinks++] = l;
		fresh[nfresh++] = l;
	}
	daemon_listen(d);
	for (size_t i = 0; i < nfresh; i++)
		link_start(fresh[i]);
}

int daemon_tick(struct daemon *d, uint64_t now)
{
	int drained = 1;

	for (size_t i = 0; i < d->nlinks; i++) {
		link_tick(d->links[i], now);
		drained &= link_drained(d->links[i]);
	}
	link_tick_pending(now, d->cfg->handshake.timeout);
	admission_tick(d->adm, now);
	for (size_t i = 0; i < d->nlisteners; i++) {
		struct daemon_listener *dl = &d->listeners[i];

		if (dl->resume_ns && now >= dl->resume_ns && dl->ops->listener_pause(dl->l, 0) == 0)
			dl->resume_ns = 0;
	}
	return drained;
}

void daemon_flush(struct daemon *d)
{
	for (size_t i = 0; i < d->nlinks; i++)
		link_flush(d->links[i]);
}

void daemon_fini(struct daemon *d)
{
	for (size_t i = 0; i < d->nlinks; i++)
		link_shutdown(d->links[i]);
	for (size_t i = 0; i < d->nlisteners; i++)
		if (d->listeners[i].l)
			d->listeners[i].ops->listener_close(d->listeners[i].l);
	link_close_pending(d);
	for (size_t i = 0; i < d->nlinks; i++)
		link_free(d->links[i]);
	for (size_t i = 0; i < d->ngone; i++)
		link_free(d->gone[i]);
	free(d->gone);
	d->gone = NULL;
	d->ngone = 0;
	admission_free(d->adm);
	d->adm = NULL;
	fdreserve_fini();
	d->nlinks = d->nlisteners = 0;
	resolver_free(d->resolver);
	d->resolver = NULL;
	for (size_t i = 0; i < d->ntransports; i++)
		d->transports[i].ops->fini(d->transports[i].tp);
	d->ntransports = 0;
	if (d->own_ev)
		evloop_free(d->ev);
	d->ev = NULL;
	d->own_ev = 0;
}
