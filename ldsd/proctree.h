/*
 * proctree.h - every descendant of a process, found through /proc.
 *
 * A job's process group does not hold all of a job: a process can leave it
 * with setsid() and, after a double fork, stop being anyone's child but
 * init's.  The exec service therefore runs each job under a supervisor
 * that is a child subreaper (PR_SET_CHILD_SUBREAPER: orphans of the job
 * become its children, never init's) and signals the supervisor's whole
 * tree, whatever sessions and groups it has made (ldsd/jobspawn.c).
 */
#ifndef LDS_PROCTREE_H
#define LDS_PROCTREE_H

#include <sys/types.h>

/*
 * Sends sig to every process whose parent chain (per /proc/PID/stat) leads
 * to root, root itself and zombies not included.  A process forked meanwhile may be
 * missed: call again until it returns 0.  Returns how many were signalled,
 * or a negative errno (/proc unreadable, out of memory).  Allocates; safe
 * in a forked child of a single-threaded process.
 */
int proctree_signal(pid_t root, int sig);

#endif
