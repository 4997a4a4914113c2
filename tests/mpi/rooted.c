/* rooted.c - MPI_Gather, MPI_Scatter, MPI_Gatherv, MPI_Scatterv over MPI
 * (blocking, nonblocking, persistent), every algorithm forced, against
 * PMPI_ on the same input, byte for byte over the whole receive buffer
 * (sentinels and gaps included).
 *
 * Algorithms (collc_*_algo): linear, hier, tree, tree:2,3, shm (gather
 * and scatter, shm at the first and last root and 700 elements only: it is
 * slow oversubscribed; not on virtual nodes, COLLC_NODE_SIZE, where it does
 * not fit; the counted forms: linear, hier, tree, tree:3, their hier and
 * tree after the agreement round on the root's counts), native, and the
 * MPI_ entry point
 * (the selection: COLLC_<COLL> or the rule; the call cache's hits among
 * them). Gather and scatter: every root; 0, 5 and 700 elements per
 * block, in place at the root and not; at 5, types MPI_INT, a resized
 * vector(2, 1, 2, int) with holes, and a send (gather) or receive
 * (scatter) type contiguous(n, int) against n ints. Gatherv and scatterv:
 * count vectors all zero and primes at every root, each rank in turn
 * holding everything (at it and at the next rank as root), random ones
 * with zeros at the first and last rank (the same on every rank, from a
 * shared seed);
 * layouts packed, reversed rank order with gaps, negative displacements,
 * in place at the root; types MPI_INT, contiguous(2, int), the root's
 * own block typed contiguous(c, int) against c ints, and the root's blocks
 * contiguous(2, int) against 2c ints elsewhere (not for a forced tree or
 * hier, which refuse elements of two sizes; through COLLC_GATHERV=tree the
 * default rule serves them). Nonblocking: MPI_I*
 * of every collective for every root outstanding at once (a gather's
 * derived type freed meanwhile), then one MPI_Waitall; persistent:
 * MPI_Gather_init, MPI_Scatter_init, MPI_Gatherv_init, MPI_Scatterv_init
 * per root (the counted forms with the root's own block typed
 * contiguous(c, int): copied at each start),
 * started three times. Bad arguments: a root out of range (MPI_ERR_ROOT),
 * a negative count (MPI_ERR_COUNT), NULL counts at the root
 * (MPI_ERR_ARG), MPI_IN_PLACE off the root (MPI_ERR_BUFFER): each raised
 * before any message, so only the ranks that err make the call.
 * Self-test: COLLC_TEST_BREAK=N corrupts the N-th nonempty result on the
 * last rank: the program must fail. COLLC_TEST_QUICK set (MPICH, slow when
 * oversubscribed): no tree:2,3 (counted: no tree:3), and of the holder-of-everything vectors
 * only rank 0's. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "collc.h"
#include "testlib.h"
#include "countvec.h"

#define MAXB (8 * 700 * 16 + 64) /* bytes of the largest buffer */

enum { G, S, GV, SV };
static const char *const names[] = {"gather", "scatter", "gatherv", "scatterv"};
static int rank, size, fails, nonempty, break_at, quick;
static long checks;
static unsigned char in[MAXB], got[MAXB], want[MAXB];

/* Compare n bytes of got and want; one line on mismatch. */
static void compare(const char *what, const char *algo, size_t n, int any) {
  checks++;
  if (any && ++nonempty == break_at && rank == size - 1 && n) got[n / 2] ^= 1;
  for (size_t i = 0; i < n; i++)
    if (got[i] != want[i]) {
      printf("FAIL rank %d: %s %s p=%d: byte %zu differs\n", rank, what, algo, size, i);
      fails++;
      return;
    }
}

static void fail_rc(const char *what, const char *algo, int rc, int rr) {
  printf("FAIL rank %d: %s %s p=%d: rc %d (native %d)\n", rank, what, algo, size, rc, rr);
  fails++;
}

/* Fresh buffers: input distinct per rank, outputs sentinels. */
static void fresh(void) {
  for (size_t i = 0; i < MAXB; i++) in[i] = (unsigned char)(rank * 37 + i * 11 + 1);
  memset(got, 0xA5, MAXB), memset(want, 0xA5, MAXB);
}

/* The types of case ty for n elements per block: *t the block's element
 * type (count *tc per block), *x the other side's (count *xc). */
static void types_of(int ty, int n, MPI_Datatype *t, int *tc, MPI_Datatype *x, int *xc) {
  MPI_Datatype vec;
  *t = *x = MPI_INT, *tc = *xc = n;
  if (ty == 1) {
    MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
    MPI_Type_create_resized(vec, 0, 4 * sizeof(int), t), MPI_Type_commit(t);
    MPI_Type_free(&vec);
    *x = *t;
  }
  if (ty == 2) MPI_Type_contiguous(n, MPI_INT, x), MPI_Type_commit(x), *xc = 1;
}

static void types_free(int ty, MPI_Datatype *t, MPI_Datatype *x) {
  if (ty == 1) MPI_Type_free(t);
  if (ty == 2) MPI_Type_free(x);
}

/* One gather or scatter (coll G, S) of n elements at root under algo
 * (NULL: the MPI_ entry point), type case ty, in place at the root or not. */
static void one_uniform(int coll, const char *algo, int n, int root, int ty, int ip) {
  MPI_Datatype t, x;
  int tc, xc;
  char what[96];
  types_of(ty, n, &t, &tc, &x, &xc);
  MPI_Aint lb, ext;
  MPI_Type_get_extent(t, &lb, &ext);
  size_t block = (size_t)tc * (size_t)ext, bytes = (size_t)size * block;
  int me = rank == root, rc, rr;
  fresh();
  if (coll == G) {
    const void *sb = ip && me ? MPI_IN_PLACE : in;
    if (ip && me) memcpy(got + root * block, in, block), memcpy(want + root * block, in, block);
    rc = algo ? collc_gather_algo(algo, sb, xc, x, got, tc, t, root, MPI_COMM_WORLD)
              : MPI_Gather(sb, xc, x, got, tc, t, root, MPI_COMM_WORLD);
    rr = PMPI_Gather(sb, xc, x, want, tc, t, root, MPI_COMM_WORLD);
  } else {
    void *rb = ip && me ? MPI_IN_PLACE : got, *rw = ip && me ? MPI_IN_PLACE : want;
    rc = algo ? collc_scatter_algo(algo, in, tc, t, rb, xc, x, root, MPI_COMM_WORLD)
              : MPI_Scatter(in, tc, t, rb, xc, x, root, MPI_COMM_WORLD);
    rr = PMPI_Scatter(in, tc, t, rw, xc, x, root, MPI_COMM_WORLD);
    bytes = block;
  }
  snprintf(what, sizeof what, "%s n=%d root=%d type=%d%s", names[coll], n, root, ty,
           ip ? " in place" : "");
  if (rc || rr) fail_rc(what, algo ? algo : "MPI", rc, rr);
  else compare(what, algo ? algo : "MPI", bytes, n > 0 && (coll == S || me));
  types_free(ty, &t, &x);
}

/* Displacements of counts c in layout lay (0 packed, 1 reversed with gaps,
 * 2 shifted 5 below the buffer); returns the span in elements. */
static int displs_of(const int *c, int lay, int *d) {
  int span = 0, shift = lay == 2 ? 5 : 0;
  for (int q = 0, at = 0; q < size; q++) d[q] = at, at += c[q];
  if (lay == 1)
    for (int q = size - 1, at = 2; q >= 0; q--) d[q] = at, at += c[q] + 1 + q % 3;
  for (int q = 0; q < size; q++) {
    if (d[q] + c[q] > span) span = d[q] + c[q];
    d[q] -= shift;
  }
  return span;
}

/* One gatherv or scatterv (coll GV, SV) of counts c at root, layout lay (3:
 * packed, in place at the root), type case ty (0 int, 1 contiguous(2,
 * int), 2 the root's own block typed contiguous(c, int), 3 the root's
 * blocks contiguous(2, int) against 2c ints elsewhere: elements of two
 * sizes, which the tree does not take), under algo. */
static void one_counted(int coll, const char *algo, const int *c, int root, int lay, int ty) {
  int d[64], me = rank == root, ip = lay == 3 && me, total = 0, rc, rr, shift = lay == 2 ? 5 : 0;
  int span = displs_of(c, lay == 3 ? 0 : lay, d), mine = c[rank], own = mine;
  MPI_Datatype t = MPI_INT, x = MPI_INT;
  char what[96];
  for (int q = 0; q < size; q++) total += c[q];
  if (ty == 1 || ty == 3) MPI_Type_contiguous(2, MPI_INT, &t), MPI_Type_commit(&t), x = t;
  if (ty == 3 && !me) x = MPI_INT, own = 2 * mine;
  if (ty == 2 && me) MPI_Type_contiguous(mine, MPI_INT, &x), MPI_Type_commit(&x), own = 1;
  MPI_Aint lb, ext;
  MPI_Type_get_extent(t, &lb, &ext);
  fresh();
  unsigned char *gb = got + shift * ext, *wb = want + shift * ext, *ib = in + shift * ext;
  size_t bytes = (size_t)(span + 1) * (size_t)ext;
  if (coll == GV) {
    const void *sb = ip ? MPI_IN_PLACE : in;
    if (ip) /* the root's block in place already */
      memcpy(gb + d[rank] * ext, in, (size_t)mine * (size_t)ext),
          memcpy(wb + d[rank] * ext, in, (size_t)mine * (size_t)ext);
    rc = algo ? collc_gatherv_algo(algo, sb, own, x, gb, c, d, t, root, MPI_COMM_WORLD)
              : MPI_Gatherv(sb, own, x, gb, c, d, t, root, MPI_COMM_WORLD);
    rr = PMPI_Gatherv(sb, own, x, wb, c, d, t, root, MPI_COMM_WORLD);
  } else {
    void *rb = ip ? MPI_IN_PLACE : got, *rw = ip ? MPI_IN_PLACE : want;
    rc = algo ? collc_scatterv_algo(algo, ib, c, d, t, rb, own, x, root, MPI_COMM_WORLD)
              : MPI_Scatterv(ib, c, d, t, rb, own, x, root, MPI_COMM_WORLD);
    rr = PMPI_Scatterv(ib, c, d, t, rw, own, x, root, MPI_COMM_WORLD);
    bytes = (size_t)mine * (size_t)ext + 16;
  }
  snprintf(what, sizeof what, "%s root=%d lay=%d type=%d total=%d", names[coll], root, lay, ty,
           total);
  if (rc || rr) fail_rc(what, algo ? algo : "MPI", rc, rr);
  else if (coll == SV || me) compare(what, algo ? algo : "MPI", bytes, coll == GV ? total > 0 : mine > 0);
  if (ty == 1 || ty == 3) MPI_Type_free(&t);
  if (ty == 2 && me) MPI_Type_free(&x);
}

/* Every root, every algorithm, in place and not, for gather and scatter. */
static void uniform_all(void) {
  static const char *const algos[] = {NULL, "linear", "hier", "tree", "tree:2,3"};
  static const int ns[] = {0, 5, 700};
  for (int coll = G; coll <= S; coll++)
    for (size_t a = 0; a < sizeof algos / sizeof algos[0] - (size_t)quick; a++)
      for (int root = 0; root < size; root++)
        for (size_t i = 0; i < sizeof ns / sizeof ns[0]; i++)
          for (int ty = 0; ty < (ns[i] == 5 ? 3 : 1); ty++) /* (types: one size) */
            for (int ip = 0; ip < 2; ip++) one_uniform(coll, algos[a], ns[i], root, ty, ip);
  for (int coll = G; coll <= S && !getenv("COLLC_NODE_SIZE"); coll++) /* shm: one node */
    for (int root = 0; root < size; root += size > 1 ? size - 1 : 1) /* (slow: two roots) */
      for (int ip = 0; ip < 2; ip++) one_uniform(coll, "shm", 700, root, 0, ip);
  for (int coll = G; coll <= S; coll++) /* the memo's and call cache's hits, native forced */
    for (int k = 0; k < 5; k++) one_uniform(coll, k == 4 ? "native" : NULL, 5, size - 1, k / 2, 0);
}

/* Whether vector v is tested at root: every root for the all-zero and
 * prime vectors; a holder-of-everything vector at its holder and the next
 * rank; random ones at the first and last rank (the time of p = 8). */
static int vector_root(int v, int root) {
  if (v == 0 || v == size + 1) return 1;
  if (v <= size) return root == v - 1 || root == v % size;
  return root == 0 || root == size - 1;
}

/* Every layout, type and algorithm for gatherv, scatterv, for each vector
 * at the roots vector_root picks. */
static void counted_all(void) {
  static const char *const algos[] = {NULL, "linear", "hier", "tree", "tree:3"};
  int c[64];
  for (int v = 0; v < size + 4; v++) {
    counts_of(v, size, c);
    if (quick && v > 1 && v <= size) continue; /* (one holder of everything: rank 0) */
    for (int coll = GV; coll <= SV; coll++)
      for (size_t a = 0; a < sizeof algos / sizeof algos[0] - (size_t)quick; a++)
        for (int root = 0; root < size; root++)
          for (int lay = 0; lay < 4 && vector_root(v, root); lay++)
            for (int ty = 0; ty < 4; ty++) /* (forced, the tree does not take ty 3) */
              if ((ty < 2 || lay == 0) && !(ty == 3 && algos[a] && a >= 2)) /* (2..: agree) */
                one_counted(coll, algos[a], c, root, lay, ty);
  }
  for (int q = 0; q < size; q++) c[q] = 2500 - 100 * q; /* (after small ones: larger plans */
  for (int coll = GV; coll <= SV; coll++)                 /* need a new segment size) */
    for (size_t a = 2; a < sizeof algos / sizeof algos[0]; a++) one_counted(coll, algos[a], c, 0, 0, 0);
  counts_of(size + 1, size, c);
  for (int coll = GV; coll <= SV; coll++) /* the call cache's hits, and native forced */
    for (int k = 0; k < 3; k++) one_counted(coll, k == 2 ? "native" : NULL, c, size - 1, 1, 1);
}

/* A resized vector(2, 1, 2, int) of extent 4 ints (holes), committed. */
static MPI_Datatype vector_type(void) {
  MPI_Datatype vec, t;
  MPI_Type_vector(2, 1, 2, MPI_INT, &vec);
  MPI_Type_create_resized(vec, 0, 4 * sizeof(int), &t);
  MPI_Type_commit(&t);
  MPI_Type_free(&vec);
  return t;
}

/* Gather and scatter of 5 ints for every root, a gather of 5 vector_type
 * elements (the type freed while the calls run), and gatherv and scatterv
 * of prime counts, also with elements of two sizes (the root's blocks
 * contiguous(2, int) against 2c ints elsewhere: a tree named by
 * COLLC_GATHERV finds that in its agreement round and serves them by
 * linear), all outstanding at once (MPI_I*), then against PMPI_. */
static void nonblocking(void) {
  enum { N = 5 };
  static int gin[N], gout[8][8 * N], sout[8][N], vout[8][8 * 19], wout[8][19];
  static int gref[8][8 * N], sref[8][N], vref[8][8 * 19], wref[8][19], sin[2 * 8 * 19];
  static int hin[4 * N], hout[8][8 * 4 * N], href[8][8 * 4 * N];
  static int v2out[8][2 * 8 * 19], w2out[8][2 * 19], v2ref[8][2 * 8 * 19], w2ref[8][2 * 19];
  MPI_Request q[7 * 8];
  MPI_Status st[7 * 8]; /* (MPICH's gcc flags MPI_STATUSES_IGNORE) */
  MPI_Datatype two;
  MPI_Type_contiguous(2, MPI_INT, &two);
  MPI_Type_commit(&two);
  int c[8], d[8], n = 0;
  counts_of(size + 1, size, c);
  for (int q2 = 0, at = 0; q2 < size; q2++) d[q2] = at, at += c[q2];
  for (int i = 0; i < N; i++) gin[i] = rank * 100 + i;
  for (int i = 0; i < 2 * 8 * 19; i++) sin[i] = rank * 1000 + i;
  memset(v2out, 0, sizeof v2out), memset(w2out, 0, sizeof w2out);
  memset(v2ref, 0, sizeof v2ref), memset(w2ref, 0, sizeof w2ref);
  memset(gout, 0, sizeof gout), memset(sout, 0, sizeof sout);
  memset(vout, 0, sizeof vout), memset(wout, 0, sizeof wout);
  memset(gref, 0, sizeof gref), memset(sref, 0, sizeof sref);
  memset(vref, 0, sizeof vref), memset(wref, 0, sizeof wref);
  for (int i = 0; i < 4 * N; i++) hin[i] = rank * 100 + i;
  memset(hout, 0, sizeof hout), memset(href, 0, sizeof href);
  MPI_Datatype vt = vector_type();
  for (int r = 0; r < size; r++) {
    MPI_Igather(hin, N, vt, hout[r], N, vt, r, MPI_COMM_WORLD, &q[n++]);
    MPI_Igather(gin, N, MPI_INT, gout[r], N, MPI_INT, r, MPI_COMM_WORLD, &q[n++]);
    MPI_Iscatter(sin, N, MPI_INT, sout[r], N, MPI_INT, r, MPI_COMM_WORLD, &q[n++]);
    MPI_Igatherv(sin, c[rank], MPI_INT, vout[r], c, d, MPI_INT, r, MPI_COMM_WORLD, &q[n++]);
    MPI_Iscatterv(sin, c, d, MPI_INT, wout[r], c[rank], MPI_INT, r, MPI_COMM_WORLD, &q[n++]);
    if (rank == r) {
      MPI_Igatherv(sin, c[rank], two, v2out[r], c, d, two, r, MPI_COMM_WORLD, &q[n++]);
      MPI_Iscatterv(sin, c, d, two, w2out[r], c[rank], two, r, MPI_COMM_WORLD, &q[n++]);
    } else {
      MPI_Igatherv(sin, 2 * c[rank], MPI_INT, NULL, NULL, NULL, two, r, MPI_COMM_WORLD, &q[n++]);
      MPI_Iscatterv(NULL, NULL, NULL, two, w2out[r], 2 * c[rank], MPI_INT, r, MPI_COMM_WORLD,
                    &q[n++]);
    }
  }
  MPI_Type_free(&vt); /* (while the calls run: MPI allows it) */
  int rc = MPI_Waitall(n, q, st);
  vt = vector_type();
  for (int r = 0; r < size; r++) {
    PMPI_Gather(hin, N, vt, href[r], N, vt, r, MPI_COMM_WORLD);
    PMPI_Gather(gin, N, MPI_INT, gref[r], N, MPI_INT, r, MPI_COMM_WORLD);
    PMPI_Scatter(sin, N, MPI_INT, sref[r], N, MPI_INT, r, MPI_COMM_WORLD);
    PMPI_Gatherv(sin, c[rank], MPI_INT, vref[r], c, d, MPI_INT, r, MPI_COMM_WORLD);
    PMPI_Scatterv(sin, c, d, MPI_INT, wref[r], c[rank], MPI_INT, r, MPI_COMM_WORLD);
    if (rank == r) {
      PMPI_Gatherv(sin, c[rank], two, v2ref[r], c, d, two, r, MPI_COMM_WORLD);
      PMPI_Scatterv(sin, c, d, two, w2ref[r], c[rank], two, r, MPI_COMM_WORLD);
    } else {
      PMPI_Gatherv(sin, 2 * c[rank], MPI_INT, NULL, NULL, NULL, two, r, MPI_COMM_WORLD);
      PMPI_Scatterv(NULL, NULL, NULL, two, w2ref[r], 2 * c[rank], MPI_INT, r, MPI_COMM_WORLD);
    }
  }
  MPI_Type_free(&vt);
  MPI_Type_free(&two);
  checks++;
  if (rc || memcmp(gout, gref, sizeof gout) || memcmp(sout, sref, sizeof sout) ||
      memcmp(vout, vref, sizeof vout) || memcmp(wout, wref, sizeof wout) ||
      memcmp(hout, href, sizeof hout) || memcmp(v2out, v2ref, sizeof v2out) ||
      memcmp(w2out, w2ref, sizeof w2out)) {
    printf("FAIL rank %d: nonblocking p=%d: rc %d or results differ\n", rank, size, rc);
    fails++;
  }
}

/* MPI_Gather_init, MPI_Scatter_init, MPI_Gatherv_init, MPI_Scatterv_init
 * for every root, started 3 times (the input changing between starts); the
 * counted forms of prime counts, the root's own block typed contiguous(c,
 * int) against c ints (copied into place at each start). */
static void persistent(void) {
  enum { N = 7, V = 8 * 19 };
  static int gin[N], sin[8 * N], gout[8][8 * N], sout[8][N], gref[8 * N], sref[N];
  static int vin[V], vout[8][V], vref[V], wout[8][19], wref[19];
  MPI_Request q[4 * 8];
  MPI_Status st[4 * 8];
  MPI_Datatype own[8];
  int c[8], d[8], n = 4 * size;
  counts_of(size + 1, size, c);
  for (int q2 = 0, at = 0; q2 < size; q2++) d[q2] = at, at += c[q2] + 1;
  for (int r = 0; r < size; r++) {
    MPI_Type_contiguous(c[r], MPI_INT, &own[r]), MPI_Type_commit(&own[r]);
    int me = rank == r, k = me ? 1 : c[rank];
    MPI_Datatype t = me ? own[r] : MPI_INT;
    MPI_Gather_init(gin, N, MPI_INT, gout[r], N, MPI_INT, r, MPI_COMM_WORLD, MPI_INFO_NULL, &q[4 * r]);
    MPI_Scatter_init(sin, N, MPI_INT, sout[r], N, MPI_INT, r, MPI_COMM_WORLD, MPI_INFO_NULL,
                     &q[4 * r + 1]);
    MPI_Gatherv_init(vin, k, t, vout[r], c, d, MPI_INT, r, MPI_COMM_WORLD, MPI_INFO_NULL,
                     &q[4 * r + 2]);
    MPI_Scatterv_init(vin, c, d, MPI_INT, wout[r], k, t, r, MPI_COMM_WORLD, MPI_INFO_NULL,
                      &q[4 * r + 3]);
  }
  for (int it = 0; it < 3; it++) {
    for (int i = 0; i < N; i++) gin[i] = rank * 100 + i + it;
    for (int i = 0; i < 8 * N; i++) sin[i] = rank * 1000 + i - it;
    for (int i = 0; i < V; i++) vin[i] = rank * 10000 + i * 3 + it;
    memset(vout, 0, sizeof vout), memset(wout, 0, sizeof wout);
    MPI_Startall(n, q);
    int rc = MPI_Waitall(n, q, st);
    for (int r = 0; r < size; r++) {
      memset(gref, 0, sizeof gref), memset(vref, 0, sizeof vref), memset(wref, 0, sizeof wref);
      PMPI_Gather(gin, N, MPI_INT, gref, N, MPI_INT, r, MPI_COMM_WORLD);
      PMPI_Scatter(sin, N, MPI_INT, sref, N, MPI_INT, r, MPI_COMM_WORLD);
      PMPI_Gatherv(vin, c[rank], MPI_INT, vref, c, d, MPI_INT, r, MPI_COMM_WORLD);
      PMPI_Scatterv(vin, c, d, MPI_INT, wref, c[rank], MPI_INT, r, MPI_COMM_WORLD);
      checks++;
      if (rc || (rank == r && memcmp(gout[r], gref, (size_t)size * N * sizeof(int))) ||
          memcmp(sout[r], sref, sizeof sref) || (rank == r && memcmp(vout[r], vref, sizeof vref)) ||
          memcmp(wout[r], wref, sizeof wref)) {
        printf("FAIL rank %d: persistent root=%d start %d p=%d: rc %d or results differ\n",
               rank, r, it, size, rc);
        fails++;
      }
    }
  }
  for (int i = 0; i < n; i++) MPI_Request_free(&q[i]);
  for (int r = 0; r < size; r++) MPI_Type_free(&own[r]);
}

/* want is err from a call that fails before any message. */
static void bad(const char *what, int rc, int err) {
  int cls = -1;
  checks++;
  if (rc != MPI_SUCCESS) MPI_Error_class(rc, &cls);
  if (cls != err) {
    printf("FAIL rank %d: %s: error class %d, want %d\n", rank, what, cls, err);
    fails++;
  }
}

static void bad_args(void) {
  int c[64] = {0}, d[64] = {0}, buf[8];
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN);
  bad("gather root = p", MPI_Gather(buf, 1, MPI_INT, buf, 1, MPI_INT, size, MPI_COMM_WORLD),
      MPI_ERR_ROOT);
  bad("scatter root -1", MPI_Scatter(buf, 1, MPI_INT, buf, 1, MPI_INT, -1, MPI_COMM_WORLD),
      MPI_ERR_ROOT);
  bad("gather count -1", MPI_Gather(buf, -1, MPI_INT, buf, -1, MPI_INT, 0, MPI_COMM_WORLD),
      MPI_ERR_COUNT);
  bad("igather root = p", MPI_Igather(buf, 1, MPI_INT, buf, 1, MPI_INT, size, MPI_COMM_WORLD,
                                      &(MPI_Request){0}),
      MPI_ERR_ROOT);
  if (rank == 0) {
    bad("gatherv NULL counts", MPI_Gatherv(buf, 0, MPI_INT, buf, NULL, d, MPI_INT, 0, MPI_COMM_WORLD),
        MPI_ERR_ARG);
    c[size - 1] = -2;
    bad("scatterv count -2", MPI_Scatterv(buf, c, d, MPI_INT, buf, 0, MPI_INT, 0, MPI_COMM_WORLD),
        MPI_ERR_COUNT);
  } else {
    bad("gather in place off the root",
        MPI_Gather(MPI_IN_PLACE, 1, MPI_INT, buf, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
    bad("scatter in place off the root",
        MPI_Scatter(buf, 1, MPI_INT, MPI_IN_PLACE, 1, MPI_INT, 0, MPI_COMM_WORLD), MPI_ERR_BUFFER);
  }
  MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_ARE_FATAL);
}

int main(int argc, char **argv) {
  MPI_Init(&argc, &argv);
  MPI_Comm_rank(MPI_COMM_WORLD, &rank);
  MPI_Comm_size(MPI_COMM_WORLD, &size);
  const char *b = getenv("COLLC_TEST_BREAK");
  break_at = b ? atoi(b) : 0;
  quick = tl_env_int("COLLC_TEST_QUICK", 0) > 0;
  double t0 = MPI_Wtime();
  if (size > 8) {
    if (rank == 0) printf("rooted: p <= 8 only\n");
    MPI_Finalize();
    return 1;
  }
  uniform_all();
  counted_all();
  nonblocking();
  persistent();
  if (!getenv("COLLC_DISABLE")) bad_args(); /* (else the library's answers: they may crash it) */
  int all = 0;
  MPI_Allreduce(&fails, &all, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
  if (rank == 0)
    printf("rooted p=%d: %ld checks on rank 0, %d failed (%.1f s)\n", size, checks, all,
           MPI_Wtime() - t0);
  MPI_Finalize();
  return all != 0;
}
