/*
 * thesis.c - the thesis API (Appendix A: LDS_Init, LDS_Send, LDS_Recv...)
 * over one process-wide liblds handle.  docs/thesis-api.md explains the
 * configuration keys and what changed now that ldsd owns the WAN links.
 *
 * The thesis's model is one byte stream each way between a client and its
 * server.  LDS_Send cuts the caller's bytes into messages of at most
 * lds_max_msg bytes; LDS_Recv joins and splits received messages so that it
 * returns exactly the count asked for.
 *
 * A stream must not get holes, so this layer keeps a copy of every message
 * until it is acknowledged, resends (lds_resend, same id) what a gateway
 * crash lost, and reconnects when the local gateway restarts; the
 * receiving liblds drops copies of what it already had.  The copies are
 * bounded by what the gateways let one destination have outstanding.
 */
#include <ctype.h>
#include <errno.h>
#include <limits.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>
#include <unistd.h>

#include "../ldsd/clock.h"
#include "clientproto.h"
#include "lds.h"

#define DEFAULT_CONFIG   "LDN_Service.ini"
#define SERVER_ENDPOINT  "lds-server"
#define CLIENT_ENDPOINT  "lds-client"
#define INIT_TIMEOUT_MS  30000
#define FINALIZE_WAIT_MS 60000
#define RECONNECT_MS     INIT_TIMEOUT_MS
#define RECV_POLL_MS     100   /* LDS_Recv looks for losses to resend */

/* Values as read; all are strings until finish_config checks them. */
struct thesis_cfg {
	char server[2];
	char host[WIRE_NAME_MAX + 1];     /* ServerHostName: the server's cluster */
	char socket[256];
	char endpoint[WIRE_NAME_MAX + 1];
	char peer[WIRE_ENDPOINT_MAX + 1];
};

/* A message sent and not yet acknowledged, in id order. */
struct kept {
	struct kept *next;
	uint64_t id;
	int lost;                         /* reported lost: to be resent */
	size_t len;
	unsigned char data[];
};

/* A message from an endpoint other than a client's Peer: not part of the
 * stream, but not ours to throw away either; LDS_Finalize frees it. */
struct aside {
	struct aside *next;
	struct lds_msg m;
	unsigned char data[];
};

static struct {
	char config[PATH_MAX];            /* "" = DEFAULT_CONFIG */
	struct lds *h;                    /* NULL outside LDS_Init..LDS_Finalize */
	int rank;
	char peer[WIRE_ENDPOINT_MAX + 1]; /* "" until a server hears from someone */
	struct lds_msg cur;               /* message LDS_Recv is reading */
	size_t cur_off;
	struct aside *aside;
	struct kept *kept, *kept_tail;
	int hole;                         /* a message was refused: the stream is broken */
} g;

/* ---- configuration file ----------------------------------------------- */

static int is_bit(const char *s)
{
	return (s[0] == '0' || s[0] == '1') && s[1] == '\0';
}

static int is_count(const char *s)
{
	size_t n = strspn(s, "0123456789");

	return n > 0 && n <= 10 && s[n] == '\0';
}

static int is_nonempty(const char *s)
{
	return s[0] != '\0';
}

/* Keys of Table A-1 and LDS's additions.  size 0: the key is the gateway's
 * business now (ldsd.conf); it is checked and ignored. */
static const struct cfg_key {
	const char *name;
	int (*valid)(const char *value);
	size_t off, size;
} cfg_keys[] = {
	{ "Server", is_bit, offsetof(struct thesis_cfg, server), sizeof(((struct thesis_cfg *)0)->server) },
	{ "ServerHostName", wire_name_valid, offsetof(struct thesis_cfg, host), sizeof(((struct thesis_cfg *)0)->host) },
	{ "BlockSize", is_count, 0, 0 },
	{ "SendMemory", is_count, 0, 0 },
	{ "RecvMemory", is_count, 0, 0 },
	{ "SenderPort", is_count, 0, 0 },
	{ "ReceiverPort", is_count, 0, 0 },
	{ "Socket", is_nonempty, offsetof(struct thesis_cfg, socket), sizeof(((struct thesis_cfg *)0)->socket) },
	{ "Endpoint", wire_name_valid, offsetof(struct thesis_cfg, endpoint), sizeof(((struct thesis_cfg *)0)->endpoint) },
	{ "Peer", wire_endpoint_valid, offsetof(struct thesis_cfg, peer), sizeof(((struct thesis_cfg *)0)->peer) },
};

static char *skip_space(char *s)
{
	while (isspace((unsigned char)*s))
		s++;
	return s;
}

static void trim_end(char *s)
{
	size_t n = strlen(s);

	while (n > 0 && isspace((unsigned char)s[n - 1]))
		s[--n] = '\0';
}

/* The value after '=': "quoted" or bare up to a comment.  '#' and ';' start
 * comments, which also makes Figure A-5's C-style trailing ';' harmless. */
static char *parse_value(char *v)
{
	char *end;

	v = skip_space(v);
	if (*v != '"') {
		v[strcspn(v, "#;")] = '\0';
		trim_end(v);
		return v;
	}
	end = strchr(v + 1, '"');
	if (end == NULL)
		return NULL;
	*end = '\0';
	end = skip_space(end + 1);
	if (*end != '\0' && *end != '#' && *end != ';')
		return NULL;
	return v + 1;
}

static int set_key(struct thesis_cfg *c, const char *key, const char *value)
{
	for (size_t i = 0; i < sizeof(cfg_keys) / sizeof(cfg_keys[0]); i++) {
		const struct cfg_key *k = &cfg_keys[i];
		size_t n = strlen(value);

		if (strcasecmp(k->name, key) != 0)
			continue;
		if (!k->valid(value) || (k->size != 0 && n >= k->size))
			return LDS_ECONFIG;
		if (k->size != 0)
			memcpy((char *)c + k->off, value, n + 1);
		return LDS_OK;
	}
	return LDS_ECONFIG;
}

static int parse_line(char *line, struct thesis_cfg *c)
{
	char *s = skip_space(line), *eq, *value;

	if (*s == '\0' || *s == '#' || *s == ';')
		return LDS_OK;
	eq = strchr(s, '=');
	if (eq == NULL)
		return LDS_ECONFIG;
	*eq = '\0';
	trim_end(s);
	value = parse_value(eq + 1);
	if (value == NULL)
		return LDS_ECONFIG;
	return set_key(c, s, value);
}

/* Required keys and the defaults that depend on Server. */
static int finish_config(struct thesis_cfg *c)
{
	int server = c->server[0] == '1';

	if (c->server[0] == '\0')
		return LDS_ECONFIG;
	if (c->endpoint[0] == '\0')
		strcpy(c->endpoint, server ? SERVER_ENDPOINT : CLIENT_ENDPOINT);
	if (!server && c->peer[0] == '\0') {
		if (c->host[0] == '\0')
			return LDS_ECONFIG;
		snprintf(c->peer, sizeof(c->peer), "%s/%s", c->host, SERVER_ENDPOINT);
	}
	return LDS_OK;
}

static int read_config(const char *path, struct thesis_cfg *c)
{
	FILE *f = fopen(path, "r");
	char *line = NULL;
	size_t cap = 0;
	ssize_t n;
	int rc = LDS_OK, first = 1;

	memset(c, 0, sizeof(*c));
	if (f == NULL)
		return LDS_ECONFIG;
	while (rc == LDS_OK && (n = getline(&line, &cap, f)) >= 0) {
		char *s = line;

		/* Files written on Windows may start with a UTF-8 byte order mark. */
		if (first && strncmp(s, "\xEF\xBB\xBF", 3) == 0)
			s += 3;
		first = 0;
		rc = strlen(line) == (size_t)n ? parse_line(s, c) : LDS_ECONFIG;
	}
	if (rc == LDS_OK && ferror(f))
		rc = LDS_ECONFIG;
	free(line);
	if (fclose(f) != 0 && rc == LDS_OK)
		rc = LDS_ECONFIG;
	return rc == LDS_OK ? finish_config(c) : rc;
}

/* ---- the API ---------------------------------------------------------- */

int LDSM_SetConfigFile(char *filename)
{
	if (g.h != NULL)
		return LDS_ESTATE;
	if (filename == NULL || filename[0] == '\0' || strlen(filename) >= sizeof(g.config))
		return LDS_EARG;
	if (access(filename, R_OK) < 0)
		return LDS_ECONFIG;
	strcpy(g.config, filename);
	return LDS_OK;
}

static int open_error(int err)
{
	switch (-err) {
	case EINVAL:
	case ENAMETOOLONG:
		return LDS_ECONFIG;
	case EADDRINUSE:
	case EPROTO:
	case EPROTONOSUPPORT:
	case ENOMEM:
		return LDS_EIO;
	default:
		return LDS_ECONNECT;
	}
}

int LDS_Init(int aitCommInstances)
{
	struct thesis_cfg c;
	int rc, err = 0;

	if (g.h != NULL)
		return LDS_ESTATE;
	/* The number of pipes is ldsd's link configuration now (streams);
	 * the argument is checked for sense and otherwise ignored. */
	if (aitCommInstances < 1)
		return LDS_EARG;
	rc = read_config(g.config[0] != '\0' ? g.config : DEFAULT_CONFIG, &c);
	if (rc != LDS_OK)
		return rc;
	g.h = lds_open(c.socket[0] != '\0' ? c.socket : NULL, c.endpoint, INIT_TIMEOUT_MS, &err);
	if (g.h == NULL)
		return open_error(err);
	/* Acknowledgements free the copies kept for resending. */
	lds_set_ack_events(g.h, 1);
	g.rank = c.server[0] == '1';
	memcpy(g.peer, c.peer, sizeof(g.peer));
	return LDS_OK;
}

int LDS_Rank(void)
{
	return g.h != NULL ? g.rank : LDS_ESTATE;
}

/* ---- copies kept for resending ---------------------------------------- */

static int keep(uint64_t id, const void *p, size_t n)
{
	struct kept *k = malloc(sizeof(*k) + n);

	if (k == NULL)
		return LDS_EIO;
	k->next = NULL;
	k->id = id;
	k->lost = 0;
	k->len = n;
	memcpy(k->data, p, n);
	if (g.kept_tail)
		g.kept_tail->next = k;
	else
		g.kept = k;
	g.kept_tail = k;
	return LDS_OK;
}

/* Applies one outcome to the copies with ids first..last: acknowledged
 * ones go, lost ones are marked for resending, refused ones leave a hole. */
static void kept_outcome(const struct lds_event *ev)
{
	struct kept **pp = &g.kept, *prev = NULL;

	if (ev->type == LDS_EV_ERROR && ev->first != 0)
		g.hole = 1;
	while (*pp && (*pp)->id <= ev->last) {
		struct kept *k = *pp;

		if (k->id >= ev->first && ev->type != LDS_EV_LOST) {
			*pp = k->next;
			if (g.kept_tail == k)
				g.kept_tail = prev;
			free(k);
			continue;
		}
		if (k->id >= ev->first)
			k->lost = 1;
		prev = k;
		pp = &k->next;
	}
}

/* Takes every pending event.  Returns how many, and sets *lost if one was
 * a loss. */
static int take_events(int *lost)
{
	struct lds_event ev;
	int n = 0;

	while (lds_next_event(g.h, &ev) == 1) {
		kept_outcome(&ev);
		*lost |= ev.type == LDS_EV_LOST;
		n++;
	}
	return n;
}

/* The local gateway went away: connect again.  The messages in doubt are
 * then reported lost, and resend_lost must resend them before anything
 * new is sent. */
static int recover(int rc)
{
	if (rc != -ECONNRESET || lds_reconnect(g.h, RECONNECT_MS) < 0)
		return LDS_EIO;
	return LDS_OK;
}

/* Waits until no message is in doubt (timeout_ms < 0: for ever). */
static int settle_all(int timeout_ms)
{
	struct lds_stats st;
	int rc;

	lds_get_stats(g.h, &st);
	rc = lds_wait_settled(g.h, st.sent, timeout_ms);
	return rc < 0 ? recover(rc) : LDS_OK;
}

/* Resends what was reported lost, oldest first.  After a loss it first
 * waits until nothing is in doubt and takes every event: the gateway
 * refuses newer messages to the peer until the application has taken
 * every loss, so resending at once would only have them refused too. */
static int resend_lost(void)
{
	struct kept *k = NULL;     /* the search for lost copies goes on here */

	for (;;) {
		int lost = 0, rc;

		/* Events free copies: the search starts over. */
		if (take_events(&lost) > 0)
			k = NULL;
		if (lost) {
			rc = settle_all(-1);
			if (rc != LDS_OK)
				return rc;
			continue;
		}
		for (k = k ? k : g.kept; k && !k->lost; k = k->next)
			;
		if (k == NULL)
			break;
		rc = lds_resend(g.h, g.peer, k->data, k->len, k->id);
		if (rc == 0)
			k->lost = 0;
		else if (recover(rc) != LDS_OK)
			return LDS_EIO;
	}
	return g.hole ? LDS_EIO : LDS_OK;
}

int LDS_Send(void *buf, int count)
{
	const unsigned char *p = buf;
	size_t left = (size_t)count, max;
	int rc;

	if (g.h == NULL || g.peer[0] == '\0')
		return LDS_ESTATE;
	if (count < 0 || (buf == NULL && count > 0))
		return LDS_EARG;
	rc = resend_lost();
	if (rc != LDS_OK)
		return rc;
	max = lds_max_msg(g.h);
	while (left > 0) {
		size_t n = left < max ? left : max;
		uint64_t id;

		rc = lds_send(g.h, g.peer, p, n, &id);
		if (rc == -EINVAL)
			return LDS_EARG;
		if (rc < 0) {
			/* Not sent: it goes again after what the lost
			 * connection left in doubt. */
			if (recover(rc) != LDS_OK || resend_lost() != LDS_OK)
				return LDS_EIO;
			continue;
		}
		if (keep(id, p, n) != LDS_OK)
			return LDS_EIO;
		p += n;
		left -= n;
	}
	return LDS_OK;
}

static int set_aside(const struct lds_msg *m)
{
	struct aside *a = malloc(sizeof(*a) + m->len);

	if (a == NULL)
		return LDS_EIO;
	a->m = *m;
	a->m.data = a->data;
	memcpy(a->data, m->data, m->len);
	a->next = g.aside;
	g.aside = a;
	return LDS_OK;
}

/* A server takes its stream from whoever writes to it and answers the
 * first of them; a client listens to its Peer only. */
static int next_stream_msg(void)
{
	for (;;) {
		struct lds_msg m;
		int rc = lds_recv(g.h, &m, RECV_POLL_MS);

		/* What was lost while we wait goes again now: the answer we
		 * wait for may be to a message lost with a gateway. */
		if (rc == -ETIMEDOUT) {
			rc = resend_lost();
			if (rc != LDS_OK)
				return rc;
			continue;
		}
		if (rc < 0) {
			if (recover(rc) != LDS_OK || resend_lost() != LDS_OK)
				return LDS_EIO;
			continue;
		}
		if (g.rank == 1 && g.peer[0] == '\0')
			memcpy(g.peer, m.src, sizeof(g.peer));
		if (g.rank == 1 || strcmp(m.src, g.peer) == 0) {
			g.cur = m;
			g.cur_off = 0;
			return LDS_OK;
		}
		rc = set_aside(&m);
		if (rc != LDS_OK)
			return rc;
	}
}

int LDS_Recv(void *buf, int count)
{
	unsigned char *p = buf;
	size_t left = (size_t)count;

	if (g.h == NULL)
		return LDS_ESTATE;
	if (count < 0 || (buf == NULL && count > 0))
		return LDS_EARG;
	while (left > 0) {
		size_t n = g.cur.len - g.cur_off;

		if (n == 0) {
			int rc = next_stream_msg();

			if (rc != LDS_OK)
				return rc;
			continue;
		}
		if (n > left)
			n = left;
		memcpy(p, (const unsigned char *)g.cur.data + g.cur_off, n);
		g.cur_off += n;
		p += n;
		left -= n;
	}
	return LDS_OK;
}

int LDS_Finalize(void)
{
	int64_t deadline = (int64_t)clock_now_ns() / 1000000 + FINALIZE_WAIT_MS;
	int rc = LDS_OK;

	if (g.h == NULL)
		return LDS_ESTATE;
	/* Everything sent must be acknowledged; what is lost meanwhile goes
	 * again. */
	while (rc == LDS_OK && g.kept != NULL) {
		int64_t left = deadline - (int64_t)clock_now_ns() / 1000000;

		rc = left > 0 ? resend_lost() : LDS_EIO;
		if (rc == LDS_OK && g.kept != NULL)
			rc = settle_all((int)left);
	}
	if (g.hole)
		rc = LDS_EIO;
	if (lds_close(g.h) < 0)
		rc = LDS_EIO;
	while (g.aside != NULL) {
		struct aside *a = g.aside;

		g.aside = a->next;
		free(a);
	}
	while (g.kept != NULL) {
		struct kept *k = g.kept;

		g.kept = k->next;
		free(k);
	}
	g.kept_tail = NULL;
	g.hole = 0;
	g.h = NULL;
	g.peer[0] = '\0';
	memset(&g.cur, 0, sizeof(g.cur));
	g.cur_off = 0;
	return rc;
}
