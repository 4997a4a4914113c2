/* simulate.c - the cost simulator against closed forms worked out by hand.
 *
 * Truth: with latency a and bandwidth b per message, and a node link of
 * bandwidth b that each message takes whole (FIFO), a schedule whose steps
 * are symmetric takes exactly sum over steps of (a + bytes of the step's
 * messages / b): checked for recursive exchange allreduce (the cost in its
 * header) and for link contention between two nodes. Also: a deadlock and
 * a size mismatch are reported, not timed; shared-memory plans (SIGNAL,
 * AWAIT, segment copies) run to the end; parameters parse and round-trip;
 * the candidate chooser picks the few-message plan when latency dominates
 * and the few-byte plan when bandwidth does; every collective's defaults
 * and candidates name its own algorithms. */
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>
#include "algo/algo.h"
#include "check/simulate.h"
#include "unit.h"

/* Relative closeness (the simulator adds times in another order). */
static int near(double x, double want) { return fabs(x - want) <= 1e-9 * fabs(want) + 1e-15; }

/* Simulate text for (coll, p, count doubles, layout k ranks per node or 0). */
static int sim(int coll, const char *text, int p, int64_t count, int k, const sim_params *M,
               sim_report *R) {
  collc_spec s = {.coll = coll, .p = p, .count = count, .unit_bytes = 8, .commutative = 1};
  collc_choice c;
  char why[200];
  if (coll == COLLC_COLL_ALLTOALL || coll == COLLC_COLL_ALLGATHER) s.unit_bytes = 8 * count;
  s.layout = k ? layout_regular(p, k) : NULL;
  memset(R, 0, sizeof *R);
  int ok = !choice_parse(coll, text, &c, why, sizeof why) && !choice_resolve(&s, &c, why, sizeof why);
  CHECK(ok, "%s p=%d: %s", text, p, why);
  ok = ok && sim_choice(&s, &c, M, R);
  layout_free((collc_layout *)s.layout);
  return ok;
}

/* a, b for every level, links of bandwidth b, nothing else costs. */
static sim_params alpha_beta(double a, double b) {
  sim_params M;
  char why[200];
  sim_params_parse("paper", &M, why, sizeof why);
  for (int l = 0; l < SIM_LEVELS; l++) M.lat[l] = a, M.bw[l] = b;
  M.nic_bw = b, M.o = 0, M.copy_bw = M.reduce_bw = 0, M.eager = 1e18;
  return M;
}

/* recexch allreduce, p = 8, n bytes: -4,-2,2,4 sends 3 n/4, n/8, n/8, 3 n/4
 * per rank in four steps, each step's messages one after another on the
 * rank's link: 4 a + 1.75 n / b. -2,-2,-2,2,2,2: 6 a + 1.75 n / b. */
static void test_recexch(void) {
  sim_params M = alpha_beta(2e-6, 1e9);
  sim_report R;
  int64_t count = 8192, n = 8 * count;
  if (sim(COLLC_COLL_ALLREDUCE, "recexch:-4,-2,2,4", 8, count, 0, &M, &R))
    CHECK(near(R.time, 4 * 2e-6 + 1.75 * (double)n / 1e9), "-4,-2,2,4: %g s", R.time);
  CHECK(R.messages == 8 * 8 && R.bytes == 8 * (int64_t)(1.75 * (double)n),
        "messages %lld bytes %lld", (long long)R.messages, (long long)R.bytes);
  if (sim(COLLC_COLL_ALLREDUCE, "recexch:-2,-2,-2,2,2,2", 8, count, 0, &M, &R))
    CHECK(near(R.time, 6 * 2e-6 + 1.75 * (double)n / 1e9), "-2,-2,-2,2,2,2: %g s", R.time);
  M.eager = 0; /* rendezvous: every message waits for its receiver; same times here */
  if (sim(COLLC_COLL_ALLREDUCE, "recexch:-4,-2,2,4", 8, count, 0, &M, &R))
    CHECK(near(R.time, 4 * 2e-6 + 1.75 * (double)n / 1e9), "rendezvous: %g s", R.time);
}

/* All-to-all, 2 nodes of 2 ranks, B bytes per block, no latency, fast
 * single messages (1e15 B/s) but node links of b: each node sends 4
 * blocks to the other through one link: 4 B / b. No layout: each rank is
 * its own node, 3 blocks: 3 B / b. */
static void test_contention(void) {
  sim_params M = alpha_beta(0, 1e15);
  sim_report R;
  int64_t count = 1000, B = 8 * count;
  M.nic_bw = 1e9;
  if (sim(COLLC_COLL_ALLTOALL, "linear", 4, count, 2, &M, &R))
    CHECK(near(R.time, 4.0 * (double)B / 1e9), "2 nodes: %g s, want %g", R.time, 4.0 * B / 1e9);
  CHECK(R.net_messages == 8 && R.messages == 12, "messages %lld (between nodes %lld)",
        (long long)R.messages, (long long)R.net_messages);
  if (sim(COLLC_COLL_ALLTOALL, "linear", 4, count, 0, &M, &R))
    CHECK(near(R.time, 3.0 * (double)B / 1e9), "own nodes: %g s", R.time);
  M.nic_bw = 0; /* unshared: one message time */
  if (sim(COLLC_COLL_ALLTOALL, "pairwise", 4, count, 0, &M, &R))
    CHECK(near(R.time, 3 * (double)B / 1e15), "pairwise, unshared: %g s", R.time);
}

/* torus:4x2 all-to-all, p = 8, own nodes, unshared links: a round over
 * the dimension of 4 sends 3 messages of 2 blocks, the one over 2 one of 4.
 * Posted at once (:linear, or the MPI library's group call :native
 * modelled as linear): 2a + 6B/b. One after the other (:pairwise, or
 * :native modelled as pairwise): 4a + 10B/b. */
static void test_torus(void) {
  sim_params M = alpha_beta(1e-6, 1e9);
  sim_report R;
  int64_t count = 1000, B = 8 * count;
  M.nic_bw = 0;
  const char *t[] = {"torus:4x2:linear", "torus:4x2:native", "torus:4x2:pairwise"};
  double concurrent = 2e-6 + 6.0 * (double)B / 1e9, serial = 4e-6 + 10.0 * (double)B / 1e9;
  for (int i = 0; i < 3; i++)
    if (sim(COLLC_COLL_ALLTOALL, t[i], 8, count, 0, &M, &R))
      CHECK(near(R.time, i < 2 ? concurrent : serial), "%s: %g s", t[i], R.time);
    else
      CHECK(0, "%s: %s", t[i], R.error);
  M.group_comp = COMP_PAIRWISE;
  if (sim(COLLC_COLL_ALLTOALL, "torus:4x2:native", 8, count, 0, &M, &R))
    CHECK(near(R.time, serial), "native as pairwise: %g s", R.time);
}

/* Rank r's half of a two-rank exchange: send `units`, receive 1 unit;
 * with wait_between, the send completes before the receive is posted. */
static collc_prog *half(collc_spec s, int r, int64_t units, int wait_between) {
  s.rank = r;
  collc_prog *P = prog_new(&s);
  prog_send(P, 1 - r, opnd(BUF_SEND, 1 - r, prog_shape_contig(P, units)));
  if (wait_between) prog_wait(P);
  prog_recv(P, 1 - r, opnd(BUF_RECV, 1 - r, prog_shape_contig(P, 1)));
  prog_wait(P);
  return P;
}

/* Both ranks complete a send before they receive: under rendezvous a
 * deadlock, reported; eager, each send leaves at once and the run takes
 * one message time. Rank 1 sending 2 units where rank 0 receives 1: a
 * size error. */
static void test_broken(void) {
  collc_spec s = {.coll = COLLC_COLL_ALLTOALL, .p = 2, .count = 1, .unit_bytes = 8};
  sim_params M = alpha_beta(1e-6, 1e9);
  sim_report R;
  collc_prog *P[2] = {half(s, 0, 1, 1), half(s, 1, 1, 1)};
  M.eager = 0;
  CHECK(!sim_programs(&s, P, &M, &R) && strstr(R.error, "deadlock"), "deadlock: '%s'", R.error);
  M.eager = 8; /* a message of exactly `eager` bytes waits for its receiver */
  CHECK(!sim_programs(&s, P, &M, &R) && strstr(R.error, "deadlock"), "8 B, eager=8: '%s'", R.error);
  M.eager = 9;
  CHECK(sim_programs(&s, P, &M, &R), "8 B, eager=9: '%s'", R.error);
  M.eager = 1e18;
  CHECK(sim_programs(&s, P, &M, &R) && near(R.time, 1e-6 + 8 / 1e9), "eager: %g '%s'", R.time,
        R.error);
  prog_free(P[0]), prog_free(P[1]);
  P[0] = half(s, 0, 1, 0), P[1] = half(s, 1, 2, 0);
  CHECK(!sim_programs(&s, P, &M, &R) && strstr(R.error, "bytes"), "size mismatch: '%s'",
        R.error);
  prog_free(P[0]), prog_free(P[1]);
}

/* Shared-memory flags: rank 0 copies B bytes (at copy bandwidth c) and
 * signals step 1; rank 1 awaits it, then copies B bytes too: rank 1
 * finishes at 2 B/c + flag latency; an AWAIT of step 0 (the previous
 * run) waits for nothing. */
static void test_flags(void) {
  collc_spec s = {.coll = COLLC_COLL_ALLTOALL, .p = 2, .count = 1000, .unit_bytes = 8000};
  sim_params M = alpha_beta(1e-6, 1e9);
  sim_report R;
  collc_prog *P[2];
  M.copy_bw = 4e9, M.flag_lat = 3e-7;
  for (int r = 0; r < 2; r++) {
    s.rank = r;
    P[r] = prog_new(&s);
    int one = prog_shape_contig(P[r], 1);
    if (r == 1) prog_await(P[r], 0, 0), prog_await(P[r], 0, 1);
    prog_copy(P[r], opnd(BUF_SEND, r, one), opnd(BUF_RECV, r, one));
    if (r == 0) prog_signal(P[r], 1);
  }
  double want = 2 * 8000 / 4e9 + 3e-7;
  CHECK(sim_programs(&s, P, &M, &R) && near(R.time, want) && R.slowest == 1,
        "flags: %g s (rank %d), want %g: '%s'", R.time, R.slowest, want, R.error);
  prog_free(P[0]), prog_free(P[1]);
}

/* Node-aware plans (segment copies, SIGNAL/AWAIT, single copy) finish, and
 * cost more than nothing. */
static void test_shm(void) {
  sim_params M;
  sim_report R;
  char why[200];
  sim_params_parse("local", &M, why, sizeof why);
  const char *t[] = {"shm", "hier", "shm:direct=0", "hier:node=tree"};
  for (int i = 0; i < 4; i++) {
    int p = i < 3 ? 6 : 8, k = i == 1 || i == 3 ? 4 : p;
    if (sim(COLLC_COLL_ALLREDUCE, t[i], p, 1000, k, &M, &R))
      CHECK(R.time > 0, "%s: time %g", t[i], R.time);
    else
      CHECK(0, "%s: %s", t[i], R.error);
  }
}

/* Parameters: presets, overrides, round trip, errors, a file. */
static void test_params(void) {
  sim_params M, N;
  char why[200] = "", text[400];
  CHECK(!sim_params_parse("paper lat=1e-6/2e-6/3e-6, bw=5e9 group=pairwise", &M, why, sizeof why),
        "%s", why);
  CHECK(M.lat[2] == 3e-6 && M.bw[0] == 5e9 && M.bw[2] == 5e9 && M.group_comp == COMP_PAIRWISE &&
            M.nic_bw == 12.5e9, "overrides not applied");
  sim_params_format(&M, text, sizeof text);
  char again[400];
  CHECK(!sim_params_parse(text, &N, why, sizeof why), "round trip of '%s': %s", text, why);
  sim_params_format(&N, again, sizeof again);
  CHECK(!strcmp(text, again), "round trip: '%s' became '%s'", text, again);
  CHECK(sim_params_parse("lat=1/2", &M, why, sizeof why) == COLLC_EINVAL, "two levels accepted");
  CHECK(sim_params_parse("paper nic=-1", &M, why, sizeof why) == COLLC_EINVAL, "negative");
  CHECK(sim_params_parse("nosuchpreset", &M, why, sizeof why) == COLLC_EINVAL, "bad preset");
  CHECK(sim_params_parse("group=native", &M, why, sizeof why) == COLLC_EINVAL, "group=native");
  CHECK(sim_params_parse("lat=nan", &M, why, sizeof why) == COLLC_EINVAL, "lat=nan accepted");
  CHECK(sim_params_parse("bw=1/2/inf", &M, why, sizeof why) == COLLC_EINVAL, "bw=inf accepted");
  char name[] = "/tmp/collc-sim-XXXXXX";
  int fd = mkstemp(name);
  FILE *f = fd >= 0 ? fdopen(fd, "w") : NULL;
  if (CHECK(f != NULL, "temporary file")) {
    fputs("# calibrated\nlocal\nnic=1e9  # link\n", f);
    fclose(f);
    CHECK(!sim_params_parse(name, &M, why, sizeof why) && M.nic_bw == 1e9, "file: %s", why);
    remove(name);
  }
  /* a file named like a preset does not shadow it; a directory is no file */
  char dir[] = "/tmp/collc-simdir-XXXXXX", cwd[4096];
  if (CHECK(mkdtemp(dir) && getcwd(cwd, sizeof cwd) && !chdir(dir), "temporary directory")) {
    FILE *g = fopen("local", "w");
    if (g) fputs("nic=5\n", g), fclose(g);
    CHECK(!sim_params_parse("local", &M, why, sizeof why) && M.nic_bw == 0, "file 'local' shadows");
    mkdir("d", 0700);
    CHECK(sim_params_parse("d", &M, why, sizeof why) == COLLC_EINVAL, "a directory read as text");
    remove("local"), rmdir("d");
    CHECK(!chdir(cwd) && !rmdir(dir), "clean up %s", dir);
  }
}

/* More than SIM_MAX_OPS operations are refused, not attempted: linear
 * all-to-all at p = 2048 posts 2 * 2047 per rank (8.4 M). */
static void test_too_large(void) {
  sim_params M = alpha_beta(1e-6, 1e9);
  sim_report R;
  int ok = sim(COLLC_COLL_ALLTOALL, "linear", 2048, 1, 32, &M, &R);
  CHECK(!ok && strstr(R.error, "too large"), "p = 2048 linear: ok %d '%s'", ok, R.error);
}

/* Latency-bound (tiny blocks, huge bandwidth): Bruck's log p messages beat
 * the p - 1 of linear; bandwidth-bound (big blocks, no latency): linear's
 * direct blocks beat Bruck's relayed ones. */
static void test_best(void) {
  const char *cand[] = {"native", "linear", "bruck", "nosuch", NULL};
  collc_spec s = {.coll = COLLC_COLL_ALLTOALL, .p = 64, .count = 1, .unit_bytes = 8};
  sim_params M = alpha_beta(1e-6, 1e12);
  double t = 0;
  M.o = 1e-7;
  CHECK(sim_best(&s, cand, &M, &t) == 2 && t > 0, "latency-bound: not bruck");
  M = alpha_beta(0, 1e9), s.count = 100000, s.unit_bytes = 800000;
  CHECK(sim_best(&s, cand, &M, &t) == 1, "bandwidth-bound: not linear");
  const char *none[] = {"native", "torus:5x5", NULL};
  CHECK(sim_best(&s, none, &M, &t) == -1, "no fitting candidate: not -1");
}

/* The native library's model follows MPICH's documented thresholds
 * (all-to-all 256 B and 32 KB per block, allreduce 2 KB per vector). */
static void test_native_model(void) {
  char buf[256];
  collc_spec s = {.coll = COLLC_COLL_ALLTOALL, .p = 1152, .count = 64, .unit_bytes = 256};
  CHECK(!strcmp(sim_native_model(&s, buf, sizeof buf), "bruck"), "256 B blocks");
  s.unit_bytes = 257;
  CHECK(!strcmp(sim_native_model(&s, buf, sizeof buf), "linear"), "257 B blocks");
  s.unit_bytes = 32769;
  CHECK(!strcmp(sim_native_model(&s, buf, sizeof buf), "pairwise"), "32769 B blocks");
  s.p = 4, s.unit_bytes = 4;
  CHECK(!strcmp(sim_native_model(&s, buf, sizeof buf), "linear"), "p = 4: Bruck from p = 8 only");
  s = (collc_spec){.coll = COLLC_COLL_ALLREDUCE, .p = 12, .count = 256, .unit_bytes = 8};
  CHECK(!strcmp(sim_native_model(&s, buf, sizeof buf), "recexch:*2,*2,*3"), "2 KB: '%s'", buf);
  s.count = 257;
  CHECK(!strcmp(sim_native_model(&s, buf, sizeof buf), "recexch"), "2056 B");
}

/* Every collective's row names algorithms of that collective: its shm and
 * hier defaults, its simulator candidates and native model; an unknown
 * collective has none and parses nothing. */
static void test_rows(void) {
  char buf[256], why[200];
  collc_choice c;
  for (int k = 0; k < COLLC_COLL_COUNT; k++) {
    const coll_desc *d = coll_desc_of(k);
    collc_spec s = {.coll = k, .p = 8, .count = 4, .unit_bytes = 8};
    const char *fixed[] = {d->shm_inner, d->hier_net, sim_native_model(&s, buf, sizeof buf)};
    for (int i = 0; i < 3; i++)
      CHECK(!fixed[i] || !choice_parse(k, fixed[i], &c, why, sizeof why), "%s: %s", d->name, why);
    for (int i = 0; d->sim_candidates[i]; i++)
      CHECK(!choice_parse(k, d->sim_candidates[i], &c, why, sizeof why), "%s: %s", d->name, why);
  }
  collc_spec s = {.coll = COLLC_COLL_COUNT, .p = 8, .count = 4, .unit_bytes = 8};
  CHECK(!sim_native_model(&s, buf, sizeof buf), "unknown collective: a native model");
  CHECK(choice_parse(COLLC_COLL_COUNT, "native", &c, why, sizeof why) == COLLC_EINVAL,
        "unknown collective: parses");
}

/* Cyclic copy-in (hier:node=copyin) on one node of 4, n bytes, copies at
 * c, reductions at r, flags f, nothing else: every rank copies its piece
 * (n/4c), then three steps each a flag after its neighbour and a
 * reduction of n/4 (3 (f + n/4r)), a flag from the final writers and the
 * whole sum copied out (f + n/c). Between two nodes of 4 it sends what
 * node=rs sends (the same lanes); reduce_scatter_block and reduce run. */
static void test_copyin(void) {
  sim_params M = alpha_beta(1e-6, 1e9);
  sim_report R, Rs;
  double c = 4e9, r = 2e9, f = 3e-7, n = 8 * 1024;
  M.copy_bw = c, M.reduce_bw = r, M.flag_lat = f;
  double want = n / 4 / c + 3 * (f + n / 4 / r) + f + n / c;
  if (sim(COLLC_COLL_ALLREDUCE, "hier:node=copyin", 4, 1024, 4, &M, &R))
    CHECK(near(R.time, want) && R.messages == 0, "copyin one node: %g s, want %g (%lld messages)",
          R.time, want, (long long)R.messages);
  if (sim(COLLC_COLL_ALLREDUCE, "hier:node=copyin:g=3", 8, 1000, 4, &M, &R) &&
      sim(COLLC_COLL_ALLREDUCE, "hier", 8, 1000, 4, &M, &Rs))
    CHECK(R.time > 0 && R.net_messages == Rs.net_messages && R.net_bytes == Rs.net_bytes,
          "copyin 2x4: %lld messages, %lld bytes between nodes, node=rs %lld, %lld",
          (long long)R.net_messages, (long long)R.net_bytes, (long long)Rs.net_messages,
          (long long)Rs.net_bytes);
  const int colls[2] = {COLLC_COLL_REDUCE_SCATTER_BLOCK, COLLC_COLL_REDUCE};
  for (int i = 0; i < 2; i++)
    if (sim(colls[i], "hier:node=copyin:g=2", 8, 100, 4, &M, &R))
      CHECK(R.time > 0, "%s copyin: %g s", coll_name(colls[i]), R.time);
}

int main(void) {
  test_recexch();
  test_copyin();
  test_contention();
  test_torus();
  test_broken();
  test_flags();
  test_shm();
  test_params();
  test_too_large();
  test_native_model();
  test_best();
  test_rows();
  return unit_summary("simulate");
}
