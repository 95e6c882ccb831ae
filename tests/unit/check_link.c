/*
 * check_link.c - the link (ldsd/link.c and the modules link_int.h lists)
 * between two whole daemons in this process (linkbed.h), over every kind
 * that can carry a link, sealed and in clear.  The link-level half of the
 * conformance suite (check_conformance.c is the transport-level one): what
 * a sender on A is promised, checked on what arrives at B, while faults
 * are made at chosen moments: a stream closed (link_fault_break) or its
 * conn reset with blocks in flight (tp_mem_break), a conn held while the
 * others overtake it (tp_mem_hold), bytes no peer sent (tp_mem_inject: a
 * message cut inside a frame), a receiver that stops consuming.  Refused
 * handshakes, a restarted peer and the reconnect back-off:
 * check_link_session.c.
 *
 * What the tests check does not depend on the interleaving; how the
 * blocks interleave does.
 */
#include <check.h>
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ldsd/admission.h"
#include "ldsd/clock.h"
#include "ldsd/link_int.h"
#include "ldsd/log.h"
#include "fakeclock.h"
#include "linkbed.h"
#include "suites.h"
#include "tp_mem.h"

/* ---- delivery ------------------------------------------------------------ */

/* Messages of random sizes over 4 streams arrive once each, whole and in
 * order, and each is acknowledged to its sender once.  ACK frames are
 * counted both ways (ldsctl status): B batched its ACKs (fewer than the
 * blocks), and A took none that B did not send. */
START_TEST(t_delivery)
{
	send_all(_i, 600, all_acked, NULL);
	ck_assert_uint_eq(run.acked, 600);
	ck_assert_uint_eq(run.a.l->up, STREAMS);
	ck_assert_uint_eq(run.b.l->up, STREAMS);
	ck_assert_uint_gt(run.a.l->acks_received, 0);
	ck_assert_uint_le(run.a.l->acks_received, run.b.l->acks_sent);
	ck_assert_uint_lt(run.b.l->acks_sent, run.b.l->rb.blocks_recv);
	/* Sealed over a byte stream, payloads were sealed from where the
	 * sender wrote them; message kinds and clear links copy them. */
	if (_i % 2 == 0 && (kinds[_i / 2]->caps.flags & LDS_TP_CAP_STREAM))
		ck_assert_uint_gt(run.deferred, 0);
	else
		ck_assert_uint_eq(run.deferred, 0);
	finish();
}
END_TEST

/* A slow path (tp_mem_drip: 300 more bytes readable per loop round): B
 * waits for each DATA frame's rest (rx_lowat) and reads it whole, about
 * two reads a frame (580 bytes a read here) where it made one a drip (265
 * without the wait).  Every message still arrives once, whole, in order. */
START_TEST(t_trickle)
{
	size_t bytes = 0;
	unsigned recvs = 0;

	ck_assert_ptr_nonnull(kinds[_i / 2]->rx_lowat);
	tp_mem_drip(300);
	send_all(_i, 60, all_acked, NULL);
	tp_mem_drip(0);
	for (uint64_t id = 1; id <= 60; id++)
		bytes += msg_len(id);
	for (int k = 0; k < STREAMS; k++) {
		const struct stream *s = run.b.l->streams[k];

		if (s != NULL && s->conn != NULL)
			recvs += tp_mem_recvs(s->conn);
	}
	ck_assert_uint_gt(recvs, 0);
	ck_assert_msg(bytes / recvs >= 400, "B read %zu bytes of messages in %u calls: %zu a call", bytes, recvs,
		      bytes / recvs);
	finish();
}
END_TEST

/* Each loop round: B's streams that wait for a frame's rest, and those
 * that do not but keep a raised low mark. */
static unsigned burst_waits, burst_stale, burst_rounds;

/* Seven rounds of a trickle (B waits for a frame's rest), then one that
 * makes all that arrived readable at once: B reads that rest and the
 * frames behind it straight into place until its turn ends
 * (READS_PER_EVENT). */
static void burst_in_round(void)
{
	tp_mem_drip(++burst_rounds % 8 ? 300 : 0);
	for (int k = 0; k < STREAMS; k++) {
		const struct stream *s = run.b.l->streams[k];

		if (s == NULL || s->st != ST_UP)
			continue;
		if (s->rx_wait_ns != 0)
			burst_waits++;
		else if (s->rx_lowat > 1)
			burst_stale++;
	}
}

/* The low mark raised for a waited frame must go with the wait: left
 * after a burst, a frame shorter than that one behind it woke nothing: on
 * loopback a partly filled block stalled the link for 5-45 s, until
 * enough keepalive pings had arrived behind it (or, with the default
 * settings, the stream's inactivity timeout closed it). */
START_TEST(t_burst_after_wait)
{
	burst_waits = burst_stale = burst_rounds = 0;
	setup_sealed_or_clear(_i);
	/* Small blocks: most of a message's blocks lie wholly inside it and
	 * are read straight into place. */
	run.a.cfg.peers[0].block_size = run.b.cfg.peers[0].block_size = 512;
	go();
	tp_mem_drip(300);
	run.send_to = 400;
	run.in_round = burst_in_round;
	run_until(all_acked);
	tp_mem_drip(0);
	assert_once(1, run.send_to, 1);
	ck_assert_uint_gt(burst_waits, 0);
	ck_assert_msg(burst_stale == 0, "%u times a stream of B kept a raised low mark with no wait on", burst_stale);
	finish();
}
END_TEST

/* A's send buffer holds seven blocks (a message may take half): each slot is filled again as soon
 * as its block is acknowledged, so a block given back before the
 * transport is done with it (memmsg holds what it sends several loop
 * rounds) is rewritten under it. */
START_TEST(t_small_sendbuf)
{
	setup_sealed_or_clear(_i);
	run.a.cfg.peers[0].send_memory = 7 * BLOCK;
	go();
	run.send_to = 300;
	run_until(all_acked);
	assert_once(1, run.send_to, 1);
	finish();
}
END_TEST

/* B stops consuming: A's sends are refused (-ENOSPC) while B holds no
 * more than its recv_memory; once B consumes, everything arrives once. */
static int backpressure_step(void)
{
	if (run.phase == 0) {
		if (run.b.arrived != run.mark || run.enospc == 0) {
			run.mark = run.b.arrived;
			run.ticks = 0;
		} else if (run.ticks >= 20) {
			run.phase = 1;             /* stuck for 100 ms: consume */
			ck_assert_uint_lt(run.next_id, run.send_to);
			side_release(&run.b);
		}
		return 0;
	}
	return all_acked();
}

START_TEST(t_backpressure)
{
	setup(_i);
	go();
	run.b.hold = 1;
	run.send_to = NMSG_MAX;
	run_until(backpressure_step);
	assert_once(1, NMSG_MAX, 1);
	ck_assert_uint_gt(run.enospc, 0);
	ck_assert_uint_gt(run.b.held_max, 0);
	ck_assert_uint_le(run.b.held_max, MEMORY);
	finish();
}
END_TEST

/* ---- broken streams -------------------------------------------------- */

/* An up stream of A with blocks written to it and not acknowledged, or -1. */
static int stream_in_flight(void)
{
	for (int k = 0; k < STREAMS; k++) {
		const struct stream *s = run.a.l->streams[k];

		if (s && s->st == ST_UP && sendbuf_stream_unacked(&run.a.l->sb, k))
			return k;
	}
	return -1;
}

/* Every loop round, just after the links wrote: three batches of 250
 * messages, one after the other, each with a stream closed while blocks
 * are in flight on it, by A, by B, by A.  A batch that went through
 * before a round saw blocks in flight (a loaded machine) gets another
 * after it. */
static void break_in_round(void)
{
	int k = stream_in_flight();

	if (run.phase % 2 == 0 && run.phase < 6 && all_acked()) {
		run.send_to += 250;
		run.phase++;
	} else if (run.phase % 2 && k >= 0 && link_fault_break((run.phase % 4 == 3 ? &run.b : &run.a)->l, k) == 1) {
		run.phase++;
	} else if (run.phase % 2 && all_acked() && run.send_to + 250 <= NMSG_MAX) {
		run.send_to += 250;
	}
}

static int break_step(void)
{
	return run.phase == 6 && all_acked();
}

START_TEST(t_break_in_flight)
{
	send_all(_i, 0, break_step, break_in_round);
	ck_assert_uint_gt(run.a.l->sb.blocks_resent, 0);
	ck_assert_uint_ge(run.a.l->nfail + run.b.l->nfail, 3);
	finish();
}
END_TEST

/* TCP with zerocopy on both sides, every write zero-copy (zerocopy_min
 * 1): the stream's queue is a ring of bytes held until the kernel's
 * completion.  Messages arrive once each, in order (_i 0), also with
 * streams closed while blocks are in flight (_i 1: conns reset while the
 * kernel holds sends, their memory kept until it let go); zero-copy
 * sends were made and completed. */
START_TEST(t_zerocopy)
{
	struct side *sides[2] = { &run.a, &run.b };
	uint64_t sends = 0, done = 0;
	char err[256];
	int k = 0;

	while (k < nkinds && strcmp(kinds[k]->name, "tcp") != 0)
		k++;
	ck_assert_int_lt(k, nkinds);
	setup_sealed_or_clear(2 * k);
	for (int j = 0; j < 2; j++) {
		ck_assert_msg(config_peer_set(&sides[j]->cfg.peers[0], "zerocopy", "true", err, sizeof(err)) == 0, "%s",
			      err);
		ck_assert_msg(config_peer_set(&sides[j]->cfg.peers[0], "zerocopy_min", "1", err, sizeof(err)) == 0,
			      "%s", err);
	}
	go();
	run.send_to = _i == 0 ? 600 : 0;
	run.in_round = _i == 0 ? NULL : break_in_round;
	run_until(_i == 0 ? all_acked : break_step);
	assert_once(1, run.send_to, 1);
	for (unsigned q = 0; q < STREAMS; q++) {
		struct lds_tp_info info;

		if (stream_query(run.a.l->streams[q], &info)) {
			sends += info.zc_sends;
			done += info.zc_completed;
		}
	}
	ck_assert_uint_gt(sends, 0);
	ck_assert_uint_le(done, sends);
	finish();
}
END_TEST

/* tp_mem: B's end of stream 0 is held, and a batch of messages sent: 1
 * once the stream is up.  Stream 0 because a link fills its streams in
 * order: its first blocks go there. */
static int hold_and_send(void)
{
	const struct stream *s = run.b.l->streams[0];

	if (s == NULL || s->st != ST_UP)
		return 0;
	run.held_id = tp_mem_id(s->conn);
	tp_mem_hold(s->conn, 1);
	run.send_to += 250;
	run.ticks = 0;
	return 1;
}

/* The held conn, while B's stream 0 still carries it; NULL once the link
 * closed it (a stream not read from may be closed, and its conn freed). */
static struct lds_tp_conn *held_conn(void)
{
	const struct stream *s = run.b.l->streams[0];

	return s != NULL && s->conn != NULL && tp_mem_id(s->conn) == run.held_id ? s->conn : NULL;
}

/* Three rounds of hold_and_send, each ended, if reset, by resetting the
 * held conn once blocks wait in it, else by letting it go once B holds
 * blocks out of order (later ones came on the other streams); a round
 * whose held conn the link closed itself ends with it. */
static int hold_step(int reset)
{
	struct lds_tp_conn *c;

	if (run.phase == 6)
		return all_acked();
	if (run.phase % 2 == 0) {
		run.phase += hold_and_send();
	} else if ((c = held_conn()) == NULL) {
		run.phase++;
	} else if (reset && tp_mem_unread(c) >= 2 * BLOCK) {
		tp_mem_break(c);
		run.phase++;
	} else if (!reset && (run.b.l->rb.ooo_bytes > 0 || run.ticks > 100)) {
		tp_mem_hold(c, 0);
		run.phase++;
	}
	return 0;
}

static int loss_step(void)
{
	return hold_step(1);
}

static int reorder_step(void)
{
	return hold_step(0);
}

/* tp_mem only: blocks in flight are lost in a reset conn, three times:
 * they are resent on the other streams. */
START_TEST(t_loss_in_flight)
{
	send_all(_i, 0, loss_step, NULL);
	ck_assert_uint_eq(run.send_to, 750);
	ck_assert_uint_gt(run.a.l->sb.blocks_resent, 0);
	ck_assert_uint_ge(run.a.l->nfail, 3);
	finish();
}
END_TEST

/* tp_mem only: B's end of a stream is held while the others carry later
 * blocks, three times: B holds them out of order and delivers in order. */
START_TEST(t_reorder)
{
	send_all(_i, 0, reorder_step, NULL);
	ck_assert_uint_eq(run.send_to, 750);
	ck_assert_uint_gt(run.ooo_max, 0);
	ck_assert_uint_eq(run.a.l->nfail, 0);
	finish();
}
END_TEST

/* ---- bad frames ------------------------------------------------------ */

/* Once B's stream 0 is up and 100 messages acknowledged, B's end of it
 * receives what no peer sent - a message cut inside a DATA frame on a
 * message kind, a frame with a wrong magic on a byte stream - and 250
 * more messages are sent. */
static int bad_frame_step(void)
{
	static const uint8_t cut[] = { 0x4c, 0x44, WIRE_VERSION, WIRE_DATA, 0, 0, 0x10, 0, 0, 0,
				       0, 0, 0, 0, 0, 0, 0, 0, 0, 1 };
	static const uint8_t magic[WIRE_HDR_LEN] = { 'N', 'O' };
	const struct stream *s = run.b.l->streams[0];

	if (run.phase > 0)
		return all_acked();
	if (s == NULL || s->st != ST_UP || run.acked < 100)
		return 0;
	if (run.ops->caps.flags & LDS_TP_CAP_MESSAGE)
		ck_assert_int_eq(tp_mem_inject(s->conn, cut, sizeof(cut)), 0);
	else
		ck_assert_int_eq(tp_mem_inject(s->conn, magic, sizeof(magic)), 0);
	run.send_to += 250;
	run.phase++;
	return 0;
}

/* tp_mem kinds: B refuses the bad frame, naming the peer, and closes that
 * stream only; what A sends arrives once, in order, on the others and on
 * the stream A connects again. */
START_TEST(t_bad_frame)
{
	send_all(_i, 100, bad_frame_step, NULL);
	ck_assert_uint_eq(run.send_to, 350);
	/* "clusterA: peer mem:0x...: bad frame (...); closing the stream" */
	ck_assert_msg(log_count(": peer mem:0x") == 1 && log_count("bad frame (") >= 1,
		      "%s: B logged the bad frame %d times, naming the peer %d times", run.ops->name,
		      log_count("bad frame ("), log_count(": peer mem:0x"));
	ck_assert_int_ge(log_count(run.ops->caps.flags & LDS_TP_CAP_MESSAGE
				   ? "bad frame (a message of 20 bytes ends inside a frame at byte 0); closing"
				   : "bad frame (Protocol error); closing"), 1);
	ck_assert_uint_ge(run.b.l->nfail, 1);
	finish();
}
END_TEST

/* A stream's unsent limit from its rate over a tick: 128 KiB up to 25 MB/s
 * (every WAN path of the benchmarks), then 5 ms of its sending in 64 KiB
 * steps, at most 1 MiB; never lower for a higher rate. */
START_TEST(t_unsent_limit)
{
	const uint64_t tick = 50 * 1000000ull;
	size_t last = 0;

	ck_assert_uint_eq(link_unsent_limit(0, tick), 128u << 10);
	ck_assert_uint_eq(link_unsent_limit(1u << 30, 0), 128u << 10);
	ck_assert_uint_eq(link_unsent_limit(3000000 / 20, tick), 128u << 10);  /* 3 MB/s: 200 Mb/s over 8 */
	ck_assert_uint_eq(link_unsent_limit(25000000 / 20, tick), 128u << 10); /* 25 MB/s: 200 Mb/s on one */
	ck_assert_uint_eq(link_unsent_limit(50000000 / 20, tick), 256u << 10); /* 250,000 bytes in 5 ms */
	ck_assert_uint_eq(link_unsent_limit(2000000000 / 20, tick), 1u << 20);
	ck_assert_uint_eq(link_unsent_limit(UINT64_MAX, tick), 1u << 20);
	for (uint64_t rate = 0; rate <= 400000000; rate += 1000000) {
		size_t v = link_unsent_limit(rate / 20, tick);

		ck_assert_msg(v >= last && v % (64u << 10) == 0, "%" PRIu64 " B/s: %zu after %zu", rate, v, last);
		last = v;
	}
}
END_TEST

Suite *make_link_suite(void)
{
	Suite *s = suite_create("link");
	TCase *tc = tcase_create("link");

	linkbed_find_kinds();
	tcase_set_timeout(tc, 30);
	/* These tests' loop index names a kind and sealed or clear
	 * (setup_sealed_or_clear). */
	tcase_add_loop_test(tc, t_delivery, 0, 2 * nkinds);
	tcase_add_loop_test(tc, t_break_in_flight, 0, 2 * nkinds);
	tcase_add_loop_test(tc, t_small_sendbuf, 0, 2 * nkinds);
	tcase_add_loop_test(tc, t_loss_in_flight, 0, 2 * nmem);
	tcase_add_loop_test(tc, t_reorder, 0, 2 * nmem);
	tcase_add_loop_test(tc, t_trickle, 0, 2);
	tcase_add_loop_test(tc, t_burst_after_wait, 0, 2);
	tcase_add_loop_test(tc, t_bad_frame, 0, 2 * nmem);
	tcase_add_loop_test(tc, t_backpressure, 0, nkinds);
	tcase_add_loop_test(tc, t_zerocopy, 0, 2);
	tcase_add_test(tc, t_unsent_limit);
	suite_add_tcase(s, tc);
	return s;
}

