/*
 * tcp_conf.h - the TCP transport's peer settings and what this kernel
 * allows of them; private to transports/tcp*.c (the core sees only the
 * option table, transport.h).
 */
#ifndef LDS_TCP_CONF_H
#define LDS_TCP_CONF_H

#include <stddef.h>

#include "transport.h"

#define TCP_CC_MAX 16   /* TCP_CA_NAME_MAX, NUL included */
#define TCP_ZC_MIN_DEFAULT 16384  /* the kernel's advice: zero copy pays from about 10 KB */

struct tcp_conf {
	char congestion[TCP_CC_MAX];  /* "" = the kernel's default for new sockets */
	size_t buffer;                /* SO_SNDBUF and SO_RCVBUF; 0 = autotuning */
	int zerocopy;                 /* MSG_ZEROCOPY sends (tcp_zc.h) */
	size_t zerocopy_min;          /* ...of at least this many bytes */
};

/* The TCP block of a struct config_peer's transport settings. */
#define TCP_CONF(peer) ((const struct tcp_conf *)(const void *)(peer)->tp_conf)

extern const struct lds_tp_option tcp_options[];
void tcp_conf_defaults(void *conf);
int tcp_conf_check(const void *conf, struct lds_tp_conf_error *e);
void tcp_conf_status(const void *conf, FILE *out);
const char *tcp_conf_describe(const void *conf, char *buf, size_t len);

#endif
