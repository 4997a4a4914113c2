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

/* One call of collective Coll through collc's MPI_ (w 0) or the library's
 * PMPI_ (w 1), buffers b, request *q for the nonblocking ones: function fn. */
#define OVH_FN(fn, Coll, ...)                                                                \
  static int fn(int w, const ovh_bufs *b, MPI_Request *q) {                                  \
    int n = b->n, *cn = b->cnt, *dp = b->dsp;                                                \
    MPI_Comm c = b->comm;                                                                    \
    (void)n, (void)cn, (void)dp, (void)q;                                                    \
    return w ? PMPI_##Coll(__VA_ARGS__) : MPI_##Coll(__VA_ARGS__);                           \
  }
#define D MPI_DOUBLE
OVH_FN(o_allreduce, Allreduce, b->s, b->r, n, D, MPI_SUM, c)
OVH_FN(o_rsb, Reduce_scatter_block, b->s, b->r, n, D, MPI_SUM, c)
OVH_FN(o_allgather, Allgather, b->s, n, D, b->r, n, D, c)
OVH_FN(o_reduce, Reduce, b->s, b->r, n, D, MPI_SUM, 0, c)
OVH_FN(o_bcast, Bcast, b->r, n, D, 0, c)
OVH_FN(o_alltoall, Alltoall, b->s, n, D, b->r, n, D, c)
OVH_FN(o_allgatherv, Allgatherv, b->s, n, D, b->r, cn, dp, D, c)
OVH_FN(o_rs, Reduce_scatter, b->s, b->r, cn, D, MPI_SUM, c)
OVH_FN(o_alltoallv, Alltoallv, b->s, cn, dp, D, b->r, cn, dp, D, c)
OVH_FN(o_gather, Gather, b->s, n, D, b->r, n, D, 0, c)
OVH_FN(o_scatter, Scatter, b->s, n, D, b->r, n, D, 0, c)
OVH_FN(o_gatherv, Gatherv, b->s, n, D, b->r, cn, dp, D, 0, c)
OVH_FN(o_scatterv, Scatterv, b->s, cn, dp, D, b->r, n, D, 0, c)
OVH_FN(o_barrier, Barrier, c)
OVH_FN(o_iallreduce, Iallreduce, b->s, b->r, n, D, MPI_SUM, c, q)
OVH_FN(o_irsb, Ireduce_scatter_block, b->s, b->r, n, D, MPI_SUM, c, q)
OVH_FN(o_iallgather, Iallgather, b->s, n, D, b->r, n, D, c, q)
OVH_FN(o_ireduce, Ireduce, b->s, b->r, n, D, MPI_SUM, 0, c, q)
OVH_FN(o_ibcast, Ibcast, b->r, n, D, 0, c, q)
OVH_FN(o_ialltoall, Ialltoall, b->s, n, D, b->r, n, D, c, q)
OVH_FN(o_iallgatherv, Iallgatherv, b->s, n, D, b->r, cn, dp, D, c, q)
OVH_FN(o_irs, Ireduce_scatter, b->s, b->r, cn, D, MPI_SUM, c, q)
OVH_FN(o_ialltoallv, Ialltoallv, b->s, cn, dp, D, b->r, cn, dp, D, c, q)
OVH_FN(o_igather, Igather, b->s, n, D, b->r, n, D, 0, c, q)
OVH_FN(o_iscatter, Iscatter, b->s, n, D, b->r, n, D, 0, c, q)
OVH_FN(o_igatherv, Igatherv, b->s, n, D, b->r, cn, dp, D, 0, c, q)
OVH_FN(o_iscatterv, Iscatterv, b->s, cn, dp, D, b->r, n, D, 0, c, q)
OVH_FN(o_ibarrier, Ibarrier, c, q)
#undef D
#undef OVH_FN

/* The collectives timed, blocking first, then the nonblocking ones in the
 * same order (row k + OVH_NB is row k's nonblocking form). */
static const struct {
  const char *name;
  int (*fn)(int w, const ovh_bufs *b, MPI_Request *q);
} ovh_colls[2 * OVH_NB] = {
    {"allreduce", o_allreduce},   {"reduce_scatter_block", o_rsb},
    {"allgather", o_allgather},   {"reduce", o_reduce},
    {"bcast", o_bcast},           {"alltoall", o_alltoall},
    {"allgatherv", o_allgatherv}, {"reduce_scatter", o_rs},
    {"alltoallv", o_alltoallv},   {"gather", o_gather},
    {"scatter", o_scatter},       {"gatherv", o_gatherv},
    {"scatterv", o_scatterv},     {"barrier", o_barrier},
    {"iallreduce", o_iallreduce}, {"ireduce_scatter_block", o_irsb},
    {"iallgather", o_iallgather}, {"ireduce", o_ireduce},
    {"ibcast", o_ibcast},         {"ialltoall", o_ialltoall},
    {"iallgatherv", o_iallgatherv}, {"ireduce_scatter", o_irs},
    {"ialltoallv", o_ialltoallv}, {"igather", o_igather},
    {"iscatter", o_iscatter},     {"igatherv", o_igatherv},
    {"iscatterv", o_iscatterv},   {"ibarrier", o_ibarrier}};

/* One call of entry `which` (0 collc's MPI_, 1 the library's PMPI_) of
 * collective k (ovh_colls' row), a nonblocking one waited for alike. */
static int ovh_call(int k, int which, const ovh_bufs *b) {
  MPI_Request q = MPI_REQUEST_NULL;
  int rc = ovh_colls[k].fn(which, b, &q);
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
    const char *name = ovh_colls[k].name;
    if (rank == 0 && sides == 2)
      printf("  %-22s %10.4f %10.4f %10.4f %7.3f\n", name, med[1], med[0], med[0] - med[1], r);
    else if (rank == 0)
      printf("  %-22s %10.4f %10.4f %10.4f %7.3f %10.4f %10.4f\n", name, med[1], med[0],
             med[0] - med[1], r, med[2], med[0] - med[2]);
  }
  free(b.s), free(b.r), free(b.cnt), free(b.dsp);
  return err ? 3 : 0;
}

#endif
