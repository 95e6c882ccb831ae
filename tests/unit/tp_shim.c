/* tp_shim.c - a lossy, slow path for tests of a transport over UDP; see
 * tp_shim.h. */
#include <check.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/socket.h>

#include "ldsd/clock.h"
#include "tp_shim.h"

static void shim_send(struct tp_shim *s, int dir, const uint8_t *b, size_t n)
{
	if (dir == 1)
		(void)send(s->back, b, n, MSG_DONTWAIT);
	else
		(void)sendto(s->front, b, n, MSG_DONTWAIT, (struct sockaddr *)&s->client, sizeof(s->client));
}

/* On a long path the datagram waits its delay (a full queue drops it). */
static void shim_out(struct tp_shim *s, int dir, const uint8_t *b, size_t n)
{
	struct tp_shim_dgram *d;

	if (s->delay_ns == 0) {
		shim_send(s, dir, b, n);
		return;
	}
	if (s->qn == TP_SHIM_QUEUE) {
		s->dropped++;
		return;
	}
	d = &s->q[(s->qh + s->qn++) % TP_SHIM_QUEUE];
	d->at = clock_now_ns() + s->delay_ns;
	d->dir = dir;
	d->len = n;
	memcpy(d->b, b, n);
}

static void shim_due(struct tp_shim *s)
{
	uint64_t now = clock_now_ns();

	while (s->qn && s->q[s->qh].at <= now) {
		shim_send(s, s->q[s->qh].dir, s->q[s->qh].b, s->q[s->qh].len);
		s->qh = (s->qh + 1) % TP_SHIM_QUEUE;
		s->qn--;
	}
}

static void shim_release(struct tp_shim *s)
{
	if (s->held_dir) {
		shim_out(s, s->held_dir, s->held, s->held_len);
		s->held_dir = 0;
	}
}

static void shim_pass(struct tp_shim *s, int dir, const uint8_t *b, size_t n)
{
	unsigned r = (unsigned)rand_r(&s->seed) % 1000;

	if (s->mtu && n > s->mtu) {
		s->too_big++;
		return;
	}
	if (r < s->loss) {
		s->dropped++;
		return;
	}
	r -= s->loss;
	if (r < s->reorder && !s->held_dir) {
		/* Held until the next datagram has gone (or the next tick). */
		memcpy(s->held, b, n);
		s->held_len = n;
		s->held_dir = dir;
		s->reordered++;
		return;
	}
	r -= s->reorder;
	shim_out(s, dir, b, n);
	if (r < s->dup) {
		shim_out(s, dir, b, n);
		s->duplicated++;
	}
	s->passed++;
	shim_release(s);
}

static void shim_event(int fd, unsigned events, void *arg)
{
	struct tp_shim *s = arg;
	static uint8_t b[UDP_PKT_MAX + 1];

	for (int i = 0; i < 256; i++) {
		struct sockaddr_in from;
		socklen_t fl = sizeof(from);
		ssize_t n = recvfrom(fd, b, sizeof(b), MSG_DONTWAIT, (struct sockaddr *)&from, &fl);

		if (n < 0)
			return;
		if (fd == s->front) {
			s->client = from;
			s->have_client = 1;
			shim_pass(s, 1, b, (size_t)n);
		} else if (s->have_client) {
			shim_pass(s, 2, b, (size_t)n);
		}
	}
}

static void shim_tick(uint64_t now, void *arg)
{
	shim_release(arg);
	shim_due(arg);
}

uint16_t tp_shim_bind_loopback(int fd)
{
	struct sockaddr_in a = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
	socklen_t al = sizeof(a);

	ck_assert_int_eq(bind(fd, (struct sockaddr *)&a, sizeof(a)), 0);
	ck_assert_int_eq(getsockname(fd, (struct sockaddr *)&a, &al), 0);
	return ntohs(a.sin_port);
}

uint16_t tp_shim_open(struct tp_shim *s, struct evloop *ev, uint16_t server_port, unsigned seed)
{
	struct sockaddr_in srv = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK),
				   .sin_port = htons(server_port) };
	int big = 4 << 20;
	uint16_t port;

	memset(s, 0, sizeof(*s));
	s->seed = seed;
	s->q = calloc(TP_SHIM_QUEUE, sizeof(*s->q));
	ck_assert_ptr_nonnull(s->q);
	s->front = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	s->back = socket(AF_INET, SOCK_DGRAM | SOCK_CLOEXEC, 0);
	ck_assert_int_ge(s->front, 0);
	ck_assert_int_ge(s->back, 0);
	setsockopt(s->front, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	setsockopt(s->back, SOL_SOCKET, SO_RCVBUF, &big, sizeof(big));
	port = tp_shim_bind_loopback(s->front);
	ck_assert_int_eq(connect(s->back, (struct sockaddr *)&srv, sizeof(srv)), 0);
	ck_assert_int_eq(evloop_watch(ev, s->front, EV_READ, shim_event, s), 0);
	ck_assert_int_eq(evloop_watch(ev, s->back, EV_READ, shim_event, s), 0);
	ck_assert_int_gt(evloop_tick_add(ev, 1, shim_tick, s), 0);
	return port;
}

void tp_shim_close(struct tp_shim *s, struct evloop *ev)
{
	evloop_unwatch(ev, s->front);
	evloop_unwatch(ev, s->back);
	close(s->front);
	close(s->back);
	free(s->q);
}
