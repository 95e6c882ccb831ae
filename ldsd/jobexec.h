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
 * execpolicy_check (the requester's user, vouched for by its own gateway
 * through execpolicy_vouch, may run that program with those arguments).
 * Anything else is refused: logged here with the reason and answered
 * with REFUSED.
 *
 * A job is one mpirun, run by jobspawn.c as exec.user; mpirun starts the
 * trampoline ldsd-exec for every rank, which runs the rank's program
 * (execspec.h), so that no word of the request reaches mpirun.  Its
 * stdout and stderr go back to the requester as OUTPUT messages as they
 * come; when the link has no room, the job's pipes are not read (the job
 * blocks on its writes) and at most one message per job waits in memory.
 * The end is EXIT with the status, after the last output.  STOP, the
 * job's time limit or a draining daemon stop it: SIGTERM to its process
 * group and, through the supervisor, to every process of the job; SIGKILL
 * to all of them 5 s later (proctree.h).  Single-threaded, like the rest
 * of the daemon.
 */
#ifndef LDS_JOBEXEC_H
#define LDS_JOBEXEC_H

#include <stddef.h>
#include <stdio.h>
#include <sys/types.h>

#include "daemon.h"
#include "execmsg.h"
#include "recvbuf.h"

struct link;

/* Ends job tag for uid (clientsrv_end_job, through main.c): how many
 * messages were dropped, or -EINVAL/-EPERM with why. */
typedef long jobexec_end_fn(void *arg, const char *tag, uid_t uid, char *why, size_t len);

/* Always created (a gateway without an exec group refuses requests);
 * an END from a job's requester calls end(end_arg, ...).  Returns NULL
 * and logs on failure. */
struct jobexec *jobexec_new(struct daemon *d, jobexec_end_fn *end, void *end_arg);
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

#endif
