/*
 * clientbed.h - a real client server (ldsd/clientsrv.c and the files
 * beside it, no links) listening on a unix socket in /tmp, for the fuzz
 * targets that play a hostile local process (fuzz_client.c,
 * fuzz_shmring.c).  Header-only: each target is a program of its own.
 */
#ifndef LDS_FUZZ_CLIENTBED_H
#define LDS_FUZZ_CLIENTBED_H

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

#define CHECK(cond) do { if (!(cond)) abort(); } while (0)

static struct config cfg;
static struct daemon d;
static struct clientsrv *cs;

/* Keeps epoll_wait short: the rounds, not the clock, bound a run. */
static void bed_on_tick(uint64_t now_ns, void *arg)
{
	(void)now_ns;
	(void)arg;
}

static void bed_teardown(void)
{
	clientsrv_free(cs);
	evloop_free(d.ev);
	unlink(cfg.client_socket);
}

/* The server of target name, with clients' settings c; on_idle runs each
 * loop round (the target's client acts there). */
static void bed_setup(const char *name, const struct config_clients *c, void (*on_idle)(void *))
{
	snprintf(cfg.file, sizeof(cfg.file), "%s", name);
	snprintf(cfg.cluster, sizeof(cfg.cluster), "fz");
	snprintf(cfg.client_socket, sizeof(cfg.client_socket), "/tmp/%s.%d.sock", name, (int)getpid());
	cfg.clients = *c;
	log_init(name, 1, LOG_LVL_ERR);
	d.cfg = &cfg;
	d.ev = evloop_new();
	CHECK(d.ev != NULL);
	cs = clientsrv_new(&d);
	CHECK(cs != NULL);
	d.cs = cs;
	CHECK(evloop_idle_add(d.ev, on_idle, NULL) > 0);
	CHECK(evloop_tick_add(d.ev, 1, bed_on_tick, NULL) > 0);
	atexit(bed_teardown);
}

/* A new connection to the server, non-blocking. */
static int bed_connect(void)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	CHECK(fd >= 0);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", cfg.client_socket);
	CHECK(connect(fd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	return fd;
}

/* Connected clients, from the status the control socket shows. */
static int bed_clients_connected(void)
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

#endif
