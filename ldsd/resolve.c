/* resolve.c - name lookups on threads of their own; see resolve.h. */
#include <errno.h>
#include <fcntl.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include <arpa/inet.h>

#include "resolve.h"

/* What the loop and the lookup threads share.  A thread that finishes
 * after resolver_free finds wfd closed and frees its request itself; the
 * last of the resolver and its threads frees this. */
struct resolve_shared {
	pthread_mutex_t mu;
	int wfd;                         /* -1 once the resolver is gone */
	int refs;
};

struct resolver {
	struct evloop *ev;
	int rfd;
	struct resolve_shared *sh;
};

struct resolve_req {
	struct resolve_shared *sh;
	char host[256];
	uint16_t port;
	int cancelled;                   /* loop thread only */
	resolve_cb *cb;
	void *arg;
	struct resolve_result res;       /* written by the thread, read by the loop after the pipe */
};

static void shared_put(struct resolve_shared *sh)
{
	int last;

	pthread_mutex_lock(&sh->mu);
	last = --sh->refs == 0;
	pthread_mutex_unlock(&sh->mu);
	if (last) {
		pthread_mutex_destroy(&sh->mu);
		free(sh);
	}
}

int resolve_unbracket(const char *host, char *out, size_t len)
{
	size_t n = strlen(host);

	if (host[0] == '[') {
		if (n < 3 || host[n - 1] != ']' || n - 2 >= len)
			return -1;
		snprintf(out, len, "%.*s", (int)(n - 2), host + 1);
		return 0;
	}
	if (strchr(host, ']') != NULL || n >= len)
		return -1;
	snprintf(out, len, "%s", host);
	return 0;
}

void resolve_order(struct resolve_addr *a, size_t n)
{
	struct resolve_addr v6[RESOLVE_MAX_ADDRS], v4[RESOLVE_MAX_ADDRS];
	size_t n6 = 0, n4 = 0, k = 0;

	for (size_t i = 0; i < n && i < RESOLVE_MAX_ADDRS; i++) {
		if (a[i].family == AF_INET6)
			v6[n6++] = a[i];
		else
			v4[n4++] = a[i];
	}
	for (size_t i = 0; i < n6 || i < n4; i++) {
		if (i < n6)
			a[k++] = v6[i];
		if (i < n4)
			a[k++] = v4[i];
	}
}

static int lookup(const char *name, uint16_t port, int flags, struct resolve_result *r)
{
	struct addrinfo hints = { .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM, .ai_flags = flags }, *res, *ai;
	char host[256];

	memset(r, 0, sizeof(*r));
	if (resolve_unbracket(name, host, sizeof(host)) < 0) {
		r->gai_err = EAI_NONAME;
		return -1;
	}
	r->gai_err = getaddrinfo(host, NULL, &hints, &res);
	if (r->gai_err != 0) {
		r->sys_err = r->gai_err == EAI_SYSTEM ? errno : 0;
		return -1;
	}
	for (ai = res; ai && r->n < RESOLVE_MAX_ADDRS; ai = ai->ai_next) {
		struct resolve_addr *a = &r->addrs[r->n];
		const void *bin;

		if (ai->ai_family == AF_INET6)
			bin = &((const struct sockaddr_in6 *)ai->ai_addr)->sin6_addr;
		else if (ai->ai_family == AF_INET)
			bin = &((const struct sockaddr_in *)ai->ai_addr)->sin_addr;
		else
			continue;
		a->family = ai->ai_family;
		if (inet_ntop(a->family, bin, a->host, sizeof(a->host)) == NULL)
			continue;
		snprintf(a->text, sizeof(a->text), a->family == AF_INET6 ? "[%s]:%u" : "%s:%u", a->host, port);
		r->n++;
	}
	freeaddrinfo(res);
	resolve_order(r->addrs, r->n);
	return r->n > 0 ? 0 : -1;
}

int resolve_now(const char *host, uint16_t port, struct resolve_result *r)
{
	return lookup(host, port, 0, r);
}

int resolve_numeric(const char *host, uint16_t port, struct resolve_result *r)
{
	return lookup(host, port, AI_NUMERICHOST, r);
}

const char *resolve_strerror(const struct resolve_result *r)
{
	if (r->gai_err == EAI_SYSTEM)
		return strerror(r->sys_err);
	if (r->gai_err != 0)
		return gai_strerror(r->gai_err);
	return r->n == 0 ? "no IPv4 or IPv6 address" : "no error";
}

static void *lookup_thread(void *p)
{
	struct resolve_req *req = p;
	struct resolve_shared *sh = req->sh;
	int handed = 0;

	lookup(req->host, req->port, 0, &req->res);
	pthread_mutex_lock(&sh->mu);
	/* A pointer is less than PIPE_BUF: written whole or not at all. */
	if (sh->wfd >= 0)
		handed = write(sh->wfd, &req, sizeof(req)) == (ssize_t)sizeof(req);
	pthread_mutex_unlock(&sh->mu);
	if (!handed)
		free(req);
	shared_put(sh);
	return NULL;
}

static void on_results(int fd, unsigned events, void *arg)
{
	struct resolve_req *req;

	while (read(fd, &req, sizeof(req)) == (ssize_t)sizeof(req)) {
		if (!req->cancelled)
			req->cb(req->arg, &req->res);
		free(req);
	}
}

struct resolver *resolver_new(struct evloop *ev)
{
	struct resolver *rs = calloc(1, sizeof(*rs));
	struct resolve_shared *sh = calloc(1, sizeof(*sh));
	int fds[2] = { -1, -1 };

	if (rs == NULL || sh == NULL || pipe2(fds, O_CLOEXEC) < 0)
		goto fail;
	/* Only the loop's end is nonblocking: a thread may wait for room. */
	if (fcntl(fds[0], F_SETFL, O_NONBLOCK) < 0 || evloop_watch(ev, fds[0], EV_READ, on_results, rs) < 0)
		goto fail;
	pthread_mutex_init(&sh->mu, NULL);
	sh->wfd = fds[1];
	sh->refs = 1;
	rs->ev = ev;
	rs->rfd = fds[0];
	rs->sh = sh;
	return rs;
fail:
	if (fds[0] >= 0) {
		evloop_unwatch(ev, fds[0]);
		close(fds[0]);
		close(fds[1]);
	}
	free(sh);
	free(rs);
	return NULL;
}

void resolver_free(struct resolver *rs)
{
	struct resolve_req *req;

	if (rs == NULL)
		return;
	pthread_mutex_lock(&rs->sh->mu);
	close(rs->sh->wfd);
	rs->sh->wfd = -1;
	pthread_mutex_unlock(&rs->sh->mu);
	/* Nothing more comes into the pipe: free what came and was not read. */
	while (read(rs->rfd, &req, sizeof(req)) == (ssize_t)sizeof(req))
		free(req);
	evloop_unwatch(rs->ev, rs->rfd);
	close(rs->rfd);
	shared_put(rs->sh);
	free(rs);
}

struct resolve_req *resolver_start(struct resolver *rs, const char *host, uint16_t port, resolve_cb *cb,
				   void *arg)
{
	struct resolve_req *req = calloc(1, sizeof(*req));
	pthread_attr_t attr;
	pthread_t t;
	sigset_t all, old;
	int r;

	if (req == NULL)
		return NULL;
	snprintf(req->host, sizeof(req->host), "%s", host);
	req->port = port;
	req->cb = cb;
	req->arg = arg;
	req->sh = rs->sh;
	pthread_mutex_lock(&rs->sh->mu);
	rs->sh->refs++;
	pthread_mutex_unlock(&rs->sh->mu);
	/* Signals stay with the loop's thread (its signalfd). */
	sigfillset(&all);
	pthread_sigmask(SIG_SETMASK, &all, &old);
	pthread_attr_init(&attr);
	pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
	r = pthread_create(&t, &attr, lookup_thread, req);
	pthread_attr_destroy(&attr);
	pthread_sigmask(SIG_SETMASK, &old, NULL);
	if (r != 0) {
		shared_put(rs->sh);
		free(req);
		errno = r;
		return NULL;
	}
	return req;
}

void resolve_cancel(struct resolve_req *req)
{
	if (req != NULL)
		req->cancelled = 1;
}
