/* clientkey.c - the key check of clients.tcp on ldsd's side; see client.h
 * and libclient/clientauth.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

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

/* Where a TCP client comes from, for the log: an administrator blocks or
 * asks that address. */
static void peer_address(int fd, char *buf, size_t len)
{
	struct sockaddr_storage ss;
	socklen_t sl = sizeof(ss);
	char host[INET6_ADDRSTRLEN] = "?";
	unsigned port = 0;

	if (getpeername(fd, (struct sockaddr *)&ss, &sl) == 0) {
		if (ss.ss_family == AF_INET) {
			const struct sockaddr_in *in = (const struct sockaddr_in *)&ss;

			inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
			port = ntohs(in->sin_port);
		} else if (ss.ss_family == AF_INET6) {
			const struct sockaddr_in6 *in6 = (const struct sockaddr_in6 *)&ss;

			inet_ntop(AF_INET6, &in6->sin6_addr, host, sizeof(host));
			port = ntohs(in6->sin6_port);
		}
	}
	snprintf(buf, len, "%s port %u", host, port);
}

/* Tells the client why it is closed, best effort (it is closed next). */
static void refuse(struct client *c, const char *text)
{
	struct cp_msg e = { .type = CP_ERROR, .err = EACCES };
	uint8_t buf[CP_HDR_LEN + 16 + CP_TEXT_MAX];
	size_t n;

	snprintf(e.text, sizeof(e.text), "%s", text);
	n = cp_encode(buf, sizeof(buf), &e);
	if (n > 0 && write(c->fd, buf, n) < 0)
		log_debug("client %s: could not say why it is closed: %s", c->peer, strerror(errno));
}

int clientkey_check(struct client *c, const struct cp_msg *m)
{
	const struct config_clients *k = &c->cs->d->cfg->clients;
	struct cp_msg answer = { .type = CP_PROOF };
	struct clientsrv *cs = c->cs;
	char from[INET6_ADDRSTRLEN + 16];

	if (m->type != CP_PROOF) {
		peer_address(c->fd, from, sizeof(from));
		log_warnx("client %s from %s: sent %s before proving it holds clients.tcp's key; closing it "
			  "(a liblds without the key check, or no LDS_KEY_FILE?)", c->peer, from, cp_type_names[m->type]);
		refuse(c, "this ldsd's TCP port needs a key first: set LDS_KEY_FILE");
		return -1;
	}
	if (!cpauth_verify(k->tcp_key, k->tcp_key_len, CPAUTH_CLIENT, c->nonce, m->nonce, m->mac)) {
		cs->tcp_key_failures++;
		/* Rate-limited: anyone who reaches the port can make these. */
		if (cs->tcp_key_failures == 1 || cs->tcp_key_failures % 100 == 0) {
			peer_address(c->fd, from, sizeof(from));
			log_warnx("client %s from %s: wrong key (not the one in %s); closing it "
				  "(%" PRIu64 " such so far)", c->peer, from, k->tcp_key_file, cs->tcp_key_failures);
		}
		refuse(c, "wrong key: LDS_KEY_FILE does not hold the key of clients.tcp_key_file");
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
