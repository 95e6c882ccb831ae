/*
 * ended.h - at the end of a job, its gateways are told (an exec-service
 * END, ldsd/jobend.h), so that they drop at once what waits for the job's
 * endpoints ("*-ID") instead of holding it until undelivered_ttl: the
 * main cluster's and those of clusters started here through their
 * sockets (a local request: ldsd lets the user who opened the endpoints
 * end them), clusters started through their gateways over the link (the
 * gateway lets the requester of the job end it).
 */
#ifndef MWLAUNCH_ENDED_H
#define MWLAUNCH_ENDED_H

#include "tools/mwlaunch/gwstart.h"
#include "tools/mwlaunch/jobconf.h"

/* c: the clusters of the last run.  Bounded (a few seconds per gateway
 * at most); says what a gateway refused. */
void ended_tell(const struct job *j, struct gw *gw, const struct child *c);

#endif
