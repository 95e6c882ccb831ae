/*
 * exectest - asks a gateway's exec service (ldsd/jobexec.c) to run one
 * program as a one-rank job, through the local ldsd, and reports what
 * comes back.
 *
 *   exectest -s SOCK -c CLUSTER [-T SECONDS] [-L SECONDS] [-e NAME=VALUE]...
 *            [-P SECONDS] [-S SECONDS] [-l] [-r HEX] [-u USER] [-U UID] [-E TAG] PROGRAM [ARG...]
 *
 * Prints "STARTED text", the job's output as it comes (stdout lines to
 * stdout, stderr to stderr; with -l only "LINES n LAST text" at the end),
 * then "BYTES n" (output bytes received) and "EXIT status text", or
 * "REFUSED errno text".  -L asks for that lease (the gateway stops the job
 * when our link has been down that long).  -P waits that long
 * before reading anything (the gateway must hold the job back), -S sends
 * STOP that long after STARTED, -r sends the given hex bytes as the
 * request instead of a START, -u and -U name another requester than the
 * user running exectest (its gateway must refuse that).  -E sends END
 * with that tag for the job once it exited (ldsd/jobend.h), from the
 * same endpoint, and prints "END TAG" once its own gateway took it.  Exit status: 0 the job exited 0, 1 it
 * exited otherwise, 3 refused, 4 no answer within -T (default 60 s),
 * 5 a liblds error, 2 usage.
 */
#include <errno.h>
#include <getopt.h>
#include <pwd.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ldsd/clock.h"
#include "ldsd/execmsg.h"
#include "libclient/lds.h"

struct opts {
	const char *sock, *cluster, *raw, *user, *end_tag;
	long uid;
	const char *env[EXEC_MAX_ENV];
	unsigned nenv;
	double timeout, pause, stop_after, lease;
	int count_lines;
};

static int usage(void)
{
	fprintf(stderr, "usage: exectest -s SOCK -c CLUSTER [-T S] [-L S] [-e NAME=VALUE]... [-P S] [-S S] [-l] "
		"[-r HEX] [-u USER] [-U UID] [-E TAG] PROGRAM [ARG...]\n");
	return 2;
}

static int send_msg(struct lds *h, const char *dst, const uint8_t *buf, size_t n)
{
	int r = lds_send(h, dst, buf, n, NULL);

	if (r < 0)
		fprintf(stderr, "exectest: send to %s: %s\n", dst, lds_strerror(r));
	return r;
}

static int send_exec(struct lds *h, const char *dst, const struct exec_msg *m)
{
	uint8_t buf[1 << 16];
	size_t n = exec_encode(m, buf, sizeof(buf));

	if (n == 0) {
		fprintf(stderr, "exectest: cannot encode %s\n", exec_type_names[m->type]);
		return -EINVAL;
	}
	return send_msg(h, dst, buf, n);
}

static int send_raw(struct lds *h, const char *dst, const char *hex)
{
	uint8_t buf[4096];
	size_t n = 0;

	for (; hex[0] && hex[1] && n < sizeof(buf); hex += 2) {
		unsigned v;

		if (sscanf(hex, "%2x", &v) != 1)
			return -EINVAL;
		buf[n++] = (uint8_t)v;
	}
	return send_msg(h, dst, buf, n);
}

/* Output arrives in chunks, not lines: -l counts whole lines. */
struct lines {
	uint64_t n, bytes;
	char last[256], cur[256];
	size_t len;
};

static void count(struct lines *l, const uint8_t *p, size_t n)
{
	for (size_t i = 0; i < n; i++) {
		if (p[i] == '\n') {
			l->cur[l->len] = '\0';
			memcpy(l->last, l->cur, l->len + 1);
			l->len = 0;
			l->n++;
		} else if (l->len < sizeof(l->cur) - 1) {
			l->cur[l->len++] = (char)p[i];
		}
	}
}

static int run(struct lds *h, const char *dst, const struct opts *o)
{
	uint64_t end = clock_now_ns() + (uint64_t)(o->timeout * 1e9), stop_at = 0;
	struct lines lines = { 0 };

	if (o->pause > 0)
		usleep((useconds_t)(o->pause * 1e6));
	while (clock_now_ns() < end) {
		struct lds_msg msg;
		struct lds_event ev;
		struct exec_msg m;
		int r = lds_recv(h, &msg, 200);

		while (lds_next_event(h, &ev) == 1)
			if (ev.type != LDS_EV_ACKED) {
				printf("ERROR %s\n", ev.text);
				return 5;
			}
		if (stop_at && clock_now_ns() >= stop_at) {
			struct exec_msg stop = { .type = EXEC_STOP, .job = 1 };

			snprintf(stop.text, sizeof(stop.text), "exectest -S");
			stop_at = 0;
			if (send_exec(h, dst, &stop) < 0)
				return 5;
		}
		if (r == -ETIMEDOUT)
			continue;
		if (r < 0) {
			fprintf(stderr, "exectest: receive: %s\n", lds_strerror(r));
			return 5;
		}
		if (strcmp(msg.src, dst) != 0 || exec_decode(msg.data, msg.len, &m) < 0) {
			printf("BAD message from %s\n", msg.src);
			return 5;
		}
		switch (m.type) {
		case EXEC_STARTED:
			printf("STARTED %s\n", m.text);
			if (o->stop_after > 0)
				stop_at = clock_now_ns() + (uint64_t)(o->stop_after * 1e9);
			break;
		case EXEC_OUTPUT:
			if (m.stream != EXEC_COLLECTED)
				lines.bytes += m.len;
			if (o->count_lines && m.stream == EXEC_STDOUT)
				count(&lines, m.data, m.len);
			else
				fwrite(m.data, 1, m.len, m.stream == EXEC_STDOUT ? stdout : stderr);
			break;
		case EXEC_EXIT:
			if (o->count_lines)
				printf("LINES %llu LAST %s\n", (unsigned long long)lines.n, lines.last);
			printf("BYTES %llu\n", (unsigned long long)lines.bytes);
			printf("EXIT %d %s\n", m.status, m.text);
			return m.status == 0 ? 0 : 1;
		case EXEC_REFUSED:
			printf("REFUSED %d %s\n", m.err, m.text);
			return 3;
		default:
			printf("BAD %s\n", exec_type_names[m.type]);
			return 5;
		}
		fflush(stdout);
	}
	printf("TIMEOUT no answer within %.0f s\n", o->timeout);
	return 4;
}

int main(int argc, char **argv)
{
	struct opts o = { .timeout = 60, .uid = -1 };
	const struct passwd *pw = getpwuid(getuid());
	struct exec_rank rank = { 0 };
	struct exec_msg m = { .type = EXEC_START, .job = 1 };
	char dst[LDS_NAME_MAX];
	struct lds *h;
	int ch, err = 0, rc;

	while ((ch = getopt(argc, argv, "+s:c:T:L:e:P:S:lr:u:U:E:")) != -1) {
		switch (ch) {
		case 's': o.sock = optarg; break;
		case 'c': o.cluster = optarg; break;
		case 'T': o.timeout = strtod(optarg, NULL); break;
		case 'L': o.lease = strtod(optarg, NULL); break;
		case 'e':
			if (o.nenv == EXEC_MAX_ENV)
				return usage();
			o.env[o.nenv++] = optarg;
			break;
		case 'P': o.pause = strtod(optarg, NULL); break;
		case 'S': o.stop_after = strtod(optarg, NULL); break;
		case 'l': o.count_lines = 1; break;
		case 'r': o.raw = optarg; break;
		case 'u': o.user = optarg; break;
		case 'U': o.uid = strtol(optarg, NULL, 10); break;
		case 'E': o.end_tag = optarg; break;
		default: return usage();
		}
	}
	if (o.sock == NULL || o.cluster == NULL || (o.raw == NULL && optind >= argc))
		return usage();
	snprintf(dst, sizeof(dst), "%s/%s", o.cluster, EXEC_ENDPOINT);
	h = lds_open(o.sock, NULL, 10000, &err);
	if (h == NULL) {
		fprintf(stderr, "exectest: %s: %s\n", o.sock, lds_strerror(err));
		return 5;
	}
	if (o.raw == NULL) {
		rank.program = argv[optind];
		rank.args = (const char **)argv + optind + 1;
		rank.nargs = (unsigned)(argc - optind - 1);
		rank.env = o.env;
		rank.nenv = o.nenv;
		m.start = (struct exec_start){ .uid = o.uid >= 0 ? (uint32_t)o.uid : (uint32_t)getuid(),
					       .user = o.user ? o.user : pw ? pw->pw_name : "?", .timeout = (uint32_t)o.timeout,
					       .lease = (uint32_t)o.lease, .hosts = "", .hostfile = "",
					       .collect = "", .ranks = &rank, .nranks = 1 };
	}
	rc = o.raw ? send_raw(h, dst, o.raw) : send_exec(h, dst, &m);
	rc = rc < 0 ? 5 : run(h, dst, &o);
	if (o.end_tag != NULL && rc <= 1) {
		struct exec_msg e = { .type = EXEC_END, .job = 1 };

		snprintf(e.text, sizeof(e.text), "%s", o.end_tag);
		if (send_exec(h, dst, &e) < 0 || lds_flush(h, 10000) < 0)
			rc = 5;
		else
			printf("END %s\n", o.end_tag);
	}
	lds_close(h);
	return rc;
}
