/* bench/alltoallv_persist.c - BYTES ITERS: MPI_Alltoallv of BYTES bytes
 * (MPI_CHAR) to every rank, back to back (no barrier between calls, as an
 * application's loop), natively (blocking) and as persistent requests of
 * MPI_Alltoallv_init with info collc_algorithm = native, hier, linear,
 * torus:d=2 (each started ITERS times after ITERS/10 warm-up starts). Prints, three
 * times in turn, the slowest rank's mean per call in µs. Link against
 * libcollc (Open MPI 4.1 itself has no MPI_Alltoallv_init):
 *   mpicc.openmpi -O2 bench/alltoallv_persist.c -o /tmp/a2avp -Lbuild-openmpi -lcollc \
 *     -Wl,-rpath,$PWD/build-openmpi && mpirun.openmpi -np 2 /tmp/a2avp 1024 5000 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>

int MPI_Alltoallv_init(const void *, const int[], const int[], MPI_Datatype, void *, const int[],
                       const int[], MPI_Datatype, MPI_Comm, MPI_Info, MPI_Request *);

/* ITERS calls: of q if it is a request, else blocking MPI_Alltoallv. */
static void run(MPI_Request *q, int iters, char *sb, char *rb, const int *c, const int *d) {
  for (int i = 0; i < iters; i++)
    if (q) MPI_Start(q), MPI_Wait(q, MPI_STATUS_IGNORE);
    else MPI_Alltoallv(sb, c, d, MPI_CHAR, rb, c, d, MPI_CHAR, MPI_COMM_WORLD);
}

int main(int argc, char **argv) {
  static const char *const variants[] = {"native-blocking", "native", "hier", "linear", "torus:d=2"};
  enum { NV = sizeof variants / sizeof variants[0] };
  int p, r, n = argc > 1 ? atoi(argv[1]) : 1024, iters = argc > 2 ? atoi(argv[2]) : 5000;
  MPI_Init(&argc, &argv);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  int *c = malloc(2 * (size_t)p * sizeof *c), *d = c + p;
  char *sb = calloc((size_t)n * p + 1, 1), *rb = calloc((size_t)n * p + 1, 1);
  for (int q = 0; q < p; q++) c[q] = n, d[q] = q * n;
  for (int rep = 0; rep < 3; rep++)
    for (int a = 0; a < NV; a++) {
      MPI_Request q, *qp = a ? &q : NULL;
      MPI_Info info = MPI_INFO_NULL;
      double t, most;
      if (a) {
        MPI_Info_create(&info), MPI_Info_set(info, "collc_algorithm", variants[a]);
        MPI_Alltoallv_init(sb, c, d, MPI_CHAR, rb, c, d, MPI_CHAR, MPI_COMM_WORLD, info, &q);
      }
      run(qp, iters / 10, sb, rb, c, d);
      MPI_Barrier(MPI_COMM_WORLD);
      t = MPI_Wtime();
      run(qp, iters, sb, rb, c, d);
      t = (MPI_Wtime() - t) / iters * 1e6;
      MPI_Reduce(&t, &most, 1, MPI_DOUBLE, MPI_MAX, 0, MPI_COMM_WORLD);
      if (r == 0) printf("%d B %-16s %8.2f us\n", n, variants[a], most);
      if (a) MPI_Request_free(&q), MPI_Info_free(&info);
    }
  free(c), free(sb), free(rb);
  MPI_Finalize();
  return 0;
}
