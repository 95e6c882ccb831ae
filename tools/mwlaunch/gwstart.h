/*
 * gwstart.h - clusters started through their gateways.  mwlaunch opens
 * one liblds handle on the main cluster's ldsd and sends each such
 * cluster's START (ldsd/execmsg.h) to the endpoint "CLUSTER/ldsd.exec";
 * the local ldsd carries it over the authenticated link, and the remote
 * one runs the cluster's mpirun as its configured user (ldsd/jobexec.c).
 * What comes back is handed to the cluster's struct child: output lines
 * (tagged like a local cluster's), the collected report (written to the
 * child's report path), the exit status; a refusal, a liblds error or a
 * gateway that stays silent ends the child with the reason in its why.
 * Everything is bounded: an unanswered START gives up after the answer
 * timeout, a stopped cluster whose exit never arrives after
 * GW_GIVE_UP s.
 */
#ifndef MWLAUNCH_GWSTART_H
#define MWLAUNCH_GWSTART_H

#include <stddef.h>

#include "ldsd/execmsg.h"
#include "tools/mwlaunch/run.h"

#define GW_GIVE_UP 15.0          /* s after a stop without an exit status */

struct gw;

/* Connects to the ldsd at socket (bounded).  NULL with why in err. */
struct gw *gw_open(const char *socket, char *err, size_t len);
void gw_close(struct gw *g);
/* For poll(): readable when gw_process has something to do. */
int gw_fd(const struct gw *g);

/* Sends c's START; answer: seconds to wait for STARTED or REFUSED.
 * 0, or -1 having said why. */
int gw_start(struct gw *g, struct child *c, const struct exec_start *req, double answer);
/* Asks c's gateway to stop it (SIGTERM there, SIGKILL 5 s later). */
void gw_stop(struct gw *g, struct child *c, const char *why);
/* Tells c's gateway that the job (endpoints "*-tag") ended: it drops
 * what waits for them (ldsd/jobend.h).  Says so when it cannot. */
void gw_end(struct gw *g, const struct child *c, const char *tag);
/* Takes every message and event waiting; updates the children. */
void gw_process(struct gw *g, struct child *c, unsigned n);
/* Gives up on children whose gateway did not answer in time. */
void gw_tick(struct gw *g, struct child *c, unsigned n, double now);

#endif
