/* recexch.c - recursive exchange with a per-step factor list: allreduce,
 * reduce_scatter_block and allgather, and (the same code over unequal
 * blocks) reduce_scatter and allgatherv.
 *
 * A. Jocksch, C. N. Avans, R. Shipley, A. Skjellum, "A Compilation-Based
 * Approach to Performant Reduction and Redistribution Collective
 * Communication Algorithms", IJHPCA 40(2), 2026, sections 2.1, 2.1.2.
 *
 * Parameters: recexch:<steps>, comma separated: "-k" a reduce-scatter step
 * of radix k, "*k" an allreduce step (every member of a k-group sends its
 * whole part to the others and all reduce it: the paper's allgather with
 * reduction), "k" (or "+k") an allgather step; in that order. Allreduce:
 * product(-) * product(*) = p and product(+) = product(-), e.g.
 * -4,-2,2,4 (p = 8), -3,-2,2,3 (p = 6), -2,*2,2 (the paper's Figure 3).
 * reduce_scatter_block: only "-" steps, product p; allgather: only "+"
 * steps, product p. Default: the prime factors of p, ascending for "-",
 * descending for "+". "recexch:flat": one step of radix p each way
 * (-p,p; -p; p): every rank exchanges with every other directly.
 *
 * Ranks are digits in the mixed radix of the "-" then "*" radices (first
 * step = lowest digit = consecutive ranks), so every partial result covers a
 * contiguous range of ranks and pieces are combined in rank order: safe for
 * non-commutative operations; each element's final value is computed once
 * (or identically by all members of an allreduce step) and then copied, so
 * floating point results are bitwise identical on all ranks.
 * The vector is cut into K = product(-) blocks, none smaller than 64 bytes
 * (blocks.c); after the reduce-scatter steps rank r owns block r mod K.
 * reduce_scatter and allgatherv: K = p blocks of spec.counts elements,
 * packed in rank order (blocks_of_ranks); a class's message is its
 * nonempty blocks' runs, and empty classes send nothing, so zero counts
 * and one rank holding everything need no special case.
 * The allgather steps use the mixed radix of the reversed "+" list, so the
 * mirror of the reduce-scatter list is the classic butterfly.
 *
 * Cost (n units of m bytes, steps k_i): reduce-scatter step i sends
 * (k_i - 1) messages of n / (k_1...k_i) units; allreduce steps send the whole
 * remaining part to k - 1 partners; allgather mirrors reduce-scatter.
 * alpha sum(k_i - 1) + beta m n sum (k_i - 1)/(k_1..k_i) (+ gamma likewise).
 * Scratch: two working copies of the vector plus the receive staging
 * ((k - 1) parts). No copies but the own block before the allgather when
 * the last reduction did not land in RECV. In place: the input is read in
 * the first step only; reduce_scatter_block in place copies it to TMP once.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algo.h"
#include "blocks.h"
#include "patterns.h"

typedef struct {
  int buf;
  int64_t base; /* offset of block positions: natural placement at base + start[b] */
} place;

typedef struct {
  const collc_spec *s;
  collc_prog *P;
  blocks B;          /* K blocks (classes) */
  int K;             /* product of reduce-scatter radices */
  int R[COLLC_MAXF]; /* rank radix: "-" then "*" radices */
  int nred, nrs;     /* "-" and "*" steps together; "-" steps */
  int G[COLLC_MAXF]; /* allgather radix: reversed "+" list */
  int nag;
  place in;     /* the input, natural placement */
  int64_t stage; /* TMP offset of the receive staging area */
} rx;

enum { ID_RECV = 0, ID_T1, ID_T2, ID_INPUT };

/* Destination buffer ids of the reduction steps: the last RECV where
 * final_recv allows it, neighbours distinct, never the input (in_id). */
static void choose_dsts(int n, int in_id, int final_recv, int *dst) {
  for (int i = n - 1; i >= 0; i--)
    for (int c = (i == n - 1 && final_recv) ? ID_RECV : ID_T1; c <= ID_T2; c++)
      if ((i == n - 1 || c != dst[i + 1]) && (i > 0 || c != in_id)) {
        dst[i] = c;
        break;
      }
}

/* Fold pieces[0] op ... op pieces[k-1] into dst (right to left). */
static void fold(collc_prog *P, const collc_opnd *pieces, int k, collc_opnd dst) {
  prog_combine(P, pieces[k - 2], pieces[k - 1], dst);
  for (int j = k - 3; j >= 0; j--) prog_reduce(P, pieces[j], dst);
}

/* Class x of member m's part in step t (its part is the blocks = x mod M). */
static int part_class(const rx *X, int t, int m) {
  int r = X->s->rank, W = (int)mr_weight(X->R, t);
  return t < X->nrs ? r % W + m * W : r % X->K;
}

/* Reduction step t (reduce-scatter or allreduce) from cur into dst: I get
 * the other members' partials of my part and fold them in rank order. */
static void reduce_step(rx *X, int t, place cur, place dst, int dst_compact) {
  collc_prog *P = X->P;
  int r = X->s->rank, k = X->R[t], W = (int)mr_weight(X->R, t), me = mr_digit(r, X->R, t);
  int M = t < X->nrs ? W * k : X->K;
  int64_t n = blocks_units(&X->B, part_class(X, t, me), M);
  collc_opnd *pieces = malloc((size_t)k * sizeof *pieces);
  if (!pieces) {
    prog_fail(P, COLLC_ENOMEM, "recexch: out of memory");
    return;
  }
  for (int j = 1; j < k; j++) { /* receive from me+1, me+2, ...; send the same way */
    int m = (me + j) % k, slot = m - (m > me), peer = r + (m - me) * W;
    pieces[m] = compact(P, BUF_TMP, X->stage + slot * n, n);
    if (n) prog_recv(P, peer, pieces[m]);
    if (blocks_units(&X->B, part_class(X, t, m), M))
      prog_send(P, peer, blocks_natural(P, &X->B, cur.buf, cur.base, part_class(X, t, m), M));
  }
  prog_wait(P);
  prog_need_tmp(P, X->stage + (k - 1) * n);
  if (n) {
    pieces[me] = blocks_natural(P, &X->B, cur.buf, cur.base, part_class(X, t, me), M);
    fold(P, pieces, k, dst_compact ? compact(P, dst.buf, dst.base, n)
                                   : blocks_natural(P, &X->B, dst.buf, dst.base, part_class(X, t, me), M));
  }
  free(pieces);
}

/* Allgather step s: members exchange their owned classes in RECV. */
static void gather_step(rx *X, int s) {
  collc_prog *P = X->P;
  int i = X->nag - 1 - s, k = X->G[i], W = (int)mr_weight(X->G, i);
  int r = X->s->rank, c = r % X->K, dg = (c / W) % k, M = W * k;
  collc_opnd mine = blocks_natural(P, &X->B, BUF_RECV, 0, c % M, M);
  for (int j = 1; j < k; j++) { /* empty block sets: no message on either side */
    int to = (dg + j) % k, from = (dg - j + k) % k, xf = c % W + from * W;
    if (blocks_units(&X->B, xf, M))
      prog_recv(P, r + (from - dg) * W, blocks_natural(P, &X->B, BUF_RECV, 0, xf, M));
    if (opnd_units(P, mine)) prog_send(P, r + (to - dg) * W, mine);
  }
  prog_wait(P);
}

/* Set up X for spec s and resolved choice c: radices and blocks; *vec gets
 * the units of the whole vector. */
static int rx_init(rx *X, const collc_spec *s, const collc_choice *c, collc_prog *P,
                   int64_t *vec) {
  int ag[COLLC_MAXF], nag;
  memset(X, 0, sizeof *X);
  X->s = s, X->P = P;
  X->nrs = steps_of(c, '-', X->R);
  X->nred = X->nrs + steps_of(c, '*', X->R + X->nrs);
  X->K = (int)steps_product(c, '-');
  nag = X->nag = steps_of(c, '+', ag);
  for (int i = 0; i < nag; i++) X->G[i] = ag[nag - 1 - i];
  if (coll_family(s->coll) == COLLC_COLL_ALLGATHER) X->K = s->p;
  *vec = coll_desc_of(s->coll)->vector_units(s);
  if (s->coll == COLLC_COLL_ALLREDUCE) return blocks_split(P, &X->B, X->K, *vec, s->unit_bytes);
  return blocks_of_ranks(P, &X->B, s, *vec);
}

/* Places of the buffers: TMP holds [input copy][T1][T2][staging], each
 * present only if used (dst ids of the reduction steps in dst[]). */
static void rx_places(rx *X, const int *dst, int64_t vec, place *by_id) {
  const collc_spec *s = X->s;
  int rsb = coll_family(s->coll) == COLLC_COLL_REDUCE_SCATTER_BLOCK;
  int rsb_in_place = rsb && s->in_place, used[3] = {0};
  int64_t at = 0;
  for (int i = 0; i < X->nred - rsb; i++)
    used[dst[i]] = 1; /* reduce_scatter_block's last step writes RECV */
  X->in = (place){s->in_place ? BUF_RECV : BUF_SEND, 0};
  if (rsb_in_place) { /* the input is copied to TMP once */
    X->in = (place){BUF_TMP, 0};
    prog_copy(X->P, compact(X->P, BUF_RECV, 0, vec), compact(X->P, BUF_TMP, 0, vec));
    at = vec;
  }
  by_id[ID_RECV] = (place){BUF_RECV, 0};
  by_id[ID_T1] = (place){BUF_TMP, at};
  at += used[ID_T1] ? vec : 0;
  by_id[ID_T2] = (place){BUF_TMP, at};
  at += used[ID_T2] ? vec : 0;
  by_id[ID_INPUT] = X->in;
  X->stage = at;
  prog_need_tmp(X->P, at);
}

static int recexch_gen(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  rx X;
  int dst[COLLC_MAXF], r = s->rank, fam = coll_family(s->coll);
  int rsb = fam == COLLC_COLL_REDUCE_SCATTER_BLOCK;
  int64_t vec;
  place at[4];
  if (rx_init(&X, s, c, P, &vec)) return P->err;
  choose_dsts(X.nred, s->in_place && !rsb ? ID_RECV : ID_INPUT, !rsb, dst);
  rx_places(&X, dst, vec, at);
  for (int t = 0; t < X.nred; t++) {
    int last_rsb = rsb && t == X.nred - 1;
    reduce_step(&X, t, t ? at[dst[t - 1]] : X.in, last_rsb ? at[ID_RECV] : at[dst[t]], last_rsb);
  }
  place have = X.nred ? at[dst[X.nred - 1]] : X.in; /* where my block is now */
  int64_t mine = X.B.len[r % X.K];
  if (fam == COLLC_COLL_ALLGATHER) { /* my block into place (nothing for an empty one) */
    if (!s->in_place && mine)
      prog_copy(P, compact(P, BUF_SEND, 0, mine), compact(P, BUF_RECV, X.B.start[r], mine));
  } else if (!rsb && have.buf != BUF_RECV)
    prog_copy(P, blocks_natural(P, &X.B, have.buf, have.base, r % X.K, X.K),
              blocks_natural(P, &X.B, BUF_RECV, 0, r % X.K, X.K));
  else if (rsb && X.nred == 0 && !s->in_place && mine) /* p == 1 */
    prog_copy(P, compact(P, BUF_SEND, 0, mine), compact(P, BUF_RECV, 0, mine));
  for (int t = 0; t < X.nag; t++) gather_step(&X, t);
  blocks_free(&X.B);
  return P->err;
}

/* Prime factors of p ascending into f[]; returns how many. */
static int prime_factors(int p, int *f) {
  int n = 0;
  for (int q = 2; (int64_t)q * q <= p; q++)
    while (p % q == 0) f[n++] = q, p /= q;
  if (p > 1) f[n++] = p;
  return n;
}

/* Default list for spec s: prime factors, ascending "-", descending "+". */
static void default_steps(const collc_spec *s, collc_choice *c) {
  int f[COLLC_MAXF], n = prime_factors(s->p, f);
  int fam = coll_family(s->coll);
  int rs = fam != COLLC_COLL_ALLGATHER, ag = fam != COLLC_COLL_REDUCE_SCATTER_BLOCK;
  c->nf = 0;
  for (int i = 0; rs && i < n; i++) c->step[c->nf] = '-', c->f[c->nf++] = f[i];
  for (int i = n - 1; ag && i >= 0; i--) c->step[c->nf] = '+', c->f[c->nf++] = f[i];
}

static int recexch_parse(const char *params, collc_choice *c, char *why, size_t wlen) {
  if (params && !strcmp(params, "flat")) {
    c->flat = 1;
    return 0;
  }
  return parse_steps(params, c, "-*+", why, wlen);
}

static int recexch_resolve(const collc_spec *s, collc_choice *c, char *why, size_t wlen) {
  int fam = coll_family(s->coll);
  if (c->flat && s->p > 1) {
    c->nf = 0;
    if (fam != COLLC_COLL_ALLGATHER) c->step[c->nf] = '-', c->f[c->nf++] = s->p;
    if (fam != COLLC_COLL_REDUCE_SCATTER_BLOCK) c->step[c->nf] = '+', c->f[c->nf++] = s->p;
  }
  c->flat = 0;
  if (c->nf == 0) default_steps(s, c);
  int64_t rs = steps_product(c, '-'), ar = steps_product(c, '*'), ag = steps_product(c, '+');
  int ok;
  if (s->coll == COLLC_COLL_ALLREDUCE) ok = rs * ar == s->p && ag == rs;
  else if (fam == COLLC_COLL_REDUCE_SCATTER_BLOCK) ok = rs == s->p && ar == 1 && ag == 1;
  else ok = ag == s->p && rs == 1 && ar == 1;
  if (!ok) {
    char list[160];
    format_steps(c, list, sizeof list);
    snprintf(why, wlen, "recexch:%s does not fit %s on p = %d (products -: %lld, *: %lld, +: %lld)",
             list, coll_name(s->coll), s->p, (long long)rs, (long long)ar, (long long)ag);
    return COLLC_EUNFIT;
  }
  return 0;
}

static void recexch_format(const collc_choice *c, char *buf, size_t len) {
  format_steps(c, buf, len);
}

#define RECEXCH_ROW(var, coll, syntax)                                                       \
  const collc_algo var = {"recexch", coll, recexch_parse, recexch_resolve, recexch_gen,       \
                          recexch_format, syntax,                                            \
                          "recursive exchange with a per-step factor list (Jocksch 2026)",   \
                          ALGO_ANY, 0}
RECEXCH_ROW(algo_allreduce_recexch, COLLC_COLL_ALLREDUCE, "recexch[:-a,-b,*c,b,a|flat]");
RECEXCH_ROW(algo_rsb_recexch, COLLC_COLL_REDUCE_SCATTER_BLOCK, "recexch[:-a,-b,...|flat]");
RECEXCH_ROW(algo_allgather_recexch, COLLC_COLL_ALLGATHER, "recexch[:a,b,...|flat]");
RECEXCH_ROW(algo_rs_recexch, COLLC_COLL_REDUCE_SCATTER, "recexch[:-a,-b,...|flat]");
RECEXCH_ROW(algo_allgatherv_recexch, COLLC_COLL_ALLGATHERV, "recexch[:a,b,...|flat]");
