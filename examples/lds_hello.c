/*
 * lds_hello.c - the modern liblds API in a few lines.
 *
 *   lds_hello NAME            answer every message NAME receives with
 *                             "hello, SOURCE", until interrupted
 *   lds_hello NAME DST        send "hello from NAME" to DST ("cluster/name",
 *                             or "name" in this cluster), print the answer
 *                             and wait until the gateway settled the message
 *
 *   cc lds_hello.c $(pkg-config --cflags --libs lds) -o lds_hello
 *
 * The ldsd socket is $LDS_SOCKET, else /run/lds/ldsd.sock.
 */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include <lds.h>

#define TIMEOUT_MS 30000
#define STEP_MS    100

static int fail(const char *what, int err)
{
	fprintf(stderr, "lds_hello: %s: %s\n", what, lds_strerror(err));
	return 1;
}

/* LOST and ERROR events say which messages will never arrive. */
static void report_events(struct lds *h)
{
	struct lds_event ev;

	while (lds_next_event(h, &ev) == 1)
		fprintf(stderr, "lds_hello: messages %llu..%llu: %s%s%s\n", (unsigned long long)ev.first,
			(unsigned long long)ev.last, ev.type == LDS_EV_LOST ? "lost: " : lds_strerror(ev.err),
			ev.type == LDS_EV_LOST ? "" : ": ", ev.text);
}

static int answer_forever(struct lds *h)
{
	char reply[LDS_NAME_MAX + 16];
	struct lds_msg m;
	int rc;

	for (;;) {
		rc = lds_recv(h, &m, -1);
		if (rc < 0)
			return fail("lds_recv", rc);
		printf("%s: %.*s\n", m.src, (int)m.len, (const char *)m.data);
		fflush(stdout);
		snprintf(reply, sizeof(reply), "hello, %s", m.src);
		rc = lds_send(h, m.src, reply, strlen(reply), NULL);
		if (rc < 0)
			return fail("lds_send", rc);
		report_events(h);
	}
}

/* Waits for the answer, but not after the gateway reported the greeting
 * refused or lost (report_events says why). */
static int await_answer(struct lds *h, struct lds_msg *m)
{
	struct lds_stats st;
	int rc = -ETIMEDOUT;

	for (int waited = 0; waited < TIMEOUT_MS && rc == -ETIMEDOUT; waited += STEP_MS) {
		lds_get_stats(h, &st);
		if (st.failed + st.lost > 0)
			return -EIO;
		rc = lds_recv(h, m, STEP_MS);
	}
	return rc;
}

static int say_hello(struct lds *h, const char *dst)
{
	char text[LDS_NAME_MAX + 16];
	struct lds_msg m;
	uint64_t id;
	int rc;

	snprintf(text, sizeof(text), "hello from %s", lds_name(h));
	rc = lds_send(h, dst, text, strlen(text), &id);
	if (rc < 0)
		return fail("lds_send", rc);
	rc = await_answer(h, &m);
	if (rc < 0) {
		report_events(h);
		return fail("no answer", rc);
	}
	printf("%s: %.*s\n", m.src, (int)m.len, (const char *)m.data);
	rc = lds_wait_settled(h, id, TIMEOUT_MS);
	report_events(h);
	return rc < 0 ? fail("lds_wait_settled", rc) : 0;
}

int main(int argc, char **argv)
{
	struct lds *h;
	int err = 0, rc;

	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: lds_hello NAME [DST]\n");
		return 2;
	}
	h = lds_open(NULL, argv[1], TIMEOUT_MS, &err);
	if (h == NULL)
		return fail("lds_open", err);
	rc = argc == 3 ? say_hello(h, argv[2]) : answer_forever(h);
	err = lds_close(h);
	if (err < 0)
		return fail("lds_close", err);
	return rc;
}
