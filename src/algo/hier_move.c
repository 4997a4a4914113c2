/* hier_move.c - node-aware allgather, all-to-all and reduce_scatter_block,
 * and (the same generators over unequal blocks, blocks_of_ranks) allgatherv
 * and reduce_scatter (see hier.h for the segment protocol).
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
 * Counted forms: block q is s->counts[q] units (allgatherv: at displs in
 * RECV, packed in rank order in the segment); a node whose blocks are all
 * empty sends no message and none is sent to it, and an empty block is
 * neither folded nor sent. No node= or net= parameters for them.
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

/* Operand of node n's ranks' blocks of B in buf, in local order, and
 * (*units) how many units they hold. */
static collc_opnd node_blocks(hx *H, const blocks *B, int buf, int n, int64_t *units) {
  const int *m = H->L->members + H->L->first[n];
  *units = 0;
  for (int i = 0; i < H->L->size[n]; i++) *units += B->len[m[i]];
  return blocks_list(H->P, B, buf, 0, m, H->L->size[n]);
}

/* Local rank 0's exchange of its node's blocks (B's, in buf) with every
 * other node's local rank 0, after its node's blocks are in; a node whose
 * blocks are all empty sends nothing, and nothing is received from it. */
static void exchange_nodes(hx *H, const blocks *B, int buf) {
  collc_prog *P = H->P;
  int N = H->L->nnodes;
  int64_t n_ours, n_from;
  if (H->k > 1) hier_await_all(H, 1);
  collc_opnd ours = node_blocks(H, B, buf, H->node, &n_ours);
  for (int j = 1; j < N; j++) { /* node + j receives ours, node - j sends */
    int to = (H->node + j) % N, from = (H->node - j + N) % N;
    collc_opnd theirs = node_blocks(H, B, buf, from, &n_from);
    if (n_from) prog_recv(P, layout_rank(H->L, from, 0), theirs);
    if (n_ours) prog_send(P, layout_rank(H->L, to, 0), ours);
  }
  prog_wait(P);
}

/* Allgather(v) after every block is in the segment at K's positions:
 * every rank copies the p blocks (vec units) out to R's, its own
 * included; in one piece where both are packed (no displs). */
static void gather_out(hx *H, const blocks *R, const blocks *K, int64_t vec) {
  collc_prog *P = H->P;
  prog_signal(P, 2);
  if (H->L->nnodes == 1) hier_await_all(H, 1); /* (one node: every rank's own step 1) */
  else if (H->me != 0) prog_await(P, hier_rank(H, 0), 2);
  if (!H->s->displs && vec) prog_copy(P, compact(P, BUF_SHM, 0, vec), compact(P, BUF_RECV, 0, vec));
  for (int q = 0; H->s->displs && q < H->s->p; q++)
    if (R->len[q]) prog_copy(P, compact(P, BUF_SHM, K->start[q], K->len[q]),
                             compact(P, BUF_RECV, R->start[q], R->len[q]));
}

int hier_gen_allgather(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  hx H;
  blocks R = {0}, K = {0}; /* the blocks in RECV (allgatherv: at displs), in the segment */
  collc_spec packed = *s;
  int r = s->rank;
  packed.displs = NULL;
  hier_init(&H, s, c, P, 0);
  int64_t vec = coll_desc_of(s->coll)->vector_units(&packed);
  if (blocks_of_ranks(P, &R, s, vec) || blocks_of_ranks(P, &K, &packed, vec))
    return blocks_free(&R), P->err;
  int64_t n = R.len[r];
  collc_opnd mine = s->in_place ? compact(P, BUF_RECV, R.start[r], n) : compact(P, BUF_SEND, 0, n);
  if (H.k > 1) {
    prog_need_shm(P, vec > 0 ? vec : 1);
    hier_enter(&H);
    if (n) prog_copy(P, mine, compact(P, BUF_SHM, K.start[r], n));
    prog_signal(P, 1);
  } else if (!s->in_place && n) {
    prog_copy(P, mine, compact(P, BUF_RECV, R.start[r], n));
  }
  if (H.me == 0 && H.L->nnodes > 1)
    exchange_nodes(&H, H.k > 1 ? &K : &R, H.k > 1 ? BUF_SHM : BUF_RECV);
  if (H.k > 1) gather_out(&H, &R, &K, vec), hier_leave(&H);
  blocks_free(&R), blocks_free(&K);
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

/* AWAIT what folding my blocks reads (d: room for p ranks): the blocks
 * (B's) of the ranks I serve on the other nodes, and mine; before any send.
 * (Equal blocks of n units: node=copyin awaits only these.) */
static void await_served(hx *H, const blocks *B, int *d) {
  int64_t *off = malloc(((size_t)H->s->p + 1) * sizeof *off);
  int cnt = 0;
  if (!off) {
    prog_fail(H->P, COLLC_ENOMEM, "hier: out of memory");
    return;
  }
  for (int j = 1; j < H->L->nnodes; j++)
    for (int i = 0, m = served(H, (H->node + j) % H->L->nnodes, H->me, H->k, d); i < m; i++)
      off[cnt++] = B->start[d[i]];
  off[cnt++] = B->start[H->s->rank];
  hier_node_await(H, off, cnt, B->len[H->s->rank]);
  free(off);
}

/* Fold and send the partials of the blocks (B's) of the ranks I serve on
 * the other nodes (d: room for p ranks), staged in TMP from 0 on; the
 * TMP units used. Empty blocks send nothing. */
static int64_t send_partials(hx *H, const blocks *B, int *d) {
  collc_prog *P = H->P;
  int64_t at = 0;
  for (int j = 1; j < H->L->nnodes; j++) {
    int to = (H->node + j) % H->L->nnodes;
    for (int i = 0, cnt = served(H, to, H->me, H->k, d); i < cnt; i++) {
      int64_t o = B->start[d[i]], n = B->len[d[i]];
      if (!n) continue;
      collc_opnd part = H->k > 1 ? compact(P, BUF_TMP, at, n) : hier_input(H, o, n);
      if (H->k > 1) hier_node_fold(H, o, n, part), at += n;
      prog_send(P, d[i], part);
    }
  }
  return at;
}

int hier_gen_rsb(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  hx H;
  blocks B = {0}; /* rank q's block of the input: packed, s->counts[q] units (else count) */
  int p = s->p, r = s->rank, N, *d = malloc((size_t)p * sizeof *d);
  int64_t vec = coll_desc_of(s->coll)->vector_units(s);
  hier_init(&H, s, c, P, vec);
  N = H.L->nnodes;
  if (!d || blocks_of_ranks(P, &B, s, vec))
    return free(d), prog_fail(P, COLLC_ENOMEM, "hier: out of memory"), P->err;
  int64_t n = B.len[r];
  if (H.k > 1) {
    hier_stage(&H, vec);
    await_served(&H, &B, d);
  }
  int64_t at = send_partials(&H, &B, d), stage; /* TMP: partials sent, my own, those received */
  collc_opnd own = compact(P, BUF_TMP, at, n); /* (never RECV: the fold writes there) */
  if (H.k > 1 && n) hier_node_fold(&H, B.start[r], n, own);
  else if (n) prog_copy(P, hier_input(&H, B.start[r], n), own);
  at += n;
  stage = at;
  for (int j = 1; j < N && n; j++) {
    int from = (H.node - j + N) % N;
    int m = from < H.node ? from : from - 1; /* staging slot: node order without mine */
    prog_recv(P, layout_rank(H.L, from, H.L->local_of[r] % H.L->size[from]),
              compact(P, BUF_TMP, stage + m * n, n));
  }
  prog_need_tmp(P, stage + (N - 1) * n);
  prog_wait(P);
  if (n) fold_nodes(&H, stage, own, n);
  hier_leave(&H);
  blocks_free(&B);
  free(d);
  return P->err;
}
