/* alltoall_preload.c - an "unmodified program": built without collc (no
 * collc header, not linked with it), it calls MPI_Alltoall, which
 * LD_PRELOAD=libcollc.so intercepts, and compares every result with
 * PMPI_Alltoall on the same input (testlib.h needs only <mpi.h>).
 *
 * Counts 0, 1, 3, 17, 100, every datatype case of testlib.h, in place and
 * not, on MPI_COMM_WORLD and on a duplicate, each twice (a cached plan is
 * reused). tests/run.sh runs it with COLLC_STATS=1 and a forced
 * COLLC_ALLTOALL and checks the "collc-stats: alltoall <algo> calls=N
 * bytes=M" line on stderr. Exits nonzero on any mismatch.
 */
#include "testlib.h"

/* MPI_Alltoall (whatever serves it) as a tl_a2a_fn. */
static int via_mpi(const char *algo, const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                   MPI_Datatype rt, MPI_Comm comm) {
  (void)algo;
  return MPI_Alltoall(sb, sc, st, rb, rc, rt, comm);
}

/* Every case through MPI_Alltoall; exit status 1 on any mismatch. */
int main(int argc, char **argv) {
  static const int counts[] = {0, 1, 3, 17, 100};
  tl_ctx ctx;
  tl_typeset S;
  MPI_Comm dup;
  MPI_Init(&argc, &argv);
  tl_init(&ctx, "mpi_alltoall_preload");
  double t0 = tl_now();
  tl_types_create(&ctx, &S);
  MPI_Comm_dup(MPI_COMM_WORLD, &dup);
  MPI_Comm_set_errhandler(dup, MPI_ERRORS_RETURN);
  tl_target t[2] = {{via_mpi, "MPI_Alltoall", MPI_COMM_WORLD, "WORLD"},
                    {via_mpi, "MPI_Alltoall", dup, "dup of WORLD"}};
  for (int k = 0; k < 2; k++)
    for (int c = 0; c < 5; c++)
      for (int i = 0; i < S.n; i++)
        for (int rep = 0; rep < 2; rep++) {
          tl_check(&ctx, &t[k], &S.t[i], counts[c], 0, rep + i);
          if (S.inplace[i]) tl_check(&ctx, &t[k], &S.t[i], counts[c], 1, rep + i + 1);
        }
  MPI_Comm_free(&dup);
  tl_types_free(&S);
  int status = tl_finish(&ctx, t0);
  MPI_Finalize();
  return status;
}
