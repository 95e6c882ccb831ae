/*
 * ldsbench.h - the WAN throughput benchmark of LDS (thesis A.3): a sender
 * and a receiver of checksummed messages, through the local ldsd or, with
 * --direct, through a link run in-process.  docs/ldsbench.md, ldsbench(1).
 *
 * Modules:
 *   main.c      command line, send/recv/sweep, exit codes
 *   msg.c       the messages: build and check (CRC-32C, sequence numbers)
 *   io_ldsd.c   messages through liblds and the local ldsd, link status
 *               and stream count through its control socket
 *   io_direct.c messages through a link of ldsd's own code, in-process
 *   sender.c    one timed run: intervals, drain, the receiver's verdict
 *   receiver.c  checks every message of every run, answers with a verdict
 *   report.c    text and JSON-lines output, the sweep table
 *   linkstat.c  a link's counters and failure log from ldsd's status JSON
 *               (read with ldsd/jsonr.h)
 *   plot.c      throughput over time with gnuplot
 * Everything runs on one thread, in ldsd's event loop (ldsd/evloop.h).
 */
#ifndef LDSBENCH_H
#define LDSBENCH_H

#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ldsd/evloop.h"

#define BENCH_EXIT_OK 0
#define BENCH_EXIT_FAIL 1
#define BENCH_EXIT_USAGE 2

#define BENCH_MAX_RUNS 32
#define BENCH_MAX_INTERVALS 100000
#define BENCH_MAX_FAILURES 64
#define BENCH_ERR_MAX 512

/* SIGINT and SIGTERM seen (main.c): the first ends a run early with what
 * it measured, the second gives up waiting. */
extern volatile sig_atomic_t bench_interrupts;

/* ---- msg.c: the messages ------------------------------------------------ */

enum msg_kind { MSG_START = 1, MSG_DATA, MSG_END, MSG_REPORT };

/* Every message starts with this header (little-endian on the wire). */
#define MSG_HDR 40

struct msg_hdr {
	enum msg_kind kind;
	uint32_t run;          /* run number, from 1, per sender */
	uint64_t seq;          /* DATA: 1, 2, ...; END: the number sent */
	uint64_t a, b;         /* START: message size; END: bytes sent, and 1 if
				  the last run of a command; REPORT: messages
				  and bytes received intact */
	uint32_t errors;       /* REPORT: messages missing, out of order or corrupt */
};

/* The body of DATA messages: one random pattern (so that blocks swapped
 * inside a message change it) stamped with the sequence number every
 * 4 KiB (so that a message from another place in the run does not pass).
 * Made once; msg_build costs one stamp per 4 KiB and one CRC-32C pass. */
struct msg_pattern {
	uint8_t *bytes;
	size_t size;           /* whole message, header included */
};

int msg_pattern_init(struct msg_pattern *p, size_t size);
void msg_pattern_free(struct msg_pattern *p);
/* Writes DATA message seq of run into buf (p->size bytes). */
void msg_build_data(const struct msg_pattern *p, uint32_t run, uint64_t seq, uint8_t *buf);
/* Writes a control message (START, END, REPORT: MSG_HDR bytes). */
void msg_build(const struct msg_hdr *h, uint8_t *buf);
/* Parses buf's header; -1 with why filled if it is not one of ours. */
int msg_parse(const uint8_t *buf, size_t len, struct msg_hdr *h, char *why, size_t whylen);
/* Checks a DATA message's length, stamps and CRC; -1 with why filled. */
int msg_check_data(const uint8_t *buf, size_t len, const struct msg_hdr *h, char *why, size_t whylen);

/* ---- io: how messages travel -------------------------------------------- */

/* A link's state as the benchmark reports it (from ldsd's status JSON). */
struct bench_failure {
	int stream;
	double down_at, up_at, resent_at;  /* wall clock; 0 = not yet */
	uint64_t blocks;
	char reason[64];
};

struct linkstat {
	int valid;                         /* 0: no status could be had */
	unsigned streams, streams_up;
	int streams_auto;
	char congestion[16];
	uint64_t blocks_resent, reconnects;
	double rtt_ms;                     /* TCP's smoothed RTT, mean over the streams */
	unsigned nfail;                    /* failures in the log (the last BENCH_MAX_FAILURES) */
	struct bench_failure fail[BENCH_MAX_FAILURES];
	char last_error[64];               /* why the last connection attempt failed */
};

struct bench_io;

/* What an io reports to the code that uses it. */
struct bench_io_events {
	void *arg;
	/* A message arrived (src: the sender's endpoint, for the answer). */
	void (*message)(void *arg, const char *src, const uint8_t *buf, size_t len);
	/* Sending may go on after -EAGAIN. */
	void (*room)(void *arg);
	/* Something went wrong that ends the run (a message reported lost or
	 * refused, the daemon gone). */
	void (*fatal)(void *arg, const char *text);
};

struct bench_io_ops {
	const char *name;                  /* "ldsd" or "direct" */
	/* Queues one message for dst (ignored by direct: one peer).  0 with
	 * *id its number (1, 2, ... in sending order), -EAGAIN (no room now;
	 * events.room follows), or -errno with err filled. */
	int (*send)(struct bench_io *io, const char *dst, const void *buf, size_t len, uint64_t *id, char *err,
		    size_t errlen);
	/* Highest n such that messages 1..n reached the receiving process. */
	uint64_t (*delivered)(struct bench_io *io);
	/* The link to cluster peer; st->valid = 0 if it cannot be had. */
	void (*stats)(struct bench_io *io, const char *peer, struct linkstat *st);
	/* Sets the link's stream count (0 = "auto"); 0 or -1 with err. */
	int (*set_streams)(struct bench_io *io, const char *peer, unsigned n, char *err, size_t errlen);
	/* This side's endpoint name ("cluster/name"). */
	const char *(*endpoint)(struct bench_io *io);
	void (*close)(struct bench_io *io);
};

struct bench_io {
	const struct bench_io_ops *ops;
	struct evloop *ev;
	struct bench_io_events events;
};

/* Options of both io kinds. */
struct io_opts {
	const char *socket;        /* ldsd: client socket (NULL: liblds's default) */
	const char *ctl;           /* ldsd: control socket (NULL: derived from socket) */
	const char *name;          /* ldsd: endpoint name (NULL: the daemon picks) */
	const char *direct;        /* direct: "HOST:PORT" to connect to, or "[ADDR:]PORT" to listen on */
	int listen;                /* direct: receive side */
	unsigned streams;          /* direct: initial streams (0 = auto) */
	const char *congestion;    /* direct: NULL = the configuration default */
	const char *key_file;      /* direct: NULL = a built-in, public key */
	size_t memory;             /* direct: send and receive memory, 0 = default */
	size_t window;             /* direct: the streams' socket buffers (tcp_buffer), 0 = autotuning */
	const char *encryption;    /* direct: "aead" or "none", as in ldsd.conf; NULL = "aead" */
};

/* Open an io, or return NULL with err filled. */
struct bench_io *io_ldsd_open(struct evloop *ev, const struct io_opts *o, const struct bench_io_events *e,
			      char *err, size_t errlen);
struct bench_io *io_direct_open(struct evloop *ev, const struct io_opts *o, const struct bench_io_events *e,
				char *err, size_t errlen);
/* The fixed cluster names of direct mode. */
#define DIRECT_SEND_CLUSTER "ldsbench-send"
#define DIRECT_RECV_CLUSTER "ldsbench-recv"
#define DIRECT_ENDPOINT "bench"

/* ---- linkstat.c ----------------------------------------------------------- */

/* Fills st from status (ldsctl's JSON: an object with "links") for the
 * link to peer.  Returns 0, or -1 with err filled. */
int linkstat_parse(const char *status, const char *peer, struct linkstat *st, char *err, size_t errlen);

/* ---- report.c ------------------------------------------------------------- */

struct interval {
	double start, end;         /* seconds since the run's start */
	double wall;               /* wall clock at the end */
	uint64_t bytes, cum_bytes; /* delivered in the interval, since the start */
	uint64_t resent, reconnects;   /* during the interval */
	double rtt_ms;
	unsigned streams, streams_up;
	int omitted;
};

struct run_result {
	unsigned run;              /* 1, 2, ... */
	unsigned streams;          /* asked for (0 = auto) */
	char congestion[16];
	double seconds, omit;
	double start_wall;
	uint64_t msgs_sent, bytes_sent, bytes_measured;
	double bps;                /* delivered bits per second after the omitted start */
	uint64_t blocks_resent, reconnects;
	unsigned nfail;
	struct bench_failure fail[BENCH_MAX_FAILURES];
	struct interval *iv;
	size_t niv;
	int have_report;           /* the receiver answered */
	uint64_t recv_msgs, recv_bytes;
	uint32_t recv_errors;
	char error[BENCH_ERR_MAX]; /* "" if the run succeeded */
};

struct report {
	FILE *out;
	int json;
	int quiet;                 /* no interval lines (text) */
};

/* streams: 0 = auto, -1 = unknown (no status of the link). */
void report_start(const struct report *r, const char *mode, const char *from, const char *to, unsigned run,
		  int streams, const char *congestion, size_t size, double seconds, double interval, double omit);
void report_interval(const struct report *r, unsigned run, const struct interval *iv);
void report_end(const struct report *r, const struct run_result *res);
void report_sweep(const struct report *r, const struct run_result *res, size_t n);
void report_error(const struct report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The receiver's side. */
void report_recv_interval(const struct report *r, double start, double end, uint64_t bytes, uint64_t msgs);
void report_recv_run(const struct report *r, const char *from, unsigned run, uint64_t msgs, uint64_t bytes,
		     double seconds, uint32_t errors, const char *first_error);

/* ---- sender.c --------------------------------------------------------------- */

struct send_opts {
	const char *to;            /* "cluster/name" */
	size_t size;               /* bytes per message */
	double seconds, interval, omit;
	double wait;               /* bound on reaching the receiver, and on draining */
	unsigned streams;          /* 0 = auto */
	int set_streams;           /* change the link's stream count for the run */
	int last;                  /* the last run of this command (recv --once exits after it) */
};

/* One run.  Fills res (res->error on failure); returns 0 or -1. */
int sender_run(struct bench_io *io, const struct send_opts *o, const struct report *r, unsigned run,
	       struct run_result *res);

/* ---- receiver.c --------------------------------------------------------------- */

/* Serves runs until interrupted, or until one run ended if once.
 * Returns the exit status. */
int receiver_serve(struct bench_io *io, const struct report *r, double interval, int once);

/* ---- plot.c ------------------------------------------------------------------ */

/* Writes throughput over time of every run into png (data beside it as
 * png with .dat).  Returns 0, or -1 with err filled. */
int plot_runs(const char *png, const struct run_result *res, size_t n, const char *title, char *err,
	      size_t errlen);
/* 0 if gnuplot can be run, else -1 with err filled (checked before a run). */
int plot_check(char *err, size_t errlen);

#endif
