/* persistent_preload.c - an unmodified MPI-4 program (no collc at build
 * time) using persistent collectives: on Open MPI 4.1 through the MPIX_
 * names of its pcollreq extension, on MPI 4 libraries the MPI_ names.
 * LD_PRELOAD=libcollc.so serves them; the result is compared with the
 * native blocking call (PMPI_*, never interposed) for 5 starts with new
 * input each time, completed with MPI_Wait and MPI_Waitall. Allgatherv and
 * reduce_scatter with per-rank counts (rank q: q % 3 * 5 + 1 ints) too. */
#include <mpi.h>
#include <stdio.h>
#include <string.h>
#if MPI_VERSION < 4 && defined(OPEN_MPI)
#include <mpi-ext.h>
#define ALLREDUCE_INIT MPIX_Allreduce_init
#define ALLTOALL_INIT MPIX_Alltoall_init
#define ALLGATHERV_INIT MPIX_Allgatherv_init
#define REDUCE_SCATTER_INIT MPIX_Reduce_scatter_init
#else
#define ALLREDUCE_INIT MPI_Allreduce_init
#define ALLTOALL_INIT MPI_Alltoall_init
#define ALLGATHERV_INIT MPI_Allgatherv_init
#define REDUCE_SCATTER_INIT MPI_Reduce_scatter_init
#endif

enum { N = 1000 };

int main(int argc, char **argv) {
  static double in[N], out[N], ref[N];
  static int a[N], b[N], bref[N], vin[N], vout[N], vref[N], rs[N], rsref[N];
  int rank, p, bad = 0, all = 0, vc[64], vd[64], total = 0;
  MPI_Request r[4];
  MPI_Status st[4];
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  int n = N / p;
  ALLREDUCE_INIT(in, out, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[0]);
  ALLTOALL_INIT(a, n, MPI_INT, b, n, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL, &r[1]);
  for (int q = 0; q < p && q < 64; q++) vc[q] = q % 3 * 5 + 1, vd[q] = total, total += vc[q];
  if (p > 64 || total > N) MPI_Abort(MPI_COMM_WORLD, 2);
  ALLGATHERV_INIT(vin, vc[rank], MPI_INT, vout, vc, vd, MPI_INT, MPI_COMM_WORLD, MPI_INFO_NULL,
                  &r[2]);
  REDUCE_SCATTER_INIT(vin, rs, vc, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &r[3]);
  for (int it = 0; it < 5; it++) {
    for (int i = 0; i < N; i++) in[i] = (rank + 1) * 0.25 * (i % 7) + it, a[i] = rank * N + i + it;
    PMPI_Allreduce(in, ref, N, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
    PMPI_Alltoall(a, n, MPI_INT, bref, n, MPI_INT, MPI_COMM_WORLD);
    for (int i = 0; i < N; i++) vin[i] = rank * 7919 + i * 31 + it;
    PMPI_Allgatherv(vin, vc[rank], MPI_INT, vref, vc, vd, MPI_INT, MPI_COMM_WORLD);
    PMPI_Reduce_scatter(vin, rsref, vc, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    MPI_Startall(4, r);
    if (it % 2) MPI_Waitall(4, r, st);
    else
      for (int i = 3; i >= 0; i--) MPI_Wait(&r[i], MPI_STATUS_IGNORE);
    bad += memcmp(out, ref, sizeof out) != 0;
    bad += memcmp(b, bref, sizeof(int) * (size_t)(n * p)) != 0;
    bad += memcmp(vout, vref, sizeof(int) * (size_t)total) != 0;
    bad += memcmp(rs, rsref, sizeof(int) * (size_t)vc[rank]) != 0;
  }
  for (int i = 0; i < 4; i++) MPI_Request_free(&r[i]);
  PMPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0) printf("persistent_preload np=%d: %s (%d failures)\n", p, all ? "FAIL" : "PASS", all);
  MPI_Finalize();
  return all != 0;
}
