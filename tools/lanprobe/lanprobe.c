/*
 * mw_lanprobe - the LAN throughput of a cluster for the model
 * (mwlaunch --benchmark): rank 0 sends a task-sized message to rank 1,
 * which answers with a result-sized one, for SECONDS; prints the bytes
 * moved per second ("lan_bytes_per_s N").  Run with mpirun -np 2.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define USAGE "usage: mpirun -np 2 mw_lanprobe TASK_BYTES RESULT_BYTES SECONDS\n"

enum { TAG_TASK, TAG_STOP };

int main(int argc, char **argv)
{
	long task = 0, result = 0;
	double secs = 0, t0, t;
	long n = 0;
	int rank, size;
	char *buf;

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
	if (argc != 4 || size != 2 || (task = atol(argv[1])) < 1 || (result = atol(argv[2])) < 1 ||
	    (secs = atof(argv[3])) <= 0) {
		if (rank == 0)
			fputs(USAGE, stderr);
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	buf = calloc(1, (size_t)(task > result ? task : result));
	if (buf == NULL) {
		fprintf(stderr, "mw_lanprobe: out of memory for %ld bytes\n", task > result ? task : result);
		MPI_Abort(MPI_COMM_WORLD, 1);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = t = MPI_Wtime();
	if (rank == 0) {
		for (; t - t0 < secs; n++, t = MPI_Wtime()) {
			MPI_Send(buf, (int)task, MPI_BYTE, 1, TAG_TASK, MPI_COMM_WORLD);
			MPI_Recv(buf, (int)result, MPI_BYTE, 1, TAG_TASK, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		}
		MPI_Send(buf, 0, MPI_BYTE, 1, TAG_STOP, MPI_COMM_WORLD);
		printf("lan_bytes_per_s %.0f\n", (double)n * (double)(task + result) / (t - t0));
	} else {
		MPI_Status st;

		for (;;) {
			MPI_Recv(buf, (int)task, MPI_BYTE, 0, MPI_ANY_TAG, MPI_COMM_WORLD, &st);
			if (st.MPI_TAG == TAG_STOP)
				break;
			MPI_Send(buf, (int)result, MPI_BYTE, 0, TAG_TASK, MPI_COMM_WORLD);
		}
	}
	free(buf);
	MPI_Finalize();
	return 0;
}
