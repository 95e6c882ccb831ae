/* fwd.c - reads packets from every site's TUN, routes them by destination
 * address to a direction, and writes them to the far site's TUN when they
 * are due.  One thread, the project's event loop, and one timerfd armed
 * for the earliest due packet of all directions (nanosecond resolution;
 * epoll's millisecond timeouts would break the 1 ms RTT promise). */
#include <errno.h>
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>
#include <sys/timerfd.h>

#include "ldsd/clock.h"
#include "ldsd/log.h"
#include "wanemu.h"

/* Reads per TUN per wakeup, so that one busy site cannot starve others. */
#define FWD_BATCH 64

static struct wanemu *fwd_self;
static volatile sig_atomic_t fwd_dump;

static int fwd_site_of(const struct wanemu *w, const unsigned char *ip, size_t len)
{
	struct in_addr dst;

	if (len < 20 || (ip[0] >> 4) != 4)
		return -1;
	memcpy(&dst, ip + 16, 4);
	for (int i = 0; i < w->nsites; i++)
		if (w->site[i].addr.s_addr == dst.s_addr)
			return i;
	return -1;
}

static void fwd_deliver(struct wanemu *w, uint64_t now)
{
	for (int a = 0; a < w->nsites; a++) {
		for (int b = 0; b < w->nsites; b++) {
			struct dir *d = we_dir(w, a, b);
			struct pkt *p;

			if (!w->linked[a * WE_MAX_SITES + b])
				continue;
			while ((p = path_pop_due(d, now)) != NULL) {
				ssize_t n = write(w->site[b].fd, p->data, p->len);

				path_delivered(d, p, n == (ssize_t)p->len);
				free(p);
			}
		}
	}
}

void fwd_rearm(struct wanemu *w)
{
	struct itimerspec its = { 0 };
	uint64_t next = UINT64_MAX;

	for (int a = 0; a < w->nsites; a++) {
		for (int b = 0; b < w->nsites; b++) {
			uint64_t t;

			if (!w->linked[a * WE_MAX_SITES + b])
				continue;
			t = path_next_due(we_dir(w, a, b));
			if (t < next)
				next = t;
		}
	}
	if (next == w->armed_ns)
		return;
	w->armed_ns = next;
	if (next != UINT64_MAX) {
		its.it_value.tv_sec = (time_t)(next / 1000000000ull);
		its.it_value.tv_nsec = (long)(next % 1000000000ull);
		/* Zero would disarm: a packet due at time 0 cannot exist. */
	}
	if (timerfd_settime(w->timerfd, TFD_TIMER_ABSTIME, &its, NULL) < 0)
		log_warn("timerfd_settime");
}

static void fwd_on_tun(int fd, unsigned events, void *arg)
{
	struct site *s = arg;
	struct wanemu *w = fwd_self;
	int from = (int)(s - w->site);
	uint64_t now = clock_now_ns();

	for (int i = 0; i < FWD_BATCH; i++) {
		ssize_t n = read(fd, w->buf, WE_PKT_MAX);
		int to;

		if (n < 0) {
			if (errno != EAGAIN && errno != EINTR)
				log_warn("site %s: reading %s", s->name, s->ifname);
			break;
		}
		s->rx_pkts++;
		to = (size_t)n > WE_VNET_LEN ? fwd_site_of(w, w->buf + WE_VNET_LEN, (size_t)n - WE_VNET_LEN) : -1;
		if (to < 0 || to == from || !w->linked[from * WE_MAX_SITES + to]) {
			s->no_route++;
			continue;
		}
		if (path_input(we_dir(w, from, to), w->buf, (size_t)n, now) < 0)
			log_warnx("link %s: out of memory, packet dropped", we_dir(w, from, to)->name);
	}
	/* Packets with no delay leave at once, without a timer round. */
	fwd_deliver(w, now);
}

static void fwd_on_timer(int fd, unsigned events, void *arg)
{
	struct wanemu *w = arg;
	uint64_t expirations;

	if (read(fd, &expirations, sizeof(expirations)) < 0 && errno != EAGAIN)
		log_warn("timerfd read");
	w->armed_ns = 0;
	fwd_deliver(w, clock_now_ns());
}

static void fwd_on_idle(void *arg)
{
	struct wanemu *w = arg;

	if (fwd_dump) {
		fwd_dump = 0;
		stats_json(stderr, w);
	}
	fwd_rearm(w);
}

static void fwd_on_signal(int sig)
{
	if (sig == SIGUSR1)
		fwd_dump = 1;
	else if (fwd_self != NULL)
		evloop_stop(fwd_self->ev);
}

int fwd_find(struct wanemu *w, const char *name, struct dir *out[2])
{
	for (int a = 0; a < w->nsites; a++) {
		for (int b = 0; b < w->nsites; b++) {
			struct dir *d = we_dir(w, a, b);
			char both[sizeof(d->name)];

			if (!w->linked[a * WE_MAX_SITES + b])
				continue;
			out[0] = d;
			if (strcmp(name, d->name) == 0)
				return 1;
			snprintf(both, sizeof(both), "%s-%s", w->site[a].name, w->site[b].name);
			if (strcmp(name, both) == 0) {
				out[1] = we_dir(w, b, a);
				return 2;
			}
		}
	}
	return 0;
}

static int fwd_open_sites(struct wanemu *w)
{
	for (int i = 0; i < w->nsites; i++) {
		struct site *s = &w->site[i];
		int r;

		s->fd = tun_open_in(s->netns, s->ifname, s->addr, s->plen, s->mtu, !w->no_uso);
		if (s->fd < 0) {
			log_warnx("site %s: cannot create %s in network namespace %s", s->name, s->ifname, s->netns);
			return s->fd;
		}
		r = evloop_watch(w->ev, s->fd, EV_READ, fwd_on_tun, s);
		if (r < 0)
			return r;
		log_info("site %s: %s %s/%d mtu %u in %s", s->name, s->ifname, inet_ntoa(s->addr), s->plen, s->mtu,
			 s->netns);
	}
	return 0;
}

static void fwd_close(struct wanemu *w)
{
	for (int i = 0; i < w->nsites; i++) {
		if (w->site[i].fd >= 0) {
			evloop_unwatch(w->ev, w->site[i].fd);
			close(w->site[i].fd);
			w->site[i].fd = -1;
		}
	}
	for (int i = 0; i < WE_MAX_SITES * WE_MAX_SITES; i++)
		path_flush(&w->dirs[i]);
	if (w->timerfd >= 0) {
		evloop_unwatch(w->ev, w->timerfd);
		close(w->timerfd);
		w->timerfd = -1;
	}
}

int fwd_run(struct wanemu *w)
{
	struct sigaction sa = { .sa_handler = fwd_on_signal };
	int r;

	fwd_self = w;
	for (int i = 0; i < w->nsites; i++)
		w->site[i].fd = -1;
	w->buf = malloc(WE_PKT_MAX);
	w->ev = evloop_new();
	w->timerfd = timerfd_create(CLOCK_MONOTONIC, TFD_NONBLOCK | TFD_CLOEXEC);
	if (w->buf == NULL || w->ev == NULL || w->timerfd < 0) {
		r = -errno;
		log_warn("wanemu: setting up the event loop");
		goto out;
	}
	r = evloop_watch(w->ev, w->timerfd, EV_READ, fwd_on_timer, w);
	if (r == 0)
		r = evloop_idle_add(w->ev, fwd_on_idle, w) < 0 ? -ENOSPC : 0;
	if (r == 0)
		r = fwd_open_sites(w);
	if (r == 0)
		r = ctl_listen(w, w->ctl_path);
	if (r < 0)
		goto out;
	/* Outages and the first packets count from here, when all is up. */
	w->t0 = clock_now_ns();
	for (int i = 0; i < WE_MAX_SITES * WE_MAX_SITES; i++)
		path_init(&w->dirs[i], w->seed, w->t0);
	sigaction(SIGINT, &sa, NULL);
	sigaction(SIGTERM, &sa, NULL);
	sigaction(SIGUSR1, &sa, NULL);
	signal(SIGPIPE, SIG_IGN);
	log_info("wanemu: ready, %d sites, seed %llu, control socket %s", w->nsites, (unsigned long long)w->seed,
		 w->ctl_path);
	r = evloop_run(w->ev);
	if (r < 0) {
		errno = -r;
		log_warn("event loop");
	}
out:
	ctl_close(w);
	if (w->ev != NULL) {
		fwd_close(w);
		evloop_free(w->ev);
	}
	free(w->buf);
	return r;
}
