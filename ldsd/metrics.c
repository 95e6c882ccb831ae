/* metrics.c - status document to OpenMetrics text; see metrics.h. */
#include <errno.h>
#include <math.h>
#include <string.h>

#include "metrics.h"

enum mtype { M_GAUGE, M_COUNTER };
static const char *const mtype_names[] = { "gauge", "counter" };

/* One family: where its value sits in each object of `list` of the
 * status ("" for the top level: one sample without labels), how to read
 * it, and what it is.  `count` families count the array at `key`. */
struct family {
	const char *list;       /* "", "links", "clients", "exec" */
	const char *section;    /* sub-object of the item ("sent", "received") or NULL */
	const char *key;
	const char *name;       /* without _total */
	enum mtype type;
	const char *unit;       /* OpenMetrics UNIT, or NULL; the name ends in it */
	double scale;           /* to the unit: 1e-3 for ms -> seconds */
	int count;              /* the value is the length of the array at key */
	const char *help;
};

static const struct family families[] = {
	{ "", NULL, "uptime_s", "lds_uptime_seconds", M_GAUGE, "seconds", 1, 0, "Seconds since ldsd started." },
	{ "", NULL, "draining", "lds_draining", M_GAUGE, NULL, 1, 0, "1 while ldsd drains before exiting." },
	{ "memory", NULL, "rss_bytes", "lds_resident_memory_bytes", M_GAUGE, "bytes", 1, 0,
	  "Resident memory of the ldsd process." },
	{ "links", NULL, "streams", "lds_link_streams", M_GAUGE, NULL, 1, 0, "Streams the link is configured to use." },
	{ "links", NULL, "streams_up", "lds_link_streams_up", M_GAUGE, NULL, 1, 0, "Streams of the link that are up." },
	{ "links", NULL, "srtt_ms", "lds_link_rtt_seconds", M_GAUGE, "seconds", 1e-3, 0,
	  "Smoothed round-trip time of the link." },
	{ "links", NULL, "reconnects", "lds_link_reconnects", M_COUNTER, NULL, 1, 0,
	  "Streams of the link that came up again after breaking." },
	{ "links", NULL, "session_resets", "lds_link_session_resets", M_COUNTER, NULL, 1, 0,
	  "Times the peer came back with another instance (lost state)." },
	{ "links", NULL, "downtime_s", "lds_link_downtime_seconds", M_COUNTER, "seconds", 1, 0,
	  "Time the link had no stream up." },
	{ "links", NULL, "failures_total", "lds_link_failures", M_COUNTER, NULL, 1, 0, "Streams of the link that broke." },
	{ "links", "sent", "bytes", "lds_link_sent_bytes", M_COUNTER, "bytes", 1, 0, "Bytes of blocks sent, resends included." },
	{ "links", "sent", "blocks", "lds_link_sent_blocks", M_COUNTER, NULL, 1, 0, "Blocks sent, resends included." },
	{ "links", "sent", "blocks_acked", "lds_link_acked_blocks", M_COUNTER, NULL, 1, 0,
	  "Blocks the peer acknowledged." },
	{ "links", "sent", "blocks_resent", "lds_link_resent_blocks", M_COUNTER, NULL, 1, 0,
	  "Blocks sent again after a stream broke." },
	{ "links", "sent", "unacked_bytes", "lds_link_unacked_bytes", M_GAUGE, "bytes", 1, 0,
	  "Bytes sent or queued that the peer has not acknowledged." },
	{ "links", "sent", "messages_delivered", "lds_link_delivered_messages", M_COUNTER, NULL, 1, 0,
	  "Messages the peer reported delivered to their destination." },
	{ "links", "sent", "messages_pending", "lds_link_pending_messages", M_GAUGE, NULL, 1, 0,
	  "Messages accepted for the peer and not yet reported delivered." },
	{ "links", "sent", "acks_received", "lds_link_received_acks", M_COUNTER, NULL, 1, 0,
	  "ACK frames received from the peer for the blocks sent to it." },
	{ "links", "sent", "deferred_bytes", "lds_link_deferred_bytes", M_COUNTER, "bytes", 1, 0,
	  "Payload bytes left in a local client's shared-memory ring, to be sealed from there without a copy." },
	{ "links", "sent", "deferred_copied_bytes", "lds_link_deferred_copied_bytes", M_COUNTER, "bytes", 1, 0,
	  "Of those, bytes copied into their block after all (the link did not seal them within a tick)." },
	{ "links", "received", "bytes", "lds_link_received_bytes", M_COUNTER, "bytes", 1, 0, "Bytes of blocks received." },
	{ "links", "received", "blocks", "lds_link_received_blocks", M_COUNTER, NULL, 1, 0, "Blocks received." },
	{ "links", "received", "blocks_held", "lds_link_held_blocks", M_COUNTER, NULL, 1, 0,
	  "Of those, blocks read ahead of the one expected and held in a buffer until their turn (copied later)." },
	{ "links", "received", "blocks_parked", "lds_link_parked_blocks", M_COUNTER, NULL, 1, 0,
	  "Times a block ahead of its turn waited in its socket instead (short paths only)." },
	{ "links", "received", "duplicates", "lds_link_duplicate_blocks", M_COUNTER, NULL, 1, 0,
	  "Blocks received that were already held (dropped)." },
	{ "links", "received", "messages", "lds_link_received_messages", M_COUNTER, NULL, 1, 0,
	  "Messages reassembled from the peer." },
	{ "links", "received", "held_bytes", "lds_link_held_bytes", M_GAUGE, "bytes", 1, 0,
	  "Bytes received and not yet delivered (reordering and reassembly)." },
	{ "links", "received", "acks_sent", "lds_link_sent_acks", M_COUNTER, NULL, 1, 0,
	  "ACK frames sent to the peer for the blocks received from it." },
	{ "links", "transport_dropped", "bad", "lds_link_transport_dropped_bad", M_COUNTER, NULL, 1, 0,
	  "Datagrams the link's transport instance dropped as malformed (bad checksum, header or frames)." },
	{ "links", "transport_dropped", "unknown", "lds_link_transport_dropped_unknown", M_COUNTER, NULL, 1, 0,
	  "Datagrams the link's transport instance dropped for an unknown conn id or source address." },
	{ "links", "transport_dropped", "replayed", "lds_link_transport_dropped_replayed", M_COUNTER, NULL, 1, 0,
	  "Packets the link's transport instance dropped for a packet number already seen (replays, duplicates)." },
	{ "links", "transport_dropped", "bad_tokens", "lds_link_transport_dropped_bad_tokens", M_COUNTER, NULL, 1, 0,
	  "Connection attempts the link's transport instance dropped for a forged or stale token." },
	{ "links", "transport_dropped", "refused", "lds_link_transport_dropped_refused", M_COUNTER, NULL, 1, 0,
	  "Connection attempts the link's transport instance refused for its limits." },
	{ "clients", NULL, "endpoints", "lds_client_endpoints", M_GAUGE, NULL, 1, 1, "Endpoints open or holding messages." },
	{ "clients", NULL, "local_messages", "lds_client_local_messages", M_COUNTER, NULL, 1, 0,
	  "Messages delivered between endpoints of this gateway." },
	{ "clients", NULL, "refused", "lds_client_refused_messages", M_COUNTER, NULL, 1, 0, "Messages refused to clients." },
	{ "clients", NULL, "undelivered", "lds_client_undelivered_messages", M_COUNTER, NULL, 1, 0,
	  "Messages for endpoints of this gateway dropped without being delivered." },
	{ "clients", NULL, "undelivered_job_ended", "lds_client_job_ended_messages", M_COUNTER, NULL, 1, 0,
	  "Of those, messages for endpoints of a job that had ended." },
	{ "clients", NULL, "placed_bytes", "lds_client_placed_bytes", M_COUNTER, NULL, 1, 0,
	  "Bytes of messages from links reassembled straight in the receiving process's shared-memory ring." },
	{ "clients", NULL, "placed_moved_bytes", "lds_client_placed_moved_bytes", M_COUNTER, NULL, 1, 0,
	  "Of those, bytes moved out of the ring before the process took them." },
	{ "exec", NULL, "running", "lds_exec_running_jobs", M_GAUGE, NULL, 1, 0, "Exec-service jobs running." },
	{ "exec", NULL, "started", "lds_exec_started_jobs", M_COUNTER, NULL, 1, 0, "Exec-service jobs started." },
	{ "exec", NULL, "refused", "lds_exec_refused_jobs", M_COUNTER, NULL, 1, 0, "Exec-service requests refused." },
	{ "exec", NULL, "ended", "lds_exec_ended_jobs", M_COUNTER, NULL, 1, 0, "Exec-service jobs ended." },
};

/* A label value: \, " and newline escaped. */
static void label_value(FILE *out, const char *s)
{
	fputc('"', out);
	for (; *s; s++) {
		if (*s == '\\' || *s == '"')
			fprintf(out, "\\%c", *s);
		else if (*s == '\n')
			fputs("\\n", out);
		else
			fputc(*s, out);
	}
	fputc('"', out);
}

static void sample(FILE *out, const struct family *f, const struct jsonr *item, const char *peer)
{
	const struct jsonr *v = f->section ? jsonr_get(jsonr_get(item, f->section), f->key) : jsonr_get(item, f->key);
	double x;

	if (v == NULL)
		return;
	x = f->count ? (v->type == JSONR_ARR ? (double)v->n : NAN) : jsonr_num(v, NAN) * f->scale;
	if (isnan(x))
		return;
	fprintf(out, "%s%s", f->name, f->type == M_COUNTER ? "_total" : "");
	if (peer != NULL) {
		fputs("{peer=", out);
		label_value(out, peer);
		fputc('}', out);
	}
	fprintf(out, " %.17g\n", x);
}

int metrics_write(const struct jsonr *status, FILE *out)
{
	const struct jsonr *links = jsonr_get(status, "links");

	if (status == NULL || status->type != JSONR_OBJ || links == NULL || links->type != JSONR_ARR)
		return -EINVAL;
	fputs("# TYPE lds_gateway info\n# HELP lds_gateway This gateway: its cluster, instance and version.\n"
	      "lds_gateway_info{cluster=",
	      out);
	label_value(out, jsonr_str(jsonr_get(status, "cluster")));
	fputs(",instance=", out);
	label_value(out, jsonr_str(jsonr_get(status, "instance")));
	fputs(",version=", out);
	label_value(out, jsonr_str(jsonr_get(status, "version")));
	fputs("} 1\n", out);
	for (size_t i = 0; i < sizeof(families) / sizeof(families[0]); i++) {
		const struct family *f = &families[i];

		fprintf(out, "# TYPE %s %s\n", f->name, mtype_names[f->type]);
		if (f->unit)
			fprintf(out, "# UNIT %s %s\n", f->name, f->unit);
		fprintf(out, "# HELP %s %s\n", f->name, f->help);
		if (strcmp(f->list, "links") != 0) {
			sample(out, f, f->list[0] ? jsonr_get(status, f->list) : status, NULL);
			continue;
		}
		for (size_t k = 0; k < links->n; k++)
			sample(out, f, &links->kids[k], jsonr_str(jsonr_get(&links->kids[k], "peer")));
	}
	fputs("# EOF\n", out);
	return 0;
}
