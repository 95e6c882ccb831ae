/*
 * fakeldsd.c - a fake ldsd for liblds's tests (check_lds*.c, check_thesis.c):
 * a thread running a script over the client protocol on a unix (or TCP)
 * socket in a fresh temporary directory, the daemon's side of that
 * protocol (fk_*), and the test's side (fake_*, and the checks the tests
 * share).  See fakeldsd.h.
 */
#include <arpa/inet.h>
#include <errno.h>
#include <fcntl.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ldsd/clock.h"
#include "fakeldsd.h"

#define IO_TIMEOUT_S 10
#define DEF_MAX_MSG  (16u << 20)
#define SLOW_CHUNK   16384
#define FK_KEY       "the fake ldsd's clients.tcp key"

int fk_failed(struct fake *f, int line, const char *what)
{
	if (f->fail[0] == '\0')
		snprintf(f->fail, sizeof(f->fail), "fake ldsd, line %d: %s", line, what);
	return -1;
}

static void *fake_main(void *arg)
{
	struct fake *f = arg;

	f->script(f);
	if (f->cfd >= 0)
		close(f->cfd);
	return NULL;
}

static void fake_listen(struct fake *f)
{
	if (f->tcp) {
		struct sockaddr_in sa = { .sin_family = AF_INET, .sin_addr.s_addr = htonl(INADDR_LOOPBACK) };
		socklen_t len = sizeof(sa);

		f->lfd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
		ck_assert_int_ge(f->lfd, 0);
		ck_assert_int_eq(bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
		ck_assert_int_eq(getsockname(f->lfd, (struct sockaddr *)&sa, &len), 0);
		snprintf(f->path, sizeof(f->path), "tcp:127.0.0.1:%u", ntohs(sa.sin_port));
	} else {
		struct sockaddr_un sa = { .sun_family = AF_UNIX };

		snprintf(f->sock, sizeof(f->sock), "%s/ldsd.sock", f->dir);
		snprintf(f->path, sizeof(f->path), "%s", f->sock);
		snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->sock);
		f->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
		ck_assert_int_ge(f->lfd, 0);
		ck_assert_int_eq(bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	}
	ck_assert_int_eq(listen(f->lfd, 4), 0);
}

void fake_start(struct fake *f, script_fn script)
{
	snprintf(f->dir, sizeof(f->dir), "/tmp/ldsXXXXXX");
	ck_assert_ptr_nonnull(mkdtemp(f->dir));
	if (f->max_msg == 0)
		f->max_msg = DEF_MAX_MSG;
	f->cfd = -1;
	f->script = script;
	if (f->tcp) {
		int fd;

		snprintf(f->key_file, sizeof(f->key_file), "%s/client.key", f->dir);
		fd = open(f->key_file, O_WRONLY | O_CREAT | O_EXCL, 0600);
		ck_assert_int_ge(fd, 0);
		ck_assert_int_eq(write(fd, FK_KEY "\n", sizeof(FK_KEY)), (ssize_t)sizeof(FK_KEY));
		ck_assert_int_eq(close(fd), 0);
		ck_assert_int_eq(setenv("LDS_KEY_FILE", f->key_file, 1), 0);
	}
	fake_listen(f);
	ck_assert_int_eq(pipe(f->go), 0);
	ck_assert_int_eq(pthread_create(&f->thr, NULL, fake_main, f), 0);
}

void fake_stop(struct fake *f)
{
	ck_assert_int_eq(pthread_join(f->thr, NULL), 0);
	close(f->lfd);
	close(f->go[0]);
	close(f->go[1]);
	if (f->sock[0] != '\0')
		ck_assert_int_eq(unlink(f->sock), 0);
	if (f->key_file[0] != '\0')
		ck_assert_int_eq(unlink(f->key_file), 0);
	ck_assert_int_eq(rmdir(f->dir), 0);
	ck_assert_msg(f->fail[0] == '\0', "%s", f->fail);
}

/* Test side: lets the script go past its next fk_wait_go. */
void fake_go(struct fake *f)
{
	ck_assert_int_eq(write(f->go[1], "g", 1), 1);
}

/* ---- the fake daemon's side ------------------------------------------- */

int fk_wait_go(struct fake *f)
{
	struct pollfd p = { .fd = f->go[0], .events = POLLIN };
	char c;

	if (poll(&p, 1, IO_TIMEOUT_S * 1000) != 1 || read(f->go[0], &c, 1) != 1)
		return FK_ERR(f, "no go from the test");
	return 0;
}

static int fk_key_check(struct fake *f);

int fk_accept(struct fake *f)
{
	struct pollfd p = { .fd = f->lfd, .events = POLLIN };
	struct timeval tv = { .tv_sec = IO_TIMEOUT_S };

	if (poll(&p, 1, IO_TIMEOUT_S * 1000) != 1)
		return FK_ERR(f, "no client connected");
	f->cfd = accept(f->lfd, NULL, NULL);
	if (f->cfd < 0)
		return FK_ERR(f, "accept failed");
	if (setsockopt(f->cfd, SOL_SOCKET, SO_RCVTIMEO, &tv, sizeof(tv)) < 0 ||
	    setsockopt(f->cfd, SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof(tv)) < 0)
		return FK_ERR(f, "setsockopt failed");
	return f->tcp && !f->tcp_raw ? fk_key_check(f) : 0;
}

int fk_read_all(struct fake *f, void *buf, size_t n)
{
	uint8_t *p = buf;

	while (n > 0) {
		size_t want = f->slow && n > SLOW_CHUNK ? SLOW_CHUNK : n;
		ssize_t r = read(f->cfd, p, want);

		if (r < 0 && errno == EINTR)
			continue;
		if (r <= 0)
			return FK_ERR(f, r == 0 ? "unexpected EOF from client" : "read from client failed");
		p += r;
		n -= (size_t)r;
		if (f->slow)
			nanosleep(&(struct timespec){ .tv_nsec = 100000 }, NULL);
	}
	return 0;
}

int fk_write_all(struct fake *f, const void *buf, size_t n)
{
	const uint8_t *p = buf;

	while (n > 0) {
		ssize_t w = send(f->cfd, p, n, MSG_NOSIGNAL);

		if (w < 0 && errno == EINTR)
			continue;
		if (w < 0)
			return FK_ERR(f, "write to client failed");
		p += w;
		n -= (size_t)w;
	}
	return 0;
}

/* The next frame header, after any RESUME frames, which are recorded:
 * liblds sends one whenever the application takes a LOST event. */
int fk_read_hdr(struct fake *f, struct cp_hdr *h)
{
	uint8_t hb[CP_HDR_LEN], body[CP_HDR_LEN + WIRE_ENDPOINT_MAX + 16];
	struct cp_msg m;

	for (int i = 0; i < 64; i++) {
		if (fk_read_all(f, hb, sizeof(hb)) < 0)
			return -1;
		if (cp_hdr_parse(hb, h) < 0)
			return FK_ERR(f, "bad frame header from client");
		if (h->type != CP_RESUME)
			return 0;
		if (h->len > sizeof(body) || fk_read_all(f, body, h->len) < 0 || cp_decode(h, body, &m) < 0)
			return FK_ERR(f, "bad RESUME from client");
		f->resumes++;
		f->resume_count = m.count;
		memcpy(f->resume_peer, m.name, sizeof(f->resume_peer));
	}
	return FK_ERR(f, "too many RESUME frames");
}

/* The body after header h, which must be of the given type; the caller
 * frees fr->body. */
int fk_read_body(struct fake *f, const struct cp_hdr *h, struct fk_frame *fr, uint8_t type)
{
	fr->h = *h;
	fr->body = malloc(h->len + 1u);
	if (fr->body == NULL)
		return FK_ERR(f, "out of memory");
	if (fk_read_all(f, fr->body, h->len) < 0)
		return -1;
	if (cp_decode(h, fr->body, &fr->m) < 0)
		return FK_ERR(f, "undecodable frame from client");
	if (fr->m.type != type)
		return FK_ERR(f, "unexpected frame type from client");
	return 0;
}

int fk_read_frame(struct fake *f, struct fk_frame *fr, uint8_t type)
{
	struct cp_hdr h;

	fr->body = NULL;
	if (fk_read_hdr(f, &h) < 0)
		return -1;
	return fk_read_body(f, &h, fr, type);
}

int fk_eof(struct fake *f)
{
	char c;

	if (read(f->cfd, &c, 1) != 0)
		return FK_ERR(f, "client wrote after BYE");
	return 0;
}

/* The client's goodbye, then the end of its stream. */
int fk_bye(struct fake *f)
{
	struct fk_frame fr;
	int rc = fk_read_frame(f, &fr, CP_BYE);

	free(fr.body);
	return rc < 0 ? rc : fk_eof(f);
}

int fk_send(struct fake *f, const struct cp_msg *m)
{
	uint8_t buf[CP_HDR_LEN + 512];
	size_t n = cp_encode(buf, sizeof(buf), m);

	if (n == 0)
		return FK_ERR(f, "cp_encode failed");
	if (fk_write_all(f, buf, n) < 0)
		return -1;
	return m->payload_len ? fk_write_all(f, m->payload, m->payload_len) : 0;
}

/* clients.tcp's key check, as ldsd makes it: CHALLENGE, the client's
 * PROOF checked, ldsd's PROOF (under another key if f->impostor). */
int fk_challenge(struct fake *f, struct cp_msg *ch)
{
	ch->type = CP_CHALLENGE;
	if (cpauth_nonce(ch->nonce) < 0)
		return FK_ERR(f, "no nonce");
	return fk_send(f, ch);
}

static int fk_key_check(struct fake *f)
{
	static const char other[] = "not the key the client holds";
	struct cp_msg ch = { 0 }, answer = { .type = CP_PROOF };
	const char *key = f->impostor ? other : FK_KEY;
	struct fk_frame fr = { 0 };
	int rc = fk_challenge(f, &ch);

	if (rc < 0 || fk_read_frame(f, &fr, CP_PROOF) < 0) {
		free(fr.body);
		return -1;
	}
	rc = cpauth_verify((const uint8_t *)FK_KEY, strlen(FK_KEY), CPAUTH_CLIENT, ch.nonce, fr.m.nonce, fr.m.mac);
	memcpy(answer.nonce, fr.m.nonce, sizeof(answer.nonce));
	free(fr.body);
	if (!rc)
		return FK_ERR(f, "the client's PROOF does not verify under the key");
	if (cpauth_mac((const uint8_t *)key, strlen(key), CPAUTH_DAEMON, ch.nonce, answer.nonce, answer.mac) < 0)
		return FK_ERR(f, "cpauth_mac failed");
	return fk_send(f, &answer);
}

int fk_deliver_from(struct fake *f, const char *src, uint64_t incarnation, uint64_t id, const void *data,
			   size_t len)
{
	struct cp_msg m = { .type = CP_DELIVER, .msg_id = id, .incarnation = incarnation, .payload = data,
			    .payload_len = (uint32_t)len };

	snprintf(m.name, sizeof(m.name), "%s", src);
	return fk_send(f, &m);
}

int fk_deliver(struct fake *f, const char *src, uint64_t id, const void *data, size_t len)
{
	return fk_deliver_from(f, src, FK_INCARNATION, id, data, len);
}

/* The daemon dies: the client sees its connection end. */
void fk_hangup(struct fake *f)
{
	close(f->cfd);
	f->cfd = -1;
}

int fk_range(struct fake *f, uint8_t type, uint64_t first, uint64_t last, const char *peer, const char *text)
{
	struct cp_msg m = { .type = type, .first = first, .last = last };

	snprintf(m.name, sizeof(m.name), "%s", peer);
	snprintf(m.text, sizeof(m.text), "%s", text);
	return fk_send(f, &m);
}

int fk_acked(struct fake *f, uint64_t first, uint64_t last)
{
	return fk_range(f, CP_ACKED, first, last, "", "");
}

int fk_error(struct fake *f, uint64_t id, int err, const char *text)
{
	struct cp_msg m = { .type = CP_ERROR, .msg_id = id, .err = err };

	snprintf(m.text, sizeof(m.text), "%s", text);
	return fk_send(f, &m);
}

/* Accepts the client and welcomes it into cluster. */
int fk_welcome(struct fake *f, const char *cluster)
{
	struct cp_msg m = { .type = CP_WELCOME, .version = CP_VERSION, .max_msg = f->max_msg,
			    .flags = f->takes ? CP_F_TAKEN : 0 };
	struct fk_frame fr;
	int rc;

	if (fk_accept(f) < 0)
		return -1;
	rc = fk_read_frame(f, &fr, CP_HELLO);
	free(fr.body);
	if (rc < 0)
		return -1;
	if (fr.m.version != CP_VERSION || (fr.m.flags & ~(CP_F_SHM | CP_F_LINKBYTES)) != CP_F_TAKEN)
		return FK_ERR(f, "bad HELLO");
	snprintf(f->hello_name, sizeof(f->hello_name), "%s", fr.m.name);
	f->hello_incarnation = fr.m.incarnation;
	snprintf(m.name, sizeof(m.name), "%s", cluster);
	snprintf(m.endpoint, sizeof(m.endpoint), "%s/%.60s", cluster, fr.m.name[0] ? fr.m.name : "auto-1");
	return fk_send(f, &m);
}

int fk_read_sends(struct fake *f, unsigned n)
{
	for (unsigned i = 0; i < n; i++) {
		struct fk_frame fr;
		int rc = fk_read_frame(f, &fr, CP_SEND);

		free(fr.body);
		if (rc < 0)
			return -1;
	}
	return 0;
}

/* Reads one SEND and checks its id and payload. */
int fk_expect_send(struct fake *f, uint64_t id, const char *payload)
{
	struct fk_frame fr;
	int rc = fk_read_frame(f, &fr, CP_SEND);

	if (rc == 0 && (fr.m.msg_id != id || fr.m.payload_len != strlen(payload) ||
			memcmp(fr.m.payload, payload, fr.m.payload_len) != 0))
		rc = FK_ERR(f, "unexpected SEND");
	free(fr.body);
	return rc;
}

/* Reads SEND id with payload and acknowledges it. */
int fk_ack_send(struct fake *f, uint64_t id, const char *payload)
{
	int rc = fk_expect_send(f, id, payload);

	return rc == 0 ? fk_acked(f, id, id) : rc;
}

/* ---- helpers for the test's side -------------------------------------- */

void fill(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 131u + (i >> 13) + seed * 7u);
}

int filled(const uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != (uint8_t)(i * 131u + (i >> 13) + seed * 7u))
			return 0;
	return 1;
}

int64_t now_ms(void)
{
	return (int64_t)(clock_now_ns() / 1000000);
}

struct lds *open_ok(const struct fake *f, const char *name)
{
	int err = 0;
	struct lds *h = lds_open(f->path, name, WAIT_MS, &err);

	ck_assert_msg(h != NULL, "lds_open: %s", lds_strerror(err));
	return h;
}

/* Processes input until the counters reach the given values. */
void wait_stats(struct lds *h, uint64_t acked, uint64_t lost, uint64_t failed)
{
	struct lds_stats st;

	for (int i = 0; i < 500; i++) {
		struct pollfd p = { .fd = lds_fd(h), .events = POLLIN };

		lds_get_stats(h, &st);
		if (st.acked == acked && st.lost == lost && st.failed == failed)
			return;
		ck_assert_int_ge(poll(&p, 1, 10), 0);
		ck_assert_int_eq(lds_process(h), 0);
	}
	ck_abort_msg("stats stuck at acked %llu lost %llu failed %llu", (unsigned long long)st.acked,
		     (unsigned long long)st.lost, (unsigned long long)st.failed);
}

void expect_event(struct lds *h, enum lds_event_type type, uint64_t first, uint64_t last, int err,
			 const char *peer, const char *text)
{
	struct lds_event ev;

	ck_assert_int_eq(lds_next_event(h, &ev), 1);
	ck_assert_int_eq(ev.type, type);
	ck_assert_uint_eq(ev.first, first);
	ck_assert_uint_eq(ev.last, last);
	ck_assert_int_eq(ev.err, err);
	ck_assert_str_eq(ev.peer, peer);
	ck_assert_str_eq(ev.text, text);
}
