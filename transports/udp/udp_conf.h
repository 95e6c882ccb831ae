/*
 * udp_conf.h - the UDP transport's peer settings (udp_mtu, udp_mtu_max, udp_window,
 * udp_rate_max, udp_buffer, udp_idle_timeout); private to
 * transports/udp/ (the core sees only the option table).
 */
#ifndef LDS_UDP_CONF_H
#define LDS_UDP_CONF_H

#include <stddef.h>
#include <stdio.h>

#include "transports/transport.h"

#define UDP_MSG_MAX ((4u << 20) + 64)       /* caps.max_msg: 4 MiB and a header */
#define UDP_MTU_DEFAULT 1232                /* IPv6's minimum link MTU less IP and UDP headers */
#define UDP_MTU_MAX_DEFAULT 1472            /* Ethernet's 1500 less IPv4 and UDP headers */
#define UDP_WINDOW_DEFAULT (64u << 20)
#define UDP_WINDOW_MIN (UDP_MSG_MAX + 4 + 65536)   /* a whole message must fit */
#define UDP_BUFFER_DEFAULT (4u << 20)
#define UDP_IDLE_DEFAULT 30.0

struct udp_conf {
	unsigned mtu;             /* UDP payload bytes per packet: the safe size, where the search starts */
	unsigned mtu_max;         /* the largest the path MTU search tries; <= mtu: no search */
	size_t window;            /* receive window: stream bytes the peer may send ahead */
	size_t rate_max;          /* bytes/s, 0: no cap */
	size_t buffer;            /* SO_SNDBUF and SO_RCVBUF */
	double idle_timeout;      /* seconds without a packet from the peer: the conn fails */
};

extern const struct lds_tp_option udp_options[];
void udp_conf_defaults(void *conf);
int udp_conf_check(const void *conf, struct lds_tp_conf_error *e);
void udp_conf_status(const void *conf, FILE *out);
const char *udp_conf_describe(const void *conf, char *buf, size_t len);
/* conf, or the defaults where conf is NULL. */
void udp_conf_get(struct udp_conf *dst, const void *conf);

#endif
