/* registry.c - the table of transports the daemon can drive. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "transport.h"

extern const struct lds_transport_ops tcp_transport_ops;
extern const struct lds_transport_ops udp_transport_ops;
#ifdef LDS_HAVE_RDMA
extern const struct lds_transport_ops rdma_transport_ops;
#endif

/* Built in: one line per transport compiled into this build. */
static const struct lds_transport_ops *const builtin[] = {
	&tcp_transport_ops,
	&udp_transport_ops,
#ifdef LDS_HAVE_RDMA
	&rdma_transport_ops,   /* where rdma-core is installed (Makefile) */
#endif
};
#define NBUILTIN (sizeof(builtin) / sizeof(builtin[0]))

/* Added at run time (transport_register): tests' transports. */
#define REGISTRY_EXTRA 8
static const struct lds_transport_ops *extra[REGISTRY_EXTRA];
static size_t nextra;

/* A table this core can drive: its size is this interface's, it is one
 * mode (byte stream or messages) with that mode's ops, and every op the
 * core calls without asking is there. */
static int ops_valid(const struct lds_transport_ops *o)
{
	unsigned mode = o->caps.flags & (LDS_TP_CAP_STREAM | LDS_TP_CAP_MESSAGE);
	int stream_ops = o->send && o->push && o->recv && o->pending;
	int msg_ops = o->send_msg && o->recv_msg && o->msg_done && o->caps.max_msg > 0;

	if (mode == LDS_TP_CAP_STREAM ? !stream_ops : mode == LDS_TP_CAP_MESSAGE ? !msg_ops : 1)
		return 0;
	if ((o->caps.flags & LDS_TP_CAP_REGMEM) && !(o->mem_reg && o->mem_dereg))
		return 0;
	return o->size == LDS_TP_OPS_SIZE && o->name && o->name[0] && o->init && o->fini && o->listen &&
	       o->listener_close && o->listener_pause && o->connect && o->set_userdata && o->want_write &&
	       o->want_read && o->close && o->query && o->conf_size <= LDS_TP_CONF_MAX;
}

const struct lds_transport_ops *transport_at(size_t i)
{
	if (i < NBUILTIN)
		return ops_valid(builtin[i]) ? builtin[i] : NULL;
	return i - NBUILTIN < nextra ? extra[i - NBUILTIN] : NULL;
}

const struct lds_transport_ops *transport_find(const char *name)
{
	const struct lds_transport_ops *o;

	for (size_t i = 0; (o = transport_at(i)) != NULL; i++)
		if (strcmp(o->name, name) == 0)
			return o;
	return NULL;
}

int transport_register(const struct lds_transport_ops *ops)
{
	if (!ops_valid(ops))
		return -EINVAL;
	if (transport_find(ops->name) != NULL)
		return -EEXIST;
	if (nextra == REGISTRY_EXTRA)
		return -ENOSPC;
	extra[nextra++] = ops;
	return 0;
}

const char *transport_names(void)
{
	static char names[256];
	const struct lds_transport_ops *o;
	size_t n = 0;

	names[0] = '\0';
	for (size_t i = 0; (o = transport_at(i)) != NULL && n < sizeof(names); i++) {
		int w = snprintf(names + n, sizeof(names) - n, "%s%s", i ? ", " : "", o->name);

		if (w < 0)
			break;
		n += (size_t)w;
	}
	return names;
}
