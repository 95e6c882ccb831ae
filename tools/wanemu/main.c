/* wanemu - a WAN link emulator between network namespaces: command line,
 * topology set-up, and the `ctl` and `probe` subcommands. */
#include <errno.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "ldsd/log.h"
#include "wanemu.h"

#define MAX_ARGS 256

static void usage(FILE *out)
{
	fputs("usage: wanemu [options] --site NAME:netns=NS,addr=A.B.C.D/LEN ... --link A-B[:k=v,...] ...\n"
	      "       wanemu ctl [-s SOCKET] stats | LINK show|down|up | LINK set k=v,...\n"
	      "       wanemu probe [--server] [options] [ADDRESS]\n"
	      "  -S, --site SPEC       NAME:netns=NS,addr=IP/LEN[,dev=IFNAME][,mtu=N]  (2..16 sites)\n"
	      "  -l, --link SPEC       A-B[:PARAMS] both directions, A>B:PARAMS one; PARAMS:\n"
	      "                        delay=DUR jitter=DUR loss=P ge_p=P ge_r=P ge_bad=P ge_good=P\n"
	      "                        rate=RATE queue=BYTES|Nbdp reorder=P reorder_delay=DUR\n"
	      "                        dup=P mtu=N outage=DUR@START loss_at=wire|enqueue\n"
	      "  -o, --outage [LINK:]DUR@START   black hole on LINK (default every link)\n"
	      "  -s, --seed N          random seed (default: from the clock; printed)\n"
	      "  -c, --ctl PATH        control socket (default " WE_CTL_DEFAULT ")\n"
	      "  -j, --stats FILE      write the JSON counters there on exit (default stdout)\n"
	      "  -m, --mtu N           TUN MTU of sites without mtu= (default 1500)\n"
	      "  -n, --check           check the arguments, print the topology, exit\n"
	      "      --no-uso          no UDP segmentation offload on the TUN devices (a NIC\n"
	      "                        without it: the sending kernel cuts UDP GSO sends)\n"
	      "  -v, --verbose         log debug messages\n"
	      "  -h, --help\n"
	      "  -V, --version\n"
	      "DUR: 10ms 1.5s 200us;  RATE: 50mbit 1gbit;  P: 0.5% or 0.005\n"
	      "exit status: 0 ok, 1 run-time failure (namespace, TUN, socket), 2 usage\n", out);
}

static int bad(const char *what, const char *token, const char *why)
{
	fprintf(stderr, "wanemu: %s '%s': %s\n", what, token, why);
	return -1;
}

static int site_index(const struct wanemu *w, const char *name, size_t len)
{
	for (int i = 0; i < w->nsites; i++)
		if (strlen(w->site[i].name) == len && strncmp(w->site[i].name, name, len) == 0)
			return i;
	return -1;
}

static int name_ok(const char *s, size_t len)
{
	if (len == 0 || len >= WE_NAME_MAX)
		return 0;
	for (size_t i = 0; i < len; i++)
		if (!((s[i] >= 'a' && s[i] <= 'z') || (s[i] >= '0' && s[i] <= '9') || s[i] == '_'))
			return 0;
	return 1;
}

static int site_key(struct site *s, const char *key, const char *val, const char *spec)
{
	uint64_t v;

	if (strcmp(key, "netns") == 0 && *val && strlen(val) < sizeof(s->netns)) {
		strcpy(s->netns, val);
	} else if (strcmp(key, "dev") == 0 && *val && strlen(val) < sizeof(s->ifname)) {
		strcpy(s->ifname, val);
	} else if (strcmp(key, "mtu") == 0 && spec_size(val, &v) == 0 && v >= 68 && v <= 65535) {
		s->mtu = (unsigned)v;
	} else if (strcmp(key, "addr") == 0) {
		char ip[32];
		const char *slash = strchr(val, '/');
		char *end;
		long plen = slash ? strtol(slash + 1, &end, 10) : -1;

		if (slash == NULL || (size_t)(slash - val) >= sizeof(ip) || *end || plen < 1 || plen > 30)
			return bad("--site", spec, "addr must be A.B.C.D/LEN with LEN 1..30");
		memcpy(ip, val, (size_t)(slash - val));
		ip[slash - val] = '\0';
		if (inet_pton(AF_INET, ip, &s->addr) != 1)
			return bad("--site", spec, "addr is not an IPv4 address");
		s->plen = (int)plen;
	} else {
		fprintf(stderr, "wanemu: --site '%s': bad '%s=%s' (keys: netns addr dev mtu)\n", spec, key, val);
		return -1;
	}
	return 0;
}

static int parse_site(struct wanemu *w, const char *spec, unsigned mtu)
{
	const char *colon = strchr(spec, ':');
	struct site *s = &w->site[w->nsites];
	char *copy, *save = NULL, *tok;
	int r = 0;

	if (w->nsites == WE_MAX_SITES)
		return bad("--site", spec, "too many sites (16 at most)");
	if (colon == NULL || !name_ok(spec, (size_t)(colon - spec)))
		return bad("--site", spec, "want NAME:netns=NS,addr=IP/LEN with NAME of [a-z0-9_], 15 at most");
	if (site_index(w, spec, (size_t)(colon - spec)) >= 0)
		return bad("--site", spec, "site defined twice");
	memset(s, 0, sizeof(*s));
	memcpy(s->name, spec, (size_t)(colon - spec));
	strcpy(s->ifname, "wan0");
	s->mtu = mtu;
	copy = strdup(colon + 1);
	if (copy == NULL)
		return -1;
	for (tok = strtok_r(copy, ",", &save); tok != NULL && r == 0; tok = strtok_r(NULL, ",", &save)) {
		char *eq = strchr(tok, '=');

		if (eq == NULL) {
			r = bad("--site", spec, "parameters are key=value");
			break;
		}
		*eq = '\0';
		r = site_key(s, tok, eq + 1, spec);
	}
	free(copy);
	if (r == 0 && (s->netns[0] == '\0' || s->plen == 0))
		r = bad("--site", spec, "netns= and addr= are required");
	for (int i = 0; r == 0 && i < w->nsites; i++)
		if (w->site[i].addr.s_addr == s->addr.s_addr)
			r = bad("--site", spec, "address used by another site");
	if (r == 0)
		w->nsites++;
	return r;
}

static void dir_make(struct wanemu *w, int from, int to)
{
	struct dir *d = we_dir(w, from, to);

	if (w->linked[from * WE_MAX_SITES + to])
		return;
	w->linked[from * WE_MAX_SITES + to] = 1;
	d->from = from;
	d->to = to;
	snprintf(d->name, sizeof(d->name), "%s>%s", w->site[from].name, w->site[to].name);
	dirconf_init(&d->conf);
}

/* "A-B" or "A>B" at the start of spec; returns the length used or -1. */
static int parse_pair(struct wanemu *w, const char *spec, const char *opt, int *a, int *b, int *both)
{
	size_t n = strcspn(spec, "->"), m;

	if (spec[n] == '\0')
		return bad(opt, spec, "want A-B or A>B, A and B site names");
	*both = spec[n] == '-';
	m = strcspn(spec + n + 1, ":");
	*a = site_index(w, spec, n);
	*b = site_index(w, spec + n + 1, m);
	if (*a < 0 || *b < 0)
		return bad(opt, spec, "unknown site (define sites with --site first)");
	if (*a == *b)
		return bad(opt, spec, "a link joins two different sites");
	return (int)(n + 1 + m);
}

static int parse_link(struct wanemu *w, const char *spec)
{
	char err[256];
	int a, b, both, n = parse_pair(w, spec, "--link", &a, &b, &both);

	if (n < 0)
		return -1;
	dir_make(w, a, b);
	dir_make(w, b, a);
	if (spec[n] == '\0')
		return 0;
	if (spec_apply(&we_dir(w, a, b)->conf, spec + n + 1, err, sizeof(err)) < 0 ||
	    (both && spec_apply(&we_dir(w, b, a)->conf, spec + n + 1, err, sizeof(err)) < 0))
		return bad("--link", spec, err);
	return 0;
}

static int parse_outage(struct wanemu *w, const char *spec)
{
	const char *colon = strchr(spec, ':');
	int a, b, both;

	if (colon == NULL) {
		for (int i = 0; i < WE_MAX_SITES * WE_MAX_SITES; i++)
			if (w->linked[i] && spec_outage(spec, &w->dirs[i].conf) < 0)
				return bad("--outage", spec, "want [LINK:]DUR@START, e.g. 30s@10s (32 at most)");
		return 0;
	}
	if (parse_pair(w, spec, "--outage", &a, &b, &both) < 0)
		return -1;
	if (!w->linked[a * WE_MAX_SITES + b])
		return bad("--outage", spec, "no such link (add it with --link)");
	if (spec_outage(colon + 1, &we_dir(w, a, b)->conf) < 0 ||
	    (both && spec_outage(colon + 1, &we_dir(w, b, a)->conf) < 0))
		return bad("--outage", spec, "want [LINK:]DUR@START, e.g. 30s@10s (32 at most)");
	return 0;
}

static void print_topology(FILE *out, struct wanemu *w)
{
	for (int i = 0; i < w->nsites; i++)
		fprintf(out, "site %s: netns %s, %s %s/%d mtu %u\n", w->site[i].name, w->site[i].netns,
			w->site[i].ifname, inet_ntoa(w->site[i].addr), w->site[i].plen, w->site[i].mtu);
	for (int i = 0; i < WE_MAX_SITES * WE_MAX_SITES; i++) {
		if (!w->linked[i])
			continue;
		fprintf(out, "link %s: ", w->dirs[i].name);
		spec_print(out, &w->dirs[i].conf);
		fputc('\n', out);
	}
}

struct args {
	const char *site[MAX_ARGS], *link[MAX_ARGS], *outage[MAX_ARGS];
	int nsite, nlink, noutage;
	unsigned mtu;
	int check;
};

static int add_arg(const char **v, int *n, const char *s)
{
	if (*n == MAX_ARGS)
		return bad("option", s, "given too often");
	v[(*n)++] = s;
	return 0;
}

static int parse_args(int argc, char **argv, struct wanemu *w, struct args *a)
{
	static const struct option opts[] = {
		{ "site", required_argument, NULL, 'S' }, { "link", required_argument, NULL, 'l' },
		{ "outage", required_argument, NULL, 'o' }, { "seed", required_argument, NULL, 's' },
		{ "ctl", required_argument, NULL, 'c' }, { "stats", required_argument, NULL, 'j' },
		{ "mtu", required_argument, NULL, 'm' }, { "check", no_argument, NULL, 'n' },
		{ "verbose", no_argument, NULL, 'v' }, { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' }, { "no-uso", no_argument, NULL, 'U' }, { 0 }
	};
	uint64_t v;
	char *end;
	int c, r = 0;

	while (r == 0 && (c = getopt_long(argc, argv, "S:l:o:s:c:j:m:nvhV", opts, NULL)) != -1) {
		switch (c) {
		case 'S':
			r = add_arg(a->site, &a->nsite, optarg);
			break;
		case 'l':
			r = add_arg(a->link, &a->nlink, optarg);
			break;
		case 'o':
			r = add_arg(a->outage, &a->noutage, optarg);
			break;
		case 's':
			errno = 0;
			w->seed = strtoull(optarg, &end, 0);
			if (errno || end == optarg || *end)
				r = bad("--seed", optarg, "not a number");
			break;
		case 'c':
			w->ctl_path = optarg;
			break;
		case 'j':
			w->stats_path = optarg;
			break;
		case 'm':
			if (spec_size(optarg, &v) < 0 || v < 68 || v > 65535)
				r = bad("--mtu", optarg, "want 68..65535");
			a->mtu = (unsigned)v;
			break;
		case 'n':
			a->check = 1;
			break;
		case 'U':
			w->no_uso = 1;
			break;
		case 'v':
			log_set_level(LOG_LVL_DEBUG);
			break;
		case 'h':
			usage(stdout);
			exit(0);
		case 'V':
			puts("wanemu " LDS_VERSION);
			exit(0);
		default:
			usage(stderr);
			return -1;
		}
	}
	if (r == 0 && optind < argc)
		r = bad("argument", argv[optind], "unexpected (options only; subcommands ctl, probe come first)");
	for (int i = 0; r == 0 && i < a->nsite; i++)
		r = parse_site(w, a->site[i], a->mtu);
	if (r == 0 && w->nsites < 2)
		r = bad("--site", a->nsite ? a->site[0] : "", "at least two sites are needed");
	for (int i = 0; r == 0 && i < a->nlink; i++)
		r = parse_link(w, a->link[i]);
	for (int i = 0; r == 0 && i < a->noutage; i++)
		r = parse_outage(w, a->outage[i]);
	return r;
}

int main(int argc, char **argv)
{
	static struct wanemu w;
	static struct dir dirs[WE_MAX_SITES * WE_MAX_SITES];
	static int linked[WE_MAX_SITES * WE_MAX_SITES];
	static struct args a = { .mtu = 1500 };
	FILE *out = stdout;
	int r;

	log_init("wanemu", 1, LOG_LVL_INFO);
	if (argc > 1 && strcmp(argv[1], "ctl") == 0)
		return ctl_main(argc - 1, argv + 1);
	if (argc > 1 && strcmp(argv[1], "probe") == 0)
		return probe_main(argc - 1, argv + 1);
	w.dirs = dirs;
	w.linked = linked;
	w.ctl_path = WE_CTL_DEFAULT;
	w.seed = (uint64_t)time(NULL) ^ ((uint64_t)getpid() << 32);
	if (parse_args(argc, argv, &w, &a) < 0)
		return 2;
	for (int i = 0; i < WE_MAX_SITES * WE_MAX_SITES; i++)
		if (linked[i])
			dirs[i].rtt_ns = dirs[i].conf.delay_ns + we_dir(&w, dirs[i].to, dirs[i].from)->conf.delay_ns;
	if (a.check) {
		print_topology(stdout, &w);
		return 0;
	}
	if (geteuid() != 0)
		log_warnx("wanemu: not root; creating TUN devices in namespaces will likely fail");
	r = fwd_run(&w);
	if (w.stats_path != NULL && (out = fopen(w.stats_path, "w")) == NULL) {
		log_warn("--stats %s", w.stats_path);
		out = stdout;
	}
	stats_json(out, &w);
	if (out != stdout)
		fclose(out);
	return r < 0 ? 1 : 0;
}
