/* hier_a2av.c - node-aware all-to-all with per-rank counts (MPI_Alltoallv):
 * hier_move.c's two-level all-to-all over unequal blocks (see hier.h for
 * the segment protocol).
 *
 * Every rank copies its send blocks, packed in destination order, into its
 * region of the node's segment (regions of S units: the node's largest send
 * total); the blocks from my own node come straight out of the regions; for
 * a rank d of another node, local rank (local(d) mod k) of my node sends d
 * one message holding the blocks of my node's k ranks for d, in local
 * order, read from the regions in place; d receives it from that rank into
 * its displacements. So each rank sends and receives at most (nodes - 1)
 * messages, not p - 1; an empty column (every local block for d empty) is
 * not sent, and d, whose receive counts say the same, posts no receive.
 * Nodes of one rank send their own blocks straight from the input.
 *
 * What it needs: every local rank's send counts (packed offsets in the
 * regions, the columns' pieces), so spec.vall. MPI gives each rank only
 * its own vectors; blocking and persistent calls make an agreement round
 * that gives every rank all ranks' send sides (src/mpi/agree.c: one
 * allgather); nonblocking ones start it too, but this row uses the node
 * segment, which a nonblocking call cannot make (it does not fit there). It
 * reads no other rank's receive side or displacements (only its own
 * buffers' offsets: the verifier gives it zeros there), and takes the SEND
 * and RECV units to be of one size on every rank (the round checks that).
 */
#include <stdlib.h>
#include "hier.h"

/* The offsets of my node's ranks' blocks in their regions: pre[j (p + 1) + q]
 * units local rank j sends before its block for q (packed in destination
 * order; q = p: its total), into pre (room for k (p + 1)). */
static void packed_offsets(const hx *H, int64_t *pre) {
  int p = H->s->p;
  for (int j = 0; j < H->k; j++) {
    int64_t *row = pre + (size_t)j * (p + 1);
    row[0] = 0;
    for (int q = 0; q < p; q++) row[q + 1] = row[q] + a2av_count(H->s, hier_rank(H, j), A2AV_SEND, q);
  }
}

/* The largest send total of my node's ranks (the region size). */
static int64_t region_units(const hx *H, const int64_t *pre) {
  int64_t most = 0;
  for (int j = 0, p = H->s->p; j < H->k; j++) {
    int64_t total = pre[(size_t)j * (p + 1) + p];
    if (total > most) most = total;
  }
  return most;
}

/* Operand of the column for rank d: each local rank's block for d in its
 * region, local order (empty blocks skipped); *units: their sum. off, len:
 * room for k runs. */
static collc_opnd column(hx *H, const int64_t *pre, int d, int64_t *off, int64_t *len,
                         int64_t *units) {
  int n = 0, p = H->s->p;
  *units = 0;
  for (int j = 0; j < H->k; j++) {
    const int64_t *row = pre + (size_t)j * (p + 1);
    int64_t c = row[d + 1] - row[d];
    if (c) off[n] = j * H->S + row[d], len[n++] = c, *units += c;
  }
  return prog_opnd_runs(H->P, BUF_SHM, n, off, len);
}

/* Operand of my receive blocks from node n's ranks, local order, at my
 * displacements (empty ones skipped); *units: their sum. */
static collc_opnd from_node(hx *H, int n, int64_t *off, int64_t *len, int64_t *units) {
  const collc_spec *s = H->s;
  int m = 0;
  *units = 0;
  for (int i = 0; i < H->L->size[n]; i++) {
    int q = layout_rank(H->L, n, i);
    int64_t c = a2av_count(s, s->rank, A2AV_RECV, q);
    if (c) off[m] = a2av_displ(s, s->rank, A2AV_RECV, q), len[m++] = c, *units += c;
  }
  return prog_opnd_runs(H->P, BUF_RECV, m, off, len);
}

/* The input: my blocks into my region at their offsets pre (k > 1), else
 * SEND, or in place a TMP copy of RECV (receives overwrite blocks still to
 * send). Returns the buffer my blocks are read from when k == 1. */
static int stage_input(hx *H, const int64_t *pre) {
  const collc_spec *s = H->s;
  collc_prog *P = H->P;
  int r = s->rank, in = s->in_place ? BUF_RECV : BUF_SEND;
  if (H->k == 1 && !s->in_place) return BUF_SEND;
  int64_t all = prog_buf_units(P, in);
  if (H->k == 1) {
    if (all) prog_need_tmp(P, all), prog_copy(P, compact(P, in, 0, all), compact(P, BUF_TMP, 0, all));
    return BUF_TMP;
  }
  hier_enter(H);
  for (int q = 0; q < s->p; q++) {
    int64_t c = a2av_count(s, r, A2AV_SEND, q), at = pre[(size_t)H->me * (s->p + 1) + q];
    if (c) prog_copy(P, compact(P, in, a2av_displ(s, r, A2AV_SEND, q), c), hier_region(H, H->me, at, c));
  }
  prog_signal(P, 1);
  hier_await_all(H, 1);
  return BUF_SHM;
}

/* My sends to node `to`: for each rank d there that I serve, its column
 * (k == 1: my own block, from buffer in). */
static void send_node(hx *H, const int64_t *pre, int to, int in, int64_t *off, int64_t *len) {
  const collc_spec *s = H->s;
  for (int i = H->me; i < H->L->size[to]; i += H->k) {
    int d = layout_rank(H->L, to, i);
    int64_t n = a2av_count(s, s->rank, A2AV_SEND, d);
    collc_opnd o = H->k > 1 ? column(H, pre, d, off, len, &n)
                            : compact(H->P, in, a2av_displ(s, s->rank, A2AV_SEND, d), n);
    if (n) prog_send(H->P, d, o);
  }
}

int hier_gen_alltoallv(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  hx H;
  int r = s->rank, N, p = s->p;
  const collc_layout *L = s->layout;
  int k = L->size[L->node_of[r]];
  int64_t *off = malloc((2 * ((size_t)p + 1) + (size_t)k * (p + 1)) * sizeof *off);
  int64_t *len = off ? off + p + 1 : NULL, *pre = off ? len + p + 1 : NULL;
  if (!off) return prog_fail(P, COLLC_ENOMEM, "hier: out of memory"), P->err;
  H.s = s, H.L = L, H.node = L->node_of[r], H.k = k; /* (what packed_offsets reads) */
  packed_offsets(&H, pre);
  hier_init(&H, s, c, P, region_units(&H, pre));
  N = H.L->nnodes;
  int in = stage_input(&H, pre);
  for (int j = 1; j < N; j++) { /* node - j sends to me, node + j gets mine */
    int from = (H.node - j + N) % N;
    int64_t n;
    collc_opnd o = from_node(&H, from, off, len, &n);
    if (n) prog_recv(P, layout_rank(H.L, from, H.L->local_of[r] % H.L->size[from]), o);
    send_node(&H, pre, (H.node + j) % N, in, off, len);
  }
  for (int j = 0; j < H.k; j++) { /* my node's blocks for me */
    int q = hier_rank(&H, j);
    int64_t cnt = a2av_count(s, r, A2AV_RECV, q);
    if (!cnt) continue;
    collc_opnd src = H.k > 1 ? hier_region(&H, j, pre[(size_t)j * (p + 1) + r], cnt)
                             : compact(P, in, a2av_displ(s, r, A2AV_SEND, r), cnt);
    prog_copy(P, src, compact(P, BUF_RECV, a2av_displ(s, r, A2AV_RECV, q), cnt));
  }
  prog_wait(P);
  hier_leave(&H);
  free(off);
  return P->err;
}
