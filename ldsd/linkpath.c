/*
 * linkpath.c - whether a connecting link's path is there: how long a
 * connection attempt waits for an answer, and a silent link's streams
 * closed with the slots put on the probe grid (probe.h) to find the path
 * when it returns.  See link_int.h.
 */
#include "link_int.h"
#include "log.h"

/* A healthy peer sends an ACK at least every ACK_REFRESH_NS (link.c), so a link on
 * which no stream has heard anything for this long (or 8 round trips, if
 * longer) has lost its path: its streams are closed and reconnected rather
 * than left to TCP's retransmission back-off, which after a long black
 * hole can wait a minute before trying again. */
#define LINK_SILENCE_S 2.0
/* A connection attempt that has had no answer for this long (or 3 round
 * trips) starts over: its SYN is lost, and a fresh one finds a returning
 * path sooner than the kernel's doubling SYN retransmissions. */
#define SYN_WAIT_S 1.0
/* While a link probes for its lost path, the slots but one wait 3 round
 * trips of the path as it was (probe.h), but not less than this: at most
 * 4 SYNs a second per slot into the black hole. */
#define PROBE_FAST_MIN_S 0.25

/* Seconds, at least min, or n smoothed round trips if longer. */
static double link_rtts(const struct link *l, double min, double n)
{
	double t = n * (double)l->srtt_us / 1e6;

	return t > min ? t : min;
}

/* How long a connection attempt waits for an answer (SYN_WAIT_S). */
static double link_syn_wait(const struct link *l)
{
	return link_rtts(l, SYN_WAIT_S, 3);
}

double linkpath_syn_wait(const struct stream *s)
{
	const struct link *l = s->link;

	if (probe_active(&l->probe))
		return (double)(probe_next(&l->probe, (unsigned)s->idx, s->created_ns) - s->created_ns) / 1e9;
	return link_syn_wait(l);
}

void linkpath_check_silence(struct link *l, uint64_t now)
{
	double limit = link_rtts(l, LINK_SILENCE_S, 8), period, fast;
	uint64_t heard = 0;
	uint32_t now_us, min_us;
	char why[80];

	if (l->cfg->role != CONFIG_ROLE_CONNECT || l->up == 0 || limit >= l->cfg->inactivity_timeout)
		return;
	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++)
		if (l->streams[i] && l->streams[i]->st == ST_UP && l->streams[i]->last_rx_ns > heard)
			heard = l->streams[i]->last_rx_ns;
	if ((double)(now - heard) / 1e9 <= limit)
		return;
	log_warnx("link %s: nothing received on any stream for %.1f s: path presumed lost, reconnecting", l->cfg->cluster,
		  limit);
	/* The path's round trip without queues, from the streams' transports
	 * while they are there: the pings' smoothed one waits behind the
	 * data (300-470 ms measured on a 100 ms path). */
	stream_rtts(l->streams, CONFIG_MAX_STREAMS, &now_us, &min_us);
	fast = min_us ? 3.0 * min_us / 1e6 : link_rtts(l, 0, 3);
	if (fast < PROBE_FAST_MIN_S)
		fast = PROBE_FAST_MIN_S;
	snprintf(why, sizeof(why), "link silent for %.1f s", limit);
	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++)
		if (l->streams[i] && l->streams[i]->st == ST_UP)
			stream_close(l->streams[i], why, 1);
	/* Slot 0 then probes the path once per SYN wait or reconnect_max,
	 * whichever is longer, the others once per `fast` (probe.h); spread
	 * over their periods, the slots find a returning path within a small
	 * part of a period instead of all missing it together. */
	period = link_syn_wait(l);
	if (period < l->cfg->reconnect_max)
		period = l->cfg->reconnect_max;
	probe_start(&l->probe, now, (uint64_t)(period * 1e9), (uint64_t)(fast * 1e9), l->nstreams);
	for (unsigned i = 0; i < l->nstreams; i++)
		l->next_try_ns[i] = probe_next(&l->probe, i, 0);
}
