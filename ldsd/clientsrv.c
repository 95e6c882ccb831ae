/*
 * clientsrv.c - the client server as the rest of ldsd sees it
 * (clientsrv.h): its sockets and timer, messages and reports from links
 * handed to endpoints and clients, the once-a-round flush, the status.
 * Connections are clientconn.c's, what their frames do clientreq.c's,
 * the endpoints' queues clientep.c's; see client.h.
 */
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "client.h"
#include "clock.h"
#include "endpoint.h"
#include "execmsg.h"
#include "jobend.h"
#include "jobexec.h"
#include "link.h"
#include "listen.h"
#include "log.h"
#include "lostrep.h"

/* Every CS_TICK_MS: closes connections silent past hello_timeout, copies
 * payloads left in rings too long into their blocks, drops held messages
 * past undelivered_ttl, forgets names past their linger. */
static void cs_tick(uint64_t now_ns, void *arg)
{
	struct clientsrv *cs = arg;

	clientconn_expire(cs, now_ns);
	eptab_expire(&cs->eps, now_ns, clientep_drop, cs);
}

/* ---- from links ---------------------------------------------------------- */

/* True if endpoint is this gateway's own CLUSTER/ldsd.lost. */
static int cs_lostrep_name(const struct clientsrv *cs, const char *endpoint)
{
	size_t n = strlen(cs->d->cfg->cluster);

	return strncmp(endpoint, cs->d->cfg->cluster, n) == 0 && endpoint[n] == '/' &&
	       strcmp(endpoint + n + 1, LOSTREP_ENDPOINT) == 0;
}

void clientsrv_deliver(struct clientsrv *cs, struct link *from, struct rb_msg *m)
{
	struct endpoint *e;

	if (cs_lostrep_name(cs, m->rec.dst)) {
		link_peer_lost(from, m);
		return;
	}
	if (exec_reserved_name(m->rec.dst)) {
		jobexec_request(cs->d->jx, from, m);
		return;
	}
	m->origin = from;
	e = eptab_get(&cs->eps, m->rec.dst, clock_now_ns());
	if (e == NULL) {
		log_warnx("out of memory queueing a message for %s: dropped", m->rec.dst);
		link_undelivered(from, m, EP_DROP_POOL);
		return;
	}
	clientep_enqueue(cs, e, m);
}

uint8_t *clientsrv_place(struct clientsrv *cs, struct rb_msg *m)
{
	struct endpoint *e;

	if (cs_lostrep_name(cs, m->rec.dst) || exec_reserved_name(m->rec.dst))
		return NULL;
	e = eptab_find(&cs->eps, m->rec.dst);
	return e && e->client ? client_place(e->client, m) : NULL;
}

void clientsrv_acked(struct clientsrv *cs, uint64_t client, uint64_t id)
{
	struct client *c = client_by_id(cs, client);

	if (c != NULL)
		client_ack(c, id);
}

void clientsrv_lost(struct clientsrv *cs, struct link *l, uint64_t client, uint64_t id, const char *reason)
{
	struct client *c = client_by_id(cs, client);

	if (c == NULL)
		return;
	client_report_lost(c, l, id, reason);
}

void clientsrv_space(struct clientsrv *cs, struct link *l)
{
	cs->resume_pending = 1;
}

long clientsrv_end_job(struct clientsrv *cs, const char *tag, uid_t uid, char *why, size_t len)
{
	return jobend_end(&cs->eps, tag, uid, clock_now_ns(), clientep_drop, cs, why, len);
}

void clientsrv_flush(struct clientsrv *cs)
{
	if (cs->resume_pending) {
		cs->resume_pending = 0;
		clientconn_resume(cs);
	}
	for (struct client *c = cs->clients; c; c = c->next) {
		client_flush_acks(c);
		if (c->ctl_len > c->ctl_off || (c->ep && c->ep->queued > c->written && c->cur == NULL))
			client_write(c);
	}
}

int clientsrv_links_changed(struct clientsrv *cs)
{
	for (size_t i = 0; i < cs->d->nlinks; i++) {
		const struct link *l = cs->d->links[i];

		if (eptab_pool_of(&cs->eps, l) == NULL &&
		    eptab_pool(&cs->eps, l, link_recv_memory(l) / 100 * cs->d->cfg->clients.undelivered_share) < 0) {
			log_warnx("link %s: no room for its share of undelivered messages (%u links since start); "
				  "restart ldsd", link_name(l), EP_MAX_POOLS - 1);
			return -1;
		}
	}
	return 0;
}

static const struct client_upcalls cs_upcalls = {
	.event = client_event,
	.acked = clientsrv_acked,
};

struct clientsrv *clientsrv_new(struct daemon *d)
{
	struct clientsrv *cs = calloc(1, sizeof(*cs));
	const struct config_clients *lim = &d->cfg->clients;

	if (cs == NULL)
		return NULL;
	cs->d = d;
	cs->tcp_fd = -1;
	cs->unix_fd = -1;
	cs->tick_id = -1;
	cs->handlers = &clientreq_handlers;
	cs->up = &cs_upcalls;
	if (eptab_init(&cs->eps, (uint64_t)(lim->undelivered_ttl * 1e9), (uint64_t)(lim->undelivered_ttl * 1e9)) < 0 ||
	    eptab_pool(&cs->eps, NULL, CS_LOCAL_MEMORY / 100 * lim->undelivered_share) < 0)
		goto fail;
	if (clientsrv_links_changed(cs) < 0)
		goto fail;
	cs->tick_id = evloop_tick_add(d->ev, CS_TICK_MS, cs_tick, cs);
	if (cs->tick_id < 0)
		goto fail;
	cs->unix_fd = listen_unix(d->cfg->client_socket, d->cfg->clients.socket_perm, d->cfg->clients.socket_uid,
				  d->cfg->clients.socket_gid, "clients.socket");
	if (cs->unix_fd < 0)
		goto fail;
	if (evloop_watch(d->ev, cs->unix_fd, EV_READ, clientconn_accept, cs) < 0)
		goto fail;
	if (d->cfg->client_tcp[0]) {
		cs->tcp_fd = listen_tcp(d->cfg->client_tcp, "clients.tcp");
		if (cs->tcp_fd < 0 || evloop_watch(d->ev, cs->tcp_fd, EV_READ, clientconn_accept, cs) < 0)
			goto fail;
	}
	if (clientrdma_start(cs) < 0)
		goto fail;
	return cs;
fail:
	clientsrv_free(cs);
	return NULL;
}

void clientsrv_stop_accepting(struct clientsrv *cs)
{
	if (cs->unix_fd >= 0) {
		evloop_unwatch(cs->d->ev, cs->unix_fd);
		close(cs->unix_fd);
		unlink(cs->d->cfg->client_socket);
		cs->unix_fd = -1;
	}
	if (cs->tcp_fd >= 0) {
		evloop_unwatch(cs->d->ev, cs->tcp_fd);
		close(cs->tcp_fd);
		cs->tcp_fd = -1;
	}
	clientrdma_stop_accepting(cs);
}

void clientsrv_free(struct clientsrv *cs)
{
	if (cs == NULL)
		return;
	clientsrv_stop_accepting(cs);
	if (cs->tick_id > 0)
		evloop_tick_del(cs->d->ev, cs->tick_id);
	while (cs->clients)
		client_close(cs->clients, "shutting down");
	clientrdma_free(cs);
	eptab_free(&cs->eps);
	free(cs);
}

int clientsrv_drained(const struct clientsrv *cs)
{
	for (const struct client *c = cs->clients; c; c = c->next)
		if (!c->hung_up && (c->ctl_len > c->ctl_off || c->ack_first || (c->ep && c->ep->head)))
			return 0;
	return 1;
}

struct status_ctx {
	FILE *out;
	int first;
};

static void ep_status_json(void *arg, const struct endpoint *e)
{
	struct status_ctx *x = arg;
	const struct client *c = e->client;

	fprintf(x->out, "%s{\"name\":\"%s\",\"connected\":%s,\"queued\":%zu,\"queued_bytes\":%zu", x->first ? "" : ",",
		e->name, c ? "true" : "false", e->queued, e->queued_bytes);
	if (e->owned)
		fprintf(x->out, ",\"owner_uid\":%d", (int)e->owner);
	if (c)
		fprintf(x->out, ",\"msgs_in\":%" PRIu64 ",\"bytes_in\":%" PRIu64 ",\"msgs_out\":%" PRIu64
			",\"bytes_out\":%" PRIu64 ",\"waiting_for_memory\":%s,\"hung_up\":%s,\"pid\":%d,\"shm\":%s",
			c->msgs_in, c->bytes_in, c->msgs_out, c->bytes_out, c->paused ? "true" : "false",
			c->hung_up ? "true" : "false", (int)c->pid, c->shm ? "true" : "false");
	fputc('}', x->out);
	x->first = 0;
}

void clientsrv_status_json(const struct clientsrv *cs, FILE *out)
{
	struct status_ctx x = { out, 1 };

	fprintf(out, "{\"local_messages\":%" PRIu64 ",\"refused\":%" PRIu64 ",\"undelivered\":%" PRIu64
		",\"undelivered_job_ended\":%" PRIu64 ",\"clients\":%zu,\"clients_refused\":%" PRIu64
		",\"tcp_key_failures\":%" PRIu64 ",\"placed_bytes\":%" PRIu64 ",\"placed_moved_bytes\":%" PRIu64
		",\"endpoints\":[",
		cs->msgs_local, cs->msgs_refused, cs->msgs_undelivered, cs->msgs_ended, cs->nclients,
		cs->clients_refused, cs->tcp_key_failures, cs->placed_bytes, cs->placed_moved_bytes);
	eptab_foreach(&cs->eps, ep_status_json, &x);
	fputs("]}", out);
}

static void ep_status_text(void *arg, const struct endpoint *e)
{
	struct status_ctx *x = arg;
	const struct client *c = e->client;

	fprintf(x->out, "  %-32s %s, %zu queued (%zu bytes)", e->name,
		c == NULL ? "no process" : c->hung_up ? "hung up" : "connected", e->queued, e->queued_bytes);
	if (c)
		fprintf(x->out, ", in %" PRIu64 " msgs/%" PRIu64 " B, out %" PRIu64 " msgs/%" PRIu64 " B%s",
			c->msgs_in, c->bytes_in, c->msgs_out, c->bytes_out, c->paused ? ", waiting for memory" : "");
	fputc('\n', x->out);
}

void clientsrv_status_text(const struct clientsrv *cs, FILE *out)
{
	struct status_ctx x = { out, 1 };

	fprintf(out, "clients: %zu connected, %" PRIu64 " refused; %" PRIu64 " messages not delivered (%" PRIu64
		" of ended jobs); %" PRIu64 " bytes reassembled in their rings, %" PRIu64 " of them moved out\n",
		cs->nclients, cs->clients_refused, cs->msgs_undelivered, cs->msgs_ended, cs->placed_bytes,
		cs->placed_moved_bytes);
	fprintf(out, "endpoints:\n");
	eptab_foreach(&cs->eps, ep_status_text, &x);
}
