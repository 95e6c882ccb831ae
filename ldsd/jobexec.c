/* jobexec.c - the exec service; see jobexec.h. */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <signal.h>
#include <stdarg.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/wait.h>

#include "auth.h"
#include "bytebuf.h"
#include "clock.h"
#include "execpolicy.h"
#include "execspec.h"
#include "jobexec.h"
#include "jobspawn.h"
#include "json.h"
#include "link.h"
#include "log.h"
#include "proctree.h"

#define JX_TICK_MS 100
#define JX_READS 4                                   /* reads of one pipe per event */
#define JX_KILL_AFTER_NS (5ull * 1000000000)         /* SIGTERM, then SIGKILL this much later */
#define JX_LINGER_NS (2ull * 1000000000)             /* output left open after the job ended */
#define JX_GIVE_UP_NS (60ull * 1000000000)           /* an ended job's messages the link would not take */

enum { J_OUT, J_ERR, J_COLLECT, J_NFD };
static const uint8_t fd_stream[J_NFD] = { EXEC_STDOUT, EXEC_STDERR, EXEC_COLLECTED };

struct job {
	struct jobexec *jx;
	uint64_t seq;                    /* this gateway's number, for logs */
	struct link *link;               /* the requester's */
	char requester[WIRE_ENDPOINT_MAX + 1];
	char user[EXEC_USER_MAX + 1];    /* the requester's user on its cluster */
	uint32_t id;                     /* the requester's number */
	pid_t pid;                       /* supervisor = process group */
	int fd[J_NFD];                   /* -1 once at EOF */
	uint8_t *held;                   /* an encoded message the link had no room for */
	size_t held_len;
	uint64_t held_ns;                /* since when */
	uint64_t start_ns, end_ns;       /* end_ns: the time limit */
	uint64_t kill_ns;                /* SIGKILL due after a stop; 0 none */
	uint32_t lease;                  /* s the requester's link may be down; 0: no limit */
	bool tree_killed;                /* the job's processes got SIGKILL; the supervisor is next */
	uint64_t linger_ns;              /* after the end: stop waiting for output EOF */
	bool stopping, ended, exit_sent;
	int status;                      /* wait status, once ended */
	char stop_why[128];
	char dir[PATH_MAX];
	uint64_t bytes[J_NFD];
	struct job *next;
};

struct jobexec {
	struct daemon *d;
	char trampoline[CONFIG_PATH_MAX];   /* ldsd-exec, resolved */
	struct job *jobs;
	unsigned njobs;
	uint64_t seq, msg_id;
	int tick;
	bool draining;
	uint64_t started, refused, ended;
	struct jobrecent recent;            /* who may END which job (jobend.h) */
	jobexec_end_fn *end;                /* ...and how it is ended */
	void *end_arg;
};

static void job_watch(struct job *j);

/* ---- sending ---------------------------------------------------------------- */

/* Queues buf from this gateway's exec endpoint to `to` over l.  Returns 0,
 * -ENOSPC (no room now: try again later), or another error (logged). */
static int jx_link_send(struct jobexec *jx, struct link *l, const char *to, const uint8_t *buf, size_t n)
{
	/* The daemon's instance is the sender's incarnation: after a restart
	 * its msg_ids start again, and receivers must not take them for
	 * duplicates. */
	struct wire_record rec = { .len = (uint32_t)n, .msg_id = ++jx->msg_id, .incarnation = jx->d->instance };
	int r;

	snprintf(rec.src, sizeof(rec.src), "%s/%s", jx->d->cfg->cluster, EXEC_ENDPOINT);
	snprintf(rec.dst, sizeof(rec.dst), "%s", to);
	/* Client 0 is no client: nobody local hears of its acknowledgement. */
	r = link_send(l, &rec, buf, 0);
	if (r < 0 && r != -ENOSPC)
		log_warnx("exec: cannot send a message of %zu bytes to %s: %s", n, to, strerror(-r));
	return r;
}

/* Encodes and sends m.  On -ENOSPC the encoded message is left in *held
 * (if held is not NULL) for the caller to send later. */
static int jx_post(struct jobexec *jx, struct link *l, const char *to, const struct exec_msg *m, uint8_t **held,
		   size_t *held_len)
{
	size_t n = exec_encode(m, NULL, 0);
	uint8_t *buf = n ? malloc(n) : NULL;
	int r;

	if (buf == NULL || exec_encode(m, buf, n) != n) {
		log_warnx("exec: cannot encode %s for %s", exec_type_names[m->type], to);
		free(buf);
		return -ENOMEM;
	}
	r = jx_link_send(jx, l, to, buf, n);
	if (r == -ENOSPC && held != NULL) {
		*held = buf;
		*held_len = n;
		return r;
	}
	free(buf);
	return r;
}

static void jx_refuse(struct jobexec *jx, struct link *l, const char *to, uint32_t id, int err, const char *fmt, ...)
	__attribute__((format(printf, 6, 7)));

/* Every refusal is logged here and told to the requester. */
static void jx_refuse(struct jobexec *jx, struct link *l, const char *to, uint32_t id, int err, const char *fmt, ...)
{
	struct exec_msg m = { .type = EXEC_REFUSED, .job = id, .err = err };
	va_list ap;

	va_start(ap, fmt);
	vsnprintf(m.text, sizeof(m.text), fmt, ap);
	va_end(ap);
	jx->refused++;
	log_warnx("exec: refused job %" PRIu32 " of %s (link %s): %s", id, to, link_name(l), m.text);
	if (jx_post(jx, l, to, &m, NULL, NULL) < 0)
		log_warnx("exec: could not tell %s of the refusal: the link to %s has no room", to, link_name(l));
}

/* ---- a job's output ---------------------------------------------------------- */

static void job_close_fd(struct job *j, int s)
{
	evloop_unwatch(j->jx->d->ev, j->fd[s]);
	close(j->fd[s]);
	j->fd[s] = -1;
}

/* Bytes of output per OUTPUT: within the link's largest message. */
static size_t job_chunk(const struct job *j)
{
	size_t max = link_max_msg(j->link);

	return max > EXEC_MAX_CHUNK + 64 ? EXEC_MAX_CHUNK : max - 64;
}

static void job_readable(int fd, unsigned events, void *arg)
{
	struct job *j = arg;
	int s = fd == j->fd[J_OUT] ? J_OUT : fd == j->fd[J_ERR] ? J_ERR : J_COLLECT;
	uint8_t buf[EXEC_MAX_CHUNK];

	for (int k = 0; k < JX_READS && j->held == NULL; k++) {
		struct exec_msg m = { .type = EXEC_OUTPUT, .job = j->id, .stream = fd_stream[s], .data = buf };
		ssize_t n = read(fd, buf, job_chunk(j));

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0 && (errno == EAGAIN || errno == EWOULDBLOCK))
			return;
		if (n <= 0) {
			job_close_fd(j, s);
			return;
		}
		m.len = (uint32_t)n;
		j->bytes[s] += (uint64_t)n;
		if (jx_post(j->jx, j->link, j->requester, &m, &j->held, &j->held_len) == -ENOSPC) {
			/* Back-pressure: the job's pipes fill and its writes block. */
			j->held_ns = clock_now_ns();
			job_watch(j);
			return;
		}
	}
}

static void job_watch(struct job *j)
{
	for (int s = 0; s < J_NFD; s++)
		if (j->fd[s] >= 0 && evloop_watch(j->jx->d->ev, j->fd[s], j->held ? 0 : EV_READ, job_readable, j) < 0)
			log_warn("exec: job %" PRIu64 ": cannot watch its output", j->seq);
}

/* Once per loop round: what the link had no room for goes now if it can. */
static void jx_idle(void *arg)
{
	struct jobexec *jx = arg;

	for (struct job *j = jx->jobs; j; j = j->next) {
		int r;

		if (j->held == NULL)
			continue;
		r = jx_link_send(jx, j->link, j->requester, j->held, j->held_len);
		if (r == -ENOSPC)
			continue;
		free(j->held);
		j->held = NULL;
		if (j->ended)
			j->linger_ns = clock_now_ns() + JX_LINGER_NS;
		job_watch(j);
	}
}

/* ---- a job's life ------------------------------------------------------------- */

static void job_describe(const struct job *j, char *buf, size_t len)
{
	if (WIFEXITED(j->status))
		snprintf(buf, len, "exit %d", WEXITSTATUS(j->status));
	else
		snprintf(buf, len, "killed by signal %d", WTERMSIG(j->status));
}

static void job_stop(struct job *j, const char *why)
{
	if (j->ended || j->stopping)
		return;
	j->stopping = true;
	snprintf(j->stop_why, sizeof(j->stop_why), "%s", why);
	j->kill_ns = clock_now_ns() + JX_KILL_AFTER_NS;
	log_info("exec: job %" PRIu64 " of %s: stopping (%s): SIGTERM to its processes, SIGKILL in %llu s",
		 j->seq, j->requester, why, JX_KILL_AFTER_NS / 1000000000);
	if (kill(-j->pid, SIGTERM) < 0)
		log_warn("exec: job %" PRIu64 ": kill", j->seq);
}

/* The supervisor ended?  Peeks first, so that its pid - the group's id -
 * cannot be reused while what is left of the group is killed. */
static void job_reap(struct job *j, uint64_t now)
{
	siginfo_t si = { 0 };
	char st[64];

	if (waitid(P_PID, (id_t)j->pid, &si, WEXITED | WNOHANG | WNOWAIT) < 0 || si.si_pid == 0)
		return;
	kill(-j->pid, SIGKILL);
	while (waitpid(j->pid, &j->status, 0) < 0 && errno == EINTR)
		;
	j->ended = true;
	j->linger_ns = now + JX_LINGER_NS;
	j->jx->ended++;
	job_describe(j, st, sizeof(st));
	log_info("exec: job %" PRIu64 " of %s ended after %.1f s: %s%s%s; %" PRIu64 " bytes of output", j->seq,
		 j->requester, (double)(now - j->start_ns) / 1e9, st, j->stopping ? ", stopped: " : "",
		 j->stopping ? j->stop_why : "", j->bytes[J_OUT] + j->bytes[J_ERR]);
}

static void job_send_exit(struct job *j)
{
	struct exec_msg m = { .type = EXEC_EXIT, .job = j->id };
	char st[64];

	job_describe(j, st, sizeof(st));
	m.status = WIFEXITED(j->status) ? WEXITSTATUS(j->status) : -WTERMSIG(j->status);
	/* The byte count lets the requester check that nothing was lost. */
	snprintf(m.text, sizeof(m.text), "%s, %" PRIu64 " bytes of output%s%s", st, j->bytes[J_OUT] + j->bytes[J_ERR],
		 j->stopping ? ", stopped: " : "", j->stopping ? j->stop_why : "");
	j->exit_sent = true;
	if (jx_post(j->jx, j->link, j->requester, &m, &j->held, &j->held_len) == -ENOSPC)
		j->held_ns = clock_now_ns();
}

static void job_free(struct job *j)
{
	struct jobexec *jx = j->jx;

	for (struct job **pp = &jx->jobs; *pp; pp = &(*pp)->next)
		if (*pp == j) {
			*pp = j->next;
			break;
		}
	jx->njobs--;
	for (int s = 0; s < J_NFD; s++)
		if (j->fd[s] >= 0)
			job_close_fd(j, s);
	if (!j->ended) {
		proctree_signal(j->pid, SIGKILL);
		kill(-j->pid, SIGKILL);
		while (waitpid(j->pid, &j->status, 0) < 0 && errno == EINTR)
			;
	}
	free(j->held);
	free(j);
}

static void job_tick(struct job *j, uint64_t now)
{
	bool open = false;

	if (!j->ended)
		job_reap(j, now);
	if (!j->ended) {
		if (now >= j->end_ns)
			job_stop(j, "it ran into its time limit");
		if (j->lease > 0 && link_down_for(j->link) > j->lease) {
			char why[sizeof(j->stop_why)];

			snprintf(why, sizeof(why), "cluster %.40s, which asked for it, has been unreachable for over "
				 "%" PRIu32 " s, its lease", link_name(j->link), j->lease);
			job_stop(j, why);
		}
		if (j->kill_ns && now >= j->kill_ns && !j->tree_killed) {
			log_warnx("exec: job %" PRIu64 " of %s did not end within %llu s of SIGTERM: SIGKILL", j->seq,
				  j->requester, JX_KILL_AFTER_NS / 1000000000);
			/* Its processes first: the supervisor reaps them, sends the
			 * collected file and removes the directory. */
			proctree_signal(j->pid, SIGKILL);
			j->tree_killed = true;
			j->kill_ns = now + JX_KILL_AFTER_NS;
		} else if (j->kill_ns && now >= j->kill_ns) {
			log_warnx("exec: job %" PRIu64 ": its supervisor did not end either: SIGKILL", j->seq);
			proctree_signal(j->pid, SIGKILL);
			kill(-j->pid, SIGKILL);
			j->kill_ns = 0;
		}
		return;
	}
	for (int s = 0; s < J_NFD; s++)
		open |= j->fd[s] >= 0;
	if (open && j->held == NULL && now >= j->linger_ns) {
		log_info("exec: job %" PRIu64 ": something still holds its output %llu s after it ended; not "
			 "waiting for it", j->seq, JX_LINGER_NS / 1000000000);
		for (int s = 0; s < J_NFD; s++)
			if (j->fd[s] >= 0)
				job_close_fd(j, s);
		open = false;
	}
	if (!open && j->held == NULL && !j->exit_sent)
		job_send_exit(j);
	if (j->exit_sent && j->held == NULL) {
		job_free(j);
	} else if (j->held != NULL && now - j->held_ns > JX_GIVE_UP_NS) {
		log_warnx("exec: job %" PRIu64 " ended, but %s took none of its output for %llu s (link down, or "
			  "nobody reading); its remaining output and exit status are dropped", j->seq, j->requester,
			  JX_GIVE_UP_NS / 1000000000);
		job_free(j);
	}
}

static void jx_tick(uint64_t now, void *arg)
{
	struct jobexec *jx = arg;
	struct job *next;

	for (struct job *j = jx->jobs; j; j = next) {
		next = j->next;
		job_tick(j, now);
	}
}

/* ---- requests ----------------------------------------------------------------- */

static struct job *jx_find(struct jobexec *jx, const char *requester, uint32_t id)
{
	for (struct job *j = jx->jobs; j; j = j->next)
		if (j->id == id && strcmp(j->requester, requester) == 0)
			return j;
	return NULL;
}

/* Forks the job; on success it is linked in and watched. */
static int jx_spawn(struct jobexec *jx, struct job *j, const struct exec_start *s, const char **progs, char *why,
		    size_t len)
{
	const struct config_exec *x = &jx->d->cfg->exec;
	char e_path[CONFIG_PATH_MAX + 8], e_home[PATH_MAX + 8], e_user[CONFIG_USER_MAX + 8];
	char e_logname[CONFIG_USER_MAX + 12], e_socket[CONFIG_PATH_MAX + 16];
	char *envp[] = { e_path, e_home, e_user, e_logname, "OMPI_ALLOW_RUN_AS_ROOT=1",
			 "OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1", NULL };
	struct jobspawn_spec sp = { .x = x, .dir = j->dir, .files = s->files, .nfiles = s->nfiles,
				    .collect = s->collect, .daemon_cfg = jx->d->cfg, .envp = envp };
	struct jobspawn_proc p;
	char spec_path[PATH_MAX + sizeof(EXECSPEC_NAME) + 1], digest[EXECSPEC_DIGEST_LEN + 1], np[16];
	char **argv = NULL, *spec;
	uint32_t rnd = 0;
	int r = -ENOMEM;   /* until the rank file and command line are made */

	auth_random(&rnd, sizeof(rnd));
	snprintf(j->dir, sizeof(j->dir), "%s/lds-job-%" PRIu64 "-%08" PRIx32, x->workdir, j->seq, rnd);
	snprintf(spec_path, sizeof(spec_path), "%s/%s", j->dir, EXECSPEC_NAME);
	snprintf(e_path, sizeof(e_path), "PATH=%s", x->path);
	snprintf(e_home, sizeof(e_home), "HOME=%s", j->dir);
	snprintf(e_user, sizeof(e_user), "USER=%s", x->user);
	snprintf(e_logname, sizeof(e_logname), "LOGNAME=%s", x->user);
	snprintf(e_socket, sizeof(e_socket), "LDS_SOCKET=%s", jx->d->cfg->client_socket);
	if (x->uid != 0)
		envp[4] = NULL;   /* Open MPI's consent to run as root, only where it does */
	spec = execspec_build(s, progs, e_socket, &sp.spec_len);
	if (spec != NULL && (r = execspec_digest(spec, sp.spec_len, digest)) == 0 &&
	    (argv = execpolicy_argv(x, s, jx->trampoline, spec_path, digest, np, sizeof(np))) == NULL)
		r = -ENOMEM;
	if (argv != NULL) {
		sp.spec = spec;
		sp.argv = argv;
		r = jobspawn_start(&sp, &p);
	}
	free(argv);
	free(spec);
	if (r < 0) {
		snprintf(why, len, "cannot start mpirun: %s", strerror(-r));
		return r;
	}
	j->pid = p.pid;
	j->fd[J_OUT] = p.out;
	j->fd[J_ERR] = p.err;
	j->fd[J_COLLECT] = p.collected;
	j->next = jx->jobs;
	jx->jobs = j;
	jx->njobs++;
	jx->started++;
	job_watch(j);
	return 0;
}

static void jx_start(struct jobexec *jx, struct link *l, const char *src, const struct exec_msg *m)
{
	const struct config_exec *x = &jx->d->cfg->exec;
	const char **progs = NULL;
	struct exec_msg ok = { .type = EXEC_STARTED, .job = m->job };
	struct job *j = NULL;
	uint64_t now = clock_now_ns();
	double limit = 0;
	char why[256];
	int r;

	if (!x->enabled) {
		jx_refuse(jx, l, src, m->job, ENOSYS, "the gateway of cluster %s runs no jobs: its %s has no exec group",
			  jx->d->cfg->cluster, jx->d->cfg->file);
		return;
	}
	if (!execpolicy_cluster(x, src)) {
		jx_refuse(jx, l, src, m->job, EPERM, "cluster %s may not start jobs on cluster %s (exec.allow_clusters, "
			  "exec.rules in %s)", link_name(l), jx->d->cfg->cluster, jx->d->cfg->file);
		return;
	}
	if (jx->draining) {
		jx_refuse(jx, l, src, m->job, ESHUTDOWN, "the gateway of cluster %s is shutting down",
			  jx->d->cfg->cluster);
		return;
	}
	if (jx_find(jx, src, m->job)) {
		jx_refuse(jx, l, src, m->job, EEXIST, "job %" PRIu32 " of %s is already running", m->job, src);
		return;
	}
	if (jx->njobs >= x->max_jobs) {
		jx_refuse(jx, l, src, m->job, EBUSY, "%u jobs are running, as many as exec.max_jobs allows", jx->njobs);
		return;
	}
	progs = calloc(m->start.nranks, sizeof(*progs));
	j = calloc(1, sizeof(*j));
	if (progs == NULL || j == NULL) {
		snprintf(why, sizeof(why), "out of memory");
		r = -ENOMEM;
	} else if ((r = execpolicy_check(x, link_name(l), &m->start, progs, why, sizeof(why))) == 0) {
		*j = (struct job){ .jx = jx, .seq = ++jx->seq, .link = l, .id = m->job, .start_ns = now,
				   .lease = m->start.lease, .fd = { -1, -1, -1 } };
		snprintf(j->requester, sizeof(j->requester), "%s", src);
		snprintf(j->user, sizeof(j->user), "%s", m->start.user);
		limit = m->start.timeout > 0 && m->start.timeout < x->max_time ? m->start.timeout : x->max_time;
		j->end_ns = now + (uint64_t)(limit * 1e9);
		r = jx_spawn(jx, j, &m->start, progs, why, sizeof(why));
	}
	free(progs);
	if (r < 0) {
		free(j);
		jx_refuse(jx, l, src, m->job, -r, "%s", why);
		return;
	}
	log_info("exec: job %" PRIu64 " of %s (its job %" PRIu32 ", user %s uid %" PRIu32 " there): mpirun pid %d, "
		 "%u ranks of %s as user %s (uid %u, gid %u) in %s, at most %.0f s, lease %" PRIu32 " s", j->seq, src,
		 m->job, m->start.user, m->start.uid, (int)j->pid, m->start.nranks, m->start.ranks[0].program, x->user,
		 (unsigned)x->uid, (unsigned)x->gid, j->dir, limit, j->lease);
	snprintf(ok.text, sizeof(ok.text), "job %" PRIu64 " of cluster %s: mpirun pid %d, %u ranks, as user %s",
		 j->seq, jx->d->cfg->cluster, (int)j->pid, m->start.nranks, x->user);
	jx_post(jx, l, src, &ok, &j->held, &j->held_len);
	if (j->held)
		j->held_ns = now;
	jobrecent_add(&jx->recent, src, m->job);
}

/* END from the requester of job m->job (running, or among the last
 * JOBMARK_RECENT started): its tag's endpoints are exec.user's. */
static void jx_end_request(struct jobexec *jx, const char *src, const struct exec_msg *m)
{
	char why[WIRE_ENDPOINT_MAX + 96];
	long n = -ESRCH;

	if (!jobrecent_has(&jx->recent, src, m->job))
		snprintf(why, sizeof(why), "it did not start job %" PRIu32 " here (or too long ago)", m->job);
	else
		n = jx->end(jx->end_arg, m->text, jx->d->cfg->exec.uid, why, sizeof(why));
	if (n < 0)
		log_warnx("exec: END of job %.40s from %s (its job %" PRIu32 ") refused: %s", m->text, src, m->job, why);
	else
		log_info("exec: %s ended job %s (its job %" PRIu32 "): %ld messages waiting for it dropped", src,
			 m->text, m->job, n);
}

static void jx_stop_request(struct jobexec *jx, const char *src, const struct exec_msg *m)
{
	struct job *j = jx_find(jx, src, m->job);
	char why[WIRE_ENDPOINT_MAX + EXEC_TEXT_MAX + 32];

	if (j == NULL) {
		log_debug("exec: STOP from %s for job %" PRIu32 ", which is not running", src, m->job);
		return;
	}
	snprintf(why, sizeof(why), "asked by %s: %s", src, m->text[0] ? m->text : "no reason given");
	job_stop(j, why);
}

void jobexec_request(struct jobexec *jx, struct link *from, struct rb_msg *m)
{
	char own[WIRE_ENDPOINT_MAX + 1];
	struct exec_msg req;
	int r;

	snprintf(own, sizeof(own), "%s/%s", jx->d->cfg->cluster, EXEC_ENDPOINT);
	rb_msg_flatten(m);
	/* linkmsg.c already dropped records not from the peer's cluster, so no
	 * answer goes to a third cluster through it. */
	if (strcmp(m->rec.dst, own) != 0) {
		log_warnx("exec: message from %s for %s: this gateway has no such service; dropped", m->rec.src,
			  m->rec.dst);
	} else if ((r = exec_decode(m->data, m->rec.len, &req)) < 0) {
		struct bb_rd rd;
		uint32_t id;

		/* The job's number, after version and type: 0 if not there. */
		bb_rd_init(&rd, m->data, m->rec.len);
		bb_rd_take(&rd, 2);
		id = bb_rd_be32(&rd);

		jx_refuse(jx, from, m->rec.src, id, -r, "malformed request of %" PRIu32 " bytes (%s)", m->rec.len,
			  r == -EPROTONOSUPPORT ? "another version of the exec protocol" : strerror(-r));
	} else {
		if (req.type == EXEC_START)
			jx_start(jx, from, m->rec.src, &req);
		else if (req.type == EXEC_STOP)
			jx_stop_request(jx, m->rec.src, &req);
		else if (req.type == EXEC_END)
			jx_end_request(jx, m->rec.src, &req);
		else
			log_warnx("exec: %s from %s is not a request; ignored", exec_type_names[req.type], m->rec.src);
		exec_msg_free(&req);
	}
	link_delivered(from, m);
}

/* ---- the service ----------------------------------------------------------------- */

/* exec.trampoline, or the ldsd-exec installed next to this ldsd. */
static int jx_find_trampoline(const struct config_exec *x, char *path, size_t len)
{
	char self[PATH_MAX];
	ssize_t n;
	char *slash;

	if (x->trampoline[0]) {
		snprintf(path, len, "%s", x->trampoline);
	} else {
		n = readlink("/proc/self/exe", self, sizeof(self) - 1);
		if (n < 0) {
			log_warn("exec service: cannot find ldsd's own path (/proc/self/exe) to find ldsd-exec next "
				 "to it; set exec.trampoline");
			return -1;
		}
		self[n] = '\0';
		slash = strrchr(self, '/');
		snprintf(path, len, "%.*s/ldsd-exec", slash ? (int)(slash - self) : 1, slash ? self : ".");
	}
	if (access(path, X_OK) < 0) {
		log_warn("exec service: its trampoline %s (exec.trampoline%s) cannot be run", path,
			 x->trampoline[0] ? "" : " unset: the ldsd-exec next to ldsd");
		return -1;
	}
	return 0;
}

struct jobexec *jobexec_new(struct daemon *d, jobexec_end_fn *end, void *end_arg)
{
	struct jobexec *jx = calloc(1, sizeof(*jx));

	if (jx == NULL) {
		log_warn("exec service");
		return NULL;
	}
	jx->d = d;
	jx->end = end;
	jx->end_arg = end_arg;
	if (d->cfg->exec.enabled && jx_find_trampoline(&d->cfg->exec, jx->trampoline, sizeof(jx->trampoline)) < 0) {
		free(jx);
		return NULL;
	}
	if ((jx->tick = evloop_tick_add(d->ev, JX_TICK_MS, jx_tick, jx)) < 0 ||
	    evloop_idle_add(d->ev, jx_idle, jx) < 0) {
		log_warnx("exec service: cannot set up its timers");
		free(jx);
		return NULL;
	}
	if (d->cfg->exec.enabled)
		log_info("exec service on %s/%s: %zu programs for any user of %zu clusters, %zu rules per user; ranks "
			 "through %s, as user %s", d->cfg->cluster, EXEC_ENDPOINT, d->cfg->exec.nprograms,
			 d->cfg->exec.nallow, d->cfg->exec.nrules, jx->trampoline, d->cfg->exec.user);
	return jx;
}

void jobexec_free(struct jobexec *jx)
{
	if (jx == NULL)
		return;
	while (jx->jobs) {
		if (!jx->jobs->ended)
			log_warnx("exec: job %" PRIu64 " of %s still runs at exit: killed", jx->jobs->seq,
				  jx->jobs->requester);
		job_free(jx->jobs);
	}
	evloop_tick_del(jx->d->ev, jx->tick);
	free(jx);
}

void jobexec_drain(struct jobexec *jx)
{
	jx->draining = true;
	for (struct job *j = jx->jobs; j; j = j->next)
		job_stop(j, "the gateway is shutting down");
}

int jobexec_idle(const struct jobexec *jx)
{
	return jx->jobs == NULL;
}

static const char *job_state(const struct job *j)
{
	return j->ended ? "ended" : j->stopping ? "stopping" : "running";
}

void jobexec_status_json(const struct jobexec *jx, FILE *out)
{
	uint64_t now = clock_now_ns();

	fprintf(out, "{\"enabled\":%s,\"running\":%u,\"started\":%" PRIu64 ",\"refused\":%" PRIu64
		",\"ended\":%" PRIu64 ",\"jobs\":[", jx->d->cfg->exec.enabled ? "true" : "false", jx->njobs,
		jx->started, jx->refused, jx->ended);
	for (const struct job *j = jx->jobs; j; j = j->next) {
		fprintf(out, "%s{\"job\":%" PRIu64 ",\"requester\":", j == jx->jobs ? "" : ",", j->seq);
		json_str(out, j->requester);
		fputs(",\"user\":", out);
		json_str(out, j->user);
		fprintf(out, ",\"id\":%" PRIu32 ",\"pid\":%d,\"state\":\"%s\",\"seconds\":%.1f,\"output_bytes\":%" PRIu64
			",\"waiting_for_link\":%s}", j->id, (int)j->pid, job_state(j), (double)(now - j->start_ns) / 1e9,
			j->bytes[J_OUT] + j->bytes[J_ERR], j->held ? "true" : "false");
	}
	fputs("]}", out);
}

void jobexec_status_text(const struct jobexec *jx, FILE *out)
{
	if (!jx->d->cfg->exec.enabled)
		return;
	fprintf(out, "exec service: %u jobs, %" PRIu64 " started, %" PRIu64 " refused\n", jx->njobs, jx->started,
		jx->refused);
	for (const struct job *j = jx->jobs; j; j = j->next)
		fprintf(out, "  job %-4" PRIu64 " %-32s user %-12s pid %-7d %-8s %" PRIu64 " bytes out%s\n", j->seq,
			j->requester, j->user, (int)j->pid, job_state(j), j->bytes[J_OUT] + j->bytes[J_ERR],
			j->held ? ", waiting for the link" : "");
}
