/* bench/call_loop.c - COLL N: N back-to-back calls of one collective on one
 * MPI_DOUBLE (bench/dispatch-instr.sh counts its instructions); the counted
 * collectives at p = 1 (counts {1}, displacements {0}). Only timed()'s
 * instructions count (callgrind --toggle-collect=timed): after 100 calls
 * of warm-up, so the first call's plan or memo entry is not in them. */
#include <mpi.h>
#include <stdlib.h>
#include <string.h>

static double a[4] = {1, 2, 3, 4}, b[4];
static int one[1] = {1}, zero[1] = {0};

/* One call of collective c. */
static void __attribute__((noinline)) call(const char *c) {
  MPI_Request r;
  if (!strcmp(c, "bcast")) MPI_Bcast(a, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  else if (!strcmp(c, "allreduce")) MPI_Allreduce(a, b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  else if (!strcmp(c, "reduce")) MPI_Reduce(a, b, 1, MPI_DOUBLE, MPI_SUM, 0, MPI_COMM_WORLD);
  else if (!strcmp(c, "allgather")) MPI_Allgather(a, 1, MPI_DOUBLE, b, 1, MPI_DOUBLE, MPI_COMM_WORLD);
  else if (!strcmp(c, "alltoall")) MPI_Alltoall(a, 1, MPI_DOUBLE, b, 1, MPI_DOUBLE, MPI_COMM_WORLD);
  else if (!strcmp(c, "rsb")) MPI_Reduce_scatter_block(a, b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  else if (!strcmp(c, "barrier")) MPI_Barrier(MPI_COMM_WORLD);
  else if (!strcmp(c, "allgatherv")) MPI_Allgatherv(a, 1, MPI_DOUBLE, b, one, zero, MPI_DOUBLE, MPI_COMM_WORLD);
  else if (!strcmp(c, "reduce_scatter")) MPI_Reduce_scatter(a, b, one, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  else if (!strcmp(c, "alltoallv")) MPI_Alltoallv(a, one, zero, MPI_DOUBLE, b, one, zero, MPI_DOUBLE, MPI_COMM_WORLD);
  else if (!strcmp(c, "iallgatherv")) { MPI_Iallgatherv(a, 1, MPI_DOUBLE, b, one, zero, MPI_DOUBLE, MPI_COMM_WORLD, &r); MPI_Wait(&r, MPI_STATUS_IGNORE); }
  else if (!strcmp(c, "ireduce_scatter")) { MPI_Ireduce_scatter(a, b, one, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r); MPI_Wait(&r, MPI_STATUS_IGNORE); }
  else if (!strcmp(c, "ialltoallv")) { MPI_Ialltoallv(a, one, zero, MPI_DOUBLE, b, one, zero, MPI_DOUBLE, MPI_COMM_WORLD, &r); MPI_Wait(&r, MPI_STATUS_IGNORE); }
  else if (!strcmp(c, "gather")) MPI_Gather(a, 1, MPI_DOUBLE, b, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  else if (!strcmp(c, "scatter")) MPI_Scatter(a, 1, MPI_DOUBLE, b, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  else if (!strcmp(c, "gatherv")) MPI_Gatherv(a, 1, MPI_DOUBLE, b, one, zero, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  else if (!strcmp(c, "scatterv")) MPI_Scatterv(a, one, zero, MPI_DOUBLE, b, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD);
  else if (!strcmp(c, "iallreduce")) { MPI_Iallreduce(a, b, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, &r); MPI_Wait(&r, MPI_STATUS_IGNORE); }
  else if (!strcmp(c, "ibcast")) { MPI_Ibcast(a, 1, MPI_DOUBLE, 0, MPI_COMM_WORLD, &r); MPI_Wait(&r, MPI_STATUS_IGNORE); }
}

/* n calls of c: what is counted. */
void __attribute__((noinline)) timed(const char *c, long n) {
  for (long i = 0; i < n; i++) call(c);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  for (int i = 0; i < 100; i++) call(argv[1]);
  timed(argv[1], atol(argv[2]));
  MPI_Finalize();
  return 0;
}
