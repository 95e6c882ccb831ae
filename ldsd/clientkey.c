/* clientkey.c - the key check of clients.tcp on ldsd's side; see client.h
 * and libclient/clientauth.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <netdb.h>

#include "client.h"
#include "daemon.h"
#include "log.h"

int clientkey_challenge(struct client *c)
{
	struct cp_msg m = { .type = CP_CHALLENGE };
	int rc = cpauth_nonce(c->nonce);

	if (rc < 0)
		return rc;
	memcpy(m.nonce, c->nonce, sizeof(m.nonce));
	return client_ctl_append(c, &m);
}

void clientkey_from(struct client *c, const struct sockaddr *sa, socklen_t len)
{
	char host[INET6_ADDRSTRLEN] = "?", port[8] = "0";

	getnameinfo(sa, len, host, sizeof(host), port, sizeof(port), NI_NUMERICHOST | NI_NUMERICSERV);
	snprintf(c->from, sizeof(c->from), "%s port %s", host, port);
}

int clientkey_check(struct client *c, const struct cp_msg *m)
{
	const struct config_clients *k = &c->cs->d->cfg->clients;
	struct cp_msg answer = { .type = CP_PROOF };
	struct clientsrv *cs = c->cs;

	if (m->type != CP_PROOF) {
		log_warnx("client %s from %s: sent %s before proving it holds clients.tcp's key; closing it "
			  "(a liblds without the key check, or no LDS_KEY_FILE?)", c->peer, c->from, cp_type_names[m->type]);
		client_tell_closing(c->fd, EACCES, "this ldsd's TCP port needs a key first: set LDS_KEY_FILE");
		return -1;
	}
	if (!cpauth_verify(k->tcp_key, k->tcp_key_len, CPAUTH_CLIENT, c->nonce, m->nonce, m->mac)) {
		cs->tcp_key_failures++;
		/* Rate-limited: anyone who reaches the port can make these. */
		if (cs->tcp_key_failures == 1 || cs->tcp_key_failures % 100 == 0)
			log_warnx("client %s from %s: wrong key (not the one in %s); closing it "
				  "(%" PRIu64 " such so far)", c->peer, c->from, k->tcp_key_file, cs->tcp_key_failures);
		client_tell_closing(c->fd, EACCES, "wrong key: LDS_KEY_FILE does not hold the key of clients.tcp_key_file");
		return -1;
	}
	memcpy(answer.nonce, m->nonce, sizeof(answer.nonce));
	if (cpauth_mac(k->tcp_key, k->tcp_key_len, CPAUTH_DAEMON, c->nonce, m->nonce, answer.mac) < 0 ||
	    client_ctl_append(c, &answer) < 0) {
		log_warnx("client %s: cannot answer its key check; closing it", c->peer);
		return -1;
	}
	c->keyed = 1;
	return 0;
}
