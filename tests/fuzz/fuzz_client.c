/*
 * fuzz_client.c - libFuzzer target for one local client's session with the
 * client server (ldsd/clientsrv.c and the files beside it), as a hostile
 * process would hold it: the input is the byte stream the client writes.
 *
 * A real client server (no links) listens on a unix socket in /tmp; each
 * input is written over a fresh connection, then the connection is shut
 * and the event loop run for a bounded number of rounds.  Besides "no
 * crash" (ASan, UBSan), the server must have let go of the connection
 * once it is closed, so that nothing a client sends outlives it, and
 * LeakSanitizer checks that nothing leaks when the server is freed.
 */
#include <errno.h>
#include <fcntl.h>
#include <stdint.h>

#include "clientbed.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define ROUNDS 64

/* The client's side of the current session. */
static struct {
	int fd;
	const uint8_t *data;
	size_t size, off;
	int rounds, ended;
} cur;

static void on_idle(void *arg)
{
	uint8_t buf[65536];

	(void)arg;
	clientsrv_flush(cs);
	if (cur.fd >= 0) {
		ssize_t n;

		while (cur.off < cur.size) {
			ssize_t w = write(cur.fd, cur.data + cur.off, cur.size - cur.off);

			if (w <= 0)
				break;
			cur.off += (size_t)w;
		}
		if (cur.off == cur.size)
			shutdown(cur.fd, SHUT_WR);
		while ((n = read(cur.fd, buf, sizeof(buf))) > 0)
			;
		/* The server closed the connection: the session is over. */
		if (n == 0)
			cur.ended = 1;
	}
	if (++cur.rounds >= ROUNDS || cur.ended)
		evloop_stop(d.ev);
}

static void setup(void)
{
	struct config_clients c = { .max_clients = 16, .max_per_user = 16, .hello_timeout = 5.0,
				    .max_message = 1 << 20, .queue_max = 1 << 16, .input_per_user = 1 << 20,
				    .undelivered_share = 50, .undelivered_ttl = 0.001 };

	bed_setup("fuzz_client", &c, on_idle);
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (cs == NULL)
		setup();
	cur.fd = bed_connect();
	cur.data = data;
	cur.size = size;
	cur.off = 0;
	cur.rounds = 0;
	cur.ended = 0;
	CHECK(evloop_run(d.ev) == 0);
	/* The client goes away; the server must let go of it. */
	close(cur.fd);
	cur.fd = -1;
	cur.rounds = ROUNDS - 4;
	CHECK(evloop_run(d.ev) == 0);
	CHECK(bed_clients_connected() == 0);
	return 0;
}
