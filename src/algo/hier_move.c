/* hier_move.c - node-aware allgather, all-to-all and reduce_scatter_block
 * (see hier.h for the segment protocol).
 *
 * Allgather: every rank puts its block into the segment at its rank's
 * position; with several nodes, local rank 0 of each node exchanges its
 * node's blocks with the other nodes' rank 0s directly, receiving straight
 * into the segment; everyone copies the p blocks out.
 * All-to-all (two-level, the torus idea with the node as one dimension):
 * every rank copies its p send blocks into its region; the blocks for my
 * node's ranks come straight out of the regions; for a rank d of another
 * node, local rank (local(d) mod k) of my node sends d one message holding
 * all k blocks for d, read from the k regions in place (no packing copy).
 * So each rank sends and receives (nodes - 1) messages, not p - 1.
 * Reduce_scatter_block: every rank copies its input vector into its
 * region (node=copyin: the groups' copy-in reductions, hier_copyin.c); for
 * each rank d, local rank (local(d) mod k) of my node folds block d of the
 * k regions (of the groups' sums) into the node's partial and sends it to
 * d; d folds the nodes' partials in node order.
 */
#include <stdlib.h>
#include "hier.h"

/* Operand over segment or buffer positions pos[0..n) of one unit each
 * (runs merged), at base + pos[i]. */
static collc_opnd positions(collc_prog *P, int buf, int64_t base, const int *pos, int n) {
  int64_t *off = malloc(2 * ((size_t)n + 1) * sizeof *off), *len = off ? off + n + 1 : NULL;
  if (!off) {
    prog_fail(P, COLLC_ENOMEM, "hier: out of memory");
    return opnd(buf, 0, -1);
  }
  for (int i = 0; i < n; i++) off[i] = base + pos[i], len[i] = 1;
  collc_opnd o = prog_opnd_runs(P, buf, n, off, len);
  free(off);
  return o;
}

/* Operand of node n's ranks, one unit each, in buf at base + rank. */
static collc_opnd node_units(hx *H, int n, int buf, int64_t base) {
  return positions(H->P, buf, base, H->L->members + H->L->first[n], H->L->size[n]);
}

int hier_gen_allgather(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  hx H;
  int p = s->p, r = s->rank;
  hier_init(&H, s, c, P, 0);
  collc_opnd mine = s->in_place ? compact(P, BUF_RECV, r, 1) : compact(P, BUF_SEND, 0, 1);
  int buf = H.k > 1 ? BUF_SHM : BUF_RECV; /* where the p blocks gather */
  if (H.k > 1) {
    prog_need_shm(P, p);
    hier_enter(&H);
    prog_copy(P, mine, compact(P, BUF_SHM, r, 1));
    prog_signal(P, 1);
  } else if (!s->in_place) {
    prog_copy(P, mine, compact(P, BUF_RECV, r, 1));
  }
  if (H.me == 0 && H.L->nnodes > 1) {
    if (H.k > 1) hier_await_all(&H, 1);
    collc_opnd ours = node_units(&H, H.node, buf, 0);
    for (int j = 1; j < H.L->nnodes; j++) { /* node + j receives ours, node - j sends */
      int to = (H.node + j) % H.L->nnodes, from = (H.node - j + H.L->nnodes) % H.L->nnodes;
      prog_recv(P, layout_rank(H.L, from, 0), node_units(&H, from, buf, 0));
      prog_send(P, layout_rank(H.L, to, 0), ours);
    }
    prog_wait(P);
  }
  if (H.k == 1) return P->err;
  prog_signal(P, 2);
  int src = H.L->nnodes > 1 ? 0 : -1; /* one node: every rank's own step 1 */
  if (src < 0) hier_await_all(&H, 1);
  else if (H.me != 0) prog_await(P, hier_rank(&H, 0), 2);
  prog_copy(P, compact(P, BUF_SHM, 0, p), compact(P, BUF_RECV, 0, p));
  hier_leave(&H);
  return P->err;
}

/* Ranks d of node n that local rank me of a k-rank node serves. */
static int served(const hx *H, int n, int me, int k, int *out) {
  int cnt = 0;
  for (int i = 0; i < H->L->size[n]; i++)
    if (i % k == me) out[cnt++] = layout_rank(H->L, n, i);
  return cnt;
}

/* Operand of block d in every region of my node (k units, S apart). */
static collc_opnd column(hx *H, int d) {
  int *pos = malloc((size_t)H->k * sizeof *pos);
  if (!pos) return prog_fail(H->P, COLLC_ENOMEM, "hier: out of memory"), opnd(BUF_SHM, 0, -1);
  for (int j = 0; j < H->k; j++) pos[j] = (int)(j * H->S + d);
  collc_opnd o = positions(H->P, BUF_SHM, 0, pos, H->k);
  free(pos);
  return o;
}

int hier_gen_alltoall(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  hx H;
  int p = s->p, r = s->rank, *d = malloc((size_t)p * sizeof *d);
  hier_init(&H, s, c, P, p);
  if (!d) return prog_fail(P, COLLC_ENOMEM, "hier: out of memory"), P->err;
  int in = s->in_place ? BUF_RECV : BUF_SEND, src = H.k > 1 ? BUF_SHM : in;
  if (H.k == 1 && s->in_place) { /* receives overwrite blocks still to send: copy once */
    prog_copy(P, compact(P, BUF_RECV, 0, p), compact(P, BUF_TMP, 0, p));
    prog_need_tmp(P, p);
    in = src = BUF_TMP;
  }
  if (H.k > 1) {
    hier_enter(&H);
    prog_copy(P, compact(P, in, 0, p), hier_region(&H, H.me, 0, p));
    prog_signal(P, 1);
    hier_await_all(&H, 1);
  }
  for (int j = 1; j < H.L->nnodes; j++) { /* node - j sends to me, node + j gets mine */
    int from = (H.node - j + H.L->nnodes) % H.L->nnodes, to = (H.node + j) % H.L->nnodes;
    prog_recv(P, layout_rank(H.L, from, H.L->local_of[r] % H.L->size[from]),
              node_units(&H, from, BUF_RECV, 0));
    for (int i = 0, n = served(&H, to, H.me, H.k, d); i < n; i++)
      prog_send(P, d[i], H.k > 1 ? column(&H, d[i]) : compact(P, src, d[i], 1));
  }
  for (int j = 0; j < H.k; j++) /* my node's blocks for me */
      prog_copy(P, H.k > 1 ? hier_region(&H, j, r, 1) : compact(P, in, r, 1),
                compact(P, BUF_RECV, hier_rank(&H, j), 1));
  prog_wait(P);
  hier_leave(&H);
  free(d);
  return P->err;
}

/* Fold the partials of my block: node order, mine (at my node) included. */
static void fold_nodes(hx *H, int64_t stage, collc_opnd own, int64_t n) {
  collc_opnd *pieces = malloc((size_t)H->L->nnodes * sizeof *pieces);
  if (!pieces) {
    prog_fail(H->P, COLLC_ENOMEM, "hier: out of memory");
    return;
  }
  for (int m = 0, at = 0; m < H->L->nnodes; m++)
    pieces[m] = m == H->node ? own : compact(H->P, BUF_TMP, stage + (at++) * n, n);
  hier_fold(H->P, pieces, H->L->nnodes, compact(H->P, BUF_RECV, 0, n));
  free(pieces);
}

/* AWAIT what folding my blocks reads (d: room for p ranks): the blocks of
 * the ranks I serve on the other nodes, and mine; before any send. */
static void await_served(hx *H, int *d) {
  int64_t n = H->s->count, *off = malloc(((size_t)H->s->p + 1) * sizeof *off);
  int cnt = 0;
  if (!off) {
    prog_fail(H->P, COLLC_ENOMEM, "hier: out of memory");
    return;
  }
  for (int j = 1; j < H->L->nnodes; j++)
    for (int i = 0, m = served(H, (H->node + j) % H->L->nnodes, H->me, H->k, d); i < m; i++)
      off[cnt++] = d[i] * n;
  off[cnt++] = H->s->rank * n;
  hier_node_await(H, off, cnt, n);
  free(off);
}

int hier_gen_rsb(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  hx H;
  int p = s->p, r = s->rank, N, *d = malloc((size_t)p * sizeof *d);
  int64_t n = s->count, at = 0;
  hier_init(&H, s, c, P, p * n);
  N = H.L->nnodes;
  if (!d) return prog_fail(P, COLLC_ENOMEM, "hier: out of memory"), P->err;
  if (H.k > 1) {
    hier_stage(&H, p * n);
    await_served(&H, d);
  }
  int64_t stage; /* TMP: my partials to send, my own, then the ones I receive */
  for (int j = 1; j < N; j++) {
    int to = (H.node + j) % N;
    for (int i = 0, cnt = served(&H, to, H.me, H.k, d); i < cnt; i++) {
      collc_opnd part = H.k > 1 ? compact(P, BUF_TMP, at, n) : hier_input(&H, d[i] * n, n);
      if (H.k > 1) hier_node_fold(&H, d[i] * n, n, part), at += n;
      prog_send(P, d[i], part);
    }
  }
  collc_opnd own = compact(P, BUF_TMP, at, n); /* (never RECV: the fold writes there) */
  if (H.k > 1) hier_node_fold(&H, r * n, n, own);
  else prog_copy(P, hier_input(&H, r * n, n), own);
  at += n;
  stage = at;
  for (int j = 1; j < N; j++) {
    int from = (H.node - j + N) % N;
    int m = from < H.node ? from : from - 1; /* staging slot: node order without mine */
    prog_recv(P, layout_rank(H.L, from, H.L->local_of[r] % H.L->size[from]),
              compact(P, BUF_TMP, stage + m * n, n));
  }
  prog_need_tmp(P, stage + (N - 1) * n);
  prog_wait(P);
  fold_nodes(&H, stage, own, n);
  hier_leave(&H);
  free(d);
  return P->err;
}
