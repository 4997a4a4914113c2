/* dims.c - collc_dims_create (public API; needs no MPI_Init).
 *
 * Truth: an independent brute force that lists EVERY non-increasing
 * factorisation of the free part of p into m factors >= 1 and keeps the one
 * with the smallest max - min, ties to the lexicographically smallest
 * sequence (explicit comparison, not enumeration order). Compared exactly for
 * every p <= 2000 and d <= 5, for random fixed entries, and for numbers near
 * 2^31 (2147483647 prime, 2^30, 2147483646, 2095133040 = 2^4 3^4 5 7 11 13 17
 * 19). Also: the error classes of the documented argument errors, the
 * paper's Table 1 (1152 for d = 2, 3, 4, 9; 72 -> 9x8, where Open MPI 4.1
 * gives 12x6), fixed entries whose product overflows int, and that the large
 * cases finish quickly (run once under -fsanitize=undefined to prove no
 * overflow UB). */
#include <stdint.h>
#include <stdlib.h>
#include <string.h>
#include "collc.h"
#include "unit.h"

#define MAXD 128

/* Brute-force search state: divisors of the number, best sequence so far. */
typedef struct {
  int64_t *div; /* ascending divisors of the number being factorised */
  int ndiv, m;
  int64_t cur[MAXD], best[MAXD];
  int found;
} brute;

/* 1 if sequence a is strictly better than b (m entries, non-increasing):
 * smaller max - min, or equal spread and lexicographically smaller. */
static int better(const int64_t *a, const int64_t *b, int m) {
  int64_t sa = a[0] - a[m - 1], sb = b[0] - b[m - 1];
  if (sa != sb) return sa < sb;
  for (int i = 0; i < m; i++)
    if (a[i] != b[i]) return a[i] < b[i];
  return 0;
}

/* 1 if f^k >= n, computed without overflow (f >= 1, n >= 1). */
static int pow_at_least(int64_t f, int k, int64_t n) {
  int64_t v = 1;
  for (int i = 0; i < k && v < n; i++) v *= f;
  return v >= n;
}

/* Enumerate factor `at` of the sequence: every divisor f of rem with
 * f <= cap (non-increasing) and f^(m-at) >= rem (f is the largest of the
 * remaining factors, so this only skips prefixes that cannot complete). */
static void brute_rec(brute *B, int64_t rem, int at, int64_t cap) {
  int left = B->m - at;
  if (left == 1) {
    if (rem > cap) return;
    B->cur[at] = rem;
    if (!B->found || better(B->cur, B->best, B->m))
      memcpy(B->best, B->cur, sizeof(int64_t) * (size_t)B->m);
    B->found = 1;
    return;
  }
  for (int i = B->ndiv - 1; i >= 0; i--) {
    int64_t f = B->div[i];
    if (f > cap || rem % f) continue;
    if (!pow_at_least(f, left, rem)) break; /* smaller f cannot work either */
    B->cur[at] = f;
    brute_rec(B, rem / f, at + 1, f);
  }
}

/* Ascending divisors of q (q >= 1) into a new array; *n set. */
static int64_t *divisors_of(int64_t q, int *n) {
  int64_t *d = malloc(4096 * sizeof *d), hi[2048];
  int nlo = 0, nhi = 0;
  for (int64_t x = 1; x * x <= q; x++)
    if (q % x == 0) {
      d[nlo++] = x;
      if (x != q / x) hi[nhi++] = q / x;
    }
  while (nhi) d[nlo++] = hi[--nhi];
  *n = nlo;
  return d;
}

/* Brute-force truth for q split into m factors (m <= MAXD) into out[]. */
static void brute_dims(int64_t q, int m, int64_t *out) {
  brute B;
  memset(&B, 0, sizeof B);
  B.m = m;
  B.div = divisors_of(q, &B.ndiv);
  brute_rec(&B, q, 0, q);
  memcpy(out, B.best, sizeof(int64_t) * (size_t)m);
  free(B.div);
}

/* Format n ints as "AxBxC" into buf. */
static char *fmt_dims(const int *d, int n, char *buf, size_t len) {
  size_t at = 0;
  buf[0] = 0;
  for (int i = 0; i < n && at < len; i++)
    at += (size_t)snprintf(buf + at, len - at, "%s%d", i ? "x" : "", d[i]);
  return buf;
}

/* collc_dims_create(p, m, all zero) must equal the brute force exactly. */
static void against_brute(int p, int m) {
  int got[MAXD] = {0}, want[MAXD];
  int64_t w[MAXD];
  int rc = collc_dims_create(p, m, got);
  brute_dims(p, m, w);
  for (int i = 0; i < m; i++) want[i] = (int)w[i];
  char g[1024], e[1024];
  CHECK(rc == MPI_SUCCESS && memcmp(got, want, sizeof(int) * (size_t)m) == 0,
        "p=%d d=%d: got %s (rc %d), brute force %s", p, m, fmt_dims(got, m, g, sizeof g), rc,
        fmt_dims(want, m, e, sizeof e));
}

/* Every p <= 2000 and d = 1..5 against the brute force. */
static void test_exhaustive(void) {
  for (int p = 1; p <= 2000; p++)
    for (int d = 1; d <= 5; d++) against_brute(p, d);
}

/* Expect dims_create(p, n, in) to give rc and (on success) `want`. */
static void expect(int p, int n, const int *in, int rc, const int *want) {
  int d[MAXD];
  char g[1024], e[1024];
  if (n > 0) memcpy(d, in, sizeof(int) * (size_t)n);
  int got = collc_dims_create(p, n, d);
  CHECK(got == rc, "p=%d n=%d: rc %d, want %d", p, n, got, rc);
  if (got == MPI_SUCCESS && rc == MPI_SUCCESS && n > 0)
    CHECK(memcmp(d, want, sizeof(int) * (size_t)n) == 0, "p=%d: got %s, want %s", p,
          fmt_dims(d, n, g, sizeof g), fmt_dims(want, n, e, sizeof e));
}

/* Documented argument errors and the fixed-entry rules. */
static void test_arguments(void) {
  int z3[3] = {0, 3, 0}, w3[3] = {4, 3, 2}; /* nonzero entries stay in place */
  expect(24, 3, z3, MPI_SUCCESS, w3);
  int a[3] = {0, 0, 5}, b[3] = {4, 3, 2}, c[3] = {4, 3, 3}, neg[2] = {-1, 0};
  int big[2] = {4, 0}, one[1] = {0}, wone[1] = {1}, w5[2] = {1, 5}, z2[2] = {0, 0};
  expect(24, 3, a, MPI_ERR_DIMS, NULL); /* 5 does not divide 24 */
  expect(24, 3, b, MPI_SUCCESS, b);     /* all fixed, product p */
  expect(24, 3, c, MPI_ERR_DIMS, NULL); /* all fixed, product != p */
  expect(24, 2, neg, MPI_ERR_DIMS, NULL);
  expect(2, 2, big, MPI_ERR_DIMS, NULL);
  expect(1, 1, one, MPI_SUCCESS, wone);
  int f5[2] = {0, 5};
  expect(5, 2, f5, MPI_SUCCESS, w5); /* the free part is 1 */
  expect(0, 2, z2, MPI_ERR_DIMS, NULL);
  expect(-6, 2, z2, MPI_ERR_DIMS, NULL);
  expect(6, -1, z2, MPI_ERR_DIMS, NULL);
  expect(1, 0, NULL, MPI_SUCCESS, NULL);
  expect(5, 0, NULL, MPI_ERR_DIMS, NULL); /* empty product is 1, not 5 */
  int rc = collc_dims_create(6, 2, NULL);
  CHECK(rc == MPI_ERR_ARG, "dims NULL with ndims 2: rc %d, want MPI_ERR_ARG", rc);
  rc = collc_dims_create(1, 0, NULL);
  CHECK(rc == MPI_SUCCESS, "dims NULL with ndims 0, nnodes 1: rc %d", rc);
  /* fixed entries whose product overflows int */
  int o1[3] = {65536, 65536, 0}, o2[2] = {46341, 46341};
  int o3[4] = {2147483647, 2147483647, 2147483647, 0};
  expect(1 << 30, 3, o1, MPI_ERR_DIMS, NULL);
  expect(2147483647, 2, o2, MPI_ERR_DIMS, NULL);
  expect(2147483647, 4, o3, MPI_ERR_DIMS, NULL);
  int o4[3] = {32768, 0, 32768}, w4[3] = {32768, 1, 32768};
  expect(1 << 30, 3, o4, MPI_SUCCESS, w4);
}

/* The paper's Table 1 (p = 1152 = 36 x 32) and 72 (Open MPI 4.1: 12x6). */
static void test_paper_table(void) {
  int z[9] = {0};
  int d2[2] = {36, 32}, d3[3] = {12, 12, 8}, d4[4] = {8, 6, 6, 4};
  int d9[9] = {3, 3, 2, 2, 2, 2, 2, 2, 2}, s72[2] = {9, 8};
  expect(1152, 2, z, MPI_SUCCESS, d2);
  expect(1152, 3, z, MPI_SUCCESS, d3);
  expect(1152, 4, z, MPI_SUCCESS, d4);
  expect(1152, 9, z, MPI_SUCCESS, d9);
  expect(72, 2, z, MPI_SUCCESS, s72);
}

/* Random fixed entries (divisors of p) mixed with free ones: fixed kept,
 * free ones equal the brute force for the remaining quotient. */
static void test_fixed_random(void) {
  srand(12345);
  for (int t = 0; t < 3000; t++) {
    int p = 1 + rand() % 5000, n = 1 + rand() % 6, d[8], want[8], q = p, m = 0;
    int64_t w[8];
    for (int i = 0; i < n; i++) {
      int f = 1 + rand() % 12;
      d[i] = (rand() % 2 && q % f == 0) ? f : 0;
      if (d[i]) q /= f;
      else m++;
    }
    memcpy(want, d, sizeof d);
    if (m > 0) brute_dims(q, m, w);
    for (int i = 0, j = 0; i < n; i++)
      if (!want[i]) want[i] = (int)w[j++];
    if (m == 0 && q != 1) continue; /* all fixed, product != p: an error */
    expect(p, n, d, MPI_SUCCESS, want);
  }
}

/* dims_create(p, m) must be a non-increasing factorisation of p equal to
 * want (brute force when want is NULL); returns the library's CPU seconds. */
static double large_case(int p, int m, const int64_t *want) {
  int got[MAXD] = {0};
  int64_t w[MAXD], prod = 1;
  double t0 = unit_seconds();
  int rc = collc_dims_create(p, m, got);
  double t = unit_seconds() - t0;
  if (!want) brute_dims(p, m, w);
  else memcpy(w, want, sizeof(int64_t) * (size_t)m);
  int mono = 1, same = 1;
  for (int i = 0; i < m; i++) {
    prod *= got[i] > 0 ? got[i] : 0;
    if (i && got[i] > got[i - 1]) mono = 0;
    if (got[i] != w[i]) same = 0;
  }
  char g[1024];
  CHECK(rc == MPI_SUCCESS && prod == p && mono && same,
        "p=%d d=%d: got %s rc %d (product %lld%s)", p, m, fmt_dims(got, m, g, sizeof g), rc,
        (long long)prod, mono ? "" : ", not non-increasing");
  CHECK(t < 1.0, "p=%d d=%d took %.2f s", p, m, t);
  return t;
}

/* Numbers near 2^31: correct, no overflow, and fast. */
static void test_large(void) {
  int64_t want[MAXD];
  double t = 0;
  const int prime = 2147483647, ds[] = {1, 2, 3, 4, 5, 31};
  for (int k = 0; k < 6; k++) { /* prime: p, 1, 1, ... */
    for (int i = 0; i < ds[k]; i++) want[i] = i ? 1 : prime;
    t += large_case(prime, ds[k], want);
  }
  for (int i = 0; i < 31; i++) want[i] = i < 30 ? 2 : 1;
  t += large_case(1 << 30, 30, want);
  t += large_case(1 << 30, 31, want);
  for (int i = 0; i < 100; i++) want[i] = i < 30 ? 2 : 1; /* more dims than bits */
  t += large_case(1 << 30, 100, want);
  for (int i = 0; i < 100; i++) want[i] = i == 0 ? 3 : i < 3 ? 2 : 1;
  t += large_case(12, 100, want);
  for (int d = 2; d <= 5; d++) {
    t += large_case(2147483646, d, NULL); /* 2 3^2 7 11 31 151 331 */
    t += large_case(2095133040, d, NULL); /* 2^4 3^4 5 7 11 13 17 19 */
  }
  t += large_case(2147483646, 31, NULL);
  CHECK(t < 3.0, "large cases took %.2f s in collc_dims_create", t);
  printf("large cases: %.3f s in collc_dims_create\n", t);
}

/* Run every group of checks and print the summary. */
int main(void) {
  test_arguments();
  test_paper_table();
  test_large();
  test_fixed_random();
  test_exhaustive();
  return unit_summary("dims");
}
