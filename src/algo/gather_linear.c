/* gather_linear.c - linear gather and scatter, and their counted forms
 * (gatherv, scatterv): the root exchanges directly with every other rank.
 *
 * The textbook flat tree (MPICH's MPIR_Gather_intra_linear and
 * MPIR_Scatter_intra_linear, Open MPI's basic_linear).
 *
 * Gather: every rank but the root sends its block to the root, which posts
 * its p - 1 receives at once, each straight into its place in RECV, and
 * copies its own block locally (none in place). Scatter: the reverse, the
 * root posting its p - 1 sends at once. The counted forms move rank q's
 * spec.counts[q] units at its displacement; a rank off the root reads only
 * its own count (coll_desc.root_counts: MPI gives it no other), and empty
 * blocks make no message.
 * Cost: (p - 1) alpha + beta m (p - 1) at the root, which serialises on its
 * link; alpha + beta m at the others. No scratch. Any p, any root.
 */
#include "algo.h"
#include "blocks.h"

/* Offset and units of rank q's block in the root's buffer. */
static int64_t block_off(const collc_spec *s, int q) {
  return coll_desc_of(s->coll)->counted ? spec_block_off(s, q) : q;
}

static int64_t block_len(const collc_spec *s, int q) {
  return coll_desc_of(s->coll)->counted ? spec_block_len(s, q) : 1;
}

/* The root's side: for every other rank q, receive (gather) or send
 * (scatter) q's block at its place of buffer at; then its own block. */
static void root_side(collc_prog *P, int gather) {
  const collc_spec *s = &P->spec;
  int in = s->in_place ? BUF_RECV : BUF_SEND;
  for (int q = 0; q < s->p; q++) {
    int64_t n = block_len(s, q);
    if (q == s->root || n == 0) continue;
    if (gather) prog_recv(P, q, compact(P, BUF_RECV, block_off(s, q), n));
    else prog_send(P, q, compact(P, in, block_off(s, q), n));
  }
  int64_t n = block_len(s, s->root), off = block_off(s, s->root);
  if (!s->in_place && n > 0)
    prog_copy(P, compact(P, BUF_SEND, gather ? 0 : off, n), compact(P, BUF_RECV, gather ? off : 0, n));
  prog_wait(P);
}

/* A rank off the root: its block to (gather) or from (scatter) the root. */
static void leaf_side(collc_prog *P, int gather) {
  const collc_spec *s = &P->spec;
  int64_t n = block_len(s, s->rank);
  if (n == 0) return;
  if (gather) prog_send(P, s->root, compact(P, BUF_SEND, 0, n));
  else prog_recv(P, s->root, compact(P, BUF_RECV, 0, n));
  prog_wait(P);
}

/* Generators: gather and gatherv, scatter and scatterv. */
static int gen_gather(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  (void)c;
  if (s->rank == s->root) root_side(P, 1);
  else leaf_side(P, 1);
  return P->err;
}

static int gen_scatter(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  (void)c;
  if (s->rank == s->root) root_side(P, 0);
  else leaf_side(P, 0);
  return P->err;
}

#define LINEAR_ROW(var, coll, gen, what)                                                     \
  const collc_algo var = {"linear", coll, algo_parse_none, algo_resolve_any, gen,             \
                          algo_format_none, "linear", what, ALGO_ANY, 0}
LINEAR_ROW(algo_gather_linear, COLLC_COLL_GATHER, gen_gather, "the root receives from every rank");
LINEAR_ROW(algo_scatter_linear, COLLC_COLL_SCATTER, gen_scatter, "the root sends to every rank");
LINEAR_ROW(algo_gatherv_linear, COLLC_COLL_GATHERV, gen_gather,
           "the root receives every nonempty block");
LINEAR_ROW(algo_scatterv_linear, COLLC_COLL_SCATTERV, gen_scatter,
           "the root sends every nonempty block");
