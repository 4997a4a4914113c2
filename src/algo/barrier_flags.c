/* barrier_flags.c - the dissemination barrier over the node's flag
 * counters, every rank on one node: "flags[:k1,k2,...]".
 *
 * After A. Jocksch et al. (IJHPCA 2026), section 3: ranks of a node
 * synchronise through one counter each in the shared segment (SIGNAL n
 * stores it, AWAIT reads another's until it reaches n), no data. Step t of
 * radix k_t and distance d_t (barrier_dissem.c's pattern): SIGNAL t ("I
 * have passed steps < t"), then AWAIT step t of ranks r - j*d_t, j =
 * 1..k_t-1 while j*d_t < p. A counter that reached t says its rank heard
 * from everything its steps < t covered, so the chains of dissem hold with
 * one store per step instead of k_t - 1 messages. SIGNAL STEP_DONE ends
 * the run (the next plan on the segment may start).
 *
 * Parameters: as dissem; default one step of radix p (every rank stores
 * once and reads every other counter: on one node a read of a remote
 * cache line is cheap next to a chain of steps). Cost: steps x (one store,
 * k_t - 1 polls of a line the peer writes), no bytes; the segment holds
 * only the counters.
 */
#include <stdio.h>
#include "algo.h"
#include "patterns.h"

/* Every rank on one node (its layout); default list {p}. */
static int flags_resolve(const collc_spec *s, collc_choice *c, char *why, size_t wlen) {
  if (!s->layout || s->layout->p != s->p || s->layout->nnodes != 1) {
    snprintf(why, wlen, "flags: needs every rank on one node");
    return COLLC_EUNFIT;
  }
  dissem_steps(s->p, s->p > 1 ? s->p : 2, c);
  return 0;
}

static int flags_gen(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  int64_t d = 1;
  if (s->p == 1) return P->err;
  prog_need_shm(P, 1); /* (the counters; no data) */
  for (int t = 0; t < c->nf; d *= c->f[t++]) {
    prog_signal(P, t + 1);
    for (int64_t j = 1; j < c->f[t] && j * d < s->p; j++)
      prog_await(P, dissem_peer(s->p, s->rank, d, j, -1), t + 1);
  }
  prog_signal(P, STEP_DONE);
  return P->err;
}

const collc_algo algo_barrier_flags = {
    "flags", COLLC_COLL_BARRIER, dissem_parse, flags_resolve, flags_gen, dissem_format,
    "flags[:k1,k2,...]",
    "dissemination over the node's shared flag counters, no data (every rank on one node; "
    "default one step of radix p)",
    ALGO_ONE_NODE, 0};
