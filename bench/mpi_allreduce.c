/* The peer of dist's BenchmarkAllReduce: a bare MPI_Allreduce (in place,
 * float32 sum) of the same bytes, timed the same way.
 *
 *   mpicc -O2 -o /tmp/mpi_allreduce bench/mpi_allreduce.c
 *   mpirun -np 2 /tmp/mpi_allreduce 200     # iterations per size
 *
 * It prints one line per size in go test's benchmark format, so that the
 * two can be compared (benchstat, or by eye).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int main(int argc, char **argv) {
	MPI_Init(&argc, &argv);
	int rank;
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	int iters = argc > 1 ? atoi(argv[1]) : 200;
	int sizes[] = {4 << 10, 1 << 20, 809856 * 4, 16 << 20}; /* 809856 float32: the GPT's gradients */
	for (int s = 0; s < 4; s++) {
		int n = sizes[s] / 4;
		float *x = calloc(n, sizeof(float));
		MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD); /* warm up */
		MPI_Barrier(MPI_COMM_WORLD);
		double t0 = MPI_Wtime();
		for (int i = 0; i < iters; i++)
			MPI_Allreduce(MPI_IN_PLACE, x, n, MPI_FLOAT, MPI_SUM, MPI_COMM_WORLD);
		double dt = MPI_Wtime() - t0;
		if (rank == 0)
			printf("BenchmarkAllReduceC/%d\t%d\t%.0f ns/op\t%.2f MB/s\n", sizes[s], iters, dt / iters * 1e9, sizes[s] / (dt / iters) / 1e6);
		free(x);
	}
	MPI_Finalize();
	return 0;
}
