/* mw_calib.c - a calibration run's tasks: spread over the problem, dealt to clusters. */
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "launcher/mw_calib.h"

void mw_calib_spread(uint64_t m, uint64_t n, uint64_t *ids)
{
	/* (2k + 1) m / 2n: 128 bits, since k and m may both be large. */
	for (uint64_t k = 0; k < n; k++)
		ids[k] = (uint64_t)(((unsigned __int128)(2 * k + 1) * m) / (2 * (unsigned __int128)n));
}

int mw_calib_deal(uint64_t n, const double *weight, unsigned ngroups, unsigned *group)
{
	double sum = 0;
	uint64_t *got = calloc(ngroups ? ngroups : 1, sizeof(*got));

	if (got == NULL)
		return -1;
	for (unsigned g = 0; g < ngroups; g++) {
		if (!isfinite(weight[g]) || weight[g] < 0) {
			free(got);
			return -1;
		}
		sum += weight[g];
	}
	if (!(sum > 0)) {
		free(got);
		return -1;
	}
	for (uint64_t k = 0; k < n; k++) {
		/* Behind = its share of the first k + 1 tasks less what it got;
		 * the behinds add up to 1, so the chosen one ends above -1. */
		double best = -INFINITY;
		unsigned pick = 0;

		for (unsigned g = 0; g < ngroups; g++) {
			double behind = (double)(k + 1) * weight[g] / sum - (double)got[g];

			if (weight[g] > 0 && behind > best + 1e-9) {
				best = behind;
				pick = g;
			}
		}
		group[k] = pick;
		got[pick]++;
	}
	free(got);
	return 0;
}

int64_t mw_calib_index(const uint64_t *ids, uint64_t n, uint64_t id)
{
	uint64_t lo = 0, hi = n;

	while (lo < hi) {
		uint64_t mid = lo + (hi - lo) / 2;

		if (ids[mid] < id)
			lo = mid + 1;
		else
			hi = mid;
	}
	return lo < n && ids[lo] == id ? (int64_t)lo : -1;
}

int mw_calib_share(const char *list, const char *name, double *share)
{
	size_t len = strlen(name);
	int found = -1;

	for (const char *p = list; p != NULL && *p != '\0';) {
		const char *colon = strchr(p, ':'), *comma = strchr(p, ',');
		char *end;
		double v;

		if (colon == NULL || (comma != NULL && comma < colon))
			return -2;
		v = strtod(colon + 1, &end);
		if (end == colon + 1 || (*end != ',' && *end != '\0') || !isfinite(v) || v < 0)
			return -2;
		if ((size_t)(colon - p) == len && strncmp(p, name, len) == 0 && found < 0) {
			*share = v;
			found = 0;
		}
		p = *end == ',' ? end + 1 : end;
	}
	return found;
}
