/* check_handshake.c - the handshake's transition table and its dispatcher
 * (ldsd/handshake.c): which (state, event) pairs are handled and where
 * they lead, and that every other pair is refused, logged, and leaves the
 * stream as it was. */
#include <check.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "ldsd/handshake.h"
#include "ldsd/log.h"
#include "suites.h"

/* The handshake of docs/protocol.md: the pairs handled and where they go. */
static const struct {
	enum stream_state st;
	enum hs_event ev;
	int next;
} expected[] = {
	{ ST_CONNECTING, HS_EV_CONNECTED, ST_HELLO_SENT },
	{ ST_HELLO_SENT, HS_EV_CHALLENGE, ST_AUTH_SENT },
	{ ST_AUTH_SENT, HS_EV_READY, ST_UP },
	{ ST_WAIT_HELLO, HS_EV_HELLO, ST_CHALLENGE_SENT },
	{ ST_CHALLENGE_SENT, HS_EV_AUTH, ST_UP },
};

static int expected_next(enum stream_state st, enum hs_event ev, int *next)
{
	if (ev == HS_EV_REFUSE) {
		*next = HS_CLOSE;
		return 1;
	}
	for (size_t i = 0; i < sizeof(expected) / sizeof(expected[0]); i++) {
		if (expected[i].st == st && expected[i].ev == ev) {
			*next = expected[i].next;
			return 1;
		}
	}
	return 0;
}

START_TEST(t_table_is_the_protocol)
{
	for (int st = 0; st < ST_COUNT; st++) {
		for (int ev = 0; ev < HS_EV_COUNT; ev++) {
			const struct hs_transition *t = hs_lookup((enum stream_state)st, (enum hs_event)ev);
			int next;

			if (!expected_next((enum stream_state)st, (enum hs_event)ev, &next)) {
				ck_assert_msg(t == NULL, "%s in %s has a row", hs_event_names[ev], stream_state_names[st]);
				continue;
			}
			ck_assert_msg(t != NULL, "%s in %s has no row", hs_event_names[ev], stream_state_names[st]);
			ck_assert_int_eq(t->next, next);
		}
	}
}
END_TEST

/* Following the table from each role's first state reaches ST_UP in the
 * protocol's number of steps (connector 3, listener 2). */
START_TEST(t_both_roles_reach_up)
{
	static const enum hs_event connector[] = { HS_EV_CONNECTED, HS_EV_CHALLENGE, HS_EV_READY };
	static const enum hs_event listener[] = { HS_EV_HELLO, HS_EV_AUTH };
	enum stream_state st = ST_CONNECTING;

	for (size_t i = 0; i < 3; i++)
		st = (enum stream_state)hs_lookup(st, connector[i])->next;
	ck_assert_int_eq(st, ST_UP);
	st = ST_WAIT_HELLO;
	for (size_t i = 0; i < 2; i++)
		st = (enum stream_state)hs_lookup(st, listener[i])->next;
	ck_assert_int_eq(st, ST_UP);
}
END_TEST

/* ---- the dispatcher, on a stream over a fake conn ---------------------- */

struct lds_tp_conn {
	uint8_t out[4096];
	size_t out_len;
};

static int fk_send(struct lds_tp_conn *c, const struct iovec *iov, int n, unsigned flags, size_t *sent)
{
	*sent = 0;
	for (int i = 0; i < n; i++) {
		ck_assert_uint_le(c->out_len + iov[i].iov_len, sizeof(c->out));
		memcpy(c->out + c->out_len, iov[i].iov_base, iov[i].iov_len);
		c->out_len += iov[i].iov_len;
		*sent += iov[i].iov_len;
	}
	return 0;
}

static void fk_want(struct lds_tp_conn *c, int on)
{
}

static void fk_push(struct lds_tp_conn *c)
{
}

static const struct lds_transport_ops fk_ops = {
	.name = "fake", .send = fk_send, .push = fk_push, .want_write = fk_want, .want_read = fk_want,
};

/* No refused pair may reach the link. */
static struct link *no_identify(struct daemon *d, const char *cluster)
{
	ck_abort_msg("identify called");
	return NULL;
}

static void no_stream(struct stream *s)
{
	ck_abort_msg("upcall called");
}

static void no_authentic(struct stream *s, uint64_t instance)
{
	ck_abort_msg("authentic called");
}

static int no_ack(struct stream *s)
{
	ck_abort_msg("queue_ack called");
	return -1;
}

static void no_attach(struct stream *s, unsigned idx, unsigned n)
{
	ck_abort_msg("attach called");
}

static const struct hs_upcalls no_hs = {
	.identify = no_identify, .identified = no_stream, .authentic = no_authentic, .queue_ack = no_ack,
	.attach = no_attach,
};
static const struct stream_upcalls no_up = { .up = no_stream };

static struct lds_tp_conn conn;
static FILE *log_file;

/* Log at debug level into a file the test reads back. */
static void setup(void)
{
	memset(&conn, 0, sizeof(conn));
	log_file = tmpfile();
	ck_assert_ptr_nonnull(log_file);
	ck_assert_int_ge(dup2(fileno(log_file), STDERR_FILENO), 0);
	log_init("check_handshake", 1, LOG_LVL_DEBUG);
}

static void teardown(void)
{
	fclose(log_file);
}

static int log_has(const char *what)
{
	char line[512];
	int found = 0;

	fflush(stderr);
	rewind(log_file);
	while (fgets(line, sizeof(line), log_file))
		found |= strstr(line, what) != NULL;
	return found;
}

static struct stream *fake_stream(enum stream_state st)
{
	struct stream *s = stream_new(NULL, &fk_ops, NULL, &no_up, st);

	ck_assert_ptr_nonnull(s);
	s->conn = &conn;
	snprintf(s->peer_addr, sizeof(s->peer_addr), "192.0.2.1:7000");
	return s;
}

/* Every pair without a row, run through the dispatcher (_i: state *
 * HS_EV_COUNT + event): -1, no action, no state change, nothing sent, and
 * a log line naming the event and the state. */
START_TEST(t_unhandled_pairs_refused)
{
	enum stream_state st = (enum stream_state)(_i / HS_EV_COUNT);
	enum hs_event ev = (enum hs_event)(_i % HS_EV_COUNT);
	struct wire_frame f = { .version = WIRE_VERSION, .type = WIRE_PING };
	struct stream *s;
	char want[128];
	int next;

	if (expected_next(st, ev, &next))
		return;
	s = fake_stream(st);
	ck_assert_int_eq(hs_dispatch(&no_hs, s, ev, ev == HS_EV_CONNECTED ? NULL : &f), -1);
	ck_assert_int_eq(s->st, st);
	ck_assert_uint_eq(conn.out_len, 0);
	snprintf(want, sizeof(want), "%s refused in state %s", hs_event_names[ev], stream_state_names[st]);
	ck_assert_msg(log_has(want), "no log line \"%s\"", want);
	stream_free(s);
}
END_TEST

/* A handled pair whose action fails leaves the state as it was: a
 * malformed HELLO is refused on the wire (REFUSE, protocol) and the link
 * is never asked for. */
START_TEST(t_failed_action_keeps_state)
{
	struct stream *s = fake_stream(ST_WAIT_HELLO);
	struct wire_frame f = { .version = WIRE_VERSION, .type = WIRE_HELLO, .len = 3,
				.payload = (const uint8_t *)"bad" }, out;
	struct wire_refuse_msg r;
	size_t used;

	ck_assert_int_eq(hs_frame(&no_hs, s, &f), -1);
	ck_assert_int_eq(s->st, ST_WAIT_HELLO);
	ck_assert_int_eq(wire_frame_parse(conn.out, conn.out_len, &out, &used), 1);
	ck_assert_uint_eq(used, conn.out_len);
	ck_assert_int_eq(out.type, WIRE_REFUSE);
	ck_assert_int_eq(wire_decode_refuse(&out, &r), 0);
	ck_assert_int_eq(r.code, WIRE_REFUSE_PROTOCOL);
	ck_assert_str_eq(r.reason, "malformed HELLO");
	stream_free(s);
}
END_TEST

/* READY must be empty: one with a payload is refused in AUTH_SENT. */
START_TEST(t_ready_with_payload_refused)
{
	struct stream *s = fake_stream(ST_AUTH_SENT);
	struct wire_frame f = { .version = WIRE_VERSION, .type = WIRE_READY, .len = 1, .payload = (const uint8_t *)"x" };

	ck_assert_int_eq(hs_frame(&no_hs, s, &f), -1);
	ck_assert_int_eq(s->st, ST_AUTH_SENT);
	stream_free(s);
}
END_TEST

Suite *make_handshake_suite(void)
{
	Suite *s = suite_create("handshake");
	TCase *tc = tcase_create("fsm");

	tcase_add_checked_fixture(tc, setup, teardown);
	tcase_add_test(tc, t_table_is_the_protocol);
	tcase_add_test(tc, t_both_roles_reach_up);
	tcase_add_loop_test(tc, t_unhandled_pairs_refused, 0, ST_COUNT * HS_EV_COUNT);
	tcase_add_test(tc, t_failed_action_keeps_state);
	tcase_add_test(tc, t_ready_with_payload_refused);
	suite_add_tcase(s, tc);
	return s;
}
