/* mw_plot.c - tasks done and throughput over time, and the WAN traffic of
 * every communication manager per direction (thesis 000, Figures 5-13
 * and 5-16), as a PNG, by gnuplot. */
#include <stdio.h>
#include <string.h>

#include "launcher/mw_run.h"

/* The lower panel: Mbit/s to and from each remote cluster; the series has
 * two byte columns per communication manager after its first five. */
static void wan_panel(FILE *g, const struct mw_stats *st, const char *series, double iv)
{
	unsigned col = 6;

	fprintf(g, "set title 'WAN traffic per remote cluster'\nset ylabel 'Mbit/s'\nunset y2label\nunset y2tics\n"
		"set ytics mirror\nplot ");
	for (unsigned i = 0; i < st->nworkers; i++) {
		if (!mw_stats_is_cm(&st->w[i]))
			continue;
		fprintf(g, "%s'%s' using 1:(column(%u)*8/1e6/%g) with steps lw 2 title 'to %s', "
			"'' using 1:(column(%u)*8/1e6/%g) with steps lw 2 title 'from %s'", col > 6 ? ", " : "",
			series, col, iv, st->w[i].host, col + 1, iv, st->w[i].host);
		col += 2;
	}
	fputc('\n', g);
}

int mw_plot(const struct mw_stats *st, double iv, const char *series, const char *png, const char *title)
{
	bool wan = false;
	FILE *g;

	for (unsigned i = 0; i < st->nworkers; i++)
		wan |= mw_stats_is_cm(&st->w[i]);
	/* gnuplot strings in single quotes cannot hold one; host names are
	 * "cm:" and a cluster name, which mwlaunch keeps to plain words. */
	if (strchr(series, '\'') || strchr(png, '\'') || strchr(title, '\'')) {
		fprintf(stderr, "mw: --plot %s: file names with a single quote are not supported\n", png);
		return -1;
	}
	g = popen("gnuplot", "w");
	if (g == NULL) {
		fprintf(stderr, "mw: --plot %s: cannot run gnuplot (install gnuplot-nox)\n", png);
		return -1;
	}
	fprintf(g, "set terminal png size 900,%d\nset output '%s'\n%s"
		"set title '%s: tasks completed and throughput'\n"
		"set xlabel 'seconds'\nset ylabel 'tasks done'\nset y2label 'tasks/s'\n"
		"set ytics nomirror\nset y2tics\nset key left top\nset grid\n"
		"plot '%s' using 1:2 with lines lw 2 title 'tasks done' axes x1y1, "
		"'' using 1:3 with steps title 'tasks/s' axes x1y2\n", wan ? 900 : 540, png,
		wan ? "set multiplot layout 2,1\n" : "", title, series);
	if (wan)
		wan_panel(g, st, series, iv);
	if (pclose(g) != 0) {
		fprintf(stderr, "mw: --plot %s: gnuplot failed on %s\n", png, series);
		return -1;
	}
	return 0;
}
