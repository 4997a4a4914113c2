/* bench/bcast_barrier.c - OSU's bcast loop timed whole: 5000 iterations of
 * an 8-byte MPI_Bcast from rank 0 followed by MPI_Barrier, the best of 5
 * repetitions, microseconds per iteration printed by rank 0. OSU times the
 * bcast alone, so a barrier whose ranks leave it at different moments
 * moves its cost into the bcast's figure; this loop counts both. */
#include <mpi.h>
#include <stdio.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank;
  char buf[8] = {0};
  double best = 1e9;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  for (int rep = 0; rep < 5; rep++) {
    MPI_Barrier(MPI_COMM_WORLD);
    double t = MPI_Wtime();
    for (int i = 0; i < 5000; i++) {
      MPI_Bcast(buf, 8, MPI_CHAR, 0, MPI_COMM_WORLD);
      MPI_Barrier(MPI_COMM_WORLD);
    }
    t = (MPI_Wtime() - t) / 5000;
    if (t < best) best = t;
  }
  if (rank == 0) printf("%.2f\n", best * 1e6);
  MPI_Finalize();
  return 0;
}
