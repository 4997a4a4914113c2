/* verify_counted.c - allgatherv and reduce_scatter (per-rank counts)
 * through the verifier, every algorithm that serves them.
 *
 * Truth, per run: the verifier's token check (src/check/verify.c) against
 * the collectives' own oracle rows (coll.c: allgatherv element u is element
 * u - off(q) of the rank q whose block holds it; reduce_scatter element u of
 * rank r is element off(r) + u of every rank's input folded in rank order,
 * for non-commutative operations an ordered hash), no races, no deadlock.
 * Independently of the generators: allgatherv moves (p - 1) * total units
 * (every rank receives every other block exactly once), and so does
 * recexch:flat's reduce_scatter (every rank sends every other rank's block
 * once). That the oracle can fail: programs compiled for one count vector
 * and verified against another of the same total must be rejected.
 *
 * Cases: p = 1..12, 16, 17, 31; count vectors all zero, one rank holding
 * everything (first, last, middle), counts not divisible by anything
 * (primes), ones, and 6 random vectors with zeros (fixed seed); algorithms
 * recexch (default, flat, every ordered two-factor list), cyclic (default,
 * radix 3, radix p), in place and not; reduce_scatter commutative and not
 * (cyclic must refuse non-commutative operations); allgatherv also with
 * displacements in reverse rank order with gaps of 2-3 elements and one
 * before the first block (gaps are not part of the result and are not
 * checked; every block element is). Node-aware hier for both on
 * layouts of nodes of 1, 2, 3 consecutive ranks, ranks alternating between
 * two nodes, uneven node sizes and one node (non-commutative only where
 * nodes hold consecutive ranks), p = 1..9. */
#include <stdlib.h>
#include <string.h>
#include "algo/algo.h"
#include "check/verify.h"
#include "unit.h"
#include "rng.h"

#define MAXP 32

static long cases;
static const collc_layout *layout; /* the node layout of the runs (NULL: none) */

/* Count vector number v of the kinds above for p ranks into c. */
static void counts_of(int v, int p, int64_t *c) {
  static const int64_t primes[] = {7, 3, 11, 13, 2, 17, 5, 19, 23, 29, 31, 37};
  for (int q = 0; q < p; q++) {
    switch (v) {
    case 0: c[q] = 0; break;
    case 1: c[q] = q == 0 ? 41 : 0; break;
    case 2: c[q] = q == p - 1 ? 41 : 0; break;
    case 3: c[q] = q == p / 2 ? 41 : 0; break;
    case 4: c[q] = primes[q % 12]; break;
    case 5: c[q] = 1; break;
    default: c[q] = rng() % 3 == 0 ? 0 : (int64_t)(rng() % 23); break;
    }
  }
}
enum { NVEC = 12 };

/* Verify coll with counts c under algorithm text t; whether it fits. */
static int run(int coll, int p, const int64_t *c, const int64_t *displs, const char *t, int ip,
               int comm) {
  int64_t total = 0;
  for (int q = 0; q < p; q++) total += c[q];
  collc_spec s = {.coll = coll, .p = p, .count = total, .unit_bytes = 8, .in_place = ip,
                  .commutative = comm, .counts = c, .displs = displs, .layout = layout};
  collc_choice ch;
  verify_report R;
  char why[200] = "";
  if (choice_parse(coll, t, &ch, why, sizeof why)) {
    CHECK(0, "%s: %s", t, why);
    return 0;
  }
  if (choice_resolve(&s, &ch, why, sizeof why)) return 0;
  cases++;
  verify_choice(&s, &ch, &R);
  CHECK(R.ok, "%s %s p=%d total=%lld%s%s%s: %lld errors%s: %s", coll_name(coll), t, p,
        (long long)total, displs ? " gapped displs" : "", ip ? " in place" : "",
        comm ? "" : " non-commutative",
        (long long)R.errors, R.deadlock ? " (deadlock)" : "", R.first_error);
  int exact = !layout && (coll == COLLC_COLL_ALLGATHERV || !strcmp(t, "recexch:flat"));
  CHECK(!exact || R.units == (p - 1) * total, "%s %s p=%d: %lld units moved, want %lld",
        coll_name(coll), t, p, (long long)R.units, (long long)((p - 1) * total));
  return 1;
}

/* Every algorithm text for p on coll with counts c, in place and not. */
static void run_all(int coll, int p, const int64_t *c, const int64_t *d) {
  char t[64];
  const char *fixed[] = {"recexch", "recexch:flat", "cyclic", "cyclic:3,3,3,3"};
  const char *sign = coll == COLLC_COLL_REDUCE_SCATTER ? "-" : "";
  for (int ip = 0; ip < 2; ip++)
    for (int comm = coll == COLLC_COLL_REDUCE_SCATTER ? 0 : 1; comm < 2; comm++) {
      for (int i = 0; i < 4; i++) {
        snprintf(t, sizeof t, "%s", fixed[i]);
        if (coll == COLLC_COLL_REDUCE_SCATTER && i == 3) snprintf(t, sizeof t, "cyclic:-3,-3,-3,-3");
        int fit = run(coll, p, c, d, t, ip, comm);
        CHECK(fit || (p > 81 && i == 3) || (i >= 2 && !comm), "%s %s p=%d refused",
              coll_name(coll), t, p);
      }
      snprintf(t, sizeof t, "cyclic:%s%d", sign, p);
      if (p > 1) run(coll, p, c, d, t, ip, comm);
      for (int a = 2; a < p; a++)
        if (p % a == 0) {
          snprintf(t, sizeof t, "recexch:%s%d,%s%d", sign, a, sign, p / a);
          CHECK(run(coll, p, c, d, t, ip, comm), "%s refused", t);
        }
    }
}

/* hier on layout L (name n) for p, counts c, displacements d, in place
 * and not, commutative and not (refused only where nodes do not hold
 * consecutive ranks). */
static void run_hier(const collc_layout *L, const char *n, int p, const int64_t *c,
                     const int64_t *d) {
  layout = L;
  for (int ip = 0; ip < 2; ip++)
    for (int comm = 0; comm < 2; comm++) {
      CHECK(!comm || run(COLLC_COLL_ALLGATHERV, p, c, d, "hier", ip, 1),
            "allgatherv hier %s p=%d refused", n, p);
      int fit = d || run(COLLC_COLL_REDUCE_SCATTER, p, c, NULL, "hier", ip, comm);
      CHECK(fit || (!comm && !L->consecutive), "reduce_scatter hier %s p=%d refused", n, p);
    }
  layout = NULL;
}

/* Layout named n for p ranks: "rr2" ranks alternate between two nodes,
 * "uneven" node sizes 1, 2, 3, ..., "one" a single node, else nodes of n
 * consecutive ranks. */
static collc_layout *make_layout(const char *n, int p) {
  int id[MAXP];
  char k[16];
  if (!strcmp(n, "one")) snprintf(k, sizeof k, "%d", p), n = k;
  if (strcmp(n, "rr2") && strcmp(n, "uneven")) return layout_parse(p, n);
  for (int r = 0, node = 0, left = 1; r < p; r++) {
    id[r] = !strcmp(n, "rr2") ? r % 2 : node;
    if (--left == 0) left = ++node + 1;
  }
  return layout_new(p, id);
}

/* Programs compiled for counts a whose specs (the oracle's input: each
 * program keeps its own copy of the counts) then say b, of the same total,
 * as if the generator had ignored the counts: they must be rejected. */
static void must_fail(int coll, const char *t) {
  int64_t a[4] = {3, 0, 5, 1}, b[4] = {0, 3, 5, 1};
  collc_spec s = {.coll = coll, .p = 4, .count = 9, .unit_bytes = 8, .commutative = 1,
                  .counts = a};
  collc_choice ch;
  collc_prog *progs[4] = {0};
  verify_report R;
  char why[200] = "";
  CHECK(!choice_parse(coll, t, &ch, why, sizeof why) && !choice_resolve(&s, &ch, why, sizeof why),
        "%s: %s", t, why);
  for (int r = 0; r < 4; r++) {
    s.rank = r;
    progs[r] = choice_compile(&s, &ch, why, sizeof why);
    CHECK(progs[r], "%s rank %d: %s", t, r, why);
  }
  s.counts = b, s.rank = 0;
  for (int r = 0; r < 4; r++)
    if (progs[r]) memcpy(progs[r]->own_counts, b, sizeof b);
  if (progs[0] && progs[1] && progs[2] && progs[3]) {
    verify_programs(&s, progs, &R);
    CHECK(!R.ok && R.errors > 0, "%s %s: wrong counts not caught", coll_name(coll), t);
  }
  for (int r = 0; r < 4; r++) prog_free(progs[r]);
}

int main(void) {
  static const int ps[] = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 16, 17, 31};
  int64_t c[MAXP], d[MAXP];
  rng_state = 15;
  for (size_t i = 0; i < sizeof ps / sizeof ps[0]; i++)
    for (int v = 0; v < NVEC; v++) {
      counts_of(v, ps[i], c);
      run_all(COLLC_COLL_ALLGATHERV, ps[i], c, NULL);
      run_all(COLLC_COLL_REDUCE_SCATTER, ps[i], c, NULL);
      for (int q = ps[i] - 1, at = 1; q >= 0; q--) d[q] = at, at += (int)c[q] + 2 + q % 2;
      run_all(COLLC_COLL_ALLGATHERV, ps[i], c, d); /* out of order, with gaps */
    }
  static const char *const lays[] = {"1", "2", "3", "rr2", "uneven", "one"};
  for (int p = 1; p <= 9; p++)
    for (size_t l = 0; l < sizeof lays / sizeof lays[0]; l++) {
      collc_layout *L = make_layout(lays[l], p);
      CHECK(L != NULL, "layout %s p=%d", lays[l], p);
      for (int v = 0; v < NVEC && L; v++) {
        counts_of(v, p, c);
        run_hier(L, lays[l], p, c, NULL);
        for (int q = p - 1, at = 1; q >= 0; q--) d[q] = at, at += (int)c[q] + 2 + q % 2;
        run_hier(L, lays[l], p, c, d);
      }
      layout_free(L);
    }
  must_fail(COLLC_COLL_ALLGATHERV, "recexch");
  must_fail(COLLC_COLL_ALLGATHERV, "cyclic");
  must_fail(COLLC_COLL_REDUCE_SCATTER, "recexch");
  must_fail(COLLC_COLL_REDUCE_SCATTER, "cyclic");
  printf("%ld cases\n", cases);
  return unit_summary("verify_counted");
}
