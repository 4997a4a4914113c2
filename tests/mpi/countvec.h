/* countvec.h - the count vectors of the per-rank-count tests (vcoll.c,
 * vforms.c, rooted.c), the same on every rank: header-only, one generator
 * state per program, started from the same seed everywhere. */
#ifndef COLLC_TESTS_COUNTVEC_H
#define COLLC_TESTS_COUNTVEC_H

static unsigned long long cv_seed = 15;

/* The next pseudo-random number (the same sequence on every rank). */
static inline unsigned rnd(void) {
  cv_seed = cv_seed * 6364136223846793005ull + 1442695040888963407ull;
  return (unsigned)(cv_seed >> 33);
}

/* Count vector v for p ranks into c: 0 all zero; 1..p rank v-1 holds 37,
 * the others nothing; p+1 primes; beyond, random with zeros. */
static inline void counts_of(int v, int p, int *c) {
  static const int primes[] = {7, 3, 11, 13, 2, 17, 5, 19};
  for (int q = 0; q < p; q++) {
    if (v == 0) c[q] = 0;
    else if (v <= p) c[q] = q == v - 1 ? 37 : 0;
    else if (v == p + 1) c[q] = primes[q % 8];
    else c[q] = rnd() % 3 == 0 ? 0 : (int)(rnd() % 29);
  }
}

#endif
