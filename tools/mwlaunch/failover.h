/*
 * failover.h - tells the main cluster's communication manager for a remote
 * cluster, at once and through the main gateway, that the cluster ended, so
 * that the master reassigns its tasks now rather than after the deadline
 * (launcher/mw_cm.c, MW_MSG_GONE).
 */
#ifndef MWLAUNCH_FAILOVER_H
#define MWLAUNCH_FAILOVER_H

/* From endpoint MAIN/mwlaunch-JOB at the main gateway's socket, sends GONE
 * with why to MAIN/cm-REMOTE-JOB.  0, or a negative errno (liblds's) after
 * saying that the CM will give up after its deadline instead. */
int failover_tell(const char *socket, const char *main_cluster, const char *remote, const char *job, const char *why);

#endif
