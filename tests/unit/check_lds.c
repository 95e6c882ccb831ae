/*
 * check_lds.c - liblds (libclient/lds.c, thesis.c) against a fake ldsd.
 *
 * The fake daemon is a thread running a script over the client protocol on
 * a unix (or TCP) socket in a fresh temporary directory.  It cannot call
 * ck_assert (Check's failure path is not meant for other threads), so it
 * records its first failed check, stops, and fake_stop() reports it.  Its
 * sockets time out after IO_TIMEOUT_S and the test sends it "go" bytes over
 * a pipe where the order of events matters.
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
#include <sys/stat.h>
#include <sys/time.h>
#include <sys/un.h>
#include <time.h>
#include <unistd.h>

#include "ldsd/clock.h"
#include "libclient/clientproto.h"
#include "libclient/lds.h"
#include "suites.h"

#define IO_TIMEOUT_S 10
#define WAIT_MS      5000
#define RESTART_GONE_MS 300      /* s_restart: no socket, */
#define RESTART_REFUSING_MS 200  /* then a socket that refuses */
#define DEF_MAX_MSG  (16u << 20)
#define BIG_LEN      (8u << 20)
#define BIG_NDELIV   32
#define BIG_DELIV    (256u << 10)
#define NB_LEN       100000u
#define NB_MAX       1000
#define SLOW_CHUNK   16384
#define FK_KEY       "the fake ldsd's clients.tcp key"

struct fake;
typedef void (*script_fn)(struct fake *f);

struct fake {
	/* Set by the test before fake_start. */
	uint32_t max_msg;         /* WELCOME's; 0 = DEF_MAX_MSG */
	int tcp;                  /* with LDS_KEY_FILE set to the fake's key */
	int tcp_raw;              /* ...and the script does the key check itself */
	int impostor;             /* ...and the fake proves a key of its own */
	int slow;                 /* read in small chunks with pauses */
	int takes;                /* WELCOME agrees to CP_F_TAKEN */
	/* Owned by the fake. */
	char dir[32];
	char key_file[64];
	char sock[64];
	char path[96];            /* what the client passes to lds_open */
	int lfd, cfd;
	int go[2];
	script_fn script;
	pthread_t thr;
	/* Results, read by the test after fake_stop. */
	char hello_name[WIRE_ENDPOINT_MAX + 1];
	uint64_t hello_incarnation;
	unsigned long got;
	unsigned long resumes;    /* RESUME frames seen */
	char resume_peer[WIRE_ENDPOINT_MAX + 1];
	uint64_t resume_count;     /* its count of LOST frames taken */
	char fail[256];
};

static int fk_failed(struct fake *f, int line, const char *what)
{
	if (f->fail[0] == '\0')
		snprintf(f->fail, sizeof(f->fail), "fake ldsd, line %d: %s", line, what);
	return -1;
}
#define FK_ERR(f, what) fk_failed((f), __LINE__, (what))
#define FK_CHECK(f, cond)                                  \
	do {                                               \
		if (!(cond)) {                             \
			fk_failed((f), __LINE__, #cond);   \
			return;                            \
		}                                          \
	} while (0)

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

static void fake_start(struct fake *f, script_fn script)
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

static void fake_stop(struct fake *f)
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
static void fake_go(struct fake *f)
{
	ck_assert_int_eq(write(f->go[1], "g", 1), 1);
}

/* ---- the fake daemon's side ------------------------------------------- */

static int fk_wait_go(struct fake *f)
{
	struct pollfd p = { .fd = f->go[0], .events = POLLIN };
	char c;

	if (poll(&p, 1, IO_TIMEOUT_S * 1000) != 1 || read(f->go[0], &c, 1) != 1)
		return FK_ERR(f, "no go from the test");
	return 0;
}

static int fk_key_check(struct fake *f);

static int fk_accept(struct fake *f)
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

static int fk_read_all(struct fake *f, void *buf, size_t n)
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

static int fk_write_all(struct fake *f, const void *buf, size_t n)
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

struct fk_frame {
	struct cp_hdr h;
	uint8_t *body;
	struct cp_msg m;
};

/* The next frame header, after any RESUME frames, which are recorded:
 * liblds sends one whenever the application takes a LOST event. */
static int fk_read_hdr(struct fake *f, struct cp_hdr *h)
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
static int fk_read_body(struct fake *f, const struct cp_hdr *h, struct fk_frame *fr, uint8_t type)
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

static int fk_read_frame(struct fake *f, struct fk_frame *fr, uint8_t type)
{
	struct cp_hdr h;

	fr->body = NULL;
	if (fk_read_hdr(f, &h) < 0)
		return -1;
	return fk_read_body(f, &h, fr, type);
}

static int fk_eof(struct fake *f)
{
	char c;

	if (read(f->cfd, &c, 1) != 0)
		return FK_ERR(f, "client wrote after BYE");
	return 0;
}

/* The client's goodbye, then the end of its stream. */
static int fk_bye(struct fake *f)
{
	struct fk_frame fr;
	int rc = fk_read_frame(f, &fr, CP_BYE);

	free(fr.body);
	return rc < 0 ? rc : fk_eof(f);
}

static int fk_send(struct fake *f, const struct cp_msg *m)
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
static int fk_challenge(struct fake *f, struct cp_msg *ch)
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

/* The incarnation of the senders of fk_deliver's messages. */
#define FK_INCARNATION 0xC0FFEEull

static int fk_deliver_from(struct fake *f, const char *src, uint64_t incarnation, uint64_t id, const void *data,
			   size_t len)
{
	struct cp_msg m = { .type = CP_DELIVER, .msg_id = id, .incarnation = incarnation, .payload = data,
			    .payload_len = (uint32_t)len };

	snprintf(m.name, sizeof(m.name), "%s", src);
	return fk_send(f, &m);
}

static int fk_deliver(struct fake *f, const char *src, uint64_t id, const void *data, size_t len)
{
	return fk_deliver_from(f, src, FK_INCARNATION, id, data, len);
}

/* The daemon dies: the client sees its connection end. */
static void fk_hangup(struct fake *f)
{
	close(f->cfd);
	f->cfd = -1;
}

static int fk_range(struct fake *f, uint8_t type, uint64_t first, uint64_t last, const char *peer, const char *text)
{
	struct cp_msg m = { .type = type, .first = first, .last = last };

	snprintf(m.name, sizeof(m.name), "%s", peer);
	snprintf(m.text, sizeof(m.text), "%s", text);
	return fk_send(f, &m);
}

static int fk_acked(struct fake *f, uint64_t first, uint64_t last)
{
	return fk_range(f, CP_ACKED, first, last, "", "");
}

static int fk_error(struct fake *f, uint64_t id, int err, const char *text)
{
	struct cp_msg m = { .type = CP_ERROR, .msg_id = id, .err = err };

	snprintf(m.text, sizeof(m.text), "%s", text);
	return fk_send(f, &m);
}

/* Accepts the client and welcomes it into cluster. */
static int fk_welcome(struct fake *f, const char *cluster)
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

/* ---- helpers for the test's side -------------------------------------- */

static void fill(uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		b[i] = (uint8_t)(i * 131u + (i >> 13) + seed * 7u);
}

static int filled(const uint8_t *b, size_t n, unsigned seed)
{
	for (size_t i = 0; i < n; i++)
		if (b[i] != (uint8_t)(i * 131u + (i >> 13) + seed * 7u))
			return 0;
	return 1;
}

static int64_t now_ms(void)
{
	return (int64_t)(clock_now_ns() / 1000000);
}

static struct lds *open_ok(const struct fake *f, const char *name)
{
	int err = 0;
	struct lds *h = lds_open(f->path, name, WAIT_MS, &err);

	ck_assert_msg(h != NULL, "lds_open: %s", lds_strerror(err));
	return h;
}

/* Processes input until the counters reach the given values. */
static void wait_stats(struct lds *h, uint64_t acked, uint64_t lost, uint64_t failed)
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

static void expect_event(struct lds *h, enum lds_event_type type, uint64_t first, uint64_t last, int err,
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

/* ---- opening and closing ---------------------------------------------- */

static void s_welcome_bye(struct fake *f)
{
	if (fk_welcome(f, "clusterA") == 0)
		fk_bye(f);
}

START_TEST(t_open_close)
{
	struct fake f = { .max_msg = 1u << 20 };
	struct lds *h;

	fake_start(&f, s_welcome_bye);
	h = open_ok(&f, "cm");
	ck_assert_str_eq(lds_name(h), "clusterA/cm");
	ck_assert_str_eq(lds_cluster(h), "clusterA");
	ck_assert_uint_eq(lds_max_msg(h), 1u << 20);
	ck_assert_int_ge(lds_fd(h), 0);
	ck_assert_uint_eq(lds_settled_upto(h), 0);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
	ck_assert_str_eq(f.hello_name, "cm");
}
END_TEST

START_TEST(t_open_tcp_daemon_picks_name)
{
	struct fake f = { .tcp = 1 };
	struct lds *h;

	fake_start(&f, s_welcome_bye);
	h = open_ok(&f, NULL);
	ck_assert_str_eq(lds_name(h), "clusterA/auto-1");
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
	ck_assert_str_eq(f.hello_name, "");
}
END_TEST

/* lds_peer: the question goes out once no message is half written; an
 * answer about another cluster and a delivery in between are not the
 * answer, and the delivery is still received. */
static void s_peer(struct fake *f)
{
	struct cp_msg other = { .type = CP_PEER, .state = CP_PEER_UP }, ans = { .type = CP_PEER, .state = CP_PEER_DOWN,
										 .seconds = 42 };
	struct fk_frame fr;

	if (fk_welcome(f, "clusterA") < 0 || fk_read_frame(f, &fr, CP_PEERQ) < 0)
		return;
	free(fr.body);
	if (strcmp(fr.m.name, "clusterB") != 0) {
		FK_ERR(f, "PEERQ for another cluster");
		return;
	}
	strcpy(other.name, "clusterC");
	strcpy(ans.name, "clusterB");
	strcpy(ans.text, "auth-sent: refused: authentication failed");
	if (fk_send(f, &other) == 0 && fk_deliver(f, "clusterB/x", 1, "hi", 2) == 0 && fk_send(f, &ans) == 0)
		fk_bye(f);
}

START_TEST(t_peer)
{
	struct fake f = { .max_msg = 1u << 20 };
	struct lds_peer p;
	struct lds_msg m;
	struct lds *h;

	fake_start(&f, s_peer);
	h = open_ok(&f, "cm");
	ck_assert_int_eq(lds_peer(h, "not/a cluster", &p, WAIT_MS), -EINVAL);
	ck_assert_int_eq(lds_peer(h, "clusterB", &p, WAIT_MS), 0);
	ck_assert_int_eq(p.state, LDS_PEER_DOWN);
	ck_assert_uint_eq(p.down_s, 42);
	ck_assert_str_eq(p.why, "auth-sent: refused: authentication failed");
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
	ck_assert_uint_eq(m.len, 2);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
}
END_TEST

/* The client goes away: the end of its stream, within IO_TIMEOUT_S. */
static void s_eof(struct fake *f)
{
	if (fk_accept(f) == 0)
		fk_eof(f);
}

/* ldsd refuses the key: the client's PROOF is answered with EACCES. */
static void s_refuse_key(struct fake *f)
{
	struct cp_msg ch = { 0 };
	struct fk_frame fr = { 0 };

	if (fk_accept(f) < 0 || fk_challenge(f, &ch) < 0)
		return;
	if (fk_read_frame(f, &fr, CP_PROOF) == 0)
		fk_error(f, 0, EACCES, "wrong key");
	free(fr.body);
}

START_TEST(t_open_tcp_key)
{
	struct fake f = { .tcp = 1, .tcp_raw = 1 };
	int err = 0;

	/* No LDS_KEY_FILE: refused before a byte is read. */
	fake_start(&f, s_eof);
	ck_assert_int_eq(unsetenv("LDS_KEY_FILE"), 0);
	ck_assert_ptr_null(lds_open(f.path, "cm", WAIT_MS, &err));
	ck_assert_int_eq(err, -ENOKEY);
	ck_assert_ptr_nonnull(strstr(lds_strerror(err), "LDS_KEY_FILE"));
	fake_stop(&f);

	/* A key file others may read is no key. */
	f = (struct fake){ .tcp = 1, .tcp_raw = 1 };
	fake_start(&f, s_eof);
	ck_assert_int_eq(chmod(f.key_file, 0644), 0);
	ck_assert_ptr_null(lds_open(f.path, "cm", WAIT_MS, &err));
	ck_assert_int_eq(err, -ENOKEY);
	fake_stop(&f);

	/* ldsd refuses the key. */
	f = (struct fake){ .tcp = 1, .tcp_raw = 1 };
	fake_start(&f, s_refuse_key);
	ck_assert_ptr_null(lds_open(f.path, "cm", WAIT_MS, &err));
	ck_assert_int_eq(err, -EKEYREJECTED);
	fake_stop(&f);

	/* Something that is not ldsd, without the key: its PROOF is refused
	 * and nothing - no HELLO, no message - goes to it. */
	f = (struct fake){ .tcp = 1, .impostor = 1 };
	fake_start(&f, s_eof);
	ck_assert_ptr_null(lds_open(f.path, "cm", WAIT_MS, &err));
	ck_assert_int_eq(err, -EKEYREJECTED);
	fake_stop(&f);
}
END_TEST

START_TEST(t_open_socket_from_env)
{
	struct fake f = { 0 };
	struct lds *h;

	fake_start(&f, s_welcome_bye);
	ck_assert_int_eq(setenv(LDS_SOCKET_ENV, f.path, 1), 0);
	h = lds_open(NULL, "cm", WAIT_MS, NULL);
	ck_assert_ptr_nonnull(h);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
	ck_assert_str_eq(lds_socket_path(NULL), f.path);
	ck_assert_str_eq(lds_socket_path(""), f.path);
	ck_assert_str_eq(lds_socket_path("/x/given.sock"), "/x/given.sock");
	ck_assert_int_eq(setenv(LDS_SOCKET_ENV, "", 1), 0);
	ck_assert_str_eq(lds_socket_path(NULL), LDS_DEFAULT_SOCKET);
	ck_assert_int_eq(unsetenv(LDS_SOCKET_ENV), 0);
	ck_assert_str_eq(lds_socket_path(NULL), LDS_DEFAULT_SOCKET);
}
END_TEST

static void s_name_taken(struct fake *f)
{
	struct fk_frame fr = { 0 };

	if (fk_accept(f) == 0 && fk_read_frame(f, &fr, CP_HELLO) == 0)
		fk_error(f, 0, EADDRINUSE, "endpoint clusterA/cm is taken");
	free(fr.body);
}

START_TEST(t_open_name_taken)
{
	struct fake f = { 0 };
	int err = 0;

	fake_start(&f, s_name_taken);
	ck_assert_ptr_null(lds_open(f.path, "cm", WAIT_MS, &err));
	ck_assert_int_eq(err, -EADDRINUSE);
	fake_stop(&f);
}
END_TEST

static void s_silent(struct fake *f)
{
	struct fk_frame fr = { 0 };

	if (fk_accept(f) == 0 && fk_read_frame(f, &fr, CP_HELLO) == 0)
		fk_wait_go(f);
	free(fr.body);
}

START_TEST(t_open_errors)
{
	struct fake f = { 0 };
	int64_t t0;
	int err = 0;

	fake_start(&f, s_silent);
	t0 = now_ms();
	ck_assert_ptr_null(lds_open(f.path, "cm", 200, &err));
	ck_assert_int_eq(err, -ETIMEDOUT);
	ck_assert_int_ge(now_ms() - t0, 190);
	fake_go(&f);
	fake_stop(&f);

	ck_assert_ptr_null(lds_open("/nonexistent/ldsd.sock", "cm", WAIT_MS, &err));
	ck_assert_int_eq(err, -ENOENT);
	ck_assert_ptr_null(lds_open("/tmp/ldsd.sock", "two words", WAIT_MS, &err));
	ck_assert_int_eq(err, -EINVAL);
	/* The daemon adds the cluster; a name must not carry one. */
	ck_assert_ptr_null(lds_open("/tmp/ldsd.sock", "clusterA/cm", WAIT_MS, &err));
	ck_assert_int_eq(err, -EINVAL);
	ck_assert_ptr_null(lds_open("tcp:nonsense", "cm", WAIT_MS, &err));
	ck_assert_int_eq(err, -EINVAL);
}
END_TEST

/* ---- sending ---------------------------------------------------------- */

static void s_send_bytes(struct fake *f)
{
	static const uint8_t want1[] = { 0, 0, 0, 26, CP_SEND, CP_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1, 12,
					 'c', 'l', 'u', 's', 't', 'e', 'r', 'A', '/', 'c', 'm', '2',
					 'h', 'e', 'l', 'l', 'o' };
	static const uint8_t want2[] = { 0, 0, 0, 19, CP_SEND, CP_VERSION, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2, 10,
					 'c', 'l', 'u', 's', 't', 'e', 'r', 'B', '/', 'x' };
	uint8_t got[sizeof(want1)];

	if (fk_welcome(f, "clusterA") < 0 || fk_read_all(f, got, sizeof(want1)) < 0)
		return;
	FK_CHECK(f, memcmp(got, want1, sizeof(want1)) == 0);
	if (fk_read_all(f, got, sizeof(want2)) < 0)
		return;
	FK_CHECK(f, memcmp(got, want2, sizeof(want2)) == 0);
	fk_bye(f);
}

START_TEST(t_send_bytes)
{
	static char big[1];
	struct fake f = { .max_msg = 1000 };
	struct lds_stats st;
	struct lds *h;
	uint64_t id = 0;

	fake_start(&f, s_send_bytes);
	h = open_ok(&f, "cm");
	ck_assert_int_eq(lds_send(h, "cm2", "hello", 5, &id), 0);
	ck_assert_uint_eq(id, 1);
	/* Refused messages use no id. */
	ck_assert_int_eq(lds_send(h, "bad name", "x", 1, &id), -EINVAL);
	ck_assert_int_eq(lds_send(h, "a/b/c", "x", 1, &id), -EINVAL);
	ck_assert_int_eq(lds_send(h, "x", big, 1001, &id), -EMSGSIZE);
	ck_assert_int_eq(lds_send(h, "x", NULL, 1, &id), -EINVAL);
	ck_assert_int_eq(lds_send(h, "clusterB/x", NULL, 0, &id), 0);
	ck_assert_uint_eq(id, 2);
	lds_get_stats(h, &st);
	ck_assert_uint_eq(st.sent, 2);
	ck_assert_uint_eq(st.bytes_sent, 5);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
}
END_TEST

/* The daemon writes 8 MiB of DELIVERs before it reads anything, then reads
 * the client's 8 MiB SEND slowly: without reading while it writes, the
 * client would deadlock with it. */
static void s_big(struct fake *f)
{
	uint8_t *buf = malloc(BIG_DELIV);
	struct fk_frame fr = { 0 };

	FK_CHECK(f, buf != NULL);
	if (fk_welcome(f, "clusterA") < 0)
		goto out;
	for (unsigned i = 0; i < BIG_NDELIV; i++) {
		fill(buf, BIG_DELIV, i);
		if (fk_deliver(f, "clusterB/src", i + 1, buf, BIG_DELIV) < 0)
			goto out;
	}
	f->slow = 1;
	if (fk_read_frame(f, &fr, CP_SEND) < 0)
		goto out;
	f->slow = 0;
	if (fr.m.msg_id != 1 || strcmp(fr.m.name, "clusterB/sink") != 0 || fr.m.payload_len != BIG_LEN ||
	    !filled(fr.m.payload, BIG_LEN, 99)) {
		FK_ERR(f, "8 MiB SEND damaged");
		goto out;
	}
	if (fk_acked(f, 1, 1) == 0)
		fk_bye(f);
out:
	free(fr.body);
	free(buf);
}

START_TEST(t_big_no_deadlock)
{
	uint8_t *big = malloc(BIG_LEN);
	struct fake f = { 0 };
	struct lds_msg m;
	struct lds *h;
	uint64_t id = 0;

	ck_assert_ptr_nonnull(big);
	fill(big, BIG_LEN, 99);
	fake_start(&f, s_big);
	h = open_ok(&f, "cm");
	ck_assert_int_eq(lds_send(h, "clusterB/sink", big, BIG_LEN, &id), 0);
	ck_assert_uint_eq(id, 1);
	for (unsigned i = 0; i < BIG_NDELIV; i++) {
		ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
		ck_assert_uint_eq(m.id, i + 1);
		ck_assert_str_eq(m.src, "clusterB/src");
		ck_assert_uint_eq(m.len, BIG_DELIV);
		ck_assert(filled(m.data, m.len, i));
	}
	ck_assert_int_eq(lds_wait_settled(h, 1, WAIT_MS), 0);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
	free(big);
}
END_TEST

/* Once the test says go, reads SENDs with ids 1, 2, ... and checks each
 * one's pattern, until BYE. */
static void s_nb(struct fake *f)
{
	if (fk_welcome(f, "clusterA") < 0 || fk_wait_go(f) < 0)
		return;
	for (int i = 0; i <= NB_MAX; i++) {
		struct fk_frame fr = { 0 };
		struct cp_hdr h;
		int ok;

		if (fk_read_hdr(f, &h) < 0)
			return;
		if (h.type == CP_BYE && h.len == 0) {
			fk_eof(f);
			return;
		}
		if (fk_read_body(f, &h, &fr, CP_SEND) < 0) {
			free(fr.body);
			return;
		}
		f->got++;
		ok = fr.m.msg_id == f->got && fr.m.payload_len == NB_LEN && filled(fr.m.payload, NB_LEN, (unsigned)f->got);
		free(fr.body);
		FK_CHECK(f, ok);
	}
	FK_ERR(f, "too many messages");
}

START_TEST(t_send_nb)
{
	uint8_t *buf = malloc(NB_LEN);
	struct fake f = { 0 };
	struct lds *h;
	uint64_t id = 0;
	int k, rc = 0;

	ck_assert_ptr_nonnull(buf);
	fake_start(&f, s_nb);
	h = open_ok(&f, "cm");
	for (k = 0; k < NB_MAX; k++) {
		/* A new pattern each time: the library must have copied what
		 * it kept of the previous message. */
		fill(buf, NB_LEN, (unsigned)k + 1);
		rc = lds_send_nb(h, "clusterB/x", buf, NB_LEN, &id);
		if (rc == -EAGAIN)
			break;
		ck_assert_int_eq(rc, 0);
		ck_assert_uint_eq(id, (uint64_t)k + 1);
	}
	ck_assert_int_eq(rc, -EAGAIN);
	ck_assert_int_gt(k, 0);
	rc = lds_flush(h, 0);
	ck_assert(rc == 0 || rc == -EAGAIN);
	ck_assert_int_eq(lds_send_nb(h, "clusterB/x", buf, NB_LEN, &id), -EAGAIN);
	fake_go(&f);
	ck_assert_int_eq(lds_flush(h, WAIT_MS), 0);
	/* The refused attempts used no id. */
	ck_assert_int_eq(lds_send(h, "clusterB/x", buf, NB_LEN, &id), 0);
	ck_assert_uint_eq(id, (uint64_t)k + 1);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
	ck_assert_uint_eq(f.got, (unsigned long)k + 1);
	free(buf);
}
END_TEST

/* ---- receiving -------------------------------------------------------- */

static void s_recv(struct fake *f)
{
	if (fk_welcome(f, "clusterA") == 0 && fk_wait_go(f) == 0 && fk_deliver(f, "clusterB/x", 7, "abc", 3) == 0)
		fk_bye(f);
}

START_TEST(t_recv_timeouts)
{
	struct fake f = { 0 };
	struct lds_stats st;
	struct lds_msg m;
	struct lds *h;
	int64_t t0;

	fake_start(&f, s_recv);
	h = open_ok(&f, "cm");
	ck_assert_int_eq(lds_recv(h, &m, 0), -EAGAIN);
	t0 = now_ms();
	ck_assert_int_eq(lds_recv(h, &m, 100), -ETIMEDOUT);
	ck_assert_int_ge(now_ms() - t0, 95);
	ck_assert_int_lt(now_ms() - t0, 2000);
	fake_go(&f);
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
	ck_assert_str_eq(m.src, "clusterB/x");
	ck_assert_uint_eq(m.id, 7);
	ck_assert_uint_eq(m.len, 3);
	ck_assert_mem_eq(m.data, "abc", 3);
	lds_get_stats(h, &st);
	ck_assert_uint_eq(st.received, 1);
	ck_assert_uint_eq(st.bytes_received, 3);
	ck_assert_int_eq(lds_recv(h, &m, 0), -EAGAIN);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
}
END_TEST

/* The zero-copy calls over a socket (the fake daemon offers no rings):
 * they copy through the handle's buffer, put the same bytes on the wire
 * as lds_send, and keep their one-at-a-time rules. */
START_TEST(t_zc_socket)
{
	struct fake f = { .max_msg = 1000 };
	struct lds_msg m;
	struct lds *h;
	uint64_t id = 0;
	void *p;

	fake_start(&f, s_send_bytes);
	h = open_ok(&f, "cm");
	ck_assert_int_eq(lds_send_reserve(h, "x", 1001, &p), -EMSGSIZE);
	ck_assert_int_eq(lds_send_reserve(h, "bad name", 1, &p), -EINVAL);
	ck_assert_int_eq(lds_send_commit(h, &id), -EINVAL);
	ck_assert_int_eq(lds_send_reserve(h, "cm2", 3, &p), 0);
	ck_assert_int_eq(lds_send_reserve(h, "cm2", 3, &p), -EBUSY);
	ck_assert_int_eq(lds_send(h, "cm2", "abc", 3, &id), -EBUSY);
	ck_assert_int_eq(lds_flush(h, 0), -EBUSY);
	ck_assert_int_eq(lds_send_cancel(h), 0);
	ck_assert_int_eq(lds_send_reserve(h, "cm2", 5, &p), 0);
	memcpy(p, "hello", 5);
	ck_assert_int_eq(lds_send_commit(h, &id), 0);
	ck_assert_uint_eq(id, 1);
	ck_assert_int_eq(lds_send_reserve(h, "clusterB/x", 0, &p), 0);
	ck_assert_int_eq(lds_send_commit(h, &id), 0);
	ck_assert_uint_eq(id, 2);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);

	memset(&f, 0, sizeof(f));
	fake_start(&f, s_recv);
	h = open_ok(&f, "cm");
	ck_assert_int_eq(lds_recv_zc(h, &m, 0), -EAGAIN);
	ck_assert_int_eq(lds_recv_release(h, &m), -EINVAL);
	fake_go(&f);
	ck_assert_int_eq(lds_recv_zc(h, &m, WAIT_MS), 0);
	ck_assert_str_eq(m.src, "clusterB/x");
	ck_assert_uint_eq(m.id, 7);
	ck_assert_uint_eq(m.len, 3);
	ck_assert_mem_eq(m.data, "abc", 3);
	ck_assert_int_eq(lds_recv_zc(h, &m, 0), -EBUSY);
	ck_assert_int_eq(lds_recv_release(h, &m), 0);
	ck_assert_int_eq(lds_recv_release(h, &m), -EINVAL);
	ck_assert_int_eq(lds_recv_zc(h, &m, 0), -EAGAIN);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
}
END_TEST

/* ---- acknowledgements, losses and errors ------------------------------ */

static int fk_read_sends(struct fake *f, unsigned n)
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

static void s_outcomes(struct fake *f)
{
	if (fk_welcome(f, "clusterA") < 0 || fk_read_sends(f, 6) < 0)
		return;
	if (fk_acked(f, 3, 4) < 0 || fk_range(f, CP_LOST, 1, 1, "clusterB", "peer gateway restarted") < 0 ||
	    fk_error(f, 6, EHOSTUNREACH, "no link to clusterC") < 0 || fk_wait_go(f) < 0)
		return;
	if (fk_acked(f, 2, 2) < 0 || fk_acked(f, 3, 4) < 0 || fk_wait_go(f) < 0)
		return;
	if (fk_error(f, 0, EIO, "daemon draining") == 0 && fk_acked(f, 5, 5) == 0)
		fk_bye(f);
}

START_TEST(t_outcomes)
{
	struct fake f = { 0 };
	struct lds_event ev;
	struct lds *h;

	fake_start(&f, s_outcomes);
	h = open_ok(&f, "cm");
	ck_assert_int_eq(lds_set_ack_events(h, 1), 0);
	for (int i = 0; i < 6; i++)
		ck_assert_int_eq(lds_send(h, "clusterB/x", "m", 1, NULL), 0);
	wait_stats(h, 2, 1, 1);
	ck_assert_uint_eq(lds_settled_upto(h), 1);
	fake_go(&f);
	wait_stats(h, 3, 1, 1);
	ck_assert_uint_eq(lds_settled_upto(h), 4);
	fake_go(&f);
	ck_assert_int_eq(lds_wait_settled(h, 6, WAIT_MS), 0);
	ck_assert_int_eq(lds_wait_settled(h, 7, 0), -EINVAL);
	/* The repeated 3..4 was not counted twice. */
	wait_stats(h, 4, 1, 1);

	expect_event(h, LDS_EV_ACKED, 3, 4, 0, "", "");
	expect_event(h, LDS_EV_LOST, 1, 1, 0, "clusterB", "peer gateway restarted");
	expect_event(h, LDS_EV_ERROR, 6, 6, -EHOSTUNREACH, "", "no link to clusterC");
	expect_event(h, LDS_EV_ACKED, 2, 2, 0, "", "");
	expect_event(h, LDS_EV_ACKED, 3, 4, 0, "", "");
	expect_event(h, LDS_EV_ERROR, 0, 0, -EIO, "", "daemon draining");
	expect_event(h, LDS_EV_ACKED, 5, 5, 0, "", "");
	ck_assert_int_eq(lds_next_event(h, &ev), 0);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
	/* Taking the LOST event told the daemon the application knows. */
	ck_assert_uint_eq(f.resumes, 1);
	ck_assert_str_eq(f.resume_peer, "clusterB");
	ck_assert_uint_eq(f.resume_count, 1);
}
END_TEST

/* Ranges settled one at a time, out of order, acks and losses mixed. */
static const struct {
	uint64_t first, last, settled_after;
} settle_steps[] = {
	{ 10, 12, 0 }, { 1, 1, 1 }, { 15, 20, 1 }, { 3, 4, 1 }, { 2, 2, 4 }, { 13, 14, 4 }, { 5, 9, 20 },
};
#define NSTEPS (sizeof(settle_steps) / sizeof(settle_steps[0]))

static void s_settle_order(struct fake *f)
{
	if (fk_welcome(f, "clusterA") < 0 || fk_read_sends(f, 20) < 0)
		return;
	for (size_t i = 0; i < NSTEPS; i++) {
		uint8_t type = i % 2 ? CP_LOST : CP_ACKED;

		if (fk_wait_go(f) < 0 ||
		    fk_range(f, type, settle_steps[i].first, settle_steps[i].last, "clusterB", "") < 0)
			return;
	}
	fk_bye(f);
}

START_TEST(t_settle_order)
{
	struct fake f = { 0 };
	uint64_t acked = 0, lost = 0;
	struct lds *h;

	fake_start(&f, s_settle_order);
	h = open_ok(&f, "cm");
	for (int i = 0; i < 20; i++)
		ck_assert_int_eq(lds_send(h, "clusterB/x", "", 0, NULL), 0);
	for (size_t i = 0; i < NSTEPS; i++) {
		uint64_t n = settle_steps[i].last - settle_steps[i].first + 1;

		if (i % 2)
			lost += n;
		else
			acked += n;
		fake_go(&f);
		wait_stats(h, acked, lost, 0);
		ck_assert_uint_eq(lds_settled_upto(h), settle_steps[i].settled_after);
	}
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
}
END_TEST

/* ---- a daemon that goes away or misbehaves ---------------------------- */

static void s_gone(struct fake *f)
{
	if (fk_welcome(f, "clusterA") == 0)
		fk_deliver(f, "clusterB/x", 1, "last words", 10);
}

START_TEST(t_daemon_gone)
{
	struct fake f = { 0 };
	struct lds_msg m;
	struct lds *h;

	fake_start(&f, s_gone);
	h = open_ok(&f, "cm");
	/* What arrived before the end is still handed out. */
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
	ck_assert_mem_eq(m.data, "last words", 10);
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), -ECONNRESET);
	ck_assert_int_eq(lds_send(h, "x", "a", 1, NULL), -ECONNRESET);
	ck_assert_int_eq(lds_send_nb(h, "x", "a", 1, NULL), -ECONNRESET);
	ck_assert_int_eq(lds_process(h), -ECONNRESET);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
}
END_TEST

/* Takes 64 KiB of an 8 MiB message and hangs up. */
static void s_vanish(struct fake *f)
{
	static uint8_t sink[64 << 10];

	if (fk_welcome(f, "clusterA") == 0)
		fk_read_all(f, sink, sizeof(sink));
}

START_TEST(t_daemon_vanishes_during_send)
{
	uint8_t *big = calloc(1, BIG_LEN);
	struct fake f = { 0 };
	struct lds *h;

	ck_assert_ptr_nonnull(big);
	fake_start(&f, s_vanish);
	h = open_ok(&f, "cm");
	/* An error code, not SIGPIPE. */
	ck_assert_int_eq(lds_send(h, "clusterB/x", big, BIG_LEN, NULL), -ECONNRESET);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
	free(big);
}
END_TEST

static void s_oversize(struct fake *f)
{
	uint8_t hb[CP_HDR_LEN];

	cp_hdr_write(hb, CP_DELIVER, CP_MAX_BODY);
	hb[3]++; /* CP_MAX_BODY + 1 */
	if (fk_welcome(f, "clusterA") == 0 && fk_write_all(f, hb, sizeof(hb)) == 0)
		fk_wait_go(f);
}

/* Only a DELIVER may be larger than liblds's input buffer. */
static void s_big_ctl(struct fake *f)
{
	uint8_t hb[CP_HDR_LEN];

	cp_hdr_write(hb, CP_ACKED, 100000);
	if (fk_welcome(f, "clusterA") == 0 && fk_write_all(f, hb, sizeof(hb)) == 0)
		fk_wait_go(f);
}

START_TEST(t_big_control_frame)
{
	struct fake f = { 0 };
	struct lds_msg m;
	struct lds *h;

	fake_start(&f, s_big_ctl);
	h = open_ok(&f, "cm");
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), -EPROTO);
	fake_go(&f);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
}
END_TEST

START_TEST(t_oversize_frame)
{
	struct fake f = { 0 };
	struct lds_msg m;
	struct lds *h;

	fake_start(&f, s_oversize);
	h = open_ok(&f, "cm");
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), -EPROTO);
	ck_assert_int_eq(lds_recv(h, &m, 0), -EPROTO);
	ck_assert_int_eq(lds_send(h, "x", "a", 1, NULL), -EPROTO);
	fake_go(&f);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
}
END_TEST

START_TEST(t_strerror)
{
	ck_assert_str_ne(lds_strerror(-EADDRINUSE), strerror(EADDRINUSE));
	ck_assert_ptr_nonnull(strstr(lds_strerror(-ECONNRESET), "lds_reconnect"));
	ck_assert_str_eq(lds_strerror(-ENOENT), strerror(ENOENT));
	ck_assert_str_eq(lds_strerror(-EHOSTUNREACH), lds_strerror(EHOSTUNREACH));
}
END_TEST

/* ---- resends, copies and reconnecting ---------------------------------- */

#define PART_LEN 100000u

/* Processes input until the daemon's connection ends. */
static void wait_reset(struct lds *h)
{
	for (int i = 0; i < 500; i++) {
		struct pollfd p = { .fd = lds_fd(h), .events = POLLIN };
		int rc = lds_process(h);

		if (rc == -ECONNRESET)
			return;
		ck_assert_int_eq(rc, 0);
		ck_assert_int_ge(poll(&p, 1, 10), 0);
	}
	ck_abort_msg("the connection did not end");
}

/* Three messages and the start of a fourth, then the daemon dies.  The
 * restarted daemon hands over again what the sender resent (2 to 4), then
 * 5, and message 1 of the same sender name restarted (new incarnation). */
static void s_copies(struct fake *f)
{
	uint8_t *big = malloc(PART_LEN);
	struct cp_msg m = { .type = CP_DELIVER, .msg_id = 4, .incarnation = FK_INCARNATION,
			    .payload_len = PART_LEN, .name = "clusterB/src" };
	uint8_t hdr[CP_HDR_LEN + 512];
	size_t n = cp_encode(hdr, sizeof(hdr), &m);
	uint64_t inc;

	FK_CHECK(f, big != NULL && n > 0);
	fill(big, PART_LEN, 4);
	if (fk_welcome(f, "clusterA") < 0)
		goto out;
	inc = f->hello_incarnation;
	for (uint64_t id = 1; id <= 3; id++)
		if (fk_deliver(f, "clusterB/src", id, "m", 1) < 0)
			goto out;
	if (fk_write_all(f, hdr, n) < 0 || fk_write_all(f, big, PART_LEN / 2) < 0)
		goto out;
	fk_hangup(f);
	if (fk_welcome(f, "clusterA") < 0)
		goto out;
	if (f->hello_incarnation != inc || strcmp(f->hello_name, "cm") != 0) {
		FK_ERR(f, "reconnect changed the HELLO");
		goto out;
	}
	if (fk_deliver(f, "clusterB/src", 2, "m", 1) < 0 || fk_deliver(f, "clusterB/src", 3, "m", 1) < 0 ||
	    fk_deliver(f, "clusterB/src", 4, big, PART_LEN) < 0 || fk_deliver(f, "clusterB/src", 5, "five", 4) < 0 ||
	    fk_deliver_from(f, "clusterB/src", FK_INCARNATION + 1, 1, "new", 3) < 0)
		goto out;
	fk_bye(f);
out:
	free(big);
}

START_TEST(t_reconnect_drops_copies)
{
	struct fake f = { 0 };
	struct lds_stats st;
	struct lds_msg m;
	struct lds *h;

	fake_start(&f, s_copies);
	h = open_ok(&f, "cm");
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
	ck_assert_uint_eq(m.id, 1);
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
	ck_assert_uint_eq(m.id, 2);
	wait_reset(h);
	ck_assert_int_eq(lds_reconnect(h, WAIT_MS), 0);
	ck_assert_str_eq(lds_name(h), "clusterA/cm");
	/* 3 was received before and not yet taken: it is still there. */
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
	ck_assert_uint_eq(m.id, 3);
	/* The half-received 4 arrives whole, once. */
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
	ck_assert_uint_eq(m.id, 4);
	ck_assert_uint_eq(m.len, PART_LEN);
	ck_assert(filled(m.data, m.len, 4));
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
	ck_assert_uint_eq(m.id, 5);
	ck_assert_mem_eq(m.data, "five", 4);
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
	ck_assert_uint_eq(m.id, 1);
	ck_assert_mem_eq(m.data, "new", 3);
	lds_get_stats(h, &st);
	ck_assert_uint_eq(st.received, 6);
	ck_assert_uint_eq(st.duplicates, 2);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
}
END_TEST

/* Reads one SEND and checks its id and payload. */
static int fk_expect_send(struct fake *f, uint64_t id, const char *payload)
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
static int fk_ack_send(struct fake *f, uint64_t id, const char *payload)
{
	int rc = fk_expect_send(f, id, payload);

	return rc == 0 ? fk_acked(f, id, id) : rc;
}

static int fk_lost(struct fake *f, uint64_t id)
{
	return fk_range(f, CP_LOST, id, id, "clusterB", "peer gateway restarted");
}

/* Takes the event fk_lost(id) gave. */
static void expect_lost(struct lds *h, uint64_t id)
{
	expect_event(h, LDS_EV_LOST, id, id, 0, "clusterB", "peer gateway restarted");
}

static void s_resend(struct fake *f)
{
	if (fk_welcome(f, "clusterA") < 0 || fk_read_sends(f, 3) < 0)
		return;
	if (fk_acked(f, 1, 1) < 0 || fk_lost(f, 2) < 0 || fk_lost(f, 3) < 0)
		return;
	if (fk_expect_send(f, 2, "m2") < 0 || fk_expect_send(f, 3, "m3") < 0 || fk_acked(f, 2, 3) < 0)
		return;
	/* Fresh 4 is lost; 5 and 6 too. */
	if (fk_expect_send(f, 4, "m4") < 0 || fk_lost(f, 4) < 0 || fk_expect_send(f, 5, "m5") < 0 ||
	    fk_expect_send(f, 6, "m6") < 0 || fk_lost(f, 5) < 0 || fk_lost(f, 6) < 0)
		return;
	if (fk_ack_send(f, 6, "m6") == 0)
		fk_bye(f);
}

START_TEST(t_resend)
{
	struct fake f = { 0 };
	struct lds_stats st;
	struct lds *h;

	fake_start(&f, s_resend);
	h = open_ok(&f, "cm");
	ck_assert_int_eq(lds_send(h, "clusterB/x", "m1", 2, NULL), 0);
	ck_assert_int_eq(lds_send(h, "clusterB/x", "m2", 2, NULL), 0);
	ck_assert_int_eq(lds_send(h, "clusterB/x", "m3", 2, NULL), 0);
	wait_stats(h, 1, 2, 0);
	ck_assert_uint_eq(lds_settled_upto(h), 3);
	/* Only a loss the application has taken may be resent. */
	ck_assert_int_eq(lds_resend(h, "clusterB/x", "m2", 2, 2), -EINVAL);
	expect_lost(h, 2);
	expect_lost(h, 3);
	ck_assert_int_eq(lds_resend(h, "clusterB/x", "m2", 2, 1), -EINVAL);
	ck_assert_int_eq(lds_resend(h, "clusterB/x", "m2", 2, 2), 0);
	/* In doubt again; and resent only once. */
	ck_assert_uint_eq(lds_settled_upto(h), 1);
	ck_assert_int_eq(lds_resend(h, "clusterB/x", "m2", 2, 2), -EINVAL);
	ck_assert_int_eq(lds_resend(h, "clusterB/x", "m3", 2, 3), 0);
	lds_get_stats(h, &st);
	ck_assert_uint_eq(st.lost, 0);
	ck_assert_uint_eq(st.resent, 2);
	ck_assert_uint_eq(st.sent, 3);
	ck_assert_int_eq(lds_wait_settled(h, 3, WAIT_MS), 0);
	wait_stats(h, 3, 0, 0);

	/* A new message overtakes losses taken before it: they can no
	 * longer be resent, as the receiver could drop them for copies. */
	ck_assert_int_eq(lds_send(h, "clusterB/x", "m4", 2, NULL), 0);
	wait_stats(h, 3, 1, 0);
	expect_lost(h, 4);
	ck_assert_int_eq(lds_send(h, "clusterB/x", "m5", 2, NULL), 0);
	ck_assert_int_eq(lds_resend(h, "clusterB/x", "m4", 2, 4), -EINVAL);
	/* Resending 6 abandons 5 the same way. */
	ck_assert_int_eq(lds_send(h, "clusterB/x", "m6", 2, NULL), 0);
	wait_stats(h, 3, 3, 0);
	expect_lost(h, 5);
	expect_lost(h, 6);
	ck_assert_int_eq(lds_resend(h, "clusterB/x", "m6", 2, 6), 0);
	ck_assert_int_eq(lds_resend(h, "clusterB/x", "m5", 2, 5), -EINVAL);
	ck_assert_int_eq(lds_wait_settled(h, 6, WAIT_MS), 0);
	wait_stats(h, 4, 2, 0);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
	/* RESUME counts the LOST events taken naming the peer. */
	ck_assert_str_eq(f.resume_peer, "clusterB");
	ck_assert_uint_eq(f.resume_count, 5);
}
END_TEST

/* The daemon dies with messages 2 and 3 in doubt; the restarted one gets
 * 2 again, with its id. */
static void s_in_doubt(struct fake *f)
{
	uint64_t inc;

	if (fk_welcome(f, "clusterA") < 0 || fk_read_sends(f, 3) < 0 || fk_acked(f, 1, 1) < 0)
		return;
	inc = f->hello_incarnation;
	fk_hangup(f);
	if (fk_welcome(f, "clusterA") < 0)
		return;
	FK_CHECK(f, f->hello_incarnation == inc);
	if (fk_ack_send(f, 2, "m2") == 0)
		fk_bye(f);
}

START_TEST(t_reconnect_reports_in_doubt)
{
	struct fake f = { 0 };
	struct lds_event ev;
	struct lds *h;

	fake_start(&f, s_in_doubt);
	h = open_ok(&f, "cm");
	for (int i = 1; i <= 3; i++)
		ck_assert_int_eq(lds_send(h, "clusterB/x", i == 2 ? "m2" : "mm", 2, NULL), 0);
	wait_stats(h, 1, 0, 0);
	wait_reset(h);
	ck_assert_int_eq(lds_send(h, "clusterB/x", "m4", 2, NULL), -ECONNRESET);
	ck_assert_int_eq(lds_reconnect(h, WAIT_MS), 0);
	wait_stats(h, 1, 2, 0);
	expect_event(h, LDS_EV_LOST, 2, 3, 0, "", "connection to the local ldsd lost: outcome unknown");
	ck_assert_int_eq(lds_next_event(h, &ev), 0);
	ck_assert_int_eq(lds_resend(h, "clusterB/x", "m2", 2, 2), 0);
	ck_assert_int_eq(lds_wait_settled(h, 3, WAIT_MS), 0);
	wait_stats(h, 2, 1, 0);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
	/* A lost connection is no fence of the new one's daemon. */
	ck_assert_uint_eq(f.resumes, 0);
}
END_TEST

/* The daemon restarts: first its socket is gone, then it is there but
 * not listening yet (refuses), then it listens again. */
static void s_restart(struct fake *f)
{
	struct sockaddr_un sa = { .sun_family = AF_UNIX };

	if (fk_welcome(f, "clusterA") < 0)
		return;
	close(f->lfd);
	FK_CHECK(f, unlink(f->sock) == 0);
	fk_hangup(f);
	poll(NULL, 0, RESTART_GONE_MS);
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", f->sock);
	f->lfd = socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
	FK_CHECK(f, f->lfd >= 0 && bind(f->lfd, (struct sockaddr *)&sa, sizeof(sa)) == 0);
	poll(NULL, 0, RESTART_REFUSING_MS);
	FK_CHECK(f, listen(f->lfd, 4) == 0);
	if (fk_welcome(f, "clusterA") == 0 && fk_deliver(f, "clusterB/x", 1, "back", 4) == 0)
		fk_bye(f);
}

/* A handle whose daemon, running script, has ended the connection. */
static struct lds *open_until_reset(struct fake *f, script_fn script)
{
	struct lds *h;

	fake_start(f, script);
	h = open_ok(f, "cm");
	wait_reset(h);
	return h;
}

/* lds_reconnect waits for a restarting daemon, within its timeout. */
START_TEST(t_reconnect_waits)
{
	struct fake f = { 0 };
	struct lds_msg m;
	struct lds *h = open_until_reset(&f, s_restart);
	int64_t t0 = now_ms();

	ck_assert_int_eq(lds_reconnect(h, WAIT_MS), 0);
	ck_assert_int_ge(now_ms() - t0, RESTART_GONE_MS + RESTART_REFUSING_MS - 50);
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
	ck_assert_mem_eq(m.data, "back", 4);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
}
END_TEST

/* No daemon to come back to: the handle says so until one is there. */
START_TEST(t_reconnect_fails)
{
	struct fake f = { 0 };
	struct lds_msg m;
	struct lds *h = open_until_reset(&f, s_gone);
	int64_t t0;

	fake_stop(&f);
	t0 = now_ms();
	ck_assert_int_eq(lds_reconnect(h, 200), -ENOENT);
	/* It tried until its timeout, not once. */
	ck_assert_int_ge(now_ms() - t0, 180);
	ck_assert_int_eq(lds_recv(h, &m, 0), 0);
	ck_assert_mem_eq(m.data, "last words", 10);
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), -ECONNRESET);
	ck_assert_int_eq(lds_send(h, "x", "a", 1, NULL), -ECONNRESET);
	ck_assert_int_eq(lds_close(h), 0);
}
END_TEST

/* ---- TAKEN: what the application took --------------------------------- */

/* Reads TAKEN frames, after one that counted last, until one counts
 * want; counts never go back. */
static int fk_read_taken(struct fake *f, uint64_t last, uint64_t want)
{
	while (last < want) {
		struct fk_frame fr;
		int rc = fk_read_frame(f, &fr, CP_TAKEN);

		free(fr.body);
		if (rc < 0)
			return -1;
		if (fr.m.count <= last || fr.m.count > want)
			return FK_ERR(f, "TAKEN counts what was not taken, or goes back");
		last = fr.m.count;
	}
	return 0;
}

/* Three messages; TAKEN must reach 3 once the application took them,
 * then a copy of message 2 counts as taken at once. */
static void s_taken(struct fake *f)
{
	if (fk_welcome(f, "clusterA") < 0)
		return;
	for (uint64_t id = 1; id <= 3; id++)
		if (fk_deliver(f, "clusterB/src", id, "m", 1) < 0)
			return;
	if (fk_read_taken(f, 0, 3) < 0 || fk_deliver(f, "clusterB/src", 2, "m", 1) < 0 || fk_read_taken(f, 3, 4) < 0)
		return;
	if (fk_deliver(f, "clusterB/src", 4, "four", 4) == 0 && fk_read_taken(f, 4, 5) == 0)
		fk_bye(f);
}

START_TEST(t_taken)
{
	struct fake f = { .takes = 1 };
	struct lds_stats st;
	struct lds_msg m;
	struct lds *h;

	fake_start(&f, s_taken);
	h = open_ok(&f, "cm");
	for (uint64_t id = 1; id <= 3; id++) {
		ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
		ck_assert_uint_eq(m.id, id);
	}
	/* The copy of 2 is dropped; 4 comes after the daemon saw TAKEN 4. */
	ck_assert_int_eq(lds_recv(h, &m, WAIT_MS), 0);
	ck_assert_uint_eq(m.id, 4);
	lds_get_stats(h, &st);
	ck_assert_uint_eq(st.duplicates, 1);
	ck_assert_int_eq(lds_close(h), 0);
	fake_stop(&f);
}
END_TEST

/* ---- the thesis API --------------------------------------------------- */

static void write_file(const char *path, const char *text)
{
	FILE *fp = fopen(path, "w");

	ck_assert_ptr_nonnull(fp);
	ck_assert_int_ge(fputs(text, fp), 0);
	ck_assert_int_eq(fclose(fp), 0);
}

/* Figure A-5, verbatim, plus the socket of the fake daemon. */
static void write_fig_a5(const struct fake *f, char *path, size_t cap)
{
	char text[512];

	snprintf(path, cap, "%s/LDN_client.ini", f->dir);
	snprintf(text, sizeof(text),
		 "Server = 0\n"
		 "ServerHostName = infoquir2\n"
		 "BlockSize = 40000\n"
		 "SendMemory = 1200000\n"
		 "RecvMemory = 1200000\n"
		 "SenderPort = 60000\n"
		 "ReceiverPort = 60100\n"
		 "Socket = %s\n",
		 f->path);
	write_file(path, text);
}

static void s_thesis_client(struct fake *f)
{
	static const struct {
		const char *src, *data;
	} deliv[] = {
		{ "infoquir2/lds-server", "abc" }, { "clusterZ/stranger", "XXXX" }, { "infoquir2/lds-server", "defg" },
		{ "infoquir2/lds-server", "" },    { "infoquir2/lds-server", "hij" },
	};
	char got[16] = "";

	if (fk_welcome(f, "clusterA") < 0)
		return;
	FK_CHECK(f, strcmp(f->hello_name, "lds-client") == 0);
	/* max_msg 4: LDS_Send's 10 bytes come as three messages. */
	for (int i = 0; i < 3; i++) {
		struct fk_frame fr;
		int ok;

		if (fk_read_frame(f, &fr, CP_SEND) < 0) {
			free(fr.body);
			return;
		}
		ok = strcmp(fr.m.name, "infoquir2/lds-server") == 0 && fr.m.payload_len <= 4;
		if (ok)
			strncat(got, (const char *)fr.m.payload, fr.m.payload_len);
		free(fr.body);
		FK_CHECK(f, ok);
	}
	FK_CHECK(f, strcmp(got, "ping!ping!") == 0);
	for (size_t i = 0; i < sizeof(deliv) / sizeof(deliv[0]); i++)
		if (fk_deliver(f, deliv[i].src, i + 1, deliv[i].data, strlen(deliv[i].data)) < 0)
			return;
	if (fk_acked(f, 1, 3) == 0)
		fk_bye(f);
}

START_TEST(t_thesis_client)
{
	struct fake f = { .max_msg = 4 };
	char path[128], buf[8];

	ck_assert_int_eq(LDS_Send("x", 1), LDS_ESTATE);
	ck_assert_int_eq(LDS_Recv(buf, 1), LDS_ESTATE);
	ck_assert_int_eq(LDS_Finalize(), LDS_ESTATE);
	ck_assert_int_eq(LDS_Rank(), LDS_ESTATE);
	ck_assert_int_eq(LDSM_SetConfigFile("/nonexistent/LDN_Service.ini"), LDS_ECONFIG);

	fake_start(&f, s_thesis_client);
	write_fig_a5(&f, path, sizeof(path));
	ck_assert_int_eq(LDSM_SetConfigFile(path), LDS_OK);
	ck_assert_int_eq(LDS_Init(4), LDS_OK);
	ck_assert_int_eq(LDS_Init(4), LDS_ESTATE);
	ck_assert_int_eq(LDSM_SetConfigFile(path), LDS_ESTATE);
	ck_assert_int_eq(LDS_Rank(), 0);
	ck_assert_int_eq(LDS_Send("ping!ping!", 10), LDS_OK);
	ck_assert_int_eq(LDS_Recv(buf, 4), LDS_OK);
	ck_assert_mem_eq(buf, "abcd", 4);
	ck_assert_int_eq(LDS_Recv(buf, 0), LDS_OK);
	ck_assert_int_eq(LDS_Recv(buf, 6), LDS_OK);
	ck_assert_mem_eq(buf, "efghij", 6);
	ck_assert_int_eq(LDS_Recv(buf, -1), LDS_EARG);
	ck_assert_int_eq(LDS_Finalize(), LDS_OK);
	ck_assert_int_eq(LDS_Send("x", 1), LDS_ESTATE);
	ck_assert_int_eq(LDS_Finalize(), LDS_ESTATE);
	ck_assert_int_eq(unlink(path), 0);
	fake_stop(&f);
}
END_TEST

static void s_thesis_server(struct fake *f)
{
	struct fk_frame fr;
	int ok;

	if (fk_welcome(f, "infoquir2") < 0)
		return;
	FK_CHECK(f, strcmp(f->hello_name, "lds-server") == 0);
	if (fk_wait_go(f) < 0 || fk_deliver(f, "clusterA/lds-client", 1, "0123456789", 10) < 0)
		return;
	if (fk_read_frame(f, &fr, CP_SEND) < 0) {
		free(fr.body);
		return;
	}
	ok = strcmp(fr.m.name, "clusterA/lds-client") == 0 && fr.m.payload_len == 4 &&
	     memcmp(fr.m.payload, "pong", 4) == 0;
	free(fr.body);
	FK_CHECK(f, ok);
	/* The peer's gateway lost it: LDS_Finalize sends it again, same id. */
	if (fk_range(f, CP_LOST, 1, 1, "clusterA", "peer gateway restarted") == 0 && fk_ack_send(f, 1, "pong") == 0)
		fk_bye(f);
}

START_TEST(t_thesis_server)
{
	struct fake f = { 0 };
	char path[128], text[256], buf[16];

	fake_start(&f, s_thesis_server);
	snprintf(path, sizeof(path), "%s/server.ini", f.dir);
	snprintf(text, sizeof(text), "Server = 1\nSocket = %s\n", f.path);
	write_file(path, text);
	ck_assert_int_eq(LDSM_SetConfigFile(path), LDS_OK);
	ck_assert_int_eq(LDS_Init(4), LDS_OK);
	ck_assert_int_eq(LDS_Rank(), 1);
	/* A server answers whoever spoke first: nobody yet. */
	ck_assert_int_eq(LDS_Send("x", 1), LDS_ESTATE);
	fake_go(&f);
	ck_assert_int_eq(LDS_Recv(buf, 10), LDS_OK);
	ck_assert_mem_eq(buf, "0123456789", 10);
	ck_assert_int_eq(LDS_Send("pong", 4), LDS_OK);
	/* The peer's gateway lost message 1, which is sent again. */
	ck_assert_int_eq(LDS_Finalize(), LDS_OK);
	ck_assert_int_eq(unlink(path), 0);
	fake_stop(&f);
	ck_assert_uint_eq(f.resumes, 1);
}
END_TEST

/* The client's gateway dies after acknowledging message 1 of 2 and
 * handing over "xy"; the restarted one hands "xy" over again (the server
 * resent it) and "z", and gets message 2 again before anything new. */
static void s_thesis_restart(struct fake *f)
{
	if (fk_welcome(f, "clusterA") < 0 || fk_expect_send(f, 1, "abcd") < 0 || fk_expect_send(f, 2, "efgh") < 0 ||
	    fk_acked(f, 1, 1) < 0 || fk_deliver(f, "infoquir2/lds-server", 1, "xy", 2) < 0)
		return;
	fk_hangup(f);
	if (fk_welcome(f, "clusterA") < 0 || fk_deliver(f, "infoquir2/lds-server", 1, "xy", 2) < 0 ||
	    fk_deliver(f, "infoquir2/lds-server", 2, "z", 1) < 0)
		return;
	if (fk_ack_send(f, 2, "efgh") == 0 && fk_ack_send(f, 3, "more") == 0)
		fk_bye(f);
}

START_TEST(t_thesis_gateway_restart)
{
	struct fake f = { .max_msg = 4 };
	char path[128], buf[8];

	fake_start(&f, s_thesis_restart);
	write_fig_a5(&f, path, sizeof(path));
	ck_assert_int_eq(LDSM_SetConfigFile(path), LDS_OK);
	ck_assert_int_eq(LDS_Init(1), LDS_OK);
	ck_assert_int_eq(LDS_Send("abcdefgh", 8), LDS_OK);
	ck_assert_int_eq(LDS_Recv(buf, 3), LDS_OK);
	ck_assert_mem_eq(buf, "xyz", 3);
	ck_assert_int_eq(LDS_Send("more", 4), LDS_OK);
	ck_assert_int_eq(LDS_Finalize(), LDS_OK);
	ck_assert_int_eq(unlink(path), 0);
	fake_stop(&f);
}
END_TEST

/* Parsing succeeds iff LDS_Init gets as far as connecting, which fails:
 * the socket does not exist. */
START_TEST(t_thesis_config)
{
	static const struct {
		const char *text;
		int rc;
	} cases[] = {
		{ "Server = 1\n", LDS_ECONNECT },
		{ "  server=1 ;\n", LDS_ECONNECT },
		{ "# comment\r\n; comment\r\nSERVERHOSTNAME = \"clusterB\"   # quoted\r\n"
		  "Server = 0;\r\nBlockSize=10000\r\n\r\n",
		  LDS_ECONNECT },
		{ "Server = 0\nPeer = clusterB/srv\n", LDS_ECONNECT },
		{ "Server = 1\nEndpoint = \"my-server\"; trailing comment\n", LDS_ECONNECT },
		{ "Server = 1\nBogus = 1\n", LDS_ECONFIG },
		{ "Server = 2\n", LDS_ECONFIG },
		{ "ServerHostName = infoquir2\n", LDS_ECONFIG },
		{ "Server = 0\n", LDS_ECONFIG },
		{ "Server = 1\nServer\n", LDS_ECONFIG },
		{ "Server = 1\nEndpoint = \"open\n", LDS_ECONFIG },
		{ "Server = 1\nEndpoint = \"a\" b\n", LDS_ECONFIG },
		{ "Server = 1\nBlockSize = lots\n", LDS_ECONFIG },
		{ "Server = 0\nPeer = nocluster\n", LDS_ECONFIG },
		{ "Server = 1\nEndpoint = two words\n", LDS_ECONFIG },
		{ "Server = 1\nSocket =\n", LDS_ECONFIG },
		{ "Server = 1\n= 1\n", LDS_ECONFIG },
	};
	char dir[] = "/tmp/ldscfgXXXXXX", path[64], text[512];

	ck_assert_ptr_nonnull(mkdtemp(dir));
	snprintf(path, sizeof(path), "%s/t.ini", dir);
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		snprintf(text, sizeof(text), "Socket = %s/none.sock\n%s", dir, cases[i].text);
		write_file(path, text);
		ck_assert_int_eq(LDSM_SetConfigFile(path), LDS_OK);
		ck_assert_msg(LDS_Init(4) == cases[i].rc, "case %zu: %s", i, cases[i].text);
	}
	ck_assert_int_eq(LDS_Init(0), LDS_EARG);
	ck_assert_int_eq(LDSM_SetConfigFile(NULL), LDS_EARG);
	ck_assert_int_eq(unlink(path), 0);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

/* Without LDSM_SetConfigFile, LDS_Init reads LDN_Service.ini here. */
START_TEST(t_thesis_default_config)
{
	char dir[] = "/tmp/ldscfgXXXXXX";

	ck_assert_ptr_nonnull(mkdtemp(dir));
	ck_assert_int_eq(chdir(dir), 0);
	ck_assert_int_eq(LDS_Init(4), LDS_ECONFIG);
	write_file("LDN_Service.ini", "\xEF\xBB\xBFServer = 1\nSocket = none.sock\n");
	ck_assert_int_eq(LDS_Init(4), LDS_ECONNECT);
	ck_assert_int_eq(unlink("LDN_Service.ini"), 0);
	ck_assert_int_eq(chdir("/"), 0);
	ck_assert_int_eq(rmdir(dir), 0);
}
END_TEST

Suite *make_lds_suite(void)
{
	Suite *s = suite_create("lds");
	TCase *api = tcase_create("api");
	TCase *thesis = tcase_create("thesis");

	tcase_set_timeout(api, 60);
	tcase_add_test(api, t_open_close);
	tcase_add_test(api, t_peer);
	tcase_add_test(api, t_open_tcp_daemon_picks_name);
	tcase_add_test(api, t_open_tcp_key);
	tcase_add_test(api, t_open_socket_from_env);
	tcase_add_test(api, t_open_name_taken);
	tcase_add_test(api, t_open_errors);
	tcase_add_test(api, t_send_bytes);
	tcase_add_test(api, t_big_no_deadlock);
	tcase_add_test(api, t_send_nb);
	tcase_add_test(api, t_recv_timeouts);
	tcase_add_test(api, t_zc_socket);
	tcase_add_test(api, t_outcomes);
	tcase_add_test(api, t_settle_order);
	tcase_add_test(api, t_daemon_gone);
	tcase_add_test(api, t_daemon_vanishes_during_send);
	tcase_add_test(api, t_oversize_frame);
	tcase_add_test(api, t_big_control_frame);
	tcase_add_test(api, t_strerror);
	tcase_add_test(api, t_reconnect_drops_copies);
	tcase_add_test(api, t_resend);
	tcase_add_test(api, t_reconnect_reports_in_doubt);
	tcase_add_test(api, t_reconnect_fails);
	tcase_add_test(api, t_reconnect_waits);
	tcase_add_test(api, t_taken);
	suite_add_tcase(s, api);

	/* The thesis API has process-wide state: these tests rely on Check
	 * running each test in its own process (the default). */
	tcase_set_timeout(thesis, 60);
	tcase_add_test(thesis, t_thesis_client);
	tcase_add_test(thesis, t_thesis_server);
	tcase_add_test(thesis, t_thesis_gateway_restart);
	tcase_add_test(thesis, t_thesis_config);
	tcase_add_test(thesis, t_thesis_default_config);
	suite_add_tcase(s, thesis);
	return s;
}
