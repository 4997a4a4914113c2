/* guidelines.c - the performance guidelines over a table of measured points
 * (guidelines.h): the rules as one table, a Mann-Whitney test, the mock-ups
 * built from the measured samples. */
#include "check/guidelines.h"
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "ir/ir.h"

#define GL_MAXS 256 /* samples of a mock-up */

enum { K_COMPOSE, K_GROW, K_SPLIT };
enum { S_N, S_NP, S_N_P }; /* a term's size: n, n*p, n/p */

typedef struct {
  int coll, size;
} term;

typedef struct {
  const char *name;
  int kind, lhs; /* lhs: -1 for every collective */
  term t[2];
  const char *skipped, *realise;
} rule;

static const rule rules[] = {
    {"allreduce(n) <= reduce(n) + bcast(n)", K_COMPOSE, COLLC_COLL_ALLREDUCE,
     {{COLLC_COLL_REDUCE, S_N}, {COLLC_COLL_BCAST, S_N}}, NULL, "tree"},
    {"allreduce(n) <= reduce_scatter_block(n/p) + allgather(n/p)", K_COMPOSE, COLLC_COLL_ALLREDUCE,
     {{COLLC_COLL_REDUCE_SCATTER_BLOCK, S_N_P}, {COLLC_COLL_ALLGATHER, S_N_P}}, NULL, "recexch"},
    {"reduce_scatter_block(n) <= reduce(n p) + scatter(n)", K_COMPOSE,
     COLLC_COLL_REDUCE_SCATTER_BLOCK, {{COLLC_COLL_REDUCE, S_NP}, {COLLC_COLL_SCATTER, S_N}}, NULL,
     NULL},
    {"coll(n) <= coll(n') for n < n' (time grows with n)", K_GROW, -1, {{-1, 0}, {-1, 0}}, NULL,
     NULL},
    {"coll(n) <= k coll(n/k) (splitting a message does not pay)", K_SPLIT, -1, {{-1, 0}, {-1, 0}},
     NULL, NULL},
};
#define NRULES (int)(sizeof rules / sizeof rules[0])

int gl_rule_count(void) { return NRULES; }
const char *gl_rule_name(int r) { return r >= 0 && r < NRULES ? rules[r].name : NULL; }
const char *gl_rule_skipped(int r) { return r >= 0 && r < NRULES ? rules[r].skipped : NULL; }
const char *gl_realise(int r) { return r >= 0 && r < NRULES ? rules[r].realise : NULL; }

int gl_greater(const double *a, int na, const double *b, int nb, double factor) {
  double u = 0, n1 = na, n2 = nb;
  if (na < 2 || nb < 2) return 0;
  for (int i = 0; i < na; i++)
    for (int j = 0; j < nb; j++)
      u += a[i] > factor * b[j] ? 1 : a[i] == factor * b[j] ? 0.5 : 0;
  return (u - n1 * n2 / 2) / sqrt(n1 * n2 * (n1 + n2 + 1) / 12) > 1.645;
}

/* qsort's order of doubles. */
static int cmp(const void *a, const void *b) {
  double x = *(const double *)a, y = *(const double *)b;
  return (x > y) - (x < y);
}

/* The median of x[n] (n <= GL_MAXS; 0 if empty). */
static double median(const double *x, int n) {
  double y[GL_MAXS];
  if (n <= 0) return 0;
  n = n < GL_MAXS ? n : GL_MAXS;
  memcpy(y, x, (size_t)n * sizeof y[0]);
  qsort(y, (size_t)n, sizeof y[0], cmp);
  return n % 2 ? y[n / 2] : (y[n / 2 - 1] + y[n / 2]) / 2;
}

/* The point of coll with samples whose size is the smallest >= lo (above:
 * > lo) or, below, the largest < lo; NULL if none. */
static const gl_point *find(const gl_point *pts, int n, int coll, long long lo, int how) {
  const gl_point *best = NULL;
  for (int i = 0; i < n; i++) {
    const gl_point *q = &pts[i];
    if (q->coll != coll || q->n < 2 || !q->x) continue;
    int ok = how < 0 ? q->bytes < lo : how > 0 ? q->bytes > lo : q->bytes >= lo;
    if (ok && (!best || (how < 0 ? q->bytes > best->bytes : q->bytes < best->bytes))) best = q;
  }
  return best;
}

/* The mock-up's samples into y: sample i the sum of k[j] x term j's sample
 * i (cyclically), as many as the fewest a term has; their number. */
static int mock(const gl_point *const *t, const int *k, int nt, double *y) {
  int m = GL_MAXS;
  for (int j = 0; j < nt; j++) m = t[j]->n < m ? t[j]->n : m;
  for (int i = 0; i < m; i++) {
    y[i] = 0;
    for (int j = 0; j < nt; j++) y[i] += k[j] * t[j]->x[i];
  }
  return m;
}

/* Whether L violates the mock-up of terms t[nt] (multiplicities k, words
 * mock); if so into out[*nv] (while *nv < max) and *nv counted. */
static void test(const gl_point *L, const gl_point *const *t, const int *k, int nt, int r,
                 const char *words, gl_violation *out, int max, int *nv) {
  double y[GL_MAXS];
  int m = mock(t, k, nt, y);
  if (!gl_greater(L->x, L->n, y, m, GL_MARGIN)) return;
  if (*nv < max) {
    gl_violation *v = &out[*nv];
    *v = (gl_violation){.rule = r, .coll = L->coll, .bytes = L->bytes,
                        .lhs = median(L->x, L->n), .rhs = median(y, m)};
    snprintf(v->mock, sizeof v->mock, "%s", words);
  }
  ++*nv;
}

/* "1000 B", "8 KiB", "97.7 KiB", "16 MiB" into buf. */
static void fmt_bytes(long long b, char *buf, size_t len) {
  if (b < 1024) snprintf(buf, len, "%lld B", b);
  else if (b < 1 << 20) snprintf(buf, len, "%.3g KiB", b / 1024.0);
  else snprintf(buf, len, "%.3g MiB", b / 1048576.0);
}

/* Rule r (a composition) on left side L. */
static void compose(const rule *R, int r, const gl_point *L, const gl_point *pts, int n, int p,
                    gl_violation *out, int max, int *nv) {
  const gl_point *t[2];
  int k[2] = {1, 1};
  char words[96];
  for (int j = 0; j < 2; j++) {
    long long b = R->t[j].size == S_NP ? L->bytes * p
                  : R->t[j].size == S_N_P ? (L->bytes + p - 1) / p : L->bytes;
    if (!(t[j] = find(pts, n, R->t[j].coll, b, 0))) return;
  }
  snprintf(words, sizeof words, "%s + %s", coll_name(t[0]->coll), coll_name(t[1]->coll));
  test(L, t, k, 2, r, words, out, max, nv);
}

/* Rule r (grows or splits) on left side L. */
static void compare(const rule *R, int r, const gl_point *L, const gl_point *pts, int n,
                    gl_violation *out, int max, int *nv) {
  const gl_point *t = find(pts, n, L->coll, L->bytes, R->kind == K_GROW ? 1 : -1);
  char words[96], b[32];
  if (!t) return;
  int k = R->kind == K_GROW ? 1 : (int)((L->bytes + t->bytes - 1) / t->bytes);
  fmt_bytes(t->bytes, b, sizeof b);
  if (k > 1) snprintf(words, sizeof words, "%d x %s(%s)", k, coll_name(t->coll), b);
  else snprintf(words, sizeof words, "%s(%s)", coll_name(t->coll), b);
  test(L, &t, &k, 1, r, words, out, max, nv);
}

int gl_check(const gl_point *pts, int n, int p, gl_violation *out, int max) {
  int nv = 0;
  if (!pts || n < 0 || p < 1) return 0;
  for (int r = 0; r < NRULES; r++)
    for (int i = 0; i < n && !rules[r].skipped; i++) {
      const gl_point *L = &pts[i];
      if (L->n < 2 || !L->x || (rules[r].lhs >= 0 && L->coll != rules[r].lhs)) continue;
      if (!coll_name(L->coll)) continue;
      if (rules[r].kind == K_COMPOSE) compose(&rules[r], r, L, pts, n, p, out, max, &nv);
      else compare(&rules[r], r, L, pts, n, out, max, &nv);
    }
  return nv;
}

void gl_format(const gl_violation *v, const char *who, const char *mode, char *buf,
               unsigned len) {
  char b[32];
  fmt_bytes(v->bytes, b, sizeof b);
  snprintf(buf, len, "%s %s(%s) %.3g us > %s %.3g us (%s)", who, coll_name(v->coll), b,
           v->lhs * 1e6, v->mock, v->rhs * 1e6, mode);
}
