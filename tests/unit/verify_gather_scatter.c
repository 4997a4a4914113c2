/* verify_gather_scatter.c - gather, scatter, gatherv and scatterv through the
 * verifier, every algorithm that serves them, every root.
 *
 * Truth, per run: the verifier's token check (src/check/verify.c) against
 * the collectives' oracle rows (coll.c: gather's root holds block q of
 * rank q; scatter's rank r holds block r of the root's input; the counted
 * forms element u - off(q) of rank q's block, at the root's displacements),
 * no races, no deadlock under rendezvous semantics. Independently of the
 * generators: every algorithm moves each non-root block exactly once to or
 * from the root's subtree, so linear moves p - 1 units in p - 1 messages
 * (uniform) or total - counts[root] units in one message per nonempty
 * non-root block (counted); a tree sends one message per non-root rank
 * (p - 1) and moves the sum of the non-root subtrees. That the oracle can
 * fail: programs compiled for one count vector verified against another of
 * the same total must be rejected, and a scatter whose root sends block 0
 * to everyone likewise.
 *
 * Cases: p = 1..16; every root; in place and not; linear, tree (default,
 * fan-in 3, 2,3, p); counted forms with count vectors all zero, one rank
 * holding everything (first, last, the root), primes, and 4 random ones
 * with zeros (fixed seed), packed and with displacements in reverse rank
 * order with gaps. */
#include <stdlib.h>
#include <string.h>
#include "algo/algo.h"
#include "check/verify.h"
#include "unit.h"
#include "rng.h"

#define MAXP 16

static long cases;

/* Verify coll on p ranks at root under text t; whether it fits. want_units,
 * want_msgs >= 0 are checked. */
static int run(int coll, int p, int root, int ip, const int64_t *c, const int64_t *d,
               const char *t, int64_t want_units, int64_t want_msgs) {
  int64_t total = 0;
  for (int q = 0; c && q < p; q++) total += c[q];
  collc_spec s = {.coll = coll, .p = p, .count = c ? total : 2, .unit_bytes = c ? 8 : 16,
                  .in_place = ip, .root = root, .commutative = 1, .counts = c, .displs = d};
  collc_choice ch;
  verify_report R;
  char why[200] = "";
  if (choice_parse(coll, t, &ch, why, sizeof why) || choice_resolve(&s, &ch, why, sizeof why))
    return 0;
  cases++;
  verify_choice(&s, &ch, &R);
  CHECK(R.ok, "%s %s p=%d root=%d%s%s: %lld errors%s: %s", coll_name(coll), t, p, root,
        ip ? " in place" : "", d ? " gapped" : "", (long long)R.errors,
        R.deadlock ? " (deadlock)" : "", R.first_error);
  CHECK(want_units < 0 || R.units == want_units, "%s %s p=%d root=%d: %lld units, want %lld",
        coll_name(coll), t, p, root, (long long)R.units, (long long)want_units);
  CHECK(want_msgs < 0 || R.messages == want_msgs, "%s %s p=%d root=%d: %lld messages, want %lld",
        coll_name(coll), t, p, root, (long long)R.messages, (long long)want_msgs);
  return 1;
}

/* Units a k-nomial tree (fan-ins f, the last repeated) moves on p ranks:
 * every non-root virtual rank v sends its subtree [v, v + W) cut at p, W
 * the weight of its lowest nonzero digit. */
static int64_t tree_units(int p, const int *f, int nf) {
  int64_t sum = 0;
  for (int v = 1; v < p; v++) {
    int64_t W = 1;
    for (int l = 0;; l++) {
      int k = f[l < nf ? l : nf - 1];
      if ((v / W) % k) break;
      W *= k;
    }
    sum += W < p - v ? W : p - v;
  }
  return sum;
}

/* Gather and scatter: every algorithm, every root, in place and not. */
static void uniform(int p) {
  static const struct {
    const char *t;
    int f[2], nf;
  } trees[] = {{"tree", {2}, 1}, {"tree:3", {3}, 1}, {"tree:2,3", {2, 3}, 2}};
  char t[32];
  for (int coll = COLLC_COLL_GATHER; coll <= COLLC_COLL_SCATTER; coll++)
    for (int root = 0; root < p; root++)
      for (int ip = 0; ip < 2; ip++) {
        CHECK(run(coll, p, root, ip, NULL, NULL, "linear", p - 1, p - 1), "linear refused");
        for (size_t i = 0; i < sizeof trees / sizeof trees[0]; i++)
          CHECK(run(coll, p, root, ip, NULL, NULL, trees[i].t, tree_units(p, trees[i].f, trees[i].nf),
                    p - 1),
                "%s refused", trees[i].t);
        snprintf(t, sizeof t, "tree:%d", p < 2 ? 2 : p); /* one level: linear's messages */
        run(coll, p, root, ip, NULL, NULL, t, p - 1, p - 1);
      }
}

/* Count vector number v for p ranks at root into c. */
static void counts_of(int v, int p, int root, int64_t *c) {
  static const int64_t primes[] = {7, 3, 11, 13, 2, 17, 5, 19, 23, 29, 31, 37, 41, 43, 47, 53};
  for (int q = 0; q < p; q++) {
    switch (v) {
    case 0: c[q] = 0; break;
    case 1: c[q] = q == 0 ? 41 : 0; break;
    case 2: c[q] = q == p - 1 ? 41 : 0; break;
    case 3: c[q] = q == root ? 41 : 0; break;
    case 4: c[q] = primes[q]; break;
    default: c[q] = rng() % 3 == 0 ? 0 : (int64_t)(rng() % 23); break;
    }
  }
}
enum { NVEC = 8 };

/* Gatherv and scatterv: linear (the only algorithm), every root, every
 * vector, packed and gapped, in place and not; tree must be refused. */
static void counted(int p) {
  int64_t c[MAXP], d[MAXP];
  for (int coll = COLLC_COLL_GATHERV; coll <= COLLC_COLL_SCATTERV; coll++)
    for (int root = 0; root < p; root++)
      for (int v = 0; v < NVEC; v++) {
        counts_of(v, p, root, c);
        int64_t total = 0, msgs = 0;
        for (int q = 0; q < p; q++) total += c[q], msgs += q != root && c[q] > 0;
        for (int q = p - 1, at = 1; q >= 0; q--) d[q] = at, at += c[q] + 2 + q % 2;
        for (int ip = 0; ip < 2; ip++)
          for (int g = 0; g < 2; g++)
            CHECK(run(coll, p, root, ip, c, g ? d : NULL, "linear", total - c[root], msgs),
                  "linear refused");
        CHECK(!run(coll, p, root, 0, c, NULL, "tree", -1, -1), "%s: tree accepted",
              coll_name(coll));
      }
}

/* Programs compiled for counts a whose specs then say b (same total): the
 * root's oracle must reject them. */
static void must_fail(int coll) {
  int64_t a[4] = {3, 0, 5, 1}, b[4] = {0, 3, 5, 1};
  collc_spec s = {.coll = coll, .p = 4, .count = 9, .unit_bytes = 8, .root = 2, .counts = a};
  collc_choice ch;
  collc_prog *progs[4] = {0};
  verify_report R;
  char why[200] = "";
  CHECK(!choice_parse(coll, "linear", &ch, why, sizeof why) &&
            !choice_resolve(&s, &ch, why, sizeof why),
        "%s", why);
  for (int r = 0; r < 4; r++) {
    s.rank = r;
    CHECK((progs[r] = choice_compile(&s, &ch, why, sizeof why)), "rank %d: %s", r, why);
  }
  for (int r = 0; r < 4; r++)
    if (progs[r]) memcpy(progs[r]->own_counts, b, sizeof b);
  s.counts = b, s.rank = 0;
  if (progs[0] && progs[1] && progs[2] && progs[3]) {
    verify_programs(&s, progs, &R);
    CHECK(!R.ok && R.errors > 0, "%s: wrong counts not caught", coll_name(coll));
  }
  for (int r = 0; r < 4; r++) prog_free(progs[r]);
}

/* A scatter whose root sends its block 0 to every rank: rejected. */
static void must_fail_scatter(void) {
  collc_spec s = {.coll = COLLC_COLL_SCATTER, .p = 3, .count = 1, .unit_bytes = 8};
  collc_choice ch;
  collc_prog *progs[3] = {0};
  verify_report R;
  char why[200] = "";
  choice_parse(s.coll, "linear", &ch, why, sizeof why);
  for (int r = 0; r < 3; r++) {
    s.rank = r;
    progs[r] = choice_compile(&s, &ch, why, sizeof why);
  }
  s.rank = 0;
  for (int a = 0; progs[0] && a < progs[0]->nins; a++)
    if (progs[0]->ins[a].op == COLLC_OP_SEND) progs[0]->ins[a].src.off = 0;
  if (progs[0] && progs[1] && progs[2]) {
    verify_programs(&s, progs, &R);
    CHECK(!R.ok && R.errors > 0, "scatter sending block 0 to all not caught");
  }
  for (int r = 0; r < 3; r++) prog_free(progs[r]);
}

int main(void) {
  rng_state = 15;
  for (int p = 1; p <= MAXP; p++) uniform(p), counted(p);
  must_fail(COLLC_COLL_GATHERV);
  must_fail(COLLC_COLL_SCATTERV);
  must_fail_scatter();
  printf("%ld cases\n", cases);
  return unit_summary("verify_gather_scatter");
}
