/* verify_sweep.c - every generator, many sizes, through the verifier.
 *
 * Truth: the verifier's own token check (every output unit holds exactly
 * the input unit the all-to-all definition names, no races, no deadlock
 * under rendezvous semantics; verify_negative.c proves it can fail), plus
 * message counts derived independently here: direct exchange sends
 * p(p-1) one-unit messages; a torus round on D[k] sends p(D[k]-1) messages
 * (linear, pairwise) or makes p/D[k] group calls (native).
 *
 * Cases: every ordered factorisation (factors >= 2, all orders) of every
 * p <= 64 with torus components linear, pairwise and native, in place and
 * not; a uniform random sample of ordered factorisations of p <= 1152 (fixed
 * seed, printed; COLLC_TEST_SEED overrides) with random per-dimension
 * components, plus the paper's 1152 = 36x32, 12x12x8, 8x6x6x4,
 * 3x3x2x2x2x2x2x2x2, 1000 and some primes; direct pairwise and linear for
 * every p <= 64 and some larger; Bruck with every radix 2..p+1 for p <= 40
 * and radix 2, 3, 4, 7 up to p = 512; every mix of components on 4x3x2 and
 * automatic dims (torus:d=N). Thinned (a sanitizer build or COLLC_TEST_THIN=1):
 * 8 random samples instead of 40, no fixed torus with a dimension above 100,
 * Bruck's every radix for p <= 24. */
#include <stdlib.h>
#include <string.h>
#include "algo/algo.h"
#include "check/verify.h"
#include "unit.h"
#include "rng.h"

static long cases;

/* Verify all-to-all `algo` on p ranks; want_msgs / want_groups >= 0 are the
 * expected message and group-call counts (-1: not checked). */
static void run(const char *algo, int p, int in_place, int64_t want_msgs, int64_t want_groups) {
  collc_spec s = {.coll = COLLC_COLL_ALLTOALL,
      .p = p, .rank = 0, .count = 1, .unit_bytes = 4, .in_place = in_place};
  collc_choice c;
  verify_report R;
  char why[200] = "";
  cases++;
  if (choice_parse(s.coll, algo, &c, why, sizeof why) ||
      choice_resolve(&s, &c, why, sizeof why)) {
    CHECK(0, "%s p=%d: %s", algo, p, why);
    return;
  }
  verify_choice(&s, &c, &R);
  CHECK(R.ok, "%s p=%d%s: %lld errors%s: %s", algo, p, in_place ? " in place" : "",
        (long long)R.errors, R.deadlock ? " (deadlock)" : "", R.first_error);
  CHECK(want_msgs < 0 || R.messages == want_msgs, "%s p=%d%s: %lld messages, want %lld", algo,
        p, in_place ? " in place" : "", (long long)R.messages, (long long)want_msgs);
  CHECK(want_groups < 0 || R.group_calls == want_groups,
        "%s p=%d%s: %lld group calls, want %lld", algo, p, in_place ? " in place" : "",
        (long long)R.group_calls, (long long)want_groups);
}

/* Verify torus dims f[0..n) (MPI order) with per-dimension components
 * comp[0..n) (names), in place or not, checking message / group counts. */
static void run_torus(const int *f, int n, const int *comp, int in_place) {
  char algo[512];
  size_t at = (size_t)snprintf(algo, sizeof algo, "torus:");
  int64_t p = 1, msgs = 0, groups = 0;
  for (int i = 0; i < n; i++) {
    at += (size_t)snprintf(algo + at, sizeof algo - at, "%s%d", i ? "x" : "", f[i]);
    p *= f[i];
  }
  for (int i = 0; i < n; i++) {
    at += (size_t)snprintf(algo + at, sizeof algo - at, "%c%s", i ? ',' : ':',
                           comp_name(comp[i]));
    if (f[i] > 1 && comp[i] == COMP_NATIVE) groups += p / f[i];
    else if (f[i] > 1) msgs += p * (f[i] - 1);
  }
  run(algo, (int)p, in_place, msgs, groups);
}

/* Every ordered factorisation of rem (factors >= 2) appended to f[0..n),
 * each verified with all three uniform components, in place and not. */
static void all_orders(int rem, int *f, int n) {
  if (rem == 1) {
    for (int comp = 0; comp < COMP_COUNT; comp++)
      for (int ip = 0; ip < 2; ip++) {
        int cs[64];
        for (int i = 0; i < n; i++) cs[i] = comp;
        run_torus(f, n, cs, ip);
      }
    return;
  }
  for (int x = 2; x <= rem; x++)
    if (rem % x == 0) {
      f[n] = x;
      all_orders(rem / x, f, n + 1);
    }
}

/* Every ordered factorisation of every p <= 64 (p = 1 as torus:1). */
static void sweep_small_torus(void) {
  int f[64] = {1}, cs[1] = {COMP_LINEAR};
  run_torus(f, 1, cs, 0);
  run_torus(f, 1, cs, 1);
  for (int p = 2; p <= 64; p++) all_orders(p, f, 0);
}

/* Number of ordered factorisations of n into factors >= 2 (H(1) = 1). */
static int64_t orderings(int n) {
  static int64_t memo[1153];
  if (n == 1) return 1;
  if (n <= 1152 && memo[n]) return memo[n];
  int64_t h = 0;
  for (int x = 2; x <= n; x++)
    if (n % x == 0) h += orderings(n / x);
  if (n <= 1152) memo[n] = h;
  return h;
}

/* A uniformly random ordered factorisation of p into f[]; returns its length:
 * the first factor x is drawn with probability H(p/x) / H(p). */
static int random_factorisation(int p, int *f) {
  int n = 0;
  while (p > 1) {
    int64_t pick = (int64_t)(rng() % (uint64_t)orderings(p));
    for (int x = 2; x <= p; x++) {
      if (p % x) continue;
      if (pick < orderings(p / x)) {
        f[n++] = x;
        p /= x;
        break;
      }
      pick -= orderings(p / x);
    }
  }
  return n;
}

/* Random components for n dims: all one kind or mixed, each uniform. */
static void random_comps(int n, int *cs) {
  int mixed = (int)(rng() % 2), one = (int)(rng() % COMP_COUNT);
  for (int i = 0; i < n; i++) cs[i] = mixed ? (int)(rng() % COMP_COUNT) : one;
}

/* The paper's factorisations of 1152, 1000 and primes, plus a random
 * sample of 40 ordered factorisations of p in [65, 1152]. */
static void sample_large_torus(void) {
  const char *seed = getenv("COLLC_TEST_SEED");
  rng_state = seed ? strtoull(seed, NULL, 10) : 20260;
  printf("random sample seed %llu (COLLC_TEST_SEED to change)\n",
         (unsigned long long)rng_state);
  const int fixed[][10] = {{36, 32},     {12, 12, 8}, {8, 6, 6, 4}, {3, 3, 2, 2, 2, 2, 2, 2, 2},
                           {10, 10, 10}, {1000},      {997},        {1009},
                           {2, 509},     {5, 2, 2, 5, 2, 5}};
  const int nf[] = {2, 3, 4, 9, 3, 1, 1, 1, 2, 6};
  int cs[64], f[64];
  for (int i = 0; i < 10; i++) {
    int longest = 0;
    for (int j = 0; j < nf[i]; j++) longest = fixed[i][j] > longest ? fixed[i][j] : longest;
    if (unit_thin() && longest > 100) continue; /* (lines of 509..1009 ranks: up to a
                                                       million messages, 20 s under ASan) */
    random_comps(nf[i], cs);
    run_torus(fixed[i], nf[i], cs, i % 2);
  }
  for (int t = 0; t < (unit_thin() ? 8 : 40); t++) {
    int p = 65 + (int)(rng() % (1152 - 64)), n = random_factorisation(p, f);
    random_comps(n, cs);
    run_torus(f, n, cs, (int)(rng() % 2));
  }
}

/* Direct exchange: p(p-1) messages, in place and not. */
static void sweep_direct(void) {
  const int big[] = {65, 100, 127, 128, 200, 333};
  for (int i = 0; i < 64 + 6; i++) {
    int p = i < 64 ? i + 1 : big[i - 64];
    for (int ip = 0; ip < 2; ip++) {
      run("pairwise", p, ip, (int64_t)p * (p - 1), 0);
      run("linear", p, ip, (int64_t)p * (p - 1), 0);
    }
  }
}

/* Bruck: every radix 2..p+1 for p <= 40 (24 thinned); radix 2, 3, 4, 7 up to 512. */
static void sweep_bruck(void) {
  char algo[32];
  for (int p = 1; p <= (unit_thin() ? 24 : 40); p++)
    for (int k = 2; k <= p + 1; k++)
      for (int ip = 0; ip < 2; ip++) {
        snprintf(algo, sizeof algo, "bruck:%d", k);
        run(algo, p, ip, -1, 0);
      }
  run("bruck", 13, 0, -1, 0);
  const int ps[] = {64, 100, 127, 128, 243, 256, 343, 512}, ks[] = {2, 3, 4, 7};
  for (int i = 0; i < 8; i++)
    for (int j = 0; j < 4; j++) {
      snprintf(algo, sizeof algo, "bruck:%d", ks[j]);
      run(algo, ps[i], (i + j) % 2, -1, 0);
    }
}

/* Every mix of components on 4x3x2 and 3x1x4, and automatic dims. */
static void sweep_mixed(void) {
  const int f[3] = {4, 3, 2}, g[3] = {3, 1, 4};
  for (int m = 0; m < 27; m++) {
    int cs[3] = {m % 3, m / 3 % 3, m / 9};
    for (int ip = 0; ip < 2; ip++) {
      run_torus(f, 3, cs, ip);
      run_torus(g, 3, cs, ip);
    }
  }
  run("torus:4x3x2:native,linear,pairwise", 24, 0, 24 * (3 - 1) + 24 * (2 - 1), 24 / 4);
  run("torus:d=2", 60, 0, 60 * (10 - 1) + 60 * (6 - 1), 0); /* 60 -> 10x6 */
  run("torus:d=3:native", 60, 1, 0, 60 / 5 + 60 / 4 + 60 / 3); /* 60 -> 5x4x3 */
  run("torus:d=4:pairwise", 16, 0, 16 * 4, 0);                 /* 2x2x2x2 */
  run("torus:4x3x2:pairwise", 24, 1, 24 * (3 + 2 + 1), 0);
}

/* Run every sweep and print the summary. */
int main(void) {
  sweep_small_torus();
  sweep_direct();
  sweep_bruck();
  sweep_mixed();
  sample_large_torus();
  printf("%ld verifier runs\n", cases);
  return unit_summary("verify_sweep");
}
