/*
 * execpolicy.h - the exec service's rules (ldsd/jobexec.c): which peer
 * clusters, and which of their users, may run which programs with which
 * arguments (the exec group of ldsd.conf: exec.allow_clusters with
 * exec.programs, exec.rules), what of a request reaches mpirun's command
 * line (nothing but hosts and hostfile), and, on the requesting side, that
 * a local client's START names the user the kernel says it is.  Pure
 * functions but for realpath(), getsockopt() and the user database.
 */
#ifndef LDS_EXECPOLICY_H
#define LDS_EXECPOLICY_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#include "config.h"
#include "execmsg.h"

/* True if the requester endpoint ("cluster/name") is of a cluster that
 * exec.allow_clusters or a rule of exec.rules names. */
bool execpolicy_cluster(const struct config_exec *x, const char *endpoint);

/*
 * Policy checks on a decoded START from cluster, against x: the number of
 * ranks (exec.max_ranks); every program on the allow-list once resolved
 * with realpath (progs[i] is then the allow-list entry to run for rank i);
 * the requester's user of that cluster allowed to run it with those
 * arguments (exec.allow_clusters with exec.programs: anyone, any
 * arguments; exec.rules: the users and argument patterns of a rule);
 * environment entries NAME=VALUE with NAME in MWL_*, MW_* or LDS_*; hosts
 * of [A-Za-z0-9.,:_-], none starting with '-'; an absolute hostfile
 * without ".."; distinct file names.  Returns 0, or a negative errno
 * (E2BIG, EACCES, EPERM, EINVAL) with why filled in.  Pure but for
 * realpath().
 */
int execpolicy_check(const struct config_exec *x, const char *cluster, const struct exec_start *s,
		     const char **progs, char *why, size_t len);

/*
 * mpirun's command line for s: x->mpirun, x->mpirun_args, --tag-output,
 * -H or --hostfile if given, then "-np NRANKS TRAMPOLINE SPEC_PATH
 * DIGEST": nothing of the request but hosts and hostfile, which
 * execpolicy_check() restricted.  The ranks' programs, arguments and
 * environment are in the rank file (execspec.h).  np (np_len bytes)
 * holds the number of ranks.  Strings are not copied.  Returns a
 * NULL-terminated vector to free(), or NULL (out of memory).
 */
char **execpolicy_argv(const struct config_exec *x, const struct exec_start *s, const char *trampoline,
		       const char *spec_path, const char *digest, char *np, size_t np_len);

/*
 * The requesting side: a local client on socket fd sends msg to a peer's
 * exec service.  A START must name the user the kernel says the client is
 * (SO_PEERCRED's uid and its name here), since the peer grants by user.
 * Returns 0 (also for any other message), or -EACCES with why filled in
 * (a forged user, a client over TCP, a uid without a name).
 */
int execpolicy_vouch(int fd, const uint8_t *msg, size_t len, char *why, size_t wlen);

#endif
