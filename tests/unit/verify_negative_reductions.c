/* verify_negative_reductions.c - the verifier's reduction checks can fail.
 *
 * Truth: programs compiled by the reduction generators (recexch, tree),
 * which verify_programs() must accept unchanged (the control of every
 * case), then one hand mutation whose effect on the contributions is
 * worked out in the case's comment. Each case states what the verifier must
 * answer: reject (with the expected kind of first error), or - for a
 * change of combination order under a commutative operation - accept,
 * which shows that the commutative check compares the multiset of
 * contributions while the non-commutative one compares their order.
 * Every mutated program must still pass prog_finalize, so only the
 * verifier can catch the mutation. */
#include <stdlib.h>
#include <string.h>
#include "algo/algo.h"
#include "check/verify.h"
#include "unit.h"
#include "mutate.h"


/* A spec: collective, p, count (8-byte elements), commutative, root. */
static collc_spec mkspec(int coll, int p, int64_t count, int comm, int root) {
  collc_spec s;
  memset(&s, 0, sizeof s);
  s.coll = coll, s.p = p, s.count = count, s.unit_bytes = 8, s.commutative = comm;
  s.root = root, s.in_place = coll == COLLC_COLL_BCAST;
  return s;
}

/* The unmutated programs must pass. */
static int control(const char *what, progs *G) {
  verify_report R;
  return CHECK(verify_programs(&G->s, G->P, &R), "%s: the unmutated programs fail: %s", what,
               R.first_error);
}

/* The mutated programs: rank r's program must still be well-formed; then
 * the verifier must accept them (want_ok) or reject them with `why` (if
 * not NULL) in the first error. */
static void expect(const char *what, progs *G, int r, int want_ok, const char *why) {
  verify_report R;
  CHECK(prog_finalize(G->P[r]) == 0, "%s: mutation not well-formed: %s", what, G->P[r]->errmsg);
  int ok = verify_programs(&G->s, G->P, &R);
  if (want_ok) {
    CHECK(ok, "%s: rejected, but it must pass: %s", what, R.first_error);
    return;
  }
  CHECK(!ok, "%s: the verifier accepts the broken schedule", what);
  if (!ok) printf("caught %s: %s\n", what, R.first_error);
  if (!ok && why)
    CHECK(strstr(R.first_error, why) != NULL, "%s: first error '%s', want '%s'", what,
          R.first_error, why);
}

/* The generators whose rank-1 (or rank-0) folds the cases mutate:
 * recexch:-4,4 allreduce p=4, 32 elements (4 blocks of 8): rank 1 gets
 * block 1's pieces from ranks 0, 2, 3 and folds
 * COMBINE(p2, p3) -> d; REDUCE p1 -> d; REDUCE p0 -> d;
 * tree:4 reduce p=4 root 0, 3 elements: rank 0 folds its children 1..3
 * the same way (its own input is p0); recexch:-4 reduce_scatter_block p=4,
 * 2 elements per rank: rank 1's fold of block 1. */
typedef struct {
  const char *name;
  int coll, p, rank;
  int64_t count;
  const char *algo;
} gen;

static const gen gens[] = {
    {"recexch allreduce", COLLC_COLL_ALLREDUCE, 4, 1, 32, "recexch:-4,4"},
    {"tree reduce", COLLC_COLL_REDUCE, 4, 0, 3, "tree:4"},
    {"recexch reduce_scatter_block", COLLC_COLL_REDUCE_SCATTER_BLOCK, 4, 1, 2, "recexch:-4"},
};
#define NGENS ((int)(sizeof gens / sizeof gens[0]))

/* Mutations of one program's fold; each returns 0, or -1 if P lacks the
 * instructions it needs (checked as a failure). */

/* REDUCE 0 and REDUCE 1 exchange their sources: d = p0 op (p1 op (p2 op
 * p3)) becomes p1 op (p0 op (p2 op p3)) - same leaves, wrong order. */
static int mut_swap_reduces(collc_prog *P) {
  int a = find(P, COLLC_OP_REDUCE, 0, 0), b = find(P, COLLC_OP_REDUCE, 1, 0);
  if (a < 0 || b < 0) return -1;
  collc_opnd t = P->ins[a].src;
  P->ins[a].src = P->ins[b].src, P->ins[b].src = t;
  return 0;
}

/* COMBINE(p2, p3) becomes COMBINE(p3, p2): same leaves, wrong order. */
static int mut_reverse_combine(collc_prog *P) {
  int a = find(P, COLLC_OP_COMBINE, 0, 0);
  if (a < 0) return -1;
  collc_opnd t = P->ins[a].src;
  P->ins[a].src = P->ins[a].src2, P->ins[a].src2 = t;
  return 0;
}

/* The first REDUCE is dropped: p1's contribution is missing. */
static int mut_drop_reduce(collc_prog *P) {
  int a = find(P, COLLC_OP_REDUCE, 0, 0);
  if (a < 0) return -1;
  delete_ins(P, a);
  return 0;
}

/* The last REDUCE runs twice: p0 is counted twice. */
static int mut_dup_reduce(collc_prog *P) {
  int a = find(P, COLLC_OP_REDUCE, 1, 0);
  if (a < 0) return -1;
  insert_ins(P, a + 1, P->ins[a]);
  return 0;
}

/* The first REDUCE reads the COMBINE's first source: p2 twice, p1 never -
 * as many leaves as before, but other ones. */
static int mut_wrong_piece(collc_prog *P) {
  int a = find(P, COLLC_OP_REDUCE, 0, 0), c = find(P, COLLC_OP_COMBINE, 0, 0);
  if (a < 0 || c < 0) return -1;
  P->ins[a].src = P->ins[c].src;
  return 0;
}

/* The COMBINE writes over its second source (dst = src2). */
static int mut_combine_overlap(collc_prog *P) {
  int a = find(P, COLLC_OP_COMBINE, 0, 0);
  if (a < 0) return -1;
  P->ins[a].dst = P->ins[a].src2;
  return 0;
}

typedef struct {
  const char *name;
  int (*apply)(collc_prog *P);
  int fails_comm;       /* also rejected for a commutative operation */
  const char *why_comm; /* expected in the first error, commutative */
  const char *why_nc;   /* expected in the first error, non-commutative */
} mutation;

static const mutation muts[] = {
    {"REDUCE sources swapped", mut_swap_reduces, 0, NULL, "order"},
    {"COMBINE operands reversed", mut_reverse_combine, 0, NULL, "order"},
    {"REDUCE dropped (missing contribution)", mut_drop_reduce, 1, "3 contributions",
     "3 contributions"},
    {"REDUCE duplicated (double-counted contribution)", mut_dup_reduce, 1, "5 contributions",
     "5 contributions"},
    {"REDUCE of another piece (same count, other leaves)", mut_wrong_piece, 1, "RECV[", "order"},
    {"COMBINE dst overlapping its source", mut_combine_overlap, 1, "writes", "writes"},
};
#define NMUTS ((int)(sizeof muts / sizeof muts[0]))

/* Mutation m on generator g, commutative or not: control, mutate the
 * folding rank's program, expect the verdict the mutation table states. */
static void case_fold(const gen *g, const mutation *m, int comm) {
  progs G;
  char what[200];
  snprintf(what, sizeof what, "%s %s p=%d, %s, %s", g->name, g->algo, g->p,
           comm ? "commutative" : "non-commutative", m->name);
  collc_spec s = mkspec(g->coll, g->p, g->count, comm, 0);
  if (compile_all(&s, g->algo, &G) == 0 && control(what, &G)) {
    if (CHECK(m->apply(G.P[g->rank]) == 0, "%s: the fold is not as described", what))
      expect(what, &G, g->rank, comm && !m->fails_comm, comm ? m->why_comm : m->why_nc);
  }
  free_all(&G);
}

/* REDUCE of undefined data: recexch:-4,4 allreduce p=4 (32 elements),
 * rank 1's REDUCE of its own block (SEND+8 [8]) reads RECV+0 [8] instead,
 * which only the allgather fills later; tree:4 reduce p=4, rank 0's REDUCE
 * of its own input reads TMP+0 [3], which nothing ever writes (TMP 0..5
 * are the partial buffers the root does not need). */
static void case_undefined(int which, int comm) {
  const gen *g = &gens[which];
  progs G;
  char what[160];
  snprintf(what, sizeof what, "%s %s, %s, REDUCE of undefined data", g->name, g->algo,
           comm ? "commutative" : "non-commutative");
  collc_spec s = mkspec(g->coll, g->p, g->count, comm, 0);
  if (compile_all(&s, g->algo, &G) == 0 && control(what, &G)) {
    collc_prog *P = G.P[g->rank];
    int a = find(P, COLLC_OP_REDUCE, 0, 0);
    if (a >= 0 && P->ins[a].src.buf != BUF_SEND) a = find(P, COLLC_OP_REDUCE, 1, 0);
    if (CHECK(a >= 0 && P->ins[a].src.buf == BUF_SEND, "%s: no REDUCE of SEND", what)) {
      P->ins[a].src.buf = which == 0 ? BUF_RECV : BUF_TMP;
      P->ins[a].src.off = 0;
      expect(what, &G, g->rank, 0, "REDUCE of undefined data");
    }
  }
  free_all(&G);
}

/* Swap the programs of ranks a and b of G, renaming a <-> b in every
 * peer: the same schedule with the two ranks' roles exchanged. */
static void exchange_roles(progs *G, int a, int b) {
  collc_prog *t = G->P[a];
  G->P[a] = G->P[b], G->P[b] = t;
  G->P[a]->spec.rank = a, G->P[b]->spec.rank = b;
  for (int r = 0; r < G->s.p; r++)
    for (int i = 0; i < G->P[r]->nins; i++) {
      collc_instr *I = &G->P[r]->ins[i];
      if (!(ops_flags(I->op) & OPF_PEER)) continue;
      if (I->peer == a) I->peer = b;
      else if (I->peer == b) I->peer = a;
    }
}

/* recexch:-2,-2 reduce_scatter_block p=4, 2 elements per rank: ranks 1
 * and 2 exchange roles, so every message still matches (no deadlock, no
 * size error) but rank 1 ends with block 2's sum and rank 2 with block
 * 1's: the output lands on the wrong rank. Commutative, that is the first
 * error (rank 1); non-commutative, rank 0 already fails: its block is
 * now folded in the order 0, 2, 1, 3. */
static void case_wrong_rank(int comm) {
  progs G;
  const char *what = comm ? "reduce_scatter_block result on the wrong rank (commutative)"
                          : "reduce_scatter_block result on the wrong rank (non-commutative)";
  collc_spec s = mkspec(COLLC_COLL_REDUCE_SCATTER_BLOCK, 4, 2, comm, 0);
  if (compile_all(&s, "recexch:-2,-2", &G) == 0 && control(what, &G)) {
    verify_report R;
    exchange_roles(&G, 1, 2);
    expect(what, &G, 1, 0, comm ? "rank 1 RECV[0]" : "rank 0 RECV[0]");
    verify_programs(&G.s, G.P, &R);
    CHECK(!R.deadlock && R.messages == 4 * 2, "%s: the exchange itself broke (%s)", what,
          R.first_error);
  }
  free_all(&G);
}

/* A schedule compiled for root `built` run as the collective with root
 * `claimed` (every program's spec says claimed): tree:2 bcast p=6 from
 * root 3 as a bcast from 2 leaves rank 0 with rank 3's undefined buffer;
 * tree:3 reduce p=6 to root 1 as a reduce to 2 writes the result into
 * rank 1's RECV, which a non-root rank of a reduce does not have. */
static void case_wrong_root(int coll, const char *algo, int built, int claimed,
                            const char *why) {
  progs G;
  char what[160];
  snprintf(what, sizeof what, "%s %s p=6 built for root %d, run as root %d", coll_name(coll),
           algo, built, claimed);
  collc_spec s = mkspec(coll, 6, 5, 1, built);
  if (compile_all(&s, algo, &G) == 0 && control(what, &G)) {
    G.s.root = claimed;
    for (int r = 0; r < 6; r++) G.P[r]->spec.root = claimed;
    expect(what, &G, 0, 0, why);
  }
  free_all(&G);
}

/* Run every case and print the summary. */
int main(void) {
  for (int g = 0; g < NGENS; g++)
    for (int m = 0; m < NMUTS; m++)
      for (int comm = 0; comm < 2; comm++) case_fold(&gens[g], &muts[m], comm);
  for (int comm = 0; comm < 2; comm++) {
    case_undefined(0, comm);
    case_undefined(1, comm);
    case_wrong_rank(comm);
  }
  case_wrong_root(COLLC_COLL_BCAST, "tree:2", 3, 2, "expected unit 0 of rank 2");
  case_wrong_root(COLLC_COLL_REDUCE, "tree:3", 1, 2, "rank 1 addr 7: RECV+0 outside the buffer");
  return unit_summary("verify_negative_reductions");
}
