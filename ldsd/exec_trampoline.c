/*
 * ldsd-exec - the program mpirun starts for every rank of an exec-service
 * job (ldsd/jobexec.c); see ldsd/execspec.h and ldsd-exec(8).
 *
 *   ldsd-exec FILE DIGEST
 *
 * Reads the rank file FILE, checks that its SHA-256 is DIGEST, takes the
 * entries of rank OMPI_COMM_WORLD_RANK and execve()s that program with
 * its arguments, in mpirun's environment with the rank's NAME=VALUE
 * entries put over it.  Nothing it reads is interpreted by a shell or by
 * mpirun.  Errors go to stderr as "ldsd-exec: ..." and end it with 127.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/stat.h>

#include "ldsd/execspec.h"

extern char **environ;

static void __attribute__((noreturn)) die(const char *fmt, const char *arg, int err)
{
	fprintf(stderr, "ldsd-exec: ");
	fprintf(stderr, fmt, arg);
	fprintf(stderr, "%s%s\n", err ? ": " : "", err ? strerror(err) : "");
	exit(127);
}

/* The whole file, which must be a regular one of at most EXECSPEC_MAX
 * bytes not reached through a symbolic link. */
static char *read_spec(const char *path, size_t *len)
{
	struct stat st;
	size_t got = 0;
	char *buf;
	int fd = open(path, O_RDONLY | O_NOFOLLOW | O_CLOEXEC);

	if (fd < 0)
		die("cannot open %s", path, errno);
	if (fstat(fd, &st) < 0 || !S_ISREG(st.st_mode) || st.st_size <= 0 || (size_t)st.st_size > EXECSPEC_MAX)
		die("%s is not a rank file", path, 0);
	buf = malloc((size_t)st.st_size);
	if (buf == NULL)
		die("%s: out of memory", path, 0);
	while (got < (size_t)st.st_size) {
		ssize_t n = read(fd, buf + got, (size_t)st.st_size - got);

		if (n < 0 && errno == EINTR)
			continue;
		if (n <= 0)
			die("cannot read %s", path, n < 0 ? errno : EIO);
		got += (size_t)n;
	}
	close(fd);
	*len = got;
	return buf;
}

/* mpirun's environment with the rank's entries replacing same names. */
static char **rank_env(const struct execspec_rank *r)
{
	size_t n = 0, k = 0;
	char **env;

	while (environ[n])
		n++;
	env = calloc(n + r->nenv + 1, sizeof(*env));
	if (env == NULL)
		die("out of memory%s", "", 0);
	for (size_t i = 0; i < n; i++) {
		const char *eq = strchr(environ[i], '=');
		size_t name = eq ? (size_t)(eq - environ[i]) + 1 : strlen(environ[i]);
		int replaced = 0;

		for (unsigned e = 0; e < r->nenv && !replaced; e++)
			replaced = strncmp(r->env[e], environ[i], name) == 0;
		if (!replaced)
			env[k++] = environ[i];
	}
	for (unsigned e = 0; e < r->nenv; e++)
		env[k++] = (char *)r->env[e];
	env[k] = NULL;
	return env;
}

int main(int argc, char **argv)
{
	const char *rank_s = getenv("OMPI_COMM_WORLD_RANK");
	char digest[EXECSPEC_DIGEST_LEN + 1], *buf, *end;
	const char *args[EXEC_MAX_ARGS + 2];
	struct execspec_rank r;
	unsigned long rank;
	size_t len;
	int e;

	if (argc == 2 && strcmp(argv[1], "--version") == 0) {
		puts("ldsd-exec " LDS_VERSION);
		return 0;
	}
	if (argc != 3)
		die("usage: ldsd-exec FILE DIGEST (run by ldsd's exec service through mpirun)%s", "", 0);
	if (rank_s == NULL || rank_s[0] == '\0' || (rank = strtoul(rank_s, &end, 10), *end != '\0') ||
	    rank >= EXEC_MAX_RANKS)
		die("OMPI_COMM_WORLD_RANK is \"%s\": not started by mpirun", rank_s ? rank_s : "", 0);
	buf = read_spec(argv[1], &len);
	if (execspec_digest(buf, len, digest) < 0 || strcmp(digest, argv[2]) != 0)
		die("%s was changed after ldsd wrote it: not running it", argv[1], 0);
	e = execspec_rank(buf, len, (unsigned)rank, &r);
	if (e < 0)
		die("%s: no valid entries for this rank", argv[1], -e);
	args[0] = r.prog;
	for (unsigned i = 0; i < r.nargs; i++)
		args[i + 1] = r.args[i];
	args[r.nargs + 1] = NULL;
	execve(r.prog, (char *const *)args, rank_env(&r));
	die("cannot run %s", r.prog, errno);
}
