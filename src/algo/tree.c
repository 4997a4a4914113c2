/* tree.c - k-nomial trees with a per-level fan-in list: reduce, bcast, and
 * allreduce as reduce + bcast.
 *
 * Jocksch et al., IJHPCA 2026, section 2.3 (the tree allreduce: intra-node
 * reduce, broadcast); the per-level fan-in generalises the binomial tree.
 *
 * Parameters: tree:<k1>[,<k2>...] fan-in of level 1, 2, ... (level 1 joins
 * consecutive ranks); the last value repeats until the product reaches p.
 * Default tree:2 (binomial). Ranks are mixed-radix digits (k1 fastest);
 * at level t a rank whose digits below t are zero and digit t is z > 0 sends
 * its partial result to the rank with digit t = 0, which combines its own
 * partial with its children's in rank order.
 *
 * Reduce: for commutative operations the tree is rooted at the root (ranks
 * renumbered relative to it); otherwise at rank 0, in rank order, and rank 0
 * sends the result to the root: safe for non-commutative operations.
 * Bcast: the same tree top-down from the root, straight into the buffer.
 * Allreduce: reduce to rank 0, then bcast from rank 0; the result is
 * computed once, so floating point results are bitwise identical.
 * Cost: sum over levels of (k_t - 1)(alpha + beta m n) (+ gamma for
 * reductions) on the critical path. Scratch (reduce): two partial buffers
 * and k - 1 receive slots of n units. No segmentation (long vectors are
 * better served by recexch or cyclic).
 */
#include <stdio.h>
#include <string.h>
#include "algo.h"
#include "blocks.h"
#include "patterns.h"

typedef struct {
  int buf;
  int64_t off;
} at;

/* Highest level with children of the tree root (weight < p); -1 if none. */
static int last_level(const int *R, int m, int p) {
  int t = -1;
  for (int l = 0; l < m; l++)
    if (mr_weight(R, l) < p) t = l;
  return t;
}

static int same_at(at a, at b) { return a.buf == b.buf && a.off == b.off; }

/* Combine my partial with the nc children's, received at this level. */
static at combine_level(collc_prog *P, at part, const at *out, int64_t n, int64_t stage, int nc) {
  at bufs[2] = {{BUF_TMP, 0}, {BUF_TMP, n}};
  at dst = out && !same_at(part, *out) ? *out : bufs[same_at(part, bufs[0])];
  prog_combine(P, nc == 1 ? compact(P, part.buf, part.off, n) : compact(P, BUF_TMP, stage + (nc - 2) * n, n),
               compact(P, BUF_TMP, stage + (nc - 1) * n, n), compact(P, dst.buf, dst.off, n));
  for (int y = nc - 2; y >= 0; y--)
    prog_reduce(P, y ? compact(P, BUF_TMP, stage + (y - 1) * n, n) : compact(P, part.buf, part.off, n),
                compact(P, dst.buf, dst.off, n));
  return dst;
}

/* Reduce n units from `in` up the tree whose root is rank `shift` (ranks
 * renumbered v = rank - shift). At the tree root the result lands in *out
 * (if out) or in TMP; returns where it is. */
static at reduce_up(collc_prog *P, const collc_choice *c, int shift, at in, const at *out,
                    int64_t n) {
  const collc_spec *s = &P->spec;
  int p = s->p, v = (int)mod_pos(s->rank - shift, p), last = last_level(c->f, c->nf, p);
  at part = in;
  int64_t stage = 2 * n;
  for (int t = 0; t < c->nf && v % mr_weight(c->f, t) == 0; t++) {
    int k = c->f[t], W = (int)mr_weight(c->f, t), z = (v / W) % k, nc = 0;
    if (z) { /* a child at this level: send and be done */
      prog_send(P, (int)mod_pos(v - z * W + shift, p), compact(P, part.buf, part.off, n));
      prog_wait(P);
      return part;
    }
    for (int y = 1; y < k && v + (int64_t)y * W < p; y++, nc++)
      prog_recv(P, (int)mod_pos(v + y * W + shift, p), compact(P, BUF_TMP, stage + (y - 1) * n, n));
    prog_wait(P);
    prog_need_tmp(P, stage + (k - 1) * n);
    if (nc) part = combine_level(P, part, v == 0 && t == last ? out : NULL, n, stage, nc);
  }
  if (out && !same_at(part, *out)) { /* p == 1, or the input was the output */
    prog_copy(P, compact(P, part.buf, part.off, n), compact(P, out->buf, out->off, n));
    part = *out;
  }
  return part;
}

/* Broadcast n units of RECV down the tree rooted at rank `shift`. */
static void bcast_down(collc_prog *P, const collc_choice *c, int shift, int64_t n) {
  const collc_spec *s = &P->spec;
  int p = s->p, v = (int)mod_pos(s->rank - shift, p);
  collc_opnd all = compact(P, BUF_RECV, 0, n);
  for (int t = c->nf - 1; t >= 0; t--) { /* top down: a rank receives before it sends */
    int k = c->f[t], W = (int)mr_weight(c->f, t), z;
    if (v % W) continue; /* receives at a lower level */
    if ((z = (v / W) % k)) {
      prog_recv(P, (int)mod_pos(v - z * W + shift, p), all);
      prog_wait(P);
      continue;
    }
    for (int y = 1; y < k && v + (int64_t)y * W < p; y++)
      prog_send(P, (int)mod_pos(v + y * W + shift, p), all);
  }
  prog_wait(P);
}

/* Reduce to `root` over the tree rooted at rank `shift` (the root itself
 * when the operation commutes, else rank 0, which forwards the result). */
static void reduce_to(collc_prog *P, const collc_choice *c, int root, int shift, int64_t n) {
  const collc_spec *s = &P->spec;
  int me = s->rank;
  at in = {s->in_place ? BUF_RECV : BUF_SEND, 0}, recv = {BUF_RECV, 0};
  at got = reduce_up(P, c, shift, in, me == root ? &recv : NULL, n);
  if (me == shift && me != root) {
    prog_send(P, root, compact(P, got.buf, got.off, n));
    prog_wait(P);
  } else if (me == root && me != shift) {
    prog_recv(P, shift, compact(P, BUF_RECV, 0, n));
    prog_wait(P);
  }
}

/* Generators, one per row: bcast, reduce, allreduce (reduce to 0 in rank
 * order, broadcast from 0). */
static int tree_gen_bcast(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  bcast_down(P, c, s->root, s->count);
  return P->err;
}

static int tree_gen_reduce(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  reduce_to(P, c, s->root, s->commutative ? s->root : 0, s->count);
  return P->err;
}

static int tree_gen_allreduce(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  reduce_to(P, c, 0, 0, s->count);
  bcast_down(P, c, 0, s->count);
  return P->err;
}

int tree_parse(const char *params, collc_choice *c, char *why, size_t wlen) {
  c->nf = 1, c->f[0] = 2;
  if (!params) return 0;
  c->nf = parse_int_list(params, strlen(params), ',', c->f, COLLC_MAXF);
  for (int i = 0; i < c->nf; i++)
    if (c->f[i] < 2) c->nf = -1;
  if (c->nf < 1) {
    snprintf(why, wlen, "tree: fan-ins must be integers >= 2, not '%s'", params);
    return COLLC_EINVAL;
  }
  return 0;
}

/* Repeat the last fan-in until the product reaches p. */
int tree_resolve(const collc_spec *s, collc_choice *c, char *why, size_t wlen) {
  int64_t prod = 1;
  int n = 0;
  while (n < c->nf && prod < s->p) prod *= c->f[n++];
  while (prod < s->p && n < COLLC_MAXF) c->f[n] = c->f[n - 1], prod *= c->f[n++];
  c->nf = n;
  if (prod < s->p) {
    snprintf(why, wlen, "tree: fan-ins too small for p = %d", s->p);
    return COLLC_EUNFIT;
  }
  return 0;
}

void tree_format(const collc_choice *c, char *buf, size_t len) {
  size_t at = 0;
  if (len) buf[0] = 0;
  for (int i = 0; i < c->nf && at < len; i++)
    at += (size_t)snprintf(buf + at, len - at, "%s%d", i ? "," : "", c->f[i]);
}

#define TREE_ROW(var, coll, gen)                                                             \
  const collc_algo var = {"tree", coll, tree_parse, tree_resolve, gen, tree_format,          \
                          "tree[:k1,k2,...]", "k-nomial tree with per-level fan-in", ALGO_ANY, 0}
TREE_ROW(algo_allreduce_tree, COLLC_COLL_ALLREDUCE, tree_gen_allreduce);
TREE_ROW(algo_reduce_tree, COLLC_COLL_REDUCE, tree_gen_reduce);
TREE_ROW(algo_bcast_tree, COLLC_COLL_BCAST, tree_gen_bcast);
