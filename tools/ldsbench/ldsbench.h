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
 *   session.c   routes one io's events to this process's sender and
 *               receiver (both at once for --reverse and --bidir)
 *   report.c    text, one JSON document (-J) or JSON lines (--json-stream),
 *               the sweep table
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

/* What a START asks of the receiver beyond a run of DATA: with
 * MSG_F_REVERSE it sends a run back to the START's sender instead of
 * receiving one, with MSG_F_BIDIR it does both at once (iperf3's -R and
 * --bidir).  The run it sends takes the parameters below; MSG_F_LAST: it
 * is the last run of the command (recv --once exits after it). */
#define MSG_F_REVERSE 1u
#define MSG_F_BIDIR 2u
#define MSG_F_LAST 4u
/* --latency: the receiver sends every DATA message it checked back to
 * its sender as it came (a ping-pong: the sender has one out at a time). */
#define MSG_F_ECHO 8u
/* A START: the header (a: message size, b: flags) and four u64, the run's
 * seconds, interval, omit and wait in milliseconds. */
#define MSG_START_LEN (MSG_HDR + 32)

struct msg_start {
	size_t size;
	uint32_t flags;
	double seconds, interval, omit, wait;
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
/* Writes a START of run into buf (MSG_START_LEN bytes). */
void msg_build_start(uint32_t run, const struct msg_start *st, uint8_t *buf);
/* A START's parameters; a START without them (MSG_HDR bytes) asks for
 * nothing but a run of DATA. */
void msg_parse_start(const uint8_t *buf, size_t len, const struct msg_hdr *h, struct msg_start *st);
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
	unsigned port;             /* direct: --port (then direct names only the host), 0 = none */
	int listen;                /* direct: receive side */
	unsigned streams;          /* direct: initial streams (0 = auto) */
	const char *congestion;    /* direct: NULL = the configuration default */
	const char *key_file;      /* direct: NULL = a built-in, public key */
	size_t memory;             /* direct: send and receive memory, 0 = default */
	size_t window;             /* direct: the streams' socket buffers (tcp_buffer), 0 = autotuning */
	const char *encryption;    /* direct: "aead" or "none", as in ldsd.conf; NULL = "aead" */
	const char *transport;     /* direct: a registered transport's name; NULL = "tcp" */
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

/* Which way a run's data went, seen from the process that reports it. */
enum bench_dir { DIR_SEND, DIR_RECEIVE };

struct run_result {
	unsigned run;              /* 1, 2, ... */
	enum bench_dir dir;
	unsigned streams;          /* the link's (asked for, or as it was) */
	int streams_auto;
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
	int have_report;           /* the receiver answered (DIR_RECEIVE: we were it) */
	uint64_t recv_msgs, recv_bytes;
	uint32_t recv_errors;
	/* --latency: round trips timed (after the omitted start) and their
	 * spread, in microseconds. */
	uint64_t rtt_n;
	double rtt_min_us, rtt_p50_us, rtt_p99_us, rtt_max_us;
	char error[BENCH_ERR_MAX]; /* "" if the run succeeded */
};

enum report_format { REPORT_TEXT, REPORT_JSON, REPORT_JSON_STREAM };

/* -J: the events kept until report_finish prints them as one document. */
struct report_doc;

struct report {
	FILE *out;
	enum report_format format;
	int quiet;                 /* no interval lines (text) */
	struct report_doc *doc;    /* REPORT_JSON */
};

/* What a run's start line says. */
struct run_start {
	const char *mode, *from, *to;
	unsigned run;
	enum bench_dir dir;
	int streams;               /* the link's, -1 = unknown (no status of the link) */
	int streams_auto;
	const char *congestion;
	size_t size;
	double seconds, interval, omit;
};

/* Sets r up for format; 0, or -1 if out of memory. */
int report_init(struct report *r, FILE *out, enum report_format format, int quiet);
/* -J: prints the document (the events since report_init); frees r's state. */
void report_finish(struct report *r);
void report_start(const struct report *r, const struct run_start *s);
void report_interval(const struct report *r, unsigned run, const struct interval *iv);
void report_end(const struct report *r, const struct run_result *res);
void report_sweep(const struct report *r, const struct run_result *res, size_t n);
void report_error(const struct report *r, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* The receiver's side. */
void report_recv_ready(const struct report *r, const char *mode, const char *endpoint);
void report_recv_interval(const struct report *r, unsigned run, double start, double end, uint64_t bytes,
			  uint64_t msgs);
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
	int reverse;               /* -R: the receiver sends the run, this side checks it */
	int bidir;                 /* --bidir: both at once */
	int latency;               /* --latency: one message out at a time, echoed back */
};

/* What this process's receiver found in one run (receiver.c, for -R and
 * --bidir: the run the other side sent). */
struct rx_run {
	unsigned run;
	uint64_t msgs, bytes;      /* intact and in order */
	uint64_t sent_msgs, sent_bytes;  /* as the sender's END says */
	uint32_t errors;
	double seconds;
	const char *first_error;
};

struct sender;

/* Starts one run (res->error set and NULL if it cannot); the session
 * passes it the io's events until sender_done. rev: --bidir's run in the
 * other direction (-R: res is that run). */
struct sender *sender_begin(struct bench_io *io, const struct send_opts *o, const struct report *r, unsigned run,
			    struct run_result *res, struct run_result *rev);
void sender_message(struct sender *s, const char *src, const struct msg_hdr *h);
/* --latency: a DATA message came back (h parsed from buf). */
void sender_echo(struct sender *s, const char *src, const uint8_t *buf, size_t len, const struct msg_hdr *h);
/* The run is a --latency run: DATA that arrives is its echoes. */
int sender_latency(const struct sender *s);
void sender_tick(struct sender *s, uint64_t now);
void sender_room(struct sender *s);
void sender_fatal(struct sender *s, const char *text);
/* The receiver of this process checked the other side's run. */
void sender_remote_run(struct sender *s, const struct rx_run *rr);
int sender_done(const struct sender *s);
/* Summarizes and reports the run, frees s; 0, or -1 if the run failed. */
int sender_end(struct sender *s);

/* ---- receiver.c --------------------------------------------------------------- */

struct receiver;

struct receiver_hooks {
	void *arg;
	/* A START asked for a run back (MSG_F_REVERSE or MSG_F_BIDIR). */
	void (*send_back)(void *arg, const char *src, unsigned run, const struct msg_start *st);
	/* A run ended (its END answered). */
	void (*run_ended)(void *arg, const struct rx_run *rr);
};

struct receiver *receiver_new(struct bench_io *io, const struct report *r, double interval, int once,
			      const struct receiver_hooks *hooks);
/* A message of kind START, DATA or END (h parsed), or one that did not
 * parse (h NULL, why says so). */
void receiver_message(struct receiver *rx, const char *src, const uint8_t *buf, size_t len,
		      const struct msg_hdr *h, const char *why);
void receiver_tick(struct receiver *rx, uint64_t now);
void receiver_room(struct receiver *rx);
void receiver_fatal(struct receiver *rx, const char *text);
/* --once satisfied (the last run answered), or a fatal error. */
int receiver_done(const struct receiver *rx);
/* The last run of a --once command was sent back (-R): done as well. */
void receiver_sent_last(struct receiver *rx);
int receiver_failed(const struct receiver *rx);
/* A REPORT waits for room to be sent. */
int receiver_reporting(const struct receiver *rx);
void receiver_free(struct receiver *rx);

/* ---- session.c ------------------------------------------------------------------ */

/* One run of send (with the receiver of -R and --bidir).  Fills res (and
 * rev for --bidir); returns 0 or -1. */
int session_send(struct bench_io *io, const struct send_opts *o, const struct report *r, unsigned run,
		 struct run_result *res, struct run_result *rev);
/* recv: serves runs (and sends those asked back) until interrupted, or
 * until one command ended if once.  Returns the exit status. */
int session_recv(struct bench_io *io, const struct report *r, double interval, int once);

/* ---- plot.c ------------------------------------------------------------------ */

/* Writes throughput over time of every run into png (data beside it as
 * png with .dat), the link's disconnections marked.  Returns 0, or -1
 * with err filled. */
int plot_runs(const char *png, const struct run_result *res, size_t n, const char *title, char *err,
	      size_t errlen);
/* 0 if gnuplot can be run, else -1 with err filled (checked before a run). */
int plot_check(char *err, size_t errlen);

#endif
