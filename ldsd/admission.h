/*
 * admission.h - what a listening gateway grants a peer connection before
 * it has authenticated (docs/security.md, "Before authentication").
 *
 * Anyone on the Internet can open connections to the peer port, and the
 * cluster names a HELLO needs are no secret, so everything a connection
 * holds before its AUTH verifies is bounded here, as OpenSSH's MaxStartups
 * and PerSourcePenalties do it:
 *
 * - at most max_unauth connections in total and max_per_source from one
 *   address; between early_drop and max_unauth a new one is dropped with a
 *   probability rising linearly to 1 (random early drop), so that a flood
 *   cannot hold every slot while an honest peer's reconnects keep a chance;
 * - a source whose handshakes failed max_failures times in a window of
 *   ADMISSION_WINDOW_S is refused until the window ends;
 * - every failed handshake is logged with its source: the first of each
 *   reason (up to 4) per source and window in full, the others counted and
 *   summed up in one line when the window ends ("N more failed handshakes
 *   ... from ADDR in the last 10 s"); at most ADMISSION_LINES lines per
 *   window over all sources, the excess counted in one more;
 * - an address that authenticated a connection in the last hour (a
 *   peer's) is exempt from max_unauth, early drop and max_failures, so
 *   that its link reconnects while a flood from other addresses fills the
 *   table;
 * - accept() failing for lack of descriptors is logged once per episode
 *   and answered with a back-off (admission_accept_failed), so that the
 *   event loop never spins on a listener it cannot serve.
 *
 * The handshake deadline (timeout) is enforced by handshake.c with this
 * module's setting; the size of what an unauthenticated connection may
 * buffer is ADMISSION_RX_MAX.
 *
 * Single-threaded; times are CLOCK_MONOTONIC nanoseconds passed in, so
 * that the logic is testable without a clock.
 */
#ifndef LDS_ADMISSION_H
#define LDS_ADMISSION_H

#include <stdint.h>
#include <stdio.h>

#include "config.h"

/* Bytes an unauthenticated stream may buffer: a frame needing more is a
 * protocol error.  The largest handshake frame is a REFUSE (271 bytes);
 * the rest leaves room for the handshake to grow. */
#define ADMISSION_RX_MAX 1024u
/* Failures are counted, and their log lines summed up, per window. */
#define ADMISSION_WINDOW_S 10
/* First lines of failures logged per window, over all sources. */
#define ADMISSION_LINES 20

struct admission;

/* cfg must outlive the result.  Returns NULL (errno set) on failure. */
struct admission *admission_new(const struct config_handshake *cfg);
void admission_free(struct admission *a);

/* A listener accepted a connection from peer ("address:port"): returns 0
 * if it may handshake (it then counts until admission_release), or -1 if
 * the caller must close it at once (logged here, rate-limited). */
int admission_admit(struct admission *a, const char *peer, uint64_t now_ns);
/* peer's connection authenticated, or ended; why is NULL for the first,
 * else what went wrong, logged here with peer and cluster (the cluster
 * its HELLO named, or NULL), rate-limited, and counted against peer's
 * address. */
void admission_release(struct admission *a, const char *peer, const char *cluster, const char *why,
		       uint64_t now_ns);

/* accept() failed with err (-EMFILE, -ENFILE, -ENOBUFS, -ENOMEM); the
 * transport has dropped the connection that waited.  Returns how long, in
 * ns, the listener should stop accepting (doubling from 10 ms to 1 s while
 * the failures go on).  Logged once per episode. */
uint64_t admission_accept_failed(struct admission *a, int err, uint64_t now_ns);

/* Periodic: ends the windows that are over, logging their summaries. */
void admission_tick(struct admission *a, uint64_t now_ns);

/* For `ldsctl status`: connections not yet authenticated now; since
 * start, admitted to a handshake, dropped at accept (a limit, random early
 * drop, a penalised source), failed handshakes, accept() failures.  JSON
 * is one object. */
void admission_status_json(const struct admission *a, FILE *out);
void admission_status_text(const struct admission *a, FILE *out);

#endif
