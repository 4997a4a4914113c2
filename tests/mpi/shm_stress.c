/* shm_stress.c - thousands of back-to-back node-aware collectives with
 * changing counts, checked against the native collective (PMPI_*) on the
 * same input: no stale flag, no reuse race on the node segment.
 *
 * Each iteration picks a collective (allreduce node=rs and node=tree,
 * reduce_scatter_block, allgather, all-to-all, reduce and bcast with a
 * moving root) and a count from a sequence that grows and shrinks (0 to
 * 3000 ints, so the segment is regrown while plans of other sizes stay
 * cached), with inputs that depend on the iteration, so data left over
 * from an earlier call cannot pass. No barrier between calls: fast ranks
 * run ahead into the next collective while slow ones still read the
 * previous one's segment. Every 50th iteration a persistent hier
 * allreduce (own segment) is started and completed in between.
 * COLLC_TEST_ITERS (default 2000) sets the length. Run it with
 * COLLC_NODE_SIZE. COLLC_TEST_SHM=1 (all ranks on one node): the blocking
 * calls use shm (messages through the segment; allreduce also shm:cyclic)
 * instead of hier; COLLC_TEST_SHM=2: the same with every message read in
 * place (shm:direct=0). Exit status 1 on any mismatch. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collc.h"

static int rank, p, fails;
static const char *fam = "hier", *ar2 = "hier:node=tree"; /* (COLLC_TEST_SHM: shm) */

static void check(const int *got, const int *want, int n, int it, const char *what) {
  for (int i = 0; i < n; i++)
    if (got[i] != want[i]) {
      if (fails++ < 10)
        fprintf(stderr, "FAIL rank %d iteration %d %s: [%d] = %d, native %d\n", rank, it, what,
                i, got[i], want[i]);
      return;
    }
}

/* One iteration: collective it % 7 with count n (ints per rank/block). */
static void one(int it, int n, int *in, int *out, int *ref) {
  int kind = it % 7, root = (it / 7) % p, m = kind == 2 || kind == 4 || kind == 3 ? n * p : n;
  for (int i = 0; i < m; i++) in[i] = (it * 131 + rank * 7 + i) % 1000;
  memset(out, 0xff, (size_t)m * sizeof *out), memset(ref, 0xfe, (size_t)m * sizeof *ref);
  switch (kind) {
  case 0:
  case 1:
    collc_allreduce_algo(kind ? ar2 : fam, in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    PMPI_Allreduce(in, ref, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return check(out, ref, n, it, kind ? "allreduce tree" : "allreduce rs");
  case 2:
    collc_reduce_scatter_block_algo(fam, in, out, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    PMPI_Reduce_scatter_block(in, ref, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
    return check(out, ref, n, it, "reduce_scatter_block");
  case 3:
    collc_allgather_algo(fam, in, n, MPI_INT, out, n, MPI_INT, MPI_COMM_WORLD);
    PMPI_Allgather(in, n, MPI_INT, ref, n, MPI_INT, MPI_COMM_WORLD);
    return check(out, ref, n * p, it, "allgather");
  case 4:
    collc_alltoall_algo(fam, in, n, MPI_INT, out, n, MPI_INT, MPI_COMM_WORLD);
    PMPI_Alltoall(in, n, MPI_INT, ref, n, MPI_INT, MPI_COMM_WORLD);
    return check(out, ref, n * p, it, "alltoall");
  case 5:
    collc_reduce_algo(fam, in, out, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    PMPI_Reduce(in, ref, n, MPI_INT, MPI_SUM, root, MPI_COMM_WORLD);
    if (rank == root) check(out, ref, n, it, "reduce");
    return;
  default:
    memcpy(out, in, (size_t)n * sizeof *in), memcpy(ref, in, (size_t)n * sizeof *in);
    collc_bcast_algo(fam, out, n, MPI_INT, root, MPI_COMM_WORLD);
    PMPI_Bcast(ref, n, MPI_INT, root, MPI_COMM_WORLD);
    return check(out, ref, n, it, "bcast");
  }
}

/* A persistent hier allreduce of n ints, started and completed. */
static void persistent(MPI_Request *req, int *in, int *out, int *ref, int n, int it) {
  for (int i = 0; i < n; i++) in[i] = it + rank * 3 + i;
  MPI_Start(req);
  MPI_Wait(req, MPI_STATUS_IGNORE);
  PMPI_Allreduce(in, ref, n, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  check(out, ref, n, it, "persistent allreduce");
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  const char *e = getenv("COLLC_TEST_ITERS");
  int iters = e ? atoi(e) : 2000, cap = 3000 * p + 64, pn = 777;
  if ((e = getenv("COLLC_TEST_SHM")) && atoi(e) == 1) fam = "shm", ar2 = "shm:cyclic";
  if (e && atoi(e) == 2) fam = "shm:direct=0", ar2 = "shm:direct=0:cyclic";
  int *in = malloc(cap * sizeof *in), *out = malloc(cap * sizeof *out),
      *ref = malloc(cap * sizeof *ref), *pin = malloc(pn * sizeof *pin),
      *pout = malloc(pn * sizeof *pout);
  MPI_Info info;
  MPI_Request req;
  MPI_Info_create(&info);
  MPI_Info_set(info, "collc_algorithm", "hier");
  MPI_Allreduce_init(pin, pout, pn, MPI_INT, MPI_SUM, MPI_COMM_WORLD, info, &req);
  for (int it = 0; it < iters; it++) {
    int n = (it * 37) % 3001; /* grows and shrinks */
    if (it % 11 == 0) n = it % 5; /* tiny, and 0 */
    one(it, n, in, out, ref);
    if (it % 50 == 49) persistent(&req, pin, pout, ref, pn, it);
  }
  MPI_Request_free(&req);
  MPI_Info_free(&info);
  int all = 0;
  MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("shm_stress np=%d: %s (%d iterations, %d mismatches)\n", p, all ? "FAIL" : "PASS",
           iters, all);
  free(in), free(out), free(ref), free(pin), free(pout);
  MPI_Finalize();
  return all ? 1 : 0;
}
