/*
 * fakeldsd.h - a fake ldsd for liblds's tests.
 *
 * The fake daemon is a thread running a script (script_fn) over the client
 * protocol on a unix (or TCP) socket in a fresh temporary directory.  It
 * cannot call ck_assert (Check's failure path is not meant for other
 * threads), so it records its first failed check, stops, and fake_stop()
 * reports it.  Its sockets time out after 10 s and the test sends it "go"
 * bytes over a pipe where the order of events matters.
 *
 * The fk_* calls are the script's (the daemon's side): each returns 0, or
 * -1 with the failure recorded.  The rest are the test's side and fail the
 * test with ck_assert.
 */
#ifndef LDS_TEST_FAKELDSD_H
#define LDS_TEST_FAKELDSD_H

#include <check.h>
#include <stddef.h>
#include <stdint.h>

#include "libclient/clientproto.h"
#include "libclient/lds.h"

#define WAIT_MS 5000             /* the tests' timeout of calls that should succeed */
/* The incarnation of the senders of fk_deliver's messages. */
#define FK_INCARNATION 0xC0FFEEull

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

struct fk_frame {
	struct cp_hdr h;
	uint8_t *body;
	struct cp_msg m;
};

int fk_failed(struct fake *f, int line, const char *what);
#define FK_ERR(f, what) fk_failed((f), __LINE__, (what))
#define FK_CHECK(f, cond)                                  \
	do {                                               \
		if (!(cond)) {                             \
			fk_failed((f), __LINE__, #cond);   \
			return;                            \
		}                                          \
	} while (0)

/* ---- the test's side ------------------------------------------------------ */

/* Starts script in a thread, listening on f->path (f's settings first). */
void fake_start(struct fake *f, script_fn script);
/* Waits for the script's end, removes its files, fails the test if the
 * script recorded a failure. */
void fake_stop(struct fake *f);
/* Lets the script go past its next fk_wait_go. */
void fake_go(struct fake *f);

/* Bytes of pattern seed; filled checks them. */
void fill(uint8_t *b, size_t n, unsigned seed);
int filled(const uint8_t *b, size_t n, unsigned seed);
int64_t now_ms(void);
/* lds_open of the fake's socket, which must succeed. */
struct lds *open_ok(const struct fake *f, const char *name);
/* Processes input until the counters reach the given values. */
void wait_stats(struct lds *h, uint64_t acked, uint64_t lost, uint64_t failed);
/* Takes the next event, which must be this one. */
void expect_event(struct lds *h, enum lds_event_type type, uint64_t first, uint64_t last, int err,
		  const char *peer, const char *text);

/* ---- the fake daemon's side ----------------------------------------------- */

int fk_wait_go(struct fake *f);
/* Accepts the client (and, over TCP, makes the key check unless tcp_raw). */
int fk_accept(struct fake *f);
int fk_read_all(struct fake *f, void *buf, size_t n);
int fk_write_all(struct fake *f, const void *buf, size_t n);
/* The next frame header, after any RESUME frames, which are recorded. */
int fk_read_hdr(struct fake *f, struct cp_hdr *h);
/* The body after header h, which must be of the given type; the caller
 * frees fr->body (also on failure). */
int fk_read_body(struct fake *f, const struct cp_hdr *h, struct fk_frame *fr, uint8_t type);
int fk_read_frame(struct fake *f, struct fk_frame *fr, uint8_t type);
/* n SEND frames, whatever they hold. */
int fk_read_sends(struct fake *f, unsigned n);
/* Reads one SEND and checks its id and payload. */
int fk_expect_send(struct fake *f, uint64_t id, const char *payload);
/* Reads SEND id with payload and acknowledges it. */
int fk_ack_send(struct fake *f, uint64_t id, const char *payload);
/* The end of the client's stream. */
int fk_eof(struct fake *f);
/* The client's goodbye, then the end of its stream. */
int fk_bye(struct fake *f);
int fk_send(struct fake *f, const struct cp_msg *m);
/* Sends the CHALLENGE of clients.tcp's key check; ch gets its nonce. */
int fk_challenge(struct fake *f, struct cp_msg *ch);
int fk_deliver_from(struct fake *f, const char *src, uint64_t incarnation, uint64_t id, const void *data,
		    size_t len);
int fk_deliver(struct fake *f, const char *src, uint64_t id, const void *data, size_t len);
/* The daemon dies: the client sees its connection end. */
void fk_hangup(struct fake *f);
/* An ACKED or LOST frame. */
int fk_range(struct fake *f, uint8_t type, uint64_t first, uint64_t last, const char *peer, const char *text);
int fk_acked(struct fake *f, uint64_t first, uint64_t last);
int fk_error(struct fake *f, uint64_t id, int err, const char *text);
/* Accepts the client and welcomes it into cluster. */
int fk_welcome(struct fake *f, const char *cluster);

#endif
