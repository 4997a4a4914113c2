/* alltoall.c - the all-to-all correctness matrix over MPI.
 *
 * Every algorithm collc offers for the communicator size p (native,
 * pairwise, linear, bruck:2, bruck:3, bruck:p, torus over every ordered
 * factorisation of p with each component and one mixed component list,
 * torus:d=2, torus:d=3) through collc_alltoall_algo, for counts 0, 1, 3, 17
 * (1000 for a few), every datatype case of testlib.h, in place and not,
 * each compared with PMPI_Alltoall on the same input. Then: plan cache
 * reuse with new buffers and values, plan eviction, a freed and re-created
 * derived datatype (likely the same handle) with the same counts, the
 * intercepted MPI_Alltoall and collc_alltoall with the default rule,
 * collc_alltoall_torus on a communicator that was not factorised, and
 * sub-communicators (reversed rank order, uneven halves).
 *
 * COLLC_TEST_QUICK=1 (MPICH, slow when oversubscribed): counts 0, 1, 17,
 * components linear and native, the first 3 factorisations only, and the
 * datatype cases int, 2xcontig3>6xint, 2xint>vec and rvec, and fewer
 * repetitions in the extra cases.
 *
 * COLLC_TEST_NB=1: the call under test is the nonblocking one
 * (collc_ialltoall_algo for collc_alltoall_algo, MPI_Ialltoall for the
 * intercepted MPI_Alltoall), completed by a rotating completion call
 * (nbwait.h); collc_alltoall and collc_alltoall_torus stay blocking. Tori
 * with native components included: their group all-to-alls are posted
 * nonblocking on every rank, however each rank advances the plan.
 */
#include "collc.h"
#include "testlib.h"
#include "nbmode.h"

/* Whether algorithm text a needs a blocking call first (nbmode.h): the
 * node-aware ones, and a torus with native components (which needs its
 * group communicators). */
static int nb_needs_setup(const char *a) {
  return !strncmp(a, "hier", 4) || !strncmp(a, "shm", 3) ||
         (!strncmp(a, "torus", 5) && strstr(a, "native"));
}

/* collc_ialltoall_algo completed by nb_finish, after a blocking set-up
 * call of the same kind on scratch buffers where algo needs one. */
static int ialgo(const char *algo, const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                 MPI_Datatype rt, MPI_Comm comm) {
  MPI_Request r = MPI_REQUEST_NULL;
  char what[96];
  int p, e = MPI_SUCCESS;
  if (nb_needs_setup(algo)) {
    MPI_Comm_size(comm, &p);
    size_t ss = tl_span(st, (long)p * sc), rs = tl_span(rt, (long)p * rc);
    char *s = calloc(1, ss), *o = calloc(1, rs);
    e = !s || !o ? MPI_ERR_NO_MEM
                 : collc_alltoall_algo(algo, sb == MPI_IN_PLACE ? sb : s, sc, st, o, rc, rt, comm);
    free(s), free(o);
    if (e) return e;
  }
  snprintf(what, sizeof what, "alltoall %s n=%d%s", algo, rc,
           sb == MPI_IN_PLACE ? " in place" : "");
  return nb_finish(&r, collc_ialltoall_algo(algo, sb, sc, st, rb, rc, rt, comm, &r), what);
}

#define MAX_ALGOS 96
#define ALGO_LEN 64

typedef struct {
  char name[MAX_ALGOS][ALGO_LEN];
  int n;
} algo_list;

/* Append text to L (ignored when full or too long). */
static void algo_add(algo_list *L, const char *text) {
  size_t len = strlen(text);
  if (L->n < MAX_ALGOS && len < ALGO_LEN) memcpy(L->name[L->n++], text, len + 1);
}

/* Every ordered factorisation of n into factors >= 2 with exactly want
 * factors, appended (as "AxBx..") to out[*nout]; prefix holds the factors
 * chosen so far. */
static void factorisations(int n, int want, char *prefix, char out[][ALGO_LEN], int *nout,
                           int max) {
  size_t len = strlen(prefix);
  if (want == 1) {
    if (n >= 2 && *nout < max) snprintf(out[(*nout)++], ALGO_LEN, "%s%d", prefix, n);
    return;
  }
  for (int f = 2; f <= n; f++) {
    if (n % f) continue;
    snprintf(prefix + len, ALGO_LEN - len, "%dx", f);
    factorisations(n / f, want - 1, prefix, out, nout, max);
    prefix[len] = 0;
  }
}

/* Append s to the string in buf of capacity cap (truncating). */
static void append(char *buf, size_t cap, const char *s) {
  size_t at = strlen(buf), n = strlen(s);
  if (at + n >= cap) n = cap - 1 - at;
  memcpy(buf + at, s, n);
  buf[at + n] = 0;
}

/* The torus choices for p: factorisations by decreasing number of factors
 * (quick: the first 3), each with every component, plus a mixed list. */
static void torus_algos(algo_list *L, int p, int quick) {
  static const char *const comps[] = {"linear", "native", "pairwise"};
  char fac[64][ALGO_LEN], prefix[ALGO_LEN], text[ALGO_LEN];
  int nf = 0, ncomp = quick ? 2 : 3;
  for (int d = 4; d >= 1; d--) {
    prefix[0] = 0;
    factorisations(p, d, prefix, fac, &nf, 64);
  }
  if (p == 1) snprintf(fac[nf++], ALGO_LEN, "1");
  if (quick && nf > 3) nf = 3;
  for (int i = 0; i < nf; i++) {
    int d = 1;
    for (const char *s = fac[i]; *s; s++) d += *s == 'x';
    for (int c = 0; c <= ncomp; c++) { /* c == ncomp: the mixed list */
      if (c == ncomp && (d < 2 || quick)) break;
      text[0] = 0;
      append(text, sizeof text, "torus:");
      append(text, sizeof text, fac[i]);
      for (int k = 0; k < (c < ncomp ? 1 : d); k++) { /* mixed: native, pairwise, linear.. */
        append(text, sizeof text, k ? "," : ":");
        append(text, sizeof text, comps[c < ncomp ? c : (k + 1) % 3]);
      }
      algo_add(L, text);
    }
  }
}

/* All algorithms of the matrix for p. */
static void all_algos(algo_list *L, int p, int quick) {
  char text[ALGO_LEN];
  L->n = 0;
  algo_add(L, "native");
  if (tl_env_int("COLLC_TEST_HIER", 0)) { /* node-aware (with COLLC_NODE_SIZE) */
    int k = tl_env_int("COLLC_NODE_SIZE", 0);
    algo_add(L, "hier");
    if (k == 0 || k >= p) /* one node: messages through the segment */
      algo_add(L, "shm"), algo_add(L, "shm:bruck:2"), algo_add(L, "shm:torus:d=2:pairwise"),
          algo_add(L, "shm:direct=0"), algo_add(L, "shm:direct=0:bruck:2");
    return;
  }
  algo_add(L, "pairwise");
  algo_add(L, "linear");
  algo_add(L, "bruck:2");
  algo_add(L, "bruck:3");
  if (p > 3) {
    snprintf(text, sizeof text, "bruck:%d", p);
    algo_add(L, text);
  }
  torus_algos(L, p, quick);
  algo_add(L, "torus:d=2");
  algo_add(L, "torus:d=3");
}

/* collc_alltoall_algo (or its nonblocking form) as a tl_a2a_fn. */
static int via_algo(const char *algo, const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                    MPI_Datatype rt, MPI_Comm comm) {
  if (nb_mode) return ialgo(algo, sb, sc, st, rb, rc, rt, comm);
  return collc_alltoall_algo(algo, sb, sc, st, rb, rc, rt, comm);
}

/* The intercepted MPI_Alltoall (or MPI_Ialltoall) as a tl_a2a_fn (algo is
 * only a label). */
static int via_mpi(const char *algo, const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                   MPI_Datatype rt, MPI_Comm comm) {
  MPI_Request r = MPI_REQUEST_NULL;
  (void)algo;
  if (nb_mode)
    return nb_finish(&r, MPI_Ialltoall(sb, sc, st, rb, rc, rt, comm, &r), "MPI_Ialltoall");
  return MPI_Alltoall(sb, sc, st, rb, rc, rt, comm);
}

/* collc_alltoall (selection as MPI_Alltoall) as a tl_a2a_fn. */
static int via_collc(const char *algo, const void *sb, int sc, MPI_Datatype st, void *rb,
                     int rc, MPI_Datatype rt, MPI_Comm comm) {
  (void)algo;
  return collc_alltoall(sb, sc, st, rb, rc, rt, comm);
}

/* collc_alltoall_torus as a tl_a2a_fn. */
static int via_torus(const char *algo, const void *sb, int sc, MPI_Datatype st, void *rb,
                     int rc, MPI_Datatype rt, MPI_Comm comm) {
  (void)algo;
  return collc_alltoall_torus(sb, sc, st, rb, rc, rt, comm);
}

/* Every count, type case and in-place mode for one target. */
static void check_all(tl_ctx *ctx, const tl_target *t, const tl_typeset *S, const int *counts,
                      int ncounts, int seed) {
  for (int c = 0; c < ncounts; c++)
    for (int i = 0; i < S->n; i++) {
      tl_check(ctx, t, &S->t[i], counts[c], 0, seed);
      if (S->inplace[i]) tl_check(ctx, t, &S->t[i], counts[c], 1, seed + 1);
    }
}

/* The matrix: every algorithm of L on WORLD; a few with count 1000. */
static void matrix(tl_ctx *ctx, const algo_list *L, const tl_typeset *S, int quick) {
  static const int full[] = {0, 1, 3, 17}, fast[] = {0, 1, 17};
  static const char *const big[] = {"linear", "bruck:2", "torus:d=2:native", "torus:d=3:pairwise"};
  for (int a = 0; a < L->n; a++) {
    tl_target t = {via_algo, L->name[a], MPI_COMM_WORLD, "WORLD"};
    check_all(ctx, &t, S, quick ? fast : full, quick ? 3 : 4, a);
  }
  for (int a = 0; a < (quick ? 1 : 4); a++) {
    tl_target t = {via_algo, big[a], MPI_COMM_WORLD, "WORLD"};
    tl_check(ctx, &t, tl_find(S, "int"), 1000, 0, a);
    tl_check(ctx, &t, tl_find(S, "int"), 1000, 1, a);
    tl_check(ctx, &t, tl_find(S, "rvec"), 1000, 0, a);
  }
}

/* Plan cache: the same plan with new buffers and values, and a plan
 * rebuilt after more than STATE_MAX_PLANS (16) others evicted it (quick:
 * fewer algorithms and repetitions). */
static void reuse(tl_ctx *ctx, const tl_typeset *S, int quick) {
  static const char *const algos[] = {"pairwise", "torus:d=2:native", "bruck:2",
                                      "torus:d=3:linear"};
  for (int a = 0; a < (quick ? 2 : 4); a++) {
    tl_target t = {via_algo, algos[a], MPI_COMM_WORLD, "WORLD (reuse)"};
    for (int it = 0; it < (quick ? 3 : 6); it++) {
      tl_check(ctx, &t, tl_find(S, "int"), 3, 0, 100 + it);
      tl_check(ctx, &t, tl_find(S, "rvec"), 3, it % 2, 200 + it);
    }
  }
  tl_target t = {via_algo, "bruck:2", MPI_COMM_WORLD, "WORLD (eviction)"};
  for (int c = 1; c <= (quick ? 17 : 20); c++) tl_check(ctx, &t, tl_find(S, "int"), c, 0, c);
  for (int c = 1; c <= (quick ? 1 : 3); c++) tl_check(ctx, &t, tl_find(S, "int"), c, 0, 50 + c);
}

/* Make a committed derived type of 2 ints, one MPI object each (so that a
 * just freed handle can be reused): layout 0 is vector(2,1,3) (ints at 0
 * and 12 bytes, extent 16), layout 1 hvector(2,1,8 bytes) (extent 12). */
static MPI_Datatype two_ints(tl_ctx *ctx, int layout) {
  MPI_Datatype t;
  if (layout == 0) MPI_Type_vector(2, 1, 3, MPI_INT, &t);
  else MPI_Type_create_hvector(2, 1, 2 * (MPI_Aint)sizeof(int), MPI_INT, &t);
  tl_commit(ctx, &t, layout ? "two_ints 1" : "two_ints 0");
  return t;
}

/* A new type of layout that, if possible, has the handle value old (a
 * type just freed): up to 8 tries, the misses freed afterwards. */
static MPI_Datatype recreate(tl_ctx *ctx, MPI_Datatype old, int layout) {
  MPI_Datatype miss[8], t = MPI_DATATYPE_NULL;
  int n = 0;
  while (n < 8) {
    t = two_ints(ctx, layout);
    if (t == old) break;
    miss[n++] = t;
  }
  if (n == 8) t = miss[--n];
  for (int i = 0; i < n; i++) MPI_Type_free(&miss[i]);
  return t;
}

/* One recycling sequence on target t: a derived type of 2 ints receives
 * (side 0, also in place) or sends (side 1) with count 3, is freed, and a
 * type of the other layout is made and used the same way, 4 times.
 * Returns how many of the new types had the freed type's handle. */
static int recycle_one(tl_ctx *ctx, const tl_target *t, int side) {
  MPI_Datatype d = two_ints(ctx, 0), old;
  int same = 0;
  for (int layout = 0; layout < 4; layout++) {
    tl_type ty = {layout % 2 ? "recycled hvector(2,1,8)" : "recycled vector(2,1,3)",
                  side ? d : MPI_INT, side ? MPI_INT : d, side ? 1 : 2, side ? 2 : 1, TL_INT};
    tl_check(ctx, t, &ty, 3, 0, layout);
    if (!side) tl_check(ctx, t, &ty, 3, 1, layout);
    old = d;
    MPI_Type_free(&d);
    if (layout < 3) {
      d = recreate(ctx, old, (layout + 1) % 2);
      same += d == old;
    }
  }
  return same;
}

/* A derived type freed and another (different layout, likely the same
 * handle) created and used with the same counts: no stale cached plan
 * (quick: 2 algorithms). */
static void recycle(tl_ctx *ctx, int quick) {
  static const char *const algos[] = {"pairwise", "torus:d=2:native", "linear", "bruck:2",
                                      "torus:d=2:linear"};
  int same = 0, n = quick ? 2 : 5;
  for (int a = 0; a < n; a++)
    for (int side = 0; side < 2; side++) {
      tl_target t = {via_algo, algos[a], MPI_COMM_WORLD, "WORLD (recycled type)"};
      same += recycle_one(ctx, &t, side);
    }
  if (ctx->rank == 0) printf("recycled datatype handles reused: %d of %d\n", same, 6 * n);
}

/* The public entry points with the default selection, on WORLD (counts 0,
 * 1, 5; quick: 0, 5). */
static void entry_points(tl_ctx *ctx, const tl_typeset *S, int quick) {
  static const int counts[] = {5, 0, 1};
  tl_target t[] = {{via_mpi, "MPI_Alltoall (default rule)", MPI_COMM_WORLD, "WORLD"},
                   {via_collc, "collc_alltoall", MPI_COMM_WORLD, "WORLD"},
                   {via_torus, "collc_alltoall_torus (not factorised)", MPI_COMM_WORLD,
                    "WORLD"}};
  for (int i = 0; i < 3; i++) check_all(ctx, &t[i], S, counts, quick ? 2 : 3, 300 + i);
}

/* On an intercommunicator between the two halves of WORLD (local comm
 * half, lower part first) MPI_Alltoall and collc_alltoall_algo must do what
 * PMPI_Alltoall does (collc passes intercommunicators through). Needs 2
 * ranks. */
static void intercomm(tl_ctx *ctx, const tl_typeset *S, MPI_Comm half) {
  MPI_Comm inter;
  int lower = ctx->rank < (ctx->size + 2) / 3, remote = lower ? (ctx->size + 2) / 3 : 0;
  if (ctx->size < 2) return;
  MPI_Intercomm_create(half, 0, MPI_COMM_WORLD, remote, 11, &inter);
  MPI_Comm_set_errhandler(inter, MPI_ERRORS_RETURN);
  tl_target t[2] = {{via_mpi, "MPI_Alltoall", inter, "intercommunicator"},
                    {via_algo, "bruck:2", inter, "intercommunicator"}};
  for (int k = 0; k < 2; k++)
    for (int i = 0; i < S->n; i += 3) tl_check(ctx, &t[k], &S->t[i], 2, 0, k + i);
  MPI_Comm_free(&inter);
}

/* Algorithms on sub-communicators: all ranks in reversed order, and two
 * uneven halves (ranks use their rank in comm, not in WORLD). */
static void subcomms(tl_ctx *ctx, const tl_typeset *S, int quick) {
  static const char *const algos[] = {"pairwise", "bruck:2", "torus:d=2:native",
                                      "torus:d=2:linear", "torus:d=3:pairwise", "native"};
  MPI_Comm rev, half;
  MPI_Comm_split(MPI_COMM_WORLD, 0, ctx->size - ctx->rank, &rev);
  MPI_Comm_split(MPI_COMM_WORLD, ctx->rank < (ctx->size + 2) / 3, ctx->rank, &half);
  MPI_Comm_set_errhandler(rev, MPI_ERRORS_RETURN);
  MPI_Comm_set_errhandler(half, MPI_ERRORS_RETURN);
  for (int a = 0; a < (quick ? 3 : 6); a++) {
    tl_target t1 = {via_algo, algos[a], rev, "reversed WORLD"};
    tl_target t2 = {via_algo, algos[a], half, "uneven half of WORLD"};
    for (int i = 0; i < S->n; i += 2) {
      tl_check(ctx, &t1, &S->t[i], 3, 0, a + i);
      tl_check(ctx, &t2, &S->t[i], 3, i % 4 == 0, a + i);
    }
  }
  if (!tl_is_smpi()) intercomm(ctx, S, half); /* (SMPI 3.32 has no MPI_Intercomm_create) */
  MPI_Comm_free(&rev);
  MPI_Comm_free(&half);
}

/* The whole matrix and the extra cases on MPI_COMM_WORLD; exit status 1 if
 * any check failed on any rank. */
int main(int argc, char **argv) {
  tl_ctx ctx;
  tl_typeset S;
  algo_list L;
  MPI_Init(&argc, &argv);
  tl_init(&ctx, "mpi_alltoall");
  double t0 = tl_now();
  int quick = tl_env_int("COLLC_TEST_QUICK", 0);
  nb_init(&ctx);
  tl_types_create(&ctx, &S);
  if (quick) { /* int, contig3 vs int, vector receive (holes), resized vector, by rank */
    static const int keep[] = {0, 3, 4, 6, 9};
    tl_types_subset(&S, keep, 5);
  }
  all_algos(&L, ctx.size, quick);
  if (ctx.rank == 0)
    printf("%d algorithms, %d type cases, quick=%d, nonblocking=%d\n", L.n, S.n, quick, nb_mode);
  matrix(&ctx, &L, &S, quick);
  double t1 = tl_now();
  reuse(&ctx, &S, quick);
  recycle(&ctx, quick);
  entry_points(&ctx, &S, quick);
  subcomms(&ctx, &S, quick);
  if (ctx.rank == 0) printf("matrix %.1f s, other cases %.1f s\n", t1 - t0, tl_now() - t1);
  tl_types_free(&S);
  int status = tl_finish(&ctx, t0);
  MPI_Finalize();
  return status;
}
