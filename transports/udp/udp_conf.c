/*
 * udp_conf.c - the UDP transport's peer settings: table, defaults, checks
 * and their part of a link's status.
 */
#include <limits.h>
#include <stdio.h>
#include <string.h>

#include "udp_conf.h"
#include "udp_packet.h"

const struct lds_tp_option udp_options[] = {
	{ .name = "udp_mtu", .type = LDS_TP_OPT_UINT, .off = offsetof(struct udp_conf, mtu),
	  .size = sizeof(unsigned), .min = UDP_INIT_MIN, .max = UDP_PKT_MAX },
	{ .name = "udp_mtu_max", .type = LDS_TP_OPT_UINT, .off = offsetof(struct udp_conf, mtu_max),
	  .size = sizeof(unsigned), .min = UDP_INIT_MIN, .max = UDP_PKT_MAX },
	{ .name = "udp_window", .type = LDS_TP_OPT_BYTES, .off = offsetof(struct udp_conf, window),
	  .size = sizeof(size_t), .min = UDP_WINDOW_MIN, .max = 1ull << 30 },
	{ .name = "udp_rate_max", .type = LDS_TP_OPT_BYTES, .off = offsetof(struct udp_conf, rate_max),
	  .size = sizeof(size_t), .min = 0, .max = 1ull << 40 },
	{ .name = "udp_buffer", .type = LDS_TP_OPT_BYTES, .off = offsetof(struct udp_conf, buffer),
	  .size = sizeof(size_t), .min = 65536, .max = INT_MAX / 2 },
	{ .name = "udp_idle_timeout", .type = LDS_TP_OPT_SECONDS, .off = offsetof(struct udp_conf, idle_timeout),
	  .size = sizeof(double), .max = 86400 },
	{ .name = NULL },
};

void udp_conf_defaults(void *conf)
{
	struct udp_conf *uc = conf;

	uc->mtu = UDP_MTU_DEFAULT;
	uc->mtu_max = UDP_MTU_MAX_DEFAULT;
	uc->window = UDP_WINDOW_DEFAULT;
	uc->rate_max = 0;
	uc->buffer = UDP_BUFFER_DEFAULT;
	uc->idle_timeout = UDP_IDLE_DEFAULT;
}

void udp_conf_get(struct udp_conf *dst, const void *conf)
{
	if (conf)
		*dst = *(const struct udp_conf *)conf;
	else
		udp_conf_defaults(dst);
}

int udp_conf_check(const void *conf, struct lds_tp_conf_error *e)
{
	const struct udp_conf *uc = conf;

	/* Keepalives go out at a third of it; below a second they would be
	 * most of the traffic of an idle link. */
	if (uc->idle_timeout < 1.0) {
		e->option = "udp_idle_timeout";
		snprintf(e->msg, sizeof(e->msg), "%g s is too short: at least 1 s (keepalives go out at a third of it)",
			 uc->idle_timeout);
		return -1;
	}
	return 0;
}

void udp_conf_status(const void *conf, FILE *out)
{
	const struct udp_conf *uc = conf;

	fprintf(out, ",\"udp_mtu\":%u,\"udp_mtu_max\":%u,\"udp_window\":%zu,\"udp_rate_max\":%zu,\"udp_buffer\":%zu,\"udp_idle_timeout\":%g",
		uc->mtu, uc->mtu_max, uc->window, uc->rate_max, uc->buffer, uc->idle_timeout);
}

const char *udp_conf_describe(const void *conf, char *buf, size_t len)
{
	const struct udp_conf *uc = conf;

	if (uc->mtu_max > uc->mtu)
		snprintf(buf, len, "udp mtu %u..%u", uc->mtu, uc->mtu_max);
	else
		snprintf(buf, len, "udp mtu %u", uc->mtu);
	return buf;
}

_Static_assert(sizeof(struct udp_conf) <= LDS_TP_CONF_MAX, "UDP's settings do not fit");
