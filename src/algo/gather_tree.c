/* gather_tree.c - k-nomial tree gather and scatter with any root.
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
 * into (sends from) its buffer directly, a subtree's blocks being at most
 * two runs there (virtual ranks wrap around at p). Blocks are uniform
 * (gather, scatter): every rank knows every subtree's size, so the tree
 * needs no extra round; the counted forms are linear only (README).
 * Cost: sum over levels of (k_t - 1) alpha + beta m (p - 1) at the root
 * (every block once); log_k p rounds. Scratch: an interior rank's subtree,
 * W_t blocks.
 */
#include "algo.h"
#include "blocks.h"
#include "patterns.h"

/* One rank's place in the tree (virtual rank v, sending at level t). */
typedef struct {
  int v, t, p, root;
  int64_t size; /* blocks of its subtree */
} node;

/* This rank's node under choice c. */
static node node_of(const collc_spec *s, const collc_choice *c) {
  node n = {(int)mod_pos(s->rank - s->root, s->p), c->nf, s->p, s->root, s->p};
  for (int t = 0; n.v && t < c->nf; t++)
    if ((n.v / mr_weight(c->f, t)) % c->f[t]) {
      n.t = t;
      break;
    }
  if (n.v) n.size = mr_weight(c->f, n.t) < s->p - n.v ? mr_weight(c->f, n.t) : s->p - n.v;
  return n;
}

/* Real rank of virtual rank w. */
static int real(const node *n, int64_t w) { return (int)mod_pos(w + n->root, n->p); }

/* Blocks of virtual ranks [a, a + len): at the root, buffer buf at their
 * real places (two runs where they wrap); elsewhere TMP from the node's own. */
static collc_opnd span(collc_prog *P, const node *n, int buf, int64_t a, int64_t len) {
  if (n->v) return compact(P, BUF_TMP, a - n->v, len);
  int64_t r0 = real(n, a), first = len < n->p - r0 ? len : n->p - r0;
  int64_t off[2] = {r0, 0}, lens[2] = {first, len - first};
  return prog_opnd_runs(P, buf, len > first ? 2 : 1, off, lens);
}

/* Receive (gather) or send (scatter) every child's subtree, buffer buf at
 * the root; top-down (largest first) for scatter. */
static void children(collc_prog *P, const collc_choice *c, const node *n, int buf, int gather) {
  for (int i = 0; i < n->t; i++) {
    int l = gather ? i : n->t - 1 - i;
    int64_t W = mr_weight(c->f, l);
    for (int y = 1; y < c->f[l] && n->v + y * W < n->p; y++) {
      int64_t ch = n->v + y * W, len = W < n->p - ch ? W : n->p - ch;
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

static int gen_gather(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  node n = node_of(s, c);
  if (n.v == 0) {
    if (!s->in_place) prog_copy(P, compact(P, BUF_SEND, 0, 1), compact(P, BUF_RECV, s->root, 1));
    children(P, c, &n, BUF_RECV, 1);
    prog_wait(P);
    return P->err;
  }
  collc_opnd mine = compact(P, BUF_SEND, 0, 1);
  if (n.size > 1) {
    prog_need_tmp(P, n.size);
    prog_copy(P, mine, compact(P, BUF_TMP, 0, 1));
    children(P, c, &n, BUF_TMP, 1);
    prog_wait(P);
    mine = compact(P, BUF_TMP, 0, n.size);
  }
  prog_send(P, parent(c, &n), mine);
  prog_wait(P);
  return P->err;
}

static int gen_scatter(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  node n = node_of(s, c);
  if (n.v == 0) {
    int in = s->in_place ? BUF_RECV : BUF_SEND;
    children(P, c, &n, in, 0);
    if (!s->in_place) prog_copy(P, compact(P, BUF_SEND, s->root, 1), compact(P, BUF_RECV, 0, 1));
    prog_wait(P);
    return P->err;
  }
  if (n.size == 1) {
    prog_recv(P, parent(c, &n), compact(P, BUF_RECV, 0, 1));
    prog_wait(P);
    return P->err;
  }
  prog_need_tmp(P, n.size);
  prog_recv(P, parent(c, &n), compact(P, BUF_TMP, 0, n.size));
  prog_wait(P);
  prog_copy(P, compact(P, BUF_TMP, 0, 1), compact(P, BUF_RECV, 0, 1));
  children(P, c, &n, BUF_TMP, 0);
  prog_wait(P);
  return P->err;
}

#define GTREE_ROW(var, coll, gen)                                                            \
  const collc_algo var = {"tree", coll, tree_parse, tree_resolve, gen, tree_format,          \
                          "tree[:k1,k2,...]", "k-nomial tree with per-level fan-in, any root", \
                          ALGO_ANY}
GTREE_ROW(algo_gather_tree, COLLC_COLL_GATHER, gen_gather);
GTREE_ROW(algo_scatter_tree, COLLC_COLL_SCATTER, gen_scatter);
