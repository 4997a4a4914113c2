/* exchange.c - the all-to-all exchange among one group's members, shared by
 * the direct algorithms (group = the communicator) and the torus rounds
 * (group = one dimension).
 *
 * Patterns (comp):
 *   native    one group all-to-all instruction (executed by PMPI_Alltoall on
 *             the group's communicator with cached tiled datatypes);
 *   linear    post all n-1 receives, then all n-1 sends, one wait:
 *             1 round, alpha + (n-1) beta m, n-1 messages in flight;
 *   pairwise  n-1 steps, step s sends to me+s and receives from me-s, waiting
 *             after each step: (n-1)(alpha + beta m), one message each way.
 * The own part is always a local copy (as inside any MPI all-to-all). */
#include "algo.h"
#include "patterns.h"

/* Operand o moved to member j's part. */
static collc_opnd part(collc_opnd o, int j, int64_t stride) {
  o.off += j * stride;
  return o;
}

void gen_group_exchange(collc_prog *P, int comp, int n, int base, int gstride, int me,
                        collc_opnd src, collc_opnd dst, int64_t stride) {
  if (n == 1) {
    prog_copy(P, src, dst);
    return;
  }
  if (comp == COMP_NATIVE) {
    prog_alltoall(P, prog_group(P, n, base, gstride), src, dst, stride);
    return;
  }
  prog_copy(P, part(src, me, stride), part(dst, me, stride));
  for (int s = 1; s < n; s++) {
    int from = (int)mod_pos(me - s, n), to = (me + s) % n;
    prog_recv(P, base + from * gstride, part(dst, from, stride));
    if (comp == COMP_PAIRWISE) {
      prog_send(P, base + to * gstride, part(src, to, stride));
      prog_wait(P);
    }
  }
  if (comp == COMP_LINEAR) {
    for (int s = 1; s < n; s++) {
      int to = (me + s) % n;
      prog_send(P, base + to * gstride, part(src, to, stride));
    }
    prog_wait(P);
  }
}
