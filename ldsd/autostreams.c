/* autostreams.c - hill climbing on goodput; see autostreams.h. */
#include <string.h>

#include "autostreams.h"

void autostreams_init(struct autostreams *a, unsigned min, unsigned max, unsigned start)
{
	memset(a, 0, sizeof(*a));
	if (max > AS_MAX_STREAMS)
		max = AS_MAX_STREAMS;
	if (min > max)
		min = max;
	a->min = min;
	a->max = max;
	a->n = start < min ? min : start > max ? max : start;
	a->hold = AS_HOLD;
	a->up = 1;
}

/* The next count in the current direction, or n itself at a bound.  Up
 * by half again (at least one) so that the count grows quickly on long
 * lossy paths; down one at a time. */
static unsigned as_step(const struct autostreams *a)
{
	if (a->up) {
		unsigned step = a->n / 2 ? a->n / 2 : 1;

		return a->n + step < a->max ? a->n + step : a->max;
	}
	return a->n > a->min ? a->n - 1 : a->min;
}

/* Takes a step from the count just measured at `rate`, downwards if the
 * path is queued, or, at a bound, turns round and holds. */
static void as_probe(struct autostreams *a, double rate, int queued)
{
	unsigned next;

	if (queued)
		a->up = 0;
	next = as_step(a);

	if (next == a->n) {
		a->up = !a->up;
		a->from = 0;
		a->hold = AS_HOLD;
		return;
	}
	a->from = a->n;
	a->from_rate = rate;
	a->n = next;
}

/* The best goodput measured in the last AS_MEMORY periods, any count. */
static double as_best(const struct autostreams *a)
{
	double best = 0;

	for (unsigned n = a->min; n <= a->max; n++)
		if (a->seen_at[n] && a->period - a->seen_at[n] < AS_MEMORY && a->rate_at[n] > best)
			best = a->rate_at[n];
	return best;
}

unsigned autostreams_period(struct autostreams *a, double rate, int queued)
{
	a->period++;
	a->rate_at[a->n] = rate;
	a->seen_at[a->n] = a->period;
	if (a->from != 0) {
		int better = a->n > a->from ? rate >= a->from_rate * (1 + AS_GAIN)
					    : rate >= as_best(a) * (1 - AS_SLACK);

		if (better) {
			as_probe(a, rate, queued);
		} else {
			/* Back to what worked; next time try the other way. */
			a->n = a->from;
			a->from = 0;
			a->up = !a->up;
			a->hold = AS_HOLD;
		}
		return a->n;
	}
	if (a->hold > 0) {
		a->hold--;
		return a->n;
	}
	as_probe(a, rate, queued);
	return a->n;
}
