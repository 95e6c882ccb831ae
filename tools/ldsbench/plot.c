/*
 * plot.c - throughput over time of each run, one line per run, like the
 * thesis's Figure A-12, drawn by gnuplot (tools/install-deps.sh installs
 * gnuplot-nox).  Only measured points are drawn: the first is the end of
 * the first interval.  The link's disconnections (its failure log) are
 * vertical lines, red where a stream went down and green where it came
 * back.  The data stay beside the picture (FILE.dat), so that it can be
 * drawn again or differently.
 */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "tools/ldsbench/ldsbench.h"

int plot_check(char *err, size_t errlen)
{
	const char *path = getenv("PATH");
	char dir[4096];

	for (const char *p = path ? path : "/usr/bin:/bin"; *p;) {
		size_t n = strcspn(p, ":");

		snprintf(dir, sizeof(dir), "%.*s/gnuplot", (int)n, p);
		if (access(dir, X_OK) == 0)
			return 0;
		p += n + (p[n] == ':');
	}
	snprintf(err, errlen, "--plot needs gnuplot, which is not in PATH (apt-get install gnuplot-nox, or make deps)");
	return -1;
}

/* gnuplot takes strings in single quotes; a quote in a path ends it. */
static int quotable(const char *s)
{
	return strchr(s, '\'') == NULL && strchr(s, '\n') == NULL;
}

static int write_data(const char *dat, const struct run_result *res, size_t n, char *err, size_t errlen)
{
	FILE *f = fopen(dat, "w");
	unsigned nfail = 0;

	if (f == NULL) {
		snprintf(err, errlen, "%s: %s", dat, strerror(errno));
		return -1;
	}
	fprintf(f, "# ldsbench: one block per run: time (s) at the end of each interval, Mb/s in it\n");
	for (size_t i = 0; i < n; i++) {
		fprintf(f, "%s# run %u, %u streams\n", i ? "\n\n" : "", res[i].run, res[i].streams);
		for (size_t k = 0; k < res[i].niv; k++) {
			const struct interval *iv = &res[i].iv[k];
			double secs = iv->end - iv->start;

			fprintf(f, "%.3f %.3f\n", iv->end, secs > 0 ? (double)iv->bytes * 8 / secs / 1e6 : 0);
		}
		nfail += res[i].nfail;
	}
	if (nfail > 0) {
		fprintf(f, "\n\n# disconnections (the link's failure log): run, stream, down at (s), back at (s; -1: "
			"not within the run)\n");
		for (size_t i = 0; i < n; i++) {
			for (unsigned k = 0; k < res[i].nfail; k++) {
				const struct bench_failure *fl = &res[i].fail[k];

				fprintf(f, "%u %d %.3f %.3f\n", res[i].run, fl->stream, fl->down_at - res[i].start_wall,
					fl->up_at > 0 ? fl->up_at - res[i].start_wall : -1.0);
			}
		}
	}
	if (fclose(f) != 0) {
		snprintf(err, errlen, "%s: %s", dat, strerror(errno));
		return -1;
	}
	return 0;
}

/* A vertical line at each disconnection and return; 1 if any. */
static int mark_failures(FILE *gp, const struct run_result *res, size_t n, int *any_up)
{
	int any = 0;

	*any_up = 0;
	for (size_t i = 0; i < n; i++) {
		for (unsigned k = 0; k < res[i].nfail; k++) {
			const struct bench_failure *fl = &res[i].fail[k];

			fprintf(gp, "set arrow from %.3f, graph 0 to %.3f, graph 1 nohead dt 2 lw 1.5 lc rgb 'red'\n",
				fl->down_at - res[i].start_wall, fl->down_at - res[i].start_wall);
			any = 1;
			if (fl->up_at > 0) {
				fprintf(gp, "set arrow from %.3f, graph 0 to %.3f, graph 1 nohead dt 3 lw 1.5 "
					"lc rgb 'dark-green'\n", fl->up_at - res[i].start_wall, fl->up_at - res[i].start_wall);
				*any_up = 1;
			}
		}
	}
	return any;
}

int plot_runs(const char *png, const struct run_result *res, size_t n, const char *title, char *err, size_t errlen)
{
	char dat[4096];
	FILE *gp;
	int st, down, up;

	if (!quotable(png) || !quotable(title)) {
		snprintf(err, errlen, "--plot %s: file names and titles with ' cannot be given to gnuplot", png);
		return -1;
	}
	snprintf(dat, sizeof(dat), "%.*s.dat", (int)(strlen(png) > 4 && strcmp(png + strlen(png) - 4, ".png") == 0
						       ? strlen(png) - 4 : strlen(png)), png);
	if (write_data(dat, res, n, err, errlen) < 0)
		return -1;
	gp = popen("gnuplot", "w");
	if (gp == NULL) {
		snprintf(err, errlen, "cannot run gnuplot: %s", strerror(errno));
		return -1;
	}
	fprintf(gp, "set terminal pngcairo size 960,540\nset output '%s'\nset title '%s'\n"
		"set xlabel 'time (s)'\nset ylabel 'throughput (Mb/s)'\nset xrange [0:*]\nset yrange [0:*]\nset key outside right\n"
		"set grid\n", png, title);
	down = mark_failures(gp, res, n, &up);
	fputs("plot ", gp);
	for (size_t i = 0; i < n; i++) {
		char label[32];

		if (res[i].streams == 0)
			snprintf(label, sizeof(label), "auto streams");
		else
			snprintf(label, sizeof(label), "%u stream%s", res[i].streams, res[i].streams == 1 ? "" : "s");
		fprintf(gp, "%s'%s' index %zu using 1:2 with linespoints lw 2 pt 7 ps 0.5 title '%s'", i ? ", " : "",
			dat, i, label);
	}
	/* The lines drawn by mark_failures, in the key. */
	if (down)
		fputs(", NaN with lines dt 2 lw 1.5 lc rgb 'red' title 'link down (a stream failed)'", gp);
	if (up)
		fputs(", NaN with lines dt 3 lw 1.5 lc rgb 'dark-green' title 'link back'", gp);
	fputs("\n", gp);
	st = pclose(gp);
	if (st == -1 || !WIFEXITED(st) || WEXITSTATUS(st) != 0) {
		snprintf(err, errlen, "gnuplot failed drawing %s (data in %s)", png, dat);
		return -1;
	}
	return 0;
}
