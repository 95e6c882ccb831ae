/* run.c - starts and supervises one mpirun per cluster. */
#include <errno.h>
#include <poll.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tools/mwlaunch/gwstart.h"
#include "tools/mwlaunch/run.h"

#define KILL_AFTER 5.0          /* s between SIGTERM and SIGKILL */
#define DRAIN 2.0               /* s to read what is left after the last exit */

static volatile sig_atomic_t interrupted;
static bool quiet;

static void on_signal(int sig)
{
	interrupted = sig;
}

double run_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (double)ts.tv_sec + ts.tv_nsec * 1e-9;
}

int run_start(struct child *c, char *const argv[])
{
	int out[2], err[2];

	if (pipe(out) < 0 || pipe(err) < 0) {
		fprintf(stderr, "mwlaunch: %s: pipe: %s\n", c->name, strerror(errno));
		return -1;
	}
	c->t_start = run_now();
	c->pid = fork();
	if (c->pid < 0) {
		fprintf(stderr, "mwlaunch: %s: fork: %s\n", c->name, strerror(errno));
		return -1;
	}
	if (c->pid == 0) {
		/* Its own process group, so that a stop reaches mpirun's
		 * helpers too, and not us. */
		setpgid(0, 0);
		dup2(out[1], STDOUT_FILENO);
		dup2(err[1], STDERR_FILENO);
		close(out[0]);
		close(out[1]);
		close(err[0]);
		close(err[1]);
		execvp(argv[0], argv);
		fprintf(stderr, "mwlaunch: cannot run %s: %s\n", argv[0], strerror(errno));
		_exit(127);
	}
	setpgid(c->pid, c->pid);
	close(out[1]);
	close(err[1]);
	c->fd[0] = out[0];
	c->fd[1] = err[0];
	return 0;
}

/* "[1,3]<stdout>:text" becomes "[cluster:3] text"; mpirun's own lines
 * are "[cluster:mpirun] text". */
static void emit(const struct child *c, int stream, const char *line, size_t n)
{
	FILE *out = stream == 0 ? stdout : stderr;
	int job, rank, off = 0;

	if (quiet && stream == 0)
		return;
	if (sscanf(line, "[%d,%d]<%*[a-z]>:%n", &job, &rank, &off) == 2 && off > 0 && (size_t)off <= n)
		fprintf(out, "[%s:%d] %.*s\n", c->name, rank, (int)(n - (size_t)off), line + off);
	else
		fprintf(out, "[%s:mpirun] %.*s\n", c->name, (int)n, line);
	fflush(out);
}

/* len[s] bytes in buf[s]: whole lines are emitted, a full buffer too. */
static void take_lines(struct child *c, int s)
{
	char *nl;

	while ((nl = memchr(c->buf[s], '\n', c->len[s])) != NULL) {
		size_t n = (size_t)(nl - c->buf[s]);

		emit(c, s, c->buf[s], n);
		memmove(c->buf[s], nl + 1, c->len[s] - n - 1);
		c->len[s] -= n + 1;
	}
	if (c->len[s] == sizeof(c->buf[s]) - 1) {
		emit(c, s, c->buf[s], c->len[s]);
		c->len[s] = 0;
	}
}

void run_feed_end(struct child *c, int s)
{
	if (c->len[s] > 0)
		emit(c, s, c->buf[s], c->len[s]);
	c->len[s] = 0;
}

void run_feed(struct child *c, int s, const void *data, size_t len)
{
	const char *p = data;

	while (len > 0) {
		size_t n = sizeof(c->buf[s]) - 1 - c->len[s];

		if (n > len)
			n = len;
		memcpy(c->buf[s] + c->len[s], p, n);
		c->len[s] += n;
		p += n;
		len -= n;
		take_lines(c, s);
	}
}

/* Reads what is there from a local mpirun. */
static void drain(struct child *c, int s)
{
	ssize_t got = read(c->fd[s], c->buf[s] + c->len[s], sizeof(c->buf[s]) - 1 - c->len[s]);

	if (got <= 0) {
		if (got < 0 && (errno == EINTR || errno == EAGAIN))
			return;
		run_feed_end(c, s);
		close(c->fd[s]);
		c->fd[s] = -1;
		return;
	}
	c->len[s] += (size_t)got;
	take_lines(c, s);
}

static void stop(struct child *c, int sig)
{
	if (c->done)
		return;
	if (c->gw != NULL) {
		gw_stop(c->gw, c, sig == SIGKILL ? "still running 5 s after the first stop" : "the job is ending");
		c->stopped = true;
	} else if (c->pid > 0) {
		kill(-c->pid, sig);
		c->stopped = true;
	}
}

void run_stop_all(struct child *c, unsigned n)
{
	for (unsigned i = 0; i < n; i++)
		stop(&c[i], SIGTERM);
}

const char *run_status_text(const struct child *c, char *buf, size_t len)
{
	if (c->done && c->why[0])
		snprintf(buf, len, "%s", c->why);
	else if (!c->done)
		snprintf(buf, len, "running");
	else if (WIFEXITED(c->status))
		snprintf(buf, len, "exit %d", WEXITSTATUS(c->status));
	else
		snprintf(buf, len, "killed by signal %d", WTERMSIG(c->status));
	return buf;
}

static bool failed(const struct child *c)
{
	return c->why[0] || !WIFEXITED(c->status) || WEXITSTATUS(c->status) != 0;
}

/* Has child c ended since the last look? */
static bool reaped(struct child *c)
{
	if (c->gw != NULL)
		return c->exited;
	return waitpid(c->pid, &c->status, WNOHANG) == c->pid;
}

/* A child ended: what it means for the job.  Returns the new outcome. */
static enum run_outcome ended(struct child *c, struct child *all, unsigned n, const struct run_policy *pol,
			      enum run_outcome out, double *kill_at)
{
	char st[sizeof(c->why) + 64];

	if (!failed(c) || c->stopped)
		return out;
	run_status_text(c, st, sizeof(st));
	if (!c->main && pol->continue_on_remote_failure) {
		fprintf(stderr, "mwlaunch: remote cluster %s failed (%s) after %.1f s; the job goes on: the master "
			"reassigns its tasks now\n", c->name, st, c->t_end - c->t_start);
		if (pol->remote_gone != NULL)
			pol->remote_gone(pol->remote_gone_arg, c->name, st);
		return out;
	}
	fprintf(stderr, "mwlaunch: cluster %s failed (%s) after %.1f s; stopping the job (see its lines "
		"above)\n", c->name, st, c->t_end - c->t_start);
	if (out == RUN_OK) {
		run_stop_all(all, n);
		*kill_at = run_now() + KILL_AFTER;
	}
	return out == RUN_OK ? RUN_FAILED : out;
}

enum run_outcome run_wait(struct child *c, unsigned n, const struct run_policy *pol)
{
	struct sigaction sa = { .sa_handler = on_signal };
	double t0 = run_now(), kill_at = 0, main_done = 0, last_exit = 0;
	enum run_outcome out = RUN_OK;
	unsigned running = 0;

	quiet = pol->quiet;
	for (unsigned i = 0; i < n; i++) {
		running += !c[i].done;
		/* Stopped before we got here (a start failed): bounded too. */
		if (c[i].stopped)
			kill_at = run_now() + KILL_AFTER;
	}
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	for (;;) {
		struct pollfd p[2 * 16 + 1];
		struct child *owner[2 * 16];
		int streams[2 * 16], np = 0;
		double t = run_now();

		for (unsigned i = 0; i < n && np < 32; i++)
			for (int s = 0; s < 2; s++)
				if (c[i].fd[s] >= 0) {
					p[np] = (struct pollfd){ .fd = c[i].fd[s], .events = POLLIN };
					owner[np] = &c[i];
					streams[np++] = s;
				}
		if (running == 0 && (np == 0 || t - last_exit > DRAIN))
			break;
		/* The gateway's messages last: they are not output to wait for. */
		if (pol->gw != NULL)
			p[np] = (struct pollfd){ .fd = gw_fd(pol->gw), .events = POLLIN };
		if (poll(p, (nfds_t)np + (pol->gw != NULL), 200) > 0) {
			for (int k = 0; k < np; k++)
				if (p[k].revents)
					drain(owner[k], streams[k]);
			if (pol->gw != NULL && p[np].revents)
				gw_process(pol->gw, c, n);
		}
		if (pol->gw != NULL)
			gw_tick(pol->gw, c, n, run_now());
		for (unsigned i = 0; i < n; i++) {
			if (c[i].done || !reaped(&c[i]))
				continue;
			c[i].done = true;
			c[i].t_end = last_exit = run_now();
			running--;
			if (c[i].main && !failed(&c[i]))
				main_done = c[i].t_end;
			out = ended(&c[i], c, n, pol, out, &kill_at);
		}
		t = run_now();
		if (interrupted && out == RUN_OK) {
			fprintf(stderr, "mwlaunch: interrupted (signal %d); stopping every cluster\n", (int)interrupted);
			out = RUN_INTERRUPTED;
			kill_at = t + KILL_AFTER;
			run_stop_all(c, n);
		}
		if (out == RUN_OK && t - t0 > pol->timeout) {
			fprintf(stderr, "mwlaunch: the job ran into its timeout of %.0f s (job file: timeout); "
				"stopping every cluster\n", pol->timeout);
			out = RUN_TIMEOUT;
			kill_at = t + KILL_AFTER;
			run_stop_all(c, n);
		}
		if (out == RUN_OK && main_done > 0 && running > 0 && kill_at == 0 && t - main_done > pol->grace) {
			for (unsigned i = 0; i < n; i++)
				if (!c[i].done) {
					fprintf(stderr, "mwlaunch: cluster %s still runs %.0f s after the main cluster "
						"ended; stopping it\n", c[i].name, pol->grace);
					stop(&c[i], SIGTERM);
				}
			kill_at = t + KILL_AFTER;
		}
		if (kill_at > 0 && t > kill_at) {
			for (unsigned i = 0; i < n; i++)
				stop(&c[i], SIGKILL);
			kill_at = t + KILL_AFTER;
		}
	}
	return out;
}
