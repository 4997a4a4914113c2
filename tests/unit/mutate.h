/* mutate.h - editing compiled programs in place, for the verifier's
 * negative tests (header-only; include after unit.h). */
#ifndef COLLC_TESTS_MUTATE_H
#define COLLC_TESTS_MUTATE_H

#include <string.h>
#include "ir/ir.h"
#include "algo/algo.h"

/* Index of the n-th (0-based) instruction with opcode op on program P at or
 * after addr `from`, or -1. */
static inline int find(const collc_prog *P, int op, int n, int from) {
  for (int a = from; a < P->nins; a++)
    if (P->ins[a].op == op && n-- == 0) return a;
  return -1;
}

/* Remove instruction a of P. */
static inline void delete_ins(collc_prog *P, int a) {
  memmove(&P->ins[a], &P->ins[a + 1], (size_t)(P->nins - a - 1) * sizeof *P->ins);
  P->nins--;
}

/* Insert I before instruction a of P (growing the array). */
static inline void insert_ins(collc_prog *P, int a, collc_instr I) {
  if (prog_reserve(P, (void **)&P->ins, &P->cap_ins, P->nins + 1, sizeof *P->ins, "test")) {
    CHECK(0, "out of memory");
    return;
  }
  memmove(&P->ins[a + 1], &P->ins[a], (size_t)(P->nins - a) * sizeof *P->ins);
  P->ins[a] = I;
  P->nins++;
}

/* Remove the posting instruction at a, keeping the slots well-formed: later
 * posts of its batch move down one slot and the batch's WAIT waits one less. */
static inline void drop_post(collc_prog *P, int a) {
  int slot = P->ins[a].slot;
  delete_ins(P, a);
  for (int b = a; b < P->nins; b++) {
    collc_instr *I = &P->ins[b];
    if (I->op == COLLC_OP_WAIT) {
      I->n--;
      return;
    }
    if ((ops_flags(I->op) & OPF_POSTS) && I->slot > slot) I->slot--;
  }
}

#define PROGS_MAXP 64

/* The p programs of one collective, and its spec. */
typedef struct {
  collc_spec s;
  collc_prog *P[PROGS_MAXP];
} progs;

/* Compile algo for every rank of spec s into G; 0 or -1 (failure checked). */
static inline int compile_all(const collc_spec *s, const char *algo, progs *G) {
  collc_choice c;
  char why[200] = "";
  memset(G, 0, sizeof *G);
  G->s = *s;
  if (s->p > PROGS_MAXP) return CHECK(0, "%s: p = %d > %d", algo, s->p, PROGS_MAXP) - 1;
  if (choice_parse(s->coll, algo, &c, why, sizeof why) || choice_resolve(s, &c, why, sizeof why))
    return CHECK(0, "%s: %s", algo, why) - 1;
  for (int r = 0; r < s->p; r++) {
    collc_spec sr = spec_rank(s, r);
    G->P[r] = choice_compile(&sr, &c, why, sizeof why);
    if (!G->P[r]) return CHECK(0, "%s rank %d: %s", algo, r, why) - 1;
  }
  return 0;
}

/* Free G's programs (not its spec's layout). */
static inline void free_all(progs *G) {
  for (int r = 0; r < G->s.p; r++) prog_free(G->P[r]);
}

#endif
