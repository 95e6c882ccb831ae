/*
 * probe.h - when the stream slots of a link that has lost its path try to
 * reconnect.
 *
 * While the path is gone every attempt waits out its SYN wait and fails,
 * and each slot tries again once per period.  The slots' tries are kept
 * on fixed grids, so that they stay spread and a returning path is found
 * soon: a slot that simply tried again when its last attempt failed would
 * drift by the daemon's tick every time, and after a few dozen periods
 * slots were seen to try together, leaving gaps of most of a period
 * (docs/BENCHMARKS.md, the outage scenario).
 *
 * Slot 0 tries once per `period`, the full SYN wait, so that a path that
 * comes back slower than it was is still found.  The others try once per
 * `fast` period, a few round trips of the path as it was, which a path
 * that comes back as it was answers in time: slot i at
 * origin + (i / n + k) * fast.  With fast == period the n slots share one
 * grid, evenly.
 *
 * Pure: no I/O, no clock.
 */
#ifndef LDS_PROBE_H
#define LDS_PROBE_H

#include <stdint.h>

struct probe_grid {
	uint64_t origin_ns;     /* 0: the link is not probing */
	uint64_t period_ns;     /* slot 0's, > 0 while probing */
	uint64_t fast_ns;       /* the other slots', 0 < fast_ns <= period_ns */
	unsigned n;             /* slots, > 0 */
};

/* Starts probing at now_ns (> 0) with n slots.  fast_ns is clamped to
 * 1..period_ns. */
void probe_start(struct probe_grid *g, uint64_t now_ns, uint64_t period_ns, uint64_t fast_ns, unsigned n);

/* Whether the link is probing. */
int probe_active(const struct probe_grid *g);

/* The path is back (or the link gave up probing). */
void probe_stop(struct probe_grid *g);

/* The first time of slot idx's grid later than after_ns; never before the
 * grid's start.  A slot at or beyond n shares the times of idx % n. */
uint64_t probe_next(const struct probe_grid *g, unsigned idx, uint64_t after_ns);

#endif
