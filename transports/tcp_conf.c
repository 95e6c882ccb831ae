/*
 * tcp_conf.c - the TCP transport's peer settings, congestion,
 * tcp_buffer, zerocopy and zerocopy_min: defaults and checks against what this kernel offers and
 * allows this user (/proc/sys/net), and their part of a link's status.
 */
#include <errno.h>
#include <limits.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>

#include "ldsd/config.h"
#include "ldsd/json.h"
#include "tcp_conf.h"

/* What this kernel offers: the algorithms loaded (or built in), and the
 * one new sockets get. */
#define CC_AVAILABLE "/proc/sys/net/ipv4/tcp_available_congestion_control"
#define CC_KERNEL_DEFAULT "/proc/sys/net/ipv4/tcp_congestion_control"
#define CC_PREFERRED "bbr"
/* What a process without CAP_NET_ADMIN may set (TCP_CONGESTION says EPERM
 * otherwise). */
#define CC_ALLOWED "/proc/sys/net/ipv4/tcp_allowed_congestion_control"
#define CAP_NET_ADMIN_BIT 12
#define WMEM_MAX "/proc/sys/net/core/wmem_max"
#define RMEM_MAX "/proc/sys/net/core/rmem_max"
#ifndef SO_ZEROCOPY
#define SO_ZEROCOPY 60
#endif

const struct lds_tp_option tcp_options[] = {
	{ .name = "congestion", .type = LDS_TP_OPT_STRING, .off = offsetof(struct tcp_conf, congestion),
	  .size = TCP_CC_MAX },
	/* An int for setsockopt; this kernel's cap is checked by tcp_conf_check. */
	{ .name = "tcp_buffer", .type = LDS_TP_OPT_BYTES, .off = offsetof(struct tcp_conf, buffer),
	  .size = sizeof(size_t), .min = 0, .max = INT_MAX / 2 },
	{ .name = "zerocopy", .type = LDS_TP_OPT_BOOL, .off = offsetof(struct tcp_conf, zerocopy), .size = sizeof(int) },
	{ .name = "zerocopy_min", .type = LDS_TP_OPT_BYTES, .off = offsetof(struct tcp_conf, zerocopy_min),
	  .size = sizeof(size_t), .min = 1, .max = 1u << 30 },
	{ .name = NULL },
};

/* The first line of a /proc file, without its newline; "" if unreadable. */
static void read_line(const char *path, char *buf, size_t len)
{
	FILE *f = fopen(path, "re");

	buf[0] = '\0';
	if (f == NULL)
		return;
	if (fgets(buf, (int)len, f) == NULL)
		buf[0] = '\0';
	buf[strcspn(buf, "\n")] = '\0';
	fclose(f);
}

/* name is a word of the space-separated list. */
static bool word_listed(const char *list, const char *name)
{
	size_t n = strlen(name);

	for (const char *p = list; (p = strstr(p, name)) != NULL; p += n)
		if ((p == list || p[-1] == ' ') && (p[n] == '\0' || p[n] == ' '))
			return true;
	return false;
}

/* This process may set any congestion control the kernel has: it holds
 * CAP_NET_ADMIN (root does, unless a sandbox took it away). */
static bool cc_privileged(void)
{
	FILE *f = fopen("/proc/self/status", "re");
	char line[256];
	unsigned long long eff = 0;

	if (f == NULL)
		return geteuid() == 0;
	while (fgets(line, sizeof(line), f))
		if (sscanf(line, "CapEff: %llx", &eff) == 1)
			break;
	fclose(f);
	return (eff >> CAP_NET_ADMIN_BIT) & 1;
}

/* name may be set by this process: "" where /proc does not say. */
static bool cc_allowed(const char *name, char *allowed, size_t len)
{
	if (cc_privileged()) {
		allowed[0] = '\0';
		return true;
	}
	read_line(CC_ALLOWED, allowed, len);
	return allowed[0] == '\0' || word_listed(allowed, name);
}

/* Where /proc does not say what is available, the socket option will. */
static bool cc_available(const char *name, char *avail, size_t len)
{
	read_line(CC_AVAILABLE, avail, len);
	return avail[0] == '\0' || word_listed(avail, name);
}

/* The largest socket buffer an unprivileged setsockopt gets: the smaller
 * of net.core.wmem_max and rmem_max; 0 if /proc does not say. */
static size_t sockbuf_max(void)
{
	char w[32], r[32];
	unsigned long long wv, rv;

	read_line(WMEM_MAX, w, sizeof(w));
	read_line(RMEM_MAX, r, sizeof(r));
	if (config_parse_size(w, &wv) < 0 || config_parse_size(r, &rv) < 0)
		return 0;
	return (size_t)(wv < rv ? wv : rv);
}

/* bbr (steady on long lossy paths, where cubic backs off at every loss)
 * when the kernel has it and this process may use it, else whatever the
 * kernel gives new sockets. */
void tcp_conf_defaults(void *conf)
{
	struct tcp_conf *tc = conf;
	char avail[256], allowed[256];

	tc->zerocopy_min = TCP_ZC_MIN_DEFAULT;
	read_line(CC_AVAILABLE, avail, sizeof(avail));
	if (word_listed(avail, CC_PREFERRED) && cc_allowed(CC_PREFERRED, allowed, sizeof(allowed)))
		snprintf(tc->congestion, sizeof(tc->congestion), "%s", CC_PREFERRED);
	else
		read_line(CC_KERNEL_DEFAULT, tc->congestion, sizeof(tc->congestion));
}

/* SO_ZEROCOPY on a TCP socket of this kernel; errno says why not. */
static bool zc_supported(void)
{
	int one = 1, fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0), err;
	bool ok;

	if (fd < 0)
		return false;
	ok = setsockopt(fd, SOL_SOCKET, SO_ZEROCOPY, &one, sizeof(one)) == 0;
	err = errno;
	close(fd);
	errno = err;
	return ok;
}

int tcp_conf_check(const void *conf, struct lds_tp_conf_error *e)
{
	const struct tcp_conf *tc = conf;
	char avail[256], allowed[256];
	size_t cap;

	e->option = "congestion";
	if (tc->congestion[0] && !cc_available(tc->congestion, avail, sizeof(avail))) {
		snprintf(e->msg, sizeof(e->msg), "\"%s\" is not available in this kernel (available: %s); load it "
			 "(modprobe tcp_%s) or choose one of those", tc->congestion, avail, tc->congestion);
		return -1;
	}
	if (tc->congestion[0] && !cc_allowed(tc->congestion, allowed, sizeof(allowed))) {
		snprintf(e->msg, sizeof(e->msg), "\"%s\" is not allowed for this user (uid %u, without CAP_NET_ADMIN; "
			 "allowed: %s); add it to sysctl net.ipv4.tcp_allowed_congestion_control or choose one of "
			 "those", tc->congestion, (unsigned)geteuid(), allowed);
		return -1;
	}
	/* The kernel would cap a larger buffer without a word; say it here. */
	e->option = "tcp_buffer";
	cap = tc->buffer > 0 ? sockbuf_max() : 0;
	if (cap > 0 && tc->buffer > cap) {
		snprintf(e->msg, sizeof(e->msg), "tcp_buffer (%zu) exceeds this kernel's limit (%zu, the smaller of "
			 "net.core.wmem_max and rmem_max): raise both with sysctl or lower tcp_buffer", tc->buffer, cap);
		return -1;
	}
	e->option = "zerocopy";
	if (tc->zerocopy && !zc_supported()) {
		snprintf(e->msg, sizeof(e->msg), "this kernel refuses SO_ZEROCOPY on TCP sockets (%s; Linux 4.14 or "
			 "later has it): set zerocopy = false", strerror(errno));
		return -1;
	}
	return 0;
}

void tcp_conf_status(const void *conf, FILE *out)
{
	const struct tcp_conf *tc = conf;

	fputs(",\"congestion\":", out);
	json_str(out, tc->congestion);
	fprintf(out, ",\"tcp_buffer\":%zu,\"zerocopy\":%s,\"zerocopy_min\":%zu", tc->buffer,
		tc->zerocopy ? "true" : "false", tc->zerocopy_min);
}

const char *tcp_conf_describe(const void *conf, char *buf, size_t len)
{
	const struct tcp_conf *tc = conf;

	snprintf(buf, len, "%s%s", tc->congestion[0] ? tc->congestion : "kernel default",
		 tc->zerocopy ? ", zerocopy" : "");
	return buf;
}

_Static_assert(sizeof(struct tcp_conf) <= LDS_TP_CONF_MAX, "TCP's settings do not fit");
