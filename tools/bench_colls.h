/* bench_colls.h - the collectives collc-bench times (-C): for each, the
 * native call (PMPI_), collc's selection rule (collc_<coll>) and an explicit
 * algorithm (collc_<coll>_algo); its element type, buffer sizes, test input
 * and default variants. Part of tools/collc-bench.c, which includes it once
 * (static functions, like tools/common.h; not a library header).
 *
 * Test inputs are exact: all-to-all sends distinct odd ints; the MPI_DOUBLE
 * collectives send small non-negative integers (< 4096, pseudo-random in
 * rank and position), whose sums are exact in every order, so a result is
 * checked bitwise against the native call's although the summation orders
 * differ. Receive buffers are poisoned with 0xA4 bytes first (an even int,
 * a negative non-integer double: never a test value). */
#ifndef COLLC_BENCH_COLLS_H
#define COLLC_BENCH_COLLS_H

#include <stdint.h>
#include <stdio.h>
#include <string.h>
#include "collc.h"
#include "algo/algo.h"
#include "mpi/dispatch.h"
#include "mpi/pinit.h"

enum { RUN_NATIVE = 0, RUN_DEFAULT, RUN_ALGO };

typedef struct bench_coll bench_coll;

/* Buffers of one run, allocated once for the largest count. orig is the
 * send buffer as filled, to check that no variant writes its input. */
typedef struct {
  const bench_coll *c;
  char *send, *orig, *recv, *ref;
  int *vcounts, *vdispls; /* counted collectives: p equal counts, packed (bc_vectors) */
  long vcount;            /* the count they hold (-1: none yet) */
  double *times, *maxtimes;
  MPI_Comm comm;
  int p, rank;
} bench;

struct bench_coll {
  const char *name;     /* -C and the CSV's first column */
  const char *mpi_name; /* for titles */
  int coll;             /* enum collc_coll */
  int dbl;              /* element type MPI_DOUBLE (else MPI_INT) */
  int send_p, recv_p;   /* buffer holds p * count elements (else count) */
  int rooted;           /* result at the root (0) only */
  int inout;            /* one buffer, input at the root (bcast) */
  const char *per;      /* what one count is, after the element type */
  const char *counts;   /* default -c */
  const char *large;    /* default -l, NULL if none */
  /* One call of kind RUN_* (algo for RUN_ALGO) on b's send buffer into recv. */
  int (*run)(int kind, const char *algo, bench *b, int count, void *recv);
  /* The same as a persistent request on comm (-P): native is the MPI
   * library's own init, the others collc's MPI_<Coll>_init with info. */
  int (*init)(int kind, const char *algo, bench *b, int count, void *recv, MPI_Comm comm,
              MPI_Request *r);
  /* Default variants for p as an -a list; NULL: collc-bench's all-to-all set. */
  void (*variants)(int p, char *buf, size_t len);
  int b2b; /* collc-bench's sample: this many calls back to back after a double
            * barrier, the time per call (0: one call after a double barrier) */
  int nb;  /* the nonblocking form (bc_nonblocking): run is the I-call and MPI_Wait,
            * native PMPI_I<coll>; no persistent form (init NULL) */
  int keyp; /* a counted collective (equal counts, as OSU calls it): the
             * decision's bytes are the whole vector's, p * count elements
             * (select_bytes), so a size class of B bytes is B / (p * size) per rank */
};

/* Whether c moves no data (the barrier): one size class, count 0. */
static int bc_no_data(const bench_coll *c) { return coll_desc_of(c->coll)->synchronizes; }

/* The element type's name for titles. */
static inline const char *bc_type_name(const bench_coll *c) {
  return bc_no_data(c) ? "no data" : c->dbl ? "MPI_DOUBLE" : "MPI_INT";
}

/* Bytes of one element of c. */
static long bc_size(const bench_coll *c) { return c->dbl ? 8 : 4; }

/* Bytes of the decision key per count of c on p ranks (bench_coll.keyp). */
static inline long bc_key_size(const bench_coll *c, int p) { return bc_size(c) * (c->keyp ? p : 1); }

/* Elements in b's send buffer for count. */
static long bc_send_elems(const bench *b, long count) {
  return b->c->send_p ? (long)b->p * count : count;
}

/* Elements in b's receive buffer for count. */
static long bc_recv_elems(const bench *b, long count) {
  return b->c->recv_p ? (long)b->p * count : count;
}

/* Bytes of the result this rank checks (the root's only, for reduce). */
static size_t bc_result_bytes(const bench *b, long count) {
  if (b->c->rooted && b->rank != 0) return 0;
  return (size_t)bc_recv_elems(b, count) * (size_t)bc_size(b->c);
}

/* All-to-all test value of send element i of rank: distinct and odd while
 * 2 * p * p * count < 2^32. */
static int bc_int_value(int rank, long i, int p, long count) {
  uint64_t x = (uint64_t)rank * (uint64_t)p * (uint64_t)count + (uint64_t)i;
  return (int)(uint32_t)(x * 2u + 1u);
}

/* MPI_DOUBLE test value of send element i of rank: an integer in [0, 4095]. */
static double bc_dbl_value(int rank, long i) {
  uint64_t x = (uint64_t)i * 0x9E3779B1u + (uint64_t)rank * 0x85EBCA77u + 12345u;
  x ^= x >> 15;
  x *= 0x2C1B3C6Du;
  x ^= x >> 13;
  return (double)(x & 4095u);
}

/* Fill b->send (and its copy b->orig) with this rank's input for count. */
static void bc_fill(bench *b, long count) {
  long n = bc_send_elems(b, count);
  if (b->c->dbl)
    for (long i = 0; i < n; i++) ((double *)b->send)[i] = bc_dbl_value(b->rank, i);
  else
    for (long i = 0; i < n; i++) ((int *)b->send)[i] = bc_int_value(b->rank, i, b->p, count);
  memcpy(b->orig, b->send, (size_t)n * (size_t)bc_size(b->c));
}

/* Make recv ready for one checked call: poisoned, and for bcast the root's
 * input in it. */
static void bc_prepare(bench *b, long count, void *recv) {
  memset(recv, 0xA4, (size_t)bc_recv_elems(b, count) * (size_t)bc_size(b->c));
  if (b->c->inout && b->rank == 0) memcpy(recv, b->send, (size_t)count * (size_t)bc_size(b->c));
}

/* Index of the first element where recv differs from b->ref, -1 if none;
 * -2 - i if the send buffer changed at element i. */
static long bc_check(const bench *b, long count) {
  size_t n = bc_result_bytes(b, count), sz = (size_t)bc_size(b->c);
  size_t ns = (size_t)bc_send_elems(b, count) * sz;
  if (memcmp(b->recv, b->ref, n))
    for (size_t i = 0; i < n; i += sz)
      if (memcmp(b->recv + i, b->ref + i, sz)) return (long)(i / sz);
  if (memcmp(b->send, b->orig, ns))
    for (size_t i = 0; i < ns; i += sz)
      if (memcmp(b->send + i, b->orig + i, sz)) return -2 - (long)(i / sz);
  return -1;
}

/* ---- the calls ---- */

/* MPI_Alltoall of count MPI_INT per block. */
static int run_alltoall(int kind, const char *algo, bench *b, int n, void *recv) {
  if (kind == RUN_NATIVE) return PMPI_Alltoall(b->send, n, MPI_INT, recv, n, MPI_INT, b->comm);
  if (kind == RUN_DEFAULT) return collc_alltoall(b->send, n, MPI_INT, recv, n, MPI_INT, b->comm);
  return collc_alltoall_algo(algo, b->send, n, MPI_INT, recv, n, MPI_INT, b->comm);
}

/* MPI_Allreduce of count MPI_DOUBLE, MPI_SUM. */
static int run_allreduce(int kind, const char *algo, bench *b, int n, void *recv) {
  if (kind == RUN_NATIVE) return PMPI_Allreduce(b->send, recv, n, MPI_DOUBLE, MPI_SUM, b->comm);
  if (kind == RUN_DEFAULT) return collc_allreduce(b->send, recv, n, MPI_DOUBLE, MPI_SUM, b->comm);
  return collc_allreduce_algo(algo, b->send, recv, n, MPI_DOUBLE, MPI_SUM, b->comm);
}

/* MPI_Reduce_scatter_block of count MPI_DOUBLE per rank, MPI_SUM. */
static int run_rsb(int kind, const char *algo, bench *b, int n, void *recv) {
  if (kind == RUN_NATIVE)
    return PMPI_Reduce_scatter_block(b->send, recv, n, MPI_DOUBLE, MPI_SUM, b->comm);
  if (kind == RUN_DEFAULT)
    return collc_reduce_scatter_block(b->send, recv, n, MPI_DOUBLE, MPI_SUM, b->comm);
  return collc_reduce_scatter_block_algo(algo, b->send, recv, n, MPI_DOUBLE, MPI_SUM, b->comm);
}

/* MPI_Allgather of count MPI_DOUBLE per rank. */
static int run_allgather(int kind, const char *algo, bench *b, int n, void *recv) {
  const void *s = b->send;
  if (kind == RUN_NATIVE) return PMPI_Allgather(s, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, b->comm);
  if (kind == RUN_DEFAULT) return collc_allgather(s, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, b->comm);
  return collc_allgather_algo(algo, s, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, b->comm);
}

/* MPI_Reduce of count MPI_DOUBLE to root 0, MPI_SUM. */
static int run_reduce(int kind, const char *algo, bench *b, int n, void *recv) {
  if (kind == RUN_NATIVE) return PMPI_Reduce(b->send, recv, n, MPI_DOUBLE, MPI_SUM, 0, b->comm);
  if (kind == RUN_DEFAULT) return collc_reduce(b->send, recv, n, MPI_DOUBLE, MPI_SUM, 0, b->comm);
  return collc_reduce_algo(algo, b->send, recv, n, MPI_DOUBLE, MPI_SUM, 0, b->comm);
}

/* MPI_Bcast of count MPI_DOUBLE from root 0, in recv (see bc_prepare). */
static int run_bcast(int kind, const char *algo, bench *b, int n, void *recv) {
  if (kind == RUN_NATIVE) return PMPI_Bcast(recv, n, MPI_DOUBLE, 0, b->comm);
  if (kind == RUN_DEFAULT) return collc_bcast(recv, n, MPI_DOUBLE, 0, b->comm);
  return collc_bcast_algo(algo, recv, n, MPI_DOUBLE, 0, b->comm);
}

/* MPI_Gather of count MPI_DOUBLE per block to root 0. */
static int run_gather(int kind, const char *algo, bench *b, int n, void *recv) {
  const void *s = b->send;
  if (kind == RUN_NATIVE) return PMPI_Gather(s, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, 0, b->comm);
  if (kind == RUN_DEFAULT) return MPI_Gather(s, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, 0, b->comm);
  return collc_gather_algo(algo, s, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, 0, b->comm);
}

/* MPI_Scatter of count MPI_DOUBLE per block from root 0. */
static int run_scatter(int kind, const char *algo, bench *b, int n, void *recv) {
  const void *s = b->send;
  if (kind == RUN_NATIVE) return PMPI_Scatter(s, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, 0, b->comm);
  if (kind == RUN_DEFAULT) return MPI_Scatter(s, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, 0, b->comm);
  return collc_scatter_algo(algo, s, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, 0, b->comm);
}

/* b's count vectors for count n per rank (packed, rank order), filled when n changes. */
static const int *bc_vectors(bench *b, int n) {
  if (b->vcount != n)
    for (int i = 0; i < b->p; i++) b->vcounts[i] = n, b->vdispls[i] = i * n;
  b->vcount = n;
  return b->vcounts;
}

/* MPI_Allgatherv of count MPI_DOUBLE from every rank (equal counts, packed). */
static int run_allgatherv(int kind, const char *algo, bench *b, int n, void *recv) {
  const void *s = b->send;
  const int *c = bc_vectors(b, n), *d = b->vdispls;
  MPI_Datatype t = MPI_DOUBLE;
  if (kind == RUN_NATIVE) return PMPI_Allgatherv(s, n, t, recv, c, d, t, b->comm);
  if (kind == RUN_DEFAULT) return MPI_Allgatherv(s, n, t, recv, c, d, t, b->comm);
  return collc_allgatherv_algo(algo, s, n, t, recv, c, d, t, b->comm);
}

/* MPI_Reduce_scatter of count MPI_DOUBLE per rank (equal counts), MPI_SUM. */
static int run_reduce_scatter(int kind, const char *algo, bench *b, int n, void *recv) {
  const int *c = bc_vectors(b, n);
  if (kind == RUN_NATIVE) return PMPI_Reduce_scatter(b->send, recv, c, MPI_DOUBLE, MPI_SUM, b->comm);
  if (kind == RUN_DEFAULT) return MPI_Reduce_scatter(b->send, recv, c, MPI_DOUBLE, MPI_SUM, b->comm);
  return collc_reduce_scatter_algo(algo, b->send, recv, c, MPI_DOUBLE, MPI_SUM, b->comm);
}

/* MPI_Barrier (no data: n and recv unused). */
static int run_barrier(int kind, const char *algo, bench *b, int n, void *recv) {
  (void)n, (void)recv;
  if (kind == RUN_NATIVE) return PMPI_Barrier(b->comm);
  if (kind == RUN_DEFAULT) return collc_barrier(b->comm);
  return collc_barrier_algo(algo, b->comm);
}

/* ---- the nonblocking calls (-C i<coll>): the I-call, then MPI_Wait ---- */

/* One nonblocking call of kind (PMPI_I<coll>, collc's MPI_I<coll> with its
 * rule, collc_i<coll>_algo) on the arguments before the request, then
 * MPI_Wait (collc's: it completes both kinds of request); an MPI error code. */
#define BC_IRUN(coll, ...)                                                                   \
  do {                                                                                        \
    MPI_Request r_;                                                                           \
    int rc_ = kind == RUN_NATIVE    ? PMPI_I##coll(__VA_ARGS__, &r_)                          \
              : kind == RUN_DEFAULT ? MPI_I##coll(__VA_ARGS__, &r_)                           \
                                    : collc_i##coll##_algo(algo, __VA_ARGS__, &r_);           \
    return rc_ ? rc_ : MPI_Wait(&r_, MPI_STATUS_IGNORE);                                      \
  } while (0)

static int irun_alltoall(int kind, const char *algo, bench *b, int n, void *recv) {
  BC_IRUN(alltoall, b->send, n, MPI_INT, recv, n, MPI_INT, b->comm);
}
static int irun_allreduce(int kind, const char *algo, bench *b, int n, void *recv) {
  BC_IRUN(allreduce, b->send, recv, n, MPI_DOUBLE, MPI_SUM, b->comm);
}
static int irun_rsb(int kind, const char *algo, bench *b, int n, void *recv) {
  BC_IRUN(reduce_scatter_block, b->send, recv, n, MPI_DOUBLE, MPI_SUM, b->comm);
}
static int irun_allgather(int kind, const char *algo, bench *b, int n, void *recv) {
  BC_IRUN(allgather, b->send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, b->comm);
}
static int irun_reduce(int kind, const char *algo, bench *b, int n, void *recv) {
  BC_IRUN(reduce, b->send, recv, n, MPI_DOUBLE, MPI_SUM, 0, b->comm);
}
static int irun_bcast(int kind, const char *algo, bench *b, int n, void *recv) {
  BC_IRUN(bcast, recv, n, MPI_DOUBLE, 0, b->comm);
}
static int irun_allgatherv(int kind, const char *algo, bench *b, int n, void *recv) {
  const int *c = bc_vectors(b, n);
  BC_IRUN(allgatherv, b->send, n, MPI_DOUBLE, recv, c, b->vdispls, MPI_DOUBLE, b->comm);
}
static int irun_reduce_scatter(int kind, const char *algo, bench *b, int n, void *recv) {
  const int *c = bc_vectors(b, n);
  BC_IRUN(reduce_scatter, b->send, recv, c, MPI_DOUBLE, MPI_SUM, b->comm);
}
static int irun_barrier(int kind, const char *algo, bench *b, int n, void *recv) {
  (void)n, (void)recv;
  BC_IRUN(barrier, b->comm);
}

/* Whether resolved choice ch (for s) serves a nonblocking call with nothing
 * set up before: no node segment, no group communicators. A nonblocking call
 * never makes them (it does not synchronise), so until a blocking call of
 * the same kind has, collc serves it natively (README, Nonblocking
 * collectives): timing it would time native under the plan's name. */
static int bc_nb_ready(const collc_spec *s, const collc_choice *ch) {
  char why[200];
  if (dispatch_uses_segment(ch)) return 0;
  collc_prog *P = choice_compile(s, ch, why, sizeof why);
  int ok = P && P->ngroups == 0 && P->shm_units == 0;
  if (P) prog_free(P);
  return ok;
}

/* The nonblocking call of each collective that has one (a table by enum collc_coll). */
static int (*const bc_irun[COLLC_COLL_COUNT])(int, const char *, bench *, int, void *) = {
    [COLLC_COLL_ALLTOALL] = irun_alltoall,   [COLLC_COLL_ALLREDUCE] = irun_allreduce,
    [COLLC_COLL_REDUCE_SCATTER_BLOCK] = irun_rsb, [COLLC_COLL_ALLGATHER] = irun_allgather,
    [COLLC_COLL_REDUCE] = irun_reduce,       [COLLC_COLL_BCAST] = irun_bcast,
    [COLLC_COLL_BARRIER] = irun_barrier,     [COLLC_COLL_ALLGATHERV] = irun_allgatherv,
    [COLLC_COLL_REDUCE_SCATTER] = irun_reduce_scatter,
};

/* ---- the persistent calls (-P) ---- */

/* Info selecting algo for RUN_ALGO (MPI_INFO_NULL otherwise); free it with bc_info_free. */
static MPI_Info bc_info(int kind, const char *algo) {
  MPI_Info info = MPI_INFO_NULL;
  if (kind != RUN_ALGO) return info;
  MPI_Info_create(&info);
  MPI_Info_set(info, "collc_algorithm", algo);
  return info;
}

static void bc_info_free(MPI_Info *info) {
  if (*info != MPI_INFO_NULL) MPI_Info_free(info);
}

#ifdef PINIT
#define BC_NATIVE(coll, ...) PINIT(coll)(__VA_ARGS__)
#else /* no native persistent collectives: native does not run */
#define BC_NATIVE(coll, ...) MPI_ERR_UNSUPPORTED_OPERATION
#endif
/* The persistent init of kind (native or collc's, with info). */
#define BC_INIT(coll, ...) \
  (kind == RUN_NATIVE ? BC_NATIVE(coll, __VA_ARGS__) : MPI_##coll##_init(__VA_ARGS__))

static int init_alltoall(int kind, const char *algo, bench *b, int n, void *recv, MPI_Comm c,
                         MPI_Request *r) {
  MPI_Info info = bc_info(kind, algo);
  int rc = BC_INIT(Alltoall, b->send, n, MPI_INT, recv, n, MPI_INT, c, info, r);
  bc_info_free(&info);
  return rc;
}

static int init_allreduce(int kind, const char *algo, bench *b, int n, void *recv, MPI_Comm c,
                          MPI_Request *r) {
  MPI_Info info = bc_info(kind, algo);
  int rc = BC_INIT(Allreduce, b->send, recv, n, MPI_DOUBLE, MPI_SUM, c, info, r);
  bc_info_free(&info);
  return rc;
}

static int init_rsb(int kind, const char *algo, bench *b, int n, void *recv, MPI_Comm c,
                    MPI_Request *r) {
  MPI_Info info = bc_info(kind, algo);
  int rc = BC_INIT(Reduce_scatter_block, b->send, recv, n, MPI_DOUBLE, MPI_SUM, c, info, r);
  bc_info_free(&info);
  return rc;
}

static int init_allgather(int kind, const char *algo, bench *b, int n, void *recv, MPI_Comm c,
                          MPI_Request *r) {
  MPI_Info info = bc_info(kind, algo);
  int rc = BC_INIT(Allgather, b->send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, c, info, r);
  bc_info_free(&info);
  return rc;
}

static int init_gather(int kind, const char *algo, bench *b, int n, void *recv, MPI_Comm c,
                       MPI_Request *r) {
  MPI_Info info = bc_info(kind, algo);
  int rc = BC_INIT(Gather, b->send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, 0, c, info, r);
  bc_info_free(&info);
  return rc;
}

static int init_scatter(int kind, const char *algo, bench *b, int n, void *recv, MPI_Comm c,
                        MPI_Request *r) {
  MPI_Info info = bc_info(kind, algo);
  int rc = BC_INIT(Scatter, b->send, n, MPI_DOUBLE, recv, n, MPI_DOUBLE, 0, c, info, r);
  bc_info_free(&info);
  return rc;
}

static int init_reduce(int kind, const char *algo, bench *b, int n, void *recv, MPI_Comm c,
                       MPI_Request *r) {
  MPI_Info info = bc_info(kind, algo);
  int rc = BC_INIT(Reduce, b->send, recv, n, MPI_DOUBLE, MPI_SUM, 0, c, info, r);
  bc_info_free(&info);
  return rc;
}

static int init_bcast(int kind, const char *algo, bench *b, int n, void *recv, MPI_Comm c,
                      MPI_Request *r) {
  MPI_Info info = bc_info(kind, algo);
  (void)b;
  int rc = BC_INIT(Bcast, recv, n, MPI_DOUBLE, 0, c, info, r);
  bc_info_free(&info);
  return rc;
}

static int init_allgatherv(int kind, const char *algo, bench *b, int n, void *recv, MPI_Comm c,
                           MPI_Request *r) {
  MPI_Info info = bc_info(kind, algo);
  const int *v = bc_vectors(b, n);
  int rc = BC_INIT(Allgatherv, b->send, n, MPI_DOUBLE, recv, v, b->vdispls, MPI_DOUBLE, c, info, r);
  bc_info_free(&info);
  return rc;
}

static int init_reduce_scatter(int kind, const char *algo, bench *b, int n, void *recv,
                               MPI_Comm c, MPI_Request *r) {
  MPI_Info info = bc_info(kind, algo);
  const int *v = bc_vectors(b, n);
  int rc = BC_INIT(Reduce_scatter, b->send, recv, v, MPI_DOUBLE, MPI_SUM, c, info, r);
  bc_info_free(&info);
  return rc;
}

static int init_barrier(int kind, const char *algo, bench *b, int n, void *recv, MPI_Comm c,
                        MPI_Request *r) {
  MPI_Info info = bc_info(kind, algo);
  (void)b, (void)n, (void)recv;
  int rc = BC_INIT(Barrier, c, info, r);
  bc_info_free(&info);
  return rc;
}

/* ---- default variants ---- */

/* Prime factors of p (p >= 2), ascending, into f; their number. */
static int bc_factors(int p, int *f) {
  int n = 0;
  for (int d = 2; (long)d * d <= p; d++)
    while (p % d == 0) f[n++] = d, p /= d;
  if (p > 1) f[n++] = p;
  return n;
}

/* Radix-4-ish steps for p: the factors 2 paired into 4s, then the rest
 * ascending, into r; their number. */
static int bc_radix4(int p, int *r) {
  int f[COLLC_MAXF], n = bc_factors(p, f), twos = 0, m = 0;
  while (twos < n && f[twos] == 2) twos++;
  for (int i = 0; i + 1 < twos; i += 2) r[m++] = 4;
  if (twos % 2) r[m++] = 2;
  for (int i = twos; i < n; i++) r[m++] = f[i];
  return m;
}

/* Append to buf the steps r[0..n-1] with sign ('-', '*' or '+'; '+' in
 * reverse order) after a comma unless first. */
static void bc_steps(char *buf, size_t len, const int *r, int n, char sign, int first) {
  size_t at = strlen(buf);
  for (int i = 0; i < n && at < len; i++) {
    int k = sign == '+' ? r[n - 1 - i] : r[i];
    at += (size_t)snprintf(buf + at, len - at, "%s%s%d", first && !i ? "" : ",",
                           sign == '+' ? "" : (sign == '-' ? "-" : "*"), k);
  }
}

/* The recexch lists of p for coll (rs: "-" steps, ag: "+" steps) other than
 * the default one, appended to buf as ";recexch:..." items: one step (radix
 * p), radix 4 and, for allreduce, all-"*" steps (recursive doubling). */
static void bc_recexch_lists(int p, int rs, int ag, int star, char *buf, size_t len) {
  int r[COLLC_MAXF], n;
  size_t at;
  for (int kind = 0; kind < 2 + star && p >= 2; kind++) {
    n = kind == 0 ? (r[0] = p, 1) : kind == 1 ? bc_radix4(p, r) : bc_factors(p, r);
    at = strlen(buf);
    snprintf(buf + at, len - at, ";recexch:");
    if (kind == 2) {
      bc_steps(buf, len, r, n, '*', 1);
      continue;
    }
    if (rs) bc_steps(buf, len, r, n, '-', 1);
    if (ag) bc_steps(buf, len, r, n, '+', !rs);
  }
}

/* "native;recexch", the recexch lists of bc_recexch_lists, then ";" tail, into buf. */
static void bc_recexch_variants(int p, int rs, int ag, int star, const char *tail, char *buf,
                                size_t len) {
  snprintf(buf, len, "native;recexch");
  bc_recexch_lists(p, rs, ag, star, buf, len);
  size_t at = strlen(buf);
  snprintf(buf + at, len - at, ";%s", tail);
}

/* allreduce: recexch (default, one step, radix 4, recursive doubling),
 * cyclic, tree, hier (node=rs, node=tree, node=copyin), shm. */
static void variants_allreduce(int p, char *buf, size_t len) {
  bc_recexch_variants(p, 1, 1, 1, "cyclic;tree;hier;hier:node=tree;hier:node=copyin;shm;default",
                      buf, len);
}

/* reduce_scatter_block: recexch (default, one step, radix 4), cyclic, hier, shm. */
static void variants_rsb(int p, char *buf, size_t len) {
  bc_recexch_variants(p, 1, 0, 0, "cyclic;hier;shm;default", buf, len);
}

/* allgather: recexch (default, one step, radix 4), cyclic, hier, shm. */
static void variants_allgather(int p, char *buf, size_t len) {
  bc_recexch_variants(p, 0, 1, 0, "cyclic;hier;shm;default", buf, len);
}

/* allgatherv (equal counts): recexch (default, one step, radix 4), cyclic, hier. */
static void variants_allgatherv(int p, char *buf, size_t len) {
  bc_recexch_variants(p, 0, 1, 0, "cyclic;hier;default", buf, len);
}

/* reduce_scatter (equal counts): recexch (default, one step, radix 4), cyclic, hier. */
static void variants_reduce_scatter(int p, char *buf, size_t len) {
  bc_recexch_variants(p, 1, 0, 0, "cyclic;hier;default", buf, len);
}

/* reduce and bcast: binomial and 4-nomial trees (the latter only if p > 2:
 * at p = 2 it is the same one message), hier, shm. */
static void variants_tree(int p, char *buf, size_t len) {
  snprintf(buf, len, "native;tree%s;hier;shm;default", p > 2 ? ";tree:4" : "");
}

/* gather and scatter: linear, binomial and 4-nomial trees, shm. */
static void variants_rooted(int p, char *buf, size_t len) {
  snprintf(buf, len, "native;linear;tree%s;shm;default", p > 2 ? ";tree:4" : "");
}

/* barrier: dissemination (radix 2, 4, one round of p - 1), node flags
 * (one step, radix 2), hier, dissem through the segment (those that do not
 * fit p or the nodes are left out). */
static void variants_barrier(int p, char *buf, size_t len) {
  snprintf(buf, len, "native;dissem;dissem:4;dissem:%d;flags;flags:2;hier;shm:dissem;default",
           p > 1 ? p : 2);
}

/* The collectives, alltoall first (the default). */
static const bench_coll bench_colls[] = {
    {"alltoall", "MPI_Alltoall", COLLC_COLL_ALLTOALL, 0, 1, 1, 0, 0, "per process",
     "1,10,100,1000,10000", NULL, run_alltoall, init_alltoall, NULL, 0, 0, 0},
    {"allreduce", "MPI_Allreduce", COLLC_COLL_ALLREDUCE, 1, 0, 0, 0, 0, "per process",
     "1,10,100,1000,10000,100000,1000000", NULL, run_allreduce, init_allreduce, variants_allreduce,
     0, 0, 0},
    {"reduce_scatter_block", "MPI_Reduce_scatter_block", COLLC_COLL_REDUCE_SCATTER_BLOCK, 1, 1,
     0, 0, 0, "per block (per rank: each sends p blocks, receives 1)", "1,10,100,1000,10000,100000",
     NULL, run_rsb, init_rsb, variants_rsb, 0, 0, 0},
    {"allgather", "MPI_Allgather", COLLC_COLL_ALLGATHER, 1, 0, 1, 0, 0,
     "per block (per rank: each sends 1 block, receives p)", "1,10,100,1000,10000,100000",
     NULL, run_allgather, init_allgather, variants_allgather, 0, 0, 0},
    {"reduce", "MPI_Reduce", COLLC_COLL_REDUCE, 1, 0, 0, 1, 0, "per process",
     "1,10,100,1000,10000,100000,1000000", NULL, run_reduce, init_reduce, variants_tree, 0, 0, 0},
    {"bcast", "MPI_Bcast", COLLC_COLL_BCAST, 1, 0, 0, 0, 1, "per process",
     "1,10,100,1000,10000,100000,1000000", NULL, run_bcast, init_bcast, variants_tree, 0, 0, 0},
    {"gather", "MPI_Gather", COLLC_COLL_GATHER, 1, 0, 1, 1, 0,
     "per block (per rank: each sends 1 block, the root receives p)", "1,10,100,1000,10000,100000",
     NULL, run_gather, init_gather, variants_rooted, 0, 0, 0},
    {"scatter", "MPI_Scatter", COLLC_COLL_SCATTER, 1, 1, 0, 0, 0,
     "per block (per rank: the root sends p blocks, each receives 1)",
     "1,10,100,1000,10000,100000", NULL, run_scatter, init_scatter, variants_rooted, 0, 0, 0},
    {"allgatherv", "MPI_Allgatherv", COLLC_COLL_ALLGATHERV, 1, 0, 1, 0, 0,
     "per block (equal counts: each rank sends 1 block, receives p)", "1,10,100,1000,10000,100000",
     NULL, run_allgatherv, init_allgatherv, variants_allgatherv, 0, 0, 1},
    {"reduce_scatter", "MPI_Reduce_scatter", COLLC_COLL_REDUCE_SCATTER, 1, 1, 0, 0, 0,
     "per block (equal counts: each rank sends p blocks, receives 1)",
     "1,10,100,1000,10000,100000", NULL, run_reduce_scatter, init_reduce_scatter,
     variants_reduce_scatter, 0, 0, 1},
    {"barrier", "MPI_Barrier", COLLC_COLL_BARRIER, 0, 0, 0, 0, 0, "(a barrier: count ignored)",
     "0", NULL, run_barrier, init_barrier, variants_barrier, 100, 0, 0},
};

#define BC_NCOLLS (sizeof bench_colls / sizeof bench_colls[0])

/* The nonblocking form of blocking collective c (named i<name>, MPI_I<name>:
 * c with the nonblocking run, nb set, no persistent form), or NULL if c has
 * none or is nonblocking itself. Made once per process. */
static const bench_coll *bc_nonblocking(const bench_coll *c) {
  static bench_coll nbc[BC_NCOLLS];
  static char names[BC_NCOLLS][2][48];
  if (c->nb || !bc_irun[c->coll]) return NULL; /* (c is an entry of bench_colls from here) */
  size_t k = (size_t)(c - bench_colls);
  if (!nbc[k].name) {
    snprintf(names[k][0], sizeof names[k][0], "i%s", c->name);
    snprintf(names[k][1], sizeof names[k][1], "MPI_I%s", c->name);
    nbc[k] = *c;
    nbc[k].name = names[k][0], nbc[k].mpi_name = names[k][1];
    nbc[k].run = bc_irun[c->coll], nbc[k].init = NULL, nbc[k].nb = 1;
  }
  return &nbc[k];
}

/* The collective called name (i<name>: its nonblocking form), or NULL. */
static const bench_coll *bc_find(const char *name) {
  for (size_t i = 0; i < BC_NCOLLS; i++)
    if (!strcmp(bench_colls[i].name, name)) return &bench_colls[i];
  const bench_coll *c = name[0] == 'i' ? bc_find(name + 1) : NULL;
  return c ? bc_nonblocking(c) : NULL;
}

#endif
