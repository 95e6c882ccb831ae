/*
 * wanemu.h - a WAN link emulator between network namespaces.
 *
 * One process owns one TUN device per site (each in the site's network
 * namespace) and forwards IPv4 packets between them in user space, through
 * an emulated link per ordered pair of sites ("direction").  Everything runs
 * on one thread; the only clock is CLOCK_MONOTONIC in nanoseconds.
 *
 * A packet's life in a direction (path.c):
 *   arrival -> outage? -> MTU -> bottleneck queue (rate, tail drop)
 *   -> random / Gilbert-Elliott loss -> delay + jitter (FIFO unless
 *   reordered) -> duplication -> due time -> outage at exit? -> written.
 * With loss_at=enqueue the loss comes before the queue instead (netem's
 * order): a lost packet then never used the bottleneck.
 */
#ifndef WANEMU_H
#define WANEMU_H

#include <stddef.h>
#include <stdint.h>
#include <stdio.h>
#include <netinet/in.h>

#include "ldsd/evloop.h"

#define WE_MAX_SITES 16
#define WE_MAX_OUTAGES 32
#define WE_NAME_MAX 16
#define WE_CTL_DEFAULT "/run/wanemu.sock"
/* vnet header (struct virtio_net_hdr) in front of every TUN read/write. */
#define WE_VNET_LEN 10
/* The largest TUN read: a 64 KiB GSO super-packet plus the vnet header. */
#define WE_PKT_MAX (65536 + WE_VNET_LEN)

/* ---- rng.c: seeded xoshiro256**, one stream per direction ------------- */
struct rng {
	uint64_t s[4];
};
/* Seeds the stream from (seed, stream) through splitmix64, so that each
 * direction's draws do not depend on traffic in the others. */
void rng_seed(struct rng *r, uint64_t seed, uint64_t stream);
uint64_t rng_next(struct rng *r);
/* Uniform in [0, 1). */
double rng_unit(struct rng *r);
/* 1 with probability p. */
int rng_chance(struct rng *r, double p);

/* ---- spec.c: parsing of command line values and link specifications --- */
/* Impairments of one direction; zero means "none". */
struct dirconf {
	uint64_t delay_ns, jitter_ns;
	double loss;                    /* random loss probability */
	/* Gilbert-Elliott: P(good->bad), P(bad->good), loss in bad, in good. */
	double ge_p, ge_r, ge_bad, ge_good;
	int loss_enqueue;               /* both losses before the queue, not after */
	uint64_t rate_bps;              /* 0: unlimited */
	uint64_t queue_bytes;           /* 0: default (see queue_bdp) */
	double queue_bdp;               /* queue as a multiple of the BDP */
	double reorder;                 /* probability a packet is held back */
	uint64_t reorder_ns;            /* by how long */
	double dup;                     /* duplication probability */
	unsigned mtu;                   /* 0: no limit beyond the TUN MTU */
	struct { uint64_t start_ns, len_ns; } outage[WE_MAX_OUTAGES];
	int noutage;
};
void dirconf_init(struct dirconf *c);
/* Parses "2.5ms", "1s", "300us", "10" (ms) into *ns.  0 or -1. */
int spec_duration(const char *s, uint64_t *ns);
/* "100mbit", "1gbit", "500kbit", "12345" (bit/s). */
int spec_rate(const char *s, uint64_t *bps);
/* "64k", "1m", "1500" bytes (k = 1024). */
int spec_size(const char *s, uint64_t *bytes);
/* "0.1%" or "0.001" into [0, 1]. */
int spec_prob(const char *s, double *p);
/* "DUR@START" into an outage of c. */
int spec_outage(const char *s, struct dirconf *c);
/* Applies "key=value,key=value" to c.  On error returns -1 and writes a
 * message that quotes the offending token into err. */
int spec_apply(struct dirconf *c, const char *params, char *err, size_t errlen);
/* Writes c's non-default settings as "key=value,..." (for logs/stats). */
void spec_print(FILE *out, const struct dirconf *c);

/* ---- tun.c: TUN devices inside network namespaces --------------------- */
/* Creates TUN device ifname inside netns (a name under /run/netns or a
 * path), with vnet headers, TCP segmentation offload and, if uso and the
 * kernel has it, UDP segmentation offload; gives it addr/plen and mtu, sets
 * it and the namespace's loopback up.  Returns the fd or -errno (a message
 * is logged). */
int tun_open_in(const char *netns, const char *ifname, struct in_addr addr, int plen, unsigned mtu, int uso);

/* ---- gso.c: software segmentation of TCP and UDP super-packets -------- */
/* Is pkt (vnet header + IP packet) a TCP or UDP super-packet?  Sets *segs to the
 * number of wire packets it stands for and *wire to the IP length of the
 * largest of them (1 and the packet's IP length if it is not one). */
int gso_is_super(const unsigned char *pkt, size_t len, unsigned *segs, size_t *wire);
/* Splits super-packet pkt into wire packets (each with a zeroed vnet header
 * and full checksums) and calls emit for each.  Returns 0, or -EINVAL for a
 * packet it cannot parse (the caller then forwards it whole). */
typedef void gso_emit_fn(const unsigned char *pkt, size_t len, void *arg);
int gso_segment(const unsigned char *pkt, size_t len, gso_emit_fn *emit, void *arg);

/* ---- path.c: one direction of an emulated link ------------------------ */
struct pkt {
	struct pkt *next;
	uint64_t due_ns;                /* when it is written to the far TUN */
	uint64_t exit_ns;               /* when it left the bottleneck queue */
	uint32_t len;                   /* bytes in data (vnet header + IP) */
	uint32_t segs;                  /* wire packets it stands for */
	unsigned char data[];
};

struct dir_stats {
	uint64_t fwd_pkts, fwd_bytes;
	uint64_t drop_loss, drop_queue, drop_outage, drop_mtu, drop_write;
	uint64_t dup, reordered;
	uint64_t queue_peak;            /* bytes */
};

struct dir {
	char name[2 * WE_NAME_MAX + 2]; /* "a>b" */
	int from, to;                   /* site indexes */
	struct dirconf conf;
	struct dir_stats st;
	struct rng rng;
	int ge_bad;                     /* Gilbert-Elliott state */
	uint64_t busy_until;            /* the bottleneck is sending until */
	uint64_t last_due;              /* due time of the last FIFO packet */
	uint64_t rtt_ns;                /* delay both ways, for BDP queues */
	uint64_t t0;                    /* scheduled outages count from */
	int down;                       /* ctl down, since down_since */
	uint64_t down_since;
	uint64_t ctl_down[WE_MAX_OUTAGES][2]; /* past ctl outages, ring */
	unsigned nctl_down;
	struct pkt *head, *tail;        /* in flight, due times ascending */
	struct pkt *held;               /* reordered, due times ascending */
	uint64_t in_flight_bytes;
};

/* Seeds and resets d for its conf; t0 is the time outages count from. */
void path_init(struct dir *d, uint64_t seed, uint64_t t0);
/* Takes a packet that arrived at now into the direction (or drops it and
 * counts why).  Super-packets are segmented when per-packet impairments
 * are on.  Returns 0 or -ENOMEM. */
int path_input(struct dir *d, const unsigned char *pkt, size_t len, uint64_t now);
/* The earliest due time of a packet in flight, or UINT64_MAX. */
uint64_t path_next_due(const struct dir *d);
/* Removes and returns the next packet due at or before now (NULL if none);
 * the caller writes it, frees it, and reports with path_delivered().
 * Packets lost to an outage at their exit time are freed and counted
 * here. */
struct pkt *path_pop_due(struct dir *d, uint64_t now);
void path_delivered(struct dir *d, const struct pkt *p, int ok);
/* Outage on command: down 1 starts, 0 ends it. */
void path_set_down(struct dir *d, int down, uint64_t now);
/* Frees every packet in flight. */
void path_flush(struct dir *d);

/* ---- fwd.c: sites, routing, the forwarding loop ----------------------- */
struct site {
	char name[WE_NAME_MAX];
	char netns[256];
	char ifname[16];
	struct in_addr addr;
	int plen;
	unsigned mtu;
	int fd;
	uint64_t rx_pkts, no_route;
};

struct wanemu {
	struct site site[WE_MAX_SITES];
	int nsites;
	struct dir *dirs;               /* nsites * nsites, [from][to] */
	int *linked;                    /* same shape: a link exists */
	uint64_t seed;
	uint64_t t0;                    /* start, for scheduled outages */
	const char *ctl_path;
	const char *stats_path;         /* JSON on exit, NULL: stdout */
	int no_uso;                     /* --no-uso: no UDP segmentation offload */
	int timerfd;
	uint64_t armed_ns;
	struct evloop *ev;
	unsigned char *buf;             /* one TUN read */
};

static inline struct dir *we_dir(struct wanemu *w, int from, int to)
{
	return &w->dirs[from * WE_MAX_SITES + to];
}

/* Opens every site's TUN, starts the timer and the control socket, runs
 * until SIGINT/SIGTERM.  Returns 0 or -errno. */
int fwd_run(struct wanemu *w);
/* Finds a direction by "a>b" or both of a link by "a-b".  Returns the
 * number found (0, 1 or 2) and stores them in out[]. */
int fwd_find(struct wanemu *w, const char *name, struct dir *out[2]);
/* Re-arms the timer for the earliest due packet of any direction. */
void fwd_rearm(struct wanemu *w);

/* ---- stats.c: counters as JSON ---------------------------------------- */
void stats_json(FILE *out, struct wanemu *w);

/* ---- ctl.c: the control socket and its client ------------------------- */
/* Listens on path (removed first if it is a stale socket).  Returns 0 or
 * -errno. */
int ctl_listen(struct wanemu *w, const char *path);
void ctl_close(struct wanemu *w);
/* `wanemu ctl`: argv after "ctl".  Returns the exit status. */
int ctl_main(int argc, char **argv);

/* ---- probe.c: `wanemu probe`, the independent RTT/loss/gap meter ------ */
int probe_main(int argc, char **argv);

#endif
