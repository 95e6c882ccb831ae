/* linkstatus.c - a link's failure log and its status (JSON, text); see link.h. */
#include <inttypes.h>
#include <string.h>

#include "clock.h"
#include "handshake.h"
#include "json.h"
#include "link_int.h"

void faillog_open(struct link *l, int idx, const char *why, uint64_t blocks)
{
	struct failure *f = &l->faillog[l->nfail++ % FAILLOG_MAX];

	memset(f, 0, sizeof(*f));
	f->stream = idx;
	f->down_at = clock_wall_s();
	f->blocks = blocks;
	snprintf(f->reason, sizeof(f->reason), "%s", why);
	if (blocks == 0)
		f->resent_at = f->down_at;
}

void faillog_up(struct link *l, int idx)
{
	unsigned n = l->nfail < FAILLOG_MAX ? l->nfail : FAILLOG_MAX;

	for (unsigned i = 0; i < n; i++) {
		struct failure *f = &l->faillog[(l->nfail - 1 - i) % FAILLOG_MAX];

		if (f->stream == idx && f->up_at == 0) {
			f->up_at = clock_wall_s();
			return;
		}
	}
}

void faillog_resent(struct link *l)
{
	unsigned n = l->nfail < FAILLOG_MAX ? l->nfail : FAILLOG_MAX;
	double now = clock_wall_s();

	for (unsigned i = 0; i < n; i++)
		if (l->faillog[i].resent_at == 0)
			l->faillog[i].resent_at = now;
}

/* The transport's smoothed RTT averaged over the streams that are up: the
 * path's round trip, without what waits in socket buffers. */
static double link_transport_rtt_ms(const struct link *l)
{
	struct lds_tp_info info;
	double sum = 0;
	unsigned n = 0;

	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++) {
		if (stream_query(l->streams[i], &info) && info.rtt_us) {
			sum += info.rtt_us / 1000.0;
			n++;
		}
	}
	return n ? sum / n : 0.0;
}

/* The smallest packet size the link's streams send now (datagram kinds:
 * the path MTU they found); 0 where the transport has none. */
static unsigned link_transport_mtu(const struct link *l)
{
	struct lds_tp_info info;
	unsigned mtu = 0;

	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++)
		if (stream_query(l->streams[i], &info) && info.mtu && (mtu == 0 || info.mtu < mtu))
			mtu = info.mtu;
	return mtu;
}

/* The counters of the transport conns of the streams up now, summed into
 * *sum (each counts from its conn's start); returns their retransmits,
 * which *sum's 32 bits might not hold. */
static uint64_t link_conns_sum(const struct link *l, struct lds_tp_info *sum)
{
	struct lds_tp_info info;
	uint64_t retx = 0;

	memset(sum, 0, sizeof(*sum));
	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++) {
		if (!stream_query(l->streams[i], &info))
			continue;
		sum->bytes_sent += info.bytes_sent;
		sum->bytes_recv += info.bytes_recv;
		retx += info.retransmits;
		sum->zc_sends += info.zc_sends;
		sum->zc_completed += info.zc_completed;
		sum->zc_copied += info.zc_copied;
		sum->zc_refused += info.zc_refused;
	}
	return retx;
}

/* Our PING samples when there are any (keepalive may be long), else the
 * transport's. */
static double link_rtt_ms(const struct link *l)
{
	return l->rtt_samples > 0 ? (double)l->srtt_us / 1000.0 : link_transport_rtt_ms(l);
}

double link_down_for(const struct link *l)
{
	return l->down_since > 0 ? clock_wall_s() - l->down_since : 0;
}

const char *link_last_error(const struct link *l)
{
	return l->last_error;
}

void link_byte_counts(const struct link *l, uint64_t *out, uint64_t *in)
{
	*out = l->sb.bytes_reached;
	*in = l->rb.bytes_recv;
}

static double link_downtime(const struct link *l)
{
	return l->downtime + (l->down_since > 0 ? clock_wall_s() - l->down_since : 0);
}

/* Zero-copy sends of the streams up now (a transport with send_holds). */
static void link_zc_json(const struct link *l, const struct lds_tp_info *sum, FILE *out)
{
	if (l->ops->send_holds == NULL)
		return;
	fprintf(out,
		",\"zerocopy\":{\"sends\":%" PRIu64 ",\"completed\":%" PRIu64 ",\"copied\":%" PRIu64
		",\"refused\":%" PRIu64 "}",
		sum->zc_sends, sum->zc_completed, sum->zc_copied, sum->zc_refused);
}

void link_status_json(const struct link *l, FILE *out)
{
	const struct sendbuf *sb = &l->sb;
	const struct recvbuf *rb = &l->rb;
	unsigned n = l->nfail < FAILLOG_MAX ? l->nfail : FAILLOG_MAX;
	struct lds_tp_info conns;
	uint64_t conns_retx = link_conns_sum(l, &conns);

	fputs("{\"peer\":", out);
	json_str(out, l->cfg->cluster);
	fputs(",\"address\":", out);
	json_str(out, l->cfg->address);
	if (l->ops->status)
		l->ops->status(l->cfg->tp_conf, out);
	fprintf(out, ",\"encryption\":\"%s\"", hs_encryption_name(hs_encryption(l)));
	link_zc_json(l, &conns, out);
	fprintf(out,
		",\"port\":%u,\"role\":\"%s\",\"transport\":\"%s\","
		"\"streams\":%u,\"streams_auto\":%s,\"streams_up\":%u,\"peer_instance\":\"%016" PRIx64 "\",\"srtt_ms\":%.3f,"
		"\"transport_rtt_ms\":%.3f,"
		"\"reconnects\":%" PRIu64 ",\"session_resets\":%" PRIu64 ",\"downtime_s\":%.3f,"
		"\"sent\":{\"bytes\":%" PRIu64 ",\"blocks\":%" PRIu64 ",\"blocks_acked\":%" PRIu64
		",\"blocks_resent\":%" PRIu64 ",\"bytes_acked\":%" PRIu64 ",\"unacked_bytes\":%zu,"
		"\"messages_delivered\":%" PRIu64 ",\"messages_lost\":%" PRIu64 ",\"messages_pending\":%" PRIu64
		",\"window_end\":%" PRIu64 ",\"acks_received\":%" PRIu64 ",\"deferred_bytes\":%" PRIu64
		",\"deferred_copied_bytes\":%" PRIu64 "},"
		"\"received\":{\"bytes\":%" PRIu64 ",\"blocks\":%" PRIu64 ",\"blocks_held\":%" PRIu64 ",\"blocks_parked\":%" PRIu64 ",\"duplicates\":%" PRIu64
		",\"messages\":%" PRIu64 ",\"misrouted\":%" PRIu64 ",\"undelivered\":%" PRIu64
		",\"held_bytes\":%zu,\"acks_sent\":%" PRIu64 "},\"failures\":[",
		l->cfg->port, l->cfg->role == CONFIG_ROLE_CONNECT ? "connect" : "listen", l->ops->name, l->nstreams, l->as ? "true" : "false", l->up, l->peer_instance, link_rtt_ms(l), link_transport_rtt_ms(l), l->reconnects,
		l->resets, link_downtime(l), sb->bytes_sent, sb->blocks_sent, sb->blocks_acked, sb->blocks_resent,
		sb->bytes_acked, sendbuf_unacked_bytes(sb), sb->msgs_delivered, sb->msgs_lost, sb->msg_next - sb->msg_base,
		sb->window_end, l->acks_received, sb->bytes_deferred, sb->bytes_deferred_copied, rb->bytes_recv,
		rb->blocks_recv, rb->blocks_held, l->blocks_parked, rb->blocks_dup, rb->msgs_recv,
		l->msgs_misrouted, l->lr.dropped, rb->ooo_bytes + rb->msg_bytes, l->acks_sent);
	for (unsigned i = 0; i < n; i++) {
		const struct failure *f = &l->faillog[(l->nfail - n + i) % FAILLOG_MAX];

		fprintf(out, "%s{\"stream\":%d,\"down_at\":%.3f,\"up_at\":%.3f,\"resent_at\":%.3f,"
			"\"outage_s\":%.3f,\"blocks_resent\":%" PRIu64 ",\"reason\":",
			i ? "," : "", f->stream, f->down_at, f->up_at, f->resent_at,
			f->up_at > 0 ? f->up_at - f->down_at : -1.0, f->blocks);
		json_str(out, f->reason);
		fputc('}', out);
	}
	fprintf(out, "],\"failures_total\":%u", l->nfail);
	if (link_transport_mtu(l))
		fprintf(out, ",\"transport_mtu\":%u", link_transport_mtu(l));
	/* What they put on the wire and sent again (iperf3's Retr). */
	fprintf(out, ",\"transport_conns\":{\"bytes_sent\":%" PRIu64 ",\"bytes_recv\":%" PRIu64
		",\"retransmits\":%" PRIu64 "}", conns.bytes_sent, conns.bytes_recv, conns_retx);
	if (l->ops->dropped && l->tp) {
		fputs(",\"transport_dropped\":{", out);
		l->ops->dropped(l->tp, out);
		fputc('}', out);
	}
	fputs(",\"last_error\":", out);
	json_str(out, l->last_error);
	fputc('}', out);
}

void link_status_text(const struct link *l, FILE *out)
{
	char tpd[64];
	const struct sendbuf *sb = &l->sb;
	unsigned n = l->nfail < FAILLOG_MAX ? l->nfail : FAILLOG_MAX;

	fprintf(out, "link %s (%s %s:%u, %s/%s, encryption %s): %u/%u streams up%s, srtt %.1f ms, %" PRIu64
		" reconnects, %" PRIu64 " session resets, down %.1f s\n",
		l->cfg->cluster, l->cfg->role == CONFIG_ROLE_CONNECT ? "connect" : "listen", l->cfg->address,
		l->cfg->port, l->ops->name,
		l->ops->describe ? l->ops->describe(l->cfg->tp_conf, tpd, sizeof(tpd)) : "-",
		hs_encryption_name(hs_encryption(l)), l->up,
		l->nstreams, l->as ? " (auto)" : "", link_rtt_ms(l), l->reconnects,
		l->resets, link_downtime(l));
	fprintf(out, "  sent     %" PRIu64 " bytes, %" PRIu64 " blocks (%" PRIu64 " acked, %" PRIu64
		" resent), %zu bytes unacked, %" PRIu64 " messages delivered, %" PRIu64 " pending\n",
		sb->bytes_sent, sb->blocks_sent, sb->blocks_acked, sb->blocks_resent, sendbuf_unacked_bytes(sb),
		sb->msgs_delivered, sb->msg_next - sb->msg_base);
	fprintf(out, "  received %" PRIu64 " bytes, %" PRIu64 " blocks (%" PRIu64 " duplicates), %" PRIu64
		" messages (%" PRIu64 " misrouted, dropped)\n",
		l->rb.bytes_recv, l->rb.blocks_recv, l->rb.blocks_dup, l->rb.msgs_recv, l->msgs_misrouted);
	if (n > 0)
		fprintf(out, "  failures (%u total, last %u):\n", l->nfail, n);
	for (unsigned i = 0; i < n; i++) {
		const struct failure *f = &l->faillog[(l->nfail - n + i) % FAILLOG_MAX];
		char up[32] = "not yet", rs[32] = "not yet", at[32];

		if (f->up_at > 0)
			snprintf(up, sizeof(up), "+%.3f s", f->up_at - f->down_at);
		if (f->resent_at > 0)
			snprintf(rs, sizeof(rs), "+%.3f s", f->resent_at - f->down_at);
		fprintf(out, "    stream %d down at %s (%s), back %s, %" PRIu64 " blocks resent %s\n", f->stream,
			clock_iso8601(f->down_at, at, sizeof(at)), f->reason, up, f->blocks, rs);
	}
}
