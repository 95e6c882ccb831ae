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
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "ldsd/clientsrv.h"
#include "ldsd/config.h"
#include "ldsd/daemon.h"
#include "ldsd/evloop.h"
#include "ldsd/log.h"

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size);

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)
#define ROUNDS 64

static struct config cfg;
static struct daemon d;
static struct clientsrv *cs;

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

/* Keeps epoll_wait short: the rounds, not the clock, bound a run. */
static void on_tick(uint64_t now_ns, void *arg)
{
	(void)now_ns;
	(void)arg;
}

static void teardown(void)
{
	clientsrv_free(cs);
	evloop_free(d.ev);
	unlink(cfg.client_socket);
}

static void setup(void)
{
	snprintf(cfg.file, sizeof(cfg.file), "fuzz_client");
	snprintf(cfg.cluster, sizeof(cfg.cluster), "fz");
	snprintf(cfg.client_socket, sizeof(cfg.client_socket), "/tmp/fuzz_client.%d.sock", (int)getpid());
	cfg.clients = (struct config_clients){ .max_clients = 16, .max_per_user = 16, .hello_timeout = 5.0,
					       .max_message = 1 << 20, .queue_max = 1 << 16, .input_per_user = 1 << 20,
					       .undelivered_share = 50, .undelivered_ttl = 0.001 };
	log_init("fuzz_client", 1, LOG_LVL_ERR);
	d.cfg = &cfg;
	d.ev = evloop_new();
	CHECK(d.ev != NULL);
	cs = clientsrv_new(&d);
	CHECK(cs != NULL);
	d.cs = cs;
	CHECK(evloop_idle_add(d.ev, on_idle, NULL) > 0);
	CHECK(evloop_tick_add(d.ev, 1, on_tick, NULL) > 0);
	atexit(teardown);
}

static int connect_server(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	CHECK(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", cfg.client_socket);
	CHECK(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	return fd;
}

/* Connected clients, from the status the control socket shows. */
static int clients_connected(void)
{
	char buf[4096] = "";
	FILE *f = fmemopen(buf, sizeof(buf) - 1, "w");
	const char *p;

	CHECK(f != NULL);
	clientsrv_status_json(cs, f);
	fclose(f);
	p = strstr(buf, "\"clients\":");
	CHECK(p != NULL);
	return atoi(p + strlen("\"clients\":"));
}

int LLVMFuzzerTestOneInput(const uint8_t *data, size_t size)
{
	if (cs == NULL)
		setup();
	cur.fd = connect_server();
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
	CHECK(clients_connected() == 0);
	return 0;
}
