/*
 * tp_shim.h - a lossy, slow path for the unit tests of a transport over
 * UDP (check_udp_e2e.c): a proxy on loopback in front of a server's port,
 * in the run's event loop, that drops, duplicates, reorders (holds one
 * datagram until the next has gone, or the next millisecond) and delays
 * datagrams both ways, drawn per mille from a fixed seed.  A full delay
 * queue drops.  Datagrams up to UDP_PKT_MAX bytes.
 */
#ifndef LDS_TEST_TP_SHIM_H
#define LDS_TEST_TP_SHIM_H

#include <netinet/in.h>
#include <stddef.h>
#include <stdint.h>

#include "ldsd/evloop.h"
#include "transports/udp/udp_packet.h"

#define TP_SHIM_QUEUE 8192           /* datagrams on their way on a long path */

struct tp_shim {
	unsigned loss, dup, reorder;     /* per mille; set after tp_shim_open */
	uint64_t delay_ns;               /* one way, both ways: a long path */
	size_t mtu;                      /* datagrams larger are dropped (too_big); 0: any size */
	unsigned dropped, duplicated, reordered, passed, too_big;   /* what it did */
	/* Private. */
	int front, back;                 /* the client's side, the server's side */
	struct sockaddr_in client;
	int have_client;
	unsigned seed;
	uint8_t held[UDP_PKT_MAX];
	size_t held_len;
	int held_dir;                    /* 0 none, 1 to server, 2 to client */
	struct tp_shim_dgram { uint64_t at; int dir; size_t len; uint8_t b[UDP_PKT_MAX]; } *q;
	size_t qh, qn;                   /* a FIFO of TP_SHIM_QUEUE datagrams */
};

/* Opens s in front of 127.0.0.1:server_port, passing everything until its
 * fields say otherwise; returns the port to connect to.  Asserts. */
uint16_t tp_shim_open(struct tp_shim *s, struct evloop *ev, uint16_t server_port, unsigned seed);
void tp_shim_close(struct tp_shim *s, struct evloop *ev);
/* Binds fd, a UDP socket, to a free loopback port; returns the port. */
uint16_t tp_shim_bind_loopback(int fd);

#endif
