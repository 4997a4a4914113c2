/* hier_root.c - node-aware gather and scatter, and their counted forms
 * (gatherv, scatterv): shared memory inside a node, one message per node
 * between the root and each other node.
 *
 * Each node's blocks lie in its segment packed in local order (rank q's at
 * the units of the ranks before it on its node; the segment as large as
 * the largest node's blocks, the same on every rank). Gather: every rank
 * but the root copies its block into the segment and signals; the root
 * copies its own node's blocks out to their places in its buffer, and the
 * leader (local rank 0) of every other node, once its node is in, sends
 * the node's blocks to the root in one message, which the root receives
 * straight into their places (a derived-datatype-like run list, no
 * unpacking copy). Scatter: the reverse; the root copies its node's
 * blocks into the segment, sends each other node's blocks to its leader,
 * which receives them into its segment, and every rank copies its block
 * out. A rank alone on its node uses no segment: it sends (receives) its
 * block directly. Empty blocks are never copied; a node whose blocks are
 * all empty sends (receives) no message.
 * Blocks: gather and scatter one unit (block) per rank, at rank order in
 * the root's buffer; the counted forms spec.counts at the root's displs,
 * which need every rank to know the root's counts (spec.agreed: the
 * dispatch layer's agreement round, as the counted tree's).
 * Cost: between nodes N - 1 messages at the root (linear: p - 1), each
 * node's data once; inside a node one copy in and one copy out per block
 * and two flag steps. Segment: the largest node's blocks.
 */
#include <stdlib.h>
#include "hier.h"

typedef struct {
  hx H;
  blocks B;     /* rank q's block: units, and its place in the root's buffer */
  int64_t *seg; /* rank q's offset in its node's segment */
  int root_node;
} rx;

/* Set X up for rank s->rank (segment declared); 0, or -1 out of memory. */
static int rx_init(rx *X, const collc_spec *s, const collc_choice *c, collc_prog *P) {
  const collc_layout *L = s->layout;
  int64_t most = 0;
  hier_init(&X->H, s, c, P, 0);
  X->root_node = L->node_of[s->root];
  X->seg = malloc((size_t)s->p * sizeof *X->seg);
  if (!X->seg || blocks_of_ranks(P, &X->B, s, s->p)) { /* (gather, scatter: one unit each) */
    free(X->seg);
    return prog_fail(P, COLLC_ENOMEM, "hier: out of memory"), -1;
  }
  for (int n = 0; n < L->nnodes; n++) {
    int64_t at = 0;
    for (int i = 0; i < L->size[n]; i++) {
      int q = layout_rank(L, n, i);
      X->seg[q] = at, at += X->B.len[q];
    }
    if (at > most) most = at;
  }
  if (X->H.k > 1) prog_need_shm(P, most);
  return 0;
}

static void rx_free(rx *X) { blocks_free(&X->B), free(X->seg); }

/* Rank q's block in the segment, and at its place in buf (the root's). */
static collc_opnd in_seg(rx *X, int q) { return compact(X->H.P, BUF_SHM, X->seg[q], X->B.len[q]); }
static collc_opnd placed(rx *X, int buf, int q) {
  return compact(X->H.P, buf, X->B.start[q], X->B.len[q]);
}

/* Units of node n's blocks, and their operand at their places in buf. */
static int64_t node_units(const rx *X, int n) {
  int64_t u = 0;
  for (int i = 0; i < X->H.L->size[n]; i++) u += X->B.len[layout_rank(X->H.L, n, i)];
  return u;
}
static collc_opnd node_placed(rx *X, int buf, int n) {
  const collc_layout *L = X->H.L;
  return blocks_list(X->H.P, &X->B, buf, 0, L->members + L->first[n], L->size[n]);
}

/* The root: its node's blocks between the segment and their places in buf
 * (to_seg: into the segment), every other local rank's. */
static void root_node_copies(rx *X, int buf, int to_seg) {
  for (int j = 0; j < X->H.k; j++) {
    int q = hier_rank(&X->H, j);
    if (j == X->H.me || !X->B.len[q]) continue;
    if (to_seg) prog_copy(X->H.P, placed(X, buf, q), in_seg(X, q));
    else prog_copy(X->H.P, in_seg(X, q), placed(X, buf, q));
  }
}

/* The root's messages with every other node's leader (gather: receives
 * into buf, scatter: sends from it). */
static void root_messages(rx *X, int buf, int gather) {
  for (int n = 0; n < X->H.L->nnodes; n++) {
    if (n == X->root_node || !node_units(X, n)) continue;
    int lead = layout_rank(X->H.L, n, 0);
    if (gather) prog_recv(X->H.P, lead, node_placed(X, buf, n));
    else prog_send(X->H.P, lead, node_placed(X, buf, n));
  }
}

int hier_gen_gather(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  rx X;
  if (rx_init(&X, s, c, P)) return P->err;
  hx *H = &X.H;
  int r = s->rank;
  int64_t mine = X.B.len[r], ours = node_units(&X, H->node);
  if (H->k > 1 && r != s->root) { /* (the root's block never goes through the segment) */
    hier_enter(H);
    if (mine) prog_copy(P, compact(P, BUF_SEND, 0, mine), in_seg(&X, r));
    prog_signal(P, 1);
  }
  if (r == s->root) {
    if (H->k > 1) hier_await_all(H, 1), root_node_copies(&X, BUF_RECV, 0);
    if (!s->in_place && mine) prog_copy(P, compact(P, BUF_SEND, 0, mine), placed(&X, BUF_RECV, r));
    root_messages(&X, BUF_RECV, 1);
    prog_wait(P);
  } else if (H->node != X.root_node && H->me == 0 && ours) { /* another node's leader */
    if (H->k > 1) hier_await_all(H, 1);
    prog_send(P, s->root, H->k > 1 ? compact(P, BUF_SHM, 0, ours) : compact(P, BUF_SEND, 0, mine));
    prog_wait(P);
  }
  hier_leave(H);
  rx_free(&X);
  return P->err;
}

int hier_gen_scatter(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  rx X;
  if (rx_init(&X, s, c, P)) return P->err;
  hx *H = &X.H;
  int r = s->rank, in = s->in_place ? BUF_RECV : BUF_SEND; /* (the root's input) */
  int64_t mine = X.B.len[r], ours = node_units(&X, H->node);
  collc_opnd out = compact(P, BUF_RECV, 0, mine);
  if (r == s->root) {
    if (H->k > 1) hier_enter(H), root_node_copies(&X, in, 1), prog_signal(P, 1);
    root_messages(&X, in, 0);
    if (!s->in_place && mine) prog_copy(P, placed(&X, BUF_SEND, r), out);
    prog_wait(P);
  } else if (H->node == X.root_node) {
    prog_await(P, s->root, 1);
    if (mine) prog_copy(P, in_seg(&X, r), out);
  } else if (H->k == 1) { /* (alone on its node: straight into RECV) */
    if (mine) prog_recv(P, s->root, out), prog_wait(P);
  } else if (H->me == 0) { /* another node's leader */
    hier_enter(H);
    if (ours) prog_recv(P, s->root, compact(P, BUF_SHM, 0, ours)), prog_wait(P);
    prog_signal(P, 1);
    if (mine) prog_copy(P, in_seg(&X, r), out);
  } else {
    prog_await(P, layout_rank(H->L, H->node, 0), 1);
    if (mine) prog_copy(P, in_seg(&X, r), out);
  }
  hier_leave(H);
  rx_free(&X);
  return P->err;
}
