/* reductions.c - the reduction and redistribution collectives over MPI:
 * allreduce, reduce_scatter_block, reduce (against an exact reference
 * computed here and against PMPI_*), allgather and bcast (against PMPI_*,
 * byte for byte, holes of derived types included).
 *
 * Algorithms (collc_*_algo), generated from p (every ordered factorisation
 * F of p):
 *   allreduce: native, recexch (default list), recexch:-F,+reverse(F) and
 *     -F,+F (e.g. -3,-2,2,3 and -3,-2,3,2 at p = 6), recexch with allreduce
 *     steps for every divisor b of p (-primes(p/b),*b,+primes reversed, and
 *     *primes(b); e.g. -2,*2,2 at p = 4, -3,*2,3 at p = 6, *p), cyclic
 *     (default, -p,p, -3,-3,3,3 for p = 5..9 whose products exceed p,
 *     -4,-2,3,3 with unequal products, -2,-3,3,2), tree, tree:3, tree:2,3,
 *     tree:p;
 *   reduce_scatter_block: native, recexch, recexch:-F, cyclic (default,
 *     -p, -3,-3, -2,-4);
 *   allgather: native, recexch, recexch:F, cyclic (default, p, 3,3, 4,2);
 *   reduce: native, tree, tree:3, tree:2,3, tree:p, each with EVERY root
 *     (non-roots pass recvbuf NULL in some checks, and an untouched buffer
 *     in the others);
 *   bcast: native, tree, tree:3, tree:2,3, every root.
 * Counts 0, 1, 2, p-1, 7, 100 (reductions cut vectors into blocks of at
 * least 64 bytes, so small counts leave blocks empty), 100000 for a few.
 *
 * Datatypes x ops (redlib.h): every predefined op on every type MPI allows
 * it on, for MPI_INT, (UN)SIGNED_CHAR, INT8_T, UINT8_T, SHORT,
 * UNSIGNED_SHORT, UNSIGNED, LONG, UNSIGNED_LONG, LONG_LONG, UINT64_T, FLOAT,
 * DOUBLE, LONG_DOUBLE, C_BOOL, BYTE, C_DOUBLE_COMPLEX, MAXLOC/MINLOC on the
 * five pair types (with ties: equal values, different indices); user ops:
 * a commutative sum mod 65521, two non-commutative ones (2x2 matrix product
 * mod 2^32 on contiguous(4, int), "first nonzero" on int: any order error
 * changes the result), a double sum on contiguous(3, double) (exact and
 * rough); contiguous(3, double) with MPI_SUM and MPI_MAX, which MPI defines
 * on predefined types only: collc must fail exactly as the native call does
 * (MPI_ERR_OP); and a wrapping user sum on vector(2, 1, 3, int), which has
 * holes: collc must hand it to the native call, holes untouched. Those two
 * are counted as "native" in collc's statistics: COLLC_TEST_FALLBACK=1 runs
 * only them (4 calls per reduction) for tests/run.sh to check with
 * COLLC_STATS=1.
 *
 * Every reduction result must equal the exact rank-order reference bit for
 * bit (integers, 8-bit SUM/PROD wrapping, non-commutative ops, floating
 * point on dyadic inputs whose sums are exact), or for "rough" floating
 * point inputs lie within the error bound of any evaluation order, and then
 * every rank's allreduce result must be BITWISE identical (checked by
 * broadcasting rank 0's). The native PMPI_* result must equal the same
 * reference, except where a known MPI defect explains it (redlib.h): then
 * rank 0 prints a note - e.g. without --mca op ^avx, Open MPI 4.1.4 prints
 *   note: PMPI_Allreduce MPI_UINT8_T SUM differs from the exact reference
 *   (known MPI defect) ...
 * which is why 8/16-bit sums are judged against the exact reference, never
 * against PMPI. Also: send buffers unchanged, bytes after the result and
 * non-roots' receive buffers untouched, MPI_IN_PLACE for every collective
 * (reduce_scatter_block: p*count inputs in recvbuf; allgather: own block;
 * reduce: root only), cyclic with a non-commutative op and algorithms that
 * do not fit p refused with MPI_ERR_ARG, repeated calls with the same plan
 * and new values in new buffers, the MPI_* entry points and collc_* with
 * the default rule, reversed and uneven sub-communicators, and an
 * intercommunicator per collective (passed to the native call).
 *
 * Order: every collective but reduce first, then reduce (phase1), opened
 * by a probe under a 30 s watchdog (redcheck.h) for a deadlock that a plan
 * cache keyed on the root's in-place flag causes, so that such a library
 * fails fast with an explanation after everything else has been checked.
 * MPICH 4.0.2 crashes in its own MPI_Reduce with MPI_IN_PLACE at a root
 * other than 0 on more than 2048 bytes: the native references run out of
 * place, and checks whose call under test may be native avoid that case.
 *
 * COLLC_TEST_QUICK=1 (MPICH, slow when oversubscribed): fewer algorithms,
 * cases, counts and roots (p <= 2 is fast: run it without). Open MPI at
 * p = 9 on 2 cores: about 5-20 s. COLLC_TEST_BREAK=N corrupts the N-th
 * nonempty result (the program must then fail).
 */
#include <stdarg.h>
#include "collc.h"
#include "redcheck.h"
#include "nbmode.h"

/* Whether algorithm text a needs a blocking call first (node-aware). */
static int nb_needs_setup(const char *a) {
  return !strncmp(a, "hier", 4) || !strncmp(a, "shm", 3);
}

enum { C_ALLREDUCE = RL_ALLREDUCE, C_RSB = RL_RSB, C_REDUCE = RL_REDUCE, C_ALLGATHER, C_BCAST,
       C_COUNT };
static const char *const coll_names[C_COUNT] = {"allreduce", "reduce_scatter_block", "reduce",
                                                "allgather", "bcast"};
/* Entry points: collc_*_algo, collc_* (default rule), MPI_* (intercepted). */
enum { VIA_ALGO, VIA_COLLC, VIA_MPI };

#define MAX_ALGOS 48
#define ALGO_LEN 64
#define MAX_CASES 200

/* Algorithm texts of one collective. */
typedef struct {
  char name[MAX_ALGOS][ALGO_LEN];
  int n;
} algo_list;

/* The test's cases: all of them, and a representative subset (core). */
typedef struct {
  rl_typeset S;
  rl_case all[MAX_CASES];
  int nall;
  const rl_case *core[32];
  int ncore;
  tl_typeset T; /* allgather / bcast types (testlib.h) */
  int quick;
  int phase; /* 0: every collective but reduce; 1: reduce (see phase1) */
} suite;

/* Does the current phase of U run collective coll? */
static int in_phase(const suite *U, int coll) {
  return (coll == C_REDUCE) == (U->phase == 1);
}

/* Append a printf-formatted algorithm text to L. */
static void algo_add(algo_list *L, const char *fmt, ...) {
  va_list ap;
  if (L->n >= MAX_ALGOS) return;
  va_start(ap, fmt);
  vsnprintf(L->name[L->n++], ALGO_LEN, fmt, ap);
  va_end(ap);
}

/* Every ordered factorisation of n into factors >= 2 (cur: the factors so
 * far, ncur of them) into out[*nout][0..] with lengths in len[]. */
static void factorisations(int n, int *cur, int ncur, int out[][8], int *len, int *nout, int max) {
  if (n == 1) {
    if (ncur > 0 && *nout < max) memcpy(out[*nout], cur, sizeof(int) * 8), len[(*nout)++] = ncur;
    return;
  }
  for (int f = 2; f <= n && ncur < 8; f++)
    if (n % f == 0) {
      cur[ncur] = f;
      factorisations(n / f, cur, ncur + 1, out, len, nout, max);
    }
}

/* Prime factors of n ascending into f; returns how many. */
static int primes(int n, int *f) {
  int k = 0;
  for (int q = 2; q <= n; q++)
    while (n % q == 0) f[k++] = q, n /= q;
  return k;
}

/* Append to text the steps f[0..n-1] (reversed if rev), each prefixed by
 * kind, after a comma unless text ends with ':'. */
static void steps(char *text, const char *kind, const int *f, int n, int rev) {
  for (int i = 0; i < n; i++) {
    size_t at = strlen(text);
    snprintf(text + at, ALGO_LEN - at, "%s%s%d", text[at - 1] == ':' ? "" : ",", kind,
             f[rev ? n - 1 - i : i]);
  }
}

/* Is f[0..n-1] a palindrome? */
static int palindrome(const int *f, int n) {
  for (int i = 0; i < n / 2; i++)
    if (f[i] != f[n - 1 - i]) return 0;
  return 1;
}

/* recexch lists of coll over every ordered factorisation F of p: -F,+rev(F)
 * and -F,+F (allreduce), -F (reduce_scatter_block), F (allgather); quick:
 * the first factorisation only. */
static void recexch_lists(algo_list *L, int coll, int p, int quick) {
  int F[64][8], len[64], cur[8], nf = 0;
  factorisations(p, cur, 0, F, len, &nf, 64);
  for (int i = 0; i < (quick && nf > 1 ? 1 : nf); i++) {
    char text[ALGO_LEN] = "recexch:";
    if (coll == C_ALLGATHER)
      steps(text, i % 2 ? "+" : "", F[i], len[i], 0);
    else
      steps(text, "-", F[i], len[i], 0);
    if (coll == C_ALLREDUCE) steps(text, "", F[i], len[i], 1);
    algo_add(L, "%s", text);
    if (coll != C_ALLREDUCE || quick || palindrome(F[i], len[i])) continue;
    snprintf(text, sizeof text, "recexch:");
    steps(text, "-", F[i], len[i], 0);
    steps(text, "+", F[i], len[i], 0);
    algo_add(L, "%s", text);
  }
}

/* Allreduce recexch lists with allreduce steps: for each divisor b > 1 of
 * p, -primes(p/b),*b,+primes(p/b) reversed, and with *primes(b) when b is
 * not prime (quick: the smallest b and b = p only). */
static void star_lists(algo_list *L, int p, int quick) {
  int smallest = 0;
  for (int b = 2; b <= p; b++) {
    if (p % b) continue;
    if (!smallest) smallest = b;
    if (quick && b != smallest && b != p) continue;
    int pa[32], pb[32], na = primes(p / b, pa), nb = primes(b, pb);
    for (int split = 0; split < (nb > 1 && !quick ? 2 : 1); split++) {
      char text[ALGO_LEN] = "recexch:";
      steps(text, "-", pa, na, 0);
      if (split)
        steps(text, "*", pb, nb, 0);
      else
        steps(text, "*", &b, 1, 0);
      steps(text, "", pa, na, 1);
      algo_add(L, "%s", text);
    }
  }
}

/* cyclic lists of coll for p: default, one step of radix p, and products
 * above p (-3,-3,3,3 at p = 5..9; unequal products at p = 5..8). */
static void cyclic_lists(algo_list *L, int coll, int p, int quick) {
  static const char *const big[3] = {"-3,-3,3,3", "-3,-3", "3,3"};
  static const char *const odd[3] = {"-4,-2,3,3", "-2,-4", "4,2"};
  int k = coll == C_ALLREDUCE ? 0 : coll == C_RSB ? 1 : 2;
  algo_add(L, "cyclic");
  if (p >= 2 && coll == C_ALLREDUCE) algo_add(L, "cyclic:-%d,%d", p, p);
  if (p >= 2 && coll == C_RSB) algo_add(L, "cyclic:-%d", p);
  if (p >= 2 && coll == C_ALLGATHER) algo_add(L, "cyclic:%d", p);
  if (p >= 5 && p <= 9) algo_add(L, "cyclic:%s", big[k]);
  if (p >= 5 && p <= 8 && !quick) algo_add(L, "cyclic:%s", odd[k]);
  if (p >= 2 && p <= 6 && !quick && coll == C_ALLREDUCE) algo_add(L, "cyclic:-2,-3,3,2");
}

/* tree lists: default (binomial), 3, 2,3, and p. */
static void tree_lists(algo_list *L, int p, int quick) {
  algo_add(L, "tree");
  if (!quick) algo_add(L, "tree:3");
  algo_add(L, "tree:2,3");
  if (p >= 2 && !quick) algo_add(L, "tree:%d", p);
}

/* Node-aware plans (COLLC_TEST_HIER=1, with COLLC_NODE_SIZE=k): native and
 * hier in its variants; allreduce factor lists inside the node where every
 * node has k ranks (k divides p); cyclic copy-in (node=copyin, the default
 * group and groups of 2 and 3, which need not divide k; refused with
 * MPI_ERR_ARG for non-commutative operations); on one node (k = 0 or
 * k >= p), shm with its default and another inner algorithm. */
static void hier_algos(algo_list *L, int coll, int p) {
  int k = tl_env_int("COLLC_NODE_SIZE", 0);
  static const char *const shm2[C_COUNT] = {"shm:cyclic", "shm:cyclic", "shm:tree:3",
                                            "shm:cyclic", "shm:tree:3"};
  L->n = 0;
  algo_add(L, "native");
  algo_add(L, "hier");
  if (coll == C_ALLREDUCE && k >= 2 && p % k == 0) algo_add(L, "hier:node=-%d,%d", k, k);
  if (coll == C_ALLREDUCE && k == 4 && p % k == 0) algo_add(L, "hier:node=-2,-2,2,2");
  if (coll == C_ALLREDUCE) algo_add(L, "hier:node=tree");
  if (coll == C_ALLREDUCE) algo_add(L, "hier:node=sockets"); /* (rs without sockets) */
  if (coll == C_ALLREDUCE) algo_add(L, "hier:net=recexch:flat");
  if (coll == C_ALLREDUCE) algo_add(L, "hier:node=tree:net=tree:3");
  if (coll == C_REDUCE || coll == C_BCAST) algo_add(L, "hier:net=tree:3");
  if (coll == C_ALLREDUCE || coll == C_RSB || coll == C_REDUCE) /* cyclic copy-in: one group */
    algo_add(L, "hier:node=copyin"), algo_add(L, "hier:node=copyin:g=2"); /* and groups of 2 */
  if (coll == C_ALLREDUCE && p >= 3) algo_add(L, "hier:node=copyin:g=3:net=cyclic");
  if (k == 0 || k >= p) algo_add(L, "shm"), algo_add(L, "%s", shm2[coll]);
  if (k == 0 || k >= p) algo_add(L, "shm:direct=0"); /* every message read in place */
}

/* Every algorithm of the matrix for collective coll on p ranks. */
static void all_algos(algo_list *L, int coll, int p, int quick) {
  L->n = 0;
  if (tl_env_int("COLLC_TEST_HIER", 0)) return hier_algos(L, coll, p);
  algo_add(L, "native");
  if (coll == C_ALLREDUCE || coll == C_RSB || coll == C_ALLGATHER) {
    algo_add(L, "recexch");
    recexch_lists(L, coll, p, quick);
    if (coll == C_ALLREDUCE) star_lists(L, p, quick);
    cyclic_lists(L, coll, p, quick);
  }
  if (coll == C_ALLREDUCE || coll == C_REDUCE || coll == C_BCAST) tree_lists(L, p, quick);
}

/* collc_<coll>_algo as an rl_red_fn (blocking). */
static int red_block(int coll, const char *a, const void *sb, void *rb, int n, MPI_Datatype t,
                     MPI_Op op, int root, MPI_Comm c) {
  if (coll == C_ALLREDUCE) return collc_allreduce_algo(a, sb, rb, n, t, op, c);
  if (coll == C_RSB) return collc_reduce_scatter_block_algo(a, sb, rb, n, t, op, c);
  return collc_reduce_algo(a, sb, rb, n, t, op, root, c);
}

/* collc_i<coll>_algo, completed (nb_finish); a node-aware a after its
 * blocking set-up call on scratch buffers. */
static int red_nb(int coll, const char *a, const void *sb, void *rb, int n, MPI_Datatype t,
                  MPI_Op op, int root, MPI_Comm c) {
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Aint lb, ext;
  int p, rc;
  if (nb_needs_setup(a)) {
    MPI_Comm_size(c, &p);
    MPI_Type_get_extent(t, &lb, &ext);
    size_t bytes = (size_t)ext * (size_t)(n > 0 ? n : 1) * (size_t)p;
    char *s = nb_scratch(2 * bytes);
    if (!s) return MPI_ERR_NO_MEM;
    if ((rc = red_block(coll, a, sb == MPI_IN_PLACE ? sb : s, s + bytes, n, t, op, root, c)))
      return rc;
  }
  if (coll == C_ALLREDUCE) rc = collc_iallreduce_algo(a, sb, rb, n, t, op, c, &r);
  else if (coll == C_RSB) rc = collc_ireduce_scatter_block_algo(a, sb, rb, n, t, op, c, &r);
  else rc = collc_ireduce_algo(a, sb, rb, n, t, op, root, c, &r);
  char what[ALGO_LEN + 32];
  snprintf(what, sizeof what, "%s %s n=%d%s", coll_names[coll], a, n,
           sb == MPI_IN_PLACE ? " in place" : "");
  return nb_finish(&r, rc, what);
}

/* collc_<coll>_algo (or its nonblocking form) as an rl_red_fn. */
static int red_algo(int coll, const char *a, const void *sb, void *rb, int n, MPI_Datatype t,
                    MPI_Op op, int root, MPI_Comm c) {
  return (nb_mode ? red_nb : red_block)(coll, a, sb, rb, n, t, op, root, c);
}

/* collc_<coll> (default rule) as an rl_red_fn (a is a label). */
static int red_collc(int coll, const char *a, const void *sb, void *rb, int n, MPI_Datatype t,
                     MPI_Op op, int root, MPI_Comm c) {
  (void)a;
  if (coll == C_ALLREDUCE) return collc_allreduce(sb, rb, n, t, op, c);
  if (coll == C_RSB) return collc_reduce_scatter_block(sb, rb, n, t, op, c);
  return collc_reduce(sb, rb, n, t, op, root, c);
}

/* The intercepted MPI_<Coll> as an rl_red_fn (a is a label). */
static int red_mpi(int coll, const char *a, const void *sb, void *rb, int n, MPI_Datatype t,
                   MPI_Op op, int root, MPI_Comm c) {
  MPI_Request r = MPI_REQUEST_NULL;
  (void)a;
  if (nb_mode && coll == C_ALLREDUCE)
    return nb_finish(&r, MPI_Iallreduce(sb, rb, n, t, op, c, &r), "MPI_Iallreduce");
  if (nb_mode && coll == C_RSB)
    return nb_finish(&r, MPI_Ireduce_scatter_block(sb, rb, n, t, op, c, &r),
                     "MPI_Ireduce_scatter_block");
  if (nb_mode) return nb_finish(&r, MPI_Ireduce(sb, rb, n, t, op, root, c, &r), "MPI_Ireduce");
  if (coll == C_ALLREDUCE) return MPI_Allreduce(sb, rb, n, t, op, c);
  if (coll == C_RSB) return MPI_Reduce_scatter_block(sb, rb, n, t, op, c);
  return MPI_Reduce(sb, rb, n, t, op, root, c);
}

/* The target of a reduction check: coll through entry point via (algo:
 * the algorithm, or a label) on comm named cname. */
static rl_target tgt(int coll, int via, const char *algo, MPI_Comm comm, const char *cname) {
  rl_red_fn fn = via == VIA_ALGO ? red_algo : via == VIA_COLLC ? red_collc : red_mpi;
  rl_target g = {coll, fn, algo, comm, cname, via != VIA_ALGO || !strcmp(algo, "native")};
  return g;
}

/* One reduction check of g on U's types (see rl_check). */
static int red_check(tl_ctx *ctx, const rl_target *g, const suite *U, const rl_case *c, int count,
                     int in_place, int root, int seed) {
  return rl_check(ctx, g, &U->S, c, count, in_place, root, seed);
}

/* U's core cases (redlib.h). */
static void core_cases(suite *U) {
  U->ncore = rl_core_cases(U->all, U->nall, U->core, 32);
}

/* The counts of the matrix for p: 0, 1, 2, p-1, 7, 100 (quick: 0, 1, 7,
 * 100); returns how many. */
static int counts_for(int p, int quick, int *out) {
  int n = 0;
  out[n++] = 0, out[n++] = 1;
  if (!quick) out[n++] = 2;
  if (!quick && p - 1 > 2 && p - 1 != 7) out[n++] = p - 1;
  out[n++] = 7, out[n++] = 100;
  return n;
}

/* allreduce / reduce_scatter_block: every algorithm of L with every core
 * case and count, in place for every other (case, count) (quick: one core
 * case per count, rotating). */
static void red_matrix(tl_ctx *ctx, const suite *U, int coll, const algo_list *L, int p) {
  int counts[8], nc = counts_for(p, U->quick, counts);
  for (int a = 0; a < L->n; a++) {
    rl_target g = tgt(coll, VIA_ALGO, L->name[a], MPI_COMM_WORLD, "WORLD");
    for (int i = 0; i < U->ncore; i++)
      for (int j = 0; j < nc; j++) {
        if (U->quick && i != (5 * a + 3 * j) % U->ncore) continue;
        red_check(ctx, &g, U, U->core[i], counts[j], (i + j + a) % 2, 0, 1000 * a + 10 * i + j);
      }
  }
}

/* reduce: every algorithm with EVERY root, a rotating third of the core
 * cases per root, counts 1, 7, 100 (quick: 2 roots, count 7). */
static void reduce_matrix(tl_ctx *ctx, const suite *U, const algo_list *L, int p) {
  static const int counts[3] = {1, 7, 100};
  for (int a = 0; a < L->n; a++) {
    rl_target g = tgt(C_REDUCE, VIA_ALGO, L->name[a], MPI_COMM_WORLD, "WORLD");
    for (int root = 0; root < p; root++) {
      if (U->quick && root != 0 && root != p - 1) continue;
      for (int i = (root + a) % 3; i < U->ncore; i += 3)
        for (int j = U->quick ? 1 : 0; j < (U->quick ? 2 : 3); j++)
          red_check(ctx, &g, U, U->core[i], counts[j], (i + j) % 2, root,
                    1000 * a + 100 * root + 10 * i + j);
      red_check(ctx, &g, U, U->core[0], 0, root % 2, root, 7 + root); /* count 0 too */
    }
  }
}

/* Quick form of full_matrix: a third of the cases (all of them where p <=
 * 2, which is fast) on recexch allreduce or reduce_scatter_block with count
 * 7; an eighth rotating through the algorithms of each reduction (count
 * 100). */
static void quick_full(tl_ctx *ctx, const suite *U, const algo_list *L, int p) {
  rl_target fixed[2] = {
      tgt(C_ALLREDUCE, VIA_ALGO, "recexch", MPI_COMM_WORLD, "WORLD (types x ops)"),
      tgt(C_RSB, VIA_ALGO, "recexch", MPI_COMM_WORLD, "WORLD (types x ops)")};
  for (int i = 0; i < U->nall; i++) {
    if (U->phase == 0 && (p <= 2 || i % 3 == 0))
      red_check(ctx, &fixed[i % 2], U, &U->all[i], 7, i % 4 == 0, 0, 50000 + i);
    for (int coll = 0; coll < 3 && i % 8 == 0; coll++) {
      const algo_list *A = &L[coll];
      rl_target g = tgt(coll, VIA_ALGO, A->name[(i / 8 + coll) % A->n], MPI_COMM_WORLD,
                        "WORLD (types x ops)");
      if (in_phase(U, coll)) red_check(ctx, &g, U, &U->all[i], 100, i % 8 == 0, i % p, 60000 + i);
    }
  }
}

/* Every case (type x op) through every algorithm of each reduction of this
 * phase: two counts per (algorithm, case) out of 1, 7, 100 and p - 1, in
 * place for every other, reduce roots rotating (quick: quick_full). */
static void full_matrix(tl_ctx *ctx, const suite *U, const algo_list *L, int p) {
  const int counts[4] = {1, 7, 100, p - 1};
  if (U->quick) {
    quick_full(ctx, U, L, p);
    return;
  }
  for (int coll = 0; coll < 3; coll++) {
    if (!in_phase(U, coll)) continue;
    for (int a = 0; a < L[coll].n; a++) {
      rl_target g = tgt(coll, VIA_ALGO, L[coll].name[a], MPI_COMM_WORLD, "WORLD (types x ops)");
      for (int i = 0; i < U->nall; i++)
        for (int j = 0; j < 2; j++) {
          int x = (i + a + 2 * j) % 4, seed = 100000 + 1000 * a + 4 * i + j;
          red_check(ctx, &g, U, &U->all[i], counts[x], (i + a + j) % 2, (i + a + j) % p, seed);
        }
    }
  }
}

/* collc_allgather_algo as a tl_a2a_fn. */
static int ag_algo(const char *algo, const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                   MPI_Datatype rt, MPI_Comm comm) {
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Aint lb, ext;
  int p, e;
  if (!nb_mode) return collc_allgather_algo(algo, sb, sc, st, rb, rc, rt, comm);
  if (nb_needs_setup(algo)) { /* the blocking set-up call, on scratch */
    MPI_Comm_size(comm, &p);
    MPI_Type_get_extent(rt, &lb, &ext);
    size_t bytes = (size_t)ext * (size_t)(rc > 0 ? rc : 1) * (size_t)p;
    char *s = nb_scratch(2 * bytes);
    if (!s) return MPI_ERR_NO_MEM;
    if ((e = collc_allgather_algo(algo, sb == MPI_IN_PLACE ? sb : s, sc, st, s + bytes, rc, rt,
                                  comm)))
      return e;
  }
  char what[ALGO_LEN + 32];
  snprintf(what, sizeof what, "allgather %s n=%d", algo, rc);
  return nb_finish(&r, collc_iallgather_algo(algo, sb, sc, st, rb, rc, rt, comm, &r), what);
}

/* The intercepted MPI_Allgather as a tl_a2a_fn (algo is a label). */
static int ag_mpi(const char *algo, const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                  MPI_Datatype rt, MPI_Comm comm) {
  MPI_Request r = MPI_REQUEST_NULL;
  (void)algo;
  if (nb_mode)
    return nb_finish(&r, MPI_Iallgather(sb, sc, st, rb, rc, rt, comm, &r), "MPI_Iallgather");
  return MPI_Allgather(sb, sc, st, rb, rc, rt, comm);
}

/* collc_allgather (default rule) as a tl_a2a_fn (algo is a label). */
static int ag_collc(const char *algo, const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                    MPI_Datatype rt, MPI_Comm comm) {
  (void)algo;
  return collc_allgather(sb, sc, st, rb, rc, rt, comm);
}

/* allgather: every algorithm x every datatype case of testlib.h x counts,
 * in place where the case allows it; against PMPI_Allgather. */
static void allgather_matrix(tl_ctx *ctx, const suite *U, const algo_list *L, int p) {
  int counts[8], nc = counts_for(p, U->quick, counts);
  for (int a = 0; a < L->n; a++) {
    tl_target t = {ag_algo, L->name[a], MPI_COMM_WORLD, "WORLD"};
    for (int i = 0; i < U->T.n; i++)
      for (int j = 0; j < nc; j++) {
        if (U->quick && (i + j + a) % 4) continue;
        tl_check_ref(ctx, &t, &U->T.t[i], counts[j], 0, a + i + j, PMPI_Allgather,
                     "PMPI_Allgather");
        if (U->T.inplace[i] && (i + j) % 2 == 0)
          tl_check_ref(ctx, &t, &U->T.t[i], counts[j], 1, a + i + j + 1, PMPI_Allgather,
                       "PMPI_Allgather");
      }
  }
}

/* collc_bcast_algo as an rl_bcast_fn. */
static int bc_algo(const char *a, void *buf, int n, MPI_Datatype t, int root, MPI_Comm c) {
  MPI_Request r = MPI_REQUEST_NULL;
  MPI_Aint lb, ext;
  int e;
  if (!nb_mode) return collc_bcast_algo(a, buf, n, t, root, c);
  if (nb_needs_setup(a)) { /* the blocking set-up call, on scratch */
    MPI_Type_get_extent(t, &lb, &ext);
    char *s = nb_scratch((size_t)ext * (size_t)(n > 0 ? n : 1));
    if (!s) return MPI_ERR_NO_MEM;
    if ((e = collc_bcast_algo(a, s, n, t, root, c))) return e;
  }
  char what[ALGO_LEN + 32];
  snprintf(what, sizeof what, "bcast %s n=%d root=%d", a, n, root);
  return nb_finish(&r, collc_ibcast_algo(a, buf, n, t, root, c, &r), what);
}

/* collc_bcast (default rule) as an rl_bcast_fn (a is a label). */
static int bc_collc(const char *a, void *buf, int n, MPI_Datatype t, int root, MPI_Comm c) {
  (void)a;
  return collc_bcast(buf, n, t, root, c);
}

/* The intercepted MPI_Bcast as an rl_bcast_fn (a is a label). */
static int bc_mpi(const char *a, void *buf, int n, MPI_Datatype t, int root, MPI_Comm c) {
  MPI_Request r = MPI_REQUEST_NULL;
  (void)a;
  if (nb_mode) return nb_finish(&r, MPI_Ibcast(buf, n, t, root, c, &r), "MPI_Ibcast");
  return MPI_Bcast(buf, n, t, root, c);
}

/* The target of a bcast check through entry point via (see tgt). */
static rl_bcast bct(int via, const char *algo, MPI_Comm comm, const char *cname) {
  rl_bcast b = {via == VIA_ALGO    ? bc_algo
                : via == VIA_COLLC ? bc_collc
                                   : bc_mpi,
                algo, comm, cname};
  return b;
}

/* bcast: every algorithm with every root, each datatype case of testlib.h
 * (rotating), counts 0, 1, 7, 100 (quick: 2 roots, count 7). */
static void bcast_matrix(tl_ctx *ctx, const suite *U, const algo_list *L, int p) {
  static const int counts[4] = {0, 1, 7, 100};
  for (int a = 0; a < L->n; a++) {
    rl_bcast g = bct(VIA_ALGO, L->name[a], MPI_COMM_WORLD, "WORLD");
    for (int root = 0; root < p; root++) {
      if (U->quick && root != 0 && root != p - 1) continue;
      for (int i = (root + a) % 2; i < U->T.n; i += 2)
        for (int j = U->quick ? 2 : 0; j < (U->quick ? 3 : 4); j++)
          rl_bcast_check(ctx, &g, &U->T.t[i], counts[j], root, a + i + j);
    }
  }
}

/* bcast where ranks type the same bytes with elements of different sizes
 * (even ranks MPI_INT, odd ranks 3 ints contiguous: 12 bytes, which does
 * not divide a cache line), after a call with MPI_INT everywhere (so the
 * mixed call binds the cached decision anew on odd ranks only): 400 KB, so
 * chunked plans split it; root p - 1. Every algorithm of L. */
static void bcast_granularity(tl_ctx *ctx, const algo_list *L, int p) {
  enum { N = 3 * 33337 };
  int *buf = malloc(N * sizeof *buf);
  MPI_Datatype c3;
  MPI_Type_contiguous(3, MPI_INT, &c3);
  MPI_Type_commit(&c3);
  for (int a = 0; a < L->n && buf; a++)
    for (int call = 0; call < 3; call++) {
      int mixed = call > 0 && ctx->rank % 2, root = p - 1, bad = -1;
      for (int i = 0; i < N; i++) buf[i] = ctx->rank == root ? i * 5 + call : -1;
      int rc = mixed ? bc_algo(L->name[a], buf, N / 3, c3, root, MPI_COMM_WORLD)
                     : bc_algo(L->name[a], buf, N, MPI_INT, root, MPI_COMM_WORLD);
      for (int i = 0; i < N && bad < 0; i++)
        if (buf[i] != i * 5 + call) bad = i;
      if (rc || bad >= 0)
        tl_fail(ctx, "bcast %s, elements of %d bytes here (call %d): returned %d, int %d wrong",
                L->name[a], mixed ? 12 : 4, call, rc, bad);
      ctx->checks++;
    }
  MPI_Type_free(&c3);
  free(buf);
}

/* Large vectors: 100000 doubles (rough sums: order matters) through each
 * reduction family, 100000 ints through reduce, allgather and bcast (the
 * phase's part). */
static void large(tl_ctx *ctx, const suite *U, int p) {
  static const char *const ar[3] = {"recexch", "cyclic", "tree"};
  const rl_case *dr = rl_case_find(U->all, U->nall, "MPI_DOUBLE", RO_SUM, 1);
  const rl_case *is = rl_case_find(U->all, U->nall, "MPI_INT", RO_SUM, 0);
  rl_target r = tgt(C_REDUCE, VIA_ALGO, "tree", MPI_COMM_WORLD, "WORLD (large)");
  if (U->phase == 1) {
    red_check(ctx, &r, U, is, 100000, 1, p / 2, 97);
    red_check(ctx, &r, U, dr, 100000, 0, p - 1, 98);
    return;
  }
  for (int a = 0; a < (U->quick ? 1 : 3); a++) {
    rl_target g = tgt(C_ALLREDUCE, VIA_ALGO, ar[a], MPI_COMM_WORLD, "WORLD (large)");
    red_check(ctx, &g, U, dr, 100000, a == 1, 0, 90 + a);
    rl_target s = tgt(C_RSB, VIA_ALGO, ar[a], MPI_COMM_WORLD, "WORLD (large)");
    if (a < 2) red_check(ctx, &s, U, dr, 100000 / p + 1, a == 0, 0, 95 + a);
  }
  tl_target t = {ag_algo, "recexch", MPI_COMM_WORLD, "WORLD (large)"};
  tl_check_ref(ctx, &t, tl_find(&U->T, "int"), 100000 / p + 1, 1, 99, PMPI_Allgather,
               "PMPI_Allgather");
  t.algo = "cyclic";
  tl_check_ref(ctx, &t, tl_find(&U->T, "double"), 100000 / p + 1, 0, 99, PMPI_Allgather,
               "PMPI_Allgather");
  rl_bcast b = bct(VIA_ALGO, "tree", MPI_COMM_WORLD, "WORLD (large)");
  rl_bcast_check(ctx, &b, tl_find(&U->T, "int"), 100000, p / 2, 100);
}

/* The same plan again and again with new values and new buffers, with
 * other plans (other type and count, in place) in between (the phase's
 * collectives). reduce: in place at the root only, so the non-roots find
 * their plan cached while the root's key differs. */
static void reuse(tl_ctx *ctx, const suite *U, int p) {
  static const char *const algos[3][2] = {
      {"recexch", "cyclic"}, {"recexch", "cyclic"}, {"tree:2,3", "tree"}};
  const rl_case *ci = rl_case_find(U->all, U->nall, "MPI_INT", RO_SUM, 0);
  const rl_case *cd = rl_case_find(U->all, U->nall, "MPI_DOUBLE", RO_SUM, 1);
  for (int coll = 0; coll < 3; coll++)
    for (int a = 0; a < (U->quick ? 1 : 2) && in_phase(U, coll); a++) {
      rl_target g = tgt(coll, VIA_ALGO, algos[coll][a], MPI_COMM_WORLD, "WORLD (reuse)");
      for (int it = 0; it < (U->quick ? 2 : 5); it++) {
        red_check(ctx, &g, U, ci, 100, 0, p - 1, 300 + it);
        red_check(ctx, &g, U, cd, 33, 0, p - 1, 400 + it);
        red_check(ctx, &g, U, ci, 100, 1, p - 1, 500 + it);
      }
    }
  tl_target t = {ag_algo, "recexch", MPI_COMM_WORLD, "WORLD (reuse)"};
  for (int it = 0; it < (U->quick ? 2 : 5) && U->phase == 0; it++) {
    tl_check_ref(ctx, &t, tl_find(&U->T, "int"), 7, 0, 600 + it, PMPI_Allgather, "PMPI_Allgather");
    tl_check_ref(ctx, &t, tl_find(&U->T, "int"), 7, 1, 700 + it, PMPI_Allgather, "PMPI_Allgather");
  }
}

/* The MPI_* entry points (intercepted) and collc_* with the default rule
 * (the phase's collectives). */
static void entry_points(tl_ctx *ctx, const suite *U, int p) {
  for (int via = VIA_COLLC; via <= VIA_MPI; via++) {
    const char *label = via == VIA_MPI ? "MPI_* (default rule)" : "collc_* (default rule)";
    for (int coll = 0; coll < 3; coll++) {
      rl_target g = tgt(coll, via, label, MPI_COMM_WORLD, "WORLD");
      if (!in_phase(U, coll)) continue;
      for (int i = 0; i < U->ncore; i += U->quick ? 5 : 1)
        red_check(ctx, &g, U, U->core[i], 7 + i, i % 2, i % p, 800 + i);
    }
    tl_target t = {via == VIA_MPI ? ag_mpi : ag_collc, label, MPI_COMM_WORLD, "WORLD"};
    rl_bcast b = bct(via, label, MPI_COMM_WORLD, "WORLD");
    for (int i = 0; i < U->T.n && U->phase == 0; i += U->quick ? 3 : 1) {
      tl_check_ref(ctx, &t, &U->T.t[i], 5, 0, 900 + i, PMPI_Allgather, "PMPI_Allgather");
      rl_bcast_check(ctx, &b, &U->T.t[i], 5, i % p, 900 + i);
    }
  }
}

/* Algorithm texts that do not fit: refused with MPI_ERR_ARG on every rank
 * (a recexch product that is not p, fan-in 1, an unknown name, a cyclic
 * allgather product below p). */
static void unfit(tl_ctx *ctx, int p) {
  char bad[3][ALGO_LEN];
  int x[16] = {0}, y[16] = {0}, e, cls = 0;
  snprintf(bad[0], ALGO_LEN, "recexch:-%d,%d", p + 1, p + 1);
  snprintf(bad[1], ALGO_LEN, "tree:1");
  snprintf(bad[2], ALGO_LEN, "bogus");
  for (int coll = 0; coll < 3; coll++)
    for (int b = 0; b < 3; b++) {
      rl_target g = tgt(coll, VIA_ALGO, bad[b], MPI_COMM_WORLD, "WORLD");
      e = g.fn(coll, g.algo, x, y, 1, MPI_INT, MPI_SUM, 0, g.comm);
      MPI_Error_class(e, &cls);
      if (cls != MPI_ERR_ARG)
        tl_fail(ctx, "%s %s: returned %d, not MPI_ERR_ARG", coll_names[coll], bad[b], e);
      ctx->checks++;
    }
  if (p >= 3) {
    e = collc_allgather_algo("cyclic:2", x, 1, MPI_INT, y, 1, MPI_INT, MPI_COMM_WORLD);
    MPI_Error_class(e, &cls);
    if (cls != MPI_ERR_ARG) tl_fail(ctx, "allgather cyclic:2 at p = %d: returned %d", p, e);
  }
}

/* A predefined op on a derived type with holes (vector, MPI_SUM): collc
 * hands it to the native call, so it must fail or succeed exactly as
 * PMPI_Allreduce does (Open MPI 4.1 and MPICH 4.0 refuse it: MPI_ERR_OP). */
static void derived_predefined(tl_ctx *ctx, const suite *U) {
  int x[64], y[64], z[64], e, en, cls = 0, ncls = 0;
  for (int i = 0; i < 64; i++) x[i] = ctx->rank + i, y[i] = z[i] = -1;
  e = collc_allreduce_algo("recexch", x, y, 3, U->S.vec, MPI_SUM, MPI_COMM_WORLD);
  en = PMPI_Allreduce(x, z, 3, U->S.vec, MPI_SUM, MPI_COMM_WORLD);
  MPI_Error_class(e, &cls);
  MPI_Error_class(en, &ncls);
  if (cls != ncls || memcmp(y, z, sizeof y))
    tl_fail(ctx, "allreduce recexch vec MPI_SUM: returned class %d, PMPI_Allreduce %d%s", cls, ncls,
            memcmp(y, z, sizeof y) ? " (results differ)" : "");
  ctx->checks++;
}

/* Sub-communicator checks of one reduction on comm (named cname). */
static void sub_reductions(tl_ctx *ctx, const suite *U, MPI_Comm comm, const char *cname) {
  static const char *const algos[3][2] = {
      {"recexch", "cyclic"}, {"recexch", "cyclic"}, {"tree:2,3", "tree"}};
  static const struct {
    const char *t;
    int op, rough;
  } cases[] = {{"MPI_INT", RO_SUM, 0}, {"MPI_UINT8_T", RO_SUM, 0}, {"mat4", RO_UMAT, 0},
               {"MPI_DOUBLE", RO_SUM, 1}, {"MPI_DOUBLE_INT", RO_MAXLOC, 0}};
  int p;
  MPI_Comm_size(comm, &p);
  for (int coll = 0; coll < 3; coll++)
    for (int a = 0; a < 2 && in_phase(U, coll); a++) {
      rl_target g = tgt(coll, VIA_ALGO, algos[coll][a], comm, cname);
      for (int i = 0; i < 5; i += U->quick ? 2 : 1) {
        const rl_case *c = rl_case_find(U->all, U->nall, cases[i].t, cases[i].op, cases[i].rough);
        red_check(ctx, &g, U, c, 7, i % 2, p - 1, 1100 + i);
        if (!U->quick) red_check(ctx, &g, U, c, 100, (i + 1) % 2, 0, 1200 + i);
      }
    }
}

/* Allgather and bcast checks on comm (named cname). */
static void sub_others(tl_ctx *ctx, const suite *U, MPI_Comm comm, const char *cname) {
  static const char *const ag[2] = {"recexch", "cyclic"}, *const bc[2] = {"tree", "tree:3"};
  int p;
  MPI_Comm_size(comm, &p);
  for (int a = 0; a < 2; a++) {
    tl_target t = {ag_algo, ag[a], comm, cname};
    rl_bcast b = bct(VIA_ALGO, bc[a], comm, cname);
    for (int i = 0; i < U->T.n; i += U->quick ? 3 : 2) {
      tl_check_ref(ctx, &t, &U->T.t[i], 3, i % 4 == 0, 1300 + i, PMPI_Allgather, "PMPI_Allgather");
      rl_bcast_check(ctx, &b, &U->T.t[i], 3, (i + a) % p, 1300 + i);
    }
  }
}

/* Fill n ints of buf with values of (rank, seed). */
static void fill_ints(int *buf, int n, int rank, int seed) {
  for (int i = 0; i < n; i++) buf[i] = (int)(rl_hash(rank, seed, (uint64_t)i) & 0xffffff);
}

/* One reduction on the intercommunicator inter (lower: this rank is in the
 * lower group; nl, nr: local and remote group sizes) through collc's
 * algorithm entry point and through MPI_*, compared with PMPI_* byte for
 * byte. reduce: root is the lower group's rank 0; reduce_scatter_block:
 * recvcount 2 nr, so both groups reduce vectors of 2 nl nr ints. */
static void inter_reduction(tl_ctx *ctx, int coll, MPI_Comm inter, int lower, int nl, int nr) {
  static const char *const algos[3] = {"recexch", "recexch", "tree"};
  int lr, rc = coll == C_RSB ? 2 * nr : 7, root = 0;
  MPI_Comm_rank(inter, &lr);
  if (coll == C_REDUCE && lower) root = lr == 0 ? MPI_ROOT : MPI_PROC_NULL;
  int nin = coll == C_RSB ? nl * rc : rc, in[512], ours[512], ref[512];
  for (int via = 0; via < 3; via += 2) {
    rl_target g =
        tgt(coll, via, via == VIA_ALGO ? algos[coll] : "MPI_*", inter, "intercommunicator");
    fill_ints(in, nin, lr + (lower ? 0 : 100), via);
    memset(ours, TL_SENTINEL, sizeof ours);
    memset(ref, TL_SENTINEL, sizeof ref);
    int e = g.fn(coll, g.algo, in, ours, rc, MPI_INT, MPI_SUM, root, inter);
    int en = rl_native_call(coll, in, ref, rc, MPI_INT, MPI_SUM, root, inter);
    if (e || en || memcmp(ours, ref, sizeof ours))
      tl_fail(ctx, "%s %s on an intercommunicator: returned %d (PMPI %d), results %s",
              coll_names[coll], g.algo, e, en, memcmp(ours, ref, sizeof ours) ? "differ" : "equal");
    ctx->checks++;
  }
}

/* bcast on the intercommunicator (root: the lower group's rank 0). */
static void inter_bcast(tl_ctx *ctx, MPI_Comm inter, int lower) {
  int lr, root, ours[16], ref[16];
  MPI_Comm_rank(inter, &lr);
  root = lower ? (lr == 0 ? MPI_ROOT : MPI_PROC_NULL) : 0;
  for (int via = 0; via < 3; via += 2) {
    memset(ours, TL_SENTINEL, sizeof ours);
    if (lower && lr == 0) fill_ints(ours, 16, 0, 5 + via);
    memcpy(ref, ours, sizeof ref);
    rl_bcast b = bct(via, "tree", inter, "intercommunicator");
    int e = b.fn(b.algo, ours, 16, MPI_INT, root, inter);
    int en = PMPI_Bcast(ref, 16, MPI_INT, root, inter);
    if (e || en || memcmp(ours, ref, sizeof ours))
      tl_fail(ctx, "bcast %s on an intercommunicator: returned %d (PMPI %d)",
              via ? "MPI_Bcast" : "tree", e, en);
    ctx->checks++;
  }
}

/* Every collective once (or twice) on an intercommunicator between the
 * uneven parts of WORLD (half: this rank's part). Needs 2 ranks. */
static void intercomm(tl_ctx *ctx, const suite *U, MPI_Comm half) {
  MPI_Comm inter;
  int cut = (ctx->size + 2) / 3, lower = ctx->rank < cut, nl, nr;
  if (ctx->size < 2) return;
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, lower ? cut : 0, 12, &inter);
  MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
  MPI_Comm_size(inter, &nl);
  MPI_Comm_remote_size(inter, &nr);
  for (int coll = 0; coll < 3; coll++) inter_reduction(ctx, coll, inter, lower, nl, nr);
  tl_target t[2] = {{ag_algo, "recexch", inter, "intercommunicator"},
                    {ag_mpi, "MPI_Allgather", inter, "intercommunicator"}};
  for (int k = 0; k < 2; k++)
    tl_check_ref(ctx, &t[k], tl_find(&U->T, "int"), 3, 0, 1400 + k, PMPI_Allgather,
                 "PMPI_Allgather");
  inter_bcast(ctx, inter, lower);
  MPI_Comm_free(&inter);
}

/* The phase's collectives on WORLD in reversed rank order and on two
 * uneven parts, then on an intercommunicator between the parts. */
static void subcomms(tl_ctx *ctx, const suite *U) {
  MPI_Comm rev, half;
  MPI_Comm_split(MPI_COMM_WORLD, 0, ctx->size - ctx->rank, &rev);
  MPI_Comm_split(MPI_COMM_WORLD, ctx->rank < (ctx->size + 2) / 3, ctx->rank, &half);
  MPI_Comm_set_errhandler(rev, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
  sub_reductions(ctx, U, rev, "reversed WORLD");
  sub_reductions(ctx, U, half, "uneven part of WORLD");
  if (U->phase == 0) {
    sub_others(ctx, U, rev, "reversed WORLD");
    sub_others(ctx, U, half, "uneven part of WORLD");
    intercomm(ctx, U, half);
  }
  MPI_Comm_free(&rev);
  MPI_Comm_free(&half);
}

/* Only calls collc must hand to the native collective: the vector type
 * with holes under the user sum (counts 1, 7, 100: correct results) and
 * contig3xdouble under MPI_SUM (the native error), through allreduce
 * (recexch), reduce_scatter_block (recexch) and reduce (tree), so that
 * COLLC_STATS=1 prints "<coll> native calls=4" for each of them and no
 * line of another algorithm. */
static void fallback(tl_ctx *ctx, const suite *U, int p) {
  static const char *const algos[3] = {"recexch", "recexch", "tree"};
  static const int counts[3] = {1, 7, 100};
  const rl_case *v = rl_case_find(U->all, U->nall, "vec", RO_UVSUM, 0);
  const rl_case *d = rl_case_find(U->all, U->nall, "contig3xdouble", RO_SUM, 0);
  for (int coll = 0; coll < 3; coll++) {
    rl_target g = tgt(coll, VIA_ALGO, algos[coll], MPI_COMM_WORLD, "WORLD (fallback)");
    for (int j = 0; j < 3; j++) red_check(ctx, &g, U, v, counts[j], j == 1, p - 1, 1500 + j);
    red_check(ctx, &g, U, d, 5, 0, 0, 1600);
  }
}

/* Print the algorithm lists (rank 0). */
static void print_algos(const tl_ctx *ctx, const algo_list *L, const suite *U) {
  if (ctx->rank != 0) return;
  printf("p=%d quick=%d: %d cases (%d core), %d allgather/bcast types\n", ctx->size, U->quick,
         U->nall, U->ncore, U->T.n);
  for (int coll = 0; coll < C_COUNT; coll++) {
    printf("%s:", coll_names[coll]);
    for (int a = 0; a < L[coll].n; a++) printf(" %s", L[coll].name[a]);
    printf("\n");
  }
  fflush(stdout);
}

/* Phase 0 on WORLD: every collective but reduce (timings on rank 0). */
static void phase0(tl_ctx *ctx, suite *U, const algo_list *L) {
  int p = ctx->size;
  double t[5];
  U->phase = 0;
  t[0] = tl_now();
  red_matrix(ctx, U, C_ALLREDUCE, &L[C_ALLREDUCE], p);
  red_matrix(ctx, U, C_RSB, &L[C_RSB], p);
  t[1] = tl_now();
  allgather_matrix(ctx, U, &L[C_ALLGATHER], p);
  bcast_matrix(ctx, U, &L[C_BCAST], p);
  bcast_granularity(ctx, &L[C_BCAST], p);
  t[2] = tl_now();
  full_matrix(ctx, U, L, p);
  t[3] = tl_now();
  large(ctx, U, p);
  reuse(ctx, U, p);
  entry_points(ctx, U, p);
  unfit(ctx, p);
  derived_predefined(ctx, U);
  subcomms(ctx, U);
  t[4] = tl_now();
  if (ctx->rank == 0)
    printf("allreduce+reduce_scatter_block x algorithms %.1f s, allgather+bcast %.1f s, types x "
           "ops x algorithms %.1f s, other cases %.1f s\n",
           t[1] - t[0], t[2] - t[1], t[3] - t[2], t[4] - t[3]);
}

/* Phase 1: reduce, last. Roots pass MPI_IN_PLACE alone, and a library that
 * keys its collective plan decisions on that flag deadlocks here (the
 * non-roots find a decision cached that the root must make collectively);
 * everything else has been checked by then. */
static void phase1(tl_ctx *ctx, suite *U, const algo_list *L) {
  int p = ctx->size;
  double t0 = tl_now();
  U->phase = 1;
  if (ctx->rank == 0) printf("reduce (every root; in place at the root only)\n");
  fflush(stdout);
  rl_target probe = tgt(C_REDUCE, VIA_ALGO, "tree", MPI_COMM_WORLD, "WORLD");
  rl_reduce_in_place_probe(ctx, &probe);
  reduce_matrix(ctx, U, &L[C_REDUCE], p);
  full_matrix(ctx, U, L, p);
  large(ctx, U, p);
  reuse(ctx, U, p);
  entry_points(ctx, U, p);
  subcomms(ctx, U);
  if (ctx->rank == 0) printf("reduce %.1f s\n", tl_now() - t0);
}

/* The matrix and the extra cases (or only the fallback calls with
 * COLLC_TEST_FALLBACK=1); exit status 1 if any check failed on any rank. */
int main(int argc, char **argv) {
  tl_ctx ctx;
  static suite U;
  static algo_list L[C_COUNT];
  MPI_Init(&argc, &argv);
  tl_init(&ctx, "mpi_reductions");
  double t0 = tl_now();
  U.quick = tl_env_int("COLLC_TEST_QUICK", 0);
  nb_init(&ctx);
  rl_types_create(&ctx, &U.S);
  U.nall = rl_cases_all(&U.S, U.all, MAX_CASES);
  core_cases(&U);
  tl_types_create(&ctx, &U.T);
  if (U.quick) { /* int, double, 2xcontig3>6xint, 2xint>vec, rvec, by rank */
    static const int keep[] = {0, 1, 3, 4, 6, 9};
    tl_types_subset(&U.T, keep, 6);
  }
  for (int coll = 0; coll < C_COUNT; coll++) all_algos(&L[coll], coll, ctx.size, U.quick);
  if (tl_env_int("COLLC_TEST_FALLBACK", 0)) {
    fallback(&ctx, &U, ctx.size);
  } else {
    print_algos(&ctx, L, &U);
    phase0(&ctx, &U, L);
    phase1(&ctx, &U, L);
  }
  tl_types_free(&U.T);
  rl_types_free(&U.S);
  int status = tl_finish(&ctx, t0);
  MPI_Finalize();
  return status;
}
