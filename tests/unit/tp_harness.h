/*
 * tp_harness.h - one transport-level run for the unit tests: a client conn
 * sends, a server conn receives, over one transport kind on loopback, in
 * the daemon's own event loop (check_conformance.c runs it over every
 * kind, check_udp_e2e.c over UDP through a lossy path, tp_shim.h).
 *
 * Byte-stream kinds send TOTAL bytes in chunks of random sizes, read back
 * in reads of random sizes; message kinds send nmsg messages whose length
 * and bytes both sides compute from the message's number (message 3 is
 * max_len long: one of the largest), at most window held by the transport
 * at once, each in its own buffer, overwritten and freed at its sent
 * upcall (a transport reading it later sends garbage, or ASan says so).
 * The receiver checks every message's length and bytes; both sides keep a
 * CRC-32C of everything.  Once everything is sent (message kinds: reported
 * sent) the client queries its conn and closes it; the server's recv then
 * says -EPIPE and it closes too.  Every upcall counts itself running, so
 * that a closed upcall inside one (the contract forbids it) is counted.
 *
 * One run at a time (the state is the global tp_run); Check runs each test
 * in a process of its own.
 */
#ifndef LDS_TEST_TP_HARNESS_H
#define LDS_TEST_TP_HARNESS_H

#include <stddef.h>
#include <stdint.h>

#include "ldsd/evloop.h"
#include "transports/transport.h"

#define TP_RUN_TOTAL (3u << 20)     /* byte-stream kinds: bytes sent */
#define TP_RUN_CHUNK_MAX 65536      /* byte-stream kinds: the largest write */
#define TP_RUN_WINDOW_MAX 64

/* What the test asks for; zero fields take the defaults given. */
struct tp_run_params {
	const struct lds_transport_ops *ops;   /* required */
	int nmsg;                     /* message kinds: messages to send */
	size_t max_len;               /* message kinds: the longest, <= caps.max_msg */
	int window;                   /* message kinds: held at once, <= TP_RUN_WINDOW_MAX; default 8 */
	unsigned seed;                /* draws of sizes and bytes; default: the process id */
	unsigned deadline_ms;         /* the run stops, timed_out set, after this; default 10000 */
	/* Optional: called with the server's conn when it is accepted. */
	void (*accepted)(struct lds_tp_conn *c);
};

struct tp_run {
	struct tp_run_params p;
	int msg;                      /* a message kind */
	struct lds_transport *tp;
	struct evloop *ev;
	struct lds_tp_listener *l;
	uint16_t port;                /* the listener's */
	struct lds_tp_conn *client, *server;
	int close_in_readable;        /* the server closes in its first readable upcall */
	/* What happened. */
	int connected, connect_err, accepted;
	int send_err;                 /* what broke the client's sending, 0: nothing */
	int eof, recv_err;            /* the server's recv said -EPIPE; or what else ended it */
	int closed_client, closed_server, in_upcall, closed_inside;
	int timed_out;
	size_t sent, got;             /* bytes */
	int next_send, next_sent, next_recv;   /* message kinds: messages sent, reported sent, received */
	uint32_t crc_sent, crc_got;
	int info_err;                 /* query's return... */
	struct lds_tp_info info;      /* ...and the client's conn once everything was sent */
	/* Private: the writer's state. */
	unsigned draw;
	unsigned char chunk[TP_RUN_CHUNK_MAX];
	size_t chunk_len, chunk_off;
	uint8_t *held[TP_RUN_WINDOW_MAX];
};

extern struct tp_run tp_run;

/* Sets up a run as p says: the kind's instance, a listener on a free
 * loopback port (tp_run.port), the deadline.  Asserts each step. */
void tp_run_start(const struct tp_run_params *p);
/* Connects the client to 127.0.0.1:port (the listener's, or a shim's in
 * front of it). */
void tp_run_connect(uint16_t port);
/* Runs the loop until both conns are closed, the connect fails, or the
 * deadline passes. */
void tp_run_loop(void);
/* Asserts: not timed out, connected, one closed upcall for each conn,
 * none inside another upcall. */
void tp_run_check_closed(void);
/* Asserts tp_run_check_closed() and that everything arrived: connected,
 * accepted, all bytes or messages sent, reported sent and received with
 * the same CRC, the server's stream ended by -EPIPE, no send error. */
void tp_run_check_delivery(void);
/* Connects to the listener, whose conn closes itself in its first
 * readable upcall, and runs: asserts tp_run_check_closed() and that
 * nothing was read. */
void tp_run_close_in_upcall(void);
/* Closes the listener and the instance, frees the loop. */
void tp_run_finish(void);
/* Message i's length. */
size_t tp_run_msg_len(int i);

#endif
