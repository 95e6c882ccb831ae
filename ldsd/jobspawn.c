/*
 * jobspawn.c - one job's supervisor process; see jobspawn.h.
 *
 * Everything after fork() runs in the child only and ends in _exit():
 * the daemon is single-threaded, so the child may use ordinary libc calls,
 * but it never returns into daemon code and never logs through log.c
 * (its stderr is the job's).
 */
#include <errno.h>
#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/wait.h>

#include "execspec.h"
#include "jobspawn.h"
#include "proctree.h"

#define FD_OUT 1
#define FD_ERR 2
#define FD_COLLECT 3
#define FD_PARK 10    /* pipe ends wait above the descriptors they go to */

static volatile sig_atomic_t stop_sig;   /* SIGTERM and the like: pass on to the whole job */

static void __attribute__((noreturn)) child_fail(int code, const char *what, const char *arg, int err)
{
	dprintf(FD_ERR, "ldsd exec: %s%s%s: %s\n", what, arg ? " " : "", arg ? arg : "", strerror(err));
	_exit(code);
}

static void write_all(int fd, const void *buf, size_t len)
{
	const char *p = buf;

	while (len > 0) {
		ssize_t w = write(fd, p, len);

		if (w < 0 && errno == EINTR)
			continue;
		if (w <= 0)
			return;
		p += w;
		len -= (size_t)w;
	}
}

/* Descriptors 0-3 become /dev/null, the two output pipes and the collect
 * pipe; every other one (the daemon's sockets, epoll, listeners) is
 * closed, so that the job holds nothing of the daemon's. */
static void child_fds(int out, int err, int col)
{
	int null = open("/dev/null", O_RDWR);

	/* Park first: a pipe end may itself be one of 0-3. */
	out = fcntl(out, F_DUPFD, FD_PARK);
	err = fcntl(err, F_DUPFD, FD_PARK);
	col = fcntl(col, F_DUPFD, FD_PARK);
	null = null < 0 ? -1 : fcntl(null, F_DUPFD, FD_PARK);
	if (out < 0 || err < 0 || col < 0 || null < 0 || dup2(null, 0) < 0 || dup2(out, FD_OUT) < 0 ||
	    dup2(err, FD_ERR) < 0 || dup2(col, FD_COLLECT) < 0)
		_exit(126);
	if (close_range(FD_COLLECT + 1, ~0U, 0) < 0)
		for (int fd = FD_COLLECT + 1; fd < 65536; fd++)
			close(fd);
	/* mpirun must not hold the collect pipe: its end means the
	 * supervisor is done with it. */
	fcntl(FD_COLLECT, F_SETFD, FD_CLOEXEC);
}

static void child_forget_secrets(struct config *cfg)
{
	for (size_t i = 0; i < cfg->npeers; i++)
		explicit_bzero(cfg->peers[i].key, sizeof(cfg->peers[i].key));
	/* Not dumpable: no core file, and no ptrace by the job user. */
	prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
}

static void child_drop_privileges(const struct config_exec *x)
{
	if (geteuid() != 0)
		return;    /* config.c made sure user and group are our own */
	if (initgroups(x->user, x->gid) < 0)
		child_fail(126, "cannot set the supplementary groups of user", x->user, errno);
	if (setresgid(x->gid, x->gid, x->gid) < 0)
		child_fail(126, "cannot switch to the group of user", x->user, errno);
	if (setresuid(x->uid, x->uid, x->uid) < 0)
		child_fail(126, "cannot switch to user", x->user, errno);
	if (x->uid != 0 && (setuid(0) == 0 || seteuid(0) == 0))
		child_fail(126, "could regain root after switching to user", x->user, EPERM);
}

/* Creates the job's directory and moves into it; writes the files. */
static int child_workdir(const struct jobspawn_spec *sp)
{
	struct stat st;
	int dfd, fd;

	if (mkdir(sp->dir, 0700) < 0)
		child_fail(126, "cannot create the job directory", sp->dir, errno);
	dfd = open(sp->dir, O_RDONLY | O_DIRECTORY | O_NOFOLLOW | O_CLOEXEC);
	if (dfd < 0 || fstat(dfd, &st) < 0 || fchdir(dfd) < 0)
		child_fail(126, "cannot enter the job directory", sp->dir, errno);
	if (st.st_uid != geteuid())
		child_fail(126, "job directory replaced under us:", sp->dir, EPERM);
	for (unsigned i = 0; i < sp->nfiles; i++) {
		fd = openat(dfd, sp->files[i].name, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0600);

		if (fd < 0)
			child_fail(126, "cannot create", sp->files[i].name, errno);
		write_all(fd, sp->files[i].data, sp->files[i].len);
		if (close(fd) < 0)
			child_fail(126, "cannot write", sp->files[i].name, errno);
	}
	/* Read-only: a rank may not change what the next one runs (and the
	 * trampoline checks its digest anyway). */
	fd = openat(dfd, EXECSPEC_NAME, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0400);

	if (fd < 0)
		child_fail(126, "cannot create", EXECSPEC_NAME, errno);
	write_all(fd, sp->spec, sp->spec_len);
	if (close(fd) < 0)
		child_fail(126, "cannot write", EXECSPEC_NAME, errno);
	return dfd;
}

/* The collected file goes to the daemon through FD_COLLECT. */
static void child_collect(int dfd, const char *name)
{
	char buf[65536];
	size_t total = 0;
	struct stat st;
	ssize_t n;
	int fd;

	if (name[0] == '\0')
		return;
	/* O_NONBLOCK: a FIFO put there must not hang us. */
	fd = openat(dfd, name, O_RDONLY | O_NOFOLLOW | O_NONBLOCK | O_CLOEXEC);
	if (fd < 0) {
		dprintf(FD_ERR, "ldsd exec: %s was not sent back: %s\n", name, strerror(errno));
		return;
	}
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode)) {
		dprintf(FD_ERR, "ldsd exec: %s was not sent back: not a regular file\n", name);
		close(fd);
		return;
	}
	while (total < JOBSPAWN_COLLECT_MAX && (n = read(fd, buf, sizeof(buf))) != 0) {
		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			break;
		if ((size_t)n > JOBSPAWN_COLLECT_MAX - total)
			n = (ssize_t)(JOBSPAWN_COLLECT_MAX - total);
		write_all(FD_COLLECT, buf, (size_t)n);
		total += (size_t)n;
	}
	if (total == JOBSPAWN_COLLECT_MAX)
		dprintf(FD_ERR, "ldsd exec: %s was cut at %u bytes\n", name, JOBSPAWN_COLLECT_MAX);
	close(fd);
}

static int rm_entry(const char *path, const struct stat *st, int flag, struct FTW *ftw)
{
	(void)st, (void)flag;
	if (ftw->level > 0 && remove(path) < 0)
		dprintf(FD_ERR, "ldsd exec: cannot remove %s: %s\n", path, strerror(errno));
	return 0;
}

/* Runs as the job's user: removes only what that user may remove. */
static void child_cleanup(const char *dir)
{
	nftw(".", rm_entry, 16, FTW_DEPTH | FTW_PHYS | FTW_MOUNT);
	if (chdir("/") < 0 || rmdir(dir) < 0)
		dprintf(FD_ERR, "ldsd exec: cannot remove the job directory %s: %s\n", dir, strerror(errno));
}

static void on_stop(int sig)
{
	stop_sig = sig;
}

/* Waits for mpirun, reaping the orphans that come to us meanwhile; a stop
 * signal is passed on to every process of the job, also to those that
 * left its process group. */
static int child_wait(pid_t mpirun)
{
	int st = 0;

	for (;;) {
		pid_t w;

		if (stop_sig) {
			int sig = stop_sig;

			stop_sig = 0;
			proctree_signal(getpid(), sig);
		}
		w = waitpid(-1, &st, 0);
		if (w == mpirun || (w < 0 && errno != EINTR))
			return st;
	}
}

/* mpirun has ended: nothing of the job may outlive it. */
static void child_sweep(void)
{
	for (;;) {
		proctree_signal(getpid(), SIGKILL);
		if (waitpid(-1, NULL, 0) < 0 && errno == ECHILD)
			return;
	}
}

static void __attribute__((noreturn)) child(const struct jobspawn_spec *sp, int out, int err, int col)
{
	static const int stop_sigs[] = { SIGTERM, SIGINT, SIGHUP };
	struct sigaction sa = { .sa_handler = on_stop };   /* no SA_RESTART: waitpid must see it */
	struct rlimit no_core = { 0, 0 };
	sigset_t none;
	pid_t pid;
	int dfd, st;

	setsid();
	prctl(PR_SET_NAME, "ldsd-job", 0, 0, 0);   /* what ps shows for the supervisor */
	child_fds(out, err, col);
	/* The job's orphans become ours, whatever session they made. */
	if (prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0) < 0)
		child_fail(126, "cannot become the job's child subreaper", NULL, errno);
	child_forget_secrets(sp->daemon_cfg);
	/* Handlers before unblocking: a stop sent at once must not kill us
	 * and leave the job behind. */
	for (size_t i = 0; i < sizeof(stop_sigs) / sizeof(stop_sigs[0]); i++)
		sigaction(stop_sigs[i], &sa, NULL);
	signal(SIGPIPE, SIG_DFL);
	sigemptyset(&none);
	sigprocmask(SIG_SETMASK, &none, NULL);   /* the daemon blocks signals for its signalfd */
	child_drop_privileges(sp->x);
	umask(022);
	dfd = child_workdir(sp);
	pid = fork();
	if (pid < 0)
		child_fail(126, "cannot fork", NULL, errno);
	if (pid == 0) {
		for (size_t i = 0; i < sizeof(stop_sigs) / sizeof(stop_sigs[0]); i++)
			signal(stop_sigs[i], SIG_DFL);
		execve(sp->argv[0], sp->argv, sp->envp);
		child_fail(127, "cannot run", sp->argv[0], errno);
	}
	setrlimit(RLIMIT_CORE, &no_core);
	st = child_wait(pid);
	child_sweep();
	child_collect(dfd, sp->collect);
	close(FD_COLLECT);
	close(dfd);
	child_cleanup(sp->dir);
	if (WIFSIGNALED(st)) {
		signal(WTERMSIG(st), SIG_DFL);
		raise(WTERMSIG(st));
		_exit(128 + WTERMSIG(st));
	}
	_exit(WIFEXITED(st) ? WEXITSTATUS(st) : 126);
}

int jobspawn_start(const struct jobspawn_spec *sp, struct jobspawn_proc *p)
{
	int pipes[3][2] = { { -1, -1 }, { -1, -1 }, { -1, -1 } };
	int r = 0;

	for (int i = 0; i < 3 && r == 0; i++)
		if (pipe2(pipes[i], O_CLOEXEC) < 0 || fcntl(pipes[i][0], F_SETFL, O_NONBLOCK) < 0)
			r = -errno;
	if (r == 0) {
		p->pid = fork();
		if (p->pid < 0)
			r = -errno;
		else if (p->pid == 0)
			child(sp, pipes[0][1], pipes[1][1], pipes[2][1]);
	}
	for (int i = 0; i < 3; i++) {
		if (pipes[i][1] >= 0)
			close(pipes[i][1]);
		if (r < 0 && pipes[i][0] >= 0)
			close(pipes[i][0]);
	}
	if (r < 0)
		return r;
	p->out = pipes[0][0];
	p->err = pipes[1][0];
	p->collected = pipes[2][0];
	return 0;
}
