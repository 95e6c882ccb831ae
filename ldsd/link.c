/* link.c - one peer gateway: streams, handshake, session; see link.h. */
#include <errno.h>
#include <inttypes.h>
#include <stdlib.h>
#include <string.h>

#include "admission.h"
#include "auth.h"
#include "autostreams.h"
#include "clock.h"
#include "dial.h"
#include "json.h"
#include "link.h"
#include "log.h"
#include "lostrep.h"
#include "probe.h"
#include "sealq.h"

#define NS 1000000000ull
#define RX_INITIAL (256u * 1024)
#define CTL_CAP 4096               /* queued control frames per stream */
#define FAILLOG_MAX 64
#define READS_PER_EVENT 16         /* fairness between streams and clients */
#define STREAM_BATCH 4             /* data blocks per write */
#define HELLO_MAX (64 + 2 * WIRE_NAME_MAX)   /* HELLO payload */
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
/* A stream takes new blocks only while its socket holds less than this
 * not yet sent.  Without a limit the kernel queues megabytes per socket
 * on a long path, and a block given to a stream that then slows down
 * (a loss, a smaller share of the bottleneck) waits behind them while
 * the receiver holds everything after it: measured on 100 ms with 0.1 %
 * loss, 2 MB queued in one socket, and 10 % less goodput with 8 streams
 * (docs/BENCHMARKS.md).  Blocks not yet given out go to whichever stream
 * can send first. */
#define LINK_UNSENT_MAX (128u * 1024)
#define ACK_REFRESH_NS (200ull * 1000000)
/* A healthy peer sends an ACK at least every ACK_REFRESH_NS, so a link on
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

enum st_state {
	ST_CONNECTING,     /* transport connect in progress */
	ST_HELLO_SENT,     /* connector: waiting for CHALLENGE */
	ST_AUTH_SENT,      /* connector: waiting for READY */
	ST_WAIT_HELLO,     /* listener: accepted, waiting for HELLO */
	ST_CHALLENGE_SENT, /* listener: waiting for AUTH */
	ST_UP,
};
static const char *const st_names[] = { "connecting", "hello-sent", "auth-sent", "wait-hello", "challenge-sent", "up" };

struct stream {
	struct daemon *d;
	struct link *link;           /* NULL while an accepted conn is unidentified */
	const struct lds_transport_ops *ops;
	struct lds_tp_conn *conn;
	int idx;
	enum st_state st;
	/* Handshake: the connector's HELLO payload, then the transcript hash. */
	uint8_t hello[HELLO_MAX];
	size_t hello_len;
	uint8_t th[AUTH_TH_LEN];
	int aead;                    /* encryption = "aead": all output goes through sq */
	struct sealq sq;
	int sq_more;                 /* sq ends with a full batch and more blocks wait */
	char peer_addr[CONFIG_ADDR_MAX + 8];
	/* What the peer claimed (HELLO; max_msg also in CHALLENGE), applied once authenticated. */
	uint64_t peer_instance;
	uint32_t peer_max_msg;
	unsigned peer_idx, peer_nstreams;

	uint8_t *rx;
	size_t rx_len, rx_cap;
	uint8_t ctl[CTL_CAP];
	size_t ctl_len, ctl_off;
	/* Data frames being written, taken together so that one write fills
	 * whole packets: a lone block plus its header is a full packet and a
	 * runt on links whose MSS is near block_size (loopback). */
	struct sb_block *out[STREAM_BATCH];
	int nout;
	int take;                    /* blocks to take next, 1..STREAM_BATCH */
	size_t out_off;              /* bytes of out[0]'s header+payload written */
	int blocked;
	int corked;                  /* the last send said LDS_TP_MORE */
	int retired;                 /* closed because fewer streams are wanted: not a failure */
	int failed;                  /* -errno of a failed write, handled by the caller */
	int stalled;                 /* fault injection: neither read nor written */
	int data_train;              /* the last frame read was DATA: see stream_read_size */
	int unauth;                  /* accepted, not yet authenticated: counted by admission */
	size_t pending;              /* bytes known to wait in the conn: asking costs a syscall */

	uint64_t created_ns, last_rx_ns, last_ping_ns, up_ns;
	struct stream *next_pending; /* list of accepted conns not yet authenticated */
};

/* Bytes sent over a link to one destination endpoint and not yet reported
 * delivered.  Capping them keeps one slow or absent receiver from filling
 * the peer's receive memory and stalling everyone else (head-of-line). */
struct dest {
	char name[WIRE_ENDPOINT_MAX + 1];
	size_t bytes;
	struct dest *next;
};
#define DEST_BUCKETS 64
/* What a message counts against its destination: one more than its size,
 * so that an entry with empty messages outstanding is never freed. */
#define DEST_COST(len) ((size_t)(len) + 1)

struct failure {
	int stream;
	double down_at;              /* wall clock */
	double up_at;                /* 0 until the stream is back */
	double resent_at;            /* 0 until its lost blocks were sent again */
	uint64_t blocks;             /* blocks that had to be resent */
	char reason[64];
};

struct link {
	struct daemon *d;
	const struct config_peer *cfg; /* in d->cfg; &conf once retired */
	struct config_peer conf;     /* a retired link's, without its key: the daemon's config goes */
	const char *lost_why;        /* what senders of unacknowledged messages are told on a reset */
	const struct lds_transport_ops *ops;
	struct lds_transport *tp;
	struct stream *streams[CONFIG_MAX_STREAMS];
	unsigned nstreams;           /* slots in use: configured, or as the peer asked */
	unsigned up;                 /* streams in ST_UP */
	uint64_t next_try_ns[CONFIG_MAX_STREAMS];
	double backoff[CONFIG_MAX_STREAMS];
	struct probe_grid probe;     /* connecting side, while the path is lost */
	struct dial dial;            /* connecting side: the peer's addresses */
	unsigned rr;                 /* round robin for ACKs */
	/* streams = "auto" (connecting side): the chooser and its period. */
	struct autostreams *as;
	uint64_t as_start_ns, as_reached;
	unsigned as_ticks, as_busy, as_queued, as_disturbed;
	int as_refused;              /* a message waited for room since the last tick */

	uint64_t instance;           /* what the peer knows this session by: the daemon's, or fresh (link_new_session) */
	uint64_t peer_instance;
	uint32_t peer_max_msg;
	struct dest *dests[DEST_BUCKETS];
	size_t dest_cap;             /* undelivered bytes allowed per destination */
	struct sendbuf sb;
	struct recvbuf rb;
	struct lostrep lr;           /* our drops of the peer's messages (lostrep.h) */
	int ack_pending, kick_pending;
	int deliv_unreported;        /* deliveries no ACK has carried yet */
	uint64_t last_ack_ns;
	int shutting_down;

	uint64_t reconnects, resets, srtt_us, rtt_samples;
	uint64_t msgs_misrouted;     /* dropped: not from the peer's cluster to ours */
	uint64_t refused_logged;     /* last REFUSE code logged, to avoid log floods */
	double down_since;           /* wall clock when the last stream went, 0 if up */
	double downtime;             /* seconds with no stream up, since start */
	struct failure faillog[FAILLOG_MAX];
	unsigned nfail;              /* total failures; faillog holds the last FAILLOG_MAX */
	char last_error[96];         /* why the last stream that never came up failed */
};


static struct stream *pending_streams; /* accepted, not yet authenticated */

static void stream_close(struct stream *s, const char *why, int level_warn);
static void stream_flush(struct stream *s);
static void link_reconnect_later(struct link *l, int idx, uint64_t started_ns);
static void link_path_back(struct link *l, const struct stream *s);
static void link_stream_rtts(const struct link *l, uint32_t *now_us, uint32_t *min_us);
static void link_log_refused(struct link *l, const char *msg, uint64_t code);
static void link_connect_failed(struct stream *s, const char *why);
static void link_dial_ready(void *arg);
static void link_connect_slot(struct link *l, unsigned idx);
static int link_auto_start(struct link *l);

const char *link_name(const struct link *l)
{
	return l->cfg->cluster;
}

/* The transport options this link's streams use. */
static struct lds_tp_opts link_tp_opts(const struct link *l)
{
	struct lds_tp_opts o = { .connect_timeout = l->cfg->connect_timeout, .conf = l->cfg->tp_conf };

	o.unsent_max = LINK_UNSENT_MAX;
	return o;
}

struct link *link_find(struct daemon *d, const char *cluster)
{
	for (size_t i = 0; i < d->nlinks; i++)
		if (strcmp(d->links[i]->cfg->cluster, cluster) == 0)
			return d->links[i];
	return NULL;
}

size_t link_recv_memory(const struct link *l)
{
	return l->cfg->recv_memory;
}

size_t link_max_msg(const struct link *l)
{
	size_t own = l->cfg->send_memory / 2;

	if (own > l->cfg->recv_memory / 2)
		own = l->cfg->recv_memory / 2;
	if (own > WIRE_MAX_MSG)
		own = WIRE_MAX_MSG;
	if (l->peer_max_msg && l->peer_max_msg < own)
		own = l->peer_max_msg;
	return own;
}

int link_idle(const struct link *l)
{
	return sendbuf_idle(&l->sb);
}

/* ---- per-destination credit ------------------------------------------- */

static struct dest **dest_slot(struct link *l, const char *name)
{
	unsigned h = 5381;
	struct dest **pp;

	for (const char *p = name; *p; p++)
		h = h * 33 + (unsigned char)*p;
	for (pp = &l->dests[h % DEST_BUCKETS]; *pp; pp = &(*pp)->next)
		if (strcmp((*pp)->name, name) == 0)
			break;
	return pp;
}

static struct dest *dest_get(struct link *l, const char *name)
{
	struct dest **pp = dest_slot(l, name);

	if (*pp == NULL && strlen(name) <= WIRE_ENDPOINT_MAX) {
		*pp = calloc(1, sizeof(**pp));
		if (*pp)
			memcpy((*pp)->name, name, strlen(name) + 1);
	}
	return *pp;
}

static void dest_sub(struct link *l, struct dest *d, size_t len)
{
	struct dest **pp;

	d->bytes -= len;
	if (d->bytes > 0)
		return;
	pp = dest_slot(l, d->name);
	*pp = d->next;
	free(d);
}

/* ---- upcalls from sendbuf/recvbuf and the sink ----------------------- */

/* The peer knows of our drop of its messages first..last: our ACKs may
 * count them settled now. */
static void link_settle(void *arg, uint64_t first, uint64_t last)
{
	struct link *l = arg;

	if (recvbuf_settle(&l->rb, first, last) < 0)
		log_warnx("link %s: out of memory recording dropped messages", link_name(l));
	l->ack_pending = 1;
	l->deliv_unreported = 1;
}

static void on_delivered(void *arg, const struct sb_msg *m)
{
	struct link *l = arg;

	dest_sub(l, m->tag, DEST_COST(m->len));
	if (m->client == LOSTREP_CLIENT)
		lostrep_confirmed(&l->lr, m->id, link_settle, l);
	else
		l->d->sink.acked(l->d->sink.arg, m->client, m->id);
}

static void link_lost(struct link *l, const struct sb_msg *m, const char *why)
{
	dest_sub(l, m->tag, DEST_COST(m->len));
	l->d->sink.lost(l->d->sink.arg, l, m->client, m->id, why);
}

static void on_lost(void *arg, const struct sb_msg *m)
{
	struct link *l = arg;

	link_lost(l, m, l->lost_why);
}

/* Lost by the peer's report, for the reason in lr.why. */
static void on_lost_reported(void *arg, const struct sb_msg *m)
{
	struct link *l = arg;

	link_lost(l, m, ep_drop_reasons[l->lr.why]);
}

/* A peer may only send from its own cluster to ours: a record claiming
 * another source would let it speak for a third cluster, one for another
 * destination would sit in our memory for ever.  Such a message is dropped
 * (and counted) rather than the stream closed, because the same block
 * would come again after every reconnect and stop the link for good. */
static void on_message(void *arg, struct rb_msg *m)
{
	struct link *l = arg;

	if (!wire_record_between(&m->rec, link_name(l), l->d->cfg->cluster)) {
		log_warnx("link %s: dropped a message from \"%s\" to \"%s\": a peer may only send from cluster %s "
			  "to cluster %s; the peer's gateway is misbehaving", link_name(l), m->rec.src, m->rec.dst,
			  link_name(l), l->d->cfg->cluster);
		l->msgs_misrouted++;
		link_delivered(l, m);
		return;
	}
	l->d->sink.deliver(l->d->sink.arg, l, m);
}

void link_delivered(struct link *l, struct rb_msg *m)
{
	if (recvbuf_delivered(&l->rb, m) < 0)
		log_warnx("link %s: out of memory recording a delivery; the peer will see it later", link_name(l));
	l->ack_pending = 1;
	l->deliv_unreported = 1;
}

int link_send_from(struct link *l, const struct wire_record *rec, sb_fill_fn *fill, void *arg, uint64_t client)
{
	struct dest *d;
	int r;

	if (l->shutting_down)
		return -ENOTCONN;
	if (rec->len > link_max_msg(l))
		return -EMSGSIZE;
	d = dest_get(l, rec->dst);
	if (d == NULL)
		return -ENOMEM;
	/* A destination with nothing outstanding may always take one message,
	 * however large: the cap must not make a message unsendable. */
	if (d->bytes > 0 && d->bytes + DEST_COST(rec->len) > l->dest_cap) {
		l->as_refused = 1;
		return -ENOSPC;
	}
	r = sendbuf_append_from(&l->sb, rec, fill, arg, client, d);
	if (r < 0) {
		l->as_refused |= r == -ENOSPC;
		if (d->bytes == 0)
			dest_sub(l, d, 0);
		return r;
	}
	d->bytes += DEST_COST(rec->len);
	l->kick_pending = 1;
	return 0;
}

int link_send(struct link *l, const struct wire_record *rec, const void *payload, uint64_t client)
{
	return link_send_from(l, rec, sendbuf_fill_copy, (void *)payload, client);
}

/* ---- undelivered messages (lostrep.h) ---------------------------------- */

void link_undelivered(struct link *l, struct rb_msg *m, enum ep_drop why)
{
	uint64_t msgno = m->msgno;

	if (recvbuf_discard(&l->rb, m) && lostrep_add(&l->lr, msgno, why) < 0)
		log_warnx("link %s: out of memory recording a dropped message", link_name(l));
	l->ack_pending = 1;
}

/* Sends what lostrep has pending, as far as send memory allows; the rest
 * goes on a later round. */
static void link_send_lostrep(struct link *l)
{
	uint8_t buf[LOSTREP_MAX_LEN];
	struct wire_record rec = { .incarnation = l->instance };
	size_t n;

	snprintf(rec.src, sizeof(rec.src), "%s/%s", l->d->cfg->cluster, LOSTREP_ENDPOINT);
	snprintf(rec.dst, sizeof(rec.dst), "%s/%s", link_name(l), LOSTREP_ENDPOINT);
	while ((n = lostrep_encode(&l->lr, buf, &rec.msg_id)) > 0) {
		rec.len = (uint32_t)n;
		if (link_send(l, &rec, buf, LOSTREP_CLIENT) < 0)
			return;
		lostrep_sent(&l->lr, rec.msg_id);
	}
}

static void on_peer_lost(void *arg, uint64_t first, uint64_t last, unsigned reason)
{
	struct link *l = arg;

	l->lr.why = (enum ep_drop)reason;
	sendbuf_msgs_lost(&l->sb, first, last, on_lost_reported, l);
}

void link_peer_lost(struct link *l, struct rb_msg *m)
{
	char own[WIRE_ENDPOINT_MAX + 1];

	snprintf(own, sizeof(own), "%s/%s", link_name(l), LOSTREP_ENDPOINT);
	/* Only the peer gateway itself speaks from its ldsd.lost endpoint: no
	 * client may open an ldsd.* name. */
	if (strcmp(m->rec.src, own) != 0 || lostrep_decode(m->data, m->rec.len, on_peer_lost, l) < 0)
		log_warnx("link %s: malformed report of undelivered messages from %s (%" PRIu32 " bytes): ignored",
			  link_name(l), m->rec.src, m->rec.len);
	link_delivered(l, m);
}

/* ---- control frames ---------------------------------------------------- */

/* What a sealed stream may hold unwritten: a batch of blocks and the
 * control frames queued behind it. */
static size_t stream_sealed_max(const struct stream *s)
{
	return CTL_CAP + STREAM_BATCH * (WIRE_DATA_HDR_LEN + s->link->cfg->block_size + SEAL_OVERHEAD);
}

/* Appends a control frame to the stream's queue; -ENOBUFS if it is full. */
static int stream_queue(struct stream *s, const uint8_t *frame, size_t len)
{
	if (len == 0)
		return -EINVAL;
	if (s->aead)
		return sealq_put(&s->sq, frame, len, stream_sealed_max(s));
	if (s->ctl_off > 0 && s->ctl_len + len > CTL_CAP) {
		memmove(s->ctl, s->ctl + s->ctl_off, s->ctl_len - s->ctl_off);
		s->ctl_len -= s->ctl_off;
		s->ctl_off = 0;
	}
	if (s->ctl_len + len > CTL_CAP)
		return -ENOBUFS;
	memcpy(s->ctl + s->ctl_len, frame, len);
	s->ctl_len += len;
	return 0;
}

static void stream_refuse(struct stream *s, enum wire_refuse code, const char *reason)
{
	struct wire_refuse_msg r = { .code = (uint16_t)code };
	uint8_t buf[WIRE_HDR_LEN + 4 + WIRE_REASON_MAX];
	size_t n;

	snprintf(r.reason, sizeof(r.reason), "%s", reason);
	n = wire_encode_refuse(buf, sizeof(buf), &r);
	if (n > 0 && stream_queue(s, buf, n) == 0)
		stream_flush(s);
}

/* Queues an ACK with the link's receiving state on s. */
static int stream_queue_ack(struct stream *s)
{
	struct wire_ack a;
	uint8_t buf[WIRE_HDR_LEN + 32 + 32 * WIRE_MAX_RANGES];
	size_t n;

	recvbuf_ack(&s->link->rb, &a);
	n = wire_encode_ack(buf, sizeof(buf), &a);
	if (n == 0 || stream_queue(s, buf, n) < 0)
		return -ENOBUFS;
	return 0;
}

static int stream_send_ack(struct stream *s)
{
	struct link *l = s->link;

	if (stream_queue_ack(s) < 0)
		return -ENOBUFS;
	l->ack_pending = 0;
	l->deliv_unreported = 0;
	l->last_ack_ns = clock_now_ns();
	return 0;
}

/* ---- writing -------------------------------------------------------------- */

static void stream_broken_io(struct stream *s, int err)
{
	char why[64];

	snprintf(why, sizeof(why), "%s", err == -EPIPE ? "closed by peer" : strerror(-err));
	stream_close(s, why, 1);
}

/* Closes s if a write failed; returns 1 if it did (s is gone). */
static int stream_failed(struct stream *s)
{
	if (!s->failed)
		return 0;
	stream_broken_io(s, s->failed);
	return 1;
}

/* Takes blocks to write once the previous batch is gone, so that a stream
 * that cannot write holds few blocks back from the others: as many as its
 * last writes took whole, doubling up to STREAM_BATCH, one after a short
 * write.  A stream just up, or slowed down, holds one block that the
 * receiver may wait for, not a batch. */
static void stream_take_blocks(struct stream *s)
{
	struct link *l = s->link;

	if (s->nout > 0 || s->st != ST_UP || l == NULL || l->shutting_down || (unsigned)s->idx >= l->nstreams)
		return;
	while (s->nout < s->take) {
		struct sb_block *b = sendbuf_next(&l->sb, s->idx, 1);

		if (b == NULL)
			break;
		s->out[s->nout++] = b;
	}
}

/* Accounts for `sent` bytes of data frames written. */
static void stream_wrote_blocks(struct stream *s, size_t sent)
{
	while (sent > 0 && s->nout > 0) {
		size_t left = WIRE_DATA_HDR_LEN + s->out[0]->len - s->out_off;
		size_t took = sent < left ? sent : left;

		s->out_off += took;
		sent -= took;
		if (took < left)
			break;
		sendbuf_release(&s->link->sb, s->out[0]);
		memmove(s->out, s->out + 1, (size_t)(s->nout - 1) * sizeof(s->out[0]));
		s->nout--;
		s->out_off = 0;
	}
}

/* What to write next in clear (encryption = "none"): control frames,
 * then blocks straight from the send buffer.  Returns the iovecs filled;
 * *ctl_part is the control frames' share. */
static int stream_iov_clear(struct stream *s, struct iovec *iov, size_t *ctl_part, int *more)
{
	size_t off = s->out_off;
	int n = 0;

	stream_take_blocks(s);
	/* Control frames go first unless a data frame is half written:
	 * frames must never interleave. */
	if (s->ctl_len > s->ctl_off && (s->nout == 0 || s->out_off == 0)) {
		*ctl_part = s->ctl_len - s->ctl_off;
		iov[n].iov_base = s->ctl + s->ctl_off;
		iov[n++].iov_len = *ctl_part;
	}
	for (int i = 0; i < s->nout; i++, off = 0) {
		struct sb_block *b = s->out[i];

		if (off < WIRE_DATA_HDR_LEN) {
			iov[n].iov_base = b->hdr + off;
			iov[n++].iov_len = WIRE_DATA_HDR_LEN - off;
			off = WIRE_DATA_HDR_LEN;
		}
		iov[n].iov_base = b->data + (off - WIRE_DATA_HDR_LEN);
		iov[n++].iov_len = b->len - (off - WIRE_DATA_HDR_LEN);
	}
	/* A full batch with more behind it: the next write continues
	 * the packet this one ends with. */
	*more = s->nout > 0 && s->nout == s->take && sendbuf_has_next(&s->link->sb, 1);
	return n;
}

static void stream_wrote_clear(struct stream *s, size_t sent, size_t ctl_part)
{
	if (sent <= ctl_part) {
		s->ctl_off += sent;
		sent = 0;
	} else {
		s->ctl_off += ctl_part;
		sent -= ctl_part;
	}
	if (s->ctl_off == s->ctl_len)
		s->ctl_off = s->ctl_len = 0;
	stream_wrote_blocks(s, sent);
}

/* What to write next on a sealed stream: the queue, where the next batch
 * of blocks is sealed once the last one is written (a control frame
 * queued meanwhile waits behind at most that batch).  Returns the iovecs
 * filled (0 or 1), or -EIO if sealing failed. */
static int stream_iov_sealed(struct stream *s, struct iovec *iov, int *more)
{
	if (sealq_pending(&s->sq) == 0) {
		int full;

		stream_take_blocks(s);
		full = s->nout > 0 && s->nout == s->take;
		for (int i = 0; i < s->nout; i++) {
			struct sb_block *b = s->out[i];
			int r = sealq_put_data(&s->sq, b->seq, b->data, b->len);

			sendbuf_release(&s->link->sb, b);
			if (r < 0) {
				memmove(s->out, s->out + i + 1, (size_t)(s->nout - i - 1) * sizeof(s->out[0]));
				s->nout -= i + 1;
				return -EIO;
			}
		}
		s->nout = 0;
		s->sq_more = full && sendbuf_has_next(&s->link->sb, 1);
	}
	*more = s->sq_more;
	if (sealq_pending(&s->sq) == 0)
		return 0;
	iov[0].iov_base = (void *)sealq_data(&s->sq);
	iov[0].iov_len = sealq_pending(&s->sq);
	return 1;
}

/* Writes queued control frames and data blocks until the transport pushes
 * back or nothing is left.  Never closes s: a write error is left in
 * s->failed for the caller. */
static void stream_flush(struct stream *s)
{
	if (s->failed || s->stalled)
		return;
	for (int rounds = 0; rounds < 64; rounds++) {
		struct iovec iov[1 + 2 * STREAM_BATCH];
		int n, r, more = 0;
		size_t sent, ctl_part = 0, offered = 0;

		n = s->aead ? stream_iov_sealed(s, iov, &more) : stream_iov_clear(s, iov, &ctl_part, &more);
		if (n < 0) {
			s->failed = n;
			return;
		}
		for (int i = 0; i < n; i++)
			offered += iov[i].iov_len;
		if (n == 0) {
			if (s->corked)
				s->ops->push(s->conn);
			s->corked = 0;
			s->blocked = 0;
			s->ops->want_write(s->conn, 0);
			return;
		}
		r = s->ops->send(s->conn, iov, n, more ? LDS_TP_MORE : 0, &sent);
		if (r == -EAGAIN) {
			s->take = 1;
			s->blocked = 1;
			s->ops->want_write(s->conn, 1);
			return;
		}
		s->corked = more;
		if (r < 0) {
			/* Closing here would free s under our callers' feet;
			 * they check s->failed (stream_failed). */
			s->failed = r;
			return;
		}
		s->take = sent < offered ? 1 : s->take * 2 < STREAM_BATCH ? s->take * 2 : STREAM_BATCH;
		if (s->aead)
			sealq_sent(&s->sq, sent);
		else
			stream_wrote_clear(s, sent, ctl_part);
	}
	/* Plenty written this round; let other fds have a turn. */
	s->ops->want_write(s->conn, 1);
}

/* ---- stream lifetime --------------------------------------------------- */

static struct stream *stream_new(struct daemon *d, const struct lds_transport_ops *ops)
{
	struct stream *s = calloc(1, sizeof(*s));

	if (s == NULL)
		return NULL;
	s->d = d;
	s->ops = ops;
	s->idx = -1;
	s->created_ns = s->last_rx_ns = clock_now_ns();
	return s;
}

/* An accepted stream authenticated (why NULL) or failed (why logged by
 * admission, rate-limited): it no longer counts against the limits on
 * connections before authentication. */
static void stream_unpend(struct stream *s, const char *why)
{
	if (!s->unauth)
		return;
	s->unauth = 0;
	for (struct stream **pp = &pending_streams; *pp; pp = &(*pp)->next_pending) {
		if (*pp == s) {
			*pp = s->next_pending;
			break;
		}
	}
	admission_release(s->d->adm, s->peer_addr, s->link ? link_name(s->link) : NULL, why, clock_now_ns());
}

static void faillog_open(struct link *l, int idx, const char *why, uint64_t blocks)
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

/* The slot came back: its latest open failure is over. */
static void faillog_up(struct link *l, int idx)
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

/* No block waits for a resend: every open failure is recovered. */
static void faillog_resent(struct link *l)
{
	unsigned n = l->nfail < FAILLOG_MAX ? l->nfail : FAILLOG_MAX;
	double now = clock_wall_s();

	for (unsigned i = 0; i < n; i++)
		if (l->faillog[i].resent_at == 0)
			l->faillog[i].resent_at = now;
}

static void stream_close(struct stream *s, const char *why, int level_warn)
{
	struct link *l = s->link;

	stream_unpend(s, why);
	if (l == NULL) {
		log_debug("connection from %s closed before it was identified: %s", s->peer_addr, why);
	} else {
		size_t lost = 0;

		for (int i = 0; i < s->nout; i++)
			sendbuf_release(&l->sb, s->out[i]);
		s->nout = 0;
		if (s->idx >= 0 && l->streams[s->idx] == s) {
			l->streams[s->idx] = NULL;
			if (s->st == ST_UP) {
				lost = sendbuf_stream_lost(&l->sb, s->idx);
				l->up--;
				if (l->up == 0)
					l->down_since = clock_wall_s();
				if (!s->retired)
					faillog_open(l, s->idx, why, lost);
				l->kick_pending = 1;
				l->ack_pending = 1;
			}
			if (!l->shutting_down)
				link_reconnect_later(l, s->idx, s->created_ns);
		}
		if (s->st == ST_UP) {
			if (level_warn)
				log_warnx("link %s: stream %d to %s broken (%s); %zu blocks to resend, %u streams up",
					  link_name(l), s->idx, s->peer_addr, why, lost, l->up);
			else
				log_info("link %s: stream %d to %s closed (%s)", link_name(l), s->idx, s->peer_addr,
					 why);
		} else {
			log_debug("link %s: stream %d (%s) failed: %s", link_name(l), s->idx, st_names[s->st], why);
			snprintf(l->last_error, sizeof(l->last_error), "%s: %s", st_names[s->st], why);
		}
	}
	if (s->conn)
		s->ops->close(s->conn);
	sealq_free(&s->sq);
	free(s->rx);
	free(s);
}

static void stream_up(struct stream *s)
{
	struct link *l = s->link;

	s->st = ST_UP;
	s->take = 1;
	s->up_ns = s->last_ping_ns = clock_now_ns();
	l->up++;
	l->backoff[s->idx] = l->cfg->reconnect_min;
	if (l->down_since > 0) {
		l->downtime += clock_wall_s() - l->down_since;
		l->down_since = 0;
	}
	faillog_up(l, s->idx);
	l->refused_logged = 0;
	log_info("link %s: stream %d up (%s), %u of %u streams up", link_name(l), s->idx, s->peer_addr, l->up,
		 l->nstreams);
	/* The peer needs our window before it can send anything.  Nothing is
	 * written yet: link_flush writes it, with the first blocks, once the
	 * frames that came with the handshake's last one are read, among
	 * them the peer's ACK (ldsd sends it with READY).  Blocks picked
	 * before it could start with those the peer received while its ACKs
	 * were lost (up to a round trip of them after an outage), each one
	 * ahead of the lowest block the peer waits for in a new connection's
	 * small window. */
	stream_send_ack(s);
	l->kick_pending = 1;
}

/* Peer instance check after authentication: a new instance lost its state. */
static void link_check_instance(struct link *l, uint64_t instance, struct stream *keep)
{
	if (l->peer_instance == instance)
		return;
	if (l->peer_instance != 0) {
		log_warnx("link %s: peer gateway restarted (instance %016" PRIx64 " -> %016" PRIx64
			  "); resetting the session, unacknowledged messages are reported lost",
			  link_name(l), l->peer_instance, instance);
		for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++)
			if (l->streams[i] && l->streams[i] != keep)
				stream_close(l->streams[i], "peer restarted", 0);
		sendbuf_reset(&l->sb, on_lost, l);
		recvbuf_reset(&l->rb);
		lostrep_reset(&l->lr);
		l->resets++;
		l->d->sink.space(l->d->sink.arg, l);
	}
	l->peer_instance = instance;
}

/* The back-off counts from when the failed attempt started: an attempt
 * that timed out has waited long enough already. */
static void link_reconnect_later(struct link *l, int idx, uint64_t started_ns)
{
	double b = l->backoff[idx];

	if (l->cfg->role != CONFIG_ROLE_CONNECT || (unsigned)idx >= l->nstreams)
		return;
	if (probe_active(&l->probe)) {
		l->next_try_ns[idx] = probe_next(&l->probe, (unsigned)idx, started_ns);
		return;
	}
	l->next_try_ns[idx] = started_ns + (uint64_t)(b * 1e9);
	b *= 2;
	l->backoff[idx] = b > l->cfg->reconnect_max ? l->cfg->reconnect_max : b;
}

/* ---- handshake ---------------------------------------------------------- */

/* The link's encryption setting as HELLO and CHALLENGE carry it. */
static uint8_t link_encryption(const struct link *l)
{
	return l->cfg->encryption == CONFIG_ENC_AEAD ? WIRE_ENC_AEAD : WIRE_ENC_NONE;
}

static const char *encryption_name(uint8_t e)
{
	return e == WIRE_ENC_AEAD ? "aead" : "none";
}

static int hs_send_hello(struct stream *s)
{
	struct link *l = s->link;
	struct wire_hello h = { 0 };
	uint8_t buf[WIRE_HDR_LEN + HELLO_MAX];
	size_t n;

	if (auth_random(h.nonce, sizeof(h.nonce)) < 0)
		return -EIO;
	h.stream_idx = (uint16_t)s->idx;
	h.nstreams = (uint16_t)l->nstreams;
	h.max_msg = (uint32_t)(l->cfg->recv_memory / 2 > WIRE_MAX_MSG ? WIRE_MAX_MSG : l->cfg->recv_memory / 2);
	h.instance = l->instance;
	h.encryption = link_encryption(l);
	snprintf(h.from, sizeof(h.from), "%s", l->d->cfg->cluster);
	snprintf(h.to, sizeof(h.to), "%s", l->cfg->cluster);
	n = wire_encode_hello(buf, sizeof(buf), &h);
	if (n == 0)
		return -EIO;
	/* Kept for the transcript hash (auth.h). */
	s->hello_len = n - WIRE_HDR_LEN;
	memcpy(s->hello, buf + WIRE_HDR_LEN, s->hello_len);
	s->aead = h.encryption == WIRE_ENC_AEAD;
	if (stream_queue(s, buf, n) < 0)
		return -EIO;
	s->st = ST_HELLO_SENT;
	return 0;
}

static void transport_connected(struct lds_tp_conn *c, int err, void *ud)
{
	struct stream *s = ud;

	if (err < 0) {
		s->conn = NULL; /* already gone, per transport.h */
		link_connect_failed(s, strerror(-err));
		return;
	}
	dial_up(&s->link->dial, s->peer_addr);
	if (s->ops->query) {
		struct lds_tp_info info;

		if (s->ops->query(c, &info) == 0)
			snprintf(s->peer_addr, sizeof(s->peer_addr), "%s", info.peer);
	}
	s->last_rx_ns = clock_now_ns();
	if (hs_send_hello(s) < 0) {
		stream_close(s, "cannot build HELLO", 1);
		return;
	}
	stream_flush(s);
	if (stream_failed(s))
		return;
	if (probe_active(&s->link->probe))
		link_path_back(s->link, s);
}

static void link_log_refused(struct link *l, const char *msg, uint64_t code)
{
	/* Repeated refusals while reconnecting would flood the log: say it
	 * once per distinct reason until the link comes up again. */
	if (l->refused_logged == code)
		return;
	l->refused_logged = code;
	log_warnx("%s", msg);
}

/* The listener refuses an unauthenticated stream: reason goes to the peer,
 * why to the log, through admission's rate limit. */
static void hs_refuse(struct stream *s, enum wire_refuse code, const char *reason, const char *why)
{
	stream_refuse(s, code, reason);
	stream_unpend(s, why);
}

static int hs_on_hello(struct stream *s, const struct wire_frame *f)
{
	struct daemon *d = s->d;
	struct wire_hello h;
	struct wire_challenge c = { 0 };
	const struct config_peer *pc;
	struct link *l;
	uint8_t buf[WIRE_HDR_LEN + 128 + WIRE_NAME_MAX];
	size_t n;

	if (wire_decode_hello(f, &h) < 0) {
		hs_refuse(s, WIRE_REFUSE_PROTOCOL, "malformed HELLO", "malformed HELLO; refused");
		return -1;
	}
	l = link_find(d, h.from);
	pc = l ? l->cfg : NULL;
	if (pc == NULL || pc->role != CONFIG_ROLE_LISTEN || strcmp(h.to, d->cfg->cluster) != 0) {
		char why[3 * WIRE_NAME_MAX + CONFIG_PATH_MAX + 128];

		snprintf(why, sizeof(why), "refused: cluster \"%s\" asking for \"%s\" is not a listen peer of "
			 "cluster \"%s\" in %s", h.from, h.to, d->cfg->cluster, d->cfg->file);
		hs_refuse(s, WIRE_REFUSE_CLUSTER, "unknown cluster", why);
		return -1;
	}
	s->link = l;
	if (h.nstreams == 0 || h.nstreams > CONFIG_MAX_STREAMS || h.stream_idx >= h.nstreams) {
		char why[96];

		snprintf(why, sizeof(why), "refused: stream %u of %u is out of range", h.stream_idx, h.nstreams);
		hs_refuse(s, WIRE_REFUSE_STREAMS, "stream index out of range", why);
		return -1;
	}
	if (h.encryption != link_encryption(l)) {
		char why[CONFIG_PATH_MAX + 160], reason[128];

		snprintf(why, sizeof(why), "refused: the peer has encryption = \"%s\", this gateway \"%s\" (%s): set the "
			 "same on both gateways", encryption_name(h.encryption), encryption_name(link_encryption(l)),
			 d->cfg->file);
		snprintf(reason, sizeof(reason), "encryption mismatch: you have \"%s\", %s has \"%s\"",
			 encryption_name(h.encryption), d->cfg->cluster, encryption_name(link_encryption(l)));
		hs_refuse(s, WIRE_REFUSE_ENCRYPTION, reason, why);
		return -1;
	}
	s->aead = h.encryption == WIRE_ENC_AEAD;
	if (s->ops->set_opts) {
		struct lds_tp_opts o = link_tp_opts(l);
		int r = s->ops->set_opts(s->conn, &o);

		if (r < 0)
			log_warnx("link %s: connection from %s keeps some of the kernel's defaults: cannot apply its %s "
				  "settings: %s", link_name(l), s->peer_addr, s->ops->name, strerror(-r));
	}
	s->peer_instance = h.instance;
	s->peer_max_msg = h.max_msg;
	s->peer_idx = h.stream_idx;
	s->peer_nstreams = h.nstreams;
	if (auth_random(c.nonce, sizeof(c.nonce)) < 0)
		return -1;
	c.max_msg = (uint32_t)(pc->recv_memory / 2 > WIRE_MAX_MSG ? WIRE_MAX_MSG : pc->recv_memory / 2);
	c.instance = l->instance;
	c.encryption = h.encryption;
	snprintf(c.from, sizeof(c.from), "%s", d->cfg->cluster);
	/* MAC_L covers the whole transcript: the CHALLENGE is encoded once
	 * without it to be hashed, then again with it. */
	n = wire_encode_challenge(buf, sizeof(buf), &c);
	if (n == 0 || auth_transcript(f->payload, f->len, buf + WIRE_HDR_LEN, n - WIRE_HDR_LEN, s->th) < 0 ||
	    auth_mac(AUTH_LISTENER, pc->key, pc->key_len, s->th, c.mac) < 0)
		return -1;
	n = wire_encode_challenge(buf, sizeof(buf), &c);
	if (n == 0 || stream_queue(s, buf, n) < 0)
		return -1;
	s->st = ST_CHALLENGE_SENT;
	stream_flush(s);
	return 0;
}

/* Puts an authenticated stream into its slot, replacing a stale one. */
static void link_attach(struct link *l, struct stream *s, unsigned idx)
{
	if (l->streams[idx] && l->streams[idx] != s)
		stream_close(l->streams[idx], "replaced by a new connection", 0);
	s->idx = (int)idx;
	l->streams[idx] = s;
	if (s->peer_max_msg)
		l->peer_max_msg = s->peer_max_msg;
}

static int hs_on_challenge(struct stream *s, const struct wire_frame *f)
{
	struct link *l = s->link;
	struct daemon *d = s->d;
	struct wire_challenge c;
	struct wire_auth a;
	uint8_t buf[WIRE_HDR_LEN + WIRE_MAC_LEN];
	char msg[1024];
	size_t n;

	if (wire_decode_challenge(f, &c) < 0) {
		log_warnx("link %s: malformed CHALLENGE from %s", link_name(l), s->peer_addr);
		return -1;
	}
	if (strcmp(c.from, l->cfg->cluster) != 0) {
		snprintf(msg, sizeof(msg), "link %s: %s answered as cluster \"%s\"; check address/port in %s",
			 link_name(l), s->peer_addr, c.from, d->cfg->file);
		link_log_refused(l, msg, 1000);
		stream_refuse(s, WIRE_REFUSE_CLUSTER, "unexpected cluster name");
		return -1;
	}
	if (c.encryption != link_encryption(l)) {
		snprintf(msg, sizeof(msg), "link %s: %s answered with encryption = \"%s\", this gateway has \"%s\" "
			 "(%s): set the same on both gateways", link_name(l), s->peer_addr,
			 encryption_name(c.encryption), encryption_name(link_encryption(l)), d->cfg->file);
		link_log_refused(l, msg, 1003);
		stream_refuse(s, WIRE_REFUSE_ENCRYPTION, "encryption mismatch");
		return -1;
	}
	if (auth_transcript(s->hello, s->hello_len, f->payload, f->len, s->th) < 0 ||
	    !auth_verify(AUTH_LISTENER, l->cfg->key, l->cfg->key_len, s->th, c.mac)) {
		snprintf(msg, sizeof(msg), "link %s: %s failed authentication (wrong key? compare %s on both gateways; "
			 "else the handshake was altered on the way)",
			 link_name(l), s->peer_addr, l->cfg->key_file);
		link_log_refused(l, msg, 1001);
		/* Tell the listener, so that both logs say what is wrong. */
		stream_refuse(s, WIRE_REFUSE_AUTH, "authentication failed: your proof does not verify with our key");
		return -1;
	}
	if (auth_mac(AUTH_CONNECTOR, l->cfg->key, l->cfg->key_len, s->th, a.mac) < 0)
		return -1;
	n = wire_encode_auth(buf, sizeof(buf), &a);
	if (n == 0 || stream_queue(s, buf, n) < 0)
		return -1;
	/* Everything after AUTH is sealed (docs/protocol.md, "Sealed frames"). */
	if (s->aead && seal_init(&s->sq.seal, AUTH_CONNECTOR, l->cfg->key, l->cfg->key_len, s->th) < 0)
		return -1;
	s->peer_max_msg = c.max_msg;
	/* The listener is authentic: a new instance there lost its state, and
	 * our session is reset before the ACK below describes it. */
	link_check_instance(l, c.instance, s);
	/* Our ACK goes with AUTH (docs/protocol.md, Handshake), so that the
	 * listener knows our window and what we hold before its first block:
	 * a round trip sooner than after READY, and without resending first
	 * what we received while its ACKs were lost.  It only reports state,
	 * so the flags that make link_flush send ACKs stay as they are in
	 * case the listener refuses. */
	if (stream_queue_ack(s) < 0)
		return -1;
	s->st = ST_AUTH_SENT;
	stream_flush(s);
	return 0;
}

static int hs_on_auth(struct stream *s, const struct wire_frame *f)
{
	struct link *l = s->link;
	struct wire_auth a;
	uint8_t buf[WIRE_HDR_LEN];
	size_t n;

	if (wire_decode_auth(f, &a) < 0 || !auth_verify(AUTH_CONNECTOR, l->cfg->key, l->cfg->key_len, s->th, a.mac)) {
		char why[CONFIG_PATH_MAX + 96];

		snprintf(why, sizeof(why), "refused: authentication failed (wrong key? compare %s on both gateways)",
			 l->cfg->key_file);
		hs_refuse(s, WIRE_REFUSE_AUTH, "authentication failed", why);
		return -1;
	}
	stream_unpend(s, NULL);
	if (l->shutting_down) {
		stream_refuse(s, WIRE_REFUSE_SHUTDOWN, "gateway shutting down");
		return -1;
	}
	/* READY is the first sealed frame: it proves to the connector that
	 * we hold the key and saw the same transcript. */
	if (s->aead && seal_init(&s->sq.seal, AUTH_LISTENER, l->cfg->key, l->cfg->key_len, s->th) < 0)
		return -1;
	n = wire_encode_ready(buf, sizeof(buf));
	if (n == 0 || stream_queue(s, buf, n) < 0)
		return -1;
	link_check_instance(l, s->peer_instance, s);
	if (s->peer_nstreams > l->nstreams)
		l->nstreams = s->peer_nstreams;
	link_attach(l, s, s->peer_idx);
	stream_up(s);
	return 0;
}

static int hs_on_ready(struct stream *s)
{
	struct link *l = s->link;

	link_attach(l, s, (unsigned)s->idx);
	stream_up(s);
	return 0;
}

static void on_refuse(struct stream *s, const struct wire_frame *f)
{
	struct wire_refuse_msg r;
	char msg[1024];

	if (wire_decode_refuse(f, &r) < 0)
		snprintf(r.reason, sizeof(r.reason), "(malformed REFUSE)");
	if (s->unauth) {
		snprintf(msg, sizeof(msg), "it refused us: %s", r.reason);
		stream_unpend(s, msg);
		return;
	}
	if (s->link == NULL) {
		log_warnx("connection from %s refused us: %s", s->peer_addr, r.reason);
		return;
	}
	snprintf(msg, sizeof(msg), "link %s: peer %s refused the connection: %s", link_name(s->link),
		 s->peer_addr, r.reason);
	link_log_refused(s->link, msg, r.code);
}

/* ---- reading ------------------------------------------------------------ */

static void on_pong(struct stream *s, uint64_t t)
{
	struct link *l = s->link;
	uint64_t now = clock_now_ns(), us;

	if (t > now)
		return;
	us = (now - t) / 1000;
	/* RFC 6298 smoothing, alpha 1/8. */
	l->srtt_us = l->rtt_samples++ ? (7 * l->srtt_us + us) / 8 : us;
}

/* Handles one frame; returns -1 if the stream must be closed (after which
 * the caller must not touch s). */
static int stream_on_frame(struct stream *s, const struct wire_frame *f)
{
	struct link *l = s->link;
	uint8_t buf[WIRE_HDR_LEN + 8];

	if (f->type == WIRE_REFUSE) {
		on_refuse(s, f);
		return -1;
	}
	switch (s->st) {
	case ST_WAIT_HELLO:
		return f->type == WIRE_HELLO ? hs_on_hello(s, f) : -1;
	case ST_HELLO_SENT:
		return f->type == WIRE_CHALLENGE ? hs_on_challenge(s, f) : -1;
	case ST_CHALLENGE_SENT:
		return f->type == WIRE_AUTH ? hs_on_auth(s, f) : -1;
	case ST_AUTH_SENT:
		return f->type == WIRE_READY && f->len == 0 ? hs_on_ready(s) : -1;
	case ST_CONNECTING:
		return -1;
	case ST_UP:
		break;
	}
	switch (f->type) {
	case WIRE_DATA: {
		uint64_t seq;
		const uint8_t *data;
		uint32_t len;
		int r;

		if (wire_decode_data(f, &seq, &data, &len) < 0)
			return -1;
		r = recvbuf_block(&l->rb, seq, data, len, on_message, l);
		if (r < 0) {
			log_warnx("link %s: stream %d: block %" PRIu64 " rejected (%s): peer is misbehaving",
				  link_name(l), s->idx, seq, r == -EPROTO ? "outside the window or malformed records"
									  : strerror(-r));
			return -1;
		}
		l->ack_pending = 1;
		return 0;
	}
	case WIRE_ACK: {
		struct wire_ack a;

		if (wire_decode_ack(f, &a) < 0 || sendbuf_ack(&l->sb, &a, on_delivered, l) < 0) {
			log_warnx("link %s: stream %d: impossible ACK from %s: peer is misbehaving", link_name(l),
				  s->idx, s->peer_addr);
			return -1;
		}
		l->kick_pending = 1;
		l->d->sink.space(l->d->sink.arg, l);
		return 0;
	}
	case WIRE_PING: {
		uint64_t t;
		size_t n;

		if (wire_decode_ping(f, &t) < 0)
			return -1;
		n = wire_encode_ping(buf, sizeof(buf), WIRE_PONG, t);
		/* A full control queue means the peer is not reading: the
		 * inactivity timer handles that, not this PONG. */
		if (n > 0 && stream_queue(s, buf, n) == 0)
			stream_flush(s);
		return 0;
	}
	case WIRE_PONG: {
		uint64_t t;

		if (wire_decode_ping(f, &t) < 0)
			return -1;
		on_pong(s, t);
		return 0;
	}
	case WIRE_BYE:
		return -1;
	default:
		log_warnx("link %s: stream %d: unexpected %s frame", link_name(l), s->idx,
			  f->type < WIRE_TYPE_MAX ? wire_type_names[f->type] : "unknown");
		return -1;
	}
}

/* Before authentication a stream holds at most ADMISSION_RX_MAX bytes. */
static int stream_rx_reserve(struct stream *s, size_t need)
{
	size_t cap = s->st == ST_UP ? RX_INITIAL : ADMISSION_RX_MAX;
	uint8_t *p;

	if (cap < s->rx_cap)
		cap = s->rx_cap;
	while (cap < need)
		cap *= 2;
	if (cap == s->rx_cap)
		return 0;
	p = realloc(s->rx, cap);
	if (p == NULL)
		return -ENOMEM;
	s->rx = p;
	s->rx_cap = cap;
	return 0;
}

/* A frame that wire_frame_parse (or the direct read's CRC check) refused:
 * says why and closes s. */
static void stream_bad_frame(struct stream *s, int err, uint8_t version)
{
	const char *who = s->link ? link_name(s->link) : s->peer_addr;
	char why[96];

	if (err == -EPROTONOSUPPORT) {
		snprintf(why, sizeof(why), "speaks protocol version %u, we speak %u; upgrade one side", version,
			 WIRE_VERSION);
		stream_refuse(s, WIRE_REFUSE_VERSION, "protocol version not supported");
	} else {
		snprintf(why, sizeof(why), "bad frame (%s)", strerror(-err));
	}
	/* Unauthenticated streams are logged through admission's rate limit. */
	if (!s->unauth)
		log_warnx("%s: peer %s %s; closing the stream", who, s->peer_addr, why);
	stream_close(s, why, 1);
}

#define BAD_TAG "authentication failed (altered, replayed, reordered or injected) on a sealed"

/*
 * A frame that must be sealed and is not, or the reverse, or whose tag does
 * not verify: on a stream with keys, only the peer can seal, and only in
 * order (seal.h).  Says so, naming the link, and closes s: its blocks in
 * flight are resent on the other streams, nothing of the frame is used.
 */
static void stream_bad_seal(struct stream *s, const char *why, uint8_t type)
{
	log_warnx("link %s: stream %d: %s %s frame from %s; closing the stream", s->link ? link_name(s->link) : "?",
		  s->idx, why, type < WIRE_TYPE_MAX ? wire_type_names[type] : "unknown", s->peer_addr);
	stream_close(s, "sealed frame refused", 1);
}

/* Opens the sealed frame f at frame in place, or checks that an unsealed
 * one may be taken as it is.  0, or -1 after closing s. */
static int stream_unseal(struct stream *s, uint8_t *frame, struct wire_frame *f)
{
	const char *why;

	if (s->sq.seal.rx.ctx == NULL) {
		if (!f->sealed)
			return 0;
		why = "sealed before the stream has keys:";
	} else if (!f->sealed) {
		/* The listener refuses an AUTH that does not verify before it
		 * has keys, so the connector reads that refusal in clear. */
		if (f->type == WIRE_REFUSE && s->st == ST_AUTH_SENT)
			return 0;
		why = "refused an unsealed (injected?)";
	} else if (seal_open_frame(&s->sq.seal.rx, frame, f) == 0) {
		return 0;
	} else {
		why = BAD_TAG;
	}
	stream_bad_seal(s, why, f->type);
	return -1;
}

static int stream_recv(struct stream *s, const struct iovec *iov, int n, size_t *got)
{
	int r = s->ops->recv(s->conn, iov, n, got);

	s->pending = *got < s->pending ? s->pending - *got : 0;
	return r;
}

/* How much the next read takes: all there is room for, except in a train
 * of DATA frames, where it stops after the next frame's prefix, so that
 * each block can be read straight into its message (stream_read_direct). */
static size_t stream_read_size(const struct stream *s)
{
	size_t end = WIRE_DATA_HDR_LEN;

	if (!s->data_train)
		return s->rx_cap - s->rx_len;
	/* s->rx starts with the frame being read; its header is valid. */
	if (s->rx_len >= WIRE_HDR_LEN)
		end = WIRE_HDR_LEN + ((size_t)s->rx[4] << 24 | (size_t)s->rx[5] << 16 | (size_t)s->rx[6] << 8 | s->rx[7]) +
		      WIRE_DATA_HDR_LEN;
	if (end > s->rx_cap)
		end = s->rx_cap;
	return end > s->rx_len ? end - s->rx_len : s->rx_cap - s->rx_len;
}

/*
 * s->rx starts with a DATA frame, its prefix there and its block not all
 * there yet.  If its block can go straight to where it belongs (into the
 * message being reassembled, or where it is held until the blocks before
 * it arrive: recvbuf_place), and the rest of the frame is all waiting in
 * the socket, reads it there, with the next frame's prefix into s->rx: a
 * copy of every byte saved.  Whole frames only, so that no message is left
 * half-written while other streams run.  Returns 1 if it took the frame, 0
 * if not, -1 if it closed s.
 */
static int stream_read_direct(struct stream *s)
{
	struct link *l = s->link;
	uint8_t prefix[WIRE_DATA_HDR_LEN], tag[SEAL_OVERHEAD], *dst;
	uint64_t seq;
	uint32_t len;
	size_t have, body;
	int r, sealed;

	if (l == NULL || s->st != ST_UP || s->rx_len < WIRE_DATA_HDR_LEN ||
	    !wire_peek_data(s->rx, &seq, &len, &sealed) || s->rx_len - WIRE_DATA_HDR_LEN >= len ||
	    sealed != (s->sq.seal.rx.ctx != NULL))
		return 0;
	/* A sealed block is followed by its tag, read into tag. */
	body = len + (sealed ? SEAL_OVERHEAD : 0);
	have = s->rx_len - WIRE_DATA_HDR_LEN;
	dst = recvbuf_place(&l->rb, seq, len);
	if (dst != NULL && s->pending < body - have)
		s->pending = s->ops->pending(s->conn);
	if (dst == NULL || s->pending < body - have)
		return 0;
	memcpy(prefix, s->rx, WIRE_DATA_HDR_LEN);
	memcpy(dst, s->rx + WIRE_DATA_HDR_LEN, have);
	s->rx_len = 0;
	while (have < body) {
		struct iovec iov[3];
		size_t got;
		int n = 0;

		if (have < len)
			iov[n++] = (struct iovec){ dst + have, len - have };
		if (body > len)
			iov[n++] = have < len ? (struct iovec){ tag, SEAL_OVERHEAD }
					      : (struct iovec){ tag + (have - len), body - have };
		iov[n++] = (struct iovec){ s->rx, WIRE_DATA_HDR_LEN };
		r = stream_recv(s, iov, n, &got);
		if (r == -EAGAIN) {
			/* Not all there after all: back to s->rx, the usual way. */
			memcpy(s->rx, prefix, WIRE_DATA_HDR_LEN);
			memcpy(s->rx + WIRE_DATA_HDR_LEN, dst, have < len ? have : len);
			if (have > len)
				memcpy(s->rx + WIRE_DATA_HDR_LEN + len, tag, have - len);
			s->rx_len = WIRE_DATA_HDR_LEN + have;
			return 0;
		}
		if (r < 0) {
			stream_broken_io(s, r);
			return -1;
		}
		if (got > body - have)
			s->rx_len = got - (body - have);
		have += got - s->rx_len;
	}
	s->last_rx_ns = clock_now_ns();
	if (sealed ? seal_open(&s->sq.seal.rx, prefix, WIRE_DATA_HDR_LEN, dst, len, tag) < 0
		   : !wire_data_intact(prefix, dst, len)) {
		if (sealed)
			stream_bad_seal(s, BAD_TAG, WIRE_DATA);
		else
			stream_bad_frame(s, -EBADMSG, WIRE_VERSION);
		return -1;
	}
	r = recvbuf_placed(&l->rb, seq, len, on_message, l);
	if (r < 0) {
		log_warnx("link %s: stream %d: block %" PRIu64 " rejected (malformed records): peer is misbehaving",
			  link_name(l), s->idx, seq);
		stream_close(s, "protocol error", 1);
		return -1;
	}
	l->ack_pending = 1;
	return 1;
}

static void transport_readable(struct lds_tp_conn *c, void *ud)
{
	struct stream *s = ud;

	for (int reads = 0; reads < READS_PER_EVENT; reads++) {
		size_t got, off = 0, need = WIRE_HDR_LEN;
		struct wire_frame f;
		int r;

		/* A DATA frame whose prefix the last read brought. */
		r = stream_read_direct(s);
		if (r < 0)
			return;
		if (r > 0)
			continue;
		if (stream_rx_reserve(s, s->st == ST_UP ? s->rx_len + 65536 : ADMISSION_RX_MAX) < 0) {
			stream_close(s, "out of memory", 1);
			return;
		}
		r = stream_recv(s, &(struct iovec){ s->rx + s->rx_len, stream_read_size(s) }, 1, &got);
		if (r == -EAGAIN)
			return;
		if (r < 0) {
			stream_broken_io(s, r);
			return;
		}
		s->rx_len += got;
		s->last_rx_ns = clock_now_ns();
		for (;;) {
			size_t used;

			r = wire_frame_parse(s->rx + off, s->rx_len - off, &f, &used);
			if (r == 0) {
				need = used;
				break;
			}
			if (r < 0) {
				stream_bad_frame(s, r, f.version);
				return;
			}
			if (stream_unseal(s, s->rx + off, &f) < 0)
				return;
			if (stream_on_frame(s, &f) < 0) {
				uint16_t reason = 0;

				if (f.type == WIRE_BYE && wire_decode_bye(&f, &reason) == 0 && reason == WIRE_REFUSE_RETIRED)
					s->retired = 1;
				stream_close(s, s->retired ? "retired by the peer: it wants fewer streams"
					     : f.type == WIRE_BYE ? "peer said goodbye" : "protocol error",
					     f.type != WIRE_BYE);
				return;
			}
			if (stream_failed(s))
				return;
			s->data_train = f.type == WIRE_DATA;
			off += used;
		}
		if (off > 0) {
			memmove(s->rx, s->rx + off, s->rx_len - off);
			s->rx_len -= off;
		}
		if (need > s->rx_cap && s->st != ST_UP) {
			stream_bad_frame(s, -EMSGSIZE, WIRE_VERSION);
			return;
		}
		if (need > s->rx_cap && stream_rx_reserve(s, need) < 0) {
			stream_close(s, "out of memory", 1);
			return;
		}
	}
}

static void transport_writable(struct lds_tp_conn *c, void *ud)
{
	stream_flush(ud);
	stream_failed(ud);
}

static void transport_accepted(struct lds_tp_listener *lis, struct lds_tp_conn *c, void *ud)
{
	struct daemon_listener *dl = ud;

	link_accept(dl->d, dl->ops, c);
}

const struct lds_tp_upcalls link_upcalls = {
	.connected = transport_connected,
	.accepted = transport_accepted,
	.accept_failed = daemon_accept_failed,
	.readable = transport_readable,
	.writable = transport_writable,
};

void link_accept(struct daemon *d, const struct lds_transport_ops *ops, struct lds_tp_conn *c)
{
	struct stream *s = stream_new(d, ops);
	struct lds_tp_info info;

	if (s == NULL) {
		ops->close(c);
		return;
	}
	s->conn = c;
	s->st = ST_WAIT_HELLO;
	if (ops->query && ops->query(c, &info) == 0)
		snprintf(s->peer_addr, sizeof(s->peer_addr), "%s", info.peer);
	if (admission_admit(d->adm, s->peer_addr, s->created_ns) < 0) {
		ops->close(c);
		free(s);
		return;
	}
	s->unauth = 1;
	ops->set_userdata(c, s);
	s->next_pending = pending_streams;
	pending_streams = s;
	log_debug("connection from %s accepted, waiting for HELLO", s->peer_addr);
}

/* ---- link lifetime ------------------------------------------------------ */

int link_new_session(struct link *l)
{
	uint64_t v = 0;

	while (v == 0 || v == l->d->instance)
		if (auth_random(&v, sizeof(v)) < 0)
			return -EIO;
	l->instance = v;
	return 0;
}

struct link *link_new(struct daemon *d, const struct config_peer *cfg)
{
	struct link *l = calloc(1, sizeof(*l));

	if (l == NULL) {
		log_warnx("link %s: out of memory", cfg->cluster);
		return NULL;
	}
	l->d = d;
	l->cfg = cfg;
	l->instance = d->instance;
	l->lost_why = "peer gateway restarted and lost its state";
	l->ops = transport_find(cfg->transport);
	if (l->ops == NULL || !config_transport_usable(l->ops) || (l->tp = daemon_transport(d, l->ops)) == NULL) {
		log_warnx("%s:%d: peers: cluster %s: transport \"%s\" cannot start (available: %s)",
			  d->cfg->file, cfg->line, cfg->cluster, cfg->transport, transport_names());
		free(l);
		return NULL;
	}
	dial_init(&l->dial, d->resolver, cfg->cluster, cfg->address, cfg->port, link_dial_ready, l);
	l->dest_cap = cfg->recv_memory / 4;
	l->nstreams = cfg->role == CONFIG_ROLE_CONNECT ? cfg->streams : 0;
	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++)
		l->backoff[i] = cfg->reconnect_min;
	/* streams = "auto": the fixed default is the first guess. */
	if (cfg->role == CONFIG_ROLE_CONNECT && cfg->streams == 0) {
		l->nstreams = AUTO_FIRST_GUESS;
		if (link_auto_start(l) < 0) {
			link_free(l);
			return NULL;
		}
	}
	if (sendbuf_init(&l->sb, cfg->block_size, cfg->send_memory) < 0 ||
	    recvbuf_init(&l->rb, cfg->block_size, cfg->recv_memory) < 0) {
		log_warnx("link %s: cannot allocate buffers (send_memory %zu, recv_memory %zu)", cfg->cluster,
			  cfg->send_memory, cfg->recv_memory);
		link_free(l);
		return NULL;
	}
	l->sb.no_hdr = cfg->encryption == CONFIG_ENC_AEAD;
	l->down_since = clock_wall_s();
	return l;
}

void link_free(struct link *l)
{
	if (l == NULL)
		return;
	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++)
		if (l->streams[i])
			stream_close(l->streams[i], "shutting down", 0);
	dial_fini(&l->dial);
	sendbuf_free(&l->sb);
	recvbuf_free(&l->rb);
	lostrep_free(&l->lr);
	for (unsigned i = 0; i < DEST_BUCKETS; i++) {
		while (l->dests[i]) {
			struct dest *d = l->dests[i];

			l->dests[i] = d->next;
			free(d);
		}
	}
	free(l->as);
	free(l);
}

/* A lookup the slots waited for has ended (called from the loop): they
 * connect now, counted as reconnections already if they are. */
static void link_dial_ready(void *arg)
{
	struct link *l = arg;

	for (unsigned i = 0; i < l->nstreams && !l->shutting_down; i++)
		if (l->streams[i] == NULL && l->next_try_ns[i] == UINT64_MAX)
			link_connect_slot(l, i);
}

/* An attempt of s failed: the next address gets its turn at once, or the
 * slot waits its back-off (stream_close). */
static void link_connect_failed(struct stream *s, const char *why)
{
	struct link *l = s->link;
	int idx = s->idx, next = dial_failed(&l->dial, s->peer_addr, why, clock_now_ns());

	stream_close(s, why, 0);
	if (next && l->streams[idx] == NULL)
		l->next_try_ns[idx] = clock_now_ns();
}

static void link_connect_slot(struct link *l, unsigned idx)
{
	struct lds_tp_opts o = link_tp_opts(l);
	struct resolve_addr a;
	struct stream *s;
	const char *step = "connect";
	int r = dial_pick(&l->dial, clock_now_ns(), &a);

	if (r <= 0) {
		/* Waiting for the lookup, or the name does not resolve. */
		l->next_try_ns[idx] = UINT64_MAX;
		if (r < 0) {
			snprintf(l->last_error, sizeof(l->last_error), "%.95s", l->dial.lookup_error);
			link_reconnect_later(l, (int)idx, clock_now_ns());
		}
		return;
	}
	s = stream_new(l->d, l->ops);
	if (s == NULL)
		return;
	s->link = l;
	s->idx = (int)idx;
	s->st = ST_CONNECTING;
	snprintf(s->peer_addr, sizeof(s->peer_addr), "%s", a.text);
	l->streams[idx] = s;
	r = l->ops->connect(l->tp, a.host, l->cfg->port, &o, s, &s->conn, &step);
	if (r < 0) {
		char why[160];

		if (strcmp(step, "connect") == 0)
			snprintf(why, sizeof(why), "%s", strerror(-r));
		else
			snprintf(why, sizeof(why), "%s: %s", step, strerror(-r));
		s->conn = NULL;
		link_connect_failed(s, why);
	}
}

/* Connects slot idx now; counts it as a reconnection unless the slot is
 * new (link_resize). */
static void link_try_slot(struct link *l, unsigned idx)
{
	l->reconnects += l->next_try_ns[idx] != 0;
	link_connect_slot(l, idx);
}

/*
 * A connection of a link that was probing for its lost path has been
 * answered: the path is back.  The other slots' attempts that started
 * before this one sent their SYNs into the black hole and would each wait
 * out its SYN wait, or its next turn on the grid, up to a period: they
 * start over now, one round trip behind s, instead of coming up one by
 * one over the next second.
 */
static void link_path_back(struct link *l, const struct stream *s)
{
	log_info("link %s: stream %d connected: path back, connecting the other streams now", link_name(l), s->idx);
	probe_stop(&l->probe);
	for (unsigned i = 0; i < l->nstreams; i++) {
		struct stream *o = l->streams[i];

		if (o && o->st == ST_CONNECTING && o->created_ns < s->created_ns)
			stream_close(o, "path back: starting over", 0);
		if (l->streams[i] == NULL)
			link_try_slot(l, i);
	}
}

void link_start(struct link *l)
{
	if (l->cfg->role != CONFIG_ROLE_CONNECT)
		return;
	log_info("link %s: connecting to %s:%u with %u streams", link_name(l), l->cfg->address, l->cfg->port,
		 l->nstreams);
	for (unsigned i = 0; i < l->nstreams; i++)
		link_connect_slot(l, i);
}

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

/* How long a connection attempt waits for an answer: the SYN wait, or
 * while the link probes for its lost path, until the slot's next turn on
 * the grid, so that a late tick does not carry over into the next
 * attempt. */
static double stream_syn_wait(const struct stream *s)
{
	const struct link *l = s->link;

	if (probe_active(&l->probe))
		return (double)(probe_next(&l->probe, (unsigned)s->idx, s->created_ns) - s->created_ns) / 1e9;
	return link_syn_wait(l);
}

static void stream_tick(struct stream *s, uint64_t now)
{
	struct link *l = s->link;
	double limit = s->st == ST_UP ? l->cfg->inactivity_timeout : l->cfg->connect_timeout;
	const char *what = s->st == ST_UP ? "no data for %.1f s" : "handshake took over %.1f s";
	double syn = s->st == ST_CONNECTING ? stream_syn_wait(s) : limit;
	uint8_t buf[WIRE_HDR_LEN + 8];

	if (syn < limit) {
		limit = syn;
		what = "no answer within %.1f s";
	}
	/* A handshake is bounded from its start, not from the last byte,
	 * which a peer could send one at a time. */
	if ((double)(now - (s->st == ST_UP ? s->last_rx_ns : s->created_ns)) / 1e9 > limit) {
		char why[80];

		snprintf(why, sizeof(why), what, limit);
		if (s->st == ST_CONNECTING)
			link_connect_failed(s, why);
		else
			stream_close(s, why, 1);
		return;
	}
	if (s->st == ST_UP && (double)(now - s->last_ping_ns) / 1e9 >= l->cfg->keepalive) {
		size_t n = wire_encode_ping(buf, sizeof(buf), WIRE_PING, now);

		s->last_ping_ns = now;
		if (n > 0 && stream_queue(s, buf, n) == 0)
			stream_flush(s);
		stream_failed(s);
	}
}

/* The connecting side closes the streams of a silent link (see
 * LINK_SILENCE_S) so that they reconnect. */
static void link_check_silence(struct link *l, uint64_t now)
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
	log_warnx("link %s: nothing received on any stream for %.1f s: path presumed lost, reconnecting", link_name(l),
		  limit);
	/* The path's round trip without queues, from the streams' transports
	 * while they are there: the pings' smoothed one waits behind the
	 * data (300-470 ms measured on a 100 ms path). */
	link_stream_rtts(l, &now_us, &min_us);
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

/* More streams start at once; fewer are retired in link_retire_streams
 * once nothing they carried waits for an ACK. */
static void link_resize(struct link *l, unsigned n)
{
	for (unsigned i = l->nstreams; i < n; i++) {
		l->next_try_ns[i] = 0;
		l->backoff[i] = l->cfg->reconnect_min;
	}
	l->nstreams = n;
}

/* streams = "auto" measures from now on, with the streams it has now. */
static int link_auto_start(struct link *l)
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
		log_info("link %s: streams set to auto (%u now)", link_name(l), l->nstreams);
		return link_auto_start(l);
	}
	log_info("link %s: streams set to %u (%u before)", link_name(l), n, l->nstreams);
	free(l->as);
	l->as = NULL;
	link_resize(l, n);
	return 0;
}

static void link_retire_streams(struct link *l)
{
	uint8_t buf[WIRE_HDR_LEN + 2];
	size_t n = wire_encode_bye(buf, sizeof(buf), WIRE_REFUSE_RETIRED);
	char why[64];

	for (unsigned i = l->nstreams; i < CONFIG_MAX_STREAMS; i++) {
		struct stream *s = l->streams[i];

		if (s == NULL || (s->st == ST_UP && (s->nout > 0 || sendbuf_stream_unacked(&l->sb, (int)i))))
			continue;
		s->retired = 1;
		if (s->st == ST_UP && n > 0 && stream_queue(s, buf, n) == 0)
			stream_flush(s);
		snprintf(why, sizeof(why), l->as ? "no longer wanted (streams = auto chose %u)"
			 : "no longer wanted (streams set to %u)", l->nstreams);
		stream_close(s, why, 0);
	}
}

/* What the transport knows of stream slot i: 1 with *info filled if a
 * stream is up there and its transport answers, else 0. */
static int link_stream_info(const struct link *l, unsigned i, struct lds_tp_info *info)
{
	const struct stream *s = l->streams[i];

	return s && s->st == ST_UP && s->ops->query && s->ops->query(s->conn, info) == 0;
}

/* The lowest round trip (us) the streams' transports see now (*now_us)
 * and saw lately, without queues (*min_us); 0 where none knows. */
static void link_stream_rtts(const struct link *l, uint32_t *now_us, uint32_t *min_us)
{
	struct lds_tp_info info;

	*now_us = *min_us = 0;
	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++) {
		if (!link_stream_info(l, i, &info))
			continue;
		if (info.rtt_us && (*now_us == 0 || info.rtt_us < *now_us))
			*now_us = info.rtt_us;
		if (info.min_rtt_us && (*min_us == 0 || info.min_rtt_us < *min_us))
			*min_us = info.min_rtt_us;
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
static void link_auto_tick(struct link *l, uint64_t now)
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
	link_stream_rtts(l, &now_us, &min_us);
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
			log_info("link %s: streams = auto: %u -> %u streams (goodput %.1f MB/s with %u%s)", link_name(l),
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

void link_tick(struct link *l, uint64_t now)
{
	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++)
		if (l->streams[i])
			stream_tick(l->streams[i], now);
	if (!l->shutting_down)
		link_check_silence(l, now);
	if (l->as && !l->shutting_down)
		link_auto_tick(l, now);
	if (!l->shutting_down)
		link_retire_streams(l);
	if (l->cfg->role == CONFIG_ROLE_CONNECT && !l->shutting_down) {
		for (unsigned i = 0; i < l->nstreams; i++)
			if (l->streams[i] == NULL && now >= l->next_try_ns[i])
				link_try_slot(l, i);
	}
	/* Every block queued again after a failure has gone out once more. */
	if (l->sb.resend_pending == 0)
		faillog_resent(l);
	/* ACKs can be lost with a broken stream; repeating the latest state
	 * now and then makes sure the sender never waits on a lost window. */
	if (l->up > 0 && now - l->last_ack_ns > ACK_REFRESH_NS)
		l->ack_pending = 1;
}

void link_tick_pending(uint64_t now, double timeout)
{
	struct stream *s = pending_streams, *next;
	char why[80];

	snprintf(why, sizeof(why), "not authenticated within %.1f s (handshake.timeout)", timeout);
	for (; s; s = next) {
		next = s->next_pending;
		if ((double)(now - s->created_ns) / 1e9 > timeout)
			stream_close(s, why, 0);
	}
}

void link_close_pending(struct daemon *d)
{
	struct stream *s = pending_streams, *next;

	for (; s; s = next) {
		next = s->next_pending;
		if (s->d == d)
			stream_close(s, "shutting down", 0);
	}
}

void link_flush(struct link *l)
{
	if (lostrep_pending(&l->lr))
		link_send_lostrep(l);
	if (l->ack_pending && l->up > 0) {
		for (unsigned k = 0; k < l->nstreams && l->ack_pending; k++) {
			struct stream *s = l->streams[(l->rr + k) % l->nstreams];

			if (s && s->st == ST_UP && stream_send_ack(s) == 0) {
				l->rr = (l->rr + k + 1) % l->nstreams;
				stream_flush(s);
				stream_failed(s);
			}
		}
	}
	if (l->kick_pending) {
		l->kick_pending = 0;
		for (unsigned i = 0; i < l->nstreams; i++) {
			struct stream *s = l->streams[i];

			if (s && s->st == ST_UP && !s->blocked) {
				stream_flush(s);
				stream_failed(s);
			}
		}
	}
}

void link_drain(struct link *l)
{
	l->rb.frozen = 1;
	l->ack_pending = 1;
}

int link_drained(const struct link *l)
{
	/* Repeat ACKs (ack_pending) need not hold us; only deliveries the peer
	 * has not heard of, which would make it report them lost. */
	if (!sendbuf_idle(&l->sb) || l->deliv_unreported)
		return 0;
	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++) {
		const struct stream *s = l->streams[i];

		if (s && s->st == ST_UP && s->ctl_len > s->ctl_off)
			return 0;
	}
	return 1;
}

void link_shutdown(struct link *l)
{
	uint8_t buf[WIRE_HDR_LEN + 2];
	size_t n = wire_encode_bye(buf, sizeof(buf), WIRE_REFUSE_SHUTDOWN);

	l->shutting_down = 1;
	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++) {
		struct stream *s = l->streams[i];

		if (s == NULL)
			continue;
		if (s->st == ST_UP && n > 0 && s->nout == 0 && stream_queue(s, buf, n) == 0)
			stream_flush(s);
		stream_close(s, "shutting down", 0);
	}
}

void link_retire(struct link *l, const char *why)
{
	log_info("link %s: closing: %s", link_name(l), why);
	link_shutdown(l);
	dial_fini(&l->dial);
	l->conf = *l->cfg;
	explicit_bzero(l->conf.key, sizeof(l->conf.key));
	l->conf.key_len = 0;
	l->cfg = &l->conf;
	l->lost_why = why;
	sendbuf_reset(&l->sb, on_lost, l);
	l->d->sink.space(l->d->sink.arg, l);
}

void link_reconfigure(struct link *l, const struct config_peer *p)
{
	int streams = p->streams != l->cfg->streams || p->streams_min != l->cfg->streams_min ||
		      p->streams_max != l->cfg->streams_max;

	l->cfg = p;
	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++)
		if (l->backoff[i] < p->reconnect_min || l->backoff[i] > p->reconnect_max)
			l->backoff[i] = p->reconnect_min;
	if (streams && p->role == CONFIG_ROLE_CONNECT && link_set_stream_count(l, p->streams) < 0)
		log_warnx("link %s: out of memory: keeps %u streams", link_name(l), l->nstreams);
}

int link_fault_break(struct link *l, int idx)
{
	int n = 0;

	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++) {
		if (l->streams[i] && l->streams[i]->st == ST_UP && (idx < 0 || (unsigned)idx == i)) {
			stream_close(l->streams[i], "fault injected by ldsctl", 1);
			n++;
		}
	}
	return n;
}

int link_fault_stall(struct link *l, int idx)
{
	int n = 0;

	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++) {
		struct stream *s = l->streams[i];

		if (s && s->st == ST_UP && !s->stalled && (idx < 0 || (unsigned)idx == i)) {
			log_warnx("link %s: stream %d stalled by ldsctl: no byte in or out from now on", link_name(l),
				  s->idx);
			s->stalled = 1;
			s->ops->want_read(s->conn, 0);
			s->ops->want_write(s->conn, 0);
			n++;
		}
	}
	return n;
}

/* ---- status --------------------------------------------------------------- */

/* The transport's smoothed RTT averaged over the streams that are up: the
 * path's round trip, without what waits in socket buffers. */
static double link_tcp_rtt_ms(const struct link *l)
{
	struct lds_tp_info info;
	double sum = 0;
	unsigned n = 0;

	for (unsigned i = 0; i < CONFIG_MAX_STREAMS; i++) {
		if (link_stream_info(l, i, &info) && info.rtt_us) {
			sum += info.rtt_us / 1000.0;
			n++;
		}
	}
	return n ? sum / n : 0.0;
}

/* Our PING samples when there are any (keepalive may be long), else the
 * transport's. */
static double link_rtt_ms(const struct link *l)
{
	return l->rtt_samples > 0 ? (double)l->srtt_us / 1000.0 : link_tcp_rtt_ms(l);
}

static double link_downtime(const struct link *l)
{
	return l->downtime + (l->down_since > 0 ? clock_wall_s() - l->down_since : 0);
}

void link_status_json(const struct link *l, FILE *out)
{
	const struct sendbuf *sb = &l->sb;
	const struct recvbuf *rb = &l->rb;
	unsigned n = l->nfail < FAILLOG_MAX ? l->nfail : FAILLOG_MAX;

	fputs("{\"peer\":", out);
	json_str(out, l->cfg->cluster);
	fputs(",\"address\":", out);
	json_str(out, l->cfg->address);
	if (l->ops->status)
		l->ops->status(l->cfg->tp_conf, out);
	fprintf(out, ",\"encryption\":\"%s\"", encryption_name(link_encryption(l)));
	fprintf(out,
		",\"port\":%u,\"role\":\"%s\",\"transport\":\"%s\","
		"\"streams\":%u,\"streams_auto\":%s,\"streams_up\":%u,\"peer_instance\":\"%016" PRIx64 "\",\"srtt_ms\":%.3f,"
		"\"tcp_rtt_ms\":%.3f,"
		"\"reconnects\":%" PRIu64 ",\"session_resets\":%" PRIu64 ",\"downtime_s\":%.3f,"
		"\"sent\":{\"bytes\":%" PRIu64 ",\"blocks\":%" PRIu64 ",\"blocks_acked\":%" PRIu64
		",\"blocks_resent\":%" PRIu64 ",\"bytes_acked\":%" PRIu64 ",\"unacked_bytes\":%zu,"
		"\"messages_delivered\":%" PRIu64 ",\"messages_lost\":%" PRIu64 ",\"messages_pending\":%" PRIu64
		",\"window_end\":%" PRIu64 "},"
		"\"received\":{\"bytes\":%" PRIu64 ",\"blocks\":%" PRIu64 ",\"duplicates\":%" PRIu64
		",\"messages\":%" PRIu64 ",\"misrouted\":%" PRIu64 ",\"undelivered\":%" PRIu64
		",\"held_bytes\":%zu},\"failures\":[",
		l->cfg->port, l->cfg->role == CONFIG_ROLE_CONNECT ? "connect" : "listen", l->ops->name, l->nstreams, l->as ? "true" : "false", l->up, l->peer_instance, link_rtt_ms(l), link_tcp_rtt_ms(l), l->reconnects,
		l->resets, link_downtime(l), sb->bytes_sent, sb->blocks_sent, sb->blocks_acked, sb->blocks_resent,
		sb->bytes_acked, sendbuf_unacked_bytes(sb), sb->msgs_delivered, sb->msgs_lost, sb->msg_next - sb->msg_base,
		sb->window_end, rb->bytes_recv, rb->blocks_recv, rb->blocks_dup, rb->msgs_recv,
		l->msgs_misrouted, l->lr.dropped, rb->ooo_bytes + rb->msg_bytes);
	for (unsigned i = 0; i < n; i++) {
		const struct failure *f = &l->faillog[(l->nfail - n + i) % FAILLOG_MAX];

		fprintf(out, "%s{\"stream\":%d,\"down_at\":%.3f,\"up_at\":%.3f,\"resent_at\":%.3f,"
			"\"outage_s\":%.3f,\"blocks_resent\":%" PRIu64 ",\"reason\":",
			i ? "," : "", f->stream, f->down_at, f->up_at, f->resent_at,
			f->up_at > 0 ? f->up_at - f->down_at : -1.0, f->blocks);
		json_str(out, f->reason);
		fputc('}', out);
	}
	fprintf(out, "],\"failures_total\":%u,\"last_error\":", l->nfail);
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
		encryption_name(link_encryption(l)), l->up,
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
