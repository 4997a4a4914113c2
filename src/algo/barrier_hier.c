/* barrier_hier.c - the node-aware barrier: "hier[:net=<barrier algorithm>]".
 *
 * After A. Jocksch et al. (IJHPCA 2026), section 3. Inside a node, flags:
 * every rank but the node's leader (local rank 0) SIGNALs 1 on entry; the
 * leader AWAITs step 1 of each of them, runs the barrier among the nodes'
 * leaders (net=, default dissem, through a view), then SIGNALs STEP_DONE,
 * which the others AWAIT before they SIGNAL STEP_DONE and leave. So a
 * rank leaves after its leader left the inter-node barrier, which followed
 * every leader's entry, which followed every rank of its node's entry.
 * Nodes of one rank use no segment.
 *
 * Cost: 2 flag steps in the node (k - 1 polls at the leader, one at the
 * others) plus the inter-node barrier among N leaders (dissem:
 * ceil(log2 N) alpha). No bytes; the segment holds only the counters.
 */
#include <stdlib.h>
#include "hier.h"

int hier_gen_barrier(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  hx H;
  hier_init(&H, s, c, P, 0);
  int lead = hier_rank(&H, 0);
  if (s->rank != lead) {
    prog_signal(P, 1);
    prog_await(P, lead, STEP_DONE);
    hier_leave(&H);
    return P->err;
  }
  hier_await_all(&H, 1);
  int *rank = H.L->nnodes > 1 ? malloc((size_t)H.L->nnodes * sizeof *rank) : NULL;
  if (H.L->nnodes > 1 && !rank) return prog_fail(P, COLLC_ENOMEM, "hier: out of memory"), P->err;
  for (int n = 0; rank && n < H.L->nnodes; n++) rank[n] = layout_rank(H.L, n, 0);
  hier_sub x = {COLLC_COLL_BARRIER, 0, 0, 1, BUF_RECV, BUF_RECV, 0, 0, 0, rank, c->net};
  if (rank) hier_emit_sub(&H, &x);
  free(rank);
  hier_leave(&H);
  return P->err;
}
