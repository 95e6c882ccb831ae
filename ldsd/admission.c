/* admission.c - bounds on connections before authentication; see admission.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "auth.h"
#include "log.h"

#define NS 1000000000ull
#define WINDOW_NS ((uint64_t)ADMISSION_WINDOW_S * NS)
/* Sources remembered beyond those with connections open: their failures
 * must outlive their connections for the penalty to work. */
#define SPARE_SOURCES 64
/* An address that authenticated a connection this recently is a peer's:
 * the total limit, random early drop and the failure penalty do not apply
 * to it (only max_per_source does), so that an honest link reconnects
 * while a flood from other addresses holds every other slot, and a lossy
 * path on which it gives up on many attempts does not lock it out.  TCP
 * connections, unlike SYNs, cannot come from a forged address. */
#define TRUST_NS (3600ull * NS)
/* Distinct reasons logged in full per source and window. */
#define REASONS 4
#define BACKOFF_MIN_NS (10ull * 1000000)
#define BACKOFF_MAX_NS NS

struct adm_source {
	char addr[64];               /* "" = free */
	unsigned unauth;             /* its connections not yet authenticated */
	uint64_t window_ns;          /* start of its window, 0 = none yet */
	unsigned failures;           /* failed handshakes in the window */
	unsigned unlogged;           /* ...of which not logged in full */
	uint32_t reasons[REASONS];   /* hashes of the reasons logged in full */
	unsigned nreasons;
	unsigned dropped;            /* connections dropped at accept in the window */
	unsigned drops_unlogged;
	char last[160];              /* the latest failure not logged in full */
	uint64_t authed_ns;          /* when a connection from it last authenticated, 0 = never */
};

struct admission {
	struct config_handshake cfg;    /* a copy: a reload frees the configuration */
	unsigned unauth;
	struct adm_source *src;
	size_t nsrc;
	uint64_t rng;
	/* The log budget (ADMISSION_LINES a window, over all sources) and
	 * what went over it. */
	uint64_t lines_window_ns;
	unsigned lines;
	uint64_t quiet_failures, quiet_drops;
	/* accept() failing for lack of descriptors: an episode lasts until
	 * an accept succeeds; its start and end are logged at most once a
	 * window each, as a flood can free and take a descriptor many times. */
	int starving;
	uint64_t backoff_ns;
	uint64_t starved_drops;      /* since the last "accepting again" line */
	uint64_t starve_logged_ns, resume_logged_ns;
	uint64_t admitted, dropped, failed, accept_errors;
};

struct admission *admission_new(const struct config_handshake *cfg)
{
	struct admission *a = calloc(1, sizeof(*a));

	if (a == NULL)
		return NULL;
	a->cfg = *cfg;
	a->nsrc = (size_t)cfg->max_unauth + SPARE_SOURCES;
	a->src = calloc(a->nsrc, sizeof(*a->src));
	if (a->src == NULL) {
		free(a);
		return NULL;
	}
	/* Random early drop must not be predictable from outside. */
	if (auth_random(&a->rng, sizeof(a->rng)) < 0 || a->rng == 0)
		a->rng = 0x9E3779B97F4A7C15ull;
	return a;
}

void admission_free(struct admission *a)
{
	if (a == NULL)
		return;
	free(a->src);
	free(a);
}

static uint64_t adm_random(struct admission *a)
{
	/* xorshift64: enough to make drops unpredictable in timing. */
	a->rng ^= a->rng << 13;
	a->rng ^= a->rng >> 7;
	a->rng ^= a->rng << 17;
	return a->rng;
}

/* The address of "address:port" (IPv6 addresses hold colons too). */
static void adm_addr(const char *peer, char *addr, size_t len)
{
	const char *colon = strrchr(peer, ':');
	size_t n = colon ? (size_t)(colon - peer) : strlen(peer);

	snprintf(addr, len, "%.*s", (int)n, peer);
}

/* Starts a new window of the log budget once the last one is over. */
static void adm_budget_window(struct admission *a, uint64_t now)
{
	if (a->lines_window_ns == 0 || now - a->lines_window_ns >= WINDOW_NS) {
		if (a->quiet_failures || a->quiet_drops)
			log_warnx("peer port: %" PRIu64 " more failed handshakes and %" PRIu64
				  " dropped connections in the last %d s, over the log budget of %d lines",
				  a->quiet_failures, a->quiet_drops, ADMISSION_WINDOW_S, ADMISSION_LINES);
		a->quiet_failures = a->quiet_drops = 0;
		a->lines_window_ns = now;
		a->lines = 0;
	}
}

/* True if one more line fits the log budget of this window. */
static int adm_line_ok(struct admission *a, uint64_t now)
{
	adm_budget_window(a, now);
	if (a->lines >= ADMISSION_LINES)
		return 0;
	a->lines++;
	return 1;
}

/* Logs what s's window counted without logging it, and starts a new one. */
static void adm_end_window(struct admission *a, struct adm_source *s, uint64_t now)
{
	if (s->unlogged || s->drops_unlogged) {
		if (adm_line_ok(a, now))
			log_warnx("peer port: %u more failed handshakes and %u dropped connections from %s in the last "
				  "%d s%s%s%s",
				  s->unlogged, s->drops_unlogged, s->addr, ADMISSION_WINDOW_S, s->unlogged ? " (last: " : "",
				  s->unlogged ? s->last : "", s->unlogged ? ")" : "");
		else {
			a->quiet_failures += s->unlogged;
			a->quiet_drops += s->drops_unlogged;
		}
	}
	s->window_ns = now;
	s->failures = s->unlogged = s->dropped = s->drops_unlogged = s->nreasons = 0;
	s->last[0] = '\0';
}

static int adm_trusted(const struct adm_source *s, uint64_t now)
{
	return s->authed_ns && now - s->authed_ns < TRUST_NS;
}

static void adm_window(struct admission *a, struct adm_source *s, uint64_t now)
{
	if (s->window_ns == 0 || now - s->window_ns >= WINDOW_NS)
		adm_end_window(a, s, now);
}

/* True if s is a better entry to reuse than best: idle, untrusted first,
 * then the one whose window is oldest. */
static int adm_evictable(const struct adm_source *s, const struct adm_source *best, uint64_t now)
{
	if (s->unauth > 0)
		return 0;
	if (best == NULL || adm_trusted(best, now) > adm_trusted(s, now))
		return 1;
	return adm_trusted(best, now) == adm_trusted(s, now) && s->window_ns < best->window_ns;
}

/* addr's entry: found, a free one, or the idle one least worth keeping
 * (its counts logged first); NULL only if every entry holds connections
 * (trusted sources beyond SPARE_SOURCES doing so at once). */
static struct adm_source *adm_source(struct admission *a, const char *addr, uint64_t now)
{
	struct adm_source *free_s = NULL, *idle = NULL;

	for (size_t i = 0; i < a->nsrc; i++) {
		struct adm_source *s = &a->src[i];

		if (strcmp(s->addr, addr) == 0 && s->addr[0]) {
			adm_window(a, s, now);
			return s;
		}
		if (s->addr[0] == '\0' && free_s == NULL)
			free_s = s;
		else if (s->addr[0] && adm_evictable(s, idle, now))
			idle = s;
	}
	if (free_s == NULL && idle == NULL)
		return NULL;
	if (free_s == NULL) {
		adm_end_window(a, idle, now);
		free_s = idle;
	}
	memset(free_s, 0, sizeof(*free_s));
	snprintf(free_s->addr, sizeof(free_s->addr), "%s", addr);
	free_s->window_ns = now;
	return free_s;
}

/* Why a new connection from s is dropped, or NULL if it may stay. */
static const char *adm_drop_reason(struct admission *a, const struct adm_source *s, uint64_t now, char *buf,
				   size_t len)
{
	const struct config_handshake *c = &a->cfg;
	int trusted = adm_trusted(s, now);

	if (!trusted && s->failures >= c->max_failures) {
		snprintf(buf, len, "%u failed handshakes from it within %d s (max_failures)", s->failures,
			 ADMISSION_WINDOW_S);
		return buf;
	}
	if (s->unauth >= c->max_per_source) {
		snprintf(buf, len, "%u connections from it not authenticated yet (max_per_source)", s->unauth);
		return buf;
	}
	if (trusted)
		return NULL;
	if (a->unauth >= c->max_unauth) {
		snprintf(buf, len, "%u connections not authenticated yet (max_unauth)", a->unauth);
		return buf;
	}
	/* Random early drop, as OpenSSH's MaxStartups: from 0 just above
	 * early_drop to 1 at max_unauth. */
	if (a->unauth >= c->early_drop &&
	    adm_random(a) % (c->max_unauth - c->early_drop + 1) <= a->unauth - c->early_drop) {
		snprintf(buf, len, "%u connections not authenticated yet (random early drop above %u)", a->unauth,
			 c->early_drop);
		return buf;
	}
	return NULL;
}

int admission_admit(struct admission *a, const char *peer, uint64_t now_ns)
{
	struct adm_source *s;
	const char *why;
	char addr[sizeof(s->addr)], buf[128];

	if (a->starving) {
		a->starving = 0;
		a->backoff_ns = 0;
		if (a->resume_logged_ns == 0 || now_ns - a->resume_logged_ns >= WINDOW_NS) {
			log_info("peer port: accepting connections again; %" PRIu64
				 " were dropped for lack of descriptors", a->starved_drops);
			a->starved_drops = 0;
			a->resume_logged_ns = now_ns;
		}
	}
	adm_addr(peer, addr, sizeof(addr));
	s = adm_source(a, addr, now_ns);
	if (s == NULL) {
		a->dropped++;
		a->quiet_drops++;
		return -1;
	}
	why = adm_drop_reason(a, s, now_ns, buf, sizeof(buf));
	if (why != NULL) {
		a->dropped++;
		if (s->dropped++ == 0 && adm_line_ok(a, now_ns))
			log_warnx("peer port: connection from %s dropped before its handshake: %s; further drops from "
				  "%s are summed up every %d s",
				  peer, why, addr, ADMISSION_WINDOW_S);
		else
			s->drops_unlogged++;
		return -1;
	}
	s->unauth++;
	a->unauth++;
	a->admitted++;
	return 0;
}

/* True the first time why is seen from s in this window, while s has
 * REASONS to spare: one wrong key tried again and again is one line, a
 * wrong key and then a wrong version are two. */
static int adm_new_reason(struct adm_source *s, const char *why)
{
	uint32_t h = 2166136261u;

	for (const char *p = why; *p; p++)
		h = (h ^ (uint8_t)*p) * 16777619u;  /* FNV-1a */
	for (unsigned i = 0; i < s->nreasons; i++)
		if (s->reasons[i] == h)
			return 0;
	if (s->nreasons == REASONS)
		return 0;
	s->reasons[s->nreasons++] = h;
	return 1;
}

void admission_release(struct admission *a, const char *peer, const char *cluster, const char *why,
		       uint64_t now_ns)
{
	struct adm_source *s;
	char addr[sizeof(s->addr)];

	adm_addr(peer, addr, sizeof(addr));
	s = adm_source(a, addr, now_ns);
	if (s == NULL)
		return; /* cannot be: an admitted connection's source holds its entry */
	if (s->unauth > 0) {
		s->unauth--;
		a->unauth--;
	}
	if (why == NULL) {
		s->authed_ns = now_ns;
		return;
	}
	a->failed++;
	s->failures++;
	if (adm_new_reason(s, why) && adm_line_ok(a, now_ns)) {
		log_warnx("peer port: connection from %s%s%s failed its handshake: %s", peer, cluster ? " as cluster " : "",
			  cluster ? cluster : "", why);
	} else {
		s->unlogged++;
		snprintf(s->last, sizeof(s->last), "%s%s%s", cluster ? cluster : "", cluster ? ": " : "", why);
	}
	if (s->failures == a->cfg.max_failures && adm_line_ok(a, now_ns))
		log_warnx("peer port: %u failed handshakes from %s within %d s: its connections are dropped until "
			  "the %d s are over (max_failures)",
			  s->failures, addr, ADMISSION_WINDOW_S, ADMISSION_WINDOW_S);
}

uint64_t admission_accept_failed(struct admission *a, int err, uint64_t now_ns)
{
	a->accept_errors++;
	a->starved_drops++;
	if (!a->starving) {
		a->starving = 1;
		a->backoff_ns = BACKOFF_MIN_NS;
		if (a->starve_logged_ns == 0 || now_ns - a->starve_logged_ns >= WINDOW_NS) {
			log_warnx("peer port: cannot accept connections: %s; dropping them and pausing the listener "
				  "(%u not yet authenticated; is the descriptor limit, ulimit -n, too low?)",
				  strerror(-err), a->unauth);
			a->starve_logged_ns = now_ns;
		}
		return a->backoff_ns;
	}
	a->backoff_ns = a->backoff_ns * 2 > BACKOFF_MAX_NS ? BACKOFF_MAX_NS : a->backoff_ns * 2;
	return a->backoff_ns;
}

void admission_tick(struct admission *a, uint64_t now_ns)
{
	for (size_t i = 0; i < a->nsrc; i++) {
		struct adm_source *s = &a->src[i];

		if (s->addr[0] == '\0' || now_ns - s->window_ns < WINDOW_NS)
			continue;
		adm_end_window(a, s, now_ns);
		/* Nothing open and nothing to remember: the entry is free. */
		if (s->unauth == 0 && !adm_trusted(s, now_ns))
			s->addr[0] = '\0';
	}
	adm_budget_window(a, now_ns);
}

void admission_status_json(const struct admission *a, FILE *out)
{
	fprintf(out, "{\"unauth\":%u,\"admitted\":%" PRIu64 ",\"dropped\":%" PRIu64 ",\"failed\":%" PRIu64
		",\"accept_errors\":%" PRIu64 "}",
		a->unauth, a->admitted, a->dropped, a->failed, a->accept_errors);
}

void admission_status_text(const struct admission *a, FILE *out)
{
	fprintf(out, "peer port: %u connections not authenticated yet; since start %" PRIu64 " admitted, %" PRIu64
		" dropped at accept, %" PRIu64 " failed handshakes, %" PRIu64 " accept errors\n",
		a->unauth, a->admitted, a->dropped, a->failed, a->accept_errors);
}
