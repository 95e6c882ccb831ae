/*
 * autostreams.h - chooses a link's number of streams (streams = "auto").
 *
 * Hill climbing on measured goodput, the thesis's future work (A.4): from
 * the starting count it probes upwards while each step still raises
 * goodput by AS_GAIN, steps back when it does not, holds for a while, then
 * probes again - alternately downwards, keeping fewer streams when they
 * carry nearly as much (within AS_SLACK) as the best count measured in
 * the last AS_MEMORY periods: judged only against the count just left,
 * steps that each lose a little would add up to much.  The caller feeds one goodput
 * figure per measurement period in which the link was network-limited
 * (blocks waiting for the streams); periods limited by the application or
 * the receiver tell nothing about streams and are not fed.  With each it
 * says whether the path held a standing queue: a bottleneck that is full
 * already carries no more for more streams, they would only share its
 * queue, so the chooser probes downwards instead of paying for an upward
 * probe (new streams start slowly and the receiver waits for what they
 * carry: measured at 20 ms, a probe from 8 to 12 streams cost a quarter of
 * a 3 s run's goodput, docs/BENCHMARKS.md).
 *
 * Pure: no I/O, no clock.
 */
#ifndef LDS_AUTOSTREAMS_H
#define LDS_AUTOSTREAMS_H

#define AS_GAIN  0.10   /* a step up must raise goodput this much */
#define AS_SLACK 0.05   /* a step down may lose this much */
#define AS_HOLD  5      /* periods between probes */
#define AS_MEMORY 30    /* periods a count's goodput is remembered */
#define AS_MAX_STREAMS 64

struct autostreams {
	unsigned min, max;    /* bounds, 1 <= min <= max */
	unsigned n;           /* streams wanted now */
	unsigned from;        /* count before the step being judged; 0 = none */
	double from_rate;     /* goodput measured with `from` streams */
	unsigned hold;        /* periods left before the next probe */
	int up;               /* direction of the next probe */
	unsigned period;      /* periods so far */
	double rate_at[AS_MAX_STREAMS + 1];   /* last goodput measured with n streams */
	unsigned seen_at[AS_MAX_STREAMS + 1]; /* ... in this period (0 = never) */
};

/* Starts at `start` (clamped to min..max, max to AS_MAX_STREAMS) and
 * holds it for AS_HOLD periods before probing, upwards first: a probe
 * costs (new streams start slowly, and the receiver waits for what they
 * carry), so a transfer too short to gain from it should not pay it. */
void autostreams_init(struct autostreams *a, unsigned min, unsigned max, unsigned start);

/* One network-limited period ended with goodput `rate` (bytes/s) using
 * a->n streams; `queued`: the path held a standing queue in it.  Returns
 * the number of streams wanted from now on. */
unsigned autostreams_period(struct autostreams *a, double rate, int queued);

#endif
