/* mwpredict - predicts a multi-cluster master-worker run's time and
 * efficiency from a model file, selects the computers worth using and
 * suggests inter-cluster grains (thesis chapters 3 and 4; docs/model.md). */
#include <getopt.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>

#include "launcher/model.h"
#include "launcher/modelconf.h"
#include "launcher/modelout.h"

#define MAX_TUNINGS MODEL_MAX_CLUSTERS

static void usage(FILE *out)
{
	fprintf(out,
		"usage: mwpredict [-j] [-s] [-t] MODEL.conf\n"
		"  -j, --json     one JSON object instead of the report\n"
		"  -s, --select   select the computers that keep every cluster at the\n"
		"                 efficiency threshold, and predict with those only\n"
		"  -t, --tune     inter-cluster grains that shorten the run, and the bytes\n"
		"                 per task each bottleneck link allows\n"
		"  -h, --help     this text\n"
		"  -V, --version  print the version\n"
		"exit status: 0 ok, 1 bad model file, 2 usage\n");
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "json", no_argument, NULL, 'j' }, { "select", no_argument, NULL, 's' },
		{ "tune", no_argument, NULL, 't' }, { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' }, { NULL, 0, NULL, 0 },
	};
	/* Large (per-worker arrays): static rather than on the stack. */
	static struct model in, chosen;
	static struct model_selection sel;
	static struct model_result r, rin;
	struct model_tuning tunings[MAX_TUNINGS];
	size_t nt = 0;
	int json = 0, select = 0, tune = 0, ch;
	char err[512];

	while ((ch = getopt_long(argc, argv, "jsthV", opts, NULL)) != -1) {
		switch (ch) {
		case 'j': json = 1; break;
		case 's': select = 1; break;
		case 't': tune = 1; break;
		case 'h': usage(stdout); return 0;
		case 'V': puts("mwpredict " LDS_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	if (argc - optind != 1) {
		fprintf(stderr, "mwpredict: expected one model file\n");
		usage(stderr);
		return 2;
	}
	if (modelconf_load(argv[optind], &in, err, sizeof(err)) < 0) {
		fprintf(stderr, "mwpredict: %s\n", err);
		return 1;
	}
	if (select)
		model_select(&in, &chosen, &sel);
	else
		chosen = in;
	model_predict(&chosen, &r);
	if (tune) {
		model_predict(&in, &rin);
		nt = model_tune(&in, tunings, MAX_TUNINGS);
	}
	if (json) {
		model_print_json(stdout, argv[optind], &in, &chosen, &r, select ? &sel : NULL, tune ? &rin : NULL, tunings, nt);
	} else {
		if (select)
			model_print_selection(stdout, &in, &sel);
		model_print_report(stdout, argv[optind], &chosen, &r);
		if (tune)
			model_print_tuning(stdout, &in, &rin, tunings, nt);
	}
	if (fflush(stdout) != 0 || ferror(stdout)) {
		perror("mwpredict: writing the output");
		return 1;
	}
	return 0;
}
