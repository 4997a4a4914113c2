/* alltoallv_direct.c - direct all-to-all with per-rank counts (MPI_Alltoallv):
 * every block goes straight to its destination. Two schedules, as
 * alltoall_direct.c's over blocks of any size (exchange.c's patterns):
 *
 *   linear    all receives, then all sends posted at once, one wait (MPICH's
 *             and Open MPI's default): ~ alpha + beta sum(m_q), up to 2(p-1)
 *             messages in flight.
 *   pairwise  p-1 steps; step s receives from r-s and sends to r+s, then
 *             waits: sum over steps of (alpha + beta max(m_in, m_out)).
 *
 * m_q = bytes of the block to or from rank q. Each rank's program is built
 * from its own vectors only (spec.counts: the units it sends each rank and
 * receives from each, spec.displs their offsets): a zero count posts no
 * message, and the sender's count is zero exactly when the receiver's is
 * (MPI's matching signatures), so both sides skip the same messages. The
 * own block is one local copy. In place (MPI_IN_PLACE: the receive side is
 * the send side) the receive buffer is first copied to TMP (scratch: the
 * receive buffer's units), the blocks then sent from there; otherwise no
 * scratch. No restrictions: any p, gaps and blocks in any order.
 */
#include "algo.h"
#include "patterns.h"

/* Rank r's block to or from q on side (its units and offset) as an operand of buf. */
static collc_opnd block(collc_prog *P, const collc_spec *s, int buf, int side, int q) {
  return opnd(buf, a2av_displ(s, s->rank, side, q),
              prog_shape_contig(P, a2av_count(s, s->rank, side, q)));
}

/* Post the receive from q (if it sends anything). */
static void recv_from(collc_prog *P, const collc_spec *s, int q) {
  if (a2av_count(s, s->rank, A2AV_RECV, q)) prog_recv(P, q, block(P, s, BUF_RECV, A2AV_RECV, q));
}

/* Post the send to q from buffer in (if there is anything for it). */
static void send_to(collc_prog *P, const collc_spec *s, int in, int q) {
  if (a2av_count(s, s->rank, A2AV_SEND, q)) prog_send(P, q, block(P, s, in, A2AV_SEND, q));
}

/* The input buffer of s's program: SEND, or in place a TMP copy of RECV
 * (the own block, in place, needs no copy: it is where it belongs). */
static int direct_input(collc_prog *P, const collc_spec *s) {
  int r = s->rank;
  int64_t n = a2av_count(s, r, A2AV_SEND, r);
  if (s->in_place) {
    int64_t all = prog_buf_units(P, BUF_RECV);
    if (all == 0) return BUF_TMP; /* (nothing to send) */
    prog_need_tmp(P, all);
    prog_copy(P, opnd(BUF_RECV, 0, prog_shape_contig(P, all)),
              opnd(BUF_TMP, 0, prog_shape_contig(P, all)));
    return BUF_TMP;
  }
  if (a2av_count(s, r, A2AV_RECV, r) < n) n = a2av_count(s, r, A2AV_RECV, r);
  if (n) /* (MPI requires equal counts; fewer sent fill the block's first units, as MPI's) */
    prog_copy(P, opnd(BUF_SEND, a2av_displ(s, r, A2AV_SEND, r), prog_shape_contig(P, n)),
              opnd(BUF_RECV, a2av_displ(s, r, A2AV_RECV, r), prog_shape_contig(P, n)));
  return BUF_SEND;
}

/* The whole exchange, comp: COMP_LINEAR or COMP_PAIRWISE. */
static int direct_gen(const collc_spec *s, int comp, collc_prog *P) {
  int r = s->rank, p = s->p, in = direct_input(P, s);
  for (int j = 1; j < p; j++) {
    recv_from(P, s, (int)mod_pos(r - j, p));
    if (comp == COMP_PAIRWISE) send_to(P, s, in, (r + j) % p), prog_wait(P);
  }
  for (int j = 1; comp == COMP_LINEAR && j < p; j++) send_to(P, s, in, (r + j) % p);
  prog_wait(P);
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

const collc_algo algo_alltoallv_pairwise = {
    "pairwise", COLLC_COLL_ALLTOALLV, algo_parse_none, algo_resolve_any, pairwise_gen,
    algo_format_none, "pairwise", "direct exchange in p-1 pairwise steps", ALGO_ANY, 0};

const collc_algo algo_alltoallv_linear = {
    "linear", COLLC_COLL_ALLTOALLV, algo_parse_none, algo_resolve_any, linear_gen,
    algo_format_none, "linear", "direct exchange, all messages posted at once", ALGO_ANY, 0};
