/* memo_preload.c - the call memo never serves a call from a stale entry.
 *
 * The memo (src/mpi/internal.h) remembers, per collective, the last calls'
 * (communicator handle, key) -> (call-cache entry, state). MPI reuses the
 * handle of a freed communicator, often at once, so a memo that outlived
 * its communicator would run the old communicator's plan (its p, its
 * execution context) on the new one. This unmodified program (run with the
 * library preloaded, default rule or forced algorithms) creates and frees
 * communicators of changing sizes in a loop, calls every collective on
 * each and on MPI_COMM_WORLD in turn with three keys per collective (more
 * than the memo's ways), in place and not, every root, blocking and
 * nonblocking, then the same key on each new communicator (where a memo
 * of the freed one would hit), and checks each result against its value worked out here
 * (no MPI involved). A stale memo gives a wrong p, hence wrong sums and
 * block counts, or (ASan) a use after free. The counted collectives
 * (allgatherv, reduce_scatter, alltoallv; gatherv and scatterv at changing
 * roots: rooted_calls) change their counts from call to call, and bad
 * counts after good calls of the same key (blocking and nonblocking) must
 * get collc's error classes (bad_counts).
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXN 3  /* elements per call: counts 1..MAXN are the three keys */
#define MAXP 16 /* ranks at most */

static int fails, checks;

/* Record one comparison; print the first few failures. */
static void expect(int ok, const char *coll, int p, int n, int it) {
  checks++;
  if (!ok && fails++ < 10) fprintf(stderr, "memo: %s p=%d n=%d iteration %d: wrong\n", coll, p, n, it);
}

/* Rank r's input element i in iteration it. */
static int in(int r, int i, int it) { return 7 * r + 3 * i + it; }
/* The sum of in(r, i, it) over r < p. */
static int sum(int p, int i, int it) { return 7 * p * (p - 1) / 2 + p * (3 * i + it); }

/* Allreduce (in place or not), reduce to root, reduce_scatter_block. */
static void reductions(MPI_Comm c, int n, int it, int root, int in_place) {
  int p, r, a[MAXN * MAXP], b[MAXN * MAXP];
  MPI_Comm_size(c, &p), MPI_Comm_rank(c, &r);
  for (int i = 0; i < n * p; i++) a[i] = in(r, i, it), b[i] = -1;
  MPI_Allreduce(in_place ? MPI_IN_PLACE : a, in_place ? a : b, n, MPI_INT, MPI_SUM, c);
  const int *res = in_place ? a : b;
  int ok = 1;
  for (int i = 0; i < n; i++) ok &= res[i] == sum(p, i, it);
  expect(ok, in_place ? "allreduce in place" : "allreduce", p, n, it);
  for (int i = 0; i < n * p; i++) a[i] = in(r, i, it), b[i] = -1;
  MPI_Reduce(a, b, n, MPI_INT, MPI_SUM, root % p, c);
  ok = 1;
  for (int i = 0; r == root % p && i < n; i++) ok &= b[i] == sum(p, i, it);
  expect(ok, "reduce", p, n, it);
  MPI_Reduce_scatter_block(a, b, n, MPI_INT, MPI_SUM, c);
  ok = 1;
  for (int i = 0; i < n; i++) ok &= b[i] == sum(p, r * n + i, it);
  expect(ok, "reduce_scatter_block", p, n, it);
}

/* Bcast from root, allgather, alltoall, barrier, iallreduce. */
static void moves(MPI_Comm c, int n, int it, int root) {
  int p, r, a[MAXN * MAXP], b[MAXN * MAXP], ok = 1;
  MPI_Comm_size(c, &p), MPI_Comm_rank(c, &r);
  for (int i = 0; i < n; i++) a[i] = r == root % p ? in(root % p, i, it) : -1;
  MPI_Bcast(a, n, MPI_INT, root % p, c);
  for (int i = 0; i < n; i++) ok &= a[i] == in(root % p, i, it);
  expect(ok, "bcast", p, n, it);
  for (int i = 0; i < n * p; i++) a[i] = in(r, i, it), b[i] = -1;
  MPI_Allgather(a, n, MPI_INT, b, n, MPI_INT, c);
  ok = 1;
  for (int i = 0; i < n * p; i++) ok &= b[i] == in(i / n, i % n, it);
  expect(ok, "allgather", p, n, it);
  MPI_Alltoall(a, n, MPI_INT, b, n, MPI_INT, c);
  ok = 1; /* (block s of rank r: elements r*n.. of rank s's input) */
  for (int i = 0; i < n * p; i++) ok &= b[i] == in(i / n, r * n + i % n, it);
  expect(ok, "alltoall", p, n, it);
  MPI_Barrier(c);
  MPI_Request q;
  for (int i = 0; i < n; i++) a[i] = in(r, i, it), b[i] = -1;
  MPI_Iallreduce(a, b, n, MPI_INT, MPI_SUM, c, &q);
  MPI_Wait(&q, MPI_STATUS_IGNORE);
  ok = q == MPI_REQUEST_NULL;
  for (int i = 0; i < n; i++) ok &= b[i] == sum(p, i, it);
  expect(ok, "iallreduce", p, n, it);
}

/* Counts of rank q's block in call (n, it): 0..2, zeros included. */
static int cnt(int q, int n, int it) { return (q + n + it) % 3; }

/* Allgatherv, reduce_scatter and alltoallv whose counts change from call
 * to call (the rule serving them natively at every size, the memo holds
 * them without their counts). */
static void counted(MPI_Comm c, int n, int it) {
  int p, r, vc[MAXP], vd[MAXP], sc[MAXP], sd[MAXP], tot = 0, st = 0, ok = 1;
  int a[3 * MAXP], b[3 * MAXP];
  MPI_Comm_size(c, &p), MPI_Comm_rank(c, &r);
  for (int q = 0; q < p; q++) vc[q] = cnt(q, n, it), vd[q] = tot, tot += vc[q];
  for (int i = 0; i < tot; i++) a[i] = in(r, i, it), b[i] = -1;
  MPI_Allgatherv(a, vc[r], MPI_INT, b, vc, vd, MPI_INT, c);
  for (int q = 0; q < p; q++)
    for (int i = 0; i < vc[q]; i++) ok &= b[vd[q] + i] == in(q, i, it);
  expect(ok, "allgatherv", p, n, it);
  MPI_Reduce_scatter(a, b, vc, MPI_INT, MPI_SUM, c);
  ok = 1;
  for (int i = 0; i < vc[r]; i++) ok &= b[i] == sum(p, vd[r] + i, it);
  expect(ok, "reduce_scatter", p, n, it);
  for (int q = 0; q < p; q++) sc[q] = cnt(r + q, n, it), sd[q] = st, st += sc[q];
  for (int q = 0; q < p; q++)
    for (int i = 0; i < sc[q]; i++) a[sd[q] + i] = 100 * r + 10 * q + i;
  MPI_Alltoallv(a, sc, sd, MPI_INT, b, sc, sd, MPI_INT, c); /* (cnt(r + q) is symmetric) */
  ok = 1;
  for (int q = 0; q < p; q++)
    for (int i = 0; i < sc[q]; i++) ok &= b[sd[q] + i] == 100 * q + 10 * r + i;
  expect(ok, "alltoallv", p, n, it);
}

/* Gather, scatter and their counted forms, blocking and nonblocking, at
 * root `root` % p, the counted ones' counts changing from call to call as
 * counted()'s: natively served they are memoised without their counts,
 * and a plan (forced) must never run from a memo made for other counts. */
static void rooted_calls(MPI_Comm c, int n, int it, int root) {
  int p, r, vc[MAXP], vd[MAXP], tot = 0, ok = 1;
  int a[MAXN * MAXP], b[MAXN * MAXP];
  MPI_Request q = MPI_REQUEST_NULL; /* (blocking: MPI_Wait returns at once) */
  MPI_Comm_size(c, &p), MPI_Comm_rank(c, &r);
  root %= p;
  for (int q2 = 0; q2 < p; q2++) vc[q2] = cnt(q2, n, it), vd[q2] = tot, tot += vc[q2];
  for (int nb = 0; nb < 2; nb++) {
    for (int i = 0; i < n; i++) a[i] = in(r, i, it);
    for (int i = 0; i < n * p; i++) b[i] = -1;
    if (nb) MPI_Igather(a, n, MPI_INT, b, n, MPI_INT, root, c, &q);
    else MPI_Gather(a, n, MPI_INT, b, n, MPI_INT, root, c);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    for (int i = 0; r == root && i < n * p; i++) ok &= b[i] == in(i / n, i % n, it);
    expect(ok, nb ? "igather" : "gather", p, n, it);
    for (int i = 0; i < n * p; i++) a[i] = in(i / n, i % n, it), b[i] = -1;
    if (nb) MPI_Iscatter(a, n, MPI_INT, b, n, MPI_INT, root, c, &q);
    else MPI_Scatter(a, n, MPI_INT, b, n, MPI_INT, root, c);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    for (int i = 0; i < n; i++) ok &= b[i] == in(r, i, it);
    expect(ok, nb ? "iscatter" : "scatter", p, n, it);
    for (int i = 0; i < vc[r]; i++) a[i] = in(r, i, it);
    for (int i = 0; i < tot; i++) b[i] = -1;
    if (nb) MPI_Igatherv(a, vc[r], MPI_INT, b, vc, vd, MPI_INT, root, c, &q);
    else MPI_Gatherv(a, vc[r], MPI_INT, b, vc, vd, MPI_INT, root, c);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    for (int q2 = 0; r == root && q2 < p; q2++)
      for (int i = 0; i < vc[q2]; i++) ok &= b[vd[q2] + i] == in(q2, i, it);
    expect(ok, nb ? "igatherv" : "gatherv", p, n, it);
    for (int q2 = 0; q2 < p; q2++)
      for (int i = 0; i < vc[q2]; i++) a[vd[q2] + i] = in(q2, i, it);
    for (int i = 0; i < MAXN; i++) b[i] = -1;
    if (nb) MPI_Iscatterv(a, vc, vd, MPI_INT, b, vc[r], MPI_INT, root, c, &q);
    else MPI_Scatterv(a, vc, vd, MPI_INT, b, vc[r], MPI_INT, root, c);
    MPI_Wait(&q, MPI_STATUS_IGNORE);
    for (int i = 0; i < vc[r]; i++) ok &= b[i] == in(r, i, it);
    expect(ok, nb ? "iscatterv" : "scatterv", p, n, it);
  }
}

/* Bad count arguments after good calls of the same key on c (errors
 * returned): a memo of the good ones must not hand them to the library,
 * which may crash on them (MPICH 4.0.2 on a negative count): MPI_ERR_COUNT
 * for a negative count, MPI_ERR_ARG for a missing count array. */
static void bad_counts(MPI_Comm world) {
  MPI_Comm c;
  int p, cls, v[MAXP] = {0}, d[MAXP] = {0}, neg[MAXP] = {0}, a[4] = {0}, b[4];
  MPI_Comm_dup(world, &c);
  MPI_Comm_set_errhandler(c, MPI_ERRORS_RETURN);
  MPI_Comm_size(c, &p);
  neg[p - 1] = -1;
  MPI_Request q[3];
  MPI_Status sts[3]; /* (not MPI_STATUSES_IGNORE: GCC 12 warns of a zero-size array) */
  for (int rep = 0; rep < 3; rep++) { /* (the second call and on: memo hits) */
    MPI_Allgatherv(a, 0, MPI_INT, b, v, d, MPI_INT, c);
    MPI_Reduce_scatter(a, b, v, MPI_INT, MPI_SUM, c);
    MPI_Alltoallv(a, v, d, MPI_INT, b, v, d, MPI_INT, c);
    MPI_Iallgatherv(a, 0, MPI_INT, b, v, d, MPI_INT, c, &q[0]);
    MPI_Ireduce_scatter(a, b, v, MPI_INT, MPI_SUM, c, &q[1]);
    MPI_Ialltoallv(a, v, d, MPI_INT, b, v, d, MPI_INT, c, &q[2]);
    MPI_Waitall(3, q, sts);
  }
  const struct { const char *what; int rc, want; } t[] = {
      {"allgatherv negative count", MPI_Allgatherv(a, 0, MPI_INT, b, neg, d, MPI_INT, c), MPI_ERR_COUNT},
      {"allgatherv no counts", MPI_Allgatherv(a, 0, MPI_INT, b, NULL, d, MPI_INT, c), MPI_ERR_ARG},
      {"reduce_scatter negative count", MPI_Reduce_scatter(a, b, neg, MPI_INT, MPI_SUM, c), MPI_ERR_COUNT},
      {"reduce_scatter no counts", MPI_Reduce_scatter(a, b, NULL, MPI_INT, MPI_SUM, c), MPI_ERR_ARG},
      {"alltoallv negative count", MPI_Alltoallv(a, v, d, MPI_INT, b, neg, d, MPI_INT, c), MPI_ERR_COUNT},
      {"alltoallv no counts", MPI_Alltoallv(a, NULL, d, MPI_INT, b, v, d, MPI_INT, c), MPI_ERR_ARG},
      {"iallgatherv negative count",
       MPI_Iallgatherv(a, 0, MPI_INT, b, neg, d, MPI_INT, c, &q[0]), MPI_ERR_COUNT},
      {"ireduce_scatter no counts", MPI_Ireduce_scatter(a, b, NULL, MPI_INT, MPI_SUM, c, &q[0]),
       MPI_ERR_ARG},
      {"ialltoallv negative count",
       MPI_Ialltoallv(a, v, d, MPI_INT, b, neg, d, MPI_INT, c, &q[0]), MPI_ERR_COUNT}};
  for (size_t i = 0; i < sizeof t / sizeof t[0]; i++) {
    MPI_Error_class(t[i].rc, &cls);
    checks++;
    if (cls != t[i].want && fails++ < 10)
      fprintf(stderr, "memo: %s gave class %d, want %d\n", t[i].what, cls, t[i].want);
  }
  MPI_Comm_free(&c);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rank, size, iters = argc > 1 ? atoi(argv[1]) : 40;
  MPI_Comm_rank(MPI_COMM_WORLD, &rank), MPI_Comm_size(MPI_COMM_WORLD, &size);
  if (size > MAXP) MPI_Abort(MPI_COMM_WORLD, 2);
  for (int it = 0; it < iters; it++) {
    MPI_Comm c; /* sizes change: groups of world ranks by rank % (1 + it % 3) */
    MPI_Comm_split(MPI_COMM_WORLD, rank % (1 + it % 3), rank, &c);
    for (int rep = 0; rep < 4; rep++)
      for (int n = 1; n <= MAXN; n++) {
        MPI_Comm on = (rep + n) % 2 ? c : MPI_COMM_WORLD;
        reductions(on, n, it, it + rep, (it + rep + n) % 2);
        moves(on, n, it, it + rep);
        counted(on, n, it);
        rooted_calls(on, n, it, it + rep);
      }
    MPI_Comm_free(&c);
  }
  for (int it = 0; it < iters; it++) { /* the same key on each new communicator */
    MPI_Comm c;
    MPI_Comm_split(MPI_COMM_WORLD, rank % (1 + it % 3), rank, &c);
    for (int rep = 0; rep < 2; rep++) reductions(c, 1, it, 0, 0), moves(c, 1, it, 0);
    MPI_Comm_free(&c);
  }
  if (!getenv("COLLC_DISABLE")) /* (disabled, bad counts are the library's: they may crash it) */
    bad_counts(MPI_COMM_WORLD);
  int all = 0;
  PMPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("memo_preload np=%d: %s (%d failures, %d checks per rank)\n", size,
           all ? "FAIL" : "PASS", all, checks);
  MPI_Finalize();
  return all != 0;
}
