/*
 * execspec.h - the rank file: what each rank of an exec-service job runs.
 *
 * mpirun never sees a requester's program, arguments or environment (Open
 * MPI reads "--mca NAME VALUE" anywhere on its command line, even after
 * the program, and would obey one sent by a peer).  Instead ldsd writes
 * them into this file in the job's directory, and mpirun's command line is
 * only ldsd's own words: "-np N ldsd-exec FILE DIGEST".  Each rank's
 * ldsd-exec (ldsd/exec_trampoline.c) reads the file, checks it against
 * the SHA-256 DIGEST (the job's own processes can write the file, but not
 * mpirun's command line), takes the entries of its rank
 * (OMPI_COMM_WORLD_RANK) and execve()s the program with them.
 *
 * The file is text, one entry per line; no entry can hold a newline,
 * since exec_decode() refuses control characters in every string:
 *
 *   ldsd-exec 1
 *   rank                 one per rank, in order; the entries below are its
 *   prog /abs/path       exactly one, first
 *   arg TEXT             0..EXEC_MAX_ARGS, in order
 *   env NAME=VALUE       0..EXEC_MAX_ENV + 1, put over mpirun's environment
 *
 * Pure functions but for the digest (OpenSSL).
 */
#ifndef LDS_EXECSPEC_H
#define LDS_EXECSPEC_H

#include <stddef.h>

#include "execmsg.h"

#define EXECSPEC_NAME ".ldsd-exec"     /* in the job's directory; no START file name starts with '.' */
#define EXECSPEC_MAX (8u << 20)        /* bytes of a rank file, above any START's (1 MiB) plus LDS_SOCKET per rank */
#define EXECSPEC_DIGEST_LEN 64         /* hex characters of SHA-256 */

/* One rank's entries; pointers into the buffer given to execspec_rank. */
struct execspec_rank {
	const char *prog;
	const char *args[EXEC_MAX_ARGS];
	unsigned nargs;
	const char *env[EXEC_MAX_ENV + 1];
	unsigned nenv;
};

/*
 * The file for s: rank i runs progs[i] with its arguments and environment,
 * and socket_env ("LDS_SOCKET=PATH") if the rank does not set LDS_SOCKET.
 * Returns a malloc()ed buffer of *len bytes, or NULL (out of memory).
 */
char *execspec_build(const struct exec_start *s, const char *const *progs, const char *socket_env, size_t *len);

/*
 * Finds rank's entries in buf (len bytes, modified: lines become strings).
 * Returns 0, -ENOENT (no such rank), or -EBADMSG (not a rank file, an
 * unknown entry, a rank without prog or with a relative one, too many
 * arguments or environment entries, an env without '=').
 */
int execspec_rank(char *buf, size_t len, unsigned rank, struct execspec_rank *out);

/* SHA-256 of buf as lower-case hex, NUL-terminated.  Returns 0 or -EIO. */
int execspec_digest(const void *buf, size_t len, char hex[EXECSPEC_DIGEST_LEN + 1]);

#endif
