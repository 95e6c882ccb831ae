/* check_shmring.c - the shared-memory byte rings (libclient/shmring.c):
 * layout, wrap-around in place, full and empty, positions a hostile peer
 * wrote, and the doorbells under two threads. */
#include <errno.h>
#include <fcntl.h>
#include <poll.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <sys/eventfd.h>
#include <sys/mman.h>
#include <unistd.h>

#include "libclient/shmring.h"
#include "suites.h"

#define SIZE SHMRING_MIN

/* Two mappings of one file: the two processes' views. */
struct pair {
	int fd, dfd;
	struct shmmap a, b;
	uint8_t *raw;   /* the header page, to write what a hostile side would */
};

static void pair_open(struct pair *p, size_t size)
{
	ck_assert_int_eq(shmring_create(size, &p->fd, &p->dfd), 0);
	ck_assert_int_eq(shmring_map(&p->a, p->fd, p->dfd, size, 1), 0);
	ck_assert_int_eq(shmring_map(&p->b, p->fd, p->dfd, size, 0), 0);
	p->raw = mmap(NULL, SHMRING_HDR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, p->fd, 0);
	ck_assert_ptr_ne(p->raw, MAP_FAILED);
}

static void pair_close(struct pair *p)
{
	munmap(p->raw, SHMRING_HDR_SIZE);
	shmring_unmap(&p->a);
	shmring_unmap(&p->b);
	close(p->fd);
	close(p->dfd);
}

static void put64(struct pair *p, size_t off, uint64_t v)
{
	memcpy(p->raw + off, &v, sizeof(v));
}

START_TEST(t_map_checks_the_file)
{
	struct shmmap m;
	int fd, dfd;

	ck_assert_int_eq(shmring_create(SIZE, &fd, &dfd), 0);
	/* Sealed: their lengths cannot change under a mapping. */
	ck_assert_int_lt(ftruncate(fd, 4096), 0);
	ck_assert_int_lt(ftruncate(dfd, 4096), 0);
	ck_assert_int_eq(shmring_map(&m, fd, dfd, 2 * SIZE, 0), -EPROTO);
	ck_assert_int_eq(shmring_map(&m, fd, dfd, SIZE + 1, 0), -EPROTO);
	/* The files swapped: neither has the other's length. */
	ck_assert_int_eq(shmring_map(&m, dfd, fd, SIZE, 0), -EPROTO);
	/* Not initialised by its creator: no magic. */
	ck_assert_int_eq(shmring_map(&m, fd, dfd, SIZE, 0), -EPROTO);
	ck_assert_int_eq(shmring_map(&m, fd, dfd, SIZE, 1), 0);
	shmring_unmap(&m);
	ck_assert_int_eq(shmring_map(&m, fd, dfd, SIZE, 0), 0);
	shmring_unmap(&m);
	close(fd);
	close(dfd);
	ck_assert_uint_eq(shmring_round(0), 0);
	ck_assert_uint_eq(shmring_round(1), SHMRING_MIN);
	ck_assert_uint_eq(shmring_round((size_t)SHMRING_MAX * 2), SHMRING_MAX);
	ck_assert_uint_eq(shmring_round(SHMRING_MIN + 1) % 4096, 0);
}
END_TEST

/* Once the creator mapped them, the daemon's ring (SHMRING_D2C) can only
 * be read by the other side: no writable mapping, no write() to it, no
 * seal removed; its own mapping still writes, and the other side sees
 * it. */
START_TEST(t_d2c_read_only)
{
	struct pair p;
	uint8_t b = 0x5a;
	void *w;

	pair_open(&p, SIZE);
	w = mmap(NULL, SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, p.dfd, 0);
	ck_assert_ptr_eq(w, MAP_FAILED);
	ck_assert_int_eq(errno, EPERM);
	ck_assert_int_lt(pwrite(p.dfd, &b, 1, 0), 0);
	ck_assert_int_lt(fcntl(p.dfd, F_ADD_SEALS, F_SEAL_WRITE), 0);
	w = mmap(NULL, SIZE, PROT_READ, MAP_SHARED, p.dfd, 0);
	ck_assert_ptr_ne(w, MAP_FAILED);
	ck_assert_int_lt(mprotect(w, SIZE, PROT_READ | PROT_WRITE), 0);
	munmap(w, SIZE);
	p.a.r[SHMRING_D2C].data[5] = b;
	ck_assert_uint_eq(p.b.r[SHMRING_D2C].data[5], b);
	/* The header and the client's ring stay writable to both. */
	p.b.r[SHMRING_C2D].data[5] = b;
	ck_assert_uint_eq(p.a.r[SHMRING_C2D].data[5], b);
	pair_close(&p);
}
END_TEST

/* Kept bytes are not written over, though the consumer gave them back. */
START_TEST(t_keep)
{
	struct pair p;
	struct shmring *w, *r;
	uint8_t buf[SIZE / 2], out[SIZE / 2];
	struct iovec iov = { buf, sizeof(buf) };
	size_t n;

	pair_open(&p, SIZE);
	w = &p.a.r[SHMRING_D2C];
	r = &p.b.r[SHMRING_D2C];
	ck_assert_int_eq(shmring_writev(w, &iov, 1), sizeof(buf));
	shmring_keep(w, 0);
	ck_assert_int_eq(shmring_read(r, out, sizeof(out)), sizeof(out));
	ck_assert_int_eq(shmring_space(w, &n), 0);
	ck_assert_uint_eq(n, SIZE / 2);
	/* Half of what was kept given up: that much more room. */
	shmring_keep(w, SIZE / 4);
	ck_assert_int_eq(shmring_space(w, &n), 0);
	ck_assert_uint_eq(n, SIZE / 2 + SIZE / 4);
	ck_assert_int_eq(shmring_writev(w, &iov, 1), sizeof(buf));
	ck_assert_int_eq(shmring_writev(w, &iov, 1), SIZE / 4);
	ck_assert_int_eq(shmring_space(w, &n), 0);
	ck_assert_uint_eq(n, 0);
	shmring_unkeep(w);
	ck_assert_int_eq(shmring_space(w, &n), 0);
	ck_assert_uint_eq(n, SIZE / 4);
	/* The consumer's own position still bounds it. */
	shmring_keep(w, w->prod);
	ck_assert_int_eq(shmring_space(w, &n), 0);
	ck_assert_uint_eq(n, SIZE / 4);
	pair_close(&p);
}
END_TEST

START_TEST(t_full_and_empty)
{
	struct pair p;
	struct shmring *w, *r;
	uint8_t buf[SIZE], out[SIZE];
	struct iovec iov = { buf, sizeof(buf) };
	size_t n;

	pair_open(&p, SIZE);
	w = &p.a.r[SHMRING_C2D];
	r = &p.b.r[SHMRING_C2D];
	memset(buf, 0xab, sizeof(buf));
	ck_assert_int_eq(shmring_avail(r, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(shmring_read(r, out, sizeof(out)), 0);
	ck_assert_int_eq(shmring_space(w, &n), 0);
	ck_assert_uint_eq(n, SIZE);
	ck_assert_int_eq(shmring_writev(w, &iov, 1), SIZE);
	ck_assert_int_eq(shmring_space(w, &n), 0);
	ck_assert_uint_eq(n, 0);
	ck_assert_int_eq(shmring_writev(w, &iov, 1), 0);
	ck_assert_int_eq(shmring_read(r, out, 100), 100);
	/* Room comes back only once the consumer released it. */
	ck_assert_int_eq(shmring_space(w, &n), 0);
	ck_assert_uint_eq(n, 100);
	ck_assert_int_eq(shmring_read(r, out, sizeof(out)), SIZE - 100);
	ck_assert_int_eq(memcmp(out, buf, SIZE - 100), 0);
	ck_assert_int_eq(shmring_read(r, out, sizeof(out)), 0);
	/* The other direction is a ring of its own. */
	ck_assert_int_eq(shmring_avail(&p.a.r[SHMRING_D2C], &n), 0);
	ck_assert_uint_eq(n, 0);
	pair_close(&p);
}
END_TEST

START_TEST(t_wrap_in_place)
{
	struct pair p;
	struct shmring *w, *r;
	uint8_t frame[3000], out[3000];
	size_t n;

	pair_open(&p, SIZE);
	w = &p.a.r[SHMRING_C2D];
	r = &p.b.r[SHMRING_C2D];
	/* Frames of 3000 bytes never divide the ring: many straddle its end
	 * and are still written and read as one contiguous run. */
	for (int i = 0; i < 200; i++) {
		for (size_t k = 0; k < sizeof(frame); k++)
			frame[k] = (uint8_t)(i * 31 + k);
		ck_assert_int_eq(shmring_space(w, &n), 0);
		ck_assert_uint_ge(n, sizeof(frame));
		memcpy(shmring_wptr(w), frame, sizeof(frame));
		shmring_commit(w, sizeof(frame));
		ck_assert_int_eq(shmring_avail(r, &n), 0);
		ck_assert_uint_eq(n, sizeof(frame));
		ck_assert_int_eq(memcmp(shmring_rptr(r), frame, sizeof(frame)), 0);
		ck_assert_int_eq(shmring_read(r, out, sizeof(out)), (ssize_t)sizeof(out));
		ck_assert_int_eq(memcmp(out, frame, sizeof(frame)), 0);
	}
	ck_assert_uint_gt(r->cons, 2 * SIZE);
	pair_close(&p);
}
END_TEST

/* Positions a hostile peer wrote: every one out of bounds is -EPROTO,
 * and nothing is read or written. */
START_TEST(t_garbage_positions)
{
	struct pair p;
	struct shmring *w, *r;
	uint8_t buf[64] = { 0 };
	struct iovec iov = { buf, sizeof(buf) };
	size_t n;

	pair_open(&p, SIZE);
	w = &p.a.r[SHMRING_D2C];   /* ldsd writes, the client reads */
	r = &p.b.r[SHMRING_C2D];   /* the client writes, ldsd reads */
	/* A producer claiming more than the ring holds. */
	put64(&p, SHMRING_PROD_OFF(SHMRING_C2D), SIZE + 1);
	ck_assert_int_eq(shmring_avail(r, &n), -EPROTO);
	ck_assert_int_eq(shmring_read(r, buf, sizeof(buf)), -EPROTO);
	put64(&p, SHMRING_PROD_OFF(SHMRING_C2D), UINT64_MAX);
	ck_assert_int_eq(shmring_avail(r, &n), -EPROTO);
	/* Going back. */
	put64(&p, SHMRING_PROD_OFF(SHMRING_C2D), 100);
	ck_assert_int_eq(shmring_read(r, buf, 50), 50);
	put64(&p, SHMRING_PROD_OFF(SHMRING_C2D), 40);
	ck_assert_int_eq(shmring_avail(r, &n), -EPROTO);
	put64(&p, SHMRING_PROD_OFF(SHMRING_C2D), 99);
	ck_assert_int_eq(shmring_avail(r, &n), -EPROTO);
	put64(&p, SHMRING_PROD_OFF(SHMRING_C2D), 100);
	ck_assert_int_eq(shmring_avail(r, &n), 0);
	ck_assert_uint_eq(n, 50);
	/* A consumer claiming to have read what was never written, or
	 * going back. */
	ck_assert_int_eq(shmring_writev(w, &iov, 1), (ssize_t)sizeof(buf));
	put64(&p, SHMRING_CONS_OFF(SHMRING_D2C), sizeof(buf) + 1);
	ck_assert_int_eq(shmring_space(w, &n), -EPROTO);
	ck_assert_int_eq(shmring_writev(w, &iov, 1), -EPROTO);
	put64(&p, SHMRING_CONS_OFF(SHMRING_D2C), 10);
	ck_assert_int_eq(shmring_space(w, &n), 0);
	put64(&p, SHMRING_CONS_OFF(SHMRING_D2C), 5);
	ck_assert_int_eq(shmring_space(w, &n), -EPROTO);
	ck_assert_uint_eq(w->prod, sizeof(buf));
	pair_close(&p);
}
END_TEST

START_TEST(t_doorbell_flags)
{
	struct pair p;
	struct shmring *w, *r;
	uint8_t b = 1;
	struct iovec iov = { &b, 1 };

	pair_open(&p, SIZE);
	w = &p.a.r[SHMRING_C2D];
	r = &p.b.r[SHMRING_C2D];
	/* A consumer starts asleep: the first bytes ring it, once; then
	 * nobody is asleep, and more bytes ring nothing. */
	ck_assert_int_eq(shmring_writev(w, &iov, 1), 1);
	ck_assert_int_eq(shmring_wake_consumer(w), 1);
	ck_assert_int_eq(shmring_writev(w, &iov, 1), 1);
	ck_assert_int_eq(shmring_wake_consumer(w), 0);
	ck_assert_int_eq(shmring_read(r, &b, 1), 1);
	/* Bytes wait: the consumer is told not to sleep. */
	ck_assert_int_eq(shmring_consumer_sleep(r), 1);
	ck_assert_int_eq(shmring_read(r, &b, 1), 1);
	ck_assert_int_eq(shmring_consumer_sleep(r), 0);
	ck_assert_int_eq(shmring_writev(w, &iov, 1), 1);
	ck_assert_int_eq(shmring_wake_consumer(w), 1);
	/* Rung once: the flag is cleared. */
	ck_assert_int_eq(shmring_wake_consumer(w), 0);
	ck_assert_int_eq(shmring_producer_sleep(w, SIZE), 0);
	ck_assert_int_eq(shmring_read(r, &b, 1), 1);
	ck_assert_int_eq(shmring_wake_producer(r), 1);
	ck_assert_int_eq(shmring_producer_sleep(w, SIZE), 1);
	pair_close(&p);
}
END_TEST

/* ldsd leaves payloads in the ring (read, not given back: hold) and gives
 * them back in parts as links seal them (hold_move); it waits for a
 * frame's rest with consumer_wait: the producer rings once it is all
 * there, not at each part. */
START_TEST(t_hold_move_and_wait)
{
	static uint8_t buf[1000];
	const struct iovec iov = { buf, sizeof(buf) };
	struct pair p;
	size_t space;

	pair_open(&p, SIZE);
	struct shmring *w = &p.a.r[SHMRING_C2D], *r = &p.b.r[SHMRING_C2D];

	ck_assert_int_eq(shmring_writev(w, &iov, 1), 1000);
	shmring_hold(r);
	shmring_release(r, 1000);
	ck_assert_int_eq(shmring_space(w, &space), 0);
	ck_assert_uint_eq(space, SIZE - 1000);
	shmring_hold_move(r, 400);
	ck_assert_int_eq(shmring_space(w, &space), 0);
	ck_assert_uint_eq(space, SIZE - 600);
	/* The producer may now fill up to the held bytes, not over them. */
	for (size_t left = SIZE - 600; left > 0;) {
		struct iovec v = { buf, left < sizeof(buf) ? left : sizeof(buf) };
		ssize_t n = shmring_writev(w, &v, 1);

		ck_assert_int_gt(n, 0);
		left -= (size_t)n;
	}
	ck_assert_int_eq(shmring_writev(w, &iov, 1), 0);
	shmring_unhold(r);
	ck_assert_int_eq(shmring_space(w, &space), 0);
	ck_assert_uint_eq(space, 600);

	/* 500 bytes wait; the consumer wants 700: it sleeps, a commit that
	 * leaves it short rings nothing, the one that completes them rings
	 * once; a plain sleep is rung by any byte again. */
	shmring_release(r, SIZE - 600);
	ck_assert_int_eq(shmring_writev(w, &(struct iovec){ buf, 500 }, 1), 500);
	ck_assert_int_eq(shmring_consumer_wait(r, 700), 0);
	ck_assert_int_eq(shmring_writev(w, &(struct iovec){ buf, 100 }, 1), 100);
	ck_assert_int_eq(shmring_wake_consumer(w), 0);
	ck_assert_int_eq(shmring_writev(w, &(struct iovec){ buf, 100 }, 1), 100);
	ck_assert_int_eq(shmring_wake_consumer(w), 1);
	ck_assert_int_eq(shmring_wake_consumer(w), 0);
	ck_assert_int_eq(shmring_consumer_wait(r, 700), 1);
	shmring_release(r, 700);
	ck_assert_int_eq(shmring_consumer_sleep(r), 0);
	ck_assert_int_eq(shmring_writev(w, &(struct iovec){ buf, 1 }, 1), 1);
	ck_assert_int_eq(shmring_wake_consumer(w), 1);
	pair_close(&p);
}
END_TEST

/* ---- two threads: frames of random length with a checksum ---- */

#define STRESS_FRAMES 20000
#define STRESS_MAX    5000

struct side {
	struct shmring *ring;
	int efd_mine, efd_other;  /* I sleep on mine, ring the other's */
	uint64_t bytes, sleeps;
	int failed;
};

static uint32_t fnv(const uint8_t *p, size_t n)
{
	uint32_t h = 2166136261u;

	for (size_t i = 0; i < n; i++)
		h = (h ^ p[i]) * 16777619u;
	return h;
}

/* Sleeps on efd (bounded, so that a lost wake-up fails the test instead
 * of hanging it). */
static int doze(struct side *s)
{
	struct pollfd pf = { .fd = s->efd_mine, .events = POLLIN };

	s->sleeps++;
	if (poll(&pf, 1, 10000) != 1)
		return -1;
	shmring_drain(s->efd_mine);
	return 0;
}

static void *producer(void *arg)
{
	struct side *s = arg;
	uint8_t frame[8 + STRESS_MAX];
	unsigned seed = 7;

	for (uint32_t i = 0; i < STRESS_FRAMES && !s->failed; i++) {
		uint32_t len = (uint32_t)rand_r(&seed) % STRESS_MAX, sum;
		size_t space = 0, off = 0;

		for (uint32_t k = 0; k < len; k++)
			frame[8 + k] = (uint8_t)rand_r(&seed);
		sum = fnv(frame + 8, len) ^ i;
		memcpy(frame, &len, 4);
		memcpy(frame + 4, &sum, 4);
		/* Written in pieces as room frees, as liblds does. */
		while (off < 8 + len) {
			int rc;

			if (shmring_space(s->ring, &space) < 0) {
				s->failed = 1;
				break;
			}
			if (space == 0) {
				rc = shmring_producer_sleep(s->ring, 1);
				if (rc == 0 && doze(s) < 0)
					s->failed = 1;
				if (rc < 0)
					s->failed = 1;
				if (s->failed)
					break;
				continue;
			}
			if (space > 8 + len - off)
				space = 8 + len - off;
			memcpy(shmring_wptr(s->ring), frame + off, space);
			shmring_commit(s->ring, space);
			off += space;
			s->bytes += space;
			if (shmring_wake_consumer(s->ring))
				shmring_ring(s->efd_other);
		}
	}
	return NULL;
}

static void *consumer(void *arg)
{
	struct side *s = arg;

	for (uint32_t i = 0; i < STRESS_FRAMES && !s->failed; i++) {
		uint32_t len, sum;
		size_t avail = 0;

		/* Each frame read in place once whole: the double mapping makes
		 * it contiguous even across the end. */
		for (;;) {
			if (shmring_avail(s->ring, &avail) < 0) {
				s->failed = 1;
				return NULL;
			}
			if (avail >= 8) {
				memcpy(&len, shmring_rptr(s->ring), 4);
				if (len >= STRESS_MAX) {
					s->failed = 1;
					return NULL;
				}
				if (avail >= 8 + len)
					break;
			}
			if (shmring_consumer_sleep(s->ring) == 0 && doze(s) < 0) {
				s->failed = 1;
				return NULL;
			}
		}
		memcpy(&sum, shmring_rptr(s->ring) + 4, 4);
		if ((fnv(shmring_rptr(s->ring) + 8, len) ^ i) != sum) {
			s->failed = 1;
			return NULL;
		}
		shmring_release(s->ring, 8 + len);
		s->bytes += 8 + len;
		if (shmring_wake_producer(s->ring))
			shmring_ring(s->efd_other);
	}
	return NULL;
}

START_TEST(t_two_threads)
{
	struct pair p;
	int efd_p = eventfd(0, EFD_NONBLOCK), efd_c = eventfd(0, EFD_NONBLOCK);
	struct side prod, cons;
	pthread_t tp, tc;

	ck_assert_int_ge(efd_p, 0);
	ck_assert_int_ge(efd_c, 0);
	pair_open(&p, SIZE);
	prod = (struct side){ .ring = &p.a.r[SHMRING_C2D], .efd_mine = efd_p, .efd_other = efd_c };
	cons = (struct side){ .ring = &p.b.r[SHMRING_C2D], .efd_mine = efd_c, .efd_other = efd_p };
	ck_assert_int_eq(pthread_create(&tp, NULL, producer, &prod), 0);
	ck_assert_int_eq(pthread_create(&tc, NULL, consumer, &cons), 0);
	pthread_join(tp, NULL);
	pthread_join(tc, NULL);
	ck_assert_int_eq(prod.failed, 0);
	ck_assert_int_eq(cons.failed, 0);
	ck_assert_uint_eq(prod.bytes, cons.bytes);
	/* Far more bytes than the ring: it wrapped many times, and the
	 * sides did sleep (so the bells were exercised). */
	ck_assert_uint_gt(cons.bytes, 100 * SIZE);
	ck_assert_uint_gt(prod.sleeps + cons.sleeps, 0);
	pair_close(&p);
	close(efd_p);
	close(efd_c);
}
END_TEST

Suite *make_shmring_suite(void)
{
	Suite *s = suite_create("shmring");
	TCase *tc = tcase_create("core");

	tcase_set_timeout(tc, 60);
	tcase_add_test(tc, t_map_checks_the_file);
	tcase_add_test(tc, t_d2c_read_only);
	tcase_add_test(tc, t_keep);
	tcase_add_test(tc, t_full_and_empty);
	tcase_add_test(tc, t_wrap_in_place);
	tcase_add_test(tc, t_garbage_positions);
	tcase_add_test(tc, t_doorbell_flags);
	tcase_add_test(tc, t_hold_move_and_wait);
	tcase_add_test(tc, t_two_threads);
	suite_add_tcase(s, tc);
	return s;
}
