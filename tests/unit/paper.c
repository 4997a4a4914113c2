/* paper.c - the torus generator against the worked examples of its paper.
 *
 * Truth: the index tables of J. L. Traff, "Effective MPI: User-defined
 * Datatypes and Cartesian Communicators for Zero-copy All-to-all
 * Communication in Multidimensional Tori", section 3 (examples p = 5x4,
 * 2x3x4, 4x3x3x4), transcribed below by hand: for round k the composite
 * block R'[j] exchanged with member j of the dimension-k group. collc writes
 * dims in MPI Cartesian order (last fastest), so the paper's D[0] x D[1] =
 * 5 x 4 is torus:4x5. The tables must equal, for every rank, the src
 * operands (shifted by j * n) of the ALLTOALL instructions of the "native"
 * component, and for rank 0 the COPY/RECV/SEND operands of the "linear"
 * component. Also Theorem 1: every rank sends d*p - sum_k p/D[k] blocks
 * (the verifier's max_rank_units for the linear, pairwise and native
 * components - a rank's own part is not sent, also not inside a group call;
 * the paper's three examples give 31, 46 and 408, computed by hand). */
#include <stdlib.h>
#include <string.h>
#include "algo/algo.h"
#include "check/verify.h"
#include "unit.h"

#define MAXR 8   /* members of a round */
#define MAXL 160 /* units of a composite */

/* One round of a paper table: D, the composite length, and per member j
 * the shown prefix (npre entries) and suffix (nsuf entries) of R'[j]; a
 * fully shown list has nsuf = 0 and npre = len. */
typedef struct {
  int D, len, npre, nsuf;
  int pre[MAXR][40], suf[MAXR][4];
} round_table;

typedef struct {
  const char *dims; /* collc torus dims, MPI order */
  int p, rounds;
  round_table r[4];
} paper_example;

/* p = 5 x 4 = D[0] x D[1] (torus:4x5). The paper prints the last entry of
 * round 1 as [15, 16, 17, 28, 19]; 28 is a typo for 18 (corrected here). */
static const paper_example ex_5x4 = {
    "4x5", 20, 2,
    {{5, 4, 4, 0,
      {{0, 5, 10, 15}, {1, 6, 11, 16}, {2, 7, 12, 17}, {3, 8, 13, 18}, {4, 9, 14, 19}}, {{0}}},
     {4, 5, 5, 0,
      {{0, 1, 2, 3, 4}, {5, 6, 7, 8, 9}, {10, 11, 12, 13, 14}, {15, 16, 17, 18, 19}},
      {{0}}}}};

/* p = 2 x 3 x 4 (torus:4x3x2). The paper prints round 2's R'[2] as
 * [12, 23, 14, 15, 16, 17]; 23 is a typo for 13 (corrected here). */
static const paper_example ex_2x3x4 = {
    "4x3x2", 24, 3,
    {{2, 12, 12, 0,
      {{0, 6, 12, 18, 2, 8, 14, 20, 4, 10, 16, 22}, {1, 7, 13, 19, 3, 9, 15, 21, 5, 11, 17, 23}},
      {{0}}},
     {3, 8, 8, 0,
      {{0, 1, 6, 7, 12, 13, 18, 19}, {2, 3, 8, 9, 14, 15, 20, 21}, {4, 5, 10, 11, 16, 17, 22, 23}},
      {{0}}},
     {4, 6, 6, 0,
      {{0, 1, 2, 3, 4, 5}, {6, 7, 8, 9, 10, 11}, {12, 13, 14, 15, 16, 17},
       {18, 19, 20, 21, 22, 23}},
      {{0}}}}};

/* p = 4 x 3 x 3 x 4 = 144 (torus:4x3x3x4). The paper elides the middle of
 * each list with "..."; the shown prefix and suffix are transcribed. In
 * round 0 the paper prints the suffixes of R'[1], R'[2], R'[3] as
 * [33, 69, 104, 141], [34, 70, 105, 142], [35, 71, 106, 143]: the third
 * entries are typos (R'[j] = j + 4c + 12b + 36a, whose last four entries are
 * j + 32 + {0, 36, 72, 108}), corrected here to 105, 106, 107. */
static const paper_example ex_4x3x3x4 = {
    "4x3x3x4", 144, 4,
    {{4, 36, 5, 4,
      {{0, 36, 72, 108, 12}, {1, 37, 73, 109, 13}, {2, 38, 74, 110, 14}, {3, 39, 75, 111, 15}},
      {{32, 68, 104, 140}, {33, 69, 105, 141}, {34, 70, 106, 142}, {35, 71, 107, 143}}},
     {3, 48, 8, 4,
      {{0, 1, 2, 3, 36, 37, 38, 39}, {4, 5, 6, 7, 40, 41, 42, 43}, {8, 9, 10, 11, 44, 45, 46, 47}},
      {{132, 133, 134, 135}, {136, 137, 138, 139}, {140, 141, 142, 143}}},
     {3, 48, 13, 3,
      {{0, 1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 36},
       {12, 13, 14, 15, 16, 17, 18, 19, 20, 21, 22, 23, 48},
       {24, 25, 26, 27, 28, 29, 30, 31, 32, 33, 34, 35, 60}},
      {{117, 118, 119}, {129, 130, 131}, {141, 142, 143}}},
     {4, 36, 9, 3,
      {{0, 1, 2, 3, 4, 5, 6, 7, 8}, {36, 37, 38, 39, 40, 41, 42, 43, 44},
       {72, 73, 74, 75, 76, 77, 78, 79, 80}, {108, 109, 110, 111, 112, 113, 114, 115, 116}},
      {{33, 34, 35}, {69, 70, 71}, {105, 106, 107}, {141, 142, 143}}}}};

/* Compile rank `rank`'s program of all-to-all `algo` on p ranks (NULL and a
 * failed check if it does not compile). */
static collc_prog *compile(const char *algo, int p, int rank) {
  collc_spec s = {.coll = COLLC_COLL_ALLTOALL,
      .p = p, .rank = rank, .count = 1, .unit_bytes = 4, .in_place = 0};
  collc_choice c;
  char why[200] = "";
  collc_prog *P = NULL;
  if (!choice_parse(s.coll, algo, &c, why, sizeof why) &&
      !choice_resolve(&s, &c, why, sizeof why))
    P = choice_compile(&s, &c, why, sizeof why);
  CHECK(P != NULL, "%s p=%d rank %d does not compile: %s", algo, p, rank, why);
  return P;
}

/* Unit indices of operand o moved by `by` units, in message order, into
 * out (at most max); returns the count. */
static int expand(const collc_prog *P, collc_opnd o, int64_t by, int64_t *out, int max) {
  int n = 0;
  for (int64_t k = 0; k < P->shapes[o.shape].nruns; k++) {
    int64_t off, len;
    shape_run(P, o.shape, k, &off, &len);
    for (int64_t u = 0; u < len; u++, n++)
      if (n < max) out[n] = o.off + by + off + u;
  }
  return n;
}

/* got[0..n) must be R'[j] of round table T: its length and the shown prefix
 * and suffix entries. */
static void compare(const char *what, int k, const round_table *T, int j, const int64_t *got,
                    int n) {
  if (!CHECK(n == T->len, "%s round %d R'[%d]: %d units, paper %d", what, k, j, n, T->len))
    return;
  for (int i = 0; i < T->npre; i++)
    CHECK(got[i] == T->pre[j][i], "%s round %d R'[%d][%d] = %lld, paper %d", what, k, j, i,
          (long long)got[i], T->pre[j][i]);
  for (int i = 0; i < T->nsuf; i++) {
    int at = n - T->nsuf + i;
    CHECK(got[at] == T->suf[j][i], "%s round %d R'[%d][%d] = %lld, paper %d", what, k, j, at,
          (long long)got[at], T->suf[j][i]);
  }
}

/* Native component, every rank: round k is one ALLTOALL on the group of the
 * D[k] ranks differing only in coordinate k; member j's src and dst parts
 * (operand + j*n) are R'[j]. */
static void check_native(const paper_example *E) {
  char algo[64];
  int64_t u[MAXL];
  snprintf(algo, sizeof algo, "torus:%s:native", E->dims);
  for (int r = 0; r < E->p; r++) {
    collc_prog *P = compile(algo, E->p, r);
    if (!P) return;
    int k = 0, sig = 1;
    for (int a = 0; a < P->nins; a++) {
      const collc_instr *I = &P->ins[a];
      if (I->op != COLLC_OP_ALLTOALL) continue;
      if (!CHECK(k < E->rounds, "%s rank %d: more than %d rounds", algo, r, E->rounds)) break;
      const round_table *T = &E->r[k];
      collc_group g = P->groups[I->peer];
      CHECK(g.n == T->D && g.stride == sig && g.base == r - (r / sig) % T->D * sig,
            "%s rank %d round %d: group %d + %d*j (%d members)", algo, r, k, g.base, g.stride,
            g.n);
      for (int j = 0; j < T->D && j < g.n; j++) {
        compare(algo, k, T, j, u, expand(P, I->src, j * I->n, u, MAXL));
        compare(algo, k, T, j, u, expand(P, I->dst, j * I->n, u, MAXL));
      }
      sig *= T->D;
      k++;
    }
    CHECK(k == E->rounds, "%s rank %d: %d rounds, paper %d", algo, r, k, E->rounds);
    prog_free(P);
  }
}

/* Linear component, rank 0: round k (ended by a WAIT) copies R'[0] locally
 * and receives / sends R'[j] from / to member j = peer / (D[0]..D[k-1]),
 * each member once. */
static void check_linear(const paper_example *E) {
  char algo[64];
  int64_t u[MAXL];
  snprintf(algo, sizeof algo, "torus:%s:linear", E->dims);
  collc_prog *P = compile(algo, E->p, 0);
  if (!P) return;
  int k = 0, sig = 1, seen[2][MAXR] = {{0}};
  for (int a = 0; a < P->nins && k < E->rounds; a++) {
    const collc_instr *I = &P->ins[a];
    const round_table *T = &E->r[k];
    int j = I->peer / sig;
    if (I->op == COLLC_OP_COPY) {
      compare(algo, k, T, 0, u, expand(P, I->src, 0, u, MAXL));
      compare(algo, k, T, 0, u, expand(P, I->dst, 0, u, MAXL));
    } else if (I->op == COLLC_OP_RECV || I->op == COLLC_OP_SEND) {
      int send = I->op == COLLC_OP_SEND;
      if (!CHECK(I->peer % sig == 0 && j > 0 && j < T->D && !seen[send][j]++,
                 "%s round %d addr %d: %s peer %d is not a new member", algo, k, a,
                 ops_name(I->op), I->peer))
        continue;
      compare(algo, k, T, j, u, expand(P, send ? I->src : I->dst, 0, u, MAXL));
    } else if (I->op == COLLC_OP_WAIT) {
      for (int m = 1; m < T->D; m++)
        CHECK(seen[0][m] == 1 && seen[1][m] == 1, "%s round %d: member %d recv %d send %d",
              algo, k, m, seen[0][m], seen[1][m]);
      memset(seen, 0, sizeof seen);
      sig *= T->D;
      k++;
    }
  }
  CHECK(k == E->rounds, "%s: %d rounds, paper %d", algo, k, E->rounds);
  prog_free(P);
}

/* Theorem 1: each rank sends d*p - sum_k p/D[k] blocks (hand value `want`
 * for the paper's examples, 0 to use the formula), checked with the
 * verifier's max_rank_units for every component; for linear and pairwise
 * every rank sends the same (total message units = p * per-rank; native
 * moves its units in group calls, not messages). dims in MPI order. */
static void check_volume(const char *dims, int64_t want) {
  int D[64], d = 0;
  int64_t p = 1, sum = 0;
  char *end = (char *)dims;
  while (*end && d < 64) { /* "AxBxC": numbers separated by 'x' */
    D[d] = (int)strtol(end, &end, 10);
    p *= D[d++];
    end += *end == 'x';
  }
  for (int k = 0; k < d; k++) sum += p / D[k];
  int64_t formula = d * p - sum;
  CHECK(!want || want == formula, "%s: hand value %lld, formula %lld", dims, (long long)want,
        (long long)formula);
  const char *comp[] = {"linear", "pairwise", "native"};
  for (int c = 0; c < 3; c++) {
    char algo[128], why[200] = "";
    snprintf(algo, sizeof algo, "torus:%s:%s", dims, comp[c]);
    collc_spec s = {.coll = COLLC_COLL_ALLTOALL,
        .p = (int)p, .rank = 0, .count = 1, .unit_bytes = 4, .in_place = 0};
    collc_choice ch;
    verify_report R;
    memset(&R, 0, sizeof R);
    if (choice_parse(s.coll, algo, &ch, why, sizeof why) ||
        choice_resolve(&s, &ch, why, sizeof why))
      CHECK(0, "%s: %s", algo, why);
    else
      verify_choice(&s, &ch, &R);
    CHECK(R.ok && R.max_rank_units == formula && (c == 2 || R.units == p * formula),
          "%s: ok %d, max sent %lld, total %lld; Theorem 1: %lld per rank (%s)", algo, R.ok,
          (long long)R.max_rank_units, (long long)R.units, (long long)formula, R.first_error);
  }
}

/* Run every group of checks and print the summary. */
int main(void) {
  const paper_example *ex[] = {&ex_5x4, &ex_2x3x4, &ex_4x3x3x4};
  for (int i = 0; i < 3; i++) {
    check_native(ex[i]);
    check_linear(ex[i]);
  }
  check_volume("4x5", 31);
  check_volume("4x3x2", 46);
  check_volume("4x3x3x4", 408);
  const char *more[] = {"2x2x2x2x2", "7x3", "3x7", "6x1x4", "1x5", "13", "36x32", "12x12x8",
                        "8x6x6x4", "3x3x2x2x2x2x2x2x2", "10x10x10"};
  for (size_t i = 0; i < sizeof more / sizeof more[0]; i++) check_volume(more[i], 0);
  return unit_summary("paper");
}
