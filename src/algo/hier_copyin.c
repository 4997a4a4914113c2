/* hier_copyin.c - cyclic copy-in reduction inside a node:
 * hier:node=copyin[:g=N] for allreduce, reduce_scatter_block and reduce.
 *
 * After A. Jocksch et al. (IJHPCA 2026), section 2.4, Figure 8: for large
 * vectors, copying into the node's shared segment and reducing are one
 * step. The k ranks of a node form groups of g consecutive local ranks
 * (the last one smaller where g does not divide k). A group of h members
 * sums its vectors into the region of its first member, cut into h pieces
 * of whole cache lines (blocks.h). In action a = 0..h-1 member t puts
 * piece (t + a) mod h of its own input into the sum: a copy at a = 0, a
 * reduction after. So in every action each piece is written by another
 * member, cyclically; with four: pieces 0,1,2,3 get the data of members
 * 0,1,2,3, then 3,0,1,2, then 2,3,0,1, then 1,2,3,0 (the paper's figure).
 * Member t SIGNALs a+1 after action a and, before action a >= 1, AWAITs
 * step a of member t+1, the piece's previous writer: one flag per step
 * instead of a barrier, h(h-1) flag checks per group (the paper's
 * quadratic barrier cost), and piece j is final at step h of member j+1.
 *
 * The groups then combine in shared memory (hier_copyin_fold): a range of
 * the node's sum is the fold of the groups' sums, in group order, after
 * awaiting the final writers of the pieces it covers. hier.c builds
 * allreduce (node=rs on the group sums; one group on one node: every rank
 * copies the sum out) and reduce on it, hier_move.c reduce_scatter_block.
 *
 * Cost (n units, k ranks per node, G = ceil(k/g) groups): per rank n units
 * reduced from its input into the segment (no separate copy-in pass) in g
 * flag steps, then the collective's fold of G group sums instead of k
 * regions (with one group none). g trades the copy-in's g sequential steps
 * against the G-way fold. Segment: a vector per rank, as node=rs (only
 * the groups' first members' hold sums). Restriction: commutative
 * operations only (a piece combines its members in cyclic order). Default
 * g = min(8, ranks per node).
 */
#include <stdio.h>
#include <stdlib.h>
#include "hier.h"

#define COPYIN_GROUP 8 /* default ranks per group */

/* Group q of my node: its first local rank and its size. */
static int group_first(const hx *H, int q) { return q * H->g; }
static int group_size(const hx *H, int q) {
  int left = H->k - q * H->g;
  return left < H->g ? left : H->g;
}

int hier_copyin_resolve(const collc_spec *s, collc_choice *c, char *why, size_t wlen) {
  if (!s->commutative) {
    snprintf(why, wlen, "node=copyin: commutative operations only (pieces sum in cyclic order)");
    return COLLC_EUNFIT;
  }
  if (!c->group) c->group = s->layout->max_size < COPYIN_GROUP ? s->layout->max_size : COPYIN_GROUP;
  return 0;
}

void hier_copyin_init(hx *H, int g) { H->g = g < 1 ? 1 : g < H->k ? g : H->k; }

void hier_copyin_stage(hx *H, int64_t n) {
  collc_prog *P = H->P;
  int f = group_first(H, H->me / H->g), h = group_size(H, H->me / H->g), t = H->me - f;
  blocks B;
  H->next = H->g + 1;
  if (blocks_split(P, &B, h, n, H->s->unit_bytes)) return;
  hier_enter(H);
  for (int a = 0; a < h; a++) {
    int j = (t + a) % h; /* my piece of action a */
    if (B.len[j]) {
      collc_opnd in = hier_input(H, B.start[j], B.len[j]);
      collc_opnd sum = hier_region(H, f, B.start[j], B.len[j]);
      if (a == 0) {
        prog_copy(P, in, sum);
      } else { /* after the piece's previous writer */
        prog_await(P, hier_rank(H, f + (t + 1) % h), a);
        prog_reduce(P, in, sum);
      }
    }
    prog_signal(P, a + 1);
  }
  blocks_free(&B);
}

/* AWAIT the final writers of group q's pieces that meet one of the nr
 * ranges [off[i], off[i]+n). */
static void await_group(hx *H, int q, const int64_t *off, int nr, int64_t n) {
  int f = group_first(H, q), h = group_size(H, q);
  blocks B;
  if (blocks_split(H->P, &B, h, H->staged, H->s->unit_bytes)) return;
  for (int j = 0; j < h; j++) {
    int w = f + (j + 1) % h, meets = 0; /* w: the writer of piece j's last action */
    for (int i = 0; i < nr && B.len[j]; i++)
      meets |= B.start[j] < off[i] + n && off[i] < B.start[j] + B.len[j];
    if (meets && w != H->me) prog_await(H->P, hier_rank(H, w), h);
  }
  blocks_free(&B);
}

void hier_copyin_await(hx *H, const int64_t *off, int nr, int64_t n) {
  for (int q = 0; q < (H->k + H->g - 1) / H->g; q++) await_group(H, q, off, nr, n);
}

void hier_copyin_fold(hx *H, int64_t off, int64_t n, collc_opnd dst) {
  int G = (H->k + H->g - 1) / H->g;
  collc_opnd *sums = malloc((size_t)G * sizeof *sums);
  if (!sums) {
    prog_fail(H->P, COLLC_ENOMEM, "hier: out of memory");
    return;
  }
  for (int q = 0; q < G; q++) {
    if (!H->ready) await_group(H, q, &off, 1, n);
    sums[q] = hier_region(H, group_first(H, q), off, n);
  }
  hier_fold(H->P, sums, G, dst);
  free(sums);
}
