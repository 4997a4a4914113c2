/* nonblocking_preload.c - an "unmodified program" (no collc at build time)
 * using MPI's nonblocking collectives: LD_PRELOAD=libcollc.so serves them.
 *
 * Each round computes the references, then starts all six (MPI_Iallreduce,
 * Ireduce_scatter_block, Iallgather, Ireduce, Ibcast, Ialltoall; the
 * allreduce twice, once in place) on MPI_COMM_WORLD with their own buffers,
 * then completes them with
 * one MPI_Waitall (rounds 0, 2, 4) or MPI_Wait in reverse order (1, 3), and
 * compares each result byte for byte with the blocking PMPI_ collective on
 * the same input. Counts 1000 ints per vector or block, and 7, 5 rounds with
 * new values. Then NEVICT MPI_Iallreduce of 1..NEVICT ints outstanding at
 * once (more call keys than the call cache has slots: entries are replaced
 * while requests that run their plans are outstanding), one MPI_Waitall.
 * tests/run.sh runs it with COLLC_STATS=1 and a forced COLLC_ALLREDUCE and
 * checks the "collc-stats: iallreduce <algo>" line (5 + 5 + NEVICT calls).
 * Exits nonzero on any mismatch or handle left active.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

enum { NCALLS = 7, NEVICT = 100 };

/* One call's buffers: input, result under test, reference. */
typedef struct {
  int *in, *out, *ref;
  size_t in_n, out_n;
} bufs;

/* Allocate b for in_n input and out_n result ints; input from (rank, seed,
 * position), results -1. */
static void bufs_make(bufs *b, size_t in_n, size_t out_n, int rank, int seed) {
  b->in_n = in_n, b->out_n = out_n;
  b->in = malloc((in_n ? in_n : 1) * sizeof(int));
  b->out = malloc(out_n * sizeof(int)), b->ref = malloc(out_n * sizeof(int));
  if (!b->in || !b->out || !b->ref) MPI_Abort(MPI_COMM_WORLD, 2);
  for (size_t i = 0; i < in_n; i++) b->in[i] = (rank * 7919 + seed * 131 + (int)i * 17) & 0xfff;
  for (size_t i = 0; i < out_n; i++) b->out[i] = b->ref[i] = -1;
}

/* The reference of call k (PMPI_, out of place) into b->ref. */
static void reference(int k, int n, int p, bufs *b) {
  MPI_Comm c = MPI_COMM_WORLD;
  switch (k) {
  case 1: PMPI_Reduce_scatter_block(b->in, b->ref, n, MPI_INT, MPI_SUM, c); break;
  case 2: PMPI_Allgather(b->in, n, MPI_INT, b->ref, n, MPI_INT, c); break;
  case 3: PMPI_Reduce(b->in, b->ref, n, MPI_INT, MPI_MAX, p - 1, c); break;
  case 4: PMPI_Bcast(b->ref, n, MPI_INT, 0, c); break;
  case 5: PMPI_Alltoall(b->in, n, MPI_INT, b->ref, n, MPI_INT, c); break;
  default: PMPI_Allreduce(b->in, b->ref, n, MPI_INT, MPI_SUM, c); /* 0, 6 */
  }
}

/* Start call k into *r (6: the allreduce in place). */
static void start(int k, int n, int p, bufs *b, MPI_Request *r) {
  MPI_Comm c = MPI_COMM_WORLD;
  switch (k) {
  case 0: MPI_Iallreduce(b->in, b->out, n, MPI_INT, MPI_SUM, c, r); break;
  case 1: MPI_Ireduce_scatter_block(b->in, b->out, n, MPI_INT, MPI_SUM, c, r); break;
  case 2: MPI_Iallgather(b->in, n, MPI_INT, b->out, n, MPI_INT, c, r); break;
  case 3: MPI_Ireduce(b->in, b->out, n, MPI_INT, MPI_MAX, p - 1, c, r); break;
  case 4: MPI_Ibcast(b->out, n, MPI_INT, 0, c, r); break;
  case 5: MPI_Ialltoall(b->in, n, MPI_INT, b->out, n, MPI_INT, c, r); break;
  default: MPI_Iallreduce(MPI_IN_PLACE, b->out, n, MPI_INT, MPI_SUM, c, r);
  }
}

/* Make call k's buffers for n elements per vector or block on p ranks and
 * its reference (bcast: the root's data in out and ref; in place: the input
 * in out). */
static void prepare(int k, int n, int p, int rank, int seed, bufs *b) {
  static const int blocks[NCALLS] = {0, 1, 0, 0, 0, 1, 0}, gathers[NCALLS] = {0, 0, 1, 0, 0, 1, 0};
  size_t in_n = (size_t)n * (blocks[k] ? (size_t)p : 1);
  bufs_make(b, in_n, (size_t)n * (gathers[k] ? (size_t)p : 1), rank, seed + k);
  if ((k == 4 && rank == 0) || k == 6) {
    memcpy(b->out, b->in, in_n * sizeof(int));
    memcpy(b->ref, b->in, in_n * sizeof(int));
  }
  reference(k, n, p, b);
}

/* NEVICT allreduces of 1..NEVICT ints outstanding at once, against
 * PMPI_Allreduce; the number of mismatches (results or handles). */
static int evict(int rank) {
  static bufs b[NEVICT];
  static MPI_Request r[NEVICT];
  static MPI_Status st[NEVICT]; /* (MPICH's headers reject MPI_STATUSES_IGNORE here) */
  int bad = 0;
  for (int i = 0; i < NEVICT; i++) {
    bufs_make(&b[i], (size_t)i + 1, (size_t)i + 1, rank, 50 + i);
    PMPI_Allreduce(b[i].in, b[i].ref, i + 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  }
  for (int i = 0; i < NEVICT; i++)
    MPI_Iallreduce(b[i].in, b[i].out, i + 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &r[i]);
  MPI_Waitall(NEVICT, r, st);
  for (int i = 0; i < NEVICT; i++) {
    if (memcmp(b[i].out, b[i].ref, (size_t)(i + 1) * sizeof(int)) || r[i] != MPI_REQUEST_NULL)
      printf("FAIL nonblocking_preload rank %d: %d outstanding, Iallreduce n=%d wrong\n", rank,
             NEVICT, i + 1), bad++;
    free(b[i].in), free(b[i].out), free(b[i].ref);
  }
  return bad;
}

/* Every round; exit status 1 on any mismatch (on any rank). */
int main(int argc, char **argv) {
  static const char *const names[NCALLS] = {"Iallreduce", "Ireduce_scatter_block",
                                            "Iallgather", "Ireduce", "Ibcast", "Ialltoall",
                                            "Iallreduce in place"};
  int rank, p, bad = 0, all = 0;
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &p);
  for (int round = 0; round < 5; round++) {
    int n = round % 2 ? 7 : 1000;
    bufs b[NCALLS];
    MPI_Request r[NCALLS];
    MPI_Status st[NCALLS];
    for (int k = 0; k < NCALLS; k++) prepare(k, n, p, rank, round, &b[k]);
    for (int k = 0; k < NCALLS; k++) start(k, n, p, &b[k], &r[k]);
    if (round % 2 == 0) MPI_Waitall(NCALLS, r, st);
    else for (int k = NCALLS - 1; k >= 0; k--) MPI_Wait(&r[k], MPI_STATUS_IGNORE);
    for (int k = 0; k < NCALLS; k++) {
      int wrong = (k != 3 || rank == p - 1) && memcmp(b[k].out, b[k].ref, b[k].out_n * sizeof(int));
      if (wrong || r[k] != MPI_REQUEST_NULL)
        printf("FAIL nonblocking_preload rank %d round %d: %s n=%d: %s\n", rank, round,
               names[k], n, wrong ? "result differs from PMPI_" : "handle not MPI_REQUEST_NULL"),
            bad++;
      free(b[k].in), free(b[k].out), free(b[k].ref);
    }
  }
  bad += evict(rank);
  PMPI_Allreduce(&bad, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("nonblocking_preload np=%d: %s (%d failures)\n", p, all ? "FAIL" : "PASS", all);
  MPI_Finalize();
  return all != 0;
}
