/* bench/call_loop.c - COLL N: N back-to-back calls of one collective on one
 * MPI_DOUBLE (bench/dispatch-instr.sh counts its instructions). */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>
int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  const char *c = argv[1];
  long n = atol(argv[2]);
  double a[4] = {1, 2, 3, 4}, b[4];
  MPI_Request r;
  for (long i = 0; i < n; i++) {
    if (!strcmp(c, "bcast")) MPI_Bcast(a, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
    else if (!strcmp(c, "allreduce")) MPI_Allreduce(a, b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else if (!strcmp(c, "reduce")) MPI_Reduce(a, b, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
    else if (!strcmp(c, "allgather")) MPI_Allgather(a, 1, MPI_DOUBLE, b, 1, MPI_DOUBLE, MPI_COMM_WORLD);
    else if (!strcmp(c, "alltoall")) MPI_Alltoall(a, 1, MPI_DOUBLE, b, 1, MPI_DOUBLE, MPI_COMM_WORLD);
    else if (!strcmp(c, "rsb")) MPI_Reduce_scatter_block(a, b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    else if (!strcmp(c, "barrier")) MPI_Barrier(MPI_COMM_WORLD);
    else if (!strcmp(c, "iallreduce")) { MPI_Iallreduce(a, b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r); MPI_Wait(&r, MPI_STATUS_IGNORE); }
    else if (!strcmp(c, "ibcast")) { MPI_Ibcast(a, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &r); MPI_Wait(&r, MPI_STATUS_IGNORE); }
  }
  MPI_Finalize();
  return 0;
}
