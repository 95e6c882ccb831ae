/* mpi_loop - the reference for the dispatch-rate benchmark: a minimal
 * hand-written master/worker loop of blocking MPI_Send/MPI_Recv with one
 * worker, 8-byte tasks and results.  Prints "tasks/s N". */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 1000000;
	int rank, size;
	double t0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	if (size != 2) {
		if (rank == 0)
			fprintf(stderr, "mpi_loop: run with mpirun -np 2\n");
		MPI_Abort(MPI_COMM_WORLD, 2);
	}
	MPI_Barrier(MPI_COMM_WORLD);
	t0 = MPI_Wtime();
	for (long i = 0; i < n; i++) {
		long task = i, res;

		if (rank == 0) {
			MPI_Send(&task, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD);
			MPI_Recv(&res, 1, MPI_LONG, 1, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			if (res != i) {
				fprintf(stderr, "mpi_loop: task %ld came back as %ld\n", i, res);
				MPI_Abort(MPI_COMM_WORLD, 1);
			}
		} else {
			MPI_Recv(&task, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			MPI_Send(&task, 1, MPI_LONG, 0, 0, MPI_COMM_WORLD);
		}
	}
	if (rank == 0)
		printf("tasks/s %.0f\n", n / (MPI_Wtime() - t0));
	MPI_Finalize();
	return 0;
}
