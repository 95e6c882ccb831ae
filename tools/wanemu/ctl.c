/* ctl.c - the control socket (`wanemu ctl`): outages on command, changed
 * impairments and counters while the emulator runs.
 *
 * One request per connection, one line of text: "stats", "LINK show",
 * "LINK down", "LINK up", "LINK set key=value,...".  LINK is "a-b" (both
 * directions) or "a>b".  The reply is JSON, "ok" or "error: ...". */
#include <errno.h>
#include <fcntl.h>
#include <getopt.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>

#include "ldsd/clock.h"
#include "ldsd/ctlclient.h"
#include "ldsd/log.h"
#include "wanemu.h"

#define CTL_REQ_MAX 1024

static int ctl_fd = -1;
static char ctl_path_buf[sizeof(((struct sockaddr_un *)0)->sun_path)];

static int ctl_addr(const char *path, struct sockaddr_un *sa)
{
	memset(sa, 0, sizeof(*sa));
	sa->sun_family = AF_UNIX;
	if (strlen(path) >= sizeof(sa->sun_path))
		return -ENAMETOOLONG;
	strcpy(sa->sun_path, path);
	return 0;
}

/* Applies "set" to d; new outages count from now, not from the start. */
static int ctl_set(struct wanemu *w, struct dir *d, const char *params, char *err, size_t errlen)
{
	struct dirconf c = d->conf;
	uint64_t since_start = clock_now_ns() - w->t0;
	int first = c.noutage;

	if (spec_apply(&c, params, err, errlen) < 0)
		return -1;
	for (int i = first; i < c.noutage; i++)
		c.outage[i].start_ns += since_start;
	d->conf = c;
	return 0;
}

static void ctl_handle(struct wanemu *w, char *req, FILE *out)
{
	char *verb, *link, *args, err[256] = "";
	struct dir *d[2];
	int n;

	req[strcspn(req, "\r\n")] = '\0';
	link = strtok_r(req, " ", &args);
	if (link == NULL) {
		fputs("error: empty request\n", out);
		return;
	}
	if (strcmp(link, "stats") == 0) {
		stats_json(out, w);
		return;
	}
	verb = strtok_r(NULL, " ", &args);
	n = fwd_find(w, link, d);
	if (n == 0) {
		fprintf(out, "error: no link '%s' (names are a-b for both directions, a>b for one)\n", link);
		return;
	}
	for (int i = 0; verb != NULL && i < n; i++) {
		if (strcmp(verb, "show") == 0) {
			fprintf(out, "%s ", d[i]->name);
			spec_print(out, &d[i]->conf);
			fputc('\n', out);
		} else if (strcmp(verb, "down") == 0 || strcmp(verb, "up") == 0) {
			path_set_down(d[i], verb[0] == 'd', clock_now_ns());
		} else if (strcmp(verb, "set") == 0 && args != NULL && *args != '\0') {
			if (ctl_set(w, d[i], args, err, sizeof(err)) < 0)
				break;
		} else {
			snprintf(err, sizeof(err), "unknown request '%s' (show, down, up, set key=value,...)", verb);
			break;
		}
	}
	if (verb == NULL)
		snprintf(err, sizeof(err), "what to do with %s? (show, down, up, set key=value,...)", link);
	if (err[0] != '\0') {
		fprintf(out, "error: %s\n", err);
		return;
	}
	for (int i = 0; i < n; i++)
		d[i]->rtt_ns = d[i]->conf.delay_ns + we_dir(w, d[i]->to, d[i]->from)->conf.delay_ns;
	if (strcmp(verb, "show") != 0) {
		log_info("ctl: %s %s%s%s", link, verb, args && *args ? " " : "", args ? args : "");
		fputs("ok\n", out);
	}
}

static void ctl_on_accept(int fd, unsigned events, void *arg)
{
	struct wanemu *w = arg;
	char req[CTL_REQ_MAX + 1];
	size_t got = 0;
	ssize_t n;
	FILE *out;
	int c = accept4(fd, NULL, NULL, SOCK_CLOEXEC);

	if (c < 0)
		return;
	/* The forwarding loop waits for the request, so it is bounded. */
	setsockopt(c, SOL_SOCKET, SO_RCVTIMEO, &(struct timeval){ .tv_usec = 200000 }, sizeof(struct timeval));
	setsockopt(c, SOL_SOCKET, SO_SNDTIMEO, &(struct timeval){ .tv_usec = 200000 }, sizeof(struct timeval));
	while (got < CTL_REQ_MAX && (n = read(c, req + got, CTL_REQ_MAX - got)) > 0) {
		got += (size_t)n;
		if (memchr(req, '\n', got) != NULL)
			break;
	}
	req[got] = '\0';
	out = fdopen(c, "w");
	if (out == NULL) {
		close(c);
		return;
	}
	ctl_handle(w, req, out);
	fclose(out);
	fwd_rearm(w);
}

int ctl_listen(struct wanemu *w, const char *path)
{
	struct sockaddr_un sa;
	int fd, r;

	if (ctl_addr(path, &sa) < 0) {
		log_warnx("control socket path %s is too long", path);
		return -ENAMETOOLONG;
	}
	fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);
	if (fd < 0)
		return -errno;
	if (connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0) {
		log_warnx("control socket %s: another wanemu is running there (choose --ctl)", path);
		close(fd);
		return -EADDRINUSE;
	}
	unlink(path);
	if (bind(fd, (struct sockaddr *)&sa, sizeof(sa)) < 0 || listen(fd, 8) < 0) {
		r = -errno;
		log_warn("control socket %s", path);
		close(fd);
		return r;
	}
	chmod(path, 0600);
	r = evloop_watch(w->ev, fd, EV_READ, ctl_on_accept, w);
	if (r < 0) {
		close(fd);
		unlink(path);
		return r;
	}
	ctl_fd = fd;
	snprintf(ctl_path_buf, sizeof(ctl_path_buf), "%s", path);
	return 0;
}

void ctl_close(struct wanemu *w)
{
	if (ctl_fd < 0)
		return;
	evloop_unwatch(w->ev, ctl_fd);
	close(ctl_fd);
	unlink(ctl_path_buf);
	ctl_fd = -1;
}

static void ctl_usage(FILE *out)
{
	fputs("usage: wanemu ctl [-s SOCKET] stats\n"
	      "       wanemu ctl [-s SOCKET] LINK show|down|up\n"
	      "       wanemu ctl [-s SOCKET] LINK set key=value[,key=value...]\n"
	      "  -s, --socket PATH   control socket (default $WANEMU_CTL or " WE_CTL_DEFAULT ")\n"
	      "  LINK is a-b (both directions) or a>b (one)\n"
	      "exit status: 0 ok, 1 wanemu unreachable or it refused the request, 2 usage\n", out);
}

int ctl_main(int argc, char **argv)
{
	static const struct option opts[] = {
		{ "socket", required_argument, NULL, 's' }, { "help", no_argument, NULL, 'h' }, { 0 }
	};
	const char *path = getenv("WANEMU_CTL") ? getenv("WANEMU_CTL") : WE_CTL_DEFAULT;
	char req[CTL_REQ_MAX + 1];
	size_t len = 0;
	int c;

	while ((c = getopt_long(argc, argv, "+s:h", opts, NULL)) != -1) {
		if (c == 's') {
			path = optarg;
		} else {
			ctl_usage(c == 'h' ? stdout : stderr);
			return c == 'h' ? 0 : 2;
		}
	}
	if (optind >= argc) {
		ctl_usage(stderr);
		return 2;
	}
	for (int i = optind; i < argc; i++) {
		int k = snprintf(req + len, sizeof(req) - len, "%s%s", i > optind ? " " : "", argv[i]);

		if (k < 0 || (size_t)k >= sizeof(req) - len - 1) {
			fprintf(stderr, "wanemu ctl: request too long\n");
			return 2;
		}
		len += (size_t)k;
	}
	req[len++] = '\n';
	req[len] = '\0';
	return ctlclient_print("wanemu ctl", "wanemu", path, req, 5.0);
}
