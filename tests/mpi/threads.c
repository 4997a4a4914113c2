/* threads.c - collectives from several threads at once (MPI_THREAD_MULTIPLE),
 * each thread on its own communicator, blocking and nonblocking, every
 * result checked against the native collective (PMPI_<coll>, blocking) on
 * the same input.
 *
 * THREADS threads per rank; thread t works on comms[t], a duplicate of
 * MPI_COMM_WORLD made before any thread starts (in thread order, so every
 * rank's comms[t] is the same communicator). Iteration it of thread t runs
 * collective it % 8 (allreduce, bcast, allgather, alltoall,
 * reduce_scatter_block, reduce, allgatherv, reduce_scatter: the counted
 * ones with count ints from every rank, packed) with count (it / 8) % 5 of
 * {0, 1, 7, 100, 1000} ints, in mode (it / 30 + t) % 4:
 *   0  the MPI_ call (collc's selection: the default rule, so node-aware
 *      plans and the native library both appear);
 *   1  MPI_I<coll> (selection as MPI_I<coll>'s);
 *   2  collc_<coll>_algo with an explicit algorithm (recexch, tree,
 *      cyclic, bruck, torus, hier, shm ...), so collc's own plans run in
 *      several threads at once;
 *   3  collc_i<coll>_algo with an explicit algorithm.
 * Nonblocking modes post two collectives (this iteration's and the next
 * one's) back to back, run a third (the one after) with the blocking call
 * of the same kind while they are in flight, compute all three references
 * with PMPI, then complete the two with MPI_Wait, MPI_Waitall or an
 * MPI_Test loop (by iteration). Operations rotate over SUM, MAX and BXOR
 * on MPI_INT, so results are exact; allreduce and allgather run in place
 * at times; roots of reduce and bcast move. Every output buffer (4 ints of
 * slack past its end included) must equal the reference's byte for byte,
 * and send buffers must be unchanged. Before the loop, odd threads post
 * two nonblocking calls on their fresh communicator (see work()).
 *
 * COLLC_TEST_ITERS (default 1000) iterations per thread; COLLC_TEST_THREADS
 * (1 to 4, default 4) threads run (fewer: to tell threading bugs apart).
 * Without MPI_THREAD_MULTIPLE from the library the test prints SKIP and
 * passes.
 * COLLC_TEST_BREAK=N corrupts thread 0's N-th nonempty compared result on
 * the last rank (the program must then fail). Exit status 1 on any
 * mismatch or error. */
#include <pthread.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include "collc.h"
#include "testlib.h"

#define THREADS 4
#define SLACK 4 /* ints past every buffer's end that must stay untouched */
#define THREADS_MAXP 64 /* ranks the counted collectives' arrays hold */

enum { C_ALLREDUCE, C_BCAST, C_ALLGATHER, C_ALLTOALL, C_RSB, C_REDUCE, C_AGV, C_RS, C_COUNT };
static const char *const coll_names[C_COUNT] = {"allreduce", "bcast", "allgather", "alltoall",
                                                "reduce_scatter_block", "reduce", "allgatherv",
                                                "reduce_scatter"};
static const int counts[] = {0, 1, 7, 100, 1000};
#define NCOUNTS (int)(sizeof counts / sizeof counts[0])

/* Explicit algorithms per collective (each fits every p; hier and shm use
 * the node segment: nonblocking ones are native until a blocking call of
 * the same kind has set it up). */
static const char *const algos[C_COUNT][5] = {
    {"recexch", "tree", "cyclic", "hier:node=tree", "shm"},
    {"tree", "tree:2", "hier", "tree:3", NULL},
    {"recexch", "cyclic", "hier", NULL, NULL},
    {"bruck", "linear", "pairwise", "torus:d=2:linear", "bruck:3"},
    {"recexch", "cyclic", "hier", NULL, NULL},
    {"tree", "tree:3", "hier", NULL, NULL},
    {"recexch", "cyclic", "hier", NULL, NULL},
    {"recexch", "cyclic", "hier", NULL, NULL},
};

static MPI_Comm comms[THREADS];

typedef struct {
  int t;       /* thread index */
  int iters;   /* iterations */
  tl_ctx ctx;  /* this thread's failures and checks */
} worker;

/* One collective call and its reference: buffers of ints. */
typedef struct {
  int coll, n, root, in_place, it;
  MPI_Op op;
  const char *opname;
  const char *algo; /* NULL: the MPI_ call */
  int nb;           /* nonblocking */
  int *in, *inc, *out, *ref; /* input, its copy, ours, the reference's */
  int vc[THREADS_MAXP], vd[THREADS_MAXP]; /* allgatherv, reduce_scatter: counts, displs */
  size_t nin, nout;          /* ints (without the slack) */
  MPI_Request req;
} call;

/* Record a failure (whole lines even with other threads printing). */
#define FAIL(w, ...) \
  do { flockfile(stdout); tl_fail(&(w)->ctx, __VA_ARGS__); funlockfile(stdout); } while (0)

/* Describe c in failure messages. */
static const char *describe(const call *c, char *buf, size_t len) {
  snprintf(buf, len, "%s%s %s count %d %s root %d%s iteration %d", c->nb ? "i" : "",
           coll_names[c->coll], c->algo ? c->algo : "(MPI_ call)", c->n, c->opname, c->root,
           c->in_place ? " in place" : "", c->it);
  return buf;
}

static void call_free(call *c) { free(c->in), free(c->inc), free(c->out), free(c->ref); }

/* Set up c: collective coll with count n, iteration it of thread t; input
 * values depend on (rank, thread, iteration, position). 0, or 1 when out of
 * memory (failure recorded). */
static int call_make(worker *w, call *c, int coll, int n, int it, int mode, int p, int rank) {
  static const MPI_Op ops[] = {MPI_SUM, MPI_MAX, MPI_BXOR};
  static const char *const opnames[] = {"SUM", "MAX", "BXOR"};
  memset(c, 0, sizeof *c);
  if ((coll == C_AGV || coll == C_RS) && p > THREADS_MAXP) /* (their arrays would not hold p) */
    coll = coll == C_AGV ? C_ALLGATHER : C_RSB;
  c->coll = coll, c->n = n, c->it = it, c->req = MPI_REQUEST_NULL;
  c->op = ops[(it / 7) % 3], c->opname = opnames[(it / 7) % 3];
  c->root = (it / 11) % p;
  c->nb = mode & 1;
  if (mode >= 2) {
    int k = 0;
    while (k < 5 && algos[coll][k]) k++;
    c->algo = algos[coll][(it / 120 + w->t) % k];
  }
  c->in_place = (coll == C_ALLREDUCE || coll == C_ALLGATHER || coll == C_AGV) && it % 5 == 3;
  for (int q = 0; q < p && q < THREADS_MAXP; q++) c->vc[q] = n, c->vd[q] = q * n;
  size_t np = (size_t)n * (size_t)p;
  switch (coll) {
  case C_ALLREDUCE: c->nin = n, c->nout = n; break;
  case C_BCAST: c->nin = 0, c->nout = n; break;
  case C_ALLGATHER: c->nin = n, c->nout = np; break;
  case C_ALLTOALL: c->nin = np, c->nout = np; break;
  case C_RSB: case C_RS: c->nin = np, c->nout = n; break;
  case C_AGV: c->nin = n, c->nout = np; break;
  default: c->nin = n, c->nout = n; break; /* reduce */
  }
  size_t bi = (c->nin + SLACK) * sizeof(int), bo = (c->nout + SLACK) * sizeof(int);
  c->in = malloc(bi), c->inc = malloc(bi), c->out = malloc(bo), c->ref = malloc(bo);
  if (!c->in || !c->inc || !c->out || !c->ref) {
    FAIL(w, "out of memory");
    call_free(c);
    return 1;
  }
  unsigned hi = (unsigned)rank << 24 | (unsigned)w->t << 22 | ((unsigned)it & 0x3ff) << 12;
  for (size_t i = 0; i < c->nin + SLACK; i++) c->in[i] = (int)(hi ^ (unsigned)(i * 2654435761u >> 8));
  memcpy(c->inc, c->in, bi);
  memset(c->out, TL_SENTINEL, bo);
  if (coll == C_BCAST && rank == c->root)
    for (size_t i = 0; i < c->nout; i++) c->out[i] = (int)(hi | (unsigned)i);
  if (c->in_place && coll == C_ALLREDUCE) memcpy(c->out, c->in, (size_t)n * sizeof(int));
  if (c->in_place && (coll == C_ALLGATHER || coll == C_AGV))
    memcpy(c->out + (size_t)rank * n, c->in, (size_t)n * sizeof(int));
  memcpy(c->ref, c->out, bo);
  return 0;
}

/* Run (or, nonblocking, post) c on comm: collc's side. */
static int call_run(call *c, MPI_Comm comm) {
  const void *sb = c->in_place ? MPI_IN_PLACE : (const void *)c->in;
  int n = c->n;
  void *rb = c->out;
  MPI_Request *q = &c->req;
  const char *a = c->algo;
  switch (c->coll) {
  case C_ALLREDUCE:
    if (!a) return c->nb ? MPI_Iallreduce(sb, rb, n, MPI_INT, c->op, comm, q)
                         : MPI_Allreduce(sb, rb, n, MPI_INT, c->op, comm);
    return c->nb ? collc_iallreduce_algo(a, sb, rb, n, MPI_INT, c->op, comm, q)
                 : collc_allreduce_algo(a, sb, rb, n, MPI_INT, c->op, comm);
  case C_BCAST:
    if (!a) return c->nb ? MPI_Ibcast(rb, n, MPI_INT, c->root, comm, q)
                         : MPI_Bcast(rb, n, MPI_INT, c->root, comm);
    return c->nb ? collc_ibcast_algo(a, rb, n, MPI_INT, c->root, comm, q)
                 : collc_bcast_algo(a, rb, n, MPI_INT, c->root, comm);
  case C_ALLGATHER:
    if (!a) return c->nb ? MPI_Iallgather(sb, n, MPI_INT, rb, n, MPI_INT, comm, q)
                         : MPI_Allgather(sb, n, MPI_INT, rb, n, MPI_INT, comm);
    return c->nb ? collc_iallgather_algo(a, sb, n, MPI_INT, rb, n, MPI_INT, comm, q)
                 : collc_allgather_algo(a, sb, n, MPI_INT, rb, n, MPI_INT, comm);
  case C_ALLTOALL:
    if (!a) return c->nb ? MPI_Ialltoall(sb, n, MPI_INT, rb, n, MPI_INT, comm, q)
                         : MPI_Alltoall(sb, n, MPI_INT, rb, n, MPI_INT, comm);
    return c->nb ? collc_ialltoall_algo(a, sb, n, MPI_INT, rb, n, MPI_INT, comm, q)
                 : collc_alltoall_algo(a, sb, n, MPI_INT, rb, n, MPI_INT, comm);
  case C_RSB:
    if (!a) return c->nb ? MPI_Ireduce_scatter_block(sb, rb, n, MPI_INT, c->op, comm, q)
                         : MPI_Reduce_scatter_block(sb, rb, n, MPI_INT, c->op, comm);
    return c->nb ? collc_ireduce_scatter_block_algo(a, sb, rb, n, MPI_INT, c->op, comm, q)
                 : collc_reduce_scatter_block_algo(a, sb, rb, n, MPI_INT, c->op, comm);
  case C_AGV:
    if (!a) return c->nb ? MPI_Iallgatherv(sb, n, MPI_INT, rb, c->vc, c->vd, MPI_INT, comm, q)
                         : MPI_Allgatherv(sb, n, MPI_INT, rb, c->vc, c->vd, MPI_INT, comm);
    return c->nb ? collc_iallgatherv_algo(a, sb, n, MPI_INT, rb, c->vc, c->vd, MPI_INT, comm, q)
                 : collc_allgatherv_algo(a, sb, n, MPI_INT, rb, c->vc, c->vd, MPI_INT, comm);
  case C_RS:
    if (!a) return c->nb ? MPI_Ireduce_scatter(sb, rb, c->vc, MPI_INT, c->op, comm, q)
                         : MPI_Reduce_scatter(sb, rb, c->vc, MPI_INT, c->op, comm);
    return c->nb ? collc_ireduce_scatter_algo(a, sb, rb, c->vc, MPI_INT, c->op, comm, q)
                 : collc_reduce_scatter_algo(a, sb, rb, c->vc, MPI_INT, c->op, comm);
  default:
    if (!a) return c->nb ? MPI_Ireduce(sb, rb, n, MPI_INT, c->op, c->root, comm, q)
                         : MPI_Reduce(sb, rb, n, MPI_INT, c->op, c->root, comm);
    return c->nb ? collc_ireduce_algo(a, sb, rb, n, MPI_INT, c->op, c->root, comm, q)
                 : collc_reduce_algo(a, sb, rb, n, MPI_INT, c->op, c->root, comm);
  }
}

/* The reference: the MPI library's blocking collective on the same input. */
static int call_ref(call *c, MPI_Comm comm) {
  const void *sb = c->in_place ? MPI_IN_PLACE : (const void *)c->in;
  int n = c->n;
  void *rb = c->ref;
  switch (c->coll) {
  case C_ALLREDUCE: return PMPI_Allreduce(sb, rb, n, MPI_INT, c->op, comm);
  case C_BCAST: return PMPI_Bcast(rb, n, MPI_INT, c->root, comm);
  case C_ALLGATHER: return PMPI_Allgather(sb, n, MPI_INT, rb, n, MPI_INT, comm);
  case C_ALLTOALL: return PMPI_Alltoall(sb, n, MPI_INT, rb, n, MPI_INT, comm);
  case C_RSB: return PMPI_Reduce_scatter_block(sb, rb, n, MPI_INT, c->op, comm);
  case C_AGV: return PMPI_Allgatherv(sb, n, MPI_INT, rb, c->vc, c->vd, MPI_INT, comm);
  case C_RS: return PMPI_Reduce_scatter(sb, rb, c->vc, MPI_INT, c->op, comm);
  default: return PMPI_Reduce(sb, rb, n, MPI_INT, c->op, c->root, comm);
  }
}

/* Compare c's result with the reference (not a reduce's leaves: their
 * receive buffer is not significant). */
static void call_check(worker *w, call *c, int rank) {
  char d[200];
  w->ctx.checks++;
  if (memcmp(c->in, c->inc, (c->nin + SLACK) * sizeof(int)))
    FAIL(w, "%s: input buffer modified", describe(c, d, sizeof d));
  if (c->coll == C_REDUCE && rank != c->root) return;
  if (c->nout > 0 && ++w->ctx.nonempty == w->ctx.break_at && rank == w->ctx.size - 1)
    c->out[0] ^= 0x5a; /* self-test: this check must now fail */
  size_t bytes = (c->nout + SLACK) * sizeof(int);
  long at = tl_first_diff(c->out, c->ref, bytes);
  if (at >= 0)
    FAIL(w, "%s: differs from PMPI at int %ld of %zu (+%d slack): got %d want %d",
         describe(c, d, sizeof d), at / 4, c->nout, SLACK, c->out[at / 4], c->ref[at / 4]);
}

/* Complete the requests of c[0..k-1] the way number way says. */
static int complete(call *c, int k, int way) {
  int rc = MPI_SUCCESS;
  if (way == 1) {
    MPI_Request q[2];
    MPI_Status st[2];
    for (int i = 0; i < k; i++) q[i] = c[i].req;
    rc = MPI_Waitall(k, q, st);
    for (int i = 0; i < k; i++) c[i].req = q[i];
    return rc;
  }
  for (int i = k - 1; i >= 0 && !rc; i--) { /* (the later one first) */
    if (way == 0) {
      rc = MPI_Wait(&c[i].req, MPI_STATUS_IGNORE);
      continue;
    }
    for (int flag = 0; !rc && !flag;)
      if (!(rc = MPI_Test(&c[i].req, &flag, MPI_STATUS_IGNORE)) && !flag) sched_yield();
  }
  return rc;
}

static void *work(void *arg) {
  worker *w = arg;
  MPI_Comm comm = comms[w->t];
  int p, rank, rc0;
  char d[200];
  MPI_Comm_size(comm, &p);
  MPI_Comm_rank(comm, &rank);
  /* Odd threads begin with two nonblocking calls: collc makes the private
   * communicator with MPI_Comm_idup at the first, and any thread's
   * progress may complete it, also while this one posts the second. Both
   * are completed before the next call, a blocking node-aware one: that
   * discovers the node layout (which nonblocking calls cannot:
   * collc_i<coll>_algo("hier") is MPI_ERR_ARG before it) with
   * MPI_Comm_split_type, and Open MPI 4.1 hangs in MPI_Comm_split_type on a
   * communicator with an MPI_Comm_idup pending (without collc too). */
  int one = 1, got = 0, two[2] = {0, 0};
  MPI_Request q[2] = {MPI_REQUEST_NULL, MPI_REQUEST_NULL};
  if (w->t % 2) {
    if ((rc0 = collc_iallreduce_algo("recexch", &one, &two[0], 1, MPI_INT, MPI_SUM, comm, &q[0])))
      FAIL(w, "warm-up iallreduce recexch: returned %d", rc0);
    nanosleep(&(struct timespec){0, 20 * 1000 * 1000}, NULL); /* (others progress: 20 ms) */
    if ((rc0 = collc_iallreduce_algo("recexch", &one, &two[1], 1, MPI_INT, MPI_SUM, comm, &q[1])))
      FAIL(w, "warm-up iallreduce recexch: returned %d", rc0);
    MPI_Status st[2];
    if ((rc0 = MPI_Waitall(2, q, st)) || two[0] != p || two[1] != p)
      FAIL(w, "warm-up iallreduce recexch: MPI_Waitall returned %d, sums %d %d (want %d)", rc0,
           two[0], two[1], p);
  }
  if ((rc0 = collc_allreduce_algo("hier", &one, &got, 1, MPI_INT, MPI_SUM, comm)) || got != p)
    FAIL(w, "warm-up hier allreduce: returned %d, sum %d (want %d)", rc0, got, p);
  for (int it = 0; it < w->iters;) {
    int mode = (it / 30 + w->t) % 4, k = mode & 1 ? 3 : 1;
    call c[3];
    int made = 0, rc;
    for (; made < k; made++) /* (nonblocking modes: the third call is blocking) */
      if (call_make(w, &c[made], (it + made) % C_COUNT, counts[(it + made) / C_COUNT % NCOUNTS],
                    it + made, made == 2 ? mode - 1 : mode, p, rank))
        break;
    if (made < k) { /* out of memory on this rank: the others would hang */
      FAIL(w, "giving up");
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
    for (int i = 0; i < k; i++)
      if ((rc = call_run(&c[i], comm)) != MPI_SUCCESS)
        FAIL(w, "%s: returned %d", describe(&c[i], d, sizeof d), rc);
    for (int i = 0; i < k; i++)
      if ((rc = call_ref(&c[i], comm)) != MPI_SUCCESS)
        FAIL(w, "%s: the reference returned %d", describe(&c[i], d, sizeof d), rc);
    if (k > 1 && (rc = complete(c, 2, (it / 4) % 3)) != MPI_SUCCESS)
      FAIL(w, "%s: completion (way %d) returned %d", describe(&c[0], d, sizeof d), (it / 4) % 3,
           rc);
    for (int i = 0; i < k; i++) {
      if (c[i].nb && c[i].req != MPI_REQUEST_NULL)
        FAIL(w, "%s: request not MPI_REQUEST_NULL after completion", describe(&c[i], d, sizeof d));
      call_check(w, &c[i], rank);
      call_free(&c[i]);
    }
    it += k;
  }
  return NULL;
}

int main(int argc, char **argv) {
  int provided = MPI_THREAD_SINGLE, rank;
  MPI_Init_thread(&argc, &argv, MPI_THREAD_MULTIPLE, &provided);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  if (provided < MPI_THREAD_MULTIPLE) {
    if (rank == 0)
      printf("threads: SKIP (the MPI library provides thread level %d, not "
             "MPI_THREAD_MULTIPLE)\n", provided);
    MPI_Finalize();
    return 0;
  }
  tl_ctx ctx;
  tl_init(&ctx, "threads");
  double t0 = tl_now();
  worker w[THREADS];
  pthread_t th[THREADS];
  int iters = tl_env_int("COLLC_TEST_ITERS", 1000), started = 0;
  int nth = tl_env_int("COLLC_TEST_THREADS", THREADS); /* (fewer: to tell threading bugs apart) */
  if (nth < 1 || nth > THREADS) nth = THREADS;
  for (int t = 0; t < THREADS; t++) { /* in thread order: the same comms[t] on every rank */
    MPI_Comm_dup(MPI_COMM_WORLD, &comms[t]);
    MPI_Comm_set_errhandler(comms[t], MPI_ERRORS_RETURN);
  }
  for (int t = 0; t < THREADS; t++) {
    w[t] = (worker){.t = t, .iters = iters, .ctx = ctx};
    if (t) w[t].ctx.break_at = 0; /* the self-test corrupts one result: thread 0's */
  }
  for (; started < nth; started++)
    if (pthread_create(&th[started], NULL, work, &w[started])) {
      tl_fail(&ctx, "cannot create thread %d", started);
      MPI_Abort(MPI_COMM_WORLD, 1);
    }
  for (int t = 0; t < started; t++) {
    pthread_join(th[t], NULL);
    ctx.fails += w[t].ctx.fails, ctx.checks += w[t].ctx.checks;
  }
  for (int t = 0; t < THREADS; t++) MPI_Comm_free(&comms[t]);
  if (rank == 0)
    printf("threads: %d threads x %d iterations per rank, %.1f s\n", nth, iters,
           tl_now() - t0);
  int rc = tl_finish(&ctx, t0);
  MPI_Finalize();
  return rc;
}
