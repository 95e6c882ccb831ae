/* spec.c - parses durations, rates, sizes, probabilities and a link's
 * "key=value,..." impairments; every error quotes the token at fault. */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "wanemu.h"

void dirconf_init(struct dirconf *c)
{
	memset(c, 0, sizeof(*c));
	c->ge_bad = 1.0;
	c->reorder_ns = 10000000ull;
	c->queue_bdp = 1.0;
}

/* A non-negative number followed by one of units[] (scale[] each); an
 * empty suffix takes scale[0]. */
static int spec_scaled(const char *s, const char *const *units, const double *scale, double *out)
{
	char *end;
	double v;

	errno = 0;
	v = strtod(s, &end);
	if (end == s || errno != 0 || !isfinite(v) || v < 0)
		return -1;
	for (int i = 0; units[i] != NULL; i++) {
		if (strcasecmp(end, units[i]) == 0) {
			*out = v * scale[i];
			return 0;
		}
	}
	return -1;
}

int spec_duration(const char *s, uint64_t *ns)
{
	static const char *const u[] = { "", "ms", "s", "us", "ns", "m", NULL };
	static const double k[] = { 1e6, 1e6, 1e9, 1e3, 1, 60e9 };
	double v;

	if (spec_scaled(s, u, k, &v) < 0 || v > 1e18)
		return -1;
	*ns = (uint64_t)llround(v);
	return 0;
}

int spec_rate(const char *s, uint64_t *bps)
{
	static const char *const u[] = { "", "bit", "kbit", "mbit", "gbit", "bps", NULL };
	static const double k[] = { 1, 1, 1e3, 1e6, 1e9, 8 };
	double v;

	if (spec_scaled(s, u, k, &v) < 0 || v > 1e13)
		return -1;
	*bps = (uint64_t)llround(v);
	return 0;
}

int spec_size(const char *s, uint64_t *bytes)
{
	static const char *const u[] = { "", "b", "k", "kb", "m", "mb", NULL };
	static const double k[] = { 1, 1, 1024, 1024, 1048576, 1048576 };
	double v;

	if (spec_scaled(s, u, k, &v) < 0 || v > 1e12)
		return -1;
	*bytes = (uint64_t)llround(v);
	return 0;
}

int spec_prob(const char *s, double *p)
{
	static const char *const u[] = { "", "%", NULL };
	static const double k[] = { 1, 0.01 };
	double v;

	if (spec_scaled(s, u, k, &v) < 0 || v > 1)
		return -1;
	*p = v;
	return 0;
}

int spec_outage(const char *s, struct dirconf *c)
{
	char buf[64];
	char *at;

	if (strlen(s) >= sizeof(buf) || c->noutage == WE_MAX_OUTAGES)
		return -1;
	strcpy(buf, s);
	at = strchr(buf, '@');
	if (at == NULL)
		return -1;
	*at = '\0';
	if (spec_duration(buf, &c->outage[c->noutage].len_ns) < 0 ||
	    spec_duration(at + 1, &c->outage[c->noutage].start_ns) < 0 || c->outage[c->noutage].len_ns == 0)
		return -1;
	c->noutage++;
	return 0;
}

static int spec_queue(const char *v, struct dirconf *c)
{
	size_t n = strlen(v);

	if (n > 3 && strcasecmp(v + n - 3, "bdp") == 0) {
		char num[32];
		double m;

		if (n - 3 >= sizeof(num))
			return -1;
		memcpy(num, v, n - 3);
		num[n - 3] = '\0';
		if (spec_scaled(num, (const char *const[]){ "", NULL }, (const double[]){ 1 }, &m) < 0 || m <= 0)
			return -1;
		c->queue_bdp = m;
		c->queue_bytes = 0;
		return 0;
	}
	return spec_size(v, &c->queue_bytes) < 0 || c->queue_bytes == 0 ? -1 : 0;
}

static int spec_mtu(const char *v, struct dirconf *c)
{
	uint64_t m;

	if (spec_size(v, &m) < 0 || m < 68 || m > 65535)
		return -1;
	c->mtu = (unsigned)m;
	return 0;
}

/* Where loss and Gilbert-Elliott loss act: "wire" (after the bottleneck
 * queue, the default) or "enqueue" (before it, as netem). */
static int spec_loss_at(const char *v, struct dirconf *c)
{
	if (strcmp(v, "wire") == 0)
		c->loss_enqueue = 0;
	else if (strcmp(v, "enqueue") == 0)
		c->loss_enqueue = 1;
	else
		return -1;
	return 0;
}

static int spec_key(struct dirconf *c, const char *key, const char *val)
{
#define DUR(k, f) if (strcmp(key, k) == 0) return spec_duration(val, &c->f)
#define PROB(k, f) if (strcmp(key, k) == 0) return spec_prob(val, &c->f)
	DUR("delay", delay_ns);
	DUR("jitter", jitter_ns);
	DUR("reorder_delay", reorder_ns);
	PROB("loss", loss);
	PROB("ge_p", ge_p);
	PROB("ge_r", ge_r);
	PROB("ge_bad", ge_bad);
	PROB("ge_good", ge_good);
	PROB("reorder", reorder);
	PROB("dup", dup);
#undef DUR
#undef PROB
	if (strcmp(key, "rate") == 0)
		return spec_rate(val, &c->rate_bps);
	if (strcmp(key, "queue") == 0)
		return spec_queue(val, c);
	if (strcmp(key, "mtu") == 0)
		return spec_mtu(val, c);
	if (strcmp(key, "outage") == 0)
		return spec_outage(val, c);
	if (strcmp(key, "loss_at") == 0)
		return spec_loss_at(val, c);
	return -2;
}

int spec_apply(struct dirconf *c, const char *params, char *err, size_t errlen)
{
	char *copy = strdup(params), *save = NULL, *tok;
	int r = 0;

	if (copy == NULL) {
		snprintf(err, errlen, "out of memory");
		return -1;
	}
	for (tok = strtok_r(copy, ",", &save); tok != NULL; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (eq == NULL) {
			snprintf(err, errlen, "'%s' is not key=value", tok);
			r = -1;
			break;
		}
		*eq = '\0';
		r = spec_key(c, tok, eq + 1);
		if (r == -2) {
			snprintf(err, errlen, "unknown key '%s' (see wanemu(8): delay jitter loss ge_p ge_r ge_bad ge_good "
				 "loss_at rate queue reorder reorder_delay dup mtu outage)", tok);
			break;
		}
		if (r < 0) {
			snprintf(err, errlen, "bad value '%s' for %s", eq + 1, tok);
			break;
		}
	}
	free(copy);
	if (r == 0 && c->ge_p > 0 && c->ge_r == 0) {
		snprintf(err, errlen, "ge_p without ge_r would stay in the bad state for ever");
		r = -1;
	}
	return r < 0 ? -1 : 0;
}

void spec_print(FILE *out, const struct dirconf *c)
{
	const char *sep = "";

#define PUT(...) do { fprintf(out, "%s", sep); fprintf(out, __VA_ARGS__); sep = ","; } while (0)
	if (c->delay_ns)
		PUT("delay=%.3fms", c->delay_ns / 1e6);
	if (c->jitter_ns)
		PUT("jitter=%.3fms", c->jitter_ns / 1e6);
	if (c->loss > 0)
		PUT("loss=%g%%", c->loss * 100);
	if (c->ge_p > 0)
		PUT("ge_p=%g%%,ge_r=%g%%,ge_bad=%g%%,ge_good=%g%%", c->ge_p * 100, c->ge_r * 100, c->ge_bad * 100,
		    c->ge_good * 100);
	if (c->loss_enqueue)
		PUT("loss_at=enqueue");
	if (c->rate_bps) {
		PUT("rate=%llubit", (unsigned long long)c->rate_bps);
		if (c->queue_bytes)
			PUT("queue=%llu", (unsigned long long)c->queue_bytes);
		else
			PUT("queue=%gbdp", c->queue_bdp);
	}
	if (c->reorder > 0)
		PUT("reorder=%g%%,reorder_delay=%.3fms", c->reorder * 100, c->reorder_ns / 1e6);
	if (c->dup > 0)
		PUT("dup=%g%%", c->dup * 100);
	if (c->mtu)
		PUT("mtu=%u", c->mtu);
	for (int i = 0; i < c->noutage; i++)
		PUT("outage=%.3fs@%.3fs", c->outage[i].len_ns / 1e9, c->outage[i].start_ns / 1e9);
#undef PUT
}
