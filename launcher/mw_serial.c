/* mw_serial.c - one process does everything: the serial reference that
 * benchmarks compare against, and the run of `mpirun -np 1` (or no
 * mpirun).  Same scheduling, journal and report as the master. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "launcher/mw_run.h"

int mw_serial_run(struct mw_run *r)
{
	const struct mw_app *a = r->app;
	struct mw_stats_worker *sw;
	struct mw_buf out = { 0 };
	int status = 1;

	if (mw_gather_start(r, 1) < 0)
		return mw_gather_end(r, 1);
	sw = &r->stats.w[0];
	sw->role = "Serial";
	gethostname(sw->host, sizeof(sw->host) - 1);
	r->stats.t_first = r->stats.t_last = mw_now();
	for (;;) {
		uint64_t id;
		int kind = mw_gather_next(r, 0, &id);
		double t0;

		if (kind < 0)
			goto out;
		if (kind == MW_SCHED_NONE)
			break;
		mw_sched_assign(&r->sched, 0, id, mw_now());
		out.len = 0;
		t0 = mw_now();
		if (a->task_run(a->ctx, r->task.data, r->task.len, &out) < 0) {
			fprintf(stderr, "mw: %s: task_run() failed on task %llu\n", a->name, (unsigned long long)id);
			goto out;
		}
		sw->work += mw_now() - t0;
		sw->bytes_out += r->task.len;
		sw->bytes_in += out.len;
		mw_sched_complete(&r->sched, 0, id, mw_now());
		if (mw_gather_join(r, id, out.data, out.len) < 0)
			goto out;
		r->stats.t_last = mw_now();
		mw_gather_tick(r, r->stats.t_last);
	}
	r->stats.t_end = mw_now();
	r->stats.cpu = mw_cpu();
	sw->exec = r->stats.t_end - r->t0;
	status = 0;
out:
	free(out.data);
	return mw_gather_end(r, status);
}
