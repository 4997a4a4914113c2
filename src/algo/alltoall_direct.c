/* alltoall_direct.c - direct all-to-all: every block goes straight to its
 * destination, no combining. Two schedules (exchange.c):
 *
 *   pairwise  p-1 steps; step s sends block r+s to rank r+s and receives
 *             block r-s from rank r-s, then waits (one message each way in
 *             flight; good for large blocks). Cost (p-1)(alpha + m beta).
 *   linear    all p-1 receives and sends posted at once, one wait (MPICH's
 *             and Open MPI's "basic linear"). Cost ~ alpha + (p-1) m beta
 *             with p-1 messages in flight.
 *
 * m = block bytes. Scratch: none (p blocks in place, where the input is
 * first copied to TMP once, as MPI libraries do). No restrictions.
 */
#include "algo.h"

/* The whole communicator as one group; comp picks the schedule. */
static int direct_gen(const collc_spec *s, int comp, collc_prog *P) {
  int one = prog_shape_contig(P, 1);
  collc_opnd in = opnd(BUF_SEND, 0, one);
  if (s->in_place) {
    int all = prog_shape_contig(P, s->p);
    prog_need_tmp(P, s->p);
    prog_copy(P, opnd(BUF_RECV, 0, all), opnd(BUF_TMP, 0, all));
    in = opnd(BUF_TMP, 0, one);
  }
  gen_group_exchange(P, comp, s->p, 0, 1, s->rank, in, opnd(BUF_RECV, 0, one), 1);
  return P->err;
}

static int pairwise_gen(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  (void)c;
  return direct_gen(s, COMP_PAIRWISE, P);
}

static int linear_gen(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  (void)c;
  return direct_gen(s, COMP_LINEAR, P);
}

const collc_algo algo_alltoall_pairwise = {
    "pairwise", COLLC_COLL_ALLTOALL, algo_parse_none, algo_resolve_any, pairwise_gen,
    algo_format_none, "pairwise", "direct exchange in p-1 pairwise steps", ALGO_ANY, 0};

const collc_algo algo_alltoall_linear = {
    "linear", COLLC_COLL_ALLTOALL, algo_parse_none, algo_resolve_any, linear_gen,
    algo_format_none, "linear", "direct exchange, all messages posted at once", ALGO_ANY, 0};
