/* guidelines.c - the performance guidelines (src/check/guidelines.c) on
 * synthetic tables: a self-consistent one (times a + b n with 3% noise,
 * every collective at half decades) has no violation; each violation
 * planted (allreduce slower than reduce + bcast, than reduce_scatter_block
 * + allgather, reduce_scatter_block slower than reduce + scatter, time
 * falling with n, a message cheaper in pieces) is found,
 * exactly it, with its rule, size and medians; the mock-up uses the next
 * measured size above the one it needs; bad input never crashes. The truth
 * is the planting itself. */
#include <math.h>
#include <string.h>
#include "check/guidelines.h"
#include "ir/ir.h"
#include "rng.h"
#include "unit.h"

#define NS 20   /* samples per point */
#define NB 10   /* sizes: 1 B .. 10^4.5 B in half decades */
#define NC 6    /* collectives */

static const int colls[NC] = {COLLC_COLL_ALLREDUCE, COLLC_COLL_REDUCE, COLLC_COLL_BCAST,
                              COLLC_COLL_REDUCE_SCATTER_BLOCK, COLLC_COLL_ALLGATHER,
                              COLLC_COLL_SCATTER};
static double xs[NC * NB][NS];
static gl_point pts[NC * NB];

/* Uniform noise in [1 - e, 1 + e]. */
static double noise(double e) { return 1 + e * (2.0 * (double)(rng() >> 11) / 9007199254740992.0 - 1); }

/* The self-consistent table: collective c costs a_c + n ns (allreduce the
 * sum of reduce and bcast's latencies less a little). */
static void table(void) {
  static const double lat[NC] = {5e-6, 3e-6, 3e-6, 3e-6, 3e-6, 3e-6};
  rng_state = 42;
  for (int c = 0; c < NC; c++)
    for (int b = 0; b < NB; b++) {
      gl_point *q = &pts[c * NB + b];
      *q = (gl_point){.coll = colls[c], .bytes = llround(pow(10, b / 2.0)), .x = xs[c * NB + b],
                      .n = NS};
      for (int i = 0; i < NS; i++) xs[c * NB + b][i] = (lat[c] + q->bytes * 1e-9) * noise(0.03);
    }
}

/* Scale point (c, b)'s samples by f. */
static void plant(int c, int b, double f) {
  for (int i = 0; i < NS; i++) xs[c * NB + b][i] *= f;
}

/* Check the violations found: rule r at (coll, bytes) among them, every one
 * of a rule in the mask allowed and (at, unless any) at (coll, bytes); their
 * number, or -1 if none. Prints them. */
static int expect(int r, int coll, long long bytes, unsigned allowed, int any, const char *what) {
  gl_violation v[64];
  int n = gl_check(pts, NC * NB, 2, v, 64), seen = 0;
  for (int i = 0; i < n && i < 64; i++) {
    char line[200];
    gl_format(&v[i], "native", "barrier", line, sizeof line);
    printf("  %s: %s [%s]\n", what, line, gl_rule_name(v[i].rule));
    seen |= v[i].rule == r && v[i].coll == coll && (any || v[i].bytes == bytes) &&
            v[i].lhs > v[i].rhs;
    CHECK((allowed >> v[i].rule & 1) && v[i].coll == coll && (any || v[i].bytes == bytes),
          "%s: unexpected violation %s", what, line);
  }
  CHECK(seen, "%s: rule %d at %lld B not found", what, r, bytes);
  return n;
}

int main(void) {
  gl_violation v[8];
  char line[200];
  table();
  CHECK(gl_check(pts, NC * NB, 2, v, 8) == 0, "the consistent table has violations");
  /* allreduce(10^3.5 B = 3162 B): 3 x slower than reduce + bcast (~12.3 us) */
  plant(0, 7, 3);
  /* (it is also slower than rsb + allgather and than allreduce(10 KB)) */
  expect(0, COLLC_COLL_ALLREDUCE, 3162, 1u | 2u | 8u, 0, "allreduce > reduce + bcast");
  gl_check(pts, NC * NB, 2, v, 8);
  gl_format(&v[0], "native", "barrier", line, sizeof line);
  CHECK(!strncmp(line, "native allreduce(3.09 KiB) ", 27) && strstr(line, " > reduce + bcast ") &&
            strstr(line, "(barrier)"),
        "message: %s", line);
  CHECK(gl_realise(v[0].rule) && !strcmp(gl_realise(v[0].rule), "tree"), "realised by tree");
  plant(0, 7, 1 / 3.0);
  /* reduce_scatter_block and allgather 3 x faster everywhere: allreduce
   * slower than their composition at every size, nothing else */
  for (int b = 0; b < NB; b++) plant(3, b, 1 / 3.0), plant(4, b, 1 / 3.0);
  CHECK(expect(1, COLLC_COLL_ALLREDUCE, 0, 2u, 1, "allreduce > rsb + allgather") == NB,
        "not every allreduce size violates rule 1");
  for (int b = 0; b < NB; b++) plant(3, b, 3), plant(4, b, 3);
  CHECK(gl_check(pts, NC * NB, 2, v, 8) == 0, "restored table has violations");
  /* bcast(100 B) slower than bcast(316 B): time falls with n */
  plant(2, 4, 1.5);
  expect(3, COLLC_COLL_BCAST, 100, 8u, 0, "time grows with n");
  plant(2, 4, 1 / 1.5);
  /* bcast(31623 B) more than 4 x bcast(10000 B): splitting pays */
  plant(2, 9, 4.5 * (3e-6 + 1e-5) / (3e-6 + 3.1623e-5));
  expect(4, COLLC_COLL_BCAST, 31623, 16u, 0, "splitting does not pay");
  plant(2, 9, 1 / (4.5 * (3e-6 + 1e-5) / (3e-6 + 3.1623e-5)));
  CHECK(gl_check(pts, NC * NB, 2, v, 8) == 0, "restored table has violations");
  /* reduce_scatter_block(316 B) 4 x slower: above reduce(1000 B, the next
   * measured size above 632) + scatter(316 B), ~7.3 us (and above rsb(1000 B)
   * and 4 x rsb(100 B)) */
  CHECK(!gl_rule_skipped(2), "scatter rule skipped");
  plant(3, 5, 4);
  expect(2, COLLC_COLL_REDUCE_SCATTER_BLOCK, 316, 4u | 8u | 16u, 0, "rsb > reduce + scatter");
  plant(3, 5, 0.25);
  CHECK(gl_check(pts, NC * NB, 2, v, 8) == 0, "restored table has violations");
  /* the test: equal samples are not greater, 20% slower ones are */
  CHECK(!gl_greater(xs[0], NS, xs[0], NS, 1.05), "a sample greater than itself");
  double up[NS];
  for (int i = 0; i < NS; i++) up[i] = xs[0][i] * 1.2;
  CHECK(gl_greater(up, NS, xs[0], NS, 1.05), "20%% slower not greater");
  CHECK(!gl_greater(up, 1, xs[0], NS, 1.05), "one sample decides");
  /* bad input: nothing, no samples, unknown collectives, p = 0, out of room */
  CHECK(gl_check(NULL, 5, 2, v, 8) == 0 && gl_check(pts, 0, 2, v, 8) == 0 &&
            gl_check(pts, NC * NB, 0, v, 8) == 0, "bad input found violations");
  plant(0, 7, 3), plant(2, 4, 1.5);
  int all = gl_check(pts, NC * NB, 2, v, 8);
  CHECK(all == 4 && gl_check(pts, NC * NB, 2, v, 1) == all &&
            gl_check(pts, NC * NB, 2, NULL, 0) == all,
        "violations beyond max not counted (%d)", all);
  for (int i = 0; i < NC * NB; i++) pts[i].coll = 99;
  CHECK(gl_check(pts, NC * NB, 2, v, 8) == 0, "unknown collectives checked");
  CHECK(gl_rule_name(-1) == NULL && gl_rule_name(gl_rule_count()) == NULL, "rule names range");
  return unit_summary("guidelines");
}
