/* patterns.h - rank arithmetic shared by the generators: tiny pure helpers.
 *
 * Mixed radix: a rank r over radices R[0..d-1] has digits r_k with R[0] the
 * fastest-varying: r = r_0 + R[0]*(r_1 + R[1]*(r_2 + ...)). The weight of
 * digit k is R[0]*...*R[k-1]. */
#ifndef COLLC_PATTERNS_H
#define COLLC_PATTERNS_H

#include <stdint.h>

/* Weight of digit k: product of R[0..k-1]. */
static inline int64_t mr_weight(const int *R, int k) {
  int64_t w = 1;
  for (int i = 0; i < k; i++) w *= R[i];
  return w;
}

/* Digit k of r in mixed radix R. */
static inline int mr_digit(int64_t r, const int *R, int k) {
  return (int)((r / mr_weight(R, k)) % R[k]);
}

/* Digit x of i in base b. */
static inline int base_digit(int64_t i, int b, int x) {
  for (int j = 0; j < x; j++) i /= b;
  return (int)(i % b);
}

/* Number of base-b digits needed for 0..n-1 (0 for n <= 1). */
static inline int base_ndigits(int64_t n, int b) {
  int d = 0;
  for (int64_t w = 1; w < n; w *= b) d++;
  return d;
}

/* (a mod n) in [0, n). */
static inline int64_t mod_pos(int64_t a, int64_t n) {
  int64_t m = a % n;
  return m < 0 ? m + n : m;
}

/* Dissemination: at a step of distance d, rank r tells r + j*d and hears
 * from r - j*d (mod p), j = 1..k-1 while j*d < p (j*d >= p only repeats
 * what j*d - p told). Peer j of r in direction dir (+1 to, -1 from). */
static inline int dissem_peer(int p, int r, int64_t d, int64_t j, int dir) {
  return (int)mod_pos(r + dir * j * d, p);
}

#endif
