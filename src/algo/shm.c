/* shm.c - any message-passing algorithm run through the node segment:
 * "shm[:direct=<bytes>][:<algorithm>]" when every rank shares one node.
 *
 * The programs of all ranks are generated for the inner algorithm (as if
 * there were no segment) and lowered. A small message goes through a slot:
 * its SEND copies the data into the sender's next slot of the segment and
 * SIGNALs the sender's count; its RECV is deferred to the WAIT that
 * completes it, which AWAITs that count and copies the slot out. A message
 * of at least `direct` bytes is read once (single copy): the SEND OFFERs
 * the data (readable in place by Cross Memory Attach where the platform
 * allows, else copied into the slot; off by default, see SHM_DIRECT) and
 * SIGNALs; the receiver GETs it at
 * its WAIT and SIGNALs that it is done; the sender AWAITs the reader
 * before it next writes over that data, or at the end of its run, but not
 * sooner (an MPI send would wait for its receiver at the WAIT: the data
 * must stand until then, and here until read). See lower_wait for the one
 * schedule shape this rendezvous cannot serve. A send of the same operand as the
 * sender's previous one, with no write into that buffer in between (a
 * tree's root sending to each child), reuses that slot and count: one copy
 * in, however many readers. Local instructions stay as they are.
 *
 * The i-th receive from q pairs with q's i-th send to me, as MPI's
 * non-overtaking rule pairs them, and every rank numbers its SIGNALs from
 * its own program, so each rank finds its slots and the steps to await in
 * the other ranks' programs without communicating. Every slot is written
 * once per run, so only the next run must wait (for every peer's STEP_DONE
 * before the first write). Group calls (torus "native"/"linear" rounds)
 * cannot be lowered.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "algo.h"

/* Bytes from which messages are read in place by default: never (-1). On
 * the 2-core development machine the slot's two memcpys beat one
 * process_vm_readv at every size measured, up to 8 MB (README, "Single
 * copy"); shm:direct=<bytes> turns it on where it wins. */
#define SHM_DIRECT (-1)

/* One message of the node: its slot, the sender's count that publishes it,
 * whether this send fills the slot (else an earlier send of the same data
 * did), and for a direct (single-copy) one the reader's count after it has
 * read. a: the SEND's address in the sender's program. */
typedef struct {
  int from, to, a, fills, direct;
  int64_t off, units, step, done;
} slot;

/* A receive of rank to: its k-th from `from`; if direct, done at step done. */
typedef struct {
  int from, to, k, direct;
  int64_t done;
} rdone;

typedef struct {
  collc_prog **Q; /* every rank's inner program */
  slot *m;        /* every message, by sender, in send order */
  int64_t nm, cap, units, line, direct;
  rdone *d;       /* direct receives, to match with their messages */
  int64_t nd, capd;
  int64_t *rstart, *rord; /* messages by receiver: rord[rstart[to] ..), by sender, in order */
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

/* Whether u units from rank q make a direct (single-copy) message: not
 * from the root of a collective in place only there (reduce), whose
 * buffers the others cannot know. */
static int is_direct(const collc_spec *s, const lowering *W, int q, int64_t u) {
  if (coll_desc_of(s->coll)->in_place_at_root && q == s->root) return 0;
  return W->direct >= 0 && u > 0 && u * s->unit_bytes >= W->direct;
}

/* Record q's send at address a of its program (see slot), reusing slot
 * W->m[prev] unless prev < 0. 0 or an error. */
static int add_send(const collc_spec *s, collc_prog *P, lowering *W, int q, int a,
                    int64_t prev, int64_t *n) {
  const collc_instr *I = &W->Q[q]->ins[a];
  int64_t u = opnd_units(W->Q[q], I->src);
  if (W->nm == W->cap && prog_reserve(P, (void **)&W->m, &W->cap, W->cap ? 2 * W->cap : 64,
                                      sizeof *W->m, "shm slots"))
    return P->err;
  if (prev >= 0) {
    const slot *o = &W->m[prev];
    W->m[W->nm++] = (slot){q, I->peer, a, 0, o->direct, o->off, u, o->step, 0};
    return 0;
  }
  W->m[W->nm++] = (slot){q, I->peer, a, 1, is_direct(s, W, q, u), W->units, u, ++*n, 0};
  W->units += (u + W->line - 1) / W->line * W->line;
  return 0;
}

/* Walk rank q's inner program as lower() will emit it: its sends' slots
 * and counts, and the counts its direct receives signal when done. */
static int number(const collc_spec *s, collc_prog *P, lowering *W, int q) {
  const collc_prog *Q = W->Q[q];
  int64_t prev = -1; /* q's latest filled slot, while its data stands */
  collc_opnd from = {0};
  int64_t n = 0;
  int *got = calloc((size_t)s->p, sizeof *got);
  rdone *pend = calloc((size_t)Q->nslots + 1, sizeof *pend);
  for (int a = 0; a < Q->nins && got && pend && !P->err; a++) {
    const collc_instr *I = &Q->ins[a];
    if (ops_flags(I->op) & OPF_GROUP)
      prog_fail(P, COLLC_EUNFIT, "shm: group calls cannot use the segment");
    if (I->op != COLLC_OP_SEND && (ops_flags(I->op) & OPF_WRITES) && I->dst.buf == from.buf)
      prev = -1;
    if (I->op == COLLC_OP_SEND) {
      int same = prev >= 0 && !memcmp(&from, &I->src, sizeof from);
      if (add_send(s, P, W, q, a, same ? prev : -1, &n)) break;
      if (!same) prev = W->nm - 1, from = I->src;
    }
    if (I->op == COLLC_OP_RECV)
      pend[I->slot] = (rdone){I->peer, q, got[I->peer]++,
                              is_direct(s, W, I->peer, opnd_units(Q, I->dst)), 0};
    for (int64_t k = I->slot; I->op == COLLC_OP_WAIT && k < I->slot + I->n; k++) {
      if (!pend[k].direct) continue;
      if (W->nd == W->capd && prog_reserve(P, (void **)&W->d, &W->capd,
                                           W->capd ? 2 * W->capd : 64, sizeof *W->d, "shm"))
        break;
      W->d[W->nd] = pend[k], W->d[W->nd++].done = ++n;
      pend[k].direct = 0;
    }
  }
  if (!got || !pend) prog_fail(P, COLLC_ENOMEM, "shm: out of memory");
  free(got), free(pend);
  return P->err;
}

/* Index the messages by receiver (W->m is by sender, so each receiver's
 * list comes sorted by sender, in send order). 0 or -1 (out of memory). */
static int index_receivers(const collc_spec *s, lowering *W) {
  W->rstart = calloc((size_t)s->p + 1, sizeof *W->rstart);
  W->rord = malloc(((size_t)W->nm + 1) * sizeof *W->rord);
  int64_t *at = calloc((size_t)s->p + 1, sizeof *at);
  if (!W->rstart || !W->rord || !at) return free(at), -1;
  for (int64_t i = 0; i < W->nm; i++) W->rstart[W->m[i].to + 1]++;
  for (int q = 0; q < s->p; q++) W->rstart[q + 1] += W->rstart[q];
  for (int64_t i = 0; i < W->nm; i++) {
    int to = W->m[i].to;
    W->rord[W->rstart[to] + at[to]++] = i;
  }
  free(at);
  return 0;
}

/* The slot of the k-th message from q to me (NULL if there is none). */
static slot *find(const lowering *W, int q, int me, int k) {
  int64_t lo = W->rstart[me], hi = W->rstart[me + 1], end = hi;
  while (lo < hi) { /* the first message from q or a later sender */
    int64_t mid = lo + (hi - lo) / 2;
    if (W->m[W->rord[mid]].from < q) lo = mid + 1;
    else hi = mid;
  }
  if (lo + k >= end || W->m[W->rord[lo + k]].from != q) return NULL;
  return &W->m[W->rord[lo + k]];
}

/* Compile every rank's inner program, lay out the slots of all their sends
 * and match direct receives with their messages. 0, or an error in P. */
static int lay_out(const collc_spec *s, const collc_choice *inner, collc_prog *P, lowering *W) {
  collc_spec flat = *s;
  char why[200];
  flat.layout = NULL;
  W->Q = calloc((size_t)s->p, sizeof *W->Q);
  if (!W->Q) return prog_fail(P, COLLC_ENOMEM, "shm: out of memory"), P->err;
  for (int q = 0; q < s->p && !P->err; q++) {
    flat.rank = q;
    collc_spec sq = spec_rank(&flat, q);
    if (!(W->Q[q] = choice_compile(&sq, inner, why, sizeof why)))
      return prog_fail(P, COLLC_EUNFIT, "shm: %s", why), P->err;
    number(s, P, W, q);
  }
  if (!P->err && index_receivers(s, W)) prog_fail(P, COLLC_ENOMEM, "shm: out of memory");
  for (int64_t i = 0; i < W->nd && !P->err; i++) {
    slot *m = find(W, W->d[i].from, W->d[i].to, W->d[i].k);
    if (!m || !m->direct) prog_fail(P, COLLC_EINTERNAL, "shm: unmatched direct receive");
    else m->done = W->d[i].done;
  }
  return P->err;
}

/* Readers of my direct sends not yet awaited: rank `to` signals `done`
 * once it has read units [lo, hi) of my buffer buf. */
typedef struct {
  int to, buf;
  int64_t done, lo, hi;
} reader;

typedef struct {
  reader *r;
  int n;
  int64_t *aw; /* per rank: the highest step awaited this run (-1: none) */
} readers;

/* AWAIT step of rank q unless a step as high was awaited already (steps
 * only grow, so that wait implied this one). */
static void await_once(collc_prog *P, readers *R, int q, int64_t step) {
  if (step <= R->aw[q]) return;
  prog_await(P, q, step);
  R->aw[q] = step;
}

/* Before a write to operand o of P (NULL: the end of the run), await the
 * readers of data it overlaps (all of them at the end). */
static void flush(collc_prog *P, readers *R, const collc_opnd *o) {
  int64_t lo = 0, hi = 0;
  if (o) lo = o->off + P->shapes[o->shape].lo, hi = o->off + P->shapes[o->shape].hi;
  for (int i = 0; i < R->n;) {
    const reader *x = &R->r[i];
    if (o && (x->buf != o->buf || x->hi <= lo || hi <= x->lo)) {
      i++;
      continue;
    }
    await_once(P, R, x->to, x->done);
    R->r[i] = R->r[--R->n];
  }
}

/* Emit my send at the SEND I of my inner program (slot m); *wrote: the
 * segment was written already this run. */
static void lower_send(const collc_spec *s, collc_prog *P, const collc_prog *Q,
                       const collc_instr *I, const slot *m, int *wrote, readers *R) {
  if (!m->fills) return;
  if (!(*wrote)++)
    for (int q = 0; q < s->p; q++)
      if (q != s->rank) await_once(P, R, q, 0); /* every reader ended its previous run */
  collc_opnd to = opnd(BUF_SHM, m->off, prog_shape_contig(P, m->units));
  if (m->direct) prog_offer(P, import(P, Q, I->src), to);
  else prog_copy(P, import(P, Q, I->src), to);
  prog_signal(P, m->step);
}

/* Emit the WAIT of slots [lo, hi): its receives in slot order (await the
 * sender, copy or get, signal done), then its direct sends join the
 * readers to await later. Only readers of earlier WAITs' sends are awaited
 * before these receives (MPI forbids overlapping a send and a receive in
 * flight together). Caveat: completing receives in slot order, with
 * senders that wait for their readers, can deadlock a schedule that MPI
 * completes (a receive stuck behind one whose sender waits for a later
 * one); the registry's algorithms do not, which collc-verify checks for
 * every lowered program, and direct messages are off by default. */
static void lower_wait(const lowering *W, collc_prog *P, int lo, int hi, const slot **rcv,
                       const collc_opnd *dst, const slot **snd, readers *R) {
  for (int k = lo; k < hi; k++) {
    const slot *m = rcv[k];
    if (!m) continue;
    collc_opnd from = opnd(BUF_SHM, m->off, prog_shape_contig(P, m->units));
    await_once(P, R, m->from, m->step); /* (first: it may imply a flush's wait) */
    flush(P, R, &dst[k]);
    if (m->direct) {
      const collc_prog *S = W->Q[m->from];
      prog_get(P, m->from, import(P, S, S->ins[m->a].src), from, dst[k]);
      prog_signal(P, m->done);
    } else {
      prog_copy(P, from, dst[k]);
    }
    rcv[k] = NULL;
  }
  for (int k = lo; k < hi; k++) {
    const slot *m = snd[k];
    if (m && m->direct) {
      const collc_opnd *o = &W->Q[m->from]->ins[m->a].src;
      const collc_shape *S = &W->Q[m->from]->shapes[o->shape];
      R->r[R->n++] = (reader){m->to, o->buf, m->done, o->off + S->lo, o->off + S->hi};
    }
    snd[k] = NULL;
  }
}

/* Lowering my inner program Q into P: the receives, destinations and
 * sends of its open slots, the readers to await, my next send's place in
 * W->m, whether the segment was written this run. */
typedef struct {
  const collc_spec *s;
  const lowering *W;
  collc_prog *P;
  const collc_prog *Q;
  int *got;          /* receives from each rank so far */
  const slot **rcv, **snd;
  collc_opnd *dst;
  readers R;
  int64_t mine;
  int wrote;
} lowerer;

/* Handlers, one per opcode (the table below): emit the lowered form of
 * instruction I of my inner program. */
typedef void (*lower_fn)(lowerer *L, const collc_instr *I);

static void lower_NOP(lowerer *L, const collc_instr *I) { (void)L, (void)I; }

static void lower_SEND(lowerer *L, const collc_instr *I) {
  const lowering *W = L->W;
  while (L->mine < W->nm && W->m[L->mine].from != L->s->rank) L->mine++;
  if (L->mine == W->nm) {
    prog_fail(L->P, COLLC_EINTERNAL, "shm: send without a slot");
    return;
  }
  L->snd[I->slot] = &W->m[L->mine];
  lower_send(L->s, L->P, L->Q, I, &W->m[L->mine++], &L->wrote, &L->R);
}

static void lower_RECV(lowerer *L, const collc_instr *I) {
  L->rcv[I->slot] = find(L->W, I->peer, L->s->rank, L->got[I->peer]++);
  L->dst[I->slot] = import(L->P, L->Q, I->dst);
  if (!L->rcv[I->slot]) prog_fail(L->P, COLLC_EINTERNAL, "shm: receive without a send");
}

static void lower_WAIT(lowerer *L, const collc_instr *I) {
  lower_wait(L->W, L->P, I->slot, (int)(I->slot + I->n), L->rcv, L->dst, L->snd, &L->R);
}

/* Local instructions stay, after the readers of what they overwrite. */
static collc_opnd local_dst(lowerer *L, const collc_instr *I) {
  collc_opnd d = import(L->P, L->Q, I->dst);
  flush(L->P, &L->R, &d);
  return d;
}

static void lower_COPY(lowerer *L, const collc_instr *I) {
  collc_opnd d = local_dst(L, I);
  prog_copy(L->P, import(L->P, L->Q, I->src), d);
}

static void lower_REDUCE(lowerer *L, const collc_instr *I) {
  collc_opnd d = local_dst(L, I);
  prog_reduce(L->P, import(L->P, L->Q, I->src), d);
}

static void lower_COMBINE(lowerer *L, const collc_instr *I) {
  collc_opnd d = local_dst(L, I);
  prog_combine(L->P, import(L->P, L->Q, I->src), import(L->P, L->Q, I->src2), d);
}

/* Instructions no message-passing inner program has: refused. */
static void lower_unfit(lowerer *L, const collc_instr *I) {
  prog_fail(L->P, COLLC_EUNFIT, "shm: %s cannot be lowered onto the segment", ops_name(I->op));
}

static void lower_ALLTOALL(lowerer *L, const collc_instr *I) { lower_unfit(L, I); }
static void lower_SIGNAL(lowerer *L, const collc_instr *I) { lower_unfit(L, I); }
static void lower_AWAIT(lowerer *L, const collc_instr *I) { lower_unfit(L, I); }
static void lower_OFFER(lowerer *L, const collc_instr *I) { lower_unfit(L, I); }
static void lower_GET(lowerer *L, const collc_instr *I) { lower_unfit(L, I); }

/* The handler of every opcode: a missing lower_<NAME> does not compile. */
static const lower_fn lower_op[COLLC_OP_COUNT] = {
#define LOWER_ENTRY(name, flags, doc) [COLLC_OP_##name] = lower_##name,
    COLLC_OPS(LOWER_ENTRY)
#undef LOWER_ENTRY
};

/* Emit my lowered program (see the file comment). */
static void lower(const collc_spec *s, const lowering *W, collc_prog *P) {
  const collc_prog *Q = W->Q[s->rank];
  lowerer L = {s, W, P, Q, calloc((size_t)s->p, sizeof *L.got),
               calloc((size_t)Q->nslots + 1, sizeof *L.rcv),
               calloc((size_t)Q->nslots + 1, sizeof *L.snd),
               calloc((size_t)Q->nslots + 1, sizeof *L.dst),
               {calloc((size_t)Q->nins + 1, sizeof *L.R.r), 0, malloc((size_t)s->p * sizeof *L.R.aw)},
               0, 0};
  if (!L.got || !L.rcv || !L.snd || !L.dst || !L.R.r || !L.R.aw)
    prog_fail(P, COLLC_ENOMEM, "shm: out of memory");
  for (int q = 0; L.R.aw && q < s->p; q++) L.R.aw[q] = -1;
  for (int a = 0; a < Q->nins && !P->err; a++) {
    const collc_instr *I = &Q->ins[a];
    if (I->op < COLLC_OP_COUNT) lower_op[I->op](&L, I);
    else prog_fail(P, COLLC_EINTERNAL, "shm: unknown opcode %d", I->op);
  }
  flush(P, &L.R, NULL);
  if (s->p > 1) prog_signal(P, STEP_DONE);
  free(L.got), free(L.rcv), free(L.snd), free(L.dst), free(L.R.r), free(L.R.aw);
}

/* The inner choice of c: its text, or the collective's default. */
static int inner_choice(const collc_spec *s, const collc_choice *c, collc_choice *in, char *why,
                        size_t wlen) {
  const coll_desc *d = coll_desc_of(s->coll);
  collc_spec flat = *s;
  flat.layout = NULL;
  if (!d) {
    snprintf(why, wlen, "shm: unknown collective %d", s->coll);
    return COLLC_EINVAL;
  }
  const char *text = c->net[0] ? c->net : d->shm_inner;
  if (!strncmp(text, "shm", 3) || !strncmp(text, "hier", 4) || !strcmp(text, "native")) {
    snprintf(why, wlen, "shm: '%s' cannot run inside shm", text);
    return COLLC_EINVAL;
  }
  int rc = choice_parse(s->coll, text, in, why, wlen);
  return rc ? rc : choice_resolve(&flat, in, why, wlen);
}

/* "[direct=<bytes>:][<algorithm>]"; direct=-1: never in place. */
static int shm_parse(const char *params, collc_choice *c, char *why, size_t wlen) {
  const char *s = params ? params : "";
  c->direct = SHM_DIRECT;
  if (!strncmp(s, "direct=", 7)) {
    char *end;
    long long v = strtoll(s + 7, &end, 10);
    if (end == s + 7 || (*end && *end != ':') || v < -1) {
      snprintf(why, wlen, "shm: bad direct= (bytes from which messages are read in place)");
      return COLLC_EINVAL;
    }
    c->direct = v;
    s = *end ? end + 1 : end;
  }
  if (strlen(s) >= sizeof c->net) {
    snprintf(why, wlen, "shm: algorithm text too long");
    return COLLC_EINVAL;
  }
  snprintf(c->net, sizeof c->net, "%s", s);
  return 0;
}

static int shm_resolve(const collc_spec *s, collc_choice *c, char *why, size_t wlen) {
  collc_choice in;
  if (!s->layout || s->layout->nnodes != 1) {
    snprintf(why, wlen, "shm: needs every rank on one node");
    return COLLC_EUNFIT;
  }
  if (!coll_counts_shared(s)) { /* (it compiles every rank's program) */
    snprintf(why, wlen, "shm: needs every rank's counts, which this rank does not have");
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
  /* Slots start on cache lines, except where ranks may type the same bytes
   * with elements of different sizes (bcast): rounding in elements would
   * put a slot at different bytes on different ranks. */
  W.line = s->unit_bytes > 0 && 64 % s->unit_bytes == 0 ? 64 / s->unit_bytes : 1;
  if (coll_desc_of(s->coll)->elem_may_differ) W.line = 1;
  W.direct = c->direct;
  if (lay_out(s, &in, P, &W) == 0) {
    prog_need_tmp(P, W.Q[s->rank]->tmp_units);
    if (s->p > 1) prog_need_shm(P, W.units > 0 ? W.units : 1);
    lower(s, &W, P);
  }
  for (int q = 0; W.Q && q < s->p; q++) prog_free(W.Q[q]);
  free(W.Q), free(W.m), free(W.d), free(W.rstart), free(W.rord);
  return P->err;
}

static void shm_format(const collc_choice *c, char *buf, size_t len) {
  char d[32] = "";
  if (c->direct != SHM_DIRECT) snprintf(d, sizeof d, "direct=%lld%s", c->direct, c->net[0] ? ":" : "");
  snprintf(buf, len, "%s%s", d, c->net);
}

const collc_algo algo_shm = {
    "shm", -1, shm_parse, shm_resolve, shm_gen, shm_format, "shm[:direct=<bytes>][:<algorithm>]",
    "any message-passing algorithm with its messages through the node's shared segment "
    "(every rank on one node), direct= ones read in place; default recexch, tree or pairwise",
    ALGO_ONE_NODE, 0};
