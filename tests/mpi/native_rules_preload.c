/* native_rules_preload.c - an unmodified program (no collc) for
 * tests/native_export.sh: the MPI library's own selection, as a rules file
 * exported by collc-tune may steer it, must still compute right.
 *
 *   native_rules_preload [COUNT]
 *
 * Calls allreduce, reduce, bcast, allgather, alltoall, reduce_scatter_block
 * and barrier on integers (COUNT per vector or block, default 4096) and
 * checks each against the exact result; then an allreduce of COUNT doubles
 * whose sums round differently in different orders (each element 1e16, -1e16
 * and a small integer among the ranks), so the algorithm that ran shows in
 * the result's bits: rank 0 prints "bits <64-bit hash>" and "ok" or the first
 * wrong collective. Exit status 0 if all were right. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

/* The first wrong element's index of y[n] against want(i), -1 if none. */
static long wrong(const long *y, long n, long (*want)(long, int, int), int r, int p) {
  for (long i = 0; i < n; i++)
    if (y[i] != want(i, r, p)) return i;
  return -1;
}
static long sum_of(long i, int r, int p) { return (void)r, (long)p * i + (long)p * (p - 1) / 2; }
static long bcast_of(long i, int r, int p) { return (void)r, (void)p, 7 * i + 1; }
static long gather_of(long i, int r, int p) { return (void)r, (void)p, i; }
static long a2a_of(long i, int r, int p) { return (void)p, (i % 1000000) * 1000 + r; }

int main(int argc, char **argv) {
  int r, p, bad = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &r);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  long n = argc > 1 ? atol(argv[1]) : 4096, np = n * p;
  long *x = malloc(sizeof(long) * np), *y = malloc(sizeof(long) * np);
  double *d = malloc(sizeof(double) * n), *e = malloc(sizeof(double) * n);
  const char *what = NULL;
  if (n < 1 || !x || !y || !d || !e) return 2;
  for (long i = 0; i < np; i++) x[i] = i % n + r;
  MPI_Allreduce(x, y, (int)n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  if (!what && wrong(y, n, sum_of, r, p) >= 0) what = "allreduce";
  MPI_Reduce(x, y, (int)n, MPI_LONG, MPI_SUM, 0, MPI_COMM_WORLD);
  if (!what && r == 0 && wrong(y, n, sum_of, r, p) >= 0) what = "reduce";
  for (long i = 0; i < n; i++) y[i] = r ? 0 : 7 * i + 1;
  MPI_Bcast(y, (int)n, MPI_LONG, 0, MPI_COMM_WORLD);
  if (!what && wrong(y, n, bcast_of, r, p) >= 0) what = "bcast";
  for (long i = 0; i < n; i++) x[i] = r * n + i;
  MPI_Allgather(x, (int)n, MPI_LONG, y, (int)n, MPI_LONG, MPI_COMM_WORLD);
  if (!what && wrong(y, np, gather_of, r, p) >= 0) what = "allgather";
  for (long i = 0; i < np; i++) x[i] = (r * n + i % n) * 1000 + i / n; /* block q to rank q */
  MPI_Alltoall(x, (int)n, MPI_LONG, y, (int)n, MPI_LONG, MPI_COMM_WORLD);
  for (long i = 0; i < np && !what; i++) /* block q from rank q: (q n + j) 1000 + r */
    if (y[i] != a2a_of(i, r, p)) what = "alltoall";
  for (long i = 0; i < np; i++) x[i] = i + r;
  MPI_Reduce_scatter_block(x, y, (int)n, MPI_LONG, MPI_SUM, MPI_COMM_WORLD);
  for (long i = 0; i < n && !what; i++)
    if (y[i] != (long)p * (r * n + i) + (long)p * (p - 1) / 2) what = "reduce_scatter_block";
  MPI_Barrier(MPI_COMM_WORLD);
  for (long i = 0; i < n; i++) {
    int role = (int)((r + i) % 3);
    d[i] = role == 0 ? 1e16 : role == 1 ? 1.0 + (double)(i % 7) : -1e16;
  }
  MPI_Allreduce(d, e, (int)n, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
  unsigned long long h = 1469598103934665603ULL;
  for (long i = 0; i < n; i++) {
    unsigned long long b;
    memcpy(&b, &e[i], sizeof b);
    h = (h ^ b) * 1099511628211ULL;
  }
  bad = what != NULL;
  MPI_Allreduce(MPI_IN_PLACE, &bad, 1, MPI_INT, MPI_MAX, MPI_COMM_WORLD);
  if (what) printf("rank %d: %s WRONG\n", r, what);
  if (r == 0) printf("bits %016llx\n%s\n", h, bad ? "WRONG" : "ok");
  free(x), free(y), free(d), free(e);
  MPI_Finalize();
  return bad;
}
