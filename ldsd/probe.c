/* probe.c - the reconnection grid of a link that lost its path; see probe.h. */
#include "probe.h"

void probe_start(struct probe_grid *g, uint64_t now_ns, uint64_t period_ns, uint64_t fast_ns, unsigned n)
{
	g->origin_ns = now_ns;
	g->period_ns = period_ns > 0 ? period_ns : 1;
	g->fast_ns = fast_ns > 0 && fast_ns < g->period_ns ? fast_ns : g->period_ns;
	g->n = n > 0 ? n : 1;
}

int probe_active(const struct probe_grid *g)
{
	return g->origin_ns != 0;
}

void probe_stop(struct probe_grid *g)
{
	g->origin_ns = 0;
}

uint64_t probe_next(const struct probe_grid *g, unsigned idx, uint64_t after_ns)
{
	unsigned i = idx % g->n;
	uint64_t period = i == 0 ? g->period_ns : g->fast_ns;
	uint64_t first = g->origin_ns + period * i / g->n;

	if (after_ns < first)
		return first;
	/* Whole periods from the slot's first time, computed from the origin
	 * each time so that nothing accumulates. */
	return first + ((after_ns - first) / period + 1) * period;
}
