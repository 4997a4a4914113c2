/* bench_overhead.h - collc-bench --overhead: what collc's dispatch adds to
 * one call. Part of tools/collc-bench.c (static functions; not a library
 * header).
 *
 *   mpirun -np 1 collc-bench --overhead [COUNT [CALLS]]
 *
 * For every collective, blocking and nonblocking (I-call + MPI_Wait), it
 * times CALLS back-to-back calls of MPI_<Coll> (collc's entry point: this
 * tool links the library) and of PMPI_<Coll> (the MPI library's) on the
 * same buffers, COUNT MPI_DOUBLE elements (MPI_SUM, root 0), alternating
 * the two in 21 rounds (a barrier before each block of calls, none inside),
 * and prints the median per-call time of each, the difference, in
 * microseconds, and the median over rounds of PMPI/MPI (ratio: > 1 collc
 * faster); for a nonblocking one also collc's blocking form of the same
 * call in the same rotation (columns blocking, nb-blk: what the nonblocking
 * interface costs over the blocking one, the same plan where collc serves
 * both). At p = 1 every call is served natively and the difference is
 * collc's cost per cached call; at p > 1 the times include communication
 * (and collc's own algorithms where chosen): both sides in one process and
 * one launch, the ratio is what separate launches (OSU's) cannot resolve
 * where a launch's speed varies more than the difference. */
#ifndef COLLC_BENCH_OVERHEAD_H
#define COLLC_BENCH_OVERHEAD_H

#include <stdlib.h>

#define OVH_ROUNDS 21

#define OVH_NB 14 /* blocking collectives; the nonblocking ones follow in the same order */

typedef struct {
  double *s, *r;
  int n;
  int *cnt, *dsp; /* the counted collectives': n per rank, packed */
  MPI_Comm comm;
} ovh_bufs;

/* One call of entry `which` (0 collc's MPI_, 1 the library's PMPI_) of
 * collective k (0..2 * OVH_NB - 1: blocking, then nonblocking in the same
 * order). */
static int ovh_call(int k, int which, const ovh_bufs *b) {
  MPI_Request q = MPI_REQUEST_NULL;
  int n = b->n, rc, *cn = b->cnt, *dp = b->dsp;
  MPI_Comm c = b->comm;
#define OVH_PAIR(mpi, pmpi, args) rc = which ? pmpi args : mpi args
  switch (k) {
  case 0: OVH_PAIR(MPI_Allreduce, PMPI_Allreduce, (b->s, b->r, n, MPI_DOUBLE, MPI_SUM, c)); break;
  case 1: OVH_PAIR(MPI_Reduce_scatter_block, PMPI_Reduce_scatter_block, (b->s, b->r, n, MPI_DOUBLE, MPI_SUM, c)); break;
  case 2: OVH_PAIR(MPI_Allgather, PMPI_Allgather, (b->s, n, MPI_DOUBLE, b->r, n, MPI_DOUBLE, c)); break;
  case 3: OVH_PAIR(MPI_Reduce, PMPI_Reduce, (b->s, b->r, n, MPI_DOUBLE, MPI_SUM, 0, c)); break;
  case 4: OVH_PAIR(MPI_Bcast, PMPI_Bcast, (b->r, n, MPI_DOUBLE, 0, c)); break;
  case 5: OVH_PAIR(MPI_Alltoall, PMPI_Alltoall, (b->s, n, MPI_DOUBLE, b->r, n, MPI_DOUBLE, c)); break;
  case 6: OVH_PAIR(MPI_Allgatherv, PMPI_Allgatherv, (b->s, n, MPI_DOUBLE, b->r, cn, dp, MPI_DOUBLE, c)); break;
  case 7: OVH_PAIR(MPI_Reduce_scatter, PMPI_Reduce_scatter, (b->s, b->r, cn, MPI_DOUBLE, MPI_SUM, c)); break;
  case 8: OVH_PAIR(MPI_Alltoallv, PMPI_Alltoallv, (b->s, cn, dp, MPI_DOUBLE, b->r, cn, dp, MPI_DOUBLE, c)); break;
  case 9: OVH_PAIR(MPI_Gather, PMPI_Gather, (b->s, n, MPI_DOUBLE, b->r, n, MPI_DOUBLE, 0, c)); break;
  case 10: OVH_PAIR(MPI_Scatter, PMPI_Scatter, (b->s, n, MPI_DOUBLE, b->r, n, MPI_DOUBLE, 0, c)); break;
  case 11: OVH_PAIR(MPI_Gatherv, PMPI_Gatherv, (b->s, n, MPI_DOUBLE, b->r, cn, dp, MPI_DOUBLE, 0, c)); break;
  case 12: OVH_PAIR(MPI_Scatterv, PMPI_Scatterv, (b->s, cn, dp, MPI_DOUBLE, b->r, n, MPI_DOUBLE, 0, c)); break;
  case 13: OVH_PAIR(MPI_Barrier, PMPI_Barrier, (c)); break;
  case 14: OVH_PAIR(MPI_Iallreduce, PMPI_Iallreduce, (b->s, b->r, n, MPI_DOUBLE, MPI_SUM, c, &q)); break;
  case 15: OVH_PAIR(MPI_Ireduce_scatter_block, PMPI_Ireduce_scatter_block, (b->s, b->r, n, MPI_DOUBLE, MPI_SUM, c, &q)); break;
  case 16: OVH_PAIR(MPI_Iallgather, PMPI_Iallgather, (b->s, n, MPI_DOUBLE, b->r, n, MPI_DOUBLE, c, &q)); break;
  case 17: OVH_PAIR(MPI_Ireduce, PMPI_Ireduce, (b->s, b->r, n, MPI_DOUBLE, MPI_SUM, 0, c, &q)); break;
  case 18: OVH_PAIR(MPI_Ibcast, PMPI_Ibcast, (b->r, n, MPI_DOUBLE, 0, c, &q)); break;
  case 19: OVH_PAIR(MPI_Ialltoall, PMPI_Ialltoall, (b->s, n, MPI_DOUBLE, b->r, n, MPI_DOUBLE, c, &q)); break;
  case 20: OVH_PAIR(MPI_Iallgatherv, PMPI_Iallgatherv, (b->s, n, MPI_DOUBLE, b->r, cn, dp, MPI_DOUBLE, c, &q)); break;
  case 21: OVH_PAIR(MPI_Ireduce_scatter, PMPI_Ireduce_scatter, (b->s, b->r, cn, MPI_DOUBLE, MPI_SUM, c, &q)); break;
  case 22: OVH_PAIR(MPI_Ialltoallv, PMPI_Ialltoallv, (b->s, cn, dp, MPI_DOUBLE, b->r, cn, dp, MPI_DOUBLE, c, &q)); break;
  case 23: OVH_PAIR(MPI_Igather, PMPI_Igather, (b->s, n, MPI_DOUBLE, b->r, n, MPI_DOUBLE, 0, c, &q)); break;
  case 24: OVH_PAIR(MPI_Iscatter, PMPI_Iscatter, (b->s, n, MPI_DOUBLE, b->r, n, MPI_DOUBLE, 0, c, &q)); break;
  case 25: OVH_PAIR(MPI_Igatherv, PMPI_Igatherv, (b->s, n, MPI_DOUBLE, b->r, cn, dp, MPI_DOUBLE, 0, c, &q)); break;
  case 26: OVH_PAIR(MPI_Iscatterv, PMPI_Iscatterv, (b->s, cn, dp, MPI_DOUBLE, b->r, n, MPI_DOUBLE, 0, c, &q)); break;
  default: OVH_PAIR(MPI_Ibarrier, PMPI_Ibarrier, (c, &q)); break;
  }
#undef OVH_PAIR
  if (rc || k < OVH_NB) return rc;
  return which ? PMPI_Wait(&q, MPI_STATUS_IGNORE) : MPI_Wait(&q, MPI_STATUS_IGNORE);
}

static int ovh_cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* Seconds per call of `calls` calls of (k, which); which 2 is collc's
 * blocking form of nonblocking collective k (k - OVH_NB, which 0). */
static double ovh_time(int k, int which, const ovh_bufs *b, long calls, int *err) {
  if (which == 2) k -= OVH_NB, which = 0;
  double t0 = MPI_Wtime();
  for (long i = 0; i < calls; i++) *err |= ovh_call(k, which, b);
  return (MPI_Wtime() - t0) / (double)calls;
}

/* The --overhead mode (file comment). Exit status 0, or 3 if a call failed. */
static int overhead(MPI_Comm comm, int argc, char **argv) {
  static const char *names[2 * OVH_NB] = {
      "allreduce",  "reduce_scatter_block",  "allgather",  "reduce",  "bcast",  "alltoall",
      "allgatherv", "reduce_scatter",        "alltoallv",  "gather",  "scatter", "gatherv",
      "scatterv",   "barrier",               "iallreduce", "ireduce_scatter_block",
      "iallgather", "ireduce",               "ibcast",     "ialltoall", "iallgatherv",
      "ireduce_scatter", "ialltoallv",       "igather",    "iscatter", "igatherv",
      "iscatterv",  "ibarrier"};
  int p, rank, err = 0;
  PMPI_Comm_size(comm, &p);
  PMPI_Comm_rank(comm, &rank);
  long n = argc > 2 ? atol(argv[2]) : 1, calls = argc > 3 ? atol(argv[3]) : 20000;
  if (n < 0 || n > 1 << 20 || calls < 1) n = 1, calls = 20000;
  ovh_bufs b = {calloc((size_t)(n * p + 1), 8), calloc((size_t)(n * p + 1), 8), (int)n,
                calloc((size_t)p, sizeof(int)), calloc((size_t)p, sizeof(int)), comm};
  if (!b.s || !b.r || !b.cnt || !b.dsp) return 2;
  for (int q = 0; q < p; q++) b.cnt[q] = (int)n, b.dsp[q] = q * (int)n;
  if (rank == 0)
    printf("# collc-bench --overhead: p=%d, %ld MPI_DOUBLE, %ld calls x %d rounds, median "
           "us per call\n# %-22s %10s %10s %10s %7s %10s %10s\n", p, n, calls, OVH_ROUNDS,
           "collective", "PMPI", "MPI(collc)", "extra", "ratio", "blocking", "nb-blk");
  for (int k = 0; k < 2 * OVH_NB; k++) {
    double t[3][OVH_ROUNDS], med[3] = {0, 0, 0}, ratio[OVH_ROUNDS];
    int sides = k < OVH_NB ? 2 : 3; /* nonblocking: against collc's blocking form too */
    for (int w = 0; w < sides; w++) ovh_time(k, w, &b, calls / 10 + 1, &err);
    for (int i = 0; i < OVH_ROUNDS; i++) /* alternated, the first side rotating */
      for (int j = 0; j < sides; j++) {
        int w = (i + j) % sides;
        PMPI_Barrier(comm);
        t[w][i] = ovh_time(k, w, &b, calls, &err);
      }
    for (int i = 0; i < OVH_ROUNDS; i++) ratio[i] = t[1][i] / t[0][i]; /* (one round's pair) */
    qsort(ratio, OVH_ROUNDS, sizeof(double), ovh_cmp);
    for (int w = 0; w < sides; w++) {
      qsort(t[w], OVH_ROUNDS, sizeof(double), ovh_cmp);
      med[w] = t[w][OVH_ROUNDS / 2] * 1e6;
    }
    double r = ratio[OVH_ROUNDS / 2];
    if (rank == 0 && sides == 2)
      printf("  %-22s %10.4f %10.4f %10.4f %7.3f\n", names[k], med[1], med[0], med[0] - med[1], r);
    else if (rank == 0)
      printf("  %-22s %10.4f %10.4f %10.4f %7.3f %10.4f %10.4f\n", names[k], med[1], med[0],
             med[0] - med[1], r, med[2], med[0] - med[2]);
  }
  free(b.s), free(b.r), free(b.cnt), free(b.dsp);
  return err ? 3 : 0;
}

#endif
