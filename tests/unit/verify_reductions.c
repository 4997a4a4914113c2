/* verify_reductions.c - every reduction generator (recexch, cyclic, tree)
 * through the verifier, over every legal factor list of every p <= 32.
 *
 * Truth, per run: the verifier's token check (src/check/verify.c): every
 * output element must hold exactly the contributions the collective defines
 * (allreduce, reduce: unit e of every rank; reduce_scatter_block: rank r's
 * block; allgather, bcast: the one input unit), for a non-commutative
 * operation in rank order (ordered hash), plus no race, no deadlock under
 * rendezvous semantics, sizes agreeing. verify_negative_reductions.c proves
 * that these reduction checks can fail. Independently of the generators,
 * this file also checks traffic where the formula is simple (derived here
 * from the algorithm's definition, not from its code):
 *   recexch allreduce, K = product(-), all K blocks equal and >= 64 bytes:
 *     units sent per rank 2 n (K-1)/K + (n/K) sum_{*}(k-1), messages
 *     p sum_{all steps}(k-1);
 *   recexch / cyclic reduce_scatter_block: n (p-1) units per rank;
 *   recexch / cyclic allgather: p-1 blocks per rank; recexch messages
 *     p sum(k-1); cyclic messages p sum_steps #{z < k : z W < p};
 *   cyclic allreduce, p equal blocks >= 64 bytes: 2 n (p-1)/p per rank;
 *   tree: reduce p-1 messages (+1 forward to a non-zero root when the
 *     operation does not commute), bcast p-1, allreduce 2(p-1); n units each.
 *
 * Legal lists (enumerated here, not taken from the library): recexch
 * allreduce = '-' steps, '*' steps, '+' steps, product(-) product(*) = p,
 * product(+) = product(-); reduce_scatter_block / allgather = ordered
 * factorisations of p; cyclic and tree = radices 2..p whose proper prefixes
 * have product < p and whose product is >= p ("cover" lists).
 * Counts: 0, 1, p-1, 2p+1 (not divisible by p) 8-byte elements, and the
 * "big" ones 200 8-byte and 64p + p/2 + 1 one-byte elements (every 64-byte
 * block nonempty, unequal); reduce_scatter_block 0, 1, 3, 2p+1, 37 per rank.
 * Coverage (COLLC_TEST_FULL=1: every combination everywhere, and every
 * cyclic list up to p = 32):
 *   recexch: every legal list of every p <= 32, every small combination
 *     (allreduce: non-commutative - the generator ignores commutativity,
 *     and the ordered check implies the multiset one) and a rotating big
 *     one; reduce_scatter_block, allgather every combination;
 *   cyclic: every cover list for p <= 16, 80 random ones per p in 17..32;
 *     each as reduce_scatter_block and allgather list, and for allreduce
 *     with itself, with the list at the mirrored index and a random one
 *     (every pair for p <= 6); one rotating combination each; resolve must
 *     reject non-commutative operations;
 *   tree: every cover list p <= 16; reduce every root for p <= 12 (else
 *     0, p-1, random), bcast every root; 12 random lists per p in 17..32;
 *   large p (1152, 1000, 997, 127, 66, 7 and two random p <= 1152, seed
 *     printed, COLLC_TEST_SEED overrides): default, random and single-radix
 *     lists, each run in a child process so that a crash is reported with
 *     its collc-verify command line instead of ending the test.
 * Thinned (AddressSanitizer builds, or COLLC_TEST_THIN=1, to stay inside
 * the harness's time limit; the plain build runs the sweep above): recexch
 * allreduce 2 rotating small combinations per list, big ones every 4th
 * list (reduce_scatter_block too); cyclic every list only for p <= 12, 30
 * per p above; above p = 16 every third p only (18, 21, ..., 30; the plain
 * build runs every p); large p 1152, 997, 127, 66, 7. */
#include <stdlib.h>
#include <string.h>
#include <time.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>
#include "algo/algo.h"
#include "check/verify.h"
#include "unit.h"
#include "rng.h"

#define MAXL 16 /* steps of one enumerated list */

enum { F_RX_AR, F_RX_RSB, F_RX_AG, F_CY_AR, F_CY_RSB, F_CY_AG, F_TR_AR, F_TR_RED, F_TR_BC,
       F_COUNT };
static const char *fam_name[F_COUNT] = {
    "recexch allreduce", "recexch reduce_scatter_block", "recexch allgather",
    "cyclic allreduce",  "cyclic reduce_scatter_block",  "cyclic allgather",
    "tree allreduce",    "tree reduce",                  "tree bcast"};
static const int fam_coll[F_COUNT] = {
    COLLC_COLL_ALLREDUCE, COLLC_COLL_REDUCE_SCATTER_BLOCK, COLLC_COLL_ALLGATHER,
    COLLC_COLL_ALLREDUCE, COLLC_COLL_REDUCE_SCATTER_BLOCK, COLLC_COLL_ALLGATHER,
    COLLC_COLL_ALLREDUCE, COLLC_COLL_REDUCE,               COLLC_COLL_BCAST};
static long fam_runs[F_COUNT], fam_lists[F_COUNT], fam_formula[F_COUNT];
static int full_mode; /* COLLC_TEST_FULL=1: every combination everywhere */
static int thin;      /* sanitizer build or COLLC_TEST_THIN=1: fewer runs */


/* One verifier run: collective of family fam, algorithm text, sizes. */
typedef struct {
  int fam, p, in_place, comm, root;
  int64_t count, eb; /* elements; bytes per element */
  const char *algo;
} vcase;

/* One (count, bytes per element, in place, commutative) combination. */
typedef struct {
  int64_t count, eb;
  int ip, comm;
} combo;

/* A factor list of up to MAXL radices; and a growing array of them. */
typedef struct {
  int n, f[MAXL];
} flist;
typedef struct {
  flist *v;
  int n, cap;
} flists;

/* Uniform in [0, n) (n >= 1). */
static int rnd(int n) { return (int)(rng() % (uint64_t)n); }

/* The collc-verify command line reproducing case k, into buf. */
static const char *repro(const vcase *k, char *buf, size_t len) {
  int reduces = coll_reduces(fam_coll[k->fam]);
  snprintf(buf, len, "collc-verify%s%s -r %d -b %lld %s %s %d %lld",
           k->in_place ? " -i" : "", reduces && !k->comm ? " -n" : "", k->root,
           (long long)k->eb, coll_name(fam_coll[k->fam]), k->algo, k->p, (long long)k->count);
  return buf;
}

/* The spec of case k, as tools/common.h builds it (allgather units are
 * blocks of count elements; bcast is always in place). */
static collc_spec spec_of(const vcase *k) {
  collc_spec s;
  memset(&s, 0, sizeof s);
  s.coll = fam_coll[k->fam], s.p = k->p, s.count = k->count, s.root = k->root;
  s.in_place = k->in_place || s.coll == COLLC_COLL_BCAST;
  s.commutative = k->comm;
  s.unit_bytes = s.coll == COLLC_COLL_ALLGATHER ? k->eb * k->count : k->eb;
  return s;
}

/* Parse, resolve and verify case k; R gets the report (zeroed if the
 * choice is rejected). Returns 1 if the verifier passed it. */
static int vrun(const vcase *k, verify_report *R) {
  collc_spec s = spec_of(k);
  collc_choice c;
  char why[200] = "", cmd[400];
  memset(R, 0, sizeof *R);
  fam_runs[k->fam]++;
  if (choice_parse(s.coll, k->algo, &c, why, sizeof why) ||
      choice_resolve(&s, &c, why, sizeof why))
    return CHECK(0, "%s: rejected: %s", repro(k, cmd, sizeof cmd), why);
  verify_choice(&s, &c, R);
  return CHECK(R->ok, "%s: %s", repro(k, cmd, sizeof cmd), R->first_error);
}

/* Append list l to L (growing it). */
static void fl_push(flists *L, const int *f, int n) {
  if (L->n == L->cap) {
    L->cap = L->cap ? 2 * L->cap : 64;
    L->v = realloc(L->v, (size_t)L->cap * sizeof *L->v);
    if (!L->v) abort();
  }
  L->v[L->n].n = n;
  memcpy(L->v[L->n].f, f, (size_t)n * sizeof *f);
  L->n++;
}

/* Every ordered factorisation of rem (factors >= 2) after prefix f[0..n)
 * into L; rem = 1 gives the prefix itself. */
static void fl_ordered(flists *L, int rem, int *f, int n) {
  if (rem == 1) {
    fl_push(L, f, n);
    return;
  }
  for (int x = 2; x <= rem; x++)
    if (rem % x == 0 && n < MAXL) {
      f[n] = x;
      fl_ordered(L, rem / x, f, n + 1);
    }
}

/* Every cover list of p (radices 2..p, proper prefix products < p,
 * product >= p) extending prefix f[0..n) of product prod, into L. */
static void fl_cover(flists *L, int p, int64_t prod, int *f, int n) {
  if (prod >= p) {
    fl_push(L, f, n);
    return;
  }
  for (int k = 2; k <= p && n < MAXL; k++) {
    f[n] = k;
    fl_cover(L, p, prod * k, f, n + 1);
  }
}

/* Append to buf (at *at) the steps of l with prefix kind ("-", "*", ""). */
static void put_steps(char *buf, size_t len, size_t *at, const char *kind, const flist *l) {
  for (int i = 0; i < l->n && *at < len; i++)
    *at += (size_t)snprintf(buf + *at, len - *at, "%c%s%d", strchr(buf, ':') ? ',' : ':',
                            kind, l->f[i]);
}

/* Algorithm text name[:rs steps][,* steps][,+ steps] (any may be NULL). */
static const char *algo_text(char *buf, size_t len, const char *name, const flist *rs,
                             const flist *ar, const flist *ag) {
  size_t at = (size_t)snprintf(buf, len, "%s", name);
  if (rs) put_steps(buf, len, &at, "-", rs);
  if (ar) put_steps(buf, len, &at, "*", ar);
  if (ag) put_steps(buf, len, &at, "", ag);
  return buf;
}

/* The combinations of family fam on p ranks into C; returns how many.
 * Small (big = 0): counts 0, 1, p-1 (reduce_scatter_block 3; allgather,
 * bcast 5), 2p+1, 8-byte elements, in place and not, non-commutative only
 * where the generator ignores commutativity (recexch, tree allreduce: the
 * ordered check implies the multiset one), both for tree reduce,
 * commutative for cyclic. Big (big = 1): 200 (reduce_scatter_block 37)
 * 8-byte elements and, for recexch and cyclic allreduce, 64p + p/2 + 1
 * one-byte elements; commutative and not. Full mode: both always. */
static int combos(int fam, int p, int big, combo *C) {
  int coll = fam_coll[fam], n = 0, reduces = coll_reduces(coll);
  int cyc = fam >= F_CY_AR && fam <= F_CY_AG, both = big || full_mode || fam == F_TR_RED;
  int64_t c[4] = {0, 1, p - 1, 2 * (int64_t)p + 1};
  int nc = 4;
  if (coll == COLLC_COLL_REDUCE_SCATTER_BLOCK) c[2] = 3;
  if (coll == COLLC_COLL_ALLGATHER || coll == COLLC_COLL_BCAST) c[2] = 5, nc = 3;
  if (big) c[0] = coll == COLLC_COLL_REDUCE_SCATTER_BLOCK ? 37 : 200, nc = 1;
  for (int ip = 0; ip < (coll == COLLC_COLL_BCAST ? 1 : 2); ip++)
    for (int cm = reduces && !cyc ? 0 : 1; cm < (reduces && !cyc && !both ? 1 : 2); cm++) {
      for (int i = 0; i < nc; i++) C[n++] = (combo){c[i], 8, ip, cm};
      if (big && coll == COLLC_COLL_ALLREDUCE && fam != F_TR_AR)
        C[n++] = (combo){64 * (int64_t)p + p / 2 + 1, 1, ip, cm};
    }
  return n;
}

/* Verify algo for family fam on p ranks (root): ms of its small and mb of
 * its big combinations, each taken cyclically from index `first`; a count
 * < 0, or full mode: all of them. Returns the number of failed runs. */
static int run_combos(int fam, const char *algo, int p, int root, int ms, int mb, long first) {
  combo C[32];
  int bad = 0;
  verify_report R;
  for (int big = 0; big < 2; big++) {
    int nc = combos(fam, p, big, C), m = big ? mb : ms;
    long at = first;
    if (m < 0 || m > nc || full_mode) m = nc, at = 0;
    for (int j = 0; j < m; j++) {
      const combo *x = &C[(at + j) % nc];
      vcase k = {fam, p, x->ip, x->comm, root, x->count, x->eb, algo};
      bad += !vrun(&k, &R);
    }
  }
  return bad;
}

/* Run case k and compare its traffic: units sent by every rank (want_u,
 * -1: unchecked; all ranks must send the same), total units (want_total,
 * -1: p * want_u) and messages (want_m, -1: unchecked). */
static void formula(const vcase *k, int64_t want_u, int64_t want_total, int64_t want_m) {
  verify_report R;
  char cmd[400];
  if (!vrun(k, &R)) return;
  fam_formula[k->fam]++;
  if (want_total < 0) want_total = want_u * k->p;
  CHECK(want_u < 0 || R.max_rank_units == want_u, "%s: a rank sends %lld units, want %lld",
        repro(k, cmd, sizeof cmd), (long long)R.max_rank_units, (long long)want_u);
  CHECK(R.units == want_total, "%s: %lld units moved, want %lld", repro(k, cmd, sizeof cmd),
        (long long)R.units, (long long)want_total);
  CHECK(want_m < 0 || R.messages == want_m, "%s: %lld messages, want %lld",
        repro(k, cmd, sizeof cmd), (long long)R.messages, (long long)want_m);
}

/* Product of the radices of list l (NULL: empty, 1). */
static int64_t fl_prod(const flist *l) {
  int64_t x = 1;
  for (int i = 0; l && i < l->n; i++) x *= l->f[i];
  return x;
}

/* Sum of (radix - 1) over list l (NULL: empty, 0). */
static int64_t fl_sum1(const flist *l) {
  int64_t x = 0;
  for (int i = 0; l && i < l->n; i++) x += l->f[i] - 1;
  return x;
}

/* recexch allreduce traffic with n = 8 K 8-byte elements (K equal blocks
 * of 64 bytes): every rank sends 2*8(K-1) + 8 sum_*(k-1) units. */
static void formula_rx_ar(const char *algo, int p, const flist *rs, const flist *ar,
                          const flist *ag) {
  int64_t K = fl_prod(rs), n = 8 * K;
  vcase k = {F_RX_AR, p, 0, 1, 0, n, 8, algo};
  formula(&k, 2 * 8 * (K - 1) + 8 * fl_sum1(ar), -1,
          p * (fl_sum1(rs) + fl_sum1(ar) + fl_sum1(ag)));
}

/* Cyclic allgather messages: p per z in 1..k-1 with z W < p per step. */
static int64_t cyclic_ag_msgs(int p, const flist *l) {
  int64_t m = 0, W = 1;
  for (int i = 0; i < l->n && W < p; W *= l->f[i++])
    for (int64_t z = 1; z < l->f[i] && z * W < p; z++) m += p;
  return m;
}

/* Tree messages of family fam on p ranks: reduce and bcast p-1, plus the
 * forward to a non-zero root when the operation does not commute;
 * allreduce 2(p-1). */
static int64_t tree_msgs(int fam, int p, int root, int comm) {
  if (fam == F_TR_AR) return 2 * (int64_t)(p - 1);
  return p - 1 + (fam == F_TR_RED && !comm && root != 0);
}

/* Every legal recexch allreduce list of p: for each divisor A of p, '-'
 * and '+' lists ordered factorisations of A, '*' lists of p / A; each
 * with every small combination, one big one (rotating) and the traffic
 * formula. */
static void sweep_recexch_allreduce(int p) {
  char algo[256];
  int f[MAXL] = {0};
  long i = 0;
  for (int A = 1; A <= p; A++) {
    if (p % A) continue;
    flists D = {0}, S = {0};
    fl_ordered(&D, A, f, 0);
    fl_ordered(&S, p / A, f, 0);
    for (int a = 0; a < D.n; a++)
      for (int b = 0; b < S.n; b++)
        for (int c = 0; c < D.n; c++) {
          algo_text(algo, sizeof algo, "recexch", &D.v[a], &S.v[b], &D.v[c]);
          fam_lists[F_RX_AR]++;
          run_combos(F_RX_AR, algo, p, 0, thin ? 2 : -1, !thin || i % 4 == 0, i * 2);
          i++;
          formula_rx_ar(algo, p, &D.v[a], &S.v[b], &D.v[c]);
        }
    free(D.v), free(S.v);
  }
}

/* Every ordered factorisation of p as recexch reduce_scatter_block ('-')
 * and allgather ('+') lists, every combination, with traffic formulas. */
static void sweep_recexch_rsb_ag(int p) {
  char algo[256];
  int f[MAXL] = {0};
  flists L = {0};
  fl_ordered(&L, p, f, 0);
  for (int i = 0; i < L.n; i++) {
    int64_t s1 = fl_sum1(&L.v[i]);
    algo_text(algo, sizeof algo, "recexch", &L.v[i], NULL, NULL);
    fam_lists[F_RX_RSB]++;
    run_combos(F_RX_RSB, algo, p, 0, -1, thin ? i % 4 == 0 : -1, i);
    vcase k = {F_RX_RSB, p, 0, 0, 0, 5, 8, algo};
    formula(&k, 5 * (int64_t)(p - 1), -1, p * s1);
    algo_text(algo, sizeof algo, "recexch", NULL, NULL, &L.v[i]);
    fam_lists[F_RX_AG]++;
    run_combos(F_RX_AG, algo, p, 0, -1, -1, 0);
    vcase g = {F_RX_AG, p, 1, 1, 0, 3, 8, algo};
    formula(&g, p - 1, -1, p * s1);
  }
  free(L.v);
}

/* choice text for coll on p ranks must be rejected by resolve, with
 * `want` in the reason. */
static void rejected(int coll, const char *algo, int p, int comm, const char *want) {
  collc_spec s = {.coll = coll, .p = p, .count = 4, .unit_bytes = 8, .commutative = comm};
  collc_choice c;
  char why[200] = "";
  int rc = choice_parse(coll, algo, &c, why, sizeof why);
  if (!rc) rc = choice_resolve(&s, &c, why, sizeof why);
  CHECK(rc && strstr(why, want), "%s %s p=%d%s: accepted or wrong reason '%s' (want '%s')",
        coll_name(coll), algo, p, comm ? "" : " noncommutative", why, want);
}

/* Cyclic allreduce on p ranks with reduce-scatter list rs and allgather
 * list ag: one small combination, from index `first`, and every eighth
 * time one big one. */
static void cyclic_pair(int p, const flist *rs, const flist *ag, long first) {
  char algo[256];
  algo_text(algo, sizeof algo, "cyclic", rs, NULL, ag);
  fam_lists[F_CY_AR]++;
  run_combos(F_CY_AR, algo, p, 0, 1, first % 8 == 0, first);
}

/* Cyclic with cover list l (index i) of p: as reduce_scatter_block and as
 * allgather list (traffic formula, one rotating small combination, every
 * eighth list a big one, non-commutative rejected); as allreduce list with
 * itself (traffic formula), and paired with the lists `pair`[0..np). */
static void cyclic_list(int p, const flist *l, long i, const flist *pair, int np) {
  char algo[256];
  algo_text(algo, sizeof algo, "cyclic", l, NULL, NULL);
  fam_lists[F_CY_RSB]++;
  vcase k = {F_CY_RSB, p, (int)(i % 2), 1, 0, 3, 8, algo};
  formula(&k, 3 * (int64_t)(p - 1), -1, -1);
  run_combos(F_CY_RSB, algo, p, 0, 1, i % 8 == 0, i);
  rejected(COLLC_COLL_REDUCE_SCATTER_BLOCK, algo, p, 0, "commutative");
  algo_text(algo, sizeof algo, "cyclic", NULL, NULL, l);
  fam_lists[F_CY_AG]++;
  vcase g = {F_CY_AG, p, (int)(i % 2), 1, 0, 2, 8, algo};
  formula(&g, p - 1, -1, cyclic_ag_msgs(p, l));
  run_combos(F_CY_AG, algo, p, 0, 1, 0, i);
  algo_text(algo, sizeof algo, "cyclic", l, NULL, l);
  fam_lists[F_CY_AR]++;
  vcase a = {F_CY_AR, p, (int)(i % 2), 1, 0, 8 * (int64_t)p, 8, algo};
  formula(&a, 16 * (int64_t)(p - 1), -1, -1);
  rejected(COLLC_COLL_ALLREDUCE, algo, p, 0, "commutative");
  for (int j = 0; j < np; j++) cyclic_pair(p, l, &pair[j], i + j + 1);
}

/* Cyclic on p ranks. Every cover list for p <= all_p (full mode: 32),
 * else `sample` random ones. Allreduce pairs: every pair for p <= 6, else
 * each list with the list at the mirrored index and a random one. */
static void sweep_cyclic(int p, int all_p, int sample) {
  int f[MAXL] = {0};
  flists L = {0};
  fl_cover(&L, p, 1, f, 0);
  int exhaustive = p <= all_p || full_mode, n = exhaustive ? L.n : sample;
  for (int t = 0; t < n; t++) {
    int i = exhaustive ? t : rnd(L.n);
    flist two[2] = {L.v[L.n - 1 - i], L.v[rnd(L.n)]};
    if (p <= 6) cyclic_list(p, &L.v[i], i, L.v, L.n);
    else cyclic_list(p, &L.v[i], i, two, 2);
  }
  free(L.v);
}

/* Tree on p ranks over every cover list: allreduce every small and one
 * big combination; reduce every root for p <= 12, else roots 0, p-1 and
 * a random one, one rotating small combination each; bcast every root
 * (count 7) and all combinations for one rotating root; message formulas
 * (count 7; reduce commutative and not, alternating). */
static void sweep_tree(int p) {
  char algo[256];
  int f[MAXL] = {0};
  flists L = {0};
  fl_cover(&L, p, 1, f, 0);
  for (int i = 0; i < L.n; i++) {
    int roots[3] = {0, p - 1, rnd(p)};
    algo_text(algo, sizeof algo, "tree", NULL, NULL, &L.v[i]);
    fam_lists[F_TR_AR]++, fam_lists[F_TR_RED]++, fam_lists[F_TR_BC]++;
    run_combos(F_TR_AR, algo, p, 0, -1, 1, i);
    vcase a = {F_TR_AR, p, i % 2, i % 3 != 0, 0, 7, 8, algo};
    formula(&a, -1, 7 * tree_msgs(F_TR_AR, p, 0, 1), tree_msgs(F_TR_AR, p, 0, 1));
    for (int j = 0; j < (p <= 12 ? p : 3); j++) {
      int root = p <= 12 ? j : roots[j];
      run_combos(F_TR_RED, algo, p, root, 1, (i + j) % 8 == 0, (long)i + j);
      int cm = (int)((i + j) % 2);
      vcase k = {F_TR_RED, p, j % 2, cm, root, 7, 8, algo};
      formula(&k, -1, 7 * tree_msgs(F_TR_RED, p, root, cm), tree_msgs(F_TR_RED, p, root, cm));
    }
    run_combos(F_TR_BC, algo, p, i % p, -1, 1, i);
    for (int root = 0; root < p; root++) {
      vcase b = {F_TR_BC, p, 1, 1, root, 7, 8, algo};
      formula(&b, -1, 7 * tree_msgs(F_TR_BC, p, root, 1), tree_msgs(F_TR_BC, p, root, 1));
    }
  }
  free(L.v);
}

/* A random ordered factorisation of n (each factor a uniformly chosen
 * divisor > 1 of what is left) into l. */
static void rand_ordered(int n, flist *l) {
  l->n = 0;
  while (n > 1 && l->n < MAXL) {
    int d[64], nd = 0;
    for (int x = 2; x <= n && nd < 64; x++)
      if (n % x == 0) d[nd++] = x;
    l->f[l->n++] = d[rnd(nd)];
    n /= l->f[l->n - 1];
  }
}

/* A random cover list of p (mostly radices 2..4, sometimes up to p). */
static void rand_cover(int p, flist *l) {
  int64_t prod = 1;
  l->n = 0;
  while (prod < p && l->n < MAXL) {
    int k = rnd(4) ? 2 + rnd(3) : 2 + rnd(p - 1);
    l->f[l->n++] = k;
    prod *= k;
  }
}

/* A random divisor of p. */
static int rand_divisor(int p) {
  int d;
  do d = 1 + rnd(p);
  while (p % d);
  return d;
}

/* Tree for 16 < p <= 32: 12 random cover lists, random roots, every
 * small combination and some big ones. */
static void sample_tree(int p) {
  char algo[256];
  flist l;
  for (int i = 0; i < 12; i++) {
    rand_cover(p, &l);
    algo_text(algo, sizeof algo, "tree", NULL, NULL, &l);
    fam_lists[F_TR_AR]++, fam_lists[F_TR_RED]++, fam_lists[F_TR_BC]++;
    run_combos(F_TR_AR, algo, p, 0, -1, -1, i);
    run_combos(F_TR_RED, algo, p, rnd(p), -1, 1, i);
    run_combos(F_TR_BC, algo, p, rnd(p), -1, 1, i);
  }
}

/* Lists resolve accepts beyond the minimal ones: cyclic with redundant
 * steps and radices above p, tree lists that repeat their last fan-in,
 * default lists; recexch, cyclic lists that do not fit are rejected. */
static void sweep_extras(void) {
  const char *cy[] = {"cyclic:-7,-2,2,7", "cyclic:-9,9", "cyclic:-2,-4,-3,3,4,2",
                      "cyclic:-3,-3,2,2,2", "cyclic"};
  for (int i = 0; i < 5; i++) run_combos(F_CY_AR, cy[i], 7, 0, -1, -1, 0);
  run_combos(F_CY_RSB, "cyclic:-8,-3", 7, 0, -1, -1, 0);
  run_combos(F_CY_AG, "cyclic:3,8", 7, 0, -1, -1, 0);
  for (int p = 1; p <= 20; p++) {
    run_combos(F_TR_AR, "tree:3", p, 0, -1, -1, 0);
    run_combos(F_TR_RED, "tree", p, p / 2, -1, -1, 0);
    run_combos(F_TR_BC, "tree:2,5", p, p - 1, -1, -1, 0);
    run_combos(F_RX_AR, "recexch", p, 0, -1, -1, 0);
    run_combos(F_CY_AR, "cyclic", p, 0, -1, -1, 0);
    if (p > 1) {
      rejected(COLLC_COLL_ALLREDUCE, "cyclic:-2,2", p + 2, 1, "does not fit");
      rejected(COLLC_COLL_ALLREDUCE, "recexch:-2,2", 2 * p + 1, 1, "does not fit");
      rejected(COLLC_COLL_REDUCE_SCATTER_BLOCK, "recexch:-2,2", 4, 1, "does not fit");
    }
  }
  rejected(COLLC_COLL_ALLREDUCE, "recexch:-2,*2,4", 4, 1, "does not fit");
  rejected(COLLC_COLL_ALLREDUCE, "recexch:2,-2", 4, 1, "bad step");
  rejected(COLLC_COLL_ALLREDUCE, "cyclic:-2,*2,2", 4, 1, "bad step");
  rejected(COLLC_COLL_ALLGATHER, "recexch:-2,-2", 4, 1, "does not fit");
}

#define NKIDS 2 /* large-p children in flight (two cores) */
static pid_t kid_pid[NKIDS];
static char kid_cmd[NKIDS][400];

/* Wait for one child in flight and check how it ended; 0 if none left. */
static int reap(void) {
  int st = 0, n = 0;
  for (int i = 0; i < NKIDS; i++) n += kid_pid[i] > 0;
  if (n == 0) return 0;
  pid_t pid = waitpid(-1, &st, 0);
  for (int i = 0; i < NKIDS; i++)
    if (kid_pid[i] == pid && pid > 0) {
      kid_pid[i] = 0;
      CHECK(WIFEXITED(st) && WEXITSTATUS(st) == 0, "%s: %s %d", kid_cmd[i],
            WIFSIGNALED(st) ? "crashed with signal" : "failed, exit status",
            WIFSIGNALED(st) ? WTERMSIG(st) : WEXITSTATUS(st));
      return 1;
    }
  return CHECK(0, "waitpid: unexpected child %d", (int)pid);
}

/* Run case k in a child process (NKIDS at a time), so that a generator
 * that crashes (or a sanitizer that stops) is reported as a failure of k
 * with its command line instead of ending the test. */
static void isolated(const vcase *k) {
  int i = 0;
  while (kid_pid[0] > 0 && kid_pid[NKIDS - 1] > 0) reap();
  while (kid_pid[i] > 0) i++;
  fam_runs[k->fam]++;
  repro(k, kid_cmd[i], sizeof kid_cmd[i]);
  fflush(stdout);
  pid_t pid = fork();
  if (pid == 0) {
    verify_report R;
    int ok = vrun(k, &R);
    fflush(stdout);
    _exit(ok ? 0 : 1);
  }
  if (CHECK(pid > 0, "%s: fork failed", kid_cmd[i])) kid_pid[i] = pid;
}

/* Largest '*' radix of l (the steps whose staging holds whole parts). */
static int max_star(const flist *l) {
  int k = 0;
  for (int i = 0; l && i < l->n; i++)
    if (l->f[i] > k) k = l->f[i];
  return k;
}

/* One large-p run of family fam with algo ('*' list ar, or NULL): a
 * random small combination (counts 0, 1, p-1, 2p+1 for allreduce and
 * reduce; reduce_scatter_block 0..2; allgather, bcast 1 or p-1), random
 * root, in a child. The verifier holds every rank's buffers (about
 * p * vector * (4 + largest '*' radix) tokens of 40 bytes); above
 * 4 * 10^6 the count drops to 1. */
static void large_run(int fam, const char *algo, int p, const flist *ar) {
  int coll = fam_coll[fam], cyc = fam >= F_CY_AR && fam <= F_CY_AG;
  int64_t counts[4] = {0, 1, p - 1, 2 * (int64_t)p + 1};
  vcase k = {fam, p, rnd(2), cyc || rnd(2), 0, counts[rnd(4)], 8, algo};
  if (coll == COLLC_COLL_REDUCE_SCATTER_BLOCK) k.count = rnd(3);
  if (coll == COLLC_COLL_ALLGATHER || coll == COLLC_COLL_BCAST) k.count = rnd(2) ? 1 : p - 1;
  if (coll == COLLC_COLL_REDUCE || coll == COLLC_COLL_BCAST) k.root = rnd(p);
  int64_t vec = coll == COLLC_COLL_ALLGATHER ? p
                : coll == COLLC_COLL_REDUCE_SCATTER_BLOCK ? p * k.count : k.count;
  if ((int64_t)p * vec * (4 + max_star(ar)) > 4000000) k.count = 1;
  isolated(&k);
}

/* Large p: for each family the default list, a random legal list and
 * the single-radix list {p} (a direct exchange of p(p-1) messages, so
 * only for p <= 300 and the prime 997, where recexch has no other). */
static void large_p(int p) {
  char algo[NKIDS + 1][256];
  flist a, b, c, one = {1, {p}};
  for (int fam = 0; fam < F_COUNT; fam++) {
    const char *name = fam <= F_RX_AG ? "recexch" : fam <= F_CY_AG ? "cyclic" : "tree";
    int coll = fam_coll[fam], rs = coll != COLLC_COLL_ALLGATHER && fam < F_TR_AR;
    int ag = coll != COLLC_COLL_REDUCE_SCATTER_BLOCK;
    large_run(fam, name, p, NULL);
    for (int t = 0; t < 2; t++) {
      if (t == 0 && p > 300 && p != 997) continue;
      if (t == 0) a = b = one, c.n = 0;
      else if (fam <= F_RX_AG) {
        int A = coll == COLLC_COLL_ALLREDUCE ? rand_divisor(p) : p;
        rand_ordered(A, &a), rand_ordered(p / A, &c), rand_ordered(A, &b);
      } else {
        rand_cover(p, &a), rand_cover(p, &b), c.n = 0;
      }
      algo_text(algo[t], sizeof algo[t], name, rs ? &a : NULL, &c, ag ? &b : NULL);
      fam_lists[fam]++;
      large_run(fam, algo[t], p, &c);
    }
  }
}

/* The large-p sample: 127, 66, 7, 1152, 997, 1000 and two random p in
 * [33, 1152] (seed printed; COLLC_TEST_SEED overrides); thinned (the
 * sanitizer builds, whose value is memory errors, not more p): the first
 * three. */
static void sample_large(void) {
  int ps[8] = {127, 66, 7, 1152, 997, 1000, 0, 0}, n = thin ? 3 : 8; /* (thin: the first 3) */
  for (int i = 6; i < 8; i++) ps[i] = 33 + rnd(1152 - 32);
  printf("large p:");
  for (int i = 0; i < n; i++) printf(" %d", ps[i]);
  printf("\n");
  for (int i = 0; i < n; i++) large_p(ps[i]);
  while (reap()) continue;
}

/* Wall-clock seconds (monotonic). */
static double now(void) {
  struct timespec t;
  clock_gettime(CLOCK_MONOTONIC, &t);
  return (double)t.tv_sec + 1e-9 * (double)t.tv_nsec;
}

/* Print the seconds since *t0 for phase `what` and restart the clock. */
static void lap(const char *what, double *t0) {
  double t = now();
  printf("%-34s %6.2f s\n", what, t - *t0);
  fflush(stdout);
  *t0 = t;
}

/* The next p of the sweeps after p: every one, thinned every third above 16. */
static int step(int p) { return thin && p >= 18 ? 3 : thin && p >= 16 ? 2 : 1; }

/* Every sweep, then per family: lists, verifier runs, formula runs. */
int main(void) {
  const char *seed = getenv("COLLC_TEST_SEED"), *full = getenv("COLLC_TEST_FULL");
  double t0 = now();
  rng_state = seed ? strtoull(seed, NULL, 10) : 20261;
  full_mode = full && atoi(full) > 0;
  thin = !full_mode && unit_thin();
  printf("random sample seed %llu (COLLC_TEST_SEED to change)%s\n",
         (unsigned long long)rng_state,
         full_mode ? ", full mode" : thin ? ", thinned (sanitizer build or COLLC_TEST_THIN)" : "");
  for (int p = 1; p <= 32; p += step(p)) sweep_recexch_allreduce(p);
  lap("recexch allreduce, p <= 32", &t0);
  for (int p = 1; p <= 32; p += step(p)) sweep_recexch_rsb_ag(p);
  lap("recexch rsb, allgather, p <= 32", &t0);
  for (int p = 1; p <= 32; p += step(p)) sweep_cyclic(p, thin ? 12 : 16, thin ? 30 : 80);
  lap("cyclic, p <= 32", &t0);
  for (int p = 1; p <= 32; p += step(p)) {
    if (p <= (thin ? 12 : 16)) sweep_tree(p); /* (thinned: sampled above 12) */
    else sample_tree(p);
  }
  lap("tree, p <= 32", &t0);
  sweep_extras();
  lap("extras", &t0);
  sample_large();
  lap("large p", &t0);
  for (int f = 0; f < F_COUNT; f++)
    printf("%-30s %6ld lists %7ld verifier runs %5ld with traffic formulas\n", fam_name[f],
           fam_lists[f], fam_runs[f], fam_formula[f]);
  return unit_summary("verify_reductions");
}
