/* rng.h - the tests' reproducible pseudo-random numbers (splitmix64);
 * set rng_state to seed them. Header-only. */
#ifndef COLLC_TESTS_RNG_H
#define COLLC_TESTS_RNG_H

#include <stdint.h>

static uint64_t rng_state;

/* splitmix64: the next pseudo-random 64-bit value. */
static inline uint64_t rng(void) {
  uint64_t z = (rng_state += 0x9e3779b97f4a7c15ULL);
  z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ULL;
  z = (z ^ (z >> 27)) * 0x94d049bb133111ebULL;
  return z ^ (z >> 31);
}

#endif
