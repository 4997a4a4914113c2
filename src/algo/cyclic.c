/* cyclic.c - cyclic shift (Bruck-Ho) with a per-step factor list:
 * allreduce, reduce_scatter_block, allgather, and (the same code over
 * unequal blocks: block r is spec.counts[r] elements) reduce_scatter and
 * allgatherv.
 *
 * J. Bruck, C.-T. Ho, "Efficient global combine operations in multi-port
 * message-passing systems", Parallel Processing Letters 3(4), 1993;
 * multi-radix form after Jocksch et al., IJHPCA 2026, section 2.2.
 *
 * Parameters: cyclic:<steps>, "-k" reduce-scatter steps then "k" (or "+k")
 * allgather steps. Each list's product must be at least p (not equal): 7
 * ranks run -2,-2,-2,2,2,2 or -3,-3,3,3, so primes do not degenerate to a
 * single factor {p}. Default: radix 2, ceil(log2 p) steps each.
 *
 * Blocks are named relative to the rank: rank q's block j is absolute block
 * (q + j) mod p. Allgather (Bruck): after steps of radices g_1..g_s rank q
 * holds blocks j < W = g_1...g_s; step s+1 with radix k gets from q + zW
 * (z = 1..k-1) its W blocks, which are its blocks j' and our zW + j'.
 * Reduce-scatter is the transpose, steps in the given order with weight
 * W = product of the later radices: the partial sums of blocks zW + j0
 * (j0 < W) go to rank q + zW, where they are block j0, and are added to its
 * partial. After the last step rank q holds block q summed over all ranks.
 * No rotation is ever copied: messages are lists of blocks at their own
 * positions (wrapping lists are two runs).
 *
 * Restrictions: commutative operations only (contributions arrive in cyclic
 * order). Each block is still reduced on one rank only, so floating point
 * results are bitwise identical everywhere. Cost: a step of radix k at
 * weight W sends k - 1 messages of at most W blocks: for radix 2,
 * ceil(log2 p) (alpha + ~n/2 beta m) per half, like recursive halving.
 * Scratch: the receive staging ((k - 1) W blocks); reduce_scatter_block
 * keeps partial sums in TMP (p blocks) and, in place, a copy of the input.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algo.h"
#include "blocks.h"
#include "patterns.h"

typedef struct {
  const collc_spec *s;
  collc_prog *P;
  blocks B;      /* p blocks */
  int rsb;       /* reduce_scatter_block: block j = 0 accumulates in RECV+0 */
  int buf_in;    /* input, natural placement */
  int64_t base_in;
  int buf_acc;   /* partial sums, natural placement */
  int64_t base_acc;
  int64_t stage; /* TMP offset of the staging area */
  int64_t done;  /* relative blocks j < done have their partial sum in acc */
  int *list;     /* scratch: p block indices */
} cy;

/* Units of rank q's relative blocks [j1, j2). */
static int64_t rel_units(const cy *C, int q, int64_t j1, int64_t j2) {
  int64_t u = 0;
  for (int64_t j = j1; j < j2; j++) u += C->B.len[mod_pos(q + j, C->s->p)];
  return u;
}

/* Operand of rank q's relative blocks [j1, j2) at (buf, base), natural. */
static collc_opnd rel_opnd(cy *C, int q, int64_t j1, int64_t j2, int buf, int64_t base) {
  int n = 0;
  for (int64_t j = j1; j < j2; j++) C->list[n++] = (int)mod_pos(q + j, C->s->p);
  return blocks_list(C->P, &C->B, buf, base, C->list, n);
}

/* [j1, j2) cut where partial sums end: [j1, mid) in acc, [mid, j2) input. */
static int64_t cut(const cy *C, int64_t j1, int64_t j2) {
  return C->done < j1 ? j1 : C->done > j2 ? j2 : C->done;
}

/* Send my relative blocks [j1, j2) (partial sums, else input) to `to`. */
static void send_span(cy *C, int to, int64_t j1, int64_t j2) {
  int q = C->s->rank;
  int64_t mid = cut(C, j1, j2);
  if (rel_units(C, q, j1, mid)) prog_send(C->P, to, rel_opnd(C, q, j1, mid, C->buf_acc, C->base_acc));
  if (rel_units(C, q, mid, j2)) prog_send(C->P, to, rel_opnd(C, q, mid, j2, C->buf_in, C->base_in));
}

/* Receive what `from` sends with send_span(j1, j2), staged from TMP+at;
 * returns the units staged. */
static int64_t recv_span(cy *C, int from, int64_t j1, int64_t j2, int64_t at) {
  int64_t mid = cut(C, j1, j2), u1 = rel_units(C, from, j1, mid), u2 = rel_units(C, from, mid, j2);
  if (u1) prog_recv(C->P, from, compact(C->P, BUF_TMP, at, u1));
  if (u2) prog_recv(C->P, from, compact(C->P, BUF_TMP, at + u1, u2));
  return u1 + u2;
}

/* Where my relative blocks [j1, j2) accumulate (reduce_scatter_block keeps
 * block 0, its own result, in RECV). */
static collc_opnd acc_opnd(cy *C, int64_t j1, int64_t j2) {
  if (C->rsb && j1 == 0) return compact(C->P, BUF_RECV, 0, rel_units(C, C->s->rank, 0, 1));
  return rel_opnd(C, C->s->rank, j1, j2, C->buf_acc, C->base_acc);
}

/* Add staged partial sums (TMP+at) of my blocks [j1, j2) into acc: reduce
 * into existing partial sums, combine with the input for the others. */
static void add_staged(cy *C, int64_t at, int64_t j1, int64_t j2) {
  int q = C->s->rank;
  while (j1 < j2) {
    int64_t end = C->rsb && j1 == 0 ? 1 : j2, mid = cut(C, j1, end);
    int64_t u1 = rel_units(C, q, j1, mid), u2 = rel_units(C, q, mid, end);
    if (u1) prog_reduce(C->P, compact(C->P, BUF_TMP, at, u1), acc_opnd(C, j1, mid));
    if (u2)
      prog_combine(C->P, compact(C->P, BUF_TMP, at + u1, u2),
                   rel_opnd(C, q, mid, end, C->buf_in, C->base_in), acc_opnd(C, mid, end));
    at += u1 + u2;
    j1 = end;
  }
}

/* Reduce-scatter step with radix k at weight W over my blocks [0, *L). */
static void rs_step(cy *C, int k, int64_t W, int64_t *L) {
  int p = C->s->p, q = C->s->rank;
  int64_t at = C->stage, *start = malloc(2 * (size_t)k * sizeof *start), *ends = start + k;
  if (!start) {
    prog_fail(C->P, COLLC_ENOMEM, "cyclic: out of memory");
    return;
  }
  for (int z = 1; z < k && z * W < *L; z++) {
    int64_t end = z * W + W < *L ? z * W + W : *L;
    start[z] = at;
    ends[z] = end - z * W;
    at += recv_span(C, (int)mod_pos(q - z * W, p), z * W, end, at);
    send_span(C, (int)mod_pos(q + z * W, p), z * W, end);
  }
  prog_wait(C->P);
  prog_need_tmp(C->P, at);
  for (int z = 1; z < k && z * W < *L; z++) {
    add_staged(C, start[z], 0, ends[z]);
    if (ends[z] > C->done) C->done = ends[z];
  }
  if (W < *L) *L = W;
  free(start);
}

/* Allgather step with radix k over my blocks [0, W) in RECV (W < p). */
static void ag_step(cy *C, int k, int64_t W) {
  int p = C->s->p, q = C->s->rank;
  for (int z = 1; z < k && z * W < p; z++) {
    int64_t n = W < p - z * W ? W : p - z * W;
    if (rel_units(C, q, z * W, z * W + n)) /* the sender computes the same units */
      prog_recv(C->P, (int)mod_pos(q + z * W, p), rel_opnd(C, q, z * W, z * W + n, BUF_RECV, 0));
    if (rel_units(C, q, 0, n))
      prog_send(C->P, (int)mod_pos(q - z * W, p), rel_opnd(C, q, 0, n, BUF_RECV, 0));
  }
  prog_wait(C->P);
}

/* Buffers: input, partial sums and staging for spec s. */
static void cy_places(cy *C, int64_t vec) {
  const collc_spec *s = C->s;
  C->buf_in = s->in_place ? BUF_RECV : BUF_SEND, C->base_in = 0;
  C->buf_acc = BUF_RECV, C->base_acc = 0;
  C->done = s->in_place ? s->p : 0; /* in place: the input is the partial sum */
  if (C->rsb) { /* partial sums in TMP (block 0 in RECV), in place input copied too */
    C->buf_acc = BUF_TMP, C->done = 0, C->stage = vec;
    if (s->in_place) {
      prog_copy(C->P, compact(C->P, BUF_RECV, 0, vec), compact(C->P, BUF_TMP, vec, vec));
      C->buf_in = BUF_TMP, C->base_in = vec, C->stage = 2 * vec;
    }
  }
  prog_need_tmp(C->P, C->stage);
}

static int cyclic_gen(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  cy C;
  int rs[COLLC_MAXF], ag[COLLC_MAXF], nrs = steps_of(c, '-', rs), nag = steps_of(c, '+', ag);
  int64_t vec = coll_desc_of(s->coll)->vector_units(s);
  memset(&C, 0, sizeof C);
  int ag_only = coll_family(s->coll) == COLLC_COLL_ALLGATHER;
  C.s = s, C.P = P, C.rsb = coll_family(s->coll) == COLLC_COLL_REDUCE_SCATTER_BLOCK;
  C.list = malloc((size_t)s->p * sizeof *C.list);
  int rc = !C.list ? -1 : s->coll == COLLC_COLL_ALLREDUCE
                              ? blocks_split(P, &C.B, s->p, vec, s->unit_bytes)
                              : blocks_of_ranks(P, &C.B, s, vec);
  if (rc) {
    if (!P->err) prog_fail(P, COLLC_ENOMEM, "out of memory");
    free(C.list);
    return P->err;
  }
  cy_places(&C, vec);
  int64_t L = s->p, W = 1;
  for (int i = 0; i < nrs; i++) {
    int64_t w = 1;
    for (int j = i + 1; j < nrs; j++) w = w * rs[j] < s->p ? w * rs[j] : s->p;
    rs_step(&C, rs[i], w, &L);
  }
  int64_t mine = C.B.len[s->rank];
  if (!ag_only && C.done == 0 && mine) /* p == 1: no step touched the input */
    prog_copy(P, rel_opnd(&C, s->rank, 0, 1, C.buf_in, C.base_in), acc_opnd(&C, 0, 1));
  if (ag_only && !s->in_place && mine)
    prog_copy(P, compact(P, BUF_SEND, 0, mine), compact(P, BUF_RECV, C.B.start[s->rank], mine));
  for (int i = 0; i < nag && W < s->p; W *= ag[i++]) ag_step(&C, ag[i], W);
  blocks_free(&C.B);
  free(C.list);
  return P->err;
}

static int cyclic_parse(const char *params, collc_choice *c, char *why, size_t wlen) {
  return parse_steps(params, c, "-+", why, wlen);
}

static int cyclic_resolve(const collc_spec *s, collc_choice *c, char *why, size_t wlen) {
  int fam = coll_family(s->coll);
  int need_rs = fam != COLLC_COLL_ALLGATHER, need_ag = fam != COLLC_COLL_REDUCE_SCATTER_BLOCK;
  if (c->nf == 0) {
    for (int64_t w = 1; need_rs && w < s->p; w *= 2) c->step[c->nf] = '-', c->f[c->nf++] = 2;
    for (int64_t w = 1; need_ag && w < s->p; w *= 2) c->step[c->nf] = '+', c->f[c->nf++] = 2;
  }
  int64_t rs = steps_product(c, '-'), ag = steps_product(c, '+');
  int ok = (need_rs ? rs >= s->p : rs == 1) && (need_ag ? ag >= s->p : ag == 1);
  if (coll_reduces(s->coll) && !s->commutative) {
    snprintf(why, wlen, "cyclic needs a commutative operation");
    return COLLC_EUNFIT;
  }
  if (!ok) {
    char list[160];
    format_steps(c, list, sizeof list);
    snprintf(why, wlen, "cyclic:%s does not fit %s on p = %d (products must be >= p)", list,
             coll_name(s->coll), s->p);
    return COLLC_EUNFIT;
  }
  return 0;
}

static void cyclic_format(const collc_choice *c, char *buf, size_t len) {
  format_steps(c, buf, len);
}

#define CYCLIC_ROW(var, coll, syntax)                                                        \
  const collc_algo var = {"cyclic", coll, cyclic_parse, cyclic_resolve, cyclic_gen,           \
                          cyclic_format, syntax,                                             \
                          "cyclic shift (Bruck-Ho), factor products >= p; commutative only", \
                          ALGO_ANY, 0}
CYCLIC_ROW(algo_allreduce_cyclic, COLLC_COLL_ALLREDUCE, "cyclic[:-a,-b,...,b,a]");
CYCLIC_ROW(algo_rsb_cyclic, COLLC_COLL_REDUCE_SCATTER_BLOCK, "cyclic[:-a,-b,...]");
CYCLIC_ROW(algo_allgather_cyclic, COLLC_COLL_ALLGATHER, "cyclic[:a,b,...]");
CYCLIC_ROW(algo_rs_cyclic, COLLC_COLL_REDUCE_SCATTER, "cyclic[:-a,-b,...]");
CYCLIC_ROW(algo_allgatherv_cyclic, COLLC_COLL_ALLGATHERV, "cyclic[:a,b,...]");
