/* token.h - what the verifier stores in each unit: the contributions it holds.
 *
 * A token names a sequence of input units (leaves), combined left to right
 * by the reduction operation. It is kept in O(1) space: the number of
 * leaves, a polynomial hash of the ordered sequence (so concatenation is
 * h(A++B) = h(A) * B^|B| + h(B) mod 2^61-1), a multiset hash (sum of mixed
 * leaf ids), and for a single leaf its id. Two tokens with equal counts and
 * hashes hold the same sequence (or, for the multiset hash, the same leaves
 * in some order) with probability 1 - 2^-60 per comparison.
 */
#ifndef COLLC_TOKEN_H
#define COLLC_TOKEN_H

#include <stdint.h>

#define TOK_MOD ((UINT64_C(1) << 61) - 1)
#define TOK_BASE UINT64_C(0x1f3d5b79a2c4e681)

typedef struct {
  int64_t n;    /* leaves; 0 = undefined data */
  int64_t leaf; /* the leaf's id when n == 1, else -1 */
  uint64_t h;   /* ordered hash, mod TOK_MOD */
  uint64_t pw;  /* TOK_BASE^n mod TOK_MOD */
  uint64_t m;   /* multiset hash, mod 2^64 */
} vtok;

/* (a * b) mod 2^61-1. */
static inline uint64_t tok_mulmod(uint64_t a, uint64_t b) {
  unsigned __int128 x = (unsigned __int128)a * b;
  uint64_t lo = (uint64_t)(x & TOK_MOD), hi = (uint64_t)(x >> 61);
  uint64_t s = lo + hi;
  return s >= TOK_MOD ? s - TOK_MOD : s;
}

/* splitmix64 finaliser: a well-mixed 64-bit image of x. */
static inline uint64_t tok_mix(uint64_t x) {
  x += UINT64_C(0x9e3779b97f4a7c15);
  x = (x ^ (x >> 30)) * UINT64_C(0xbf58476d1ce4e5b9);
  x = (x ^ (x >> 27)) * UINT64_C(0x94d049bb133111eb);
  return x ^ (x >> 31);
}

static inline vtok tok_undefined(void) {
  vtok t = {0, -1, 0, 1, 0};
  return t;
}

/* The token of input unit `leaf` alone. */
static inline vtok tok_leaf(int64_t leaf) {
  vtok t = {1, leaf, tok_mix((uint64_t)leaf) % TOK_MOD, TOK_BASE % TOK_MOD,
            tok_mix((uint64_t)leaf ^ UINT64_C(0x5bd1e995))};
  return t;
}

/* a op b: the contributions of a, then those of b. Undefined if either is. */
static inline vtok tok_concat(vtok a, vtok b) {
  if (a.n == 0 || b.n == 0) return tok_undefined();
  vtok t = {a.n + b.n, -1, (tok_mulmod(a.h, b.pw) + b.h) % TOK_MOD, tok_mulmod(a.pw, b.pw),
            a.m + b.m};
  return t;
}

/* Same leaves in the same order (ordered) or in any order. */
static inline int tok_same(vtok a, vtok b, int ordered) {
  return a.n == b.n && a.m == b.m && (!ordered || a.h == b.h) && (a.n != 1 || a.leaf == b.leaf);
}

#endif
