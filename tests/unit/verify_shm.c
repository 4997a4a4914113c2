/* verify_shm.c - the node-aware (hier) plans through the verifier, and the
 * verifier's shared-memory checks proven able to fail.
 *
 * Truth: the verifier's token check (every output unit holds exactly what
 * the collective defines, in rank order for non-commutative operations, in
 * both of two back-to-back runs with different inputs) and its ordering
 * check (vector clocks). Sweep: every collective's hier plan (allreduce
 * node=rs, node=tree and node=<factor list> where the nodes fit it, several
 * net= schedules), p = 1..9, layouts of 1, 2,
 * 3, 4 consecutive ranks per node and irregular ones (round robin, uneven,
 * shuffled), counts 0, 1, 5, 37 (not divisible by p), in place and not,
 * commutative or not, every root (non-commutative: refused as unfit where
 * the layout or the net= schedule cannot keep rank order). Cyclic copy-in
 * (node=copyin, allreduce, reduce_scatter_block, reduce) with group sizes
 * 1..4 and the default on those layouts and on one node of 1..9 ranks
 * (sizes that divide the node and that do not), also count 203: it must be
 * refused for every non-commutative operation; its stage at p = 4 must
 * move the pieces as the paper's Figure 8, one AWAIT per step. Negative: in each program of a set of
 * plans (eleven), every single AWAIT is deleted in turn (one rank), and every
 * segment access is moved before the AWAITs that protect it:
 * each mutant must be rejected (missing wait, stale data, deadlock), never
 * pass. Also: a program using the segment without a layout is refused. */
#include <stdlib.h>
#include <string.h>
#include "algo/algo.h"
#include "check/verify.h"
#include "unit.h"
#include "mutate.h"

static long cases, unfit;

static const char *const layouts[] = {"1", "2", "3", "4", "rr2", "uneven", "shuffle", "4/s2"};

/* Layout named n for p ranks ("rr2": ranks alternate between two nodes;
 * "uneven": node sizes 1, 2, 3, ...; "shuffle": node = (r * 5 + 1) % 3;
 * "one": all on one node). */
static collc_layout *make_layout(const char *n, int p) {
  int id[64];
  if (!strcmp(n, "one")) {
    char k[16];
    snprintf(k, sizeof k, "%d", p);
    return layout_parse(p, k);
  }
  for (int r = 0, node = 0, left = 1; r < p; r++) {
    if (!strcmp(n, "rr2")) id[r] = r % 2;
    else if (!strcmp(n, "shuffle")) id[r] = (r * 5 + 1) % 3;
    else { /* uneven */
      id[r] = node;
      if (--left == 0) left = ++node + 1;
    }
  }
  if (strchr("1234", n[0])) { /* "4/s2": sockets only where every node has 4 ranks */
    collc_layout *L = layout_parse(p, n);
    return L ? L : layout_parse(p, "4");
  }
  return layout_new(p, id);
}

/* Verify coll with algo on layout L; EUNFIT is allowed only where the plan
 * says it cannot serve (non-commutative on non-consecutive nodes). */
static void run(int coll, const char *algo, const collc_layout *L, int64_t count, int in_place,
                int comm, int root) {
  collc_spec s = {coll, L->p, 0, count, 8, in_place, root, comm, L, NULL, NULL, 0, 0};
  int blocks = coll == COLLC_COLL_ALLTOALL || coll == COLLC_COLL_ALLGATHER;
  collc_choice c;
  verify_report R;
  char why[200] = "";
  if (blocks) s.unit_bytes = 8 * count;
  if (coll == COLLC_COLL_BCAST) s.in_place = 1;
  cases++;
  if (choice_parse(coll, algo, &c, why, sizeof why)) {
    CHECK(0, "%s: %s", algo, why);
    return;
  }
  if (choice_resolve(&s, &c, why, sizeof why)) {
    CHECK(coll_reduces(coll) && !comm && (!L->consecutive || strstr(why, "commutative")),
          "%s %s p=%d nodes=%s: %s",
          coll_name(coll), algo, L->p, L->desc, why);
    unfit++;
    return;
  }
  verify_choice(&s, &c, &R);
  CHECK(R.ok, "%s %s p=%d nodes=%s count=%lld%s%s root=%d: %s", coll_name(coll), algo, L->p,
        L->desc, (long long)count, in_place ? " in place" : "", comm ? "" : " noncomm", root,
        R.first_error);
}

/* Copy-in (node=copyin) of coll with group size g (0: the default) on L;
 * every non-commutative case must be refused, naming the reason. */
static void run_copyin(int coll, int g, const collc_layout *L, int64_t count, int ip, int comm,
                       int root) {
  char algo[64];
  snprintf(algo, sizeof algo, g ? "hier:node=copyin:g=%d" : "hier:node=copyin", g);
  if (comm) {
    run(coll, algo, L, count, ip, 1, root);
    return;
  }
  collc_spec s = {coll, L->p, 0, count, 8, ip, root, 0, L, NULL, NULL, 0, 0};
  collc_choice c;
  char why[200] = "";
  int refused = !choice_parse(coll, algo, &c, why, sizeof why) &&
                choice_resolve(&s, &c, why, sizeof why) == COLLC_EUNFIT;
  CHECK(refused && strstr(why, "commutative"), "%s %s non-commutative p=%d nodes=%s: %s",
        coll_name(coll), algo, L->p, L->desc, refused ? why : "not refused");
  cases++, unfit++;
}

/* Every copy-in plan on L: the three collectives, g = default, 1..4. */
static void sweep_copyin(const collc_layout *L, int64_t count, int ip, int comm) {
  for (int g = 0; g <= 4; g++) {
    run_copyin(COLLC_COLL_ALLREDUCE, g, L, count, ip, comm, 0);
    run_copyin(COLLC_COLL_REDUCE_SCATTER_BLOCK, g, L, count, ip, comm, 0);
    for (int root = g % 2; root < L->p; root += 2)
      run_copyin(COLLC_COLL_REDUCE, g, L, count, ip, comm, root);
  }
  if (L->nnodes > 1) run(COLLC_COLL_ALLREDUCE, "hier:node=copyin:g=2:net=cyclic", L, count, ip, 1, 0);
}

/* shm on one node of p ranks: every collective with its default and other
 * inner algorithms (factor lists where they fit), every root. */
static void sweep_shm(int p, const collc_layout *L, int64_t count, int ip, int comm) {
  static const char *const allreduce[] = {"shm", "shm:cyclic", "shm:tree", "shm:recexch:flat",
                                          "shm:direct=0", "shm:direct=16:cyclic"};
  char list[64];
  for (size_t a = 0; a < sizeof allreduce / sizeof *allreduce; a++)
    run(COLLC_COLL_ALLREDUCE, allreduce[a], L, count, ip, comm, 0);
  if (p % 2 == 0 && p > 2) {
    snprintf(list, sizeof list, "shm:recexch:-2,-%d,%d,2", p / 2, p / 2);
    run(COLLC_COLL_ALLREDUCE, list, L, count, ip, comm, 0);
    snprintf(list, sizeof list, "shm:cyclic:-%d,-2,2,%d", p / 2, p / 2);
    run(COLLC_COLL_ALLREDUCE, list, L, count, ip, comm, 0);
  }
  run(COLLC_COLL_REDUCE_SCATTER_BLOCK, "shm", L, count, ip, comm, 0);
  run(COLLC_COLL_REDUCE_SCATTER_BLOCK, "shm:cyclic", L, count, ip, comm, 0);
  run(COLLC_COLL_REDUCE_SCATTER_BLOCK, "shm:direct=0", L, count, ip, comm, 0);
  if (comm) {
    run(COLLC_COLL_ALLGATHER, "shm", L, count, ip, 1, 0);
    run(COLLC_COLL_ALLGATHER, "shm:cyclic", L, count, ip, 1, 0);
    run(COLLC_COLL_ALLTOALL, "shm", L, count, ip, 1, 0);
    run(COLLC_COLL_ALLTOALL, "shm:bruck:2", L, count, ip, 1, 0);
    run(COLLC_COLL_ALLTOALL, "shm:torus:d=2:pairwise", L, count, ip, 1, 0);
    run(COLLC_COLL_ALLGATHER, "shm:direct=0:cyclic", L, count, ip, 1, 0);
    run(COLLC_COLL_ALLTOALL, "shm:direct=0", L, count, ip, 1, 0);
    run(COLLC_COLL_ALLTOALL, "shm:direct=0:bruck:2", L, count, ip, 1, 0);
  }
  for (int root = 0; root < p; root++) {
    run(COLLC_COLL_REDUCE, root % 2 ? "shm:tree:3" : "shm:direct=0", L, count, ip, comm, root);
    if (comm && !ip)
      run(COLLC_COLL_BCAST, root % 2 ? "shm:direct=0:tree:2,3" : "shm", L, count, 1, 1, root);
  }
}

static void sweep(void) {
  static const char *const allreduce[] = {"hier", "hier:node=tree", "hier:net=recexch:flat",
                                          "hier:node=tree:net=cyclic", "hier:net=tree",
                                          "hier:node=sockets"};
  static const struct {
    const char *algo;
    int k; /* ranks per node it fits */
  } lists[] = {{"hier:node=-2,2", 2}, {"hier:node=-3,3", 3}, {"hier:node=-2,-2,2,2", 4},
               {"hier:node=-4,4", 4}, {"hier:node=-2,-2,4:net=tree", 4}};
  static const int64_t counts[] = {0, 1, 5, 37, 203};
  for (int p = 1; p <= 9; p++)
    for (size_t l = 0; l < sizeof layouts / sizeof *layouts; l++) {
      collc_layout *L = make_layout(layouts[l], p);
      for (size_t k = 0; k < 5; k++)
        for (int ip = 0; ip < 2; ip++)
          for (int comm = 0; comm < 2; comm++) {
            sweep_copyin(L, counts[k], ip, comm);
            if (k == 4) continue; /* (203: copy-in only) */
            for (size_t a = 0; a < sizeof allreduce / sizeof *allreduce; a++)
              run(COLLC_COLL_ALLREDUCE, allreduce[a], L, counts[k], ip, comm, 0);
            for (size_t a = 0; a < sizeof lists / sizeof *lists; a++) /* where they fit */
              if (L->min_size == L->max_size && L->min_size == lists[a].k)
                run(COLLC_COLL_ALLREDUCE, lists[a].algo, L, counts[k], ip, comm, 0);
            run(COLLC_COLL_REDUCE_SCATTER_BLOCK, "hier", L, counts[k], ip, comm, 0);
            if (comm) run(COLLC_COLL_ALLGATHER, "hier", L, counts[k], ip, 1, 0);
            if (comm) run(COLLC_COLL_ALLTOALL, "hier", L, counts[k], ip, 1, 0);
            for (int root = 0; root < p; root++) {
              run(COLLC_COLL_REDUCE, root % 2 ? "hier:net=tree" : "hier", L, counts[k], ip, comm,
                  root);
              if (comm && !ip) run(COLLC_COLL_BCAST, "hier", L, counts[k], 1, 1, root);
            }
          }
      layout_free(L);
      if (l > 0) continue;
      L = make_layout("one", p);
      for (size_t k = 0; k < 5; k++)
        for (int ip = 0; ip < 2; ip++)
          for (int comm = 0; comm < 2; comm++) {
            sweep_copyin(L, counts[k], ip, comm);
            if (k < 4) sweep_shm(p, L, counts[k], ip, comm);
          }
      layout_free(L);
    }
}

/* The p programs of coll/algo on L (mutant_count units: 100 makes every
 * block of a split vector nonempty), compiled; NULL on failure. */
static int64_t mutant_count = 100;

static int compile_mutants(int coll, const char *algo, const collc_layout *L, progs *G) {
  int blocks = coll == COLLC_COLL_ALLTOALL || coll == COLLC_COLL_ALLGATHER;
  collc_spec s = {coll, L->p, 0, mutant_count, blocks ? 8 * mutant_count : 8,
                  coll == COLLC_COLL_BCAST, 1, 1, L, NULL, NULL, 0, 0};
  return compile_all(&s, algo, G);
}

/* Rank r's program with instruction a deleted (or, move >= 0: instruction
 * a moved to position move) must be rejected. */
static void mutant(int coll, const char *algo, const collc_layout *L, int r, int a, int move) {
  static progs G; /* (large: not on the stack) */
  collc_prog **P = G.P;
  verify_report R;
  if (compile_mutants(coll, algo, L, &G)) {
    free_all(&G);
    return;
  }
  collc_instr I = P[r]->ins[a];
  delete_ins(P[r], a);
  if (move >= 0) insert_ins(P[r], move, I);
  verify_programs(&G.s, P, &R);
  CHECK(!R.ok, "%s %s nodes=%s: rank %d with %s %s (addr %d, n=%lld) %s passed",
        coll_name(coll), algo, L->desc, r, ops_name(I.op), move >= 0 ? "moved up" : "deleted", a,
        (long long)I.n, move >= 0 ? "early" : "");
  cases++;
  free_all(&G);
}

/* Every AWAIT of every rank deleted; every segment access (and GET) moved
 * to just before the AWAITs that precede it. (A deleted SIGNAL is no error: the
 * counters only grow, so a waiter takes the next release, later but after
 * the same writes; the verifier then proves the result right.) */
static void mutants(int coll, const char *algo, const char *nodes, int p) {
  collc_layout *L = make_layout(nodes, p);
  static progs G;
  collc_prog **P = G.P;
  int ok = compile_mutants(coll, algo, L, &G) == 0;
  for (int r = 0; ok && r < p; r++)
    for (int a = 0; a < P[r]->nins; a++) {
      const collc_instr *I = &P[r]->ins[a];
      if (I->op == COLLC_OP_AWAIT) mutant(coll, algo, L, r, a, -1);
      int writes_shm = (ops_flags(I->op) & OPF_WRITES) && I->dst.buf == BUF_SHM;
      int reads_shm = ((ops_flags(I->op) & OPF_READS) && I->src.buf == BUF_SHM) ||
                      I->op == COLLC_OP_GET; /* (its slot, and the owner's buffer) */
      int first = a;
      while (first > 0 && P[r]->ins[first - 1].op == COLLC_OP_AWAIT) first--;
      if ((writes_shm || reads_shm) && first < a) mutant(coll, algo, L, r, a, first);
    }
  free_all(&G);
  layout_free(L);
}

/* Every GET of every rank replaced by a COPY of its slot: when the owner's
 * buffer is read in place the slot stays empty, so each must be rejected. */
static void slot_copies(int coll, const char *algo, int p) {
  collc_layout *L = make_layout("one", p);
  static progs G;
  collc_prog **P = G.P;
  int ok = compile_mutants(coll, algo, L, &G) == 0;
  for (int r = 0; ok && r < p; r++)
    for (int a = 0; a < P[r]->nins; a++) {
      collc_instr I = P[r]->ins[a];
      if (I.op != COLLC_OP_GET) continue;
      verify_report R;
      P[r]->ins[a].op = COLLC_OP_COPY, P[r]->ins[a].src = I.src2;
      verify_programs(&G.s, P, &R);
      CHECK(!R.ok, "%s %s: rank %d's GET at %d as a slot COPY passed", coll_name(coll), algo, r, a);
      P[r]->ins[a] = I;
      cases++;
    }
  free_all(&G);
  layout_free(L);
}

/* The paper's Figure 8 (four tasks): at step a piece j gets the data of
 * task fig8[a][j]. Every rank's stage (its COPYs and REDUCEs from its own
 * input into the segment, in program order) must write exactly those
 * pieces (100 units: pieces of 25), a copy first, with one AWAIT between
 * steps. */
static void figure8(void) {
  static const int fig8[4][4] = {{0, 1, 2, 3}, {3, 0, 1, 2}, {2, 3, 0, 1}, {1, 2, 3, 0}};
  collc_layout *L = make_layout("one", 4);
  static progs G;
  collc_prog **P = G.P;
  int ok = compile_mutants(COLLC_COLL_ALLREDUCE, "hier:node=copyin", L, &G) == 0;
  for (int r = 0; ok && r < 4; r++) {
    int a = 0, awaits = 0;
    for (int i = 0; i < P[r]->nins; i++) {
      const collc_instr *I = &P[r]->ins[i];
      if (I->op == COLLC_OP_AWAIT && a > 0 && a < 4) awaits++;
      if ((I->op != COLLC_OP_COPY && I->op != COLLC_OP_REDUCE) || I->src.buf != BUF_SEND ||
          I->dst.buf != BUF_SHM)
        continue;
      int j = (int)(I->dst.off / 25);
      CHECK(a < 4 && fig8[a][j] == r && I->src.off == I->dst.off && I->dst.off % 25 == 0 &&
                I->op == (a ? COLLC_OP_REDUCE : COLLC_OP_COPY),
            "figure 8: rank %d step %d writes SHM+%lld from SEND+%lld (%s)", r, a,
            (long long)I->dst.off, (long long)I->src.off, ops_name(I->op));
      a++;
    }
    CHECK(a == 4 && awaits == 3, "figure 8: rank %d: %d steps, %d AWAITs between them", r, a,
          awaits);
    cases++;
  }
  free_all(&G);
  CHECK(ok, "figure 8: hier:node=copyin does not compile at p = 4");
  layout_free(L);
}

static void negatives(void) {
  slot_copies(COLLC_COLL_ALLREDUCE, "shm:direct=0", 4);
  slot_copies(COLLC_COLL_ALLGATHER, "shm:direct=0:cyclic", 5);
  mutants(COLLC_COLL_ALLREDUCE, "hier", "4", 8);
  mutants(COLLC_COLL_ALLREDUCE, "hier:node=tree", "3", 7);
  mutants(COLLC_COLL_ALLREDUCE, "hier", "uneven", 6);
  mutants(COLLC_COLL_ALLREDUCE, "hier:node=-2,-2,2,2", "4", 8);
  mutants(COLLC_COLL_REDUCE, "hier", "3", 6);
  mutants(COLLC_COLL_BCAST, "hier", "rr2", 6);
  mutant_count = 30000; /* 240 KB: the bcast pipeline's 3 chunks */
  mutants(COLLC_COLL_BCAST, "hier", "4", 4);
  mutant_count = 100;
  mutants(COLLC_COLL_ALLGATHER, "hier", "3", 6);
  mutants(COLLC_COLL_ALLGATHER, "hier", "4", 4);
  mutants(COLLC_COLL_ALLTOALL, "hier", "shuffle", 7);
  mutants(COLLC_COLL_REDUCE_SCATTER_BLOCK, "hier", "2", 6);
  /* cyclic copy-in: one group on one node; groups that do not divide the node */
  mutants(COLLC_COLL_ALLREDUCE, "hier:node=copyin", "one", 5);
  mutants(COLLC_COLL_ALLREDUCE, "hier:node=copyin:g=3", "one", 7);
  mutants(COLLC_COLL_ALLREDUCE, "hier:node=copyin:g=2", "3", 7);
  mutants(COLLC_COLL_REDUCE_SCATTER_BLOCK, "hier:node=copyin:g=3", "4", 8);
  mutants(COLLC_COLL_REDUCE, "hier:node=copyin:g=2", "uneven", 6);
  mutants(COLLC_COLL_ALLREDUCE, "shm", "one", 5);
  mutants(COLLC_COLL_ALLREDUCE, "shm:cyclic:-3,-2,2,3", "one", 6);
  mutants(COLLC_COLL_REDUCE_SCATTER_BLOCK, "shm:cyclic", "one", 4);
  mutants(COLLC_COLL_ALLGATHER, "shm", "one", 5);
  mutants(COLLC_COLL_ALLTOALL, "shm:bruck:2", "one", 5);
  mutants(COLLC_COLL_REDUCE, "shm:tree:3", "one", 7);
  mutants(COLLC_COLL_BCAST, "shm", "one", 6);
  /* single copy: every GET, and the owners' waits for their readers */
  mutants(COLLC_COLL_ALLREDUCE, "shm:direct=0", "one", 5);
  mutants(COLLC_COLL_ALLREDUCE, "shm:direct=0:cyclic:-2,-3,3,2", "one", 6);
  mutants(COLLC_COLL_ALLTOALL, "shm:direct=0", "one", 4);
  mutants(COLLC_COLL_BCAST, "shm:direct=0:tree:3", "one", 7);
  mutants(COLLC_COLL_REDUCE_SCATTER_BLOCK, "shm:direct=0", "one", 4);
  /* The segment without a layout is refused by the builder. */
  collc_spec s = {COLLC_COLL_ALLREDUCE, 2, 0, 4, 8, 0, 0, 1, NULL, NULL, NULL, 0, 0};
  collc_prog *P = prog_new(&s);
  prog_need_shm(P, 4);
  CHECK(prog_finalize(P) == COLLC_EINVAL, "segment without layout accepted");
  prog_free(P);
}

int main(void) {
  sweep();
  figure8();
  negatives();
  printf("verify_shm: %ld cases (%ld refused as unfit)\n", cases, unfit);
  return unit_summary("verify_shm");
}
