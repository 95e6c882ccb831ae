/*
 * ldsbench - the WAN throughput benchmark of LDS (thesis A.3): ldsbench
 * recv on one side, ldsbench send on the other, through the gateways
 * (ldsd) or, with --direct, through a link run in-process.  ldsbench(1),
 * docs/ldsbench.md; the modules are listed in ldsbench.h.
 */
#include <errno.h>
#include <getopt.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "ldsd/config.h"
#include "ldsd/log.h"
#include "tools/ldsbench/ldsbench.h"

#define DEFAULT_NAME "bench"
#define MAX_SIZE (256u << 20)

volatile sig_atomic_t bench_interrupts;

struct opts {
	int send;
	struct io_opts io;
	struct send_opts s;
	int once, quiet;
	int size_given;            /* -l was on the command line */
	const char *plot;
	unsigned sweep[BENCH_MAX_RUNS];
	size_t nsweep;
};

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ldsbench recv [-s SOCKET] [-n NAME] [-i SECS] [-1] [-J | --json-stream] [-q]\n"
		"       ldsbench recv --direct [ADDR:]PORT | --direct ADDR -p PORT [-w SIZE] [--key FILE]\n"
		"                      [--encryption MODE] [--transport NAME] [-i SECS] [-1] [-J | --json-stream] [-q]\n"
		"       ldsbench send -T CLUSTER/NAME [-s SOCKET] [--ctl PATH] [OPTIONS]\n"
		"       ldsbench send --direct HOST:PORT | --direct HOST -p PORT [-C ALGO] [-w SIZE] [--key FILE]\n"
		"                      [--encryption MODE] [--transport NAME] [OPTIONS]\n"
		"Measures the throughput of an LDS link with checksummed messages (thesis A.3):\n"
		"through the local ldsd, or with --direct through a link run in this process.\n"
		"Options that iperf3 has mean what they mean in iperf3 (-P -l -t -i -O -w -C -p -R -J).\n"
		"  -s, --socket PATH      ldsd's client socket (default $LDS_SOCKET or /run/lds/ldsd.sock)\n"
		"      --ctl PATH         ldsd's control socket (default: the client socket, .ctl for .sock)\n"
		"  -n, --name NAME        recv: the endpoint to receive on (default \"bench\")\n"
		"  -T, --to CLUSTER/NAME  send: the receiver's endpoint, e.g. clusterB/bench\n"
		"  -D, --direct WHERE     no daemons: send connects to HOST:PORT, recv listens on [ADDR:]PORT\n"
		"  -p, --port PORT        direct: the port (then --direct names only the host or address)\n"
		"  -P, --streams N|auto   send: the link's streams for the run (1..64; ldsd: set through its\n"
		"                         control socket and put back afterwards)\n"
		"  -l, --size SIZE        bytes per message (default 100k; suffixes k, M: binary)\n"
		"  -t, --time SECS        how long to send (default 10)\n"
		"  -i, --interval SECS    report every SECS (default 1; recv: 0 = only per run)\n"
		"  -O, --omit SECS        leave the first SECS out of the average (slow start; default 0)\n"
		"  -R, --reverse          send: the receiver sends the run and this side checks it\n"
		"      --bidir            send: both directions at once, reported per direction\n"
		"      --latency          send: one message out at a time, each sent back by the receiver:\n"
		"                         round trips per second and their min/median/p99/max (-l default 64)\n"
		"      --wait SECS        wait this long for the receiver, and at most this long without a\n"
		"                         message delivered at the end of a run (default 30)\n"
		"  -C, --congestion ALGO  direct: TCP congestion control (default as ldsd: bbr if available;\n"
		"                         through ldsd: its peer's congestion in ldsd.conf)\n"
		"  -w, --window SIZE      direct: each stream's socket buffers (SO_SNDBUF, SO_RCVBUF), as\n"
		"                         tcp_buffer in ldsd.conf (default: the kernel's autotuning; through\n"
		"                         ldsd: its peer's tcp_buffer in ldsd.conf)\n"
		"      --memory SIZE      direct: send and receive memory of the link (default as ldsd: 128M)\n"
		"      --key FILE         direct: the shared key (default: a built-in key that is no secret)\n"
		"      --encryption MODE  direct: aead (default: frames sealed, as ldsd) or none; both ends\n"
		"                         must agree\n"
		"      --transport NAME   direct: the link's transport, as in ldsd.conf (default tcp; rdma\n"
		"                         where built in and a device exists); both ends must agree\n"
		"      --sweep streams=N,N,...  send: one run per stream count, then a table like the\n"
		"                         thesis's Table A-2 (throughput, disconnections, relative to the first)\n"
		"      --plot FILE.png    send: throughput over time of every run, disconnections marked\n"
		"                         (gnuplot; data in FILE.dat)\n"
		"  -1, --once             recv: exit after one send command (all the runs of a sweep)\n"
		"  -J, --json             one JSON document at the end: start, intervals, runs, end, sweep, error\n"
		"      --json-stream      one JSON object per line as it happens: events start, interval, end,\n"
		"                         sweep, recv_interval, recv_run, error\n"
		"  -q, --quiet            no line per interval\n"
		"  -h, --help             this text\n"
		"  -V, --version          print the version\n"
		"exit status: 0 ok; 1 the benchmark failed (receiver unreachable, data lost or corrupt, an option\n"
		"the kernel refuses); 2 usage error\n");
}

/* A size as in ldsd.conf, at most MAX_SIZE. */
static int parse_size(const char *s, size_t *out)
{
	unsigned long long v;

	if (config_parse_size(s, &v) < 0 || v > MAX_SIZE)
		return -1;
	*out = (size_t)v;
	return 0;
}

static int parse_secs(const char *s, double min, double *out)
{
	char *end;
	double v = strtod(s, &end);

	if (end == s || *end != '\0' || !(v >= min) || v > 1e6)
		return -1;
	*out = v;
	return 0;
}

static int parse_streams(const char *s, unsigned *out)
{
	char *end;
	unsigned long v;

	if (strcmp(s, "auto") == 0) {
		*out = 0;
		return 0;
	}
	v = strtoul(s, &end, 10);
	if (end == s || *end != '\0' || v < 1 || v > CONFIG_MAX_STREAMS)
		return -1;
	*out = (unsigned)v;
	return 0;
}

static int parse_sweep(const char *s, struct opts *o)
{
	char buf[256], *tok, *save;

	if (strncmp(s, "streams=", 8) != 0 || strlen(s) >= sizeof(buf))
		return -1;
	snprintf(buf, sizeof(buf), "%s", s + 8);
	for (tok = strtok_r(buf, ",", &save); tok; tok = strtok_r(NULL, ",", &save)) {
		if (o->nsweep == BENCH_MAX_RUNS || parse_streams(tok, &o->sweep[o->nsweep]) < 0)
			return -1;
		o->nsweep++;
	}
	return o->nsweep > 0 ? 0 : -1;
}

/* Reports a usage error (in JSON too with --json) and returns 2. */
static int bad_usage(const struct report *r, const char *fmt, const char *arg)
{
	report_error(r, fmt, arg);
	usage(stderr);
	return BENCH_EXIT_USAGE;
}

enum { O_CTL = 256, O_KEY, O_SWEEP, O_PLOT, O_MEMORY, O_ENCRYPTION, O_WAIT, O_BIDIR, O_JSON_STREAM, O_TRANSPORT,
       O_LATENCY };

static int parse_port(const char *s, unsigned *out)
{
	char *end;
	unsigned long v = strtoul(s, &end, 10);

	if (end == s || *end != '\0' || v < 1 || v > 65535)
		return -1;
	*out = (unsigned)v;
	return 0;
}

/* The options whose meaning depends on the mode, checked once all are
 * known. */
static int check_modes(struct opts *o, const struct report *r)
{
	if (!o->io.direct && o->io.window)
		return bad_usage(r, "%s", "--window: through ldsd the link's socket buffers are its peer's tcp_buffer "
				 "in ldsd.conf (ldsd.conf(5)); --window is for --direct");
	if (!o->io.direct && o->io.congestion)
		return bad_usage(r, "%s", "--congestion: through ldsd the link's congestion control is its peer's "
				 "congestion in ldsd.conf (ldsd.conf(5)); --congestion is for --direct");
	if (!o->io.direct && o->io.port)
		return bad_usage(r, "%s", "--port: through ldsd the link's port is its peer's port in ldsd.conf; "
				 "--port is for --direct");
	if (!o->io.direct && (o->io.key_file || o->io.memory || o->io.encryption || o->io.transport))
		return bad_usage(r, "%s", "--memory, --key, --encryption and --transport are for --direct "
				 "(ldsd's own come from ldsd.conf)");
	/* A bare number, or one colon (HOST:PORT; an IPv6 address has more). */
	if (o->io.port && (o->io.direct[strspn(o->io.direct, "0123456789")] == '\0' ||
			   (strchr(o->io.direct, ':') && strchr(o->io.direct, ':') == strrchr(o->io.direct, ':'))))
		return bad_usage(r, "--direct %s: with --port, --direct names the host or address only", o->io.direct);
	if (o->s.reverse && o->s.bidir)
		return bad_usage(r, "%s", "--reverse and --bidir exclude each other (--bidir sends both ways)");
	if (o->s.latency && (o->s.reverse || o->s.bidir))
		return bad_usage(r, "%s", "--latency times round trips this side starts: not with --reverse or --bidir");
	if (o->s.reverse && o->plot)
		return bad_usage(r, "%s", "--plot draws the run this side sends: not with --reverse");
	return -1;
}

static int parse_args(int argc, char **argv, struct opts *o, const struct report *r)
{
	static const struct option lo[] = {
		{ "socket", required_argument, NULL, 's' },   { "ctl", required_argument, NULL, O_CTL },
		{ "name", required_argument, NULL, 'n' },     { "to", required_argument, NULL, 'T' },
		{ "direct", required_argument, NULL, 'D' },   { "streams", required_argument, NULL, 'P' },
		{ "size", required_argument, NULL, 'l' },     { "time", required_argument, NULL, 't' },
		{ "interval", required_argument, NULL, 'i' }, { "omit", required_argument, NULL, 'O' },
		{ "wait", required_argument, NULL, O_WAIT },  { "congestion", required_argument, NULL, 'C' },
		{ "memory", required_argument, NULL, O_MEMORY }, { "key", required_argument, NULL, O_KEY },
		{ "window", required_argument, NULL, 'w' },   { "encryption", required_argument, NULL, O_ENCRYPTION },
		{ "port", required_argument, NULL, 'p' },     { "reverse", no_argument, NULL, 'R' },
		{ "bidir", no_argument, NULL, O_BIDIR },      { "json-stream", no_argument, NULL, O_JSON_STREAM },
		{ "sweep", required_argument, NULL, O_SWEEP }, { "plot", required_argument, NULL, O_PLOT },
		{ "once", no_argument, NULL, '1' },           { "json", no_argument, NULL, 'J' },
		{ "transport", required_argument, NULL, O_TRANSPORT }, { "latency", no_argument, NULL, O_LATENCY },
		{ "quiet", no_argument, NULL, 'q' },          { "help", no_argument, NULL, 'h' },
		{ "version", no_argument, NULL, 'V' },        { NULL, 0, NULL, 0 },
	};
	int ch;

	opterr = 0;
	while ((ch = getopt_long(argc, argv, ":s:n:T:D:P:l:t:i:O:w:C:p:R1JqhV", lo, NULL)) != -1) {
		switch (ch) {
		case 's': o->io.socket = optarg; break;
		case O_CTL: o->io.ctl = optarg; break;
		case 'n': o->io.name = optarg; break;
		case 'T': o->s.to = optarg; break;
		case 'D': o->io.direct = optarg; break;
		case 'P':
			if (parse_streams(optarg, &o->s.streams) < 0)
				return bad_usage(r, "--streams %s: want 1..64 or auto", optarg);
			o->s.set_streams = 1;
			break;
		case 'l':
			if (parse_size(optarg, &o->s.size) < 0 || o->s.size < MSG_HDR)
				return bad_usage(r, "--size %s: want 40 bytes to 256M (suffixes k, M)", optarg);
			o->size_given = 1;
			break;
		case 't':
			if (parse_secs(optarg, 0.1, &o->s.seconds) < 0)
				return bad_usage(r, "--time %s: want seconds, at least 0.1", optarg);
			break;
		case 'i':
			if (parse_secs(optarg, 0, &o->s.interval) < 0)
				return bad_usage(r, "--interval %s: want seconds", optarg);
			break;
		case 'O':
			if (parse_secs(optarg, 0, &o->s.omit) < 0)
				return bad_usage(r, "--omit %s: want seconds", optarg);
			break;
		case O_WAIT:
			if (parse_secs(optarg, 0.1, &o->s.wait) < 0)
				return bad_usage(r, "--wait %s: want seconds, at least 0.1", optarg);
			break;
		case 'C': o->io.congestion = optarg; break;
		case 'p':
			if (parse_port(optarg, &o->io.port) < 0)
				return bad_usage(r, "--port %s: want 1..65535", optarg);
			break;
		case 'R': o->s.reverse = 1; break;
		case O_BIDIR: o->s.bidir = 1; break;
		case O_LATENCY: o->s.latency = 1; break;
		case O_MEMORY:
			if (parse_size(optarg, &o->io.memory) < 0 || o->io.memory < (1u << 20))
				return bad_usage(r, "--memory %s: want 1M to 256M", optarg);
			break;
		case 'w':
			if (parse_size(optarg, &o->io.window) < 0 || o->io.window < 4096)
				return bad_usage(r, "--window %s: want 4k or more (suffixes k, M)", optarg);
			break;
		case O_KEY: o->io.key_file = optarg; break;
		case O_TRANSPORT: o->io.transport = optarg; break;
		case O_ENCRYPTION:
			if (strcmp(optarg, "aead") != 0 && strcmp(optarg, "none") != 0)
				return bad_usage(r, "--encryption %s: want aead or none", optarg);
			o->io.encryption = optarg;
			break;
		case O_SWEEP:
			if (parse_sweep(optarg, o) < 0)
				return bad_usage(r, "--sweep %s: want streams=N,N,... (1..64 or auto, at most 32 runs)", optarg);
			break;
		case O_PLOT: o->plot = optarg; break;
		case '1': o->once = 1; break;
		case 'J': case O_JSON_STREAM: break; /* early_format */
		case 'q': o->quiet = 1; break;
		case 'h': usage(stdout); exit(BENCH_EXIT_OK);
		case 'V': puts("ldsbench " LDS_VERSION); exit(BENCH_EXIT_OK);
		case ':': return bad_usage(r, "%s needs a value", argv[optind - 1]);
		default: return bad_usage(r, "unknown option %s", argv[optind - 1]);
		}
	}
	if (optind + 1 != argc || (strcmp(argv[optind], "send") != 0 && strcmp(argv[optind], "recv") != 0))
		return bad_usage(r, "%s", optind < argc ? "want one command, send or recv" : "no command: send or recv?");
	o->send = strcmp(argv[optind], "send") == 0;
	if (o->send && o->s.to == NULL && o->io.direct == NULL)
		return bad_usage(r, "%s", "send: where to? --to CLUSTER/NAME, or --direct HOST:PORT");
	if (o->s.to && (strchr(o->s.to, '/') == NULL || o->s.to[0] == '/'))
		return bad_usage(r, "--to %s: want CLUSTER/NAME, e.g. clusterB/bench", o->s.to);
	if (o->s.to && o->io.direct)
		return bad_usage(r, "%s", "--to and --direct exclude each other (direct mode has one receiver)");
	if (!o->send && (o->s.to || o->s.set_streams || o->nsweep || o->plot || o->io.congestion || o->s.reverse ||
			 o->s.bidir || o->s.latency))
		return bad_usage(r, "%s", "recv takes no --to, --streams, --sweep, --plot, --congestion, --reverse, "
				 "--bidir or --latency (the sender asks for them)");
	if (o->s.latency && !o->size_given)
		o->s.size = 64;
	if (o->send && o->once)
		return bad_usage(r, "%s", "--once is for recv");
	if (o->nsweep && o->s.set_streams)
		return bad_usage(r, "%s", "--sweep sets the streams of each run: leave --streams out");
	if (check_modes(o, r) >= 0)
		return BENCH_EXIT_USAGE;
	if (o->send && o->s.interval <= 0)
		return bad_usage(r, "%s", "send: --interval must be above 0");
	if (o->send && o->s.omit >= o->s.seconds)
		return bad_usage(r, "%s", "--omit must be shorter than --time");
	return -1;
}

static void on_signal(int sig)
{
	(void)sig;
	bench_interrupts++;
}

static void noop_message(void *arg, const char *src, const uint8_t *buf, size_t len) {}
static void noop_room(void *arg) {}
static void noop_fatal(void *arg, const char *text) {}

static int do_send(struct opts *o, struct bench_io *io, const struct report *r)
{
	struct run_result *res = calloc(2 * BENCH_MAX_RUNS, sizeof(*res)), *rev = res + BENCH_MAX_RUNS;
	size_t n = o->nsweep ? o->nsweep : 1;
	char err[BENCH_ERR_MAX], to[WIRE_ENDPOINT_MAX + 1], title[256];
	int failed = 0;

	if (res == NULL) {
		report_error(r, "out of memory");
		return BENCH_EXIT_FAIL;
	}
	if (o->io.direct)
		snprintf(to, sizeof(to), "%s/%s", DIRECT_RECV_CLUSTER, DIRECT_ENDPOINT);
	else
		snprintf(to, sizeof(to), "%s", o->s.to);
	o->s.to = to;
	for (size_t i = 0; i < n && bench_interrupts == 0; i++) {
		if (o->nsweep) {
			o->s.streams = o->sweep[i];
			o->s.set_streams = 1;
		}
		o->s.last = i + 1 == n;
		failed |= session_send(io, &o->s, r, (unsigned)i + 1, &res[i], &rev[i]) < 0;
	}
	if (o->nsweep)
		report_sweep(r, res, n);
	if (o->plot) {
		snprintf(title, sizeof(title), "ldsbench %s -> %s (%s)", io->ops->endpoint(io), to, io->ops->name);
		if (plot_runs(o->plot, res, n, title, err, sizeof(err)) < 0) {
			report_error(r, "%s", err);
			failed = 1;
		}
	}
	for (size_t i = 0; i < n; i++)
		free(res[i].iv);
	free(res);
	return failed ? BENCH_EXIT_FAIL : BENCH_EXIT_OK;
}

/* The output format, known before the arguments are checked so that
 * their errors come in it too. */
static enum report_format early_format(int argc, char **argv)
{
	enum report_format f = REPORT_TEXT;

	for (int i = 1; i < argc; i++) {
		if (strcmp(argv[i], "--json") == 0 || strcmp(argv[i], "-J") == 0)
			f = REPORT_JSON;
		else if (strcmp(argv[i], "--json-stream") == 0)
			f = REPORT_JSON_STREAM;
	}
	return f;
}

/* Everything after the arguments; the exit status. */
static int run(struct opts *o, const struct report *r)
{
	struct bench_io_events quiet = { .message = noop_message, .room = noop_room, .fatal = noop_fatal };
	struct sigaction sa = { .sa_handler = on_signal };
	struct bench_io *io;
	struct evloop *ev;
	char err[BENCH_ERR_MAX], peer[WIRE_NAME_MAX + 1] = "";
	int rc, prev_streams = -1;

	o->io.listen = !o->send;
	o->io.streams = o->nsweep ? o->sweep[0] : o->s.set_streams ? o->s.streams : 4;
	if (!o->send && !o->io.direct && o->io.name == NULL)
		o->io.name = DEFAULT_NAME;
	if (o->plot && plot_check(err, sizeof(err)) < 0) {
		report_error(r, "%s", err);
		return BENCH_EXIT_FAIL;
	}
	log_init("ldsbench", 1, LOG_LVL_WARN);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	ev = evloop_new();
	if (ev == NULL) {
		report_error(r, "cannot create the event loop: %s", strerror(errno));
		return BENCH_EXIT_FAIL;
	}
	io = o->io.direct ? io_direct_open(ev, &o->io, &quiet, err, sizeof(err))
			  : io_ldsd_open(ev, &o->io, &quiet, err, sizeof(err));
	if (io == NULL) {
		report_error(r, "%s", err);
		evloop_free(ev);
		return BENCH_EXIT_FAIL;
	}
	if (o->send && !o->io.direct && (o->s.set_streams || o->nsweep)) {
		/* The link's own setting comes back after the benchmark. */
		struct linkstat st;

		snprintf(peer, sizeof(peer), "%.*s", (int)strcspn(o->s.to, "/"), o->s.to);
		io->ops->stats(io, peer, &st);
		if (st.valid)
			prev_streams = st.streams_auto ? 0 : (int)st.streams;
	}
	rc = o->send ? do_send(o, io, r) : session_recv(io, r, o->s.interval, o->once);
	if (prev_streams >= 0) {
		if (io->ops->set_streams(io, peer, (unsigned)prev_streams, err, sizeof(err)) < 0)
			fprintf(stderr, "ldsbench: could not put the link's streams back to %d: %s\n", prev_streams, err);
	}
	io->ops->close(io);
	evloop_free(ev);
	return rc;
}

int main(int argc, char **argv)
{
	struct opts o = { .s = { .size = 100 << 10, .seconds = 10, .interval = 1, .wait = 30 } };
	struct report r;
	int rc;

	if (report_init(&r, stdout, early_format(argc, argv), 0) < 0) {
		fprintf(stderr, "ldsbench: out of memory\n");
		return BENCH_EXIT_FAIL;
	}
	rc = parse_args(argc, argv, &o, &r);
	if (rc < 0) {
		r.quiet = o.quiet;
		rc = run(&o, &r);
	}
	report_finish(&r);
	return rc;
}
