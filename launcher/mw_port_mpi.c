/* mw_port_mpi.c - runtime messages over MPI: Isend from a slot pool,
 * Improbe/Mrecv for messages of any size, Testsome for progress; sends
 * to a lost peer abandoned; a heartbeat thread (MPI_THREAD_SERIALIZED:
 * every op under one lock while it runs). */
#include <errno.h>
#include <pthread.h>
#include <sched.h>
#include <stdbool.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>

#include "launcher/mw_port_mpi.h"
#include "launcher/mw_run.h"

#define TAG 7
#define SPIN 50e-6              /* seconds of pure polling before napping */
#define FIRST_NAP 5e-6

struct port_mpi {
	struct mw_port base;
	MPI_Comm comm;
	int *ranks;                 /* peer -> rank */
	int *peer_of;               /* rank -> peer, -1 for strangers */
	int comm_size;
	MPI_Request *reqs;          /* MPI_REQUEST_NULL when free */
	struct mw_buf *bufs;
	unsigned *slot_peer;        /* whom each busy slot's send goes to */
	bool *lost;                 /* per peer: mw_port_lose() */
	int *free_slots;
	int nfree, cap, *done_idx;
	MPI_Status *st;
	struct mw_buf rbuf;
	double idle_sleep_max;
	/* heartbeat (beat()): */
	bool beating;
	bool beat_stop;
	pthread_t beat_thread;
	pthread_mutex_t lock;
	pthread_cond_t wake;
	unsigned beat_peer;
	struct mw_hdr beat_hdr;
	double beat_iv;
	double last_send;           /* mw_now() of the last send */
};

static void lock(struct port_mpi *p)
{
	if (p->beating)
		pthread_mutex_lock(&p->lock);
}

static void unlock(struct port_mpi *p)
{
	if (p->beating)
		pthread_mutex_unlock(&p->lock);
}

/* A send that ended in an error is one to a lost peer (abandoned) or a
 * failure.  With MPI_ERRORS_RETURN (WorkerFailure = "continue") an MPI
 * may report a dead rank so; the default handler aborts first. */
static int progress(struct port_mpi *p)
{
	int out = 0, rc;

	if (p->nfree == p->cap)
		return 0;
	rc = MPI_Testsome(p->cap, p->reqs, &out, p->done_idx, p->st);
	if (rc != MPI_SUCCESS && rc != MPI_ERR_IN_STATUS)
		return -EIO;
	for (int i = 0; i < out && out != MPI_UNDEFINED; i++) {
		int k = p->done_idx[i];

		if (rc == MPI_ERR_IN_STATUS && p->st[i].MPI_ERROR != MPI_SUCCESS && !p->lost[p->slot_peer[k]])
			return -EIO;
		p->free_slots[p->nfree++] = k;
	}
	return 0;
}

static int grow(struct port_mpi *p)
{
	int cap = p->cap ? p->cap * 2 : 16;
	MPI_Request *r = realloc(p->reqs, cap * sizeof(*r));

	if (r == NULL)
		return -ENOMEM;
	p->reqs = r;
	/* The pool only grows while every old slot is busy, so the new ones
	 * are the free ones. */
	struct mw_buf *b = realloc(p->bufs, cap * sizeof(*b));
	if (b == NULL)
		return -ENOMEM;
	p->bufs = b;
	int *f = realloc(p->free_slots, cap * sizeof(*f));
	if (f == NULL)
		return -ENOMEM;
	p->free_slots = f;
	int *d = realloc(p->done_idx, cap * sizeof(*d));
	if (d == NULL)
		return -ENOMEM;
	p->done_idx = d;
	MPI_Status *st = realloc(p->st, cap * sizeof(*st));
	if (st == NULL)
		return -ENOMEM;
	p->st = st;
	unsigned *sp = realloc(p->slot_peer, cap * sizeof(*sp));
	if (sp == NULL)
		return -ENOMEM;
	p->slot_peer = sp;
	for (int i = p->cap; i < cap; i++) {
		r[i] = MPI_REQUEST_NULL;
		sp[i] = 0;
		b[i] = (struct mw_buf){ 0 };
		f[p->nfree++] = i;
	}
	p->cap = cap;
	return 0;
}

static int send_locked(struct port_mpi *p, unsigned peer, const struct mw_hdr *h, const void *data)
{
	struct mw_buf *b;
	unsigned char *dst;
	int slot, rc;

	if (peer >= p->base.npeers)
		return -EINVAL;
	if (p->nfree == 0 && (rc = progress(p)) < 0)
		return rc;
	if (p->nfree == 0 && (rc = grow(p)) < 0)
		return rc;
	slot = p->free_slots[--p->nfree];
	b = &p->bufs[slot];
	b->len = 0;
	dst = mw_buf_reserve(b, MW_HDR_LEN + (size_t)h->len);
	if (dst == NULL) {
		p->free_slots[p->nfree++] = slot;
		return -ENOMEM;
	}
	mw_hdr_encode(dst, h);
	if (h->len > 0)
		memcpy(dst + MW_HDR_LEN, data, h->len);
	b->len = MW_HDR_LEN + (size_t)h->len;
	p->slot_peer[slot] = peer;
	p->last_send = mw_now();
	if (MPI_Isend(b->data, (int)b->len, MPI_BYTE, p->ranks[peer], TAG, p->comm, &p->reqs[slot]) != MPI_SUCCESS)
		return -EIO;
	return 0;
}

static int pm_send(struct mw_port *base, unsigned peer, const struct mw_hdr *h, const void *data)
{
	struct port_mpi *p = (struct port_mpi *)base;
	int rc;

	lock(p);
	rc = send_locked(p, peer, h, data);
	unlock(p);
	return rc;
}

static int poll_locked(struct port_mpi *p, struct mw_msg *m)
{
	MPI_Message msg;
	MPI_Status st;
	int flag = 0, n, rc;

	if ((rc = progress(p)) < 0)
		return rc;
	if (MPI_Improbe(MPI_ANY_SOURCE, TAG, p->comm, &flag, &msg, &st) != MPI_SUCCESS)
		return -EIO;
	if (!flag)
		return 0;
	MPI_Get_count(&st, MPI_BYTE, &n);
	p->rbuf.len = 0;
	if (mw_buf_reserve(&p->rbuf, n > 0 ? (size_t)n : 1) == NULL)
		return -ENOMEM;
	if (MPI_Mrecv(p->rbuf.data, n, MPI_BYTE, &msg, MPI_STATUS_IGNORE) != MPI_SUCCESS)
		return -EIO;
	if (st.MPI_SOURCE < 0 || st.MPI_SOURCE >= p->comm_size || p->peer_of[st.MPI_SOURCE] < 0)
		return -EPROTO;
	m->peer = (unsigned)p->peer_of[st.MPI_SOURCE];
	if (mw_hdr_decode(p->rbuf.data, (size_t)n, &m->h) < 0)
		return -EBADMSG;
	m->data = p->rbuf.data + MW_HDR_LEN;
	return 1;
}

static int pm_poll(struct mw_port *base, struct mw_msg *m)
{
	struct port_mpi *p = (struct port_mpi *)base;
	int rc;

	lock(p);
	rc = poll_locked(p, m);
	unlock(p);
	return rc;
}

/* Until a message may be ready or seconds passed, progressing sends:
 * with slice > 0 asleep, looking again at most slice later while a send
 * is unfinished (an MPI without single-copy shared memory moves a large
 * message only while its sender progresses it); else spinning, then
 * yielding or napping (IdleSleepMax). */
static int wait_for(struct port_mpi *p, double seconds, double slice)
{
	double t0 = mw_now(), nap = FIRST_NAP, el;
	int flag = 0, rc;

	for (;;) {
		if ((rc = progress(p)) < 0)
			return rc;
		if (MPI_Iprobe(MPI_ANY_SOURCE, TAG, p->comm, &flag, MPI_STATUS_IGNORE) != MPI_SUCCESS)
			return -EIO;
		el = mw_now() - t0;
		if (flag || el >= seconds)
			return 0;
		if (slice > 0) {
			mw_nap(seconds - el < slice || p->nfree == p->cap ? seconds - el : slice);
			continue;
		}
		if (el < SPIN)
			continue;
		if (p->idle_sleep_max <= 0) {
			sched_yield();
			continue;
		}
		if (nap > seconds - el)
			nap = seconds - el;
		mw_nap(nap);
		nap = nap * 2 < p->idle_sleep_max ? nap * 2 : p->idle_sleep_max;
	}
}

static int pm_wait(struct mw_port *base, double seconds)
{
	struct port_mpi *p = (struct port_mpi *)base;
	int rc;

	lock(p);
	rc = wait_for(p, seconds, 0);
	unlock(p);
	return rc;
}

static int pm_nap(struct mw_port *base, double seconds)
{
	struct port_mpi *p = (struct port_mpi *)base;
	int rc;

	lock(p);
	rc = wait_for(p, seconds, MW_NAP_SLICE);
	unlock(p);
	return rc;
}

/* Every send completes but those to lost peers, which keep their slots
 * (and buffers: MPI may still read them) for good. */
static int pm_flush(struct mw_port *base)
{
	struct port_mpi *p = (struct port_mpi *)base;
	int rc = 0;

	lock(p);
	for (int i = 0; i < p->cap && rc == 0; i++)
		if (p->reqs[i] != MPI_REQUEST_NULL && !p->lost[p->slot_peer[i]] &&
		    MPI_Wait(&p->reqs[i], MPI_STATUS_IGNORE) != MPI_SUCCESS)
			rc = -EIO;
	p->nfree = 0;
	for (int i = 0; i < p->cap; i++)
		if (p->reqs[i] == MPI_REQUEST_NULL)
			p->free_slots[p->nfree++] = i;
	unlock(p);
	return rc;
}

static void pm_lose(struct mw_port *base, unsigned peer)
{
	struct port_mpi *p = (struct port_mpi *)base;

	if (peer < base->npeers)
		p->lost[peer] = true;
}

/* The heartbeat thread: holds the lock but while it sleeps, so that a
 * due heartbeat goes out between the caller's ops. */
static void *beat_main(void *arg)
{
	struct port_mpi *p = arg;

	pthread_mutex_lock(&p->lock);
	while (!p->beat_stop) {
		double due = p->last_send + p->beat_iv, now = mw_now();
		struct timespec ts;

		if (now >= due) {
			/* A failed heartbeat is the worker's next op's failure too. */
			if (send_locked(p, p->beat_peer, &p->beat_hdr, NULL) < 0)
				p->last_send = now;
			continue;
		}
		clock_gettime(CLOCK_MONOTONIC, &ts);
		ts.tv_sec += (time_t)(due - now);
		ts.tv_nsec += (long)((due - now - (double)(time_t)(due - now)) * 1e9);
		if (ts.tv_nsec >= 1000000000L) {
			ts.tv_sec++;
			ts.tv_nsec -= 1000000000L;
		}
		pthread_cond_timedwait(&p->wake, &p->lock, &ts);
	}
	pthread_mutex_unlock(&p->lock);
	return NULL;
}

/* Joins the heartbeat thread; every op runs unlocked again. */
static void beat_stop(struct port_mpi *p)
{
	if (!p->beating)
		return;
	pthread_mutex_lock(&p->lock);
	p->beat_stop = true;
	pthread_cond_signal(&p->wake);
	pthread_mutex_unlock(&p->lock);
	pthread_join(p->beat_thread, NULL);
	p->beating = false;
	pthread_mutex_destroy(&p->lock);
	pthread_cond_destroy(&p->wake);
}

static int pm_beat(struct mw_port *base, unsigned peer, const struct mw_hdr *h, double interval)
{
	struct port_mpi *p = (struct port_mpi *)base;
	pthread_condattr_t ca;
	int rc;

	if (h == NULL) {
		beat_stop(p);
		return 0;
	}
	if (p->beating || peer >= base->npeers || h->len != 0 || !(interval > 0))
		return -EINVAL;
	if (pthread_condattr_init(&ca) != 0)
		return -ENOMEM;
	pthread_condattr_setclock(&ca, CLOCK_MONOTONIC);
	rc = pthread_cond_init(&p->wake, &ca);
	pthread_condattr_destroy(&ca);
	if (rc != 0)
		return -rc;
	if ((rc = pthread_mutex_init(&p->lock, NULL)) != 0) {
		pthread_cond_destroy(&p->wake);
		return -rc;
	}
	p->beat_peer = peer;
	p->beat_hdr = *h;
	p->beat_iv = interval;
	p->beat_stop = false;
	p->beating = true;
	if ((rc = pthread_create(&p->beat_thread, NULL, beat_main, p)) != 0) {
		p->beating = false;
		pthread_mutex_destroy(&p->lock);
		pthread_cond_destroy(&p->wake);
		return -rc;
	}
	return 0;
}

static void pm_close(struct mw_port *base)
{
	struct port_mpi *p = (struct port_mpi *)base;

	beat_stop(p);
	/* A send to a lost peer may still be read by MPI (a rank that was
	 * only frozen): its buffer outlives the port, taken by the exit. */
	for (int i = 0; i < p->cap; i++)
		if (p->reqs[i] == MPI_REQUEST_NULL || !p->lost[p->slot_peer[i]])
			free(p->bufs[i].data);
	free(p->bufs);
	free(p->reqs);
	free(p->free_slots);
	free(p->done_idx);
	free(p->st);
	free(p->slot_peer);
	free(p->lost);
	free(p->rbuf.data);
	free(p->ranks);
	free(p->peer_of);
	free(p);
}

static const struct mw_port_ops mpi_ops = {
	.size = sizeof(struct mw_port_ops),
	.name = "mpi",
	.send = pm_send,
	.poll = pm_poll,
	.wait = pm_wait,
	.nap = pm_nap,
	.flush = pm_flush,
	.close = pm_close,
	.lose = pm_lose,
	.beat = pm_beat,
};

struct mw_port *mw_port_mpi_new(MPI_Comm comm, const int *ranks, unsigned n, double idle_sleep_max)
{
	struct port_mpi *p = calloc(1, sizeof(*p));

	if (p == NULL)
		return NULL;
	MPI_Comm_size(comm, &p->comm_size);
	p->base.ops = &mpi_ops;
	p->base.npeers = n;
	p->comm = comm;
	p->idle_sleep_max = idle_sleep_max;
	p->ranks = malloc((n ? n : 1) * sizeof(int));
	p->peer_of = malloc((size_t)p->comm_size * sizeof(int));
	p->lost = calloc(n ? n : 1, sizeof(*p->lost));
	if (p->ranks == NULL || p->peer_of == NULL || p->lost == NULL || grow(p) < 0) {
		pm_close(&p->base);
		return NULL;
	}
	for (int r = 0; r < p->comm_size; r++)
		p->peer_of[r] = -1;
	for (unsigned i = 0; i < n; i++) {
		p->ranks[i] = ranks[i];
		p->peer_of[ranks[i]] = (int)i;
	}
	return &p->base;
}
