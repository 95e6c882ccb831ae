/* mw_port_mpi.c - runtime messages over MPI: Isend from a slot pool,
 * Improbe/Mrecv for messages of any size, Testsome for progress. */
#include <errno.h>
#include <sched.h>
#include <stdlib.h>
#include <string.h>

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
	int *free_slots;
	int nfree, cap, *done_idx;
	struct mw_buf rbuf;
	double idle_sleep_max;
};

static int progress(struct port_mpi *p)
{
	int out = 0;

	if (p->nfree == p->cap)
		return 0;
	if (MPI_Testsome(p->cap, p->reqs, &out, p->done_idx, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
		return -EIO;
	for (int i = 0; i < out && out != MPI_UNDEFINED; i++)
		p->free_slots[p->nfree++] = p->done_idx[i];
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
	for (int i = p->cap; i < cap; i++) {
		r[i] = MPI_REQUEST_NULL;
		b[i] = (struct mw_buf){ 0 };
		f[p->nfree++] = i;
	}
	p->cap = cap;
	return 0;
}

static int pm_send(struct mw_port *base, unsigned peer, const struct mw_hdr *h, const void *data)
{
	struct port_mpi *p = (struct port_mpi *)base;
	struct mw_buf *b;
	unsigned char *dst;
	int slot, rc;

	if (peer >= base->npeers)
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
	if (MPI_Isend(b->data, (int)b->len, MPI_BYTE, p->ranks[peer], TAG, p->comm, &p->reqs[slot]) != MPI_SUCCESS)
		return -EIO;
	return 0;
}

static int pm_poll(struct mw_port *base, struct mw_msg *m)
{
	struct port_mpi *p = (struct port_mpi *)base;
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
	return wait_for((struct port_mpi *)base, seconds, 0);
}

static int pm_nap(struct mw_port *base, double seconds)
{
	return wait_for((struct port_mpi *)base, seconds, MW_NAP_SLICE);
}

static int pm_flush(struct mw_port *base)
{
	struct port_mpi *p = (struct port_mpi *)base;

	if (p->cap > 0 && MPI_Waitall(p->cap, p->reqs, MPI_STATUSES_IGNORE) != MPI_SUCCESS)
		return -EIO;
	p->nfree = 0;
	for (int i = 0; i < p->cap; i++)
		p->free_slots[p->nfree++] = i;
	return 0;
}

static void pm_close(struct mw_port *base)
{
	struct port_mpi *p = (struct port_mpi *)base;

	for (int i = 0; i < p->cap; i++)
		free(p->bufs[i].data);
	free(p->bufs);
	free(p->reqs);
	free(p->free_slots);
	free(p->done_idx);
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
	if (p->ranks == NULL || p->peer_of == NULL || grow(p) < 0) {
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
