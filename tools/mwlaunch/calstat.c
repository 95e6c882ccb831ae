/* calstat.c - calibration runs combined by their medians. */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "tools/mwlaunch/calstat.h"

static int cmp_double(const void *a, const void *b)
{
	double x = *(const double *)a, y = *(const double *)b;

	return (x > y) - (x < y);
}

double calib_median(double *v, size_t n)
{
	if (n == 0)
		return 0;
	qsort(v, n, sizeof(*v), cmp_double);
	return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

/* The median across the runs of the double at byte offset off. */
static double median_across(const struct calib_meas *const runs[], size_t nruns, size_t off)
{
	double v[CALIB_MAX_RUNS];

	for (size_t r = 0; r < nruns; r++)
		memcpy(&v[r], (const char *)runs[r] + off, sizeof(v[r]));
	return calib_median(v, nruns);
}

int calib_merge(const struct calib_meas *const runs[], size_t nruns, struct calib_meas *out)
{
	if (nruns == 0 || nruns > CALIB_MAX_RUNS)
		return -1;
	for (size_t r = 1; r < nruns; r++)
		if (runs[r]->nperf != runs[0]->nperf)
			return -1;
	*out = (struct calib_meas){ .nperf = runs[0]->nperf };
	for (unsigned k = 0; k < out->nperf; k++)
		out->perf[k] = median_across(runs, nruns, offsetof(struct calib_meas, perf) + k * sizeof(double));
	out->inter_task = median_across(runs, nruns, offsetof(struct calib_meas, inter_task));
	out->inter_result = median_across(runs, nruns, offsetof(struct calib_meas, inter_result));
	return 0;
}
