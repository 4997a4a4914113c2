/* gather_tree.c - k-nomial tree gather and scatter with any root, and
 * their counted forms (gatherv, scatterv).
 *
 * The binomial gather and scatter of MPICH (MPIR_Gather_intra_binomial,
 * MPIR_Scatter_intra_binomial) with the per-level fan-in of tree.c.
 *
 * Parameters: tree:<k1>[,<k2>...] as tree.c (fan-in of level 1, 2, ...;
 * the last repeats until the product reaches p); default tree:2.
 * Ranks are renumbered v = rank - root (mod p) and written as mixed-radix
 * digits (k1 fastest). A rank whose lowest nonzero digit is digit t holds
 * the subtree of virtual ranks [v, v + W_t), W_t = k1 ... k_t (cut at p);
 * its children are v + y W_l for levels l < t and y = 1 .. k_l - 1.
 * Gather: a rank receives its children's subtrees (all posted at once),
 * then sends its whole subtree to its parent in one message; scatter the
 * reverse, the largest subtrees first. Interior ranks stage their subtree
 * in TMP (virtual rank order, their own block first); the root receives
 * into (sends from) its buffer directly, each block at its place there
 * (gather, scatter: rank q's at q, a subtree at most two runs as virtual
 * ranks wrap around at p; the counted forms: at the root's displs).
 * Blocks: every rank must know every subtree's size. Gather and scatter
 * move one block per rank; gatherv's and scatterv's counts MPI gives to
 * the root only, so their tree needs spec.agreed (the dispatch layer's
 * agreement round: the root broadcasts its p counts before the plan is
 * looked up; the tools have every count); without it the tree does not
 * fit. A subtree whose blocks are all empty makes no message, on both
 * sides (both know its size), and a rank whose children hold nothing
 * sends its own block straight from SEND.
 * Cost: sum over levels of (k_t - 1) alpha + beta m (p - 1) at the root
 * (every block once); log_k p rounds. Scratch: an interior rank's subtree.
 */
#include <stdio.h>
#include <stdlib.h>
#include "algo.h"
#include "blocks.h"
#include "patterns.h"

/* One rank's place in the tree (virtual rank v, sending at level t), and
 * the blocks: B's of real ranks (lengths; at the root their places in
 * its buffer), pre[w] the units of virtual ranks < w. */
typedef struct {
  int v, t, p, root;
  int64_t size; /* ranks of its subtree */
  blocks B;
  int64_t *pre;
} node;

/* Real rank of virtual rank w. */
static int real(const node *n, int64_t w) { return (int)mod_pos(w + n->root, n->p); }

/* Units of the blocks of virtual ranks [a, a + len). */
static int64_t units(const node *n, int64_t a, int64_t len) { return n->pre[a + len] - n->pre[a]; }

/* This rank's node under choice c, its blocks set up (0, or -1 out of
 * memory: P's sticky error). */
static int node_of(const collc_spec *s, const collc_choice *c, collc_prog *P, node *n) {
  *n = (node){(int)mod_pos(s->rank - s->root, s->p), c->nf, s->p, s->root, s->p, {0}, NULL};
  for (int t = 0; n->v && t < c->nf; t++)
    if ((n->v / mr_weight(c->f, t)) % c->f[t]) {
      n->t = t;
      break;
    }
  if (n->v) n->size = mr_weight(c->f, n->t) < s->p - n->v ? mr_weight(c->f, n->t) : s->p - n->v;
  if (blocks_of_ranks(P, &n->B, s, s->p)) return -1; /* (gather, scatter: one unit each) */
  if (!(n->pre = malloc(((size_t)s->p + 1) * sizeof *n->pre)))
    return prog_fail(P, COLLC_ENOMEM, "tree: out of memory"), blocks_free(&n->B), -1;
  n->pre[0] = 0;
  for (int w = 0; w < s->p; w++) n->pre[w + 1] = n->pre[w] + n->B.len[real(n, w)];
  return 0;
}

static void node_free(node *n) { blocks_free(&n->B), free(n->pre); }

/* Blocks of virtual ranks [a, a + len): at the root, buffer buf at their
 * places; elsewhere TMP from the node's own. */
static collc_opnd span(collc_prog *P, const node *n, int buf, int64_t a, int64_t len) {
  if (n->v) return compact(P, BUF_TMP, units(n, n->v, a - n->v), units(n, a, len));
  int *list = malloc((size_t)len * sizeof *list);
  if (!list) return prog_fail(P, COLLC_ENOMEM, "tree: out of memory"), opnd(buf, 0, -1);
  for (int64_t i = 0; i < len; i++) list[i] = real(n, a + i);
  collc_opnd o = blocks_list(P, &n->B, buf, 0, list, (int)len);
  free(list);
  return o;
}

/* Receive (gather) or send (scatter) every nonempty child's subtree,
 * buffer buf at the root; top-down (largest first) for scatter. */
static void children(collc_prog *P, const collc_choice *c, const node *n, int buf, int gather) {
  for (int i = 0; i < n->t; i++) {
    int l = gather ? i : n->t - 1 - i;
    int64_t W = mr_weight(c->f, l);
    for (int y = 1; y < c->f[l] && n->v + y * W < n->p; y++) {
      int64_t ch = n->v + y * W, len = W < n->p - ch ? W : n->p - ch;
      if (!units(n, ch, len)) continue;
      if (gather) prog_recv(P, real(n, ch), span(P, n, buf, ch, len));
      else prog_send(P, real(n, ch), span(P, n, buf, ch, len));
    }
  }
}

/* Parent of a node other than the root. */
static int parent(const collc_choice *c, const node *n) {
  int64_t W = mr_weight(c->f, n->t);
  return real(n, n->v - ((n->v / W) % c->f[n->t]) * W);
}

/* The root's own block, between SEND (at from) and RECV (at to), unless in place. */
static void own_copy(collc_prog *P, const collc_spec *s, const node *n, int gather) {
  int64_t len = n->B.len[s->root], at = n->B.start[s->root];
  if (s->in_place || !len) return;
  prog_copy(P, compact(P, BUF_SEND, gather ? 0 : at, len), compact(P, BUF_RECV, gather ? at : 0, len));
}

static int gen_gather(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  node n;
  if (node_of(s, c, P, &n)) return P->err;
  int64_t mine = units(&n, n.v, 1), all = units(&n, n.v, n.size);
  if (n.v == 0) {
    own_copy(P, s, &n, 1);
    children(P, c, &n, BUF_RECV, 1);
    prog_wait(P);
  } else if (all) {
    collc_opnd out = compact(P, BUF_SEND, 0, mine);
    if (all > mine) { /* (children with data: the subtree staged in TMP) */
      prog_need_tmp(P, all);
      if (mine) prog_copy(P, out, compact(P, BUF_TMP, 0, mine));
      children(P, c, &n, BUF_TMP, 1);
      prog_wait(P);
      out = compact(P, BUF_TMP, 0, all);
    }
    prog_send(P, parent(c, &n), out);
    prog_wait(P);
  }
  node_free(&n);
  return P->err;
}

static int gen_scatter(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  node n;
  if (node_of(s, c, P, &n)) return P->err;
  int64_t mine = units(&n, n.v, 1), all = units(&n, n.v, n.size);
  if (n.v == 0) {
    children(P, c, &n, s->in_place ? BUF_RECV : BUF_SEND, 0);
    own_copy(P, s, &n, 0);
    prog_wait(P);
  } else if (all == mine && mine) { /* (no child has data: straight into RECV) */
    prog_recv(P, parent(c, &n), compact(P, BUF_RECV, 0, mine));
    prog_wait(P);
  } else if (all) {
    prog_need_tmp(P, all);
    prog_recv(P, parent(c, &n), compact(P, BUF_TMP, 0, all));
    prog_wait(P);
    if (mine) prog_copy(P, compact(P, BUF_TMP, 0, mine), compact(P, BUF_RECV, 0, mine));
    children(P, c, &n, BUF_TMP, 0);
    prog_wait(P);
  }
  node_free(&n);
  return P->err;
}

/* Counted forms: every rank must have the root's counts (spec.agreed). */
static int vtree_resolve(const collc_spec *s, collc_choice *c, char *why, size_t wlen) {
  return algo_agreed(s, "tree", why, wlen) ? COLLC_EUNFIT : tree_resolve(s, c, why, wlen);
}

#define GTREE_ROW(var, coll, resolve, gen, agrees)                                           \
  const collc_algo var = {"tree", coll, tree_parse, resolve, gen, tree_format,               \
                          "tree[:k1,k2,...]", "k-nomial tree with per-level fan-in, any root", \
                          ALGO_ANY, agrees}
GTREE_ROW(algo_gather_tree, COLLC_COLL_GATHER, tree_resolve, gen_gather, 0);
GTREE_ROW(algo_scatter_tree, COLLC_COLL_SCATTER, tree_resolve, gen_scatter, 0);
GTREE_ROW(algo_gatherv_tree, COLLC_COLL_GATHERV, vtree_resolve, gen_gather, 1);
GTREE_ROW(algo_scatterv_tree, COLLC_COLL_SCATTERV, vtree_resolve, gen_scatter, 1);
