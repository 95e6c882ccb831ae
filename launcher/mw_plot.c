/* mw_plot.c - tasks done and throughput over time, as a PNG, by gnuplot. */
#include <stdio.h>
#include <string.h>

#include "launcher/mw_run.h"

int mw_plot(const char *series, const char *png, const char *title)
{
	FILE *g;

	/* gnuplot strings in single quotes cannot hold one. */
	if (strchr(series, '\'') || strchr(png, '\'') || strchr(title, '\'')) {
		fprintf(stderr, "mw: --plot %s: file names with a single quote are not supported\n", png);
		return -1;
	}
	g = popen("gnuplot", "w");
	if (g == NULL) {
		fprintf(stderr, "mw: --plot %s: cannot run gnuplot (install gnuplot-nox)\n", png);
		return -1;
	}
	fprintf(g, "set terminal png size 900,540\nset output '%s'\n"
		"set title '%s: tasks completed and throughput'\n"
		"set xlabel 'seconds'\nset ylabel 'tasks done'\nset y2label 'tasks/s'\n"
		"set ytics nomirror\nset y2tics\nset key left top\nset grid\n"
		"plot '%s' using 1:2 with lines lw 2 title 'tasks done' axes x1y1, "
		"'' using 1:3 with steps title 'tasks/s' axes x1y2\n", png, title, series);
	if (pclose(g) != 0) {
		fprintf(stderr, "mw: --plot %s: gnuplot failed on %s\n", png, series);
		return -1;
	}
	return 0;
}
