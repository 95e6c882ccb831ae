/* mw_worker.c - a worker: queues the tasks the master sends ahead
 * (PrefetchDepth of them), runs them in order, and with WorkerBehaviour 2
 * sends each result without waiting for it to arrive, so that the next
 * task computes while the result and the task after it are in transit.
 * With WorkerFailure = "continue" it also sends PING every quarter of
 * WorkerTimeout in which it sent nothing else. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/mw_ring.h"
#include "launcher/mw_run.h"

struct queued {
	uint64_t id;
	struct mw_buf task;
};

struct worker {
	struct queued *q;          /* ring; a slot keeps its task buffer for reuse */
	size_t cap, head, n;
};

static int push(struct worker *wk, const struct mw_msg *m)
{
	struct queued *slot;
	void *ring = wk->q;

	if (mw_ring_make_room(&ring, &wk->cap, &wk->head, wk->n, sizeof(*wk->q)) < 0)
		return -ENOMEM;
	wk->q = ring;
	slot = &wk->q[(wk->head + wk->n) % wk->cap];
	slot->id = m->h.id;
	slot->task.len = 0;
	if (mw_buf_put(&slot->task, m->data, m->h.len) < 0)
		return -ENOMEM;
	wk->n++;
	return 0;
}

static void worker_free(struct worker *wk)
{
	for (size_t i = 0; i < wk->cap; i++)
		free(wk->q[i].task.data);
	free(wk->q);
}

/* Takes every message that has arrived; 1 when STOP was among them. */
static int drain(struct worker *wk, struct mw_port *port)
{
	struct mw_msg m;
	int rc;

	while ((rc = mw_port_poll(port, &m)) > 0) {
		if (m.h.type == MW_MSG_STOP)
			return 1;
		if (m.h.type != MW_MSG_TASK) {
			fprintf(stderr, "mw: worker: unexpected %s from the master\n", mw_msg_names[m.h.type]);
			return -EPROTO;
		}
		if ((rc = push(wk, &m)) < 0)
			return rc;
	}
	return rc;
}

static int fail(struct mw_port *port, uint64_t id, const char *app)
{
	char why[256];
	int n = snprintf(why, sizeof(why), "%s: task_run() failed on task %llu", app,
			 (unsigned long long)id);
	struct mw_hdr h = { .type = MW_MSG_FAIL, .id = id, .len = (uint32_t)n };

	fprintf(stderr, "mw: worker: %s\n", why);
	mw_port_send(port, 0, &h, why);
	mw_port_flush(port);
	return 1;
}

int mw_worker_run(struct mw_run *r, struct mw_port *port)
{
	const struct mw_app *a = r->app;
	struct worker wk = { 0 };
	struct mw_buf out = { 0 };
	char host[64] = "?";
	struct mw_hdr h = { .type = MW_MSG_HELLO, .aux = r->cfg.prefetch };
	int rc, status = 1;

	gethostname(host, sizeof(host) - 1);
	snprintf(host + strlen(host), sizeof(host) - strlen(host), ":%d", (int)getpid());
	h.len = (uint32_t)strlen(host);
	/* WorkerFailure = "continue": the master takes a worker silent for
	 * WorkerTimeout for dead, so its heartbeat started before setup()
	 * (mw_main.c) and goes on while task_run computes. */
	if (mw_port_send(port, 0, &h, host) < 0)
		goto out;
	for (;;) {
		struct queued *t;
		double t0;

		rc = drain(&wk, port);
		if (rc < 0) {
			fprintf(stderr, "mw: worker: receiving from the master: %s\n", strerror(-rc));
			goto out;
		}
		if (rc == 1)
			break;
		if (wk.n == 0) {
			if (mw_port_wait(port, 1.0) < 0)
				goto out;
			continue;
		}
		t = &wk.q[wk.head];
		out.len = 0;
		t0 = mw_now();
		if (a->task_run(a->ctx, t->task.data, t->task.len, &out) < 0) {
			status = fail(port, t->id, a->name);
			goto out;
		}
		h = (struct mw_hdr){ .type = MW_MSG_RESULT, .id = t->id, .len = (uint32_t)out.len,
				     .aux = (uint64_t)((mw_now() - t0) * 1e9) };
		wk.head = (wk.head + 1) % wk.cap;
		wk.n--;
		if (out.len > UINT32_MAX || mw_port_send(port, 0, &h, out.data) < 0) {
			fprintf(stderr, "mw: worker: cannot send the result of task %llu (%zu bytes)\n",
				(unsigned long long)h.id, out.len);
			goto out;
		}
		/* Behaviour 1: one buffer, no overlap: the result is delivered
		 * before anything else happens. */
		if (r->cfg.worker_behaviour == 1 && mw_port_flush(port) < 0)
			goto out;
	}
	h = (struct mw_hdr){ .type = MW_MSG_BYE, .aux = (uint64_t)((mw_now() - r->t0) * 1e9),
			     .id = (uint64_t)(mw_cpu() * 1e9) };
	/* BYE is the last message: no heartbeat after it. */
	mw_port_beat(port, 0, NULL, 0);
	if (mw_port_send(port, 0, &h, NULL) < 0 || mw_port_flush(port) < 0)
		goto out;
	status = 0;
out:
	free(out.data);
	worker_free(&wk);
	return status;
}
