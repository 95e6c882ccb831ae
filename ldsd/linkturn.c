/*
 * linkturn.c - a DATA block that arrives ahead of its turn waits in its
 * conn (a parked byte stream, stream_bytes.c) instead of being read into
 * a buffer and copied into its message once the blocks before it come:
 * which blocks may wait, and when their streams are released.
 *
 * Only where the link's path is short (transport round trip under
 * LINKTURN_RTT_US): there the blocks before it are microseconds away (on
 * loopback with 4 streams, 52 % of blocks arrived ahead and were copied;
 * parked, 0.02 %).  Over a WAN they may be a loss recovery away, a round
 * trip or more, while the parked streams' windows close: at 300 ms and
 * 1 % loss, 8 streams fell from 186 to 115 Mb/s (docs/BENCHMARKS.md).
 *
 * Where waiting does not pay - a stream broke (its blocks come again
 * behind those the parked streams hold), every up stream is parked
 * (blocks resent need not ascend on a stream), or one waited
 * LINKTURN_WAIT_NS (the block expected is stuck somewhere) - every parked
 * stream is let go, and none parks again until the highest block seen
 * by then is the one expected.
 */
#include "link_int.h"

#define LINKTURN_RTT_US 1000
#define LINKTURN_WAIT_NS 20000000ull

int linkturn_wait(struct link *l, uint64_t seq)
{
	if (!l->turn_wait || seq <= l->rb.recv_cum || l->rb.recv_cum < l->turn_resume)
		return 0;
	l->blocks_parked++;
	return 1;
}

void linkturn_stop(struct link *l)
{
	uint64_t high = l->rb.held_end;

	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++) {
		struct stream *s = l->streams[i];

		if (s == NULL || s->parked != STREAM_PARKED)
			continue;
		if (s->parked_seq >= high)
			high = s->parked_seq + 1;
		stream_unpark(s);
	}
	l->turn_resume = high;
}

void linkturn_release(struct link *l)
{
	unsigned running = 0, parked = 0;

	/* Off, nothing is parked: the tick that turned it off let all go. */
	if (!l->turn_wait)
		return;
	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++) {
		struct stream *s = l->streams[i];

		if (s == NULL || s->st != ST_UP)
			continue;
		if (s->parked == STREAM_PARKED && s->parked_seq <= l->rb.recv_cum)
			stream_unpark(s);
		if (s->parked == STREAM_PARKED)
			parked++;
		else if (!s->stalled)
			running++;
	}
	if (running == 0 && parked > 0)
		linkturn_stop(l);
}

void linkturn_tick(struct link *l, uint64_t now)
{
	uint32_t now_us, min_us;

	stream_rtts(l->streams, CONFIG_MAX_STREAMS, &now_us, &min_us);
	l->turn_wait = min_us > 0 && min_us < LINKTURN_RTT_US;
	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++) {
		struct stream *s = l->streams[i];

		if (s != NULL && s->parked == STREAM_PARKED && (!l->turn_wait || now - s->rx_wait_ns > LINKTURN_WAIT_NS)) {
			linkturn_stop(l);
			return;
		}
	}
}
