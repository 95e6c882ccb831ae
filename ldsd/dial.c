/* dial.c - addresses to connect to, and the log of failed connects; see dial.h. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#include "clock.h"
#include "dial.h"
#include "log.h"

#define NS 1000000000ull

/* The log entry of key: its own, else the one used longest ago. */
static struct dial_said *dial_said(struct dial *d, const char *key)
{
	struct dial_said *old = &d->said[0];

	for (size_t i = 0; i < sizeof(d->said) / sizeof(d->said[0]); i++) {
		if (strcmp(d->said[i].key, key) == 0)
			return &d->said[i];
		if (d->said[i].ns < old->ns)
			old = &d->said[i];
	}
	memset(old, 0, sizeof(*old));
	snprintf(old->key, sizeof(old->key), "%s", key);
	return old;
}

/* Says what failed, for key (an address, or the lookup): at once if it is
 * news (another reason, or the last line is a window old), else counts it
 * for the line that says how many more failed. */
static void dial_say(struct dial *d, uint64_t now, const char *key, const char *fmt, ...)
	__attribute__((format(printf, 4, 5)));
static void dial_say(struct dial *d, uint64_t now, const char *key, const char *fmt, ...)
{
	struct dial_said *e = dial_said(d, key);
	char msg[sizeof(e->msg)];
	va_list ap;
	int same;

	va_start(ap, fmt);
	vsnprintf(msg, sizeof(msg), fmt, ap);
	va_end(ap);
	same = e->ns != 0 && strcmp(msg, e->msg) == 0;
	if (same && now - e->ns < (uint64_t)(DIAL_LOG_WINDOW_S * NS)) {
		e->unsaid++;
		return;
	}
	/* The same again after a window: this one is among those counted. */
	e->unsaid += same;
	if (e->unsaid > 0)
		log_warnx("link %s: %u more in the last %.0f s: %s", d->name, e->unsaid, (double)(now - e->ns) / NS,
			  e->msg);
	if (!same)
		log_warnx("link %s: %s", d->name, msg);
	snprintf(e->msg, sizeof(e->msg), "%s", msg);
	e->ns = now;
	e->unsaid = 0;
}

void dial_init(struct dial *d, struct resolver *rs, const char *name, const char *host, uint16_t port,
	       dial_ready_cb *ready, void *arg)
{
	struct resolve_result r;

	memset(d, 0, sizeof(*d));
	d->rs = rs;
	snprintf(d->name, sizeof(d->name), "%s", name);
	snprintf(d->host, sizeof(d->host), "%s", host);
	d->port = port;
	d->ready = ready;
	d->arg = arg;
	if (resolve_numeric(host, port, &r) == 0) {
		d->numeric = 1;
		d->n = r.n;
		memcpy(d->addrs, r.addrs, r.n * sizeof(r.addrs[0]));
	}
}

void dial_fini(struct dial *d)
{
	resolve_cancel(d->req);
	d->req = NULL;
}

static void dial_looked_up(void *arg, const struct resolve_result *r)
{
	struct dial *d = arg;
	uint64_t now = clock_now_ns();

	d->req = NULL;
	d->looked_up_ns = now;
	d->lookup_error[0] = '\0';
	if (r->n > 0) {
		d->n = r->n;
		memcpy(d->addrs, r->addrs, r->n * sizeof(r->addrs[0]));
		d->failed = 0;
		d->good = 0;
		log_debug("link %s: %s has %zu addresses, trying %s first", d->name, d->host, d->n, d->addrs[0].text);
	} else {
		snprintf(d->lookup_error, sizeof(d->lookup_error), "cannot resolve \"%s\": %s", d->host,
			 resolve_strerror(r));
		dial_say(d, now, "lookup", "%s", d->lookup_error);
	}
	d->ready(d->arg);
}

/* The first address of this round not yet failed, from the one that last
 * worked; -1 if every one failed. */
static int dial_next(const struct dial *d)
{
	for (size_t i = 0; i < d->n; i++) {
		size_t k = (d->good + i) % d->n;

		if (!(d->failed & (1u << k)))
			return (int)k;
	}
	return -1;
}

int dial_pick(struct dial *d, uint64_t now, struct resolve_addr *out)
{
	int stale = d->looked_up_ns == 0 || now - d->looked_up_ns >= (uint64_t)(DIAL_RELOOKUP_S * NS);
	int k;

	if (d->req != NULL)
		return 0;
	k = dial_next(d);
	if (!d->numeric && (d->n == 0 || k < 0) && stale) {
		d->req = resolver_start(d->rs, d->host, d->port, dial_looked_up, d);
		if (d->req != NULL)
			return 0;
		dial_say(d, now, "lookup", "cannot look up \"%s\": %s", d->host, strerror(errno));
	}
	if (d->n == 0)
		return -1;
	if (k < 0) {
		d->failed = 0; /* a new round over the addresses we have */
		k = dial_next(d);
	}
	*out = d->addrs[k];
	return 1;
}

static int dial_find(const struct dial *d, const char *addr)
{
	for (size_t i = 0; i < d->n; i++)
		if (strcmp(d->addrs[i].text, addr) == 0)
			return (int)i;
	return -1;
}

int dial_failed(struct dial *d, const char *addr, const char *why, uint64_t now)
{
	int k = dial_find(d, addr);

	dial_say(d, now, addr, "cannot connect to %s: %s", addr, why);
	if (k < 0)
		return 0;
	d->failed |= 1u << k;
	return dial_next(d) >= 0;
}

void dial_up(struct dial *d, const char *addr)
{
	const struct dial_said *last = NULL;
	unsigned unsaid = 0;
	int k = dial_find(d, addr);

	if (k >= 0) {
		d->good = (size_t)k;
		d->failed = 0;
	}
	for (size_t i = 0; i < sizeof(d->said) / sizeof(d->said[0]); i++) {
		unsaid += d->said[i].unsaid;
		if (d->said[i].unsaid > 0 && (last == NULL || d->said[i].ns > last->ns))
			last = &d->said[i];
	}
	if (last != NULL)
		log_info("link %s: connected to %s after %u more failed attempts (the last: %s)", d->name, addr,
			 unsaid, last->msg);
	memset(d->said, 0, sizeof(d->said));
}
