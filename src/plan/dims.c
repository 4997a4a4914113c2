/* dims.c - collc_dims_create: MPI_Dims_create semantics, balanced for real.
 *
 * The free factors are the non-increasing sequence of m factors of q with
 * the smallest max - min; ties go to the lexicographically smallest (the
 * smallest largest factor first). Found by a depth-first search over the
 * divisors of q in lexicographic order with branch and bound on the spread;
 * 64-bit arithmetic throughout, so any int input is safe. */
#include <math.h>
#include <stdlib.h>
#include <mpi.h>
#include "collc.h"
#include "dims.h"

#define MAXDIV 2048 /* an int has at most 1600 divisors */

typedef struct {
  int64_t div[MAXDIV];
  int ndiv, m;
  int64_t cur[64 + 1], best[64 + 1];
  int64_t best_spread;
} search;

/* True if f^k >= n (no overflow). */
static int pow_ge(int64_t f, int k, int64_t n) {
  int64_t v = 1;
  for (int i = 0; i < k; i++) {
    if (v >= (n + f - 1) / f) return 1;
    v *= f;
  }
  return v >= n;
}

/* Sorted divisors of q into S->div. */
static void divisors(search *S, int64_t q) {
  int64_t hi[MAXDIV / 2];
  int nhi = 0;
  S->ndiv = 0;
  for (int64_t d = 1; d * d <= q; d++)
    if (q % d == 0) {
      S->div[S->ndiv++] = d;
      if (d != q / d) hi[nhi++] = q / d;
    }
  while (nhi) S->div[S->ndiv++] = hi[--nhi];
}

/* Largest g with g^k <= n (n >= 1, k >= 1). */
static int64_t root_floor(int64_t n, int k) {
  int64_t g = (int64_t)pow((double)n, 1.0 / k);
  if (g < 1) g = 1;
  while (g > 1 && pow_ge(g, k, n + 1)) g--; /* g^k > n */
  while (!pow_ge(g + 1, k, n + 1)) g++;     /* (g+1)^k <= n */
  return g;
}

/* Choose factor `at` (of m) for rem: f <= cap, f | rem, f^(m-at) >= rem.
 * Divisors ascend, so sequences are visited in lexicographic order and the
 * first one found with a given spread is the one kept. */
static void dfs(search *S, int64_t rem, int at, int64_t cap) {
  int left = S->m - at;
  if (left == 0) {
    int64_t spread = S->cur[0] - S->cur[S->m - 1];
    if (rem == 1 && spread < S->best_spread) {
      S->best_spread = spread;
      for (int i = 0; i < S->m; i++) S->best[i] = S->cur[i];
    }
    return;
  }
  int64_t root = at == 0 ? root_floor(rem, left) : 0;
  for (int i = 0; i < S->ndiv && S->div[i] <= cap; i++) {
    int64_t f = S->div[i];
    if (rem % f || !pow_ge(f, left, rem)) continue;
    /* the smallest factor is <= f, and at the top <= the m-th root of q */
    if (at == 0 && f - root >= S->best_spread) break;
    if (at > 0 && S->cur[0] - f >= S->best_spread) continue;
    S->cur[at] = f;
    dfs(S, rem / f, at + 1, f);
  }
}

int dims_balanced(int64_t q, int m, int out[]) {
  if (m > 64) { /* more factors than bits: the rest are ones */
    for (int i = 64; i < m; i++) out[i] = 1;
    m = 64;
  }
  search *S = malloc(sizeof *S);
  if (!S) return -1;
  S->m = m;
  S->best_spread = INT64_MAX;
  divisors(S, q);
  dfs(S, q, 0, q);
  for (int i = 0; i < m; i++) out[i] = (int)S->best[i];
  free(S);
  return 0;
}

int collc_dims_create(int nnodes, int ndims, int dims[]) {
  if (ndims < 0 || nnodes < 1) return MPI_ERR_DIMS;
  if (ndims > 0 && !dims) return MPI_ERR_ARG;
  int64_t fixed = 1;
  int m = 0;
  for (int i = 0; i < ndims; i++) {
    if (dims[i] < 0) return MPI_ERR_DIMS;
    if (dims[i] == 0) m++;
    else if ((fixed *= dims[i]) > nnodes) return MPI_ERR_DIMS;
  }
  if (nnodes % fixed || (m == 0 && fixed != nnodes)) return MPI_ERR_DIMS;
  if (m == 0) return MPI_SUCCESS;
  int *f = malloc((size_t)m * sizeof *f);
  if (!f) return MPI_ERR_NO_MEM;
  if (dims_balanced(nnodes / fixed, m, f)) {
    free(f);
    return MPI_ERR_NO_MEM;
  }
  for (int i = 0, j = 0; i < ndims; i++)
    if (dims[i] == 0) dims[i] = f[j++];
  free(f);
  return MPI_SUCCESS;
}
