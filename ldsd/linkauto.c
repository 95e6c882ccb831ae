/*
 * linkauto.c - a connecting link's number of streams: set by ldsctl
 * (link_set_stream_count), or chosen by streams = "auto" (the chooser is
 * autostreams.c; this is its glue to the link), and the retiring of
 * streams beyond the number wanted.  See link.h and link_int.h.
 */
#include <errno.h>
#include <stdlib.h>

#include "clock.h"
#include "link_int.h"
#include "log.h"

/* streams = "auto" starts here: on the benchmark matrix (20-300 ms, 0-1 %
 * loss, docs/BENCHMARKS.md) 8 streams were best or within 7 % of the
 * best everywhere, 4 fell to 55 % on long lossy paths, and every stream
 * added later costs the receiver a wait behind the new stream's slow
 * start. */
#define AUTO_FIRST_GUESS 8
/* A period of streams = "auto": long enough to average bbr's gain cycle
 * (8 round trips) and the noise of one second's goodput, short enough
 * that a transfer of tens of seconds sees a probe or two.  3 s or 20
 * round trips (6 s at 300 ms, 30 s before the first probe) was measured
 * to leave "auto" at its first guess in every benchmark run. */
#define AUTO_PERIOD_S 1.0
#define AUTO_PERIOD_RTTS 8
/* The path holds a standing queue while even the stream that sees the
 * shortest round trip sees the path's own round trip plus this fraction:
 * a bottleneck queue, shared by every stream (wanemu's default is one
 * bandwidth-delay product; more than a quarter of it is no jitter). */
#define AUTO_QUEUE_FRAC 0.25

/* More streams start at once; fewer are retired in linkauto_retire
 * once nothing they carried waits for an ACK. */
static void link_resize(struct link *l, unsigned n)
{
	for (unsigned i = l->nstreams; i < n; i++) {
		l->next_try_ns[i] = 0;
		l->backoff[i] = l->cfg->reconnect_min;
	}
	l->nstreams = n;
}

int linkauto_start(struct link *l)
{
	if (l->as == NULL && (l->as = malloc(sizeof(*l->as))) == NULL)
		return -ENOMEM;
	autostreams_init(l->as, l->cfg->streams_min, l->cfg->streams_max, l->nstreams);
	link_resize(l, l->as->n);
	l->as_start_ns = clock_now_ns();
	l->as_reached = l->sb.bytes_reached;
	l->as_ticks = l->as_busy = l->as_queued = l->as_disturbed = 0;
	return 0;
}

int link_set_stream_count(struct link *l, unsigned n)
{
	if (l->cfg->role != CONFIG_ROLE_CONNECT || n > CONFIG_MAX_STREAMS)
		return -EINVAL;
	if (n == 0) {
		log_info("link %s: streams set to auto (%u now)", l->cfg->cluster, l->nstreams);
		return linkauto_start(l);
	}
	log_info("link %s: streams set to %u (%u before)", l->cfg->cluster, n, l->nstreams);
	free(l->as);
	l->as = NULL;
	link_resize(l, n);
	return 0;
}

int linkauto_first(struct link *l)
{
	l->nstreams = AUTO_FIRST_GUESS;
	return linkauto_start(l);
}

void linkauto_retire(struct link *l)
{
	char why[64];

	for (unsigned i = l->nstreams; i < CONFIG_MAX_STREAMS; i++) {
		struct stream *s = l->streams[i];

		if (s == NULL || (s->st == ST_UP && (s->nout > 0 || sendbuf_stream_unacked(&l->sb, (int)i))))
			continue;
		s->retired = 1;
		if (s->st == ST_UP)
			stream_bye(s, WIRE_REFUSE_RETIRED);
		snprintf(why, sizeof(why), l->as ? "no longer wanted (streams = auto chose %u)"
			 : "no longer wanted (streams set to %u)", l->nstreams);
		stream_close(s, why, 0);
	}
}

/* Measures goodput over periods of AUTO_PERIOD_S or AUTO_PERIOD_RTTS round
 * trips of the path, whichever is longer, as the bytes that reached the
 * peer in the period (selective ACKs count: what is held behind a missing
 * block came through the path all the same, and counting only in-order
 * progress moved single periods by a round trip's data), and lets the chooser act on
 * periods that were network-limited at 4 ticks in 5 and in which no
 * stream broke, was still starting or was being retired: the period in
 * which a change takes effect is never judged, so the next one sees the
 * new streams past their first round trips.  The path counts as queued
 * for the chooser if it was at 4 ticks in 5 too. */
void linkauto_tick(struct link *l, uint64_t now)
{
	double secs = (double)(now - l->as_start_ns) / 1e9, rate, path_rtt;
	uint32_t now_us, min_us;
	unsigned want;
	int changed = 0;

	l->as_ticks++;
	/* Blocks wait for the streams, a quarter of the send memory is in
	 * flight, or a message found no room (send memory or its
	 * destination's share full): the application offers more than the
	 * link carries. */
	l->as_busy += sendbuf_has_next(&l->sb, 0) || sendbuf_unacked_bytes(&l->sb) >= l->sb.mem / 4 || l->as_refused;
	l->as_refused = 0;
	/* One query of the streams' transports a tick serves both: whether
	 * every stream sees a standing queue, and the path's round trip (the
	 * lowest any saw lately; the smoothed one if none knows: pings wait
	 * behind the data that many streams queue, srtt 700 ms was seen on a
	 * 100 ms path). */
	stream_rtts(l->streams, CONFIG_MAX_STREAMS, &now_us, &min_us);
	l->as_queued += min_us && now_us >= min_us * (1 + AUTO_QUEUE_FRAC);
	l->as_disturbed |= l->up != l->nstreams;
	path_rtt = min_us ? min_us / 1e6 : (double)l->srtt_us / 1e6;
	if (secs < AUTO_PERIOD_S || secs < AUTO_PERIOD_RTTS * path_rtt)
		return;
	rate = (double)(l->sb.bytes_reached - l->as_reached) / secs;
	if (!l->as_disturbed && l->as_busy * 5 >= l->as_ticks * 4) {
		int queued = l->as_queued * 5 >= l->as_ticks * 4;

		want = autostreams_period(l->as, rate, queued);
		if (want != l->nstreams) {
			log_info("link %s: streams = auto: %u -> %u streams (goodput %.1f MB/s with %u%s)", l->cfg->cluster,
				 l->nstreams, want, rate / 1e6, l->nstreams, queued ? ", the path queued" : "");
			link_resize(l, want);
			changed = 1;
		}
	}
	l->as_start_ns = now;
	l->as_reached = l->sb.bytes_reached;
	l->as_ticks = l->as_busy = l->as_queued = 0;
	l->as_disturbed = changed;
}
