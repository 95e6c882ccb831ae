/*
 * link_int.h - a link's state, private to the link's own modules.
 *
 * Only link.c and the link modules below include this;
 * the rest of the daemon sees link.h.  Calls between the modules go one
 * way, with upcalls (function pointer tables) for the way back:
 *
 *     link.c (session, slots, reconnect, sequence/ACK)
 *       -> handshake.c (the handshake's state machine, accepted conns)
 *       -> linkmsg.c (messages: sent, delivered, lost, lost-reports)
 *       -> linkpath.c (SYN waits, a silent path, the probe grid)
 *       -> linkauto.c (the number of streams, streams = "auto")
 *       -> linkstatus.c (failure log, status JSON and text; reads state)
 *       -> credit.c (per-destination credit)
 *       -> stream.c (one stream's framing; reports up through upcalls)
 */
#ifndef LDS_LINK_INT_H
#define LDS_LINK_INT_H

#include "autostreams.h"
#include "credit.h"
#include "dial.h"
#include "link.h"
#include "lostrep.h"
#include "probe.h"
#include "stream.h"

#define FAILLOG_MAX 64

struct failure {
	int stream;
	double down_at;              /* wall clock */
	double up_at;                /* 0 until the stream is back */
	double resent_at;            /* 0 until its lost blocks were sent again */
	uint64_t blocks;             /* blocks that had to be resent */
	char reason[64];
};

struct link {
	struct daemon *d;
	const struct config_peer *cfg; /* in d->cfg; &conf once retired */
	struct config_peer conf;     /* a retired link's, without its key: the daemon's config goes */
	const char *lost_why;        /* what senders of unacknowledged messages are told on a reset */
	const struct lds_transport_ops *ops;
	struct lds_transport *tp;
	struct stream *streams[CONFIG_MAX_STREAMS];
	unsigned nstreams;           /* slots in use: configured, or as the peer asked */
	unsigned up;                 /* streams in ST_UP */
	uint64_t next_try_ns[CONFIG_MAX_STREAMS];
	double backoff[CONFIG_MAX_STREAMS];
	struct probe_grid probe;     /* connecting side, while the path is lost */
	struct dial dial;            /* connecting side: the peer's addresses */
	unsigned rr;                 /* round robin for ACKs */
	/* streams = "auto" (connecting side): the chooser and its period. */
	struct autostreams *as;
	uint64_t as_start_ns, as_reached;
	unsigned as_ticks, as_busy, as_queued, as_disturbed;
	int as_refused;              /* a message waited for room since the last tick */

	uint64_t instance;           /* what the peer knows this session by: the daemon's, or fresh (link_new_session) */
	uint64_t peer_instance;
	uint32_t peer_max_msg;
	struct credit credit;        /* per destination (credit.h) */
	struct sendbuf sb;
	struct recvbuf rb;
	struct lostrep lr;           /* our drops of the peer's messages (lostrep.h) */
	int ack_pending, kick_pending;
	int deliv_unreported;        /* deliveries no ACK has carried yet */
	uint64_t last_ack_ns;
	int shutting_down;

	uint64_t reconnects, resets, srtt_us, rtt_samples;
	uint64_t acks_sent, acks_received;   /* ACK frames, both ways (status: what batching costs) */
	int turn_wait;               /* blocks ahead of their turn wait in their conns (linkturn.c) */
	uint64_t blocks_parked;      /* times they did */
	uint64_t turn_resume;        /* none waits before this block is the one expected (linkturn_stop) */
	uint64_t msgs_misrouted;     /* dropped: not from the peer's cluster to ours */
	uint64_t refused_logged;     /* last REFUSE code logged, to avoid log floods (handshake.c) */
	double down_since;           /* wall clock when the last stream went, 0 if up */
	double downtime;             /* seconds with no stream up, since start */
	struct failure faillog[FAILLOG_MAX];
	unsigned nfail;              /* total failures; faillog holds the last FAILLOG_MAX */
	char last_error[240];        /* why the last stream that never came up failed */
};

/* link.c */
/* The unsent limit of a stream whose transport sent bytes in the last ns
 * (LINK_UNSENT_MAX to LINK_UNSENT_FAST). */
size_t link_unsent_limit(uint64_t bytes, uint64_t ns);

/* linkauto.c */
/* streams = "auto" from its first guess: 0 or -ENOMEM. */
int linkauto_first(struct link *l);
/* streams = "auto" measures from now on, with the streams it has now:
 * 0 or -ENOMEM. */
int linkauto_start(struct link *l);
/* Once per link_tick while "auto" is on. */
void linkauto_tick(struct link *l, uint64_t now);
/* Closes the streams beyond the count wanted once nothing they carried
 * waits for an ACK. */
void linkauto_retire(struct link *l);

/* linkmsg.c */
/* sendbuf's upcalls (arg: the link): a message of ours was delivered,
 * or lost for the link's lost_why. */
void linkmsg_acked(void *arg, const struct sb_msg *m);
void linkmsg_lost(void *arg, const struct sb_msg *m);
/* recvbuf's upcall (arg: the link): a message from the peer is whole. */
void linkmsg_received(void *arg, struct rb_msg *m);
/* The recvbuf's place upcall: where the sink would have m reassembled. */
uint8_t *linkmsg_place(void *arg, struct rb_msg *m);
/* Sends what lostrep has pending, as far as send memory allows; the rest
 * goes on a later round. */
void linkmsg_send_reports(struct link *l);

/* linkpath.c */
/* How long connection attempt s waits for an answer: the SYN wait, or
 * while the link probes for its lost path, until the slot's next turn on
 * the grid, so that a late tick does not carry over into the next
 * attempt. */
double linkpath_syn_wait(const struct stream *s);
/* The connecting side closes the streams of a silent link (see
 * LINK_SILENCE_S in linkpath.c) so that they reconnect on the probe grid. */
void linkpath_check_silence(struct link *l, uint64_t now);

/* linkturn.c */
/* The stream upcall wait_turn: 1 if block seq, ahead of its turn, is to
 * wait in its conn until linkturn_release lets its stream go. */
int linkturn_wait(struct link *l, uint64_t seq);
/* Before the loop sleeps: releases the parked streams whose block's turn
 * came; all of them if no other stream runs. */
void linkturn_release(struct link *l);
/* Releases every parked stream; none parks again until the highest block
 * seen so far is the one expected.  When a stream of l breaks. */
void linkturn_stop(struct link *l);
/* Each tick: whether blocks may wait, from the path's round trip; all
 * parked streams go if one waited too long. */
void linkturn_tick(struct link *l, uint64_t now);

/* linkstatus.c */
/* Slot idx broke, why, with blocks to resend. */
void faillog_open(struct link *l, int idx, const char *why, uint64_t blocks);
/* The slot came back: its latest open failure is over. */
void faillog_up(struct link *l, int idx);
/* No block waits for a resend: every open failure is recovered. */
void faillog_resent(struct link *l);

#endif
