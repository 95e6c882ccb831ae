/* mw_sched.c - task states, worker queues, end-of-run copies. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/mw_sched.h"

enum { PENDING, OUTSTANDING, DONE };

#define MAX_DEPTH 4096
#define EWMA 0.25

int mw_sched_init(struct mw_sched *s, uint64_t ntasks, unsigned nworkers, unsigned max_copies)
{
	memset(s, 0, sizeof(*s));
	if (nworkers == 0 || max_copies == 0 || ntasks > SIZE_MAX / 2)
		return -EINVAL;
	s->ntasks = ntasks;
	s->nworkers = nworkers;
	s->max_copies = max_copies;
	s->state = calloc(ntasks ? ntasks : 1, 1);
	s->ncopies = calloc(ntasks ? ntasks : 1, 1);
	s->w = calloc(nworkers, sizeof(*s->w));
	s->cursor = calloc(1, sizeof(*s->cursor));
	s->ngroups = 1;
	if (s->state == NULL || s->ncopies == NULL || s->w == NULL || s->cursor == NULL)
		goto fail;
	for (unsigned i = 0; i < nworkers; i++)
		if (mw_sched_set_depth(s, i, 1) < 0)
			goto fail;
	return 0;
fail:
	mw_sched_free(s);
	return -ENOMEM;
}

void mw_sched_free(struct mw_sched *s)
{
	if (s->w != NULL)
		for (unsigned i = 0; i < s->nworkers; i++)
			free(s->w[i].q);
	free(s->w);
	free(s->cursor);
	free(s->group);
	free(s->state);
	free(s->ncopies);
	memset(s, 0, sizeof(*s));
}

int mw_sched_set_depth(struct mw_sched *s, unsigned w, unsigned depth)
{
	struct mw_sched_slot *q;

	if (w >= s->nworkers || depth < 1 || depth > MAX_DEPTH || s->w[w].n > 0)
		return -EINVAL;
	q = realloc(s->w[w].q, depth * sizeof(*q));
	if (q == NULL)
		return -ENOMEM;
	s->w[w].q = q;
	s->w[w].depth = depth;
	return 0;
}

/* Past the tasks of group g that are no longer pending. */
static void advance_cursor(struct mw_sched *s, unsigned g)
{
	uint64_t *c = &s->cursor[g];

	while (*c < s->ntasks && (s->state[*c] != PENDING || mw_sched_group_of(s, *c) != g))
		(*c)++;
}

int mw_sched_set_groups(struct mw_sched *s, const unsigned *task_group, const unsigned *worker_group,
			unsigned ngroups)
{
	uint64_t *cursor;
	unsigned *group;

	if (ngroups == 0 || s->outstanding > 0)
		return -EINVAL;
	for (uint64_t t = 0; t < s->ntasks; t++)
		if (task_group[t] >= ngroups)
			return -EINVAL;
	for (unsigned w = 0; w < s->nworkers; w++)
		if (worker_group[w] >= ngroups)
			return -EINVAL;
	cursor = calloc(ngroups, sizeof(*cursor));
	group = malloc((s->ntasks ? s->ntasks : 1) * sizeof(*group));
	if (cursor == NULL || group == NULL) {
		free(cursor);
		free(group);
		return -ENOMEM;
	}
	memcpy(group, task_group, s->ntasks * sizeof(*group));
	free(s->cursor);
	free(s->group);
	s->cursor = cursor;
	s->group = group;
	s->ngroups = ngroups;
	for (unsigned w = 0; w < s->nworkers; w++)
		s->w[w].group = worker_group[w];
	for (unsigned g = 0; g < ngroups; g++)
		advance_cursor(s, g);
	return 0;
}

int mw_sched_replayed(struct mw_sched *s, uint64_t id)
{
	if (id >= s->ntasks)
		return -EINVAL;
	if (s->state[id] != PENDING)
		return -EALREADY;
	s->state[id] = DONE;
	s->ndone++;
	s->nreplayed++;
	advance_cursor(s, mw_sched_group_of(s, id));
	return 0;
}

/* When the k-th task in w's queue should come back, assuming FIFO service
 * at the worker's measured pace (the oldest assignment time when unknown). */
static double expected_finish(const struct mw_sched_worker *wk, unsigned k, double fallback_avg)
{
	double start = wk->q[0].t > wk->last_done ? wk->q[0].t : wk->last_done;
	double avg = wk->avg > 0 ? wk->avg : fallback_avg;

	return start + (k + 1) * avg;
}

enum mw_sched_kind mw_sched_peek(const struct mw_sched *s, unsigned w, uint64_t *id)
{
	const struct mw_sched_worker *wk;
	double best = -1, sum = 0;
	unsigned known = 0;

	if (w >= s->nworkers)
		return MW_SCHED_NONE;
	wk = &s->w[w];
	if (wk->n >= wk->depth || wk->away)
		return MW_SCHED_NONE;
	if (s->cursor[wk->group] < s->ntasks) {
		*id = s->cursor[wk->group];
		return MW_SCHED_NEW;
	}
	/* Copies only go to a worker with nothing to do, and only while a
	 * task has fewer than max_copies holders. */
	if (wk->n > 0 || s->max_copies < 2 || s->outstanding == 0)
		return MW_SCHED_NONE;
	for (unsigned i = 0; i < s->nworkers; i++)
		if (s->w[i].avg > 0) {
			sum += s->w[i].avg;
			known++;
		}
	for (unsigned i = 0; i < s->nworkers; i++) {
		const struct mw_sched_worker *o = &s->w[i];

		for (unsigned k = 0; k < o->n && o->group == wk->group; k++) {
			uint64_t t = o->q[k].id;
			double fin;

			if (s->state[t] != OUTSTANDING || s->ncopies[t] >= s->max_copies)
				continue;
			fin = expected_finish(o, k, known ? sum / known : 0);
			if (fin > best) {
				best = fin;
				*id = t;
			}
		}
	}
	return best >= 0 ? MW_SCHED_COPY : MW_SCHED_NONE;
}

double mw_sched_slack(const struct mw_sched *s, double now)
{
	double least = -1;

	for (unsigned i = 0; i < s->nworkers; i++) {
		const struct mw_sched_worker *wk = &s->w[i];
		double left;

		if (wk->n == 0)
			continue;
		if (wk->avg <= 0)
			return 0;
		left = expected_finish(wk, wk->n - 1, wk->avg) - now;
		if (least < 0 || left < least)
			least = left;
	}
	return least > 0 ? least : 0;
}

size_t mw_sched_window(const struct mw_sched *s, unsigned w, uint64_t *ids, size_t max)
{
	unsigned g = w < s->nworkers ? s->w[w].group : 0;
	size_t n = 0;

	for (uint64_t t = s->cursor[g]; t < s->ntasks && n < max; t++)
		if (s->state[t] == PENDING && mw_sched_group_of(s, t) == g)
			ids[n++] = t;
	return n;
}

int mw_sched_assign(struct mw_sched *s, unsigned w, uint64_t id, double now)
{
	struct mw_sched_worker *wk;

	if (w >= s->nworkers || id >= s->ntasks || s->state[id] == DONE)
		return -EINVAL;
	wk = &s->w[w];
	if (wk->n >= wk->depth)
		return -EBUSY;
	for (unsigned k = 0; k < wk->n; k++)
		if (wk->q[k].id == id)
			return -EINVAL;
	if (s->state[id] == OUTSTANDING) {
		if (s->ncopies[id] >= s->max_copies)
			return -EINVAL;
		wk->copies++;
	}
	wk->q[wk->n++] = (struct mw_sched_slot){ .id = id, .t = now };
	s->state[id] = OUTSTANDING;
	s->ncopies[id]++;
	s->outstanding++;
	advance_cursor(s, mw_sched_group_of(s, id));
	return 0;
}

unsigned mw_sched_forfeit(struct mw_sched *s, unsigned w)
{
	struct mw_sched_worker *wk;
	unsigned n;

	if (w >= s->nworkers)
		return 0;
	wk = &s->w[w];
	n = wk->n;
	for (unsigned k = 0; k < n; k++) {
		uint64_t id = wk->q[k].id;

		s->ncopies[id]--;
		s->outstanding--;
		if (s->ncopies[id] == 0 && s->state[id] == OUTSTANDING) {
			s->state[id] = PENDING;
			if (id < s->cursor[mw_sched_group_of(s, id)])
				s->cursor[mw_sched_group_of(s, id)] = id;
		}
	}
	wk->n = 0;
	wk->forfeited += n;
	wk->away = true;
	return n;
}

void mw_sched_back(struct mw_sched *s, unsigned w)
{
	if (w < s->nworkers)
		s->w[w].away = false;
}

int mw_sched_prune(struct mw_sched *s, uint64_t id)
{
	if (id >= s->ntasks || s->state[id] != PENDING)
		return -EINVAL;
	s->state[id] = DONE;
	s->ndone++;
	s->npruned++;
	advance_cursor(s, mw_sched_group_of(s, id));
	return 0;
}

int mw_sched_complete(struct mw_sched *s, unsigned w, uint64_t id, double now)
{
	struct mw_sched_worker *wk;
	double start, took;
	unsigned k;

	if (w >= s->nworkers)
		return -ENOENT;
	wk = &s->w[w];
	for (k = 0; k < wk->n; k++)
		if (wk->q[k].id == id)
			break;
	if (k == wk->n)
		return -ENOENT;
	start = wk->q[k].t > wk->last_done ? wk->q[k].t : wk->last_done;
	took = now - start;
	if (took >= 0)
		wk->avg = wk->avg > 0 ? (1 - EWMA) * wk->avg + EWMA * took : took;
	wk->last_done = now;
	memmove(&wk->q[k], &wk->q[k + 1], (wk->n - k - 1) * sizeof(wk->q[0]));
	wk->n--;
	s->ncopies[id]--;
	s->outstanding--;
	if (s->state[id] == DONE) {
		wk->discharged++;
		return MW_SCHED_DISCHARGED;
	}
	s->state[id] = DONE;
	s->ndone++;
	wk->done++;
	return MW_SCHED_JOIN;
}
