/*
 * fdreserve.h - a descriptor kept in reserve for listeners that run out.
 *
 * When accept() fails for lack of descriptors the connection stays in the
 * backlog and keeps its level-triggered listener readable: the event loop
 * would spin on it.  Closing the reserve makes room to accept that
 * connection and close it at once (its client learns at once), after
 * which the reserve is taken again.  The daemon's unix-socket listeners
 * (client and control sockets) use it; the TCP transport keeps its own,
 * as transports see nothing of the daemon.  Single-threaded.
 */
#ifndef LDS_FDRESERVE_H
#define LDS_FDRESERVE_H

/* Takes the reserve (idempotent); 0 or -errno. */
int fdreserve_init(void);
void fdreserve_fini(void);
/* accept() on listen_fd just failed with errno err.  If err means that
 * descriptors ran out (EMFILE, ENFILE), drops one waiting connection with
 * the reserve and returns 1; else returns 0. */
int fdreserve_drop(int listen_fd, int err);

#endif
