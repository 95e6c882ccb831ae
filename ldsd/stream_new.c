/*
 * stream_new.c - a new stream and the framer its transport's capabilities
 * call for (stream_framer.h): apart from stream.c, which the framers call
 * down into, so that stream.c never names them.  See stream.h.
 */
#include <stdlib.h>

#include "clock.h"
#include "stream_framer.h"

struct stream *stream_new(struct daemon *d, const struct lds_transport_ops *ops, struct lds_transport *tp,
			  const struct stream_upcalls *up, enum stream_state st)
{
	struct stream *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->d = d;
	s->ops = ops;
	s->tp = tp;
	s->fr = ops->caps.flags & LDS_TP_CAP_MESSAGE ? &stream_msg_framer : &stream_bytes_framer;
	s->up = up;
	s->idx = -1;
	s->st = st;
	s->rx_lowat = 1;
	s->created_ns = s->last_rx_ns = clock_now_ns();
	return s;
}
