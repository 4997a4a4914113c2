/* barrier.c - MPI_Barrier, MPI_Barrier_init and MPI_Ibarrier as collc
 * serves them (COLLC_BARRIER forces the algorithm), against an
 * independent truth.
 *
 * Truth: a shared-memory window (MPI_Win_allocate_shared, every rank on
 * this machine) where each rank stores, with a sequentially consistent
 * atomic, the number of the barrier it is about to enter; after leaving
 * barrier n, a rank loads every rank's number and fails if one is below n
 * (that rank had not entered yet). Entries come after random delays (rank
 * 0 often much later than the others), so a barrier that lets a rank out
 * early is seen: run.sh's must-fail case breaks one rank's program through
 * the COLLC_TEST_BARRIER_EARLY hook (it leaves at once) and expects a FAIL.
 *
 * Cases: blocking on WORLD and on a communicator of reversed ranks;
 * persistent (one request started many times); nonblocking (three
 * MPI_Ibarriers outstanding with an MPI_Iallreduce after each, completed
 * in order, the sums checked; one completed by MPI_Test polling);
 * argument errors (MPI_COMM_NULL: MPI_ERR_COMM; no request: MPI_ERR_ARG).
 */
#define _POSIX_C_SOURCE 200809L /* (nanosleep, rand_r) */
#include <sched.h>
#include <time.h>
#include "collc.h"
#include "testlib.h"

#define ROUNDS 30

static long *entered; /* [world rank]: the barrier it last entered (the window) */
static long serial;   /* barriers entered so far, the same count on every rank */
static unsigned seed;

/* A random pause before entering; rank 0 often a long one. */
static void delay(const tl_ctx *ctx) {
  int us = rand_r(&seed) % 100;
  if (ctx->rank == 0 && rand_r(&seed) % 3 == 0) us += 2000;
  struct timespec t = {0, 1000L * us};
  nanosleep(&t, NULL);
}

/* Pause, then publish this rank's entry of the next barrier; returns its number. */
static long enter(const tl_ctx *ctx) {
  delay(ctx);
  __atomic_store_n(&entered[ctx->rank], ++serial, __ATOMIC_SEQ_CST);
  return serial;
}

/* After leaving barrier n: every rank must have entered it. */
static void check(tl_ctx *ctx, long n, const char *what) {
  ctx->checks++;
  for (int q = 0; q < ctx->size; q++) {
    long e = __atomic_load_n(&entered[q], __ATOMIC_SEQ_CST);
    if (e < n) {
      tl_fail(ctx, "%s: left barrier %ld before rank %d entered it (it entered %ld)", what, n, q, e);
      return;
    }
  }
}

static void blocking(tl_ctx *ctx, MPI_Comm comm, const char *what) {
  for (int i = 0; i < ROUNDS; i++) {
    long n = enter(ctx);
    int rc = MPI_Barrier(comm);
    if (rc != MPI_SUCCESS) tl_fail(ctx, "%s: MPI_Barrier returned %d", what, rc);
    check(ctx, n, what);
  }
}

static void persistent(tl_ctx *ctx, MPI_Comm comm) {
  MPI_Request r;
  if (MPI_Barrier_init(comm, MPI_INFO_NULL, &r) != MPI_SUCCESS) {
    tl_fail(ctx, "MPI_Barrier_init failed");
    return;
  }
  for (int i = 0; i < ROUNDS; i++) {
    long n = enter(ctx);
    if (MPI_Start(&r) != MPI_SUCCESS || MPI_Wait(&r, MPI_STATUS_IGNORE) != MPI_SUCCESS)
      tl_fail(ctx, "persistent: start/wait failed");
    check(ctx, n, "persistent");
  }
  MPI_Request_free(&r);
}

/* Three barriers outstanding, an allreduce after each; completed in order. */
static void nonblocking(tl_ctx *ctx, MPI_Comm comm) {
  for (int i = 0; i < ROUNDS / 3; i++) {
    MPI_Request b[3], a[3];
    int in[3], out[3];
    long n[3];
    for (int k = 0; k < 3; k++) {
      n[k] = enter(ctx);
      in[k] = ctx->rank + k;
      if (MPI_Ibarrier(comm, &b[k]) != MPI_SUCCESS ||
          MPI_Iallreduce(&in[k], &out[k], 1, MPI_INT, MPI_SUM, comm, &a[k]) != MPI_SUCCESS)
        tl_fail(ctx, "nonblocking: a call failed");
    }
    for (int k = 0; k < 3; k++) {
      MPI_Wait(&b[k], MPI_STATUS_IGNORE);
      check(ctx, n[k], "nonblocking");
    }
    for (int k = 0; k < 3; k++) MPI_Wait(&a[k], MPI_STATUS_IGNORE);
    for (int k = 0; k < 3; k++)
      if (out[k] != ctx->size * (ctx->size - 1) / 2 + k * ctx->size)
        tl_fail(ctx, "nonblocking: allreduce %d gave %d", k, out[k]);
  }
  MPI_Request r;
  long n = enter(ctx);
  int flag = 0;
  MPI_Ibarrier(comm, &r);
  while (!flag && MPI_Test(&r, &flag, MPI_STATUS_IGNORE) == MPI_SUCCESS)
    if (!flag) sched_yield();
  check(ctx, n, "nonblocking (MPI_Test)");
}

static void errors(tl_ctx *ctx) {
  MPI_Request r;
  int rc = MPI_Barrier(MPI_COMM_NULL), c = 0;
  MPI_Error_class(rc, &c);
  if (c != MPI_ERR_COMM) tl_fail(ctx, "MPI_Barrier(MPI_COMM_NULL): class %d", c);
  rc = MPI_Ibarrier(MPI_COMM_NULL, &r);
  MPI_Error_class(rc, &c);
  if (c != MPI_ERR_COMM) tl_fail(ctx, "MPI_Ibarrier(MPI_COMM_NULL): class %d", c);
  rc = MPI_Barrier_init(MPI_COMM_WORLD, MPI_INFO_NULL, NULL);
  MPI_Error_class(rc, &c);
  if (c != MPI_ERR_ARG) tl_fail(ctx, "MPI_Barrier_init(request NULL): class %d", c);
  ctx->checks += 3;
}

int main(int argc, char **argv) {
  tl_ctx ctx;
  MPI_Comm node, rev;
  MPI_Win win;
  MPI_Init(&argc, &argv);
  tl_init(&ctx, "mpi_barrier");
  double t0 = tl_now();
  seed = 12345u + 977u * (unsigned)ctx.rank;
  PMPI_Comm_split_type(MPI_COMM_WORLD, MPI_COMM_TYPE_SHARED, 0, MPI_INFO_NULL, &node);
  int nsize = 0;
  MPI_Comm_size(node, &nsize);
  if (nsize != ctx.size) { /* (the truth needs one window for all) */
    tl_fail(&ctx, "needs every rank on one machine");
    return tl_finish(&ctx, t0) | MPI_Finalize();
  }
  MPI_Aint bytes = ctx.rank == 0 ? (MPI_Aint)ctx.size * (MPI_Aint)sizeof(long) : 0;
  MPI_Aint got;
  int du;
  long *base;
  MPI_Win_allocate_shared(bytes, sizeof(long), MPI_INFO_NULL, node, &base, &win);
  MPI_Win_shared_query(win, 0, &got, &du, &entered);
  for (int q = ctx.rank; q == ctx.rank; q++) __atomic_store_n(&entered[q], 0, __ATOMIC_SEQ_CST);
  PMPI_Barrier(MPI_COMM_WORLD);
  MPI_Comm_split(MPI_COMM_WORLD, 0, ctx.size - ctx.rank, &rev);
  blocking(&ctx, MPI_COMM_WORLD, "blocking");
  blocking(&ctx, rev, "blocking (reversed ranks)");
  persistent(&ctx, MPI_COMM_WORLD);
  nonblocking(&ctx, MPI_COMM_WORLD);
  errors(&ctx);
  PMPI_Barrier(MPI_COMM_WORLD);
  MPI_Comm_free(&rev);
  MPI_Win_free(&win);
  MPI_Comm_free(&node);
  int rc = tl_finish(&ctx, t0);
  MPI_Finalize();
  return rc;
}
