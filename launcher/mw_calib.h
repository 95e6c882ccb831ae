/*
 * mw_calib.h - the tasks of a calibration run (mwlaunch --benchmark,
 * MWL_TASK_LIMIT): which of the problem's tasks run, and which cluster
 * runs each.  Pure, no I/O: unit-tested in tests/unit/check_mw_calib.c.
 *
 * Why spread: task costs are uneven along the problem (a matrix's
 * blocks, a search tree's branches); a sample of the first tasks only
 * measured workers 27-42 % off.  Why dealt to clusters: a remote cluster
 * that starts later than the main one would otherwise find every task
 * taken, and go unmeasured.  Dealt in order, each cluster's tasks are
 * themselves spread over the whole range.
 */
#ifndef MW_CALIB_H
#define MW_CALIB_H

#include <stddef.h>
#include <stdint.h>

/* n of the problem's m tasks (ids 0 .. m-1), n <= m, into ids: id k is
 * the middle of the k-th of n equal stretches of the range, so the ids
 * increase, are distinct, and the first and last are within m / n of the
 * range's ends. */
void mw_calib_spread(uint64_t m, uint64_t n, uint64_t *ids);

/* Deals tasks 0 .. n-1, in order, to ngroups groups by weight (>= 0, one
 * at least > 0): each task goes to the group furthest behind its share so
 * far, so that group g ends with n x weight[g] / sum tasks (exactly, when
 * that is whole for every group) spread over 0 .. n-1.  0, or -1 when no
 * weight is positive or one is negative or not finite. */
int mw_calib_deal(uint64_t n, const double *weight, unsigned ngroups, unsigned *group);

/* Where id is in ids[0 .. n-1] (increasing): its index, or -1. */
int64_t mw_calib_index(const uint64_t *ids, uint64_t n, uint64_t id);

/* The share of cluster name in a list "NAME:COUNT,NAME:COUNT..."
 * (MWL_CALIB_SHARES) into *share.  0; -1 when name is not in the list;
 * -2 when the list is malformed (a COUNT not a number >= 0). */
int mw_calib_share(const char *list, const char *name, double *share);

#endif
