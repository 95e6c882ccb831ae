/* daemon.c - event loop, transports, links and listeners; see daemon.h. */
#include <string.h>

#include "auth.h"
#include "clock.h"
#include "link.h"
#include "log.h"
#include "resolve.h"

#define HANDSHAKE_TIMEOUT 10.0

static int host_watch(void *ctx, int fd, unsigned events, void (*cb)(int, unsigned, void *), void *arg)
{
	return evloop_watch(ctx, fd, events, cb, arg);
}

static void host_unwatch(void *ctx, int fd)
{
	evloop_unwatch(ctx, fd);
}

int daemon_init(struct daemon *d, struct config *cfg)
{
	int r;

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
	d->resolver = resolver_new(d->ev);
	if (d->resolver == NULL) {
		log_warn("cannot set up name lookups");
		return -1;
	}
	d->host.ctx = d->ev;
	d->host.watch = host_watch;
	d->host.unwatch = host_unwatch;
	r = transport_find("tcp")->init(&d->tcp, &d->host, &link_upcalls);
	if (r < 0) {
		log_warnx("tcp transport: %s", strerror(-r));
		return -1;
	}
	for (size_t i = 0; i < cfg->npeers; i++) {
		d->links[i] = link_new(d, &cfg->peers[i]);
		if (d->links[i] == NULL)
			return -1;
		d->nlinks++;
	}
	return 0;
}

static int daemon_listen(struct daemon *d)
{
	const struct lds_tp_opts o = { 0 };

	for (size_t i = 0; i < d->cfg->npeers; i++) {
		const struct config_peer *p = &d->cfg->peers[i];
		struct daemon_listener *dl = NULL;
		int r;

		if (p->role != CONFIG_ROLE_LISTEN)
			continue;
		for (size_t j = 0; j < d->nlisteners; j++)
			if (strcmp(d->listeners[j].address, p->address) == 0 && d->listeners[j].port == p->port)
				dl = &d->listeners[j];
		if (dl)
			continue; /* peers sharing an address are told apart by HELLO */
		dl = &d->listeners[d->nlisteners];
		dl->d = d;
		dl->ops = transport_find(p->transport);
		snprintf(dl->address, sizeof(dl->address), "%s", p->address);
		dl->port = p->port;
		r = dl->ops->listen(d->tcp, p->address, p->port, &o, dl, &dl->l);
		if (r < 0) {
			log_warnx("%s:%d: peers: cluster %s: cannot listen on %s:%u: %s", d->cfg->file, p->line,
				  p->cluster, p->address, p->port, strerror(-r));
			return -1;
		}
		log_info("listening for peer gateways on %s:%u", p->address, p->port);
		d->nlisteners++;
	}
	return 0;
}

int daemon_start(struct daemon *d)
{
	if (daemon_listen(d) < 0)
		return -1;
	for (size_t i = 0; i < d->nlinks; i++)
		link_start(d->links[i]);
	return 0;
}

int daemon_tick(struct daemon *d, uint64_t now)
{
	int drained = 1;

	for (size_t i = 0; i < d->nlinks; i++) {
		link_tick(d->links[i], now);
		drained &= link_drained(d->links[i]);
	}
	link_tick_pending(now, HANDSHAKE_TIMEOUT);
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
		d->listeners[i].ops->listener_close(d->listeners[i].l);
	for (size_t i = 0; i < d->nlinks; i++)
		link_free(d->links[i]);
	d->nlinks = d->nlisteners = 0;
	resolver_free(d->resolver);
	d->resolver = NULL;
	if (d->tcp)
		transport_find("tcp")->fini(d->tcp);
	d->tcp = NULL;
	if (d->own_ev)
		evloop_free(d->ev);
	d->ev = NULL;
	d->own_ev = 0;
}
