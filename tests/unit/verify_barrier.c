/* verify_barrier.c - the barrier's algorithms through the verifier and the
 * simulator, and proof that the barrier oracle can fail.
 *
 * Truth: the verifier's synchronizes oracle (every rank's exit causally
 * after every rank's entry, through message chains and flag waits; no
 * deadlock, two runs back to back where the segment is used), plus
 * message counts worked out here independently of the generator: radix 2
 * sends p * ceil(log2 p) messages (one per rank and round), one step of
 * radix p sends p(p-1), and the hier barrier's leaders among N nodes send
 * N * ceil(log2 N) (twice where the segment is used: the verifier runs
 * such programs twice). The simulator's alpha-only prediction of dissem:2 is
 * ceil(log2 p) latencies.
 *
 * Cases: p = 1..64 with dissem (default, radices 2..5, lists 2,3 / 3,2 /
 * p), flags (the same on one node), shm:dissem (p <= 24), hier with nodes
 * of 1, 2, 3, 4, 8 ranks and net=dissem:2/3. Negative: programs with one
 * rank skipped (a RECV and its matching SEND removed; one AWAIT removed;
 * the leader's AWAIT of one local rank removed; every rank does nothing)
 * must be rejected with the barrier's own error, not a deadlock. */
#include <stdlib.h>
#include <string.h>
#include "algo/algo.h"
#include "check/verify.h"
#include "check/simulate.h"
#include "unit.h"
#include "mutate.h"

#define MAXP PROGS_MAXP

/* ceil(log2 n), 0 for n <= 1. */
static int64_t clog2(int64_t n) {
  int64_t d = 0;
  for (int64_t w = 1; w < n; w *= 2) d++;
  return d;
}

/* The spec of a p-rank barrier on nodes of k ranks (0: no layout). */
static collc_spec bspec(int p, int k) {
  collc_spec s = {.coll = COLLC_COLL_BARRIER, .p = p, .unit_bytes = 1};
  s.layout = k ? layout_regular(p, k) : NULL;
  return s;
}

/* Verify barrier `algo` on p ranks, nodes of k; want_msgs >= 0 checked. */
static void run(const char *algo, int p, int k, int64_t want_msgs) {
  collc_spec s = bspec(p, k);
  collc_choice c;
  verify_report R;
  char why[200] = "";
  if (choice_parse(s.coll, algo, &c, why, sizeof why) || choice_resolve(&s, &c, why, sizeof why)) {
    CHECK(0, "%s p=%d k=%d: %s", algo, p, k, why);
  } else {
    verify_choice(&s, &c, &R);
    CHECK(R.ok, "%s p=%d k=%d: %s", algo, p, k, R.first_error);
    CHECK(want_msgs < 0 || R.messages == want_msgs, "%s p=%d k=%d: %lld messages, want %lld",
          algo, p, k, (long long)R.messages, (long long)want_msgs);
    CHECK(R.units == 0, "%s p=%d: moves %lld units", algo, p, (long long)R.units);
  }
  layout_free((collc_layout *)s.layout);
}

static void sweep(void) {
  static const char *const radix[] = {"dissem", "dissem:2", "dissem:3", "dissem:4", "dissem:5",
                                      "dissem:2,3", "dissem:3,2"};
  char text[64];
  for (int p = 1; p <= MAXP; p++) {
    for (size_t i = 0; i < sizeof radix / sizeof radix[0]; i++) {
      int64_t want = i < 2 ? p * clog2(p) : -1;
      run(radix[i], p, 0, want);
      snprintf(text, sizeof text, "flags%s", radix[i] + 6);
      run(text, p, p, 0);
    }
    snprintf(text, sizeof text, "dissem:%d", p > 1 ? p : 2);
    run(text, p, 0, (int64_t)p * (p - 1));
    run("flags", p, p, 0);
    if (p <= 24) run("shm:dissem", p, p, 0);
    static const int ks[] = {1, 2, 3, 4, 8};
    for (size_t i = 0; i < sizeof ks / sizeof ks[0]; i++) {
      int64_t nodes = (p + ks[i] - 1) / ks[i], runs = ks[i] > 1 && p > 1 ? 2 : 1;
      run("hier", p, ks[i], runs * nodes * clog2(nodes)); /* (a segment: two runs) */
      run("hier:net=dissem:3", p, ks[i], -1);
    }
  }
}

/* Compile algo for a p-rank barrier on nodes of k into G; 0 or -1. */
static int compile_barrier(const char *algo, int p, int k, progs *G) {
  collc_spec s = bspec(p, k);
  return compile_all(&s, algo, G);
}

/* Free G's programs and its spec's layout. */
static void free_barrier(progs *G) {
  free_all(G);
  layout_free((collc_layout *)G->s.layout);
}

/* G passes unchanged (the control), then after mutate(G) fails with the
 * barrier's error and no deadlock. */
static void expect_caught(const char *what, const char *algo, int p, int k,
                          void (*mutate)(progs *)) {
  progs G;
  verify_report R;
  if (compile_barrier(algo, p, k, &G) == 0 && CHECK(verify_programs(&G.s, G.P, &R), "%s control: %s", what, R.first_error)) {
    mutate(&G);
    for (int r = 0; r < p; r++)
      CHECK(prog_finalize(G.P[r]) == 0, "%s: rank %d not well-formed: %s", what, r, G.P[r]->errmsg);
    int ok = verify_programs(&G.s, G.P, &R);
    CHECK(!ok && !R.deadlock && strstr(R.first_error, "before rank"),
          "%s: not caught as a barrier error (ok=%d deadlock=%d: %s)", what, ok, R.deadlock,
          R.first_error);
    if (!ok) printf("caught %s: %s\n", what, R.first_error);
  }
  free_barrier(&G);
}

/* dissem p=8: rank 7 never tells rank 0 in round 1 (its SEND and rank 0's
 * RECV go): 6 -> 0 in round 2 knew 5, 6 and 4 -> 0 in round 3 knew 1..4,
 * so 0 leaves not knowing 7; so does 2 (it heard of 7 only through 0). */
static void skip_message(progs *G) {
  int s = find(G->P[7], COLLC_OP_SEND, 0, 0), r = find(G->P[0], COLLC_OP_RECV, 0, 0);
  CHECK(s >= 0 && G->P[7]->ins[s].peer == 0 && r >= 0 && G->P[0]->ins[r].peer == 7,
        "dissem p=8: round 1 is not 7 -> 0");
  drop_post(G->P[7], s);
  drop_post(G->P[0], r);
}

/* flags:2 p=4: rank 2 skips its round-1 AWAIT of rank 1, so it knows 1
 * only through 0 in round 2, which knew 3 and 0: 2 never hears of 1. */
static void skip_await(progs *G) {
  int a = find(G->P[2], COLLC_OP_AWAIT, 0, 0);
  CHECK(a >= 0 && G->P[2]->ins[a].peer == 1, "flags:2 p=4: rank 2 does not await 1 first");
  delete_ins(G->P[2], a);
}

/* hier p=6 on nodes of 3: the leader of node 1 (rank 3) does not await
 * rank 5, so nobody outside rank 5 knows of its entry. */
static void skip_local(progs *G) {
  int a = find(G->P[3], COLLC_OP_AWAIT, 1, 0);
  CHECK(a >= 0 && G->P[3]->ins[a].peer == 5, "hier: rank 3's second AWAIT is not of 5");
  delete_ins(G->P[3], a);
}

/* Every rank's program emptied: nothing orders anything. */
static void empty_all(progs *G) {
  for (int r = 0; r < G->s.p; r++) G->P[r]->nins = 0, G->P[r]->nslots = 0;
}

static void negative(void) {
  expect_caught("skipped message", "dissem", 8, 0, skip_message);
  expect_caught("skipped AWAIT", "flags:2", 4, 4, skip_await);
  expect_caught("skipped local rank", "hier", 6, 3, skip_local);
  expect_caught("empty programs", "dissem", 5, 0, empty_all);
}

/* Alpha-only model: dissem:2 takes ceil(log2 p) latencies; flags costs
 * no message; hier between 4 nodes two rounds of network latency. */
static void simulate(void) {
  sim_params M;
  sim_report R;
  collc_choice c;
  char why[200];
  sim_params_parse("paper", &M, why, sizeof why);
  for (int l = 0; l < SIM_LEVELS; l++) M.lat[l] = 1e-6;
  M.o = M.copy_bw = M.reduce_bw = M.nic_bw = 0, M.flag_lat = 0;
  for (int p = 2; p <= 64; p *= 2) {
    collc_spec s = bspec(p, 0);
    memset(&R, 0, sizeof R);
    int ok = !choice_parse(s.coll, "dissem", &c, why, sizeof why) &&
             !choice_resolve(&s, &c, why, sizeof why) && sim_choice(&s, &c, &M, &R);
    CHECK(ok && R.time > (clog2(p) - 0.01) * 1e-6 && R.time < (clog2(p) + 0.01) * 1e-6,
          "dissem p=%d: predicted %g s, want %lld us", p, R.time, (long long)clog2(p));
  }
  collc_spec s = bspec(16, 4);
  memset(&R, 0, sizeof R);
  int ok = !choice_parse(s.coll, "hier", &c, why, sizeof why) &&
           !choice_resolve(&s, &c, why, sizeof why) && sim_choice(&s, &c, &M, &R);
  CHECK(ok && R.time > 1.99e-6 && R.time < 2.01e-6, "hier 4x4: predicted %g s, want 2 us",
        R.time);
  layout_free((collc_layout *)s.layout);
}

int main(void) {
  sweep();
  negative();
  simulate();
  return unit_summary("verify_barrier");
}
