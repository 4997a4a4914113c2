/* forced.c - calls that name their algorithm (collc_<coll>_algo), repeated:
 * the forced-call cache (src/mpi/calls.c) serves each with the algorithm
 * its text names, never with another's plan or a freed one.
 *
 *   mpi_forced [ROUNDS]   (default 20; even)
 *
 * 1. Alternation: each of the nine collectives with a keyed forced path is
 *    called ROUNDS times on one key, its text alternating between two
 *    algorithms, written each time into the same char buffer (one pointer,
 *    new contents). Every result is checked against its closed form (no MPI
 *    involved); tests/run.sh checks with COLLC_STATS that each algorithm
 *    served exactly ROUNDS / 2 calls (a cache that kept the first text's
 *    entry would count them all under one).
 * 2. A text that does not fit after good calls of the same key: MPI_ERR_ARG
 *    every time (an error is never remembered).
 * 3. A derived datatype freed and another made (MPI may reuse the handle)
 *    with another layout, same key otherwise: the result must follow the
 *    new layout.
 * 4. More keys than a communicator caches decisions (evictions free plans,
 *    which must flush the cache), then the first key again (ASan: no use
 *    after free; every result checked).
 * COLLC_TEST_BREAK=1 corrupts one expected value: the program must fail.
 */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collc.h"

#define N 3      /* elements per block */
#define MAXP 16  /* ranks at most */

static int fails, checks, brk;

/* Record one comparison; print the first few failures. */
static void expect(int ok, const char *what, const char *text, int it) {
  checks++;
  if (brk && checks == 1) ok = !ok; /* (the self-test) */
  if (!ok && fails++ < 10) fprintf(stderr, "forced: %s [%s] round %d: wrong\n", what, text, it);
}

/* Rank r's input element i in round it, and its sum over p ranks. */
static int in(int r, int i, int it) { return 5 * r + 3 * i + it; }
static int sum(int p, int i, int it) { return 5 * p * (p - 1) / 2 + p * (3 * i + it); }

/* One call of collective c under text t in round it on comm w, checked. */
static void one(int c, const char *t, int it, MPI_Comm w) {
  int p, r, a[N * MAXP], b[N * MAXP], ok = 1, root = it % 2;
  MPI_Comm_size(w, &p), MPI_Comm_rank(w, &r);
  root %= p;
  for (int i = 0; i < N * p; i++) a[i] = in(r, i, it), b[i] = -1;
  switch (c) {
  case 0:
    collc_allreduce_algo(t, a, b, N, MPI_INT, MPI_SUM, w);
    for (int i = 0; i < N; i++) ok &= b[i] == sum(p, i, it);
    return expect(ok, "allreduce", t, it);
  case 1:
    collc_reduce_scatter_block_algo(t, a, b, N, MPI_INT, MPI_SUM, w);
    for (int i = 0; i < N; i++) ok &= b[i] == sum(p, r * N + i, it);
    return expect(ok, "reduce_scatter_block", t, it);
  case 2:
    collc_reduce_algo(t, a, b, N, MPI_INT, MPI_SUM, root, w);
    for (int i = 0; r == root && i < N; i++) ok &= b[i] == sum(p, i, it);
    return expect(ok, "reduce", t, it);
  case 3:
    collc_allgather_algo(t, a, N, MPI_INT, b, N, MPI_INT, w);
    for (int i = 0; i < N * p; i++) ok &= b[i] == in(i / N, i % N, it);
    return expect(ok, "allgather", t, it);
  case 4:
    for (int i = 0; i < N; i++) a[i] = r == root ? in(root, i, it) : -1;
    collc_bcast_algo(t, a, N, MPI_INT, root, w);
    for (int i = 0; i < N; i++) ok &= a[i] == in(root, i, it);
    return expect(ok, "bcast", t, it);
  case 5:
    collc_alltoall_algo(t, a, N, MPI_INT, b, N, MPI_INT, w);
    for (int i = 0; i < N * p; i++) ok &= b[i] == in(i / N, r * N + i % N, it);
    return expect(ok, "alltoall", t, it);
  case 6:
    collc_gather_algo(t, a, N, MPI_INT, b, N, MPI_INT, root, w);
    for (int i = 0; r == root && i < N * p; i++) ok &= b[i] == in(i / N, i % N, it);
    return expect(ok, "gather", t, it);
  case 7: /* (the root's block i / N of its input goes to rank i / N) */
    collc_scatter_algo(t, a, N, MPI_INT, b, N, MPI_INT, root, w);
    for (int i = 0; i < N; i++) ok &= b[i] == in(root, r * N + i, it);
    return expect(ok, "scatter", t, it);
  default:
    return expect(collc_barrier_algo(t, w) == MPI_SUCCESS, "barrier", t, it);
  }
}

/* The two texts of each collective, alternated (stats: run.sh). */
static const char *const texts[9][2] = {
    {"recexch:flat", "native"}, {"recexch", "cyclic"}, {"tree", "native"},
    {"recexch", "native"},      {"tree", "native"},    {"pairwise", "linear"},
    {"tree", "linear"},         {"tree", "linear"},    {"dissem", "native"}};

/* 2: a text that does not fit, after good calls of that key. */
static void refused(MPI_Comm w) {
  int a[N * MAXP], b[N * MAXP], cls = 0;
  for (int i = 0; i < N * MAXP; i++) a[i] = i;
  for (int k = 0; k < 3; k++) {
    int rc = collc_allreduce_algo("nosuch", a, b, N, MPI_INT, MPI_SUM, w);
    MPI_Error_class(rc, &cls);
    expect(rc != MPI_SUCCESS && cls == MPI_ERR_ARG, "allreduce refused", "nosuch", k);
  }
}

/* 3: allgather of one int per rank, sent through a type made, freed and
 * made again with the int at another place (a hole first, then none). */
static void retyped(MPI_Comm w) {
  int p, r, b[2 * MAXP];
  MPI_Comm_size(w, &p), MPI_Comm_rank(w, &r);
  for (int k = 0; k < 4; k++) { /* (MPI may give the new type the freed one's handle) */
    MPI_Datatype t;
    int a[2] = {k % 2 ? in(r, 0, k) : -7, k % 2 ? -7 : in(r, 0, k)};
    MPI_Type_create_indexed_block(1, 1, (int[]){k % 2 ? 0 : 1}, MPI_INT, &t);
    MPI_Type_commit(&t);
    int ok = 1;
    for (int i = 0; i < 2 * MAXP; i++) b[i] = -1;
    collc_allgather_algo("recexch", a, 1, t, b, 1, MPI_INT, w);
    for (int i = 0; i < p; i++) ok &= b[i] == in(i, 0, k);
    expect(ok, "allgather retyped", "recexch", k);
    MPI_Type_free(&t);
  }
}

/* 4: more keys than the decision cache holds, then the first again. */
static void evictions(MPI_Comm w) {
  int p, a[64], b[64];
  MPI_Comm_size(w, &p);
  for (int pass = 0; pass < 2; pass++)
    for (int n = 1; n <= 40; n++) {
      int ok = 1, r;
      MPI_Comm_rank(w, &r);
      for (int i = 0; i < n; i++) a[i] = in(r, i, n), b[i] = -1;
      collc_allreduce_algo("tree", a, b, n, MPI_INT, MPI_SUM, w);
      for (int i = 0; i < n; i++) ok &= b[i] == sum(p, i, n);
      expect(ok, "allreduce evictions", "tree", n);
    }
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  int rounds = argc > 1 ? atoi(argv[1]) : 20, p, rank, all;
  MPI_Comm_size(MPI_COMM_WORLD, &p), MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  brk = getenv("COLLC_TEST_BREAK") && rank == p - 1;
  MPI_Comm w;
  MPI_Comm_dup(MPI_COMM_WORLD, &w);
  MPI_Comm_set_errhandler(w, MPI_ERRORS_RETURN);
  if (p > MAXP) {
    if (!rank) fprintf(stderr, "forced: at most %d ranks\n", MAXP);
    MPI_Abort(MPI_COMM_WORLD, 2);
  }
  char text[64];
  for (int c = 0; c < 9; c++)
    for (int it = 0; it < rounds; it++) {
      snprintf(text, sizeof text, "%s", texts[c][it % 2]);
      one(c, text, it, w);
    }
  refused(w);
  retyped(w);
  evictions(w);
  MPI_Comm_free(&w);
  PMPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (!rank) printf("forced: %d checks on rank 0, %d failures in all\n", checks, all);
  MPI_Finalize();
  return all != 0;
}
