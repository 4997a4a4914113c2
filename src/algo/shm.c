/* shm.c - any message-passing algorithm run through the node segment:
 * "shm[:<algorithm>]" when every rank shares one node.
 *
 * The programs of all ranks are generated for the inner algorithm (as if
 * there were no segment) and lowered: a SEND copies its data into the
 * sender's next slot of the segment and SIGNALs the sender's send count; a
 * RECV is deferred to the WAIT that completes it, which AWAITs the sender's
 * count and copies the slot out. A send of the same operand as the
 * sender's previous one, with no write into that buffer in between (a
 * tree's root sending to each child), reuses that slot and count: one copy
 * in, however many readers. Local instructions stay as they are. The
 * i-th receive from q pairs with q's i-th send to me, as MPI's
 * non-overtaking rule pairs them, so each rank finds its slots from the
 * other ranks' programs without communicating. Every slot is written once
 * per run, so only the next run must wait (for every peer's STEP_DONE
 * before the first write). Sends are eager: no rank ever waits for a
 * receiver within a run, so any schedule that is deadlock-free with
 * messages is with the segment. Group calls (torus "native"/"linear"
 * rounds) cannot be lowered.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algo.h"

/* One message of the node: where its slot is, the send count that
 * publishes it, and whether this send fills it (else an earlier one did). */
typedef struct {
  int from, to;
  int64_t off, units, step;
  int fills;
} slot;

typedef struct {
  collc_prog **Q; /* every rank's inner program */
  slot *m;        /* every message, by sender, in send order */
  int64_t nm, units;
} lowering;

/* Operand o of program Q, re-made in P (same buffer and offset). */
static collc_opnd import(collc_prog *P, const collc_prog *Q, collc_opnd o) {
  if (o.buf == BUF_NONE) return o;
  const collc_shape *S = &Q->shapes[o.shape];
  if (S->kind == SHAPE_STRIDED) {
    int64_t cnt[COLLC_MAXLEV], str[COLLC_MAXLEV];
    for (int l = 0; l < S->nlev; l++)
      cnt[l] = Q->pool[S->data + 2 * l], str[l] = Q->pool[S->data + 2 * l + 1];
    return opnd(o.buf, o.off, prog_shape_strided(P, S->run, S->nlev, cnt, str));
  }
  int64_t *off = malloc(2 * (size_t)S->nruns * sizeof *off);
  if (!off) return prog_fail(P, COLLC_ENOMEM, "shm: out of memory"), opnd(o.buf, 0, -1);
  for (int64_t k = 0; k < S->nruns; k++) shape_run(Q, o.shape, k, &off[k], &off[S->nruns + k]);
  collc_opnd r = prog_opnd_runs(P, o.buf, (int)S->nruns, off, off + S->nruns);
  free(off);
  r.off += o.off;
  return r;
}

/* Compile every rank's inner program and lay out the slots of all their
 * sends (each at a cache line). 0, or an error with why in P. */
static int lay_out(const collc_spec *s, const collc_choice *inner, collc_prog *P, lowering *W) {
  collc_spec flat = *s;
  char why[200];
  /* Slots start on cache lines, except for bcast, whose ranks may type the
   * same bytes with elements of different sizes: rounding in elements would
   * put a slot at different bytes on different ranks. */
  int64_t line = s->unit_bytes > 0 && 64 % s->unit_bytes == 0 ? 64 / s->unit_bytes : 1, cap = 0;
  if (s->coll == COLLC_COLL_BCAST) line = 1;
  flat.layout = NULL;
  W->Q = calloc((size_t)s->p, sizeof *W->Q);
  if (!W->Q) return prog_fail(P, COLLC_ENOMEM, "shm: out of memory"), P->err;
  for (int q = 0; q < s->p; q++) {
    flat.rank = q;
    collc_spec sq = spec_rank(&flat, q);
    if (!(W->Q[q] = choice_compile(&sq, inner, why, sizeof why)))
      return prog_fail(P, COLLC_EUNFIT, "shm: %s", why), P->err;
    const slot *prev = NULL; /* q's latest filled slot, while its data stands */
    collc_opnd from = {0};
    for (int a = 0, n = 0; a < W->Q[q]->nins; a++) {
      const collc_instr *I = &W->Q[q]->ins[a];
      if (I->op == COLLC_OP_ALLTOALL)
        return prog_fail(P, COLLC_EUNFIT, "shm: group calls cannot use the segment"), P->err;
      if (I->op != COLLC_OP_SEND && (ops_flags(I->op) & OPF_WRITES) && I->dst.buf == from.buf)
        prev = NULL;
      if (I->op != COLLC_OP_SEND) continue;
      if (W->nm == cap && prog_reserve(P, (void **)&W->m, &cap, cap ? 2 * cap : 64,
                                       sizeof *W->m, "shm slots"))
        return P->err;
      int64_t u = opnd_units(W->Q[q], I->src);
      if (prev && !memcmp(&from, &I->src, sizeof from)) {
        W->m[W->nm++] = (slot){q, I->peer, prev->off, u, prev->step, 0};
        continue;
      }
      W->m[W->nm] = (slot){q, I->peer, W->units, u, ++n, 1};
      prev = &W->m[W->nm++], from = I->src;
      W->units += (u + line - 1) / line * line;
    }
  }
  return 0;
}

/* The slot of the i-th message from q to me (NULL if there is none). */
static const slot *find(const lowering *W, int q, int me, int i) {
  for (int64_t k = 0; k < W->nm; k++)
    if (W->m[k].from == q && W->m[k].to == me && i-- == 0) return &W->m[k];
  return NULL;
}

/* Emit my lowered program (see the file comment). */
static void lower(const collc_spec *s, const lowering *W, collc_prog *P) {
  const collc_prog *Q = W->Q[s->rank];
  int *got = calloc((size_t)s->p, sizeof *got);
  int64_t mine = 0; /* where my next send's slot is looked for in W->m */
  const slot **pend = calloc((size_t)Q->nslots + 1, sizeof *pend);
  collc_opnd *dst = calloc((size_t)Q->nslots + 1, sizeof *dst);
  if (!got || !pend || !dst) prog_fail(P, COLLC_ENOMEM, "shm: out of memory");
  for (int a = 0; a < Q->nins && !P->err; a++) {
    const collc_instr *I = &Q->ins[a];
    switch (I->op) {
    case COLLC_OP_SEND: {
      const slot *m = W->m + mine, *end = W->m + W->nm; /* my next send */
      while (m < end && m->from != s->rank) m++;
      if (m == end) {
        prog_fail(P, COLLC_EINTERNAL, "shm: send without a slot");
        break;
      }
      mine = m - W->m + 1;
      if (!m->fills) break;
      if (m->step == 1)
        for (int q = 0; q < s->p; q++)
          if (q != s->rank) prog_await(P, q, 0); /* every reader ended its previous run */
      prog_copy(P, import(P, Q, I->src), opnd(BUF_SHM, m->off, prog_shape_contig(P, m->units)));
      prog_signal(P, m->step);
      break;
    }
    case COLLC_OP_RECV:
      pend[I->slot] = find(W, I->peer, s->rank, got[I->peer]++);
      dst[I->slot] = import(P, Q, I->dst);
      if (!pend[I->slot]) prog_fail(P, COLLC_EINTERNAL, "shm: receive without a send");
      break;
    case COLLC_OP_WAIT:
      for (int k = I->slot; k < I->slot + I->n; k++) {
        if (!pend[k]) continue;
        prog_await(P, pend[k]->from, pend[k]->step);
        prog_copy(P, opnd(BUF_SHM, pend[k]->off, prog_shape_contig(P, pend[k]->units)), dst[k]);
        pend[k] = NULL;
      }
      break;
    case COLLC_OP_COPY: prog_copy(P, import(P, Q, I->src), import(P, Q, I->dst)); break;
    case COLLC_OP_REDUCE: prog_reduce(P, import(P, Q, I->src), import(P, Q, I->dst)); break;
    case COLLC_OP_COMBINE:
      prog_combine(P, import(P, Q, I->src), import(P, Q, I->src2), import(P, Q, I->dst));
      break;
    default: break;
    }
  }
  if (s->p > 1) prog_signal(P, STEP_DONE);
  free(got), free(pend), free(dst);
}

/* The inner choice of c: its text, or the collective's default. */
static int inner_choice(const collc_spec *s, const collc_choice *c, collc_choice *in, char *why,
                        size_t wlen) {
  static const char *const dflt[COLLC_COLL_COUNT] = {"pairwise", "recexch", "recexch", "recexch",
                                                     "tree", "tree"};
  collc_spec flat = *s;
  flat.layout = NULL;
  const char *text = c->net[0] ? c->net : dflt[s->coll];
  if (!strncmp(text, "shm", 3) || !strncmp(text, "hier", 4) || !strcmp(text, "native")) {
    snprintf(why, wlen, "shm: '%s' cannot run inside shm", text);
    return COLLC_EINVAL;
  }
  int rc = choice_parse(s->coll, text, in, why, wlen);
  return rc ? rc : choice_resolve(&flat, in, why, wlen);
}

static int shm_parse(const char *params, collc_choice *c, char *why, size_t wlen) {
  if (params && strlen(params) >= sizeof c->net) {
    snprintf(why, wlen, "shm: algorithm text too long");
    return COLLC_EINVAL;
  }
  snprintf(c->net, sizeof c->net, "%s", params ? params : "");
  return 0;
}

static int shm_resolve(const collc_spec *s, collc_choice *c, char *why, size_t wlen) {
  collc_choice in;
  if (!s->layout || s->layout->nnodes != 1) {
    snprintf(why, wlen, "shm: needs every rank on one node");
    return COLLC_EUNFIT;
  }
  return inner_choice(s, c, &in, why, wlen) ? COLLC_EUNFIT : 0;
}

static int shm_gen(const collc_spec *s, const collc_choice *c, collc_prog *P) {
  collc_choice in;
  char why[200];
  lowering W = {0};
  if (inner_choice(s, c, &in, why, sizeof why))
    return prog_fail(P, COLLC_EUNFIT, "%s", why), P->err;
  if (lay_out(s, &in, P, &W) == 0) {
    prog_need_tmp(P, W.Q[s->rank]->tmp_units);
    if (s->p > 1) prog_need_shm(P, W.units > 0 ? W.units : 1);
    lower(s, &W, P);
  }
  for (int q = 0; W.Q && q < s->p; q++) prog_free(W.Q[q]);
  free(W.Q), free(W.m);
  return P->err;
}

static void shm_format(const collc_choice *c, char *buf, size_t len) {
  snprintf(buf, len, "%s", c->net);
}

const collc_algo algo_shm = {
    "shm", -1, shm_parse, shm_resolve, shm_gen, shm_format, "shm[:<algorithm>]",
    "any message-passing algorithm with its messages through the node's shared segment "
    "(every rank on one node); default recexch, tree or pairwise"};
