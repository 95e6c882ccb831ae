/*
 * udp.h - the UDP transport's instance, sockets and conns, shared by
 * transports/udp/udp*.c; the core sees only transport.h.
 *
 * udp.c        the ops table, the instance, its timer and pending hook
 * udp_demux.c  each packet to its conn, the listener's side of the handshake
 * udp_sock.c   sockets, listeners, batched receiving and sending
 * udp_conn.c   one conn: packets in, packets out, its timers
 * udp_token.c  stateless retry tokens
 * the rest     pure parts: packet, ack, ranges, recovery, cc, pacer, sendq,
 *              recvq, conf
 */
#ifndef LDS_UDP_H
#define LDS_UDP_H

#include <stdint.h>
#include <sys/socket.h>

#include "ldsd/clock.h"
#include "transports/transport.h"
#include "udp_ack.h"
#include "udp_cc.h"
#include "udp_conf.h"
#include "udp_pacer.h"
#include "udp_packet.h"
#include "udp_pmtu.h"
#include "udp_recovery.h"
#include "udp_recvq.h"
#include "udp_sendq.h"

#define UDP_TICK_MS 1
/* Where every conn's path is this long, the timer runs every
 * UDP_TICK_LONG_MS instead: half the wakes (each a tenth of a gateway's
 * CPU at 200 Mb/s), a pacing burst and a reading delay of 2 ms, under a
 * seventh of the round trip. */
#define UDP_TICK_LONG_MS 2
#define UDP_TICK_LONG_MIN_RTT_NS 15000000ull
/* Where every path is this long, every UDP_TICK_LONGER_MS: half the wakes
 * again; a pacing train of 4 ms (the pacer's bucket holds 8) and a reading
 * delay of 4 ms on each side, under a twelfth of the round trip; an ACK
 * (due every UDP_ACK_INTERVAL_MAX_NS) goes each tick, within the 5 ms
 * the peer allows for. */
#define UDP_TICK_LONGER_MS 4
#define UDP_TICK_LONGER_MIN_RTT_NS 100000000ull
#define UDP_BATCH 32                 /* datagrams per recvmmsg/sendmmsg */
#define UDP_GSO_SEGS 64              /* the kernel's limits on one UDP GSO send */
#define UDP_GSO_BYTES 65000
#define UDP_OUT_REFS 8               /* pieces of STREAM data a packet sends in place; more are copied */
#define UDP_RBUF 65536               /* a receive buffer: packets the kernel coalesced (UDP GRO) */
#define UDP_SOCK_BUCKETS 64
#define UDP_CONNS_PER_SOURCE 64      /* conns one address may hold on a listener */
#define UDP_CONNS_PER_LISTENER 4096
#define UDP_WINDOW_PREAUTH (256u << 10) /* an accepted conn's window until the core applies its link's settings */
#define UDP_MAX_ACK_DELAY_NS 5000000ull
#define UDP_ACK_EVERY 2              /* ack-eliciting packets per ACK */
/* A socket read on the tick (a long path, many packets) acknowledges once
 * per interval: an eighth of the path's round trip, at most this (with a
 * tick on top still within UDP_MAX_ACK_DELAY_NS, which the peer's probe
 * timeout allows for), or after UDP_ACK_BULK packets.  Each ACK is a send
 * and a wake of the peer: at 200 Mb/s one a tick was a tenth of the
 * receiver's CPU. */
#define UDP_ACK_INTERVAL_MAX_NS 3000000ull
#define UDP_ACK_BULK 64
#define UDP_UNSENT_DEFAULT (1u << 20)
#define UDP_CONNECT_TIMEOUT_NS 10000000000ull
#define UDP_LINGER_MAX_NS 10000000000ull  /* delivering what was queued before a close */
#define UDP_ZOMBIE_NS 2000000000ull       /* answering a closed conn's peer with CLOSE */
#define UDP_CLOSE_SENDS 3                 /* a CLOSE may be lost, and a peer with nothing to send never asks again */
/* A socket that receives many packets is read on the tick instead of on
 * each readiness (udp_sock_poll): one wake, one recvmmsg and one ACK per
 * tick's packets instead of per packet or two.  Packets sent count too: a
 * busy sender's socket gets an ACK every few ms, each a wake of its own
 * when watched.  Entered at this rate, left below the lower one (measured
 * over a window). */
#define UDP_POLL_ENTER_PPS 4000
#define UDP_POLL_LEAVE_PPS 1000
#define UDP_POLL_WINDOW_NS 10000000ull
/* Only where every conn's path is this long (path_rtt_min): a tick more
 * on each side's reading lengthens the round trip beyond what the
 * congestion controller measured as its minimum, and on a short path
 * (loopback, a LAN) its window, twice the estimated BDP, would cap the
 * rate at a fraction. */
#define UDP_POLL_MIN_RTT_NS 10000000ull

struct udp_sock {
	struct lds_transport *tp;
	int fd;
	int refs;                        /* the listener and each conn on it */
	struct lds_tp_listener *l;       /* accepting here; NULL: a client's socket or a closed listener */
	struct lds_tp_conn *bucket[UDP_SOCK_BUCKETS];  /* conns by local conn id */
	size_t nconns;
	struct udp_sock *next;           /* the instance's sockets */
	int polled;                      /* read on the tick, not watched */
	unsigned polled_round;           /* the tick that last read it */
	uint64_t win_ns, win_pkts;       /* packets received and sent since win_ns */
};

struct lds_tp_listener {
	struct udp_sock *sock;
	struct udp_conf conf;
	size_t unsent_max;
	int paused;
	void *ud;
};

/* Counters of the instance: what was refused, for status and tests. */
struct udp_stats {
	uint64_t bad;                    /* failed udp_pkt_open or frame parsing */
	uint64_t unknown;                /* no conn with that id (or wrong address) */
	uint64_t replayed;               /* a packet number the conn had seen (or forgotten) */
	uint64_t retries;                /* RETRYs sent */
	uint64_t bad_tokens;
	uint64_t refused;                /* INITs refused for limits */
};

/* How the lower files report up (none calls a file above it); udp.c
 * fills it. */
struct udp_events {
	/* A datagram for s: returns the conn it went to, or NULL. */
	struct lds_tp_conn *(*packet)(struct udp_sock *s, const uint8_t *buf, size_t len,
				      const struct sockaddr_storage *from, socklen_t fl, uint64_t now_ns);
	/* A batch read: the conns its packets went to. */
	void (*settle)(struct lds_tp_conn **touched, size_t n, uint64_t now_ns);
	/* The socket says c's peer is gone (ICMP). */
	void (*failed)(struct lds_tp_conn *c, int err);
	/* A conn needs the host timer running. */
	void (*timer_need)(struct lds_transport *tp);
};

struct lds_transport {
	struct lds_tp_host host;
	struct lds_tp_upcalls up;
	struct udp_events ev;
	int timer_id, pending_id;
	unsigned tick_ms;                /* the timer's interval (udp_tick_ms) */
	struct lds_tp_conn *conns;       /* all conns, live and lingering */
	size_t nconns;
	struct udp_sock *socks;
	unsigned round;                  /* ticks so far */
	uint64_t tick_reads;             /* sockets read on the tick (udp_sock_poll) */
	uint64_t tick_reads_client;      /* of them, clients' sockets */
	struct lds_tp_conn *dead;        /* closed by the core, closed upcall owed */
	uint8_t secret[32];              /* keys retry tokens */
	int no_gso;                      /* the kernel refused UDP GSO: one packet per send */
	struct udp_stats stats;
	char step[64];
	uint8_t rbuf[UDP_BATCH][UDP_RBUF];
	/* Packets built for the next send: olen bytes each, in obuf but for
	 * the onref pieces of STREAM data that end them, read in place from
	 * the send queue (oref). */
	uint8_t obuf[UDP_BATCH][UDP_PKT_MAX];
	size_t olen[UDP_BATCH];
	struct iovec oref[UDP_BATCH][UDP_OUT_REFS];
	int onref[UDP_BATCH];
};

enum udp_state {
	UDP_ST_CONNECTING,               /* client: INIT sent, no ACCEPT yet */
	UDP_ST_OPEN,
	UDP_ST_LINGER,                   /* closed by the core: delivering what was queued */
	UDP_ST_CLOSING,                  /* CLOSE sent: answering the peer until the end */
	UDP_ST_FAILED,                   /* err says why; nothing is sent */
};

struct lds_tp_conn {
	struct lds_transport *tp;
	struct udp_sock *sock;
	struct lds_tp_conn *next, *hnext, *next_dead;
	enum udp_state state;
	int err;                         /* -errno once failed */
	int peer_closed;                 /* CLOSE received: 1 orderly, 2 aborted */
	int core_closed;                 /* ops->close made: no upcall but closed */
	int accepted;                    /* server side */
	int dead_listed;                 /* on tp->dead: the closed upcall is owed */
	int connected_owed;              /* the connected upcall is owed (err says how) */
	int err_told;                    /* recv_msg has reported err */
	void *ud;
	int want_w, no_read;
	uint64_t lcid, rcid;
	struct sockaddr_storage peer;
	socklen_t peer_len;
	char peer_name[64];
	struct udp_conf conf;
	size_t unsent_max;
	uint8_t token[UDP_TOKEN_LEN];
	int have_token;
	uint64_t hs_next_ns, hs_deadline_ns, hs_interval_ns;
	struct udp_rx rx;
	struct udp_recvq rq;
	struct udp_sendq sq;
	struct udp_recovery rec;
	struct udp_cc cc;
	struct udp_pacer pacer;
	struct udp_pmtu pmtu;            /* the packet size: conf.mtu follows it */
	uint64_t last_recv_ns, last_eliciting_ns, end_ns;
	uint64_t advertised;             /* the window's end last told the peer */
	int window_owed;                 /* a packet telling it was lost or never sent: tell again */
	int probe;                       /* probes owed after a probe timeout */
	int answer_close;                /* a packet came while closing: CLOSE again */
	unsigned close_sends;            /* CLOSEs sent unprompted */
	uint64_t close_next_ns;          /* when the next goes */
	uint64_t bytes_sent, bytes_recv, dropped;
	uint64_t path_rtt_min;           /* least RTT sample less the peer's ACK delay (0: none yet) */
};

/* udp.c */
void udp_timer_need(struct lds_transport *tp);
/* Moves the timer to the interval the conns' paths allow. */
void udp_timer_adjust(struct lds_transport *tp);
/* The timer's interval for a least path of path_ns (0: not known yet). */
unsigned udp_tick_ms(uint64_t path_ns);

/* udp_conn.c */
void udp_conn_mtu_conf(struct lds_tp_conn *c, unsigned mtu, unsigned mtu_max);

/* udp_sock.c */
int udp_sock_open(struct lds_transport *tp, const char *host, uint16_t port, int passive, const struct udp_conf *uc,
		  struct udp_sock **out, struct sockaddr_storage *peer, socklen_t *peer_len, const char **step);
void udp_sock_unref(struct udp_sock *s);
void udp_sock_add_conn(struct udp_sock *s, struct lds_tp_conn *c);
void udp_sock_del_conn(struct udp_sock *s, struct lds_tp_conn *c);
/* Sends the n packets built in tp->obuf (and oref) to c's peer; returns
 * how many left (the rest were refused by a full socket buffer), or
 * -errno. */
int udp_sock_send(struct lds_tp_conn *c, size_t n);
void udp_peer_name(const struct sockaddr_storage *ss, char *buf, size_t len);
struct lds_tp_conn *udp_sock_lookup(struct udp_sock *s, uint64_t cid);
/* On the tick: reads the sockets that are polled, and moves each between
 * polled and watched by the rate it receives at. */
void udp_sock_poll(struct lds_transport *tp, uint64_t now_ns);
void udp_sock_set_polled(struct udp_sock *s, int polled);

/* udp_demux.c (tp->ev's packet and settle) */
struct lds_tp_conn *udp_demux_packet(struct udp_sock *s, const uint8_t *buf, size_t len,
				     const struct sockaddr_storage *from, socklen_t fl, uint64_t now_ns);
/* Flushes and makes the upcalls of the conns a batch touched. */
void udp_demux_settle(struct lds_tp_conn **touched, size_t n, uint64_t now_ns);

/* udp_token.c */
void udp_token_make(const uint8_t *secret, const struct sockaddr_storage *ss, uint64_t cid, uint64_t epoch,
		    uint8_t *token);
int udp_token_check(const uint8_t *secret, const struct sockaddr_storage *ss, uint64_t cid, uint64_t now_s,
		    const uint8_t *token);
#define UDP_TOKEN_EPOCH_S 30

/* udp_conn.c */
struct lds_tp_conn *udp_conn_new(struct lds_transport *tp, struct udp_sock *s, const struct udp_conf *uc,
				 size_t unsent_max);
void udp_conn_free(struct lds_tp_conn *c);
/* A packet for c: payload is a CLOSE's code; f the frames of a DATA or
 * ACCEPT packet (udp_pkt_open). */
void udp_conn_input(struct lds_tp_conn *c, const struct udp_hdr *h, struct udp_rd *payload,
		    const struct udp_frames *f, uint64_t now_ns);
void udp_conn_flush(struct lds_tp_conn *c, uint64_t now_ns);
/* A flush outside the tick (the core queued or took something, packets
 * came).  Where the timer runs every UDP_TICK_LONG_MS or more, only what is owed
 * now (an ACK, a window update, a probe) or a tick's worth of what the
 * pacer allows goes at once; less waits for the tick, the pacer's bucket
 * keeping it: each send of the few packets the pacer allowed since the
 * last was a system call of its own (at 200 Mb/s a third of the
 * sender's). */
void udp_conn_nudge(struct lds_tp_conn *c, uint64_t now_ns);
void udp_conn_tick(struct lds_tp_conn *c, uint64_t now_ns);
/* Makes the upcalls c owes (sent, readable, writable, connected);
 * returns 1 if it made one. */
int udp_conn_upcalls(struct lds_tp_conn *c);
void udp_conn_fail(struct lds_tp_conn *c, int err);
/* Sends a handshake packet of type t to c's peer now. */
void udp_conn_send_hs(struct lds_tp_conn *c, uint8_t t, uint64_t now_ns);
/* Ends c inside the transport: closed conns linger, then go; the caller
 * frees it when this returns 1. */
int udp_conn_finished(const struct lds_tp_conn *c, uint64_t now_ns);
/* The core closed c: from now on the transport's own. */
void udp_conn_close(struct lds_tp_conn *c, uint64_t now_ns);

#endif
