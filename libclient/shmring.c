/* shmring.c - shared-memory byte rings between liblds and ldsd; see shmring.h. */
#include <errno.h>
#include <fcntl.h>
#include <stdatomic.h>
#include <stddef.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "shmring.h"

#define SHMRING_VERSION 2u
#define CACHE_LINE 64

/* Each position and flag on its own cache line: the two sides write
 * different ones, and a shared line would bounce between the cores. */
struct shmring_ctl {
	_Alignas(CACHE_LINE) _Atomic uint64_t prod;
	_Alignas(CACHE_LINE) _Atomic uint64_t cons;
	_Atomic uint64_t taken;         /* the consumer's count of messages its application took */
	_Alignas(CACHE_LINE) _Atomic uint32_t cons_waiting;
	_Atomic uint64_t cons_until;    /* the consumer waits for prod to reach it; 0: any byte */
	_Alignas(CACHE_LINE) _Atomic uint32_t prod_waiting;
};

/* The header page: what the file is, then both rings' control blocks. */
struct shmring_hdr {
	uint32_t magic;
	uint32_t version;
	uint64_t size;
	struct shmring_ctl ctl[2];
};
_Static_assert(sizeof(struct shmring_hdr) <= SHMRING_HDR_SIZE, "header page too small");
_Static_assert(offsetof(struct shmring_hdr, ctl[1].prod) == SHMRING_PROD_OFF(1) &&
	       offsetof(struct shmring_hdr, ctl[1].cons) == SHMRING_CONS_OFF(1) &&
	       offsetof(struct shmring_hdr, ctl[1].taken) == SHMRING_TAKEN_OFF(1) &&
	       offsetof(struct shmring_hdr, ctl[1].cons_waiting) == SHMRING_CWAIT_OFF(1) &&
	       offsetof(struct shmring_hdr, ctl[1].cons_until) == SHMRING_CUNTIL_OFF(1) &&
	       offsetof(struct shmring_hdr, ctl[1].prod_waiting) == SHMRING_PWAIT_OFF(1), "layout of protocol.md");

static size_t page_size(void)
{
	long p = sysconf(_SC_PAGESIZE);

	return p > 0 ? (size_t)p : 4096;
}

/* The two files' lengths for rings of size bytes. */
static size_t file_size(int which, size_t size)
{
	return which == SHMRING_C2D ? SHMRING_HDR_SIZE + size : size;
}

size_t shmring_round(size_t want)
{
	size_t pg = page_size();

	if (want == 0)
		return 0;
	if (want < SHMRING_MIN)
		want = SHMRING_MIN;
	if (want > SHMRING_MAX)
		want = SHMRING_MAX;
	return (want + pg - 1) / pg * pg;
}

static int create_one(size_t len)
{
	int fd = memfd_create("lds-ring", MFD_CLOEXEC | MFD_ALLOW_SEALING);

	if (fd < 0)
		return -errno;
	if (ftruncate(fd, (off_t)len) < 0 || fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW) < 0) {
		int e = errno;

		close(fd);
		return -e;
	}
	return fd;
}

int shmring_create(size_t size, int *fd, int *dfd)
{
	*fd = create_one(file_size(SHMRING_C2D, size));
	if (*fd < 0)
		return *fd;
	*dfd = create_one(file_size(SHMRING_D2C, size));
	if (*dfd < 0 || fcntl(*fd, F_ADD_SEALS, F_SEAL_SEAL) < 0) {
		int e = *dfd < 0 ? *dfd : -errno;

		close(*fd);
		if (*dfd >= 0)
			close(*dfd);
		return e;
	}
	return 0;
}

/* Maps the ring at file offset off twice, back to back. */
static int map_twice(int fd, size_t size, off_t off, int prot, void **area)
{
	uint8_t *a = mmap(NULL, 2 * size, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);

	if (a == MAP_FAILED)
		return -errno;
	*area = a;
	for (int i = 0; i < 2; i++)
		if (mmap(a + (size_t)i * size, size, prot, MAP_SHARED | MAP_FIXED, fd, off) ==
		    MAP_FAILED)
			return -errno;
	return 0;
}

/* Whether fd is a regular file of len bytes. */
static int file_is(int fd, size_t len)
{
	struct stat st;

	return fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && (uint64_t)st.st_size == len;
}

int shmring_map(struct shmmap *m, int fd, int dfd, size_t size, int init)
{
	const int fds[2] = { [SHMRING_C2D] = fd, [SHMRING_D2C] = dfd };
	struct shmring_hdr *h;
	int rc;

	memset(m, 0, sizeof(*m));
	if (size < SHMRING_MIN || size > SHMRING_MAX || size % page_size() != 0 ||
	    !file_is(fd, file_size(SHMRING_C2D, size)) || !file_is(dfd, file_size(SHMRING_D2C, size)))
		return -EPROTO;
	m->hdr = mmap(NULL, SHMRING_HDR_SIZE, PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (m->hdr == MAP_FAILED) {
		m->hdr = NULL;
		return -errno;
	}
	m->size = size;
	h = m->hdr;
	if (init) {
		h->magic = SHMRING_MAGIC;
		h->version = SHMRING_VERSION;
		h->size = size;
		/* Both consumers start asleep: the first bytes ring them. */
		for (int i = 0; i < 2; i++)
			atomic_store(&h->ctl[i].cons_waiting, 1);
	} else if (h->magic != SHMRING_MAGIC || h->version != SHMRING_VERSION || h->size != size) {
		shmring_unmap(m);
		return -EPROTO;
	}
	for (int i = 0; i < 2; i++) {
		struct shmring *r = &m->r[i];
		int prot = i == SHMRING_D2C && !init ? PROT_READ : PROT_READ | PROT_WRITE;

		rc = map_twice(fds[i], size, i == SHMRING_C2D ? SHMRING_HDR_SIZE : 0, prot, &m->area[i]);
		if (rc < 0) {
			shmring_unmap(m);
			return rc;
		}
		r->ctl = &h->ctl[i];
		r->data = m->area[i];
		r->size = size;
		/* A fresh file starts at 0; the other side's positions are
		 * read (and checked) as they are used. */
		r->prod = r->cons = 0;
	}
	/* Ours stay writable; nobody can map it so any more. */
	if (init && fcntl(dfd, F_ADD_SEALS, F_SEAL_FUTURE_WRITE | F_SEAL_SEAL) < 0) {
		rc = -errno;
		shmring_unmap(m);
		return rc;
	}
	return 0;
}

void shmring_unmap(struct shmmap *m)
{
	for (int i = 0; i < 2; i++)
		if (m->area[i] != NULL)
			munmap(m->area[i], 2 * m->size);
	if (m->hdr != NULL)
		munmap(m->hdr, SHMRING_HDR_SIZE);
	memset(m, 0, sizeof(*m));
}

/* ---- producer ---- */

int shmring_space(struct shmring *r, size_t *space)
{
	uint64_t c = atomic_load_explicit(&r->ctl->cons, memory_order_acquire);

	if (c < r->cons || c > r->prod)
		return -EPROTO;
	r->cons = c;
	if (r->keep && r->keep_pos < c)
		c = r->keep_pos;
	*space = r->size - (size_t)(r->prod - c);
	return 0;
}

void shmring_keep(struct shmring *r, uint64_t pos)
{
	r->keep = 1;
	r->keep_pos = pos;
}

void shmring_unkeep(struct shmring *r)
{
	r->keep = 0;
}

void shmring_commit(struct shmring *r, size_t n)
{
	r->prod += n;
	atomic_store_explicit(&r->ctl->prod, r->prod, memory_order_release);
}

ssize_t shmring_writev(struct shmring *r, const struct iovec *iov, int n)
{
	size_t space, done = 0;
	int rc = shmring_space(r, &space);

	if (rc < 0)
		return rc;
	for (int i = 0; i < n && done < space; i++) {
		size_t k = iov[i].iov_len < space - done ? iov[i].iov_len : space - done;

		memcpy(shmring_wptr(r) + done, iov[i].iov_base, k);
		done += k;
	}
	if (done > 0)
		shmring_commit(r, done);
	return (ssize_t)done;
}

/* ---- consumer ---- */

int shmring_avail(struct shmring *r, size_t *avail)
{
	uint64_t p = atomic_load_explicit(&r->ctl->prod, memory_order_acquire);

	if (p < r->prod || p - (r->hold ? r->hold_pos : r->cons) > r->size)
		return -EPROTO;
	r->prod = p;
	*avail = (size_t)(p - r->cons);
	return 0;
}

void shmring_release(struct shmring *r, size_t n)
{
	r->cons += n;
	if (!r->hold)
		atomic_store_explicit(&r->ctl->cons, r->cons, memory_order_release);
}

void shmring_hold(struct shmring *r)
{
	r->hold = 1;
	r->hold_pos = r->cons;
}

void shmring_hold_move(struct shmring *r, uint64_t pos)
{
	r->hold_pos = pos;
	atomic_store_explicit(&r->ctl->cons, pos, memory_order_release);
}

void shmring_unhold(struct shmring *r)
{
	r->hold = 0;
	shmring_release(r, 0);
}

ssize_t shmring_read(struct shmring *r, void *buf, size_t len)
{
	size_t avail;
	int rc = shmring_avail(r, &avail);

	if (rc < 0)
		return rc;
	if (len > avail)
		len = avail;
	if (len > 0) {
		memcpy(buf, shmring_rptr(r), len);
		shmring_release(r, len);
	}
	return (ssize_t)len;
}

void shmring_set_taken(struct shmring *r, uint64_t n)
{
	atomic_store_explicit(&r->ctl->taken, n, memory_order_release);
}

uint64_t shmring_taken(const struct shmring *r)
{
	return atomic_load_explicit(&r->ctl->taken, memory_order_acquire);
}

/* ---- doorbells ---- */

/* The flag store and the next look at the other side's position must not
 * be reordered (a store-load pair): the full fences here and in wake()
 * make sure one of the two sides sees the other's write. */
int shmring_consumer_wait(struct shmring *r, size_t need)
{
	size_t avail;
	int rc;

	/* Stored before the flag is, and read after it (wake_consumer). */
	atomic_store_explicit(&r->ctl->cons_until, need > 1 ? r->cons + need : 0, memory_order_relaxed);
	atomic_store_explicit(&r->ctl->cons_waiting, 1, memory_order_release);
	atomic_thread_fence(memory_order_seq_cst);
	rc = shmring_avail(r, &avail);
	if (rc < 0)
		return rc;
	return avail >= need;
}

int shmring_consumer_sleep(struct shmring *r)
{
	return shmring_consumer_wait(r, 1);
}

int shmring_producer_sleep(struct shmring *r, size_t need)
{
	size_t space;
	int rc;

	atomic_store_explicit(&r->ctl->prod_waiting, 1, memory_order_relaxed);
	atomic_thread_fence(memory_order_seq_cst);
	rc = shmring_space(r, &space);
	if (rc < 0)
		return rc;
	return space >= need;
}

static int wake(_Atomic uint32_t *flag)
{
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(flag, memory_order_relaxed) == 0)
		return 0;
	return atomic_exchange_explicit(flag, 0, memory_order_relaxed) != 0;
}

int shmring_wake_consumer(struct shmring *r)
{
	/* Asleep until more than has come: not yet. */
	atomic_thread_fence(memory_order_seq_cst);
	if (atomic_load_explicit(&r->ctl->cons_waiting, memory_order_acquire) != 0 &&
	    r->prod < atomic_load_explicit(&r->ctl->cons_until, memory_order_relaxed))
		return 0;
	return wake(&r->ctl->cons_waiting);
}

int shmring_wake_producer(struct shmring *r)
{
	return wake(&r->ctl->prod_waiting);
}

void shmring_ring(int efd)
{
	uint64_t one = 1;

	/* EAGAIN: the counter is full, the sleeper wakes anyway. */
	while (write(efd, &one, sizeof(one)) < 0 && errno == EINTR)
		;
}

void shmring_drain(int efd)
{
	uint64_t v;

	while (read(efd, &v, sizeof(v)) < 0 && errno == EINTR)
		;
}
