/* hier_steps.c - node-aware allreduce whose intra-node part is a recursive
 * exchange in shared memory with a factor list: hier:node=-4,-2,2,4.
 *
 * The seed paper's factor lists, with every step a shared-memory step:
 * "-k" a reduce-scatter step of radix k, "k" an allgather step, products
 * both equal to the ranks per node (every node the same size). Ranks of a
 * node are digits in the mixed radix of the "-" list (first step = lowest
 * digit = consecutive local ranks), as in recexch.c, and the vector is cut
 * into k blocks of whole cache lines; local rank i ends up owning block i.
 * Reduce-scatter step t: every member folds, in local-rank order, its
 * group's partials of its own part out of their regions into RECV (scratch
 * until the end; its own region is one of the sources) and, but at the last
 * step, copies the result into its region for the next group; the lane of owners of block i allreduces it
 * between nodes (net=); allgather steps copy the members' parts out of
 * their regions, the last one into RECV. Each step is one SIGNAL/AWAIT round
 * among its group only, instead of one round among the whole node: the
 * paper's remedy for nodes with many cores (many sockets), where a single
 * step makes every rank read every region.
 */
#include <stdlib.h>
#include "hier.h"
#include "patterns.h"

typedef struct {
  hx *H;
  const collc_choice *c;
  blocks B;
  int R[COLLC_MAXF], nrs; /* "-" radices */
  int G[COLLC_MAXF], nag; /* "+" radices, reversed (mirror of the "-" list) */
} hs;

/* Class of the blocks of local rank `who`'s part after `t` steps of radix
 * list R: blocks b with b mod M == who mod M, M = R[0] * ... * R[t-1]. */
static collc_opnd part(hs *X, int buf, int64_t base, int who, const int *R, int t) {
  int M = (int)mr_weight(R, t);
  return blocks_natural(X->H->P, &X->B, buf, base, who % M, M);
}

/* Reduce-scatter step t: fold my group's partials of my next part. */
static void rs_step(hs *X, int t) {
  hx *H = X->H;
  collc_prog *P = H->P;
  int k = X->R[t], W = (int)mr_weight(X->R, t), me = H->me, dg = mr_digit(me, X->R, t);
  int last = t == X->nrs - 1;
  collc_opnd *pieces = malloc((size_t)k * sizeof *pieces);
  if (!pieces) {
    prog_fail(P, COLLC_ENOMEM, "hier: out of memory");
    return;
  }
  for (int m = 0; m < k; m++) {
    int j = me + (m - dg) * W; /* member with digit m */
    if (m != dg) prog_await(P, hier_rank(H, j), t + 1);
    pieces[m] = part(X, BUF_SHM, j * H->S, me, X->R, t + 1);
  }
  collc_opnd into = part(X, BUF_RECV, 0, me, X->R, t + 1); /* (RECV: scratch until the end) */
  if (opnd_units(P, into)) {
    hier_fold(P, pieces, k, into); /* (not into my region: it is one of the pieces) */
    if (!last) prog_copy(P, into, part(X, BUF_SHM, me * H->S, me, X->R, t + 1));
  }
  free(pieces);
  if (!last) prog_signal(P, t + 2);
}

/* Allgather step s (mirror of reduce-scatter step nag-1-s): copy my group
 * members' parts out of their regions (into RECV at the last step, else
 * into my region, where the next step's group reads them). */
static void ag_step(hs *X, int s, int64_t step0) {
  hx *H = X->H;
  collc_prog *P = H->P;
  int i = X->nag - 1 - s, k = X->G[i], W = (int)mr_weight(X->G, i), me = H->me;
  int dg = mr_digit(me, X->G, i), last = s == X->nag - 1;
  for (int m = 0; m < k; m++) {
    int j = me + (m - dg) * W;
    if (m == dg) continue;
    prog_await(P, hier_rank(H, j), step0 + s);
    collc_opnd from = part(X, BUF_SHM, j * H->S, j, X->G, i + 1); /* j's part so far */
    if (opnd_units(P, from))
      prog_copy(P, from, part(X, last ? BUF_RECV : BUF_SHM, last ? 0 : me * H->S, j, X->G, i + 1));
  }
  if (last) { /* my own gathered part too */
    collc_opnd mine = part(X, BUF_SHM, me * H->S, me, X->G, i + 1);
    if (opnd_units(P, mine) && s > 0) prog_copy(P, mine, part(X, BUF_RECV, 0, me, X->G, i + 1));
  } else {
    prog_signal(P, step0 + s + 1);
  }
}

/* The whole allreduce (see the file comment); resolve checked the list. */
void hier_allreduce_steps(hx *H, const collc_choice *c,
                          void (*lane)(hx *, const collc_choice *, int, int64_t, int64_t)) {
  collc_prog *P = H->P;
  hs X = {.H = H, .c = c};
  int64_t n = H->s->count;
  X.nrs = steps_of(c, '-', X.R);
  int ag[COLLC_MAXF];
  X.nag = steps_of(c, '+', ag);
  for (int i = 0; i < X.nag; i++) X.G[i] = ag[X.nag - 1 - i];
  if (blocks_split(P, &X.B, H->k, n, H->s->unit_bytes)) return;
  int me = H->me;
  hier_enter(H);
  prog_copy(P, hier_input(H, 0, n), hier_region(H, me, 0, n));
  prog_signal(P, 1);
  for (int t = 0; t < X.nrs; t++) rs_step(&X, t);
  lane(H, c, me, X.B.start[me], X.B.len[me]);
  if (X.B.len[me])
    prog_copy(P, compact(P, BUF_RECV, X.B.start[me], X.B.len[me]),
              hier_region(H, me, X.B.start[me], X.B.len[me]));
  int64_t step0 = X.nrs + 1; /* my block is final in my region */
  prog_signal(P, step0);
  for (int s = 0; s < X.nag; s++) ag_step(&X, s, step0);
  hier_leave(H);
  blocks_free(&X.B);
}
