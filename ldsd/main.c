/* main.c - ldsd: command line, start-up, signals, drain and exit. */
#include <errno.h>
#include <getopt.h>
#include <inttypes.h>
#include <malloc.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/signalfd.h>
#include <sys/stat.h>

#include "aesgcm.h"
#include "clientsrv.h"
#include "clock.h"
#include "confcheck.h"
#include "crc32c.h"
#include "ctl.h"
#include "jobexec.h"
#include "link.h"
#include "log.h"
#include "reload.h"
#include "service.h"

#define TICK_MS 50

/* The configuration file as an absolute path, for SIGHUP: the daemon runs
 * in "/". */
static char *config_path;

/* Exit codes, also in ldsd(8). */
enum { EXIT_OK = 0, EXIT_FAILURE_RUN = 1, EXIT_USAGE = 2, EXIT_CONFIG = 3 };

static void usage(FILE *out)
{
	fprintf(out,
		"usage: ldsd [-f] [-d] [-p PIDFILE] [--check] -c FILE\n"
		"  -c, --config FILE  configuration file (libconfig; see ldsd.conf(5))\n"
		"  -f, --foreground   stay in the foreground and log to stderr\n"
		"  -p, --pidfile FILE write the daemon's pid to FILE (locked while it runs)\n"
		"  -d, --debug        log debug messages too\n"
		"      --check        validate the configuration, print it with defaults, exit\n"
		"  -h, --help         this text\n"
		"  -V, --version      print the version\n"
		"exit status: 0 ok, 1 runtime failure, 2 usage, 3 bad configuration\n");
}

static void on_tick(uint64_t now, void *arg)
{
	struct daemon *d = arg;
	int idle = daemon_tick(d, now);

	idle &= clientsrv_drained(d->cs) && jobexec_idle(d->jx);
	if (!d->draining)
		return;
	if (idle) {
		log_info("drained: every message was acknowledged and every delivery reported; exiting");
		evloop_stop(d->ev);
	} else if (now >= d->drain_deadline_ns) {
		for (size_t i = 0; i < d->nlinks; i++)
			if (!link_idle(d->links[i]))
				log_warnx("link %s: exiting with unacknowledged messages after drain_timeout %.1f s; "
					  "their senders were not told they arrived",
					  link_name(d->links[i]), d->cfg->drain_timeout);
		evloop_stop(d->ev);
	}
}

static void on_idle(void *arg)
{
	struct daemon *d = arg;

	clientsrv_flush(d->cs);
	daemon_flush(d);
	/* Deliveries made while flushing links produce new client notices. */
	clientsrv_flush(d->cs);
}

static void on_signal(int fd, unsigned events, void *arg)
{
	struct daemon *d = arg;
	struct signalfd_siginfo si;

	while (read(fd, &si, sizeof(si)) == (ssize_t)sizeof(si)) {
		if (si.ssi_signo == SIGHUP) {
			if (d->draining)
				log_info("SIGHUP while draining: not reloading");
			else if (reload_config(d, config_path) == 0)
				clientsrv_links_changed(d->cs);
			continue;
		}
		if (d->draining) {
			log_info("second signal: exiting now");
			evloop_stop(d->ev);
			return;
		}
		log_info("signal %u: draining (up to %.1f s) before exit", si.ssi_signo, d->cfg->drain_timeout);
		d->draining = 1;
		service_stopping();
		d->drain_deadline_ns = clock_now_ns() + (uint64_t)(d->cfg->drain_timeout * 1e9);
		clientsrv_stop_accepting(d->cs);
		jobexec_drain(d->jx);
		for (size_t i = 0; i < d->nlinks; i++)
			link_drain(d->links[i]);
	}
}

/* Links reach the client server through the daemon's sink. */
static void sink_deliver(void *cs, struct link *from, struct rb_msg *m)
{
	clientsrv_deliver(cs, from, m);
}

static uint8_t *sink_place(void *cs, struct rb_msg *m)
{
	return clientsrv_place(cs, m);
}

static void sink_acked(void *cs, uint64_t client, uint64_t id)
{
	clientsrv_acked(cs, client, id);
}

static long exec_end_job(void *cs, const char *tag, uid_t uid, char *why, size_t len)
{
	return clientsrv_end_job(cs, tag, uid, why, len);
}

static void sink_lost(void *cs, struct link *l, uint64_t client, uint64_t id, const char *reason)
{
	clientsrv_lost(cs, l, client, id, reason);
}

static void sink_space(void *cs, struct link *l)
{
	clientsrv_space(cs, l);
}

static int setup(struct daemon *d, struct config *cfg)
{
	sigset_t mask;
	int sfd;

	if (daemon_init(d, cfg) < 0)
		return -1;
	sigemptyset(&mask);
	sigaddset(&mask, SIGTERM);
	sigaddset(&mask, SIGINT);
	sigaddset(&mask, SIGHUP);
	sigprocmask(SIG_BLOCK, &mask, NULL);
	signal(SIGPIPE, SIG_IGN);
	sfd = signalfd(-1, &mask, SFD_NONBLOCK | SFD_CLOEXEC);
	if (sfd < 0 || evloop_watch(d->ev, sfd, EV_READ, on_signal, d) < 0) {
		log_warn("cannot set up signal handling");
		return -1;
	}
	d->cs = clientsrv_new(d);
	if (d->cs == NULL)
		return -1;
	d->sink = (struct daemon_sink){ .arg = d->cs, .deliver = sink_deliver, .place = sink_place, .acked = sink_acked,
					.lost = sink_lost, .space = sink_space };
	d->ctl = ctl_new(d);
	if (d->ctl == NULL)
		return -1;
	d->jx = jobexec_new(d, exec_end_job, d->cs);
	if (d->jx == NULL)
		return -1;
	if (evloop_tick_add(d->ev, TICK_MS, on_tick, d) < 0 || evloop_idle_add(d->ev, on_idle, d) < 0)
		return -1;
	return daemon_start(d);
}

/* The client server first: dropping a gone client's messages still
 * reports them to their links. */
static void teardown(struct daemon *d)
{
	jobexec_free(d->jx);
	d->jx = NULL;
	ctl_free(d->ctl);
	clientsrv_free(d->cs);
	d->ctl = NULL;
	d->cs = NULL;
	daemon_fini(d);
}

/* Everything after the command line: check, or run until stopped.  *cfgp
 * is loaded here, and replaced by every reload; the caller frees it. */
static int ldsd(const char *file, const char *pidfile, int fg, int debug, int check, struct config **cfgp)
{
	struct config *cfg = *cfgp;
	struct daemon d = { 0 };
	int lvl, ready = -1, pidfd = -1, rc = EXIT_OK;
	char err[1024];

	if (config_load(file, cfg, err, sizeof(err)) < 0) {
		fprintf(stderr, "ldsd: %s\n", err);
		return EXIT_CONFIG;
	}
	if ((config_path = realpath(file, NULL)) == NULL) {
		fprintf(stderr, "ldsd: %s: %s\n", file, strerror(errno));
		return EXIT_CONFIG;
	}
	if (check) {
		if (confcheck_names(cfg, err, sizeof(err)) < 0) {
			fprintf(stderr, "ldsd: %s\n", err);
			return EXIT_CONFIG;
		}
		(void)confcheck_transports(cfg, stderr);
		config_print(cfg, stdout);
		fprintf(stderr, "ldsd: %s: configuration OK\n", file);
		return EXIT_OK;
	}
	lvl = log_level_parse(cfg->log_level);
	log_init("ldsd", fg, debug ? LOG_LVL_DEBUG : (lvl < 0 ? LOG_LVL_INFO : (enum log_level)lvl));
	/* Message buffers come and go at line rate: keep freed memory in the
	 * heap rather than mapping and faulting in fresh pages for each.  The
	 * link memory limits still bound how much is live. */
	mallopt(M_MMAP_THRESHOLD, 64 << 20);
	mallopt(M_TRIM_THRESHOLD, 128 << 20);
	/* Detach before setting up: see service.h.  The parent exits with
	 * the start-up's outcome. */
	if (!fg && (ready = service_detach()) < 0)
		fatalx("cannot detach: %s", strerror(-ready));
	if (pidfile != NULL && (pidfd = service_pidfile_open(pidfile)) < 0) {
		if (pidfd == -EWOULDBLOCK)
			log_warnx("pid file %s is locked: another ldsd runs with it", pidfile);
		else
			log_warnx("cannot write the pid file %s: %s", pidfile, strerror(-pidfd));
		return EXIT_FAILURE_RUN;
	}
	if (setup(&d, cfg) < 0) {
		log_warnx("start-up failed; see the messages above");
		rc = EXIT_FAILURE_RUN;
	} else {
		service_ready(ready);
		log_info("ldsd for cluster %s started (instance %016" PRIx64 ", %zu peers, clients on %s)",
			 cfg->cluster, d.instance, d.nlinks, cfg->client_socket);
		if (evloop_run(d.ev) < 0) {
			log_warn("event loop failed");
			rc = EXIT_FAILURE_RUN;
		}
	}
	*cfgp = d.cfg ? d.cfg : cfg; /* a reload may have replaced it */
	teardown(&d);
	service_pidfile_close(pidfile, pidfd);
	if (rc == EXIT_OK)
		log_info("ldsd for cluster %s stopped", (*cfgp)->cluster);
	return rc;
}

int main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "config", required_argument, NULL, 'c' }, { "foreground", no_argument, NULL, 'f' },
		{ "debug", no_argument, NULL, 'd' },        { "check", no_argument, NULL, 'k' },
		{ "help", no_argument, NULL, 'h' },         { "version", no_argument, NULL, 'V' },
		{ "pidfile", required_argument, NULL, 'p' }, { NULL, 0, NULL, 0 },
	};
	struct config *cfg;
	const char *file = NULL, *pidfile = NULL;
	int fg = 0, debug = 0, check = 0, ch, rc;

	while ((ch = getopt_long(argc, argv, "c:fdhVp:", opts, NULL)) != -1) {
		switch (ch) {
		case 'c': file = optarg; break;
		case 'f': fg = 1; break;
		case 'p': pidfile = optarg; break;
		case 'd': debug = 1; break;
		case 'k': check = 1; break;
		case 'h': usage(stdout); return EXIT_OK;
		case 'V':
			printf("ldsd %s (LDS wire protocol %u)\nCRC-32C: %s\nAES-256-GCM: %s\n", LDS_VERSION, WIRE_VERSION,
			       crc32c_impl(), aesgcm_name(AESGCM_FASTEST));
			return EXIT_OK;
		default: usage(stderr); return EXIT_USAGE;
		}
	}
	if (file == NULL || optind != argc) {
		fprintf(stderr, "ldsd: %s\n", file == NULL ? "no configuration file: use -c FILE" : "unexpected argument");
		usage(stderr);
		return EXIT_USAGE;
	}
	cfg = malloc(sizeof(*cfg));
	if (cfg == NULL) {
		fprintf(stderr, "ldsd: out of memory\n");
		rc = EXIT_FAILURE_RUN;
	} else {
		rc = ldsd(file, pidfile, fg, debug, check, &cfg);
	}
	free(cfg);
	free(config_path);
	return rc;
}
