/*
 * mw_lanprobe - the LAN throughput of a cluster for the model
 * (mwlaunch --benchmark): rank 0 sends task-sized messages to rank 1,
 * which answers each with a result-sized one, for SECONDS; prints the bytes
 * moved per second ("lan_bytes_per_s N").  DEPTH tasks are in flight at
 * once (default 2), as the runtime keeps PrefetchDepth tasks queued per
 * worker: a probe of one message at a time would measure the round trip,
 * which the runtime hides, not the throughput the model wants.  Run with
 * mpirun -np 2.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define USAGE "usage: mpirun -np 2 mw_lanprobe TASK_BYTES RESULT_BYTES SECONDS [DEPTH]\n" \
	"  DEPTH: tasks in flight, 1..4096 (default 2; mwlaunch passes the job's PrefetchDepth)\n"
#define DEPTH_MAX 4096

enum { TAG_TASK, TAG_STOP };

/* Rank 0: keeps depth tasks in flight for secs, then waits for the last
 * results; returns the round trips completed and their time in *elapsed. */
static long send_tasks(char *task_buf, long task, char *res_buf, long result, int depth, double secs,
		       double *elapsed)
{
	MPI_Request req[2 * DEPTH_MAX];
	double t0 = MPI_Wtime(), t = t0;
	long n = 0;
	int open = 0, k;

	/* Slot k: a task send req[k] and its result's receive req[depth + k],
	 * into the slot's own part of res_buf (the task buffer is only read). */
	for (k = 0; k < depth; k++, open++) {
		MPI_Isend(task_buf, (int)task, MPI_BYTE, 1, TAG_TASK, MPI_COMM_WORLD, &req[k]);
		MPI_Irecv(res_buf + (size_t)k * (size_t)result, (int)result, MPI_BYTE, 1, TAG_TASK, MPI_COMM_WORLD,
			  &req[depth + k]);
	}
	while (open > 0) {
		MPI_Waitany(depth, req + depth, &k, MPI_STATUS_IGNORE);
		MPI_Wait(&req[k], MPI_STATUS_IGNORE);
		n++;
		t = MPI_Wtime();
		if (t - t0 < secs) {
			MPI_Isend(task_buf, (int)task, MPI_BYTE, 1, TAG_TASK, MPI_COMM_WORLD, &req[k]);
			MPI_Irecv(res_buf + (size_t)k * (size_t)result, (int)result, MPI_BYTE, 1, TAG_TASK,
				  MPI_COMM_WORLD, &req[depth + k]);
		} else {
			open--;
		}
	}
	*elapsed = t - t0;
	return n;
}

int main(int argc, char **argv)
{
	long task = 0, result = 0, depth = 2;
	double secs = 0, elapsed;
	long n;
	int rank, size;
	char *buf, *res_buf;

	/* Asked for help or the version: answer without starting MPI. */
	if (argc == 2 && (strcmp(argv[1], "-h") == 0 || strcmp(argv[1], "--help") == 0)) {
		fputs(USAGE, stdout);
		return 0;
	}
	if (argc == 2 && (strcmp(argv[1], "-V") == 0 || strcmp(argv[1], "--version") == 0)) {
		puts("mw_lanprobe " LDS_VERSION);
		return 0;
	}
	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (argc == 5)
		depth = atol(argv[4]);
	if ((argc != 4 && argc != 5) || size != 2 || (task = atol(argv[1])) < 1 || (result = atol(argv[2])) < 1 ||
	    (secs = atof(argv[3])) <= 0 || depth < 1 || depth > DEPTH_MAX) {
		if (rank == 0)
			fputs(USAGE, stderr);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	buf = calloc(1, (size_t)(task > result ? task : result));
	res_buf = calloc((size_t)depth, (size_t)result);
	if (buf == NULL || res_buf == NULL) {
		fprintf(stderr, "mw_lanprobe: out of memory for %ld bytes and %ld results\n",
			task > result ? task : result, depth);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	if (rank == 0) {
		n = send_tasks(buf, task, res_buf, result, (int)depth, secs, &elapsed);
		MPI_Send(buf, 0, MPI_BYTE, 1, TAG_STOP, MPI_COMM_WORLD);
		printf("lan_bytes_per_s %.0f\n", (double)n * (double)(task + result) / elapsed);
	} else {
		MPI_Status st;

		for (;;) {
			MPI_Recv(buf, (int)task, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
			if (st.MPI_TAG == TAG_STOP)
				break;
			MPI_Send(buf, (int)result, MPI_BYTE, 0, TAG_TASK, MPI_COMM_WORLD);
		}
	}
	free(res_buf);
	free(buf);
	MPI_Finalize();
	return 0;
}
