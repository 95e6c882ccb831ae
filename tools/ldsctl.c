/* ldsctl - asks a running ldsd for its status or metrics, sets a link's stream count,
 * or injects faults in tests. */
#include <errno.h>
#include <getopt.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ldsd/config.h"
#include "ldsd/ctlclient.h"

#define DEFAULT_CTL "/run/lds/ldsd.ctl"

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ldsctl [-c FILE | -s SOCKET] status [--json]\n"
		"       ldsctl [-c FILE | -s SOCKET] metrics\n"
		"       ldsctl [-c FILE | -s SOCKET] streams PEER N|auto\n"
		"       ldsctl [-c FILE | -s SOCKET] fault break|stall PEER [STREAM]\n"
		"  -c, --config FILE   find the control socket in ldsd's configuration\n"
		"  -s, --socket PATH   control socket (default $LDSCTL_SOCKET or " DEFAULT_CTL ")\n"
		"  -j, --json          status as JSON\n"
		"  -h, --help          this text\n"
		"  -V, --version       print the version\n"
		"exit status: 0 ok, 1 ldsd unreachable or it reported an error, 2 usage\n");
}

/* Requests that only read may go to the status socket: used when the
 * control socket is closed to this user (ldsd.conf(5) status_group), the
 * status socket being the configured one or ".status" beside ".ctl". */
static const char *readable_socket(const char *ctl, const char *configured)
{
	static char path[108];
	size_t n = strlen(ctl);

	if (access(ctl, W_OK) == 0 || errno != EACCES)
		return ctl;
	if (configured != NULL)
		return configured;
	if (n < 4 || strcmp(ctl + n - 4, ".ctl") != 0 || n - 4 + sizeof(".status") > sizeof(path))
		return ctl;
	snprintf(path, sizeof(path), "%.*s.status", (int)(n - 4), ctl);
	return path;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' }, { "socket", required_argument, NULL, 's' },
		{ "json", no_argument, NULL, 'j' },         { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },      { NULL, 0, NULL, 0 },
	};
	static struct config cfg;
	const char *sock = getenv("LDSCTL_SOCKET"), *file = NULL;
	char req[256], err[1024];
	int json = 0, ch;

	while ((ch = getopt_long(argc, argv, "+c:s:jhV", opts, NULL)) != -1) {
		switch (ch) {
		case 'c': file = optarg; break;
		case 's': sock = optarg; break;
		case 'j': json = 1; break;
		case 'h': usage(stdout); return 0;
		case 'V': puts("ldsctl " LDS_VERSION); return 0;
		default: usage(stderr); return 2;
		}
	}
	/* Options may also follow the command, as in "status --json". */
	for (int i = optind; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "-j") == 0) {
			json = 1;
			memmove(&argv[i], &argv[i + 1], (size_t)(argc - i - 1) * sizeof(*argv));
			argc--;
			i--;
		}
	}
	if (file) {
		if (config_load(file, &cfg, err, sizeof(err)) < 0) {
			fprintf(stderr, "ldsctl: %s\n", err);
			return 2;
		}
		sock = cfg.control_socket;
	}
	if (sock == NULL)
		sock = DEFAULT_CTL;
	if (optind < argc && strcmp(argv[optind], "status") == 0 && argc - optind == 1) {
		snprintf(req, sizeof(req), "status%s\n", json ? " json" : "");
		sock = readable_socket(sock, file ? cfg.status_socket : NULL);
	} else if (optind < argc && strcmp(argv[optind], "metrics") == 0 && argc - optind == 1) {
		snprintf(req, sizeof(req), "metrics\n");
		sock = readable_socket(sock, file ? cfg.status_socket : NULL);
	} else if (optind < argc && strcmp(argv[optind], "streams") == 0 && argc - optind == 3) {
		snprintf(req, sizeof(req), "streams %s %s\n", argv[optind + 1], argv[optind + 2]);
	} else if (optind < argc && strcmp(argv[optind], "fault") == 0 && argc - optind >= 3 && argc - optind <= 4 &&
		   (strcmp(argv[optind + 1], "break") == 0 || strcmp(argv[optind + 1], "stall") == 0)) {
		snprintf(req, sizeof(req), "fault %s %s %s\n", argv[optind + 1], argv[optind + 2],
			 argc - optind == 4 ? argv[optind + 3] : "");
	} else {
		usage(stderr);
		return 2;
	}
	return ctlclient_print("ldsctl", "ldsd", sock, req, 10.0);
}
