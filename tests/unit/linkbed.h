/*
 * linkbed.h - the test bed of the link's tests (check_link.c,
 * check_link_session.c): two whole daemons in this process, clusterA
 * connecting and clusterB listening, one event loop driving both, over
 * every registered transport that can carry a link (tcp on loopback, and
 * the tests' tp_mem.c: its byte stream "mem" and its message twin
 * "memmsg"), sealed and in clear.
 *
 * Messages of random sizes (one byte to over three blocks) carry a byte
 * pattern computed from their id, so B checks every byte, the order and
 * that no id comes twice; A counts each message's outcome (delivered or
 * lost) and that none gets two.
 *
 * Time: the links run on the real monotonic clock with short timeouts
 * (reconnects from 10 ms), and every run is bounded by a deadline.
 */
#ifndef LDS_TEST_LINKBED_H
#define LDS_TEST_LINKBED_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>

#include "ldsd/link_int.h"

#define NMSG_MAX 1024               /* message ids 1..NMSG_MAX */
#define STREAMS 4
#define BLOCK 4096
#define MEMORY (512u << 10)         /* send_memory and recv_memory */
#define TICK_MS 5
#define DEADLINE_NS (8 * 1000000000ull)
#define CLIENT 7
#define KEY "check_link: a key for the tests, no secret"

/* One daemon and what its sink saw. */
struct side {
	struct config cfg;
	struct daemon d;
	struct link *l;                 /* d.links[0] */
	int running;
	int hold;                       /* B: keep what arrives, undelivered */
	struct rb_msg *held;
	size_t held_bytes, held_max;
	uint64_t expect;                /* B: the id due next; 0: any (a new session) */
	uint64_t arrived;               /* B: messages, this incarnation */
};

/* The test now running: both sides, A's sender, what B saw. */
struct run {
	const struct lds_transport_ops *ops;
	struct evloop *ev;
	struct side a, b;
	FILE *log;
	int stderr_fd;                  /* the real stderr, while the log goes to log */
	uint64_t start_ns, deadline_ns;
	int timed_out;
	int (*step)(void);              /* each tick; 1: the test is done */
	void (*in_round)(void);         /* NULL, or each loop round after the links' writes */
	unsigned phase, ticks;          /* the step's, as it likes */
	uint64_t mark;                  /* backpressure_step: arrivals at the last look */
	uint64_t held_id;               /* tp_mem_id of the conn tp_mem_hold holds */
	/* A's sender. */
	uint64_t next_id, send_to;      /* sent ids 1..next_id; sends on to send_to */
	uint64_t enospc;                /* link_send said the link is full */
	uint64_t deferred, defer_live;  /* payload regions left at their source (sendbuf_defer), still there */
	uint8_t settled[NMSG_MAX + 1];  /* 1: acknowledged delivered, 2: lost */
	uint64_t acked, lost, settled_twice;
	/* B's receiver, over every incarnation of B. */
	uint8_t seen[NMSG_MAX + 1];
	uint64_t dups, misordered, corrupt, bad_id;
	size_t ooo_max;                 /* most out-of-order bytes B held */
};
extern struct run run;

/* The kinds that can carry a link (config_transport_usable), by index:
 * tp_mem's first (nmem of them), whose faults some tests need. */
extern const struct lds_transport_ops *kinds[8];
extern int nkinds, nmem;

/* Registers tp_mem's kinds and fills kinds[] with those that can carry a
 * link here (a kind whose hardware is absent is left out, saying so). */
void linkbed_find_kinds(void);

/* The byte pattern of message id. */
uint32_t msg_len(uint64_t id);
uint8_t msg_byte(uint64_t id, size_t k);
int msg_intact(const struct rb_msg *m);
/* Sends until the link is full or send_to is reached. */
void pump(void);
/* B consumes what it held, in the order it came. */
void side_release(struct side *s);
int side_start(struct side *s);
void side_stop(struct side *s);
/* Both daemons configured for kind i (not started): tests change what
 * they need, then call go(). */
void setup(int i);
/* Starts B on a free port, then A. */
void go(void);
/* Runs the loop until step (each tick) says 1, within DEADLINE_NS. */
void run_until(int (*step)(void));
void finish(void);
/* Lines of the daemons' log holding what. */
int log_count(const char *what);
/* Ids first..last each arrived once, whole, in order, and their sender
 * was told `how` (1: delivered, 2: lost) once; nothing else arrived. */
void assert_once(uint64_t first, uint64_t last, uint8_t how);
int all_acked(void);
/* Kind i / 2, sealed (i even) or in clear (odd). */
void setup_sealed_or_clear(int i);
/* Over kind i / 2, sealed or in clear (setup_sealed_or_clear), sends n
 * messages (the steps may add more) until step says done; each arrived
 * once, in order, and was acknowledged once. */
void send_all(int i, uint64_t n, int (*step)(void), void (*in_round)(void));

#endif
