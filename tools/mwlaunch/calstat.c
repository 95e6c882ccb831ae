/* calstat.c - calibration runs combined by their medians. */
#include <stdlib.h>

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

/* The median of one field across the runs: first points at it in
 * runs[0], the others lie a struct further each. */
static double median_across(const double *first, size_t nruns)
{
	double v[CALIB_MAX_RUNS];

	for (size_t r = 0; r < nruns; r++)
		v[r] = *(const double *)((const char *)first + r * sizeof(struct calib_meas));
	return calib_median(v, nruns);
}

int calib_merge(const struct calib_meas *runs, size_t nruns, struct calib_meas *out)
{
	if (nruns == 0 || nruns > CALIB_MAX_RUNS)
		return -1;
	for (size_t r = 1; r < nruns; r++)
		if (runs[r].nperf != runs[0].nperf)
			return -1;
	*out = (struct calib_meas){ .nperf = runs[0].nperf };
	for (unsigned k = 0; k < out->nperf; k++)
		out->perf[k] = median_across(&runs[0].perf[k], nruns);
	out->inter_task = median_across(&runs[0].inter_task, nruns);
	out->inter_result = median_across(&runs[0].inter_result, nruns);
	return 0;
}
