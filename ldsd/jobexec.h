/*
 * jobexec.h - the exec service: peer clusters start MPI jobs on this
 * gateway through the authenticated link (docs/protocol.md, "Exec
 * service"; configured by the exec group of ldsd.conf, docs/config.md).
 *
 * Requests are messages to the reserved endpoint "CLUSTER/ldsd.exec";
 * the client server hands every message from a link for a reserved name
 * (exec_reserved_name) to jobexec_request instead of to a client.  A
 * request is taken only when it came over the link of the cluster its
 * source names (a peer cannot speak for another), that cluster is in
 * exec.allow_clusters or a rule of exec.rules, and every field passes
 * jobexec_check (the requester's user, vouched for by its own gateway
 * through jobexec_vouch, may run that program with those arguments).  Anything
 * else is refused: logged here with the reason and answered with REFUSED.
 *
 * A job is one mpirun, run by jobspawn.c as exec.user; mpirun starts the
 * trampoline ldsd-exec for every rank, which runs the rank's program
 * (execspec.h), so that no word of the request reaches mpirun.  Its stdout and
 * stderr go back to the requester as OUTPUT messages as they come; when
 * the link has no room, the job's pipes are not read (the job blocks on
 * its writes) and at most one message per job waits in memory.  The end
 * is EXIT with the status, after the last output.  STOP, the job's time
 * limit or a draining daemon stop it: SIGTERM to its process group and,
 * through the supervisor, to every process of the job; SIGKILL to all of
 * them 5 s later (proctree.h).  Single-threaded, like the rest of the daemon.
 */
#ifndef LDS_JOBEXEC_H
#define LDS_JOBEXEC_H

#include <stddef.h>
#include <stdio.h>

#include "daemon.h"
#include "execmsg.h"
#include "recvbuf.h"

struct link;

/* Always created (a gateway without an exec group refuses requests).
 * Returns NULL and logs on failure. */
struct jobexec *jobexec_new(struct daemon *d);
/* Kills every job still running (SIGKILL) and waits for it. */
void jobexec_free(struct jobexec *jx);

/* A message from link from for a reserved endpoint of this cluster;
 * jobexec owns m and hands it back with link_delivered(). */
void jobexec_request(struct jobexec *jx, struct link *from, struct rb_msg *m);

/* The daemon is draining: refuse new jobs and stop the running ones. */
void jobexec_drain(struct jobexec *jx);
/* True when no job is left (ended, and its exit reported or given up). */
int jobexec_idle(const struct jobexec *jx);

void jobexec_status_json(const struct jobexec *jx, FILE *out);
void jobexec_status_text(const struct jobexec *jx, FILE *out);

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
int jobexec_check(const struct config_exec *x, const char *cluster, const struct exec_start *s, const char **progs,
		  char *why, size_t len);

/*
 * mpirun's command line for s: x->mpirun, x->mpirun_args, --tag-output,
 * -H or --hostfile if given, then "-np NRANKS TRAMPOLINE SPEC_PATH
 * DIGEST": nothing of the request but hosts and hostfile, which
 * jobexec_check() restricted.  The ranks' programs, arguments and
 * environment are in the rank file (execspec.h).  np (np_len bytes)
 * holds the number of ranks.  Strings are not copied.  Returns a
 * NULL-terminated vector to free(), or NULL (out of memory).
 */
char **jobexec_argv(const struct config_exec *x, const struct exec_start *s, const char *trampoline,
		    const char *spec_path, const char *digest, char *np, size_t np_len);

/*
 * The requesting side: a local client on socket fd sends msg to a peer's
 * exec service.  A START must name the user the kernel says the client is
 * (SO_PEERCRED's uid and its name here), since the peer grants by user.
 * Returns 0 (also for any other message), or -EACCES with why filled in
 * (a forged user, a client over TCP, a uid without a name).
 */
int jobexec_vouch(int fd, const uint8_t *msg, size_t len, char *why, size_t wlen);

#endif
