/*
 * check_udp_e2e.c - the UDP transport end to end through its ops, over
 * loopback sockets and the daemon's own event loop (tp_harness.h):
 * random-sized messages (up to the largest allowed) through a shim that
 * drops, duplicates and reorders datagrams both ways (tp_shim.h, a fixed
 * seed) arrive whole, in order, once, with the bytes that were sent; sent
 * upcalls come once per message, in order; the sender's close ends the
 * receiver's stream; the sender's conn reports its round trip, window and
 * retransmissions.  Also: sprayed garbage and forged handshakes allocate
 * nothing and are counted; a connect to a closed port fails; a close
 * inside an upcall; a conn whose window is full still sends the ACK it
 * owes; a window update the socket refused is told again.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>

#include "ldsd/clock.h"
#include "suites.h"
#include "tp_harness.h"
#include "tp_shim.h"
#include "transports/udp/udp.h"

/* Until the core knows the link, the client may send a small window only,
 * into the smallest ring; the link's settings (set_opts) open the link's
 * own udp_window, larger than its listener's (the listener's was all an
 * accepted conn ever had, whatever the link's udp_window said). */
static void accepted(struct lds_tp_conn *c)
{
	struct udp_conf uc;
	struct lds_tp_opts o = { .conf = &uc };

	udp_conf_defaults(&uc);
	uc.window = 2 * UDP_WINDOW_DEFAULT;
	ck_assert_uint_eq(udp_recvq_limit(&c->rq), UDP_WINDOW_PREAUTH);
	ck_assert_uint_eq(c->advertised, UDP_WINDOW_PREAUTH);
	ck_assert_uint_eq(c->rq.size, UDP_WINDOW_MIN);
	ck_assert_int_eq(tp_run.p.ops->set_opts(c, &o), 0);
	ck_assert_uint_eq(udp_recvq_limit(&c->rq) - c->rq.base, 2 * UDP_WINDOW_DEFAULT);
}

/* nmsg messages up to max_len, 64 held at once, a fixed seed. */
static void start(int nmsg, size_t max_len)
{
	struct tp_run_params p = { .ops = transport_find("udp"), .nmsg = nmsg, .max_len = max_len, .window = 64,
				   .seed = 1, .deadline_ms = 60000, .accepted = accepted };

	tp_run_start(&p);
}

/* tp_run_check_delivery, and what the sender's conn said of the path. */
static void check_delivery(void)
{
	tp_run_check_delivery();
	ck_assert_int_eq(tp_run.info_err, 0);
	ck_assert_uint_ge(tp_run.info.bytes_sent, tp_run.info.bytes_recv);
	ck_assert_uint_gt(tp_run.info.rtt_us, 0);
	ck_assert_uint_le(tp_run.info.min_rtt_us, tp_run.info.rtt_us);
	ck_assert_uint_ge(tp_run.info.cwnd, UDP_CC_MIN_CWND_PKTS);
	ck_assert_msg(strncmp(tp_run.info.peer, "127.0.0.1:", 10) == 0, "peer %s", tp_run.info.peer);
}

/* The run set up, with tick called every millisecond to look at or
 * change the conns mid-run; delivery checked. */
static void run_ticked(evloop_tick_cb *tick)
{
	int id = evloop_tick_add(tp_run.ev, 1, tick, NULL);

	ck_assert_int_gt(id, 0);
	tp_run_connect(tp_run.port);
	tp_run_loop();
	evloop_tick_del(tp_run.ev, id);
	check_delivery();
}

static struct tp_shim shim;

/* The run start() set up, through the shim with path's impairments (its
 * loss, dup, reorder, delay_ns and mtu), delivery checked; the caller
 * asserts what the shim and the conn did, then calls shim_finish. */
static void run_through_shim(const struct tp_shim *path, unsigned seed)
{
	uint16_t sp = tp_shim_open(&shim, tp_run.ev, tp_run.port, seed);

	shim.loss = path->loss;
	shim.dup = path->dup;
	shim.reorder = path->reorder;
	shim.delay_ns = path->delay_ns;
	shim.mtu = path->mtu;
	tp_run_connect(sp);
	tp_run_loop();
	check_delivery();
}

static void shim_finish(void)
{
	tp_shim_close(&shim, tp_run.ev);
	tp_run_finish();
}

/* A clean path: everything arrives, no retransmission needed. */
START_TEST(test_clean)
{
	start(200, UDP_MSG_MAX);
	tp_run_connect(tp_run.port);
	tp_run_loop();
	check_delivery();
	ck_assert_uint_eq(tp_run.tp->stats.bad, 0);
	/* Nothing went twice (a flush held by the pacer once sent a stale
	 * datagram left in its buffer). */
	ck_assert_uint_eq(tp_run.tp->stats.replayed, 0);
	ck_assert_uint_gt(tp_run.info.bytes_sent, 200ull * 100000);
	/* Loopback carries the largest size the search tries. */
	ck_assert_uint_eq(tp_run.info.mtu, UDP_MTU_MAX_DEFAULT);
	tp_run_finish();
}
END_TEST

/* 3 % loss, 2 % duplicates, 3 % reordered, both ways. */
START_TEST(test_lossy)
{
	start(150, UDP_MSG_MAX);
	run_through_shim(&(struct tp_shim){ .loss = 30, .dup = 20, .reorder = 30 }, 12345);
	ck_assert_uint_gt(shim.dropped, 10);
	ck_assert_uint_gt(shim.duplicated, 10);
	ck_assert_uint_gt(shim.reordered, 10);
	ck_assert_uint_gt(tp_run.info.retransmits, 0);
	shim_finish();
}
END_TEST

/* A path that drops datagrams over 1400 bytes (a tunnel): the search
 * settles within a step below it, and nothing is lost on the way. */
START_TEST(test_path_mtu)
{
	start(150, UDP_MSG_MAX);
	run_through_shim(&(struct tp_shim){ .mtu = 1400 }, 4242);
	ck_assert_uint_le(tp_run.info.mtu, 1400);
	ck_assert_uint_gt(tp_run.info.mtu, 1400 - UDP_PMTU_STEP);
	ck_assert_uint_ge(shim.too_big, UDP_PMTU_TRIES);
	shim_finish();
}
END_TEST

/* A 100 ms round trip with 2 % loss: the rate (printed) and the same
 * guarantees. */
START_TEST(test_long_path)
{
	uint64_t t0 = clock_now_ns();

	start(300, 200000);
	run_through_shim(&(struct tp_shim){ .delay_ns = 50000000, .loss = 20 }, 777);
	printf("udp_e2e long path: %zu bytes in %.2f s, %u datagrams dropped, %u retransmits, srtt %u us, cwnd %u\n",
	       tp_run.got, (double)(clock_now_ns() - t0) / 1e9, shim.dropped, tp_run.info.retransmits,
	       tp_run.info.rtt_us, tp_run.info.cwnd);
	ck_assert_uint_ge(tp_run.info.min_rtt_us, 100000);
	/* Paced, a flush often ends held by the pacer: it sends what it built and nothing more. */
	ck_assert_msg(tp_run.tp->stats.replayed == 0, "%" PRIu64 " datagrams arrived twice on a path that duplicates none",
		      tp_run.tp->stats.replayed);
	/* A long, busy path: the sockets are read on the tick, not woken per packet. */
	ck_assert_uint_gt(tp_run.tp->tick_reads, 0);
	/* The sender's too, which receives only ACKs, a few a tick: no wake
	 * for each (before, only while ACKs came every two packets, at the
	 * start: 4 reads in 200). */
	ck_assert_uint_ge(2 * tp_run.tp->tick_reads_client, tp_run.tp->tick_reads - tp_run.tp->tick_reads_client);
	shim_finish();
}
END_TEST

/* The server closes in its first readable upcall: the client sees the end
 * of its conn; one closed upcall each, never inside another. */
START_TEST(test_close_in_upcall)
{
	start(1000, 100000);
	tp_run_close_in_upcall();
	tp_run_finish();
}
END_TEST

/* Nothing listens: ICMP says so, the connect fails, no conn is left. */
START_TEST(test_refused)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	uint16_t dead = tp_shim_bind_loopback(fd);

	close(fd);
	start(1, 10);
	tp_run_connect(dead);
	tp_run_loop();
	ck_assert(!tp_run.timed_out);
	ck_assert_int_eq(tp_run.connected, 1);
	ck_assert_int_eq(tp_run.connect_err, -ECONNREFUSED);
	tp_run_finish();
}
END_TEST

/* Datagrams from an attacker: garbage, INITs without and with forged
 * tokens, short INITs, packets for conns that do not exist.  Nothing is
 * allocated, every one is counted, a real client then still gets through. */
START_TEST(test_spray)
{
	int fd = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	struct sockaddr_in to = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	static uint8_t b[1400];
	unsigned seed = 99;
	struct udp_hdr h = { .type = UDP_PKT_INIT, .scid = 5 };

	start(20, 5000);
	to.sin_port = htons(tp_run.port);
	tp_shim_bind_loopback(fd);
	for (int i = 0; i < 200; i++) {
		size_t n = (size_t)rand_r(&seed) % sizeof(b);

		for (size_t k = 0; k < n; k++)
			b[k] = (uint8_t)rand_r(&seed);
		ck_assert_int_ge(sendto(fd, b, n, 0, (struct sockaddr *)&to, sizeof(to)), 0);
	}
	/* INIT with a forged token, 1300 bytes. */
	memset(b, 0, sizeof(b));
	udp_hdr_write(b, &h);
	b[UDP_HDR_LEN + 1] = UDP_TOKEN_LEN;
	memset(b + UDP_HDR_LEN + 2, 0xAA, UDP_TOKEN_LEN);
	udp_pkt_seal(b, 1300);
	for (int i = 0; i < 20; i++)
		ck_assert_int_ge(sendto(fd, b, 1300, 0, (struct sockaddr *)&to, sizeof(to)), 0);
	/* INIT without a token: a RETRY comes back, nothing is kept. */
	b[UDP_HDR_LEN + 1] = 0;
	memset(b + UDP_HDR_LEN + 2, 0, UDP_TOKEN_LEN);
	udp_pkt_seal(b, 1300);
	for (int i = 0; i < 20; i++)
		ck_assert_int_ge(sendto(fd, b, 1300, 0, (struct sockaddr *)&to, sizeof(to)), 0);
	/* Too short to be an INIT (it would amplify). */
	udp_pkt_seal(b, 300);
	ck_assert_int_ge(sendto(fd, b, 300, 0, (struct sockaddr *)&to, sizeof(to)), 0);
	/* A DATA packet for a conn that does not exist. */
	h.type = UDP_PKT_DATA;
	h.dcid = 12345;
	udp_hdr_write(b, &h);
	udp_pkt_seal(b, 100);
	ck_assert_int_ge(sendto(fd, b, 100, 0, (struct sockaddr *)&to, sizeof(to)), 0);
	tp_run_connect(tp_run.port);
	tp_run_loop();
	check_delivery();
	ck_assert_uint_ge(tp_run.tp->stats.bad, 190);
	ck_assert_uint_eq(tp_run.tp->stats.bad_tokens, 20);
	ck_assert_uint_ge(tp_run.tp->stats.retries, 21);            /* 20 sprayed, 1 for the real client */
	ck_assert_uint_ge(tp_run.tp->stats.unknown, 1);
	ck_assert_int_eq(tp_run.accepted, 1);                       /* the real client's conn only */
	{
		ssize_t n = recv(fd, b, sizeof(b), MSG_DONTWAIT);

		ck_assert_int_eq(n, UDP_HDR_LEN + 2 + UDP_TOKEN_LEN); /* a RETRY, smaller than the INIT */
	}
	close(fd);
	tp_run_finish();
}
END_TEST

/* A conn whose congestion window is full, with data waiting, still sends
 * the ACK it owes: the packet built for it goes alone.  (It was built and
 * dropped: two conns sending to each other, each with a full window,
 * waited for each other's ACKs for ever.)  Checked once, mid-run, on the
 * client's conn from a tick; the run then goes on to its end. */
static struct {
	int done;
	uint64_t sent_before, sent_after;
	int owed_after;
} held;

static void held_ack_tick(uint64_t now, void *arg)
{
	struct lds_tp_conn *c = tp_run.client;
	uint64_t cwnd;

	(void)arg;
	if (held.done || c == NULL || c->state != UDP_ST_OPEN || c->rx.seen.n == 0 || c->sq.next >= c->sq.end ||
	    c->sq.next >= c->sq.peer_max || c->rec.in_flight == 0)
		return;
	held.done = 1;
	cwnd = c->cc.cwnd;
	c->cc.cwnd = c->rec.in_flight;   /* full: no room for another packet */
	c->rx.now = 1;                   /* an ACK owed at once (as after a gap) */
	held.sent_before = c->bytes_sent;
	udp_conn_flush(c, now);
	held.sent_after = c->bytes_sent;
	held.owed_after = c->rx.now;
	c->cc.cwnd = cwnd;
}

START_TEST(test_ack_with_window_full)
{
	start(100, 200000);
	run_ticked(held_ack_tick);
	ck_assert_int_eq(held.done, 1);
	ck_assert_msg(held.sent_after > held.sent_before, "the owed ACK was not sent (bytes_sent %llu before, %llu after)",
		      (unsigned long long)held.sent_before, (unsigned long long)held.sent_after);
	ck_assert_int_eq(held.owed_after, 0);
	tp_run_finish();
}
END_TEST

/* A window update the socket refused (a full buffer, an ICMP error
 * pending) is told again by the next packet, while the peer's sender sits
 * at the window's end and sends nothing that would make us answer.  (It
 * was recorded as told: the receiver sent nothing until its keepalive,
 * idle_timeout / 3 later, and the sender waited as long.)  The server
 * does not read until the client has filled its window and has nothing in
 * flight; then its sends are refused (a destination the kernel rejects)
 * while it reads and tells the new window, and allowed again at once. */
#define OWED_HEAL_MAX_NS 2000000000ull   /* a few ticks do; the keepalive took 10 s */

static struct {
	int phase;                       /* 0 paused, 1 refusing, 2 allowed: waiting for the window, 3 done */
	socklen_t peer_len;              /* the server's, while refused */
	uint64_t advertised, peer_max, sent;
	uint64_t refused_ns, healed_ns;
} owed;

static void owed_accepted(struct lds_tp_conn *c)
{
	struct udp_conf uc;
	struct lds_tp_opts o = { .conf = &uc };

	udp_conf_defaults(&uc);
	uc.window = UDP_WINDOW_MIN;
	ck_assert_int_eq(tp_run.p.ops->set_opts(c, &o), 0);
	tp_run.p.ops->want_read(c, 0);
}

static void owed_window_tick(uint64_t now, void *arg)
{
	struct lds_tp_conn *s = tp_run.server, *c = tp_run.client;

	(void)arg;
	if (s == NULL || c == NULL || c->state != UDP_ST_OPEN)
		return;
	switch (owed.phase) {
	case 0:
		/* The client at the window's end, everything acknowledged. */
		if (c->sq.next < c->sq.peer_max || c->sq.next >= c->sq.end || c->rec.in_flight || c->sq.retx.n)
			return;
		owed.advertised = s->advertised;
		owed.peer_max = c->sq.peer_max;
		owed.sent = s->bytes_sent;
		owed.peer_len = s->peer_len;
		s->peer_len = 0;            /* no destination: EDESTADDRREQ */
		tp_run.p.ops->want_read(s, 1);
		owed.phase = 1;
		return;
	case 1:
		/* The new window was told, and refused. */
		if (s->advertised == owed.advertised)
			return;
		ck_assert_uint_eq(s->bytes_sent, owed.sent);
		s->peer_len = owed.peer_len;
		owed.refused_ns = now;
		owed.phase = 2;
		return;
	case 2:
		if (c->sq.peer_max == owed.peer_max)
			return;
		owed.healed_ns = now;
		owed.phase = 3;
		return;
	default:
		return;
	}
}

START_TEST(test_window_refused)
{
	struct tp_run_params p = { .ops = transport_find("udp"), .nmsg = 100, .max_len = 200000, .window = 64,
				   .seed = 3, .deadline_ms = 60000, .accepted = owed_accepted };

	tp_run_start(&p);
	run_ticked(owed_window_tick);
	ck_assert_uint_gt(tp_run.got, 2ull * UDP_WINDOW_MIN);
	ck_assert_int_eq(owed.phase, 3);
	printf("udp_e2e window refused: %zu bytes; the sender had the window %.3f ms after the socket allowed it again\n",
	       tp_run.got, (double)(owed.healed_ns - owed.refused_ns) / 1e6);
	ck_assert_msg(owed.healed_ns - owed.refused_ns < OWED_HEAL_MAX_NS,
		      "the refused window reached the sender %.3f s after the socket allowed it again",
		      (double)(owed.healed_ns - owed.refused_ns) / 1e9);
	tp_run_finish();
}
END_TEST

/* The kind's status keys, from the settings block. */
START_TEST(test_status)
{
	char *buf = NULL;
	size_t len = 0;
	FILE *f = open_memstream(&buf, &len);
	const struct lds_transport_ops *ops = transport_find("udp");
	struct udp_conf uc;

	ck_assert_ptr_nonnull(ops);
	ck_assert(ops->caps.flags & LDS_TP_CAP_MESSAGE);
	ck_assert_uint_ge(ops->caps.max_msg, (4u << 20) + 64);
	ops->conf_defaults(&uc);
	ops->status(&uc, f);
	fclose(f);
	ck_assert_ptr_nonnull(strstr(buf, "\"udp_mtu\":1232"));
	ck_assert_ptr_nonnull(strstr(buf, "\"udp_mtu_max\":1472"));
	ck_assert_ptr_nonnull(strstr(buf, "\"udp_window\":67108864"));
	ck_assert_ptr_nonnull(strstr(buf, "\"udp_idle_timeout\":30"));
	free(buf);
}
END_TEST

Suite *make_udp_e2e_suite(void)
{
	Suite *s = suite_create("udp_e2e");
	TCase *tc = tcase_create("udp_e2e");

	tcase_set_timeout(tc, 90);
	tcase_add_test(tc, test_clean);
	tcase_add_test(tc, test_lossy);
	tcase_add_test(tc, test_path_mtu);
	tcase_add_test(tc, test_long_path);
	tcase_add_test(tc, test_close_in_upcall);
	tcase_add_test(tc, test_refused);
	tcase_add_test(tc, test_spray);
	tcase_add_test(tc, test_status);
	tcase_add_test(tc, test_ack_with_window_full);
	tcase_add_test(tc, test_window_refused);
	suite_add_tcase(s, tc);
	return s;
}
