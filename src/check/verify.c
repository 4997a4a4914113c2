/* verify.c - the verifier: all p programs in one process, symbolic data.
 *
 * Every unit of every rank's buffers holds a token (token.h): the input
 * units it was made of (leaf id = rank * U + unit of that rank's input, U
 * the input's units), in the order the reduction combined them. Sends
 * and receives are matched FIFO per (source, destination) pair, as MPI's
 * non-overtaking rule does, and complete only when matched (no eager
 * buffering is assumed, so a schedule that relies on it deadlocks here).
 * Group instructions are rendezvous of all members. Per-unit counters of
 * in-flight reads and writes catch any buffer access that races a request.
 *
 * Shared memory (BUF_SHM, SIGNAL, AWAIT): the ranks of a node share one
 * token array. Ordering is tracked with vector clocks: SIGNAL releases the
 * rank's clock, AWAIT acquires the earliest release that satisfies it. A
 * read of a unit must happen after its last write, a write after the last
 * write and every read since, else "missing wait". Programs that use the
 * segment run twice back to back, with fresh inputs the second time, so a
 * rank that rewrites its segment while a slow peer still reads the previous
 * run's data, or that reads stale data, is caught. Rules: before its first
 * segment write of a run a rank awaits step 0 (previous run ended), or any
 * later step, of every other rank of its node; its last segment access is followed by SIGNAL
 * STEP_DONE; no AWAIT with point-to-point requests in flight.
 *
 * Single copy (OFFER, GET): an OFFER counts as a copy into its slot (the
 * executor may make it), and a GET reads both the slot and the owner's own
 * buffer, in place. An offered slot unit remembers what it was offered
 * from: only a GET of exactly that may read it (when the owner's buffer is
 * read in place the executor leaves the slot empty). Each private unit remembers its owner's clock at its
 * last write and every reader's clock at its in-place read: a GET must
 * happen after the owner's last write (and after the owner's run began:
 * that is when its buffer addresses are published), an owner's write or
 * the end of its run after every in-place read since.
 *
 * A collective that synchronizes (barrier: coll_desc) has no result to
 * check; its oracle is causality. Each rank knows, per rank q, the latest
 * run of q whose entry causally precedes where it is (known[q]); a run's
 * start makes its own entry known. Knowledge travels only along real
 * orderings: a SEND snapshots the sender's knowledge when posted, the
 * receiver takes it at the WAIT that completes the matched RECV (a
 * completed send teaches the sender nothing: MPI may buffer it); SIGNAL
 * snapshots, the AWAIT that acquires it takes it; a group call gives every
 * member the union. A rank that ends a run not knowing every rank's entry
 * of that run is reported.
 */
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include "verify.h"
#include "token.h"

typedef struct {
  int64_t value; /* flag value published */
  int64_t *vc;   /* the releasing rank's vector clock then */
  int64_t snap;  /* synchronizes: its knowledge then (kpool offset), else -1 */
} vsig;

typedef struct {
  collc_prog *P;
  int pc, done, epoch;
  int64_t *vc;       /* vector clock (shared-memory programs) */
  int64_t flag;      /* last published flag value */
  vsig *sig;         /* published values in order */
  int nsig, capsig;
  int awaited0;      /* other node ranks awaited at step 0 this run */
  char *aw0;         /* per rank: awaited at step 0 this run */
  int after_done;    /* SIGNAL STEP_DONE was given this run */
  int64_t n[BUF_COUNT];
  vtok *tok[BUF_COUNT];
  uint32_t *rd[BUF_COUNT]; /* in-flight sends reading the unit */
  uint8_t *wr[BUF_COUNT];  /* in-flight receives writing the unit */
  int *slot_req;           /* request per slot, -1 when idle */
  int64_t sent;
  int64_t *pw[BUF_COUNT];  /* single copy: my clock at my last write of the unit */
  int64_t *pr[BUF_COUNT];  /* [u * p + j]: rank j's clock at its in-place read, 0 none */
  uint8_t *known;          /* synchronizes: [q] = 1 + the latest run of q whose entry
                              causally precedes this point (0: none) */
} vrank;

typedef struct {
  int rank, addr, next, complete;
  int64_t snap; /* SEND of a synchronizing collective: the sender's knowledge (kpool) */
  int from;     /* RECV: the matched send request, -1 until matched */
} vreq;

typedef struct {
  collc_group g;
  int count;
  int *ranks;
} vrdv;

typedef struct {
  int64_t n;      /* units */
  vtok *tok;
  int *wrank;     /* last writer, -1 none */
  int64_t *wclk;  /* its clock at the write (INT64_MAX: a receive in flight) */
  int64_t *rclk;  /* [u * k + local]: clock of that rank's last read, 0 none */
  int64_t *offer; /* offered from (offer_tag), -1: written otherwise */
  int k;
} vnode;

/* What an OFFER copies into a slot unit: unit u of rank q's buffer b. */
static int64_t offer_tag(int q, int b, int64_t u) { return ((int64_t)(q * BUF_COUNT + b) << 40) + u; }

typedef struct {
  int p;
  int epochs; /* runs of each program: 2 when the segment is used */
  int remote; /* some program reads other ranks' buffers in place (GET) */
  int in_get; /* a GET is reading its slot (which may be offered) */
  const collc_layout *L;
  vnode *node;
  vtok *fold[2];      /* per run: the reduction of each input unit (folds) */
  char late[256];     /* wrong output of the lowest (run, rank), reported unless a deadlock is */
  int64_t late_at;    /* its run * p + rank */
  int64_t U; /* units of each rank's input */
  vrank *R;
  vreq *req;
  int nreq, cap;
  int *sq, *sqt, *rq, *rqt; /* pending sends / receives per [dst*p + src]: head, tail */
  vrdv *rdv;
  int nrdv;
  int64_t *xa, *xb; /* operand expansion scratch */
  int sync;         /* the collective synchronizes: knowledge is tracked */
  uint8_t *kpool;   /* knowledge snapshots, p bytes each */
  int64_t nk, capk;
  verify_report *rep;
  const collc_spec *S; /* the spec verified (alltoallv's oracle needs every rank's vectors) */
} vstate;

static void verr(vstate *V, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
static void verr(vstate *V, const char *fmt, ...) {
  if (V->rep->errors++ == 0) {
    va_list ap;
    va_start(ap, fmt);
    vsnprintf(V->rep->first_error, sizeof V->rep->first_error, fmt, ap);
    va_end(ap);
  }
}

/* Unit indices of operand o, in message order; returns the count. */
static int64_t expand(const collc_prog *P, collc_opnd o, int64_t *out) {
  int64_t n = 0;
  const collc_shape *S = &P->shapes[o.shape];
  for (int64_t k = 0; k < S->nruns; k++) {
    int64_t off, len;
    shape_run(P, o.shape, k, &off, &len);
    for (int64_t u = 0; u < len; u++) out[n++] = o.off + off + u;
  }
  return n;
}

/* 1 if operand o of rank r names existing units only (else reported). */
static int in_bounds(vstate *V, int r, collc_opnd o) {
  const vrank *X = &V->R[r];
  if (o.buf <= BUF_NONE || o.buf >= BUF_COUNT || o.shape < 0 || o.shape >= X->P->nshapes) {
    verr(V, "rank %d addr %d: bad operand", r, X->pc);
    return 0;
  }
  const collc_shape *S = &X->P->shapes[o.shape];
  if (S->nunits == 0 || (o.off + S->lo >= 0 && o.off + S->hi <= X->n[o.buf])) return 1;
  verr(V, "rank %d addr %d: %s+%lld outside the buffer (%lld units)", r, X->pc,
       buf_name(o.buf), (long long)o.off, (long long)X->n[o.buf]);
  return 0;
}

enum { H_READ, H_WRITE, H_START_READ, H_START_WRITE, H_END_READ, H_END_WRITE };

/* Ordering check and record of access h by rank r to segment unit u. */
static void shm_access(vstate *V, int r, int addr, int64_t u, int h) {
  vrank *X = &V->R[r];
  int node = V->L->node_of[r], me = V->L->local_of[r];
  vnode *N = &V->node[node];
  int w = N->wrank[u], reads = h == H_READ || h == H_START_READ;
  int writes = h == H_WRITE || h == H_START_WRITE;
  if ((reads || writes) && X->after_done)
    verr(V, "rank %d addr %d: SHM[%lld] used after SIGNAL STEP_DONE", r, addr, (long long)u);
  if (reads && !V->in_get && N->offer[u] >= 0)
    verr(V, "rank %d addr %d: reads SHM[%lld], offered (empty when read in place)", r, addr,
         (long long)u);
  if (writes) N->offer[u] = -1;
  if ((reads || writes) && w >= 0 && w != r && X->vc[w] < N->wclk[u])
    verr(V, "rank %d addr %d: %s SHM[%lld] written by rank %d without waiting for it "
         "(missing AWAIT)", r, addr, reads ? "reads" : "overwrites", (long long)u, w);
  if (writes) {
    if (X->awaited0 < N->k - 1)
      verr(V, "rank %d addr %d: writes SHM before awaiting step 0 of every rank of its node",
           r, addr);
    for (int j = 0; j < N->k; j++) {
      int q = layout_rank(V->L, node, j);
      int64_t t = N->rclk[u * N->k + j];
      if (q != r && t && X->vc[q] < t)
        verr(V, "rank %d addr %d: overwrites SHM[%lld] while rank %d may still read it "
             "(missing AWAIT)", r, addr, (long long)u, q);
      N->rclk[u * N->k + j] = 0;
    }
    N->wrank[u] = r;
    N->wclk[u] = h == H_START_WRITE ? INT64_MAX : X->vc[r];
  }
  if (h == H_END_READ) N->rclk[u * N->k + me] = X->vc[r];
  if (h == H_END_WRITE) N->wclk[u] = X->vc[r];
}

/* Single copy: rank r writes (action h) its private unit u of buffer b:
 * every in-place read of it since its last write must be ordered before. */
static void priv_write(vstate *V, int r, int addr, int b, int64_t u, int h) {
  vrank *X = &V->R[r];
  for (int j = 0; j < V->p; j++) {
    int64_t *t = &X->pr[b][u * V->p + j];
    if (*t && X->vc[j] < *t)
      verr(V, "rank %d addr %d: overwrites %s[%lld] while rank %d may still read it in place "
           "(missing AWAIT)", r, addr, buf_name(b), (long long)u, j);
    *t = 0;
  }
  X->pw[b][u] = h == H_START_WRITE ? INT64_MAX : X->vc[r];
}

/* Apply hazard action h to the units of operand o on rank r. */
static void hazard(vstate *V, int r, int addr, collc_opnd o, int h) {
  vrank *X = &V->R[r];
  if (!in_bounds(V, r, o)) return;
  int64_t n = expand(X->P, o, V->xa);
  uint32_t *rd = X->rd[o.buf];
  uint8_t *wr = X->wr[o.buf];
  for (int64_t i = 0; i < n; i++) {
    int64_t u = V->xa[i];
    int busy_w = wr[u] > 0, busy_r = rd[u] > 0;
    if ((h == H_READ || h == H_START_READ) && busy_w)
      verr(V, "rank %d addr %d: reads %s[%lld] while a receive writes it", r, addr,
           buf_name(o.buf), (long long)u);
    if ((h == H_WRITE || h == H_START_WRITE) && (busy_w || busy_r))
      verr(V, "rank %d addr %d: writes %s[%lld] while a request uses it", r, addr,
           buf_name(o.buf), (long long)u);
    if (o.buf == BUF_SHM) shm_access(V, r, addr, u, h);
    else if (V->remote && (h == H_WRITE || h == H_START_WRITE || h == H_END_WRITE))
      priv_write(V, r, addr, o.buf, u, h);
    if (h == H_START_READ) rd[u]++;
    if (h == H_START_WRITE) wr[u]++;
    if (h == H_END_READ) rd[u]--;
    if (h == H_END_WRITE) wr[u]--;
  }
}

/* Move the tokens of rank a's operand sa into rank b's operand db; counts
 * as sent by a unless a == b (a local copy). */
static void transfer(vstate *V, int a, collc_opnd sa, int b, collc_opnd db, const char *what) {
  if (!in_bounds(V, a, sa) || !in_bounds(V, b, db)) return;
  int64_t na = expand(V->R[a].P, sa, V->xa), nb = expand(V->R[b].P, db, V->xb);
  if (na != nb) {
    verr(V, "%s %d -> %d: %lld units sent, %lld expected", what, a, b, (long long)na,
         (long long)nb);
    return;
  }
  vtok *src = V->R[a].tok[sa.buf], *dst = V->R[b].tok[db.buf];
  for (int64_t i = 0; i < na; i++) dst[V->xb[i]] = src[V->xa[i]];
  if (a != b) V->R[a].sent += na;
}

/* A snapshot of rank r's knowledge (its kpool offset), or -1 when not
 * tracked (or out of memory, reported). */
static int64_t know_snap(vstate *V, int r) {
  if (!V->sync) return -1;
  if (V->nk + V->p > V->capk) {
    int64_t cap = V->capk ? 2 * V->capk : 64 * (int64_t)V->p;
    while (cap < V->nk + V->p) cap *= 2;
    uint8_t *k = realloc(V->kpool, (size_t)cap);
    if (!k) return verr(V, "out of memory"), -1;
    V->kpool = k, V->capk = cap;
  }
  memcpy(V->kpool + V->nk, V->R[r].known, (size_t)V->p);
  V->nk += V->p;
  return V->nk - V->p;
}

/* Rank r learns snapshot snap (-1: nothing). */
static void know_merge(vstate *V, int r, int64_t snap) {
  uint8_t *k = V->R[r].known;
  for (int q = 0; snap >= 0 && q < V->p; q++)
    if (V->kpool[snap + q] > k[q]) k[q] = V->kpool[snap + q];
}

/* Pop the head of list (head, tail)[key]; -1 if empty. */
static int pop(vstate *V, int *head, int *tail, int64_t key) {
  int q = head[key];
  if (q >= 0) {
    head[key] = V->req[q].next;
    if (head[key] < 0) tail[key] = -1;
  }
  return q;
}

static void push(vstate *V, int *head, int *tail, int64_t key, int q) {
  V->req[q].next = -1;
  if (tail[key] >= 0) V->req[tail[key]].next = q;
  else head[key] = q;
  tail[key] = q;
}

/* New request for the instruction at rank r's pc, bound to its slot. */
static int new_req(vstate *V, int r, int complete) {
  vrank *X = &V->R[r];
  if (V->nreq == V->cap) {
    V->cap = V->cap ? 2 * V->cap : 1024;
    V->req = realloc(V->req, (size_t)V->cap * sizeof *V->req);
  }
  int q = V->nreq++, slot = X->P->ins[X->pc].slot;
  V->req[q] = (vreq){r, X->pc, -1, complete, -1, -1};
  if (slot < 0 || slot >= X->P->nslots || X->slot_req[slot] >= 0)
    verr(V, "rank %d addr %d: slot %d out of range or in flight", r, X->pc, slot);
  else
    X->slot_req[slot] = q;
  return q;
}

/* Post the SEND (is_send) or RECV I at rank r's pc; match it if its
 * partner is waiting. */
static void post(vstate *V, int r, const collc_instr *I, int is_send) {
  int q = new_req(V, r, 0);
  if (is_send) V->req[q].snap = know_snap(V, r);
  hazard(V, r, V->R[r].pc, is_send ? I->src : I->dst, is_send ? H_START_READ : H_START_WRITE);
  int src = is_send ? r : I->peer, dst = is_send ? I->peer : r;
  int64_t key = (int64_t)dst * V->p + src;
  int m = is_send ? pop(V, V->rq, V->rqt, key) : pop(V, V->sq, V->sqt, key);
  if (m < 0) {
    if (is_send) push(V, V->sq, V->sqt, key, q);
    else push(V, V->rq, V->rqt, key, q);
    return;
  }
  int sq = is_send ? q : m, rq = is_send ? m : q;
  const collc_instr *S = &V->R[src].P->ins[V->req[sq].addr];
  const collc_instr *D = &V->R[dst].P->ins[V->req[rq].addr];
  transfer(V, src, S->src, dst, D->dst, "message");
  V->req[sq].complete = V->req[rq].complete = 1;
  V->req[rq].from = sq;
  V->rep->messages++;
  V->rep->units += opnd_units(V->R[src].P, S->src);
}

/* WAIT at rank r's pc: 1 if all its slots completed (hazards released). */
static int try_wait(vstate *V, int r) {
  vrank *X = &V->R[r];
  const collc_instr *I = &X->P->ins[X->pc];
  for (int64_t s = I->slot; s < I->slot + I->n; s++) {
    if (s < 0 || s >= X->P->nslots || X->slot_req[s] < 0) {
      verr(V, "rank %d addr %d: waits on idle slot %lld", r, X->pc, (long long)s);
      continue;
    }
    if (!V->req[X->slot_req[s]].complete) return 0;
  }
  for (int64_t s = I->slot; s < I->slot + I->n; s++) {
    if (s < 0 || s >= X->P->nslots || X->slot_req[s] < 0) continue;
    const vreq *Q = &V->req[X->slot_req[s]];
    const collc_instr *J = &X->P->ins[Q->addr];
    if (J->op == COLLC_OP_SEND) hazard(V, r, X->pc, J->src, H_END_READ);
    else if (J->op == COLLC_OP_RECV) hazard(V, r, X->pc, J->dst, H_END_WRITE);
    if (J->op == COLLC_OP_RECV && Q->from >= 0) know_merge(V, r, V->req[Q->from].snap);
    X->slot_req[s] = -1;
  }
  return 1;
}

static collc_opnd shifted(collc_opnd o, int64_t by) {
  o.off += by;
  return o;
}

/* Apply hazard action h to every part (member stride apart) of member a's
 * src (which = 0) or dst operand. */
static void group_parts(vstate *V, const vrdv *G, int a, int which, int h) {
  int ra = G->g.base + a * G->g.stride;
  const collc_instr *I = &V->R[ra].P->ins[V->R[ra].pc];
  for (int b = 0; b < G->g.n; b++)
    hazard(V, ra, V->R[ra].pc, shifted(which ? I->dst : I->src, b * I->n), h);
}

/* Execute a complete group rendezvous: member a's part b goes to b's part a.
 * Sources are marked as being read while destinations are written, so a
 * member whose parts overlap its own destination is caught. */
static void run_group(vstate *V, vrdv *G) {
  for (int a = 0; a < G->g.n; a++) group_parts(V, G, a, 0, H_START_READ);
  for (int a = 0; a < G->g.n; a++) group_parts(V, G, a, 1, H_WRITE);
  for (int a = 0; a < G->g.n; a++) {
    int ra = G->g.base + a * G->g.stride;
    const collc_instr *Ia = &V->R[ra].P->ins[V->R[ra].pc];
    for (int b = 0; b < G->g.n; b++) {
      int rb = G->g.base + b * G->g.stride;
      const collc_instr *Ib = &V->R[rb].P->ins[V->R[rb].pc];
      transfer(V, ra, shifted(Ia->src, b * Ia->n), rb, shifted(Ib->dst, a * Ib->n),
               "group part");
      if (a != b) V->rep->units += opnd_units(V->R[ra].P, Ia->src);
    }
  }
  for (int a = 0; a < G->g.n; a++) group_parts(V, G, a, 0, H_END_READ);
  int64_t all = know_snap(V, G->g.base); /* (every member learns the union) */
  for (int a = 1; all >= 0 && a < G->g.n; a++) {
    const uint8_t *k = V->R[G->g.base + a * G->g.stride].known;
    for (int q = 0; q < V->p; q++)
      if (k[q] > V->kpool[all + q]) V->kpool[all + q] = k[q];
  }
  for (int a = 0; a < G->g.n; a++) know_merge(V, G->g.base + a * G->g.stride, all);
  for (int a = 0; a < G->g.n; a++) {
    int ra = G->g.base + a * G->g.stride;
    new_req(V, ra, 1);
    V->R[ra].pc++;
  }
  V->rep->group_calls++;
}

/* Rank r arrives at the group instruction at its pc; 1 if the group ran. */
static int arrive(vstate *V, int r) {
  vrank *X = &V->R[r];
  const collc_instr *I = &X->P->ins[X->pc];
  collc_group g = X->P->groups[I->peer];
  if ((r - g.base) % g.stride || (r - g.base) / g.stride >= g.n || r < g.base) {
    verr(V, "rank %d addr %d: not a member of its group", r, X->pc);
    return 0;
  }
  vrdv *G = NULL;
  for (int i = 0; i < V->nrdv && !G; i++)
    if (!memcmp(&V->rdv[i].g, &g, sizeof g)) G = &V->rdv[i];
  if (!G) {
    V->rdv = realloc(V->rdv, (size_t)(V->nrdv + 1) * sizeof *V->rdv);
    G = &V->rdv[V->nrdv++];
    *G = (vrdv){g, 0, calloc((size_t)g.n, sizeof(int))};
  }
  int j = (r - g.base) / g.stride;
  if (G->ranks[j]) return 0; /* already waiting here */
  G->ranks[j] = 1;
  if (++G->count < g.n) return 0;
  run_group(V, G);
  free(G->ranks);
  *G = V->rdv[--V->nrdv];
  return 1;
}

/* The common part of local instruction I (COPY, REDUCE, COMBINE, OFFER) of
 * rank r: no source may overlap the destination or race a request, and
 * sources and destination agree in size. Leaves src's unit indices in
 * V->xa, dst's in V->xb; returns their count, or -1 (reported). */
static int64_t local_units(vstate *V, int r, const collc_instr *I) {
  vrank *X = &V->R[r];
  int f = ops_flags(I->op);
  hazard(V, r, X->pc, I->src, H_START_READ);
  if (f & OPF_READS2) hazard(V, r, X->pc, I->src2, H_START_READ);
  hazard(V, r, X->pc, I->dst, H_WRITE);
  hazard(V, r, X->pc, I->src, H_END_READ);
  if (f & OPF_READS2) hazard(V, r, X->pc, I->src2, H_END_READ);
  if (!in_bounds(V, r, I->src) || !in_bounds(V, r, I->dst) ||
      ((f & OPF_READS2) && !in_bounds(V, r, I->src2)))
    return -1;
  int64_t n = expand(X->P, I->src, V->xa), nd = expand(X->P, I->dst, V->xb);
  if (n != nd) {
    verr(V, "rank %d addr %d: %lld units into %lld", r, X->pc, (long long)n, (long long)nd);
    return -1;
  }
  return n;
}

/* After reduction I of rank r: none of its n destination units (V->xb)
 * may be undefined (a reduction of data never received). */
static void check_defined(vstate *V, int r, const collc_instr *I, int64_t n) {
  const vtok *d = V->R[r].tok[I->dst.buf];
  for (int64_t i = 0; i < n; i++)
    if (d[V->xb[i]].n == 0) {
      verr(V, "rank %d addr %d: %s of undefined data", r, V->R[r].pc, ops_name(I->op));
      return;
    }
}

/* GET at rank r's pc: dst = rank q's src read in place (ordered after q's
 * last write of it and inside q's current run); also a read of the slot,
 * which must hold the same data (the executor reads it when q's buffer
 * cannot be read in place). */
static void remote_get(vstate *V, int r, const collc_instr *I) {
  vrank *X = &V->R[r];
  int q = I->peer;
  V->in_get = 1;
  hazard(V, r, X->pc, I->src2, H_READ);
  V->in_get = 0;
  if (!V->L || q < 0 || q >= V->p || q == r || V->L->node_of[q] != V->L->node_of[r]) {
    verr(V, "rank %d addr %d: GET from rank %d, not of its node", r, X->pc, q);
    return;
  }
  vrank *Q = &V->R[q];
  int b = I->src.buf;
  if (b <= BUF_NONE || b >= BUF_COUNT || b == BUF_SHM || !in_bounds(V, r, I->dst)) {
    verr(V, "rank %d addr %d: GET of a bad operand", r, X->pc);
    return;
  }
  hazard(V, r, X->pc, I->dst, H_WRITE); /* (before expanding: hazard uses V->xa) */
  int64_t n = expand(X->P, I->src, V->xa), nd = expand(X->P, I->dst, V->xb);
  if (n != nd) {
    verr(V, "rank %d addr %d: GET of %lld units into %lld", r, X->pc, (long long)n,
         (long long)nd);
    return;
  }
  if (Q->epoch != X->epoch)
    verr(V, "rank %d addr %d: reads rank %d's %s in place after rank %d ended the run "
         "(missing AWAIT)", r, X->pc, q, buf_name(b), q);
  for (int64_t i = 0; i < n; i++) {
    int64_t u = V->xa[i];
    if (u < 0 || u >= Q->n[b]) {
      verr(V, "rank %d addr %d: GET of %s[%lld] outside rank %d's buffer", r, X->pc,
           buf_name(b), (long long)u, q);
      return;
    }
    if (Q->pw[b][u] > X->vc[q])
      verr(V, "rank %d addr %d: reads rank %d's %s[%lld] in place before that is written "
           "(missing AWAIT)", r, X->pc, q, buf_name(b), (long long)u);
    Q->pr[b][u * V->p + r] = X->vc[r];
  }
  vtok *d = X->tok[I->dst.buf];
  const vtok *sl = X->tok[BUF_SHM];
  int64_t *x2 = malloc((size_t)(n + 1) * sizeof *x2);
  if (!x2 || !in_bounds(V, r, I->src2) || expand(X->P, I->src2, x2) != n) {
    verr(V, "rank %d addr %d: GET with a bad slot", r, X->pc);
    free(x2);
    return;
  }
  const int64_t *tag = V->node[V->L->node_of[r]].offer;
  for (int64_t i = 0; i < n; i++) {
    vtok t = Q->tok[b][V->xa[i]];
    if (tag[x2[i]] != offer_tag(q, b, V->xa[i])) {
      verr(V, "rank %d addr %d: SHM[%lld] was not offered from rank %d's %s[%lld]", r, X->pc,
           (long long)x2[i], q, buf_name(b), (long long)V->xa[i]);
      break;
    }
    if (!tok_same(t, sl[x2[i]], 1)) {
      verr(V, "rank %d addr %d: SHM[%lld] does not hold rank %d's offered %s[%lld] "
           "(missing AWAIT, or stale)", r, X->pc, (long long)x2[i], q, buf_name(b),
           (long long)V->xa[i]);
      break;
    }
    d[V->xb[i]] = t;
  }
  free(x2);
  V->rep->units += n;
}

/* OFFER at rank r's pc (after its copy): tag the slot units with their
 * source. */
static void offer(vstate *V, int r, const collc_instr *I) {
  vrank *X = &V->R[r];
  if (!V->L || I->dst.buf != BUF_SHM || I->src.buf == BUF_SHM || !in_bounds(V, r, I->src) ||
      !in_bounds(V, r, I->dst))
    return;
  int64_t n = expand(X->P, I->src, V->xa);
  if (expand(X->P, I->dst, V->xb) != n) return;
  int64_t *tag = V->node[V->L->node_of[r]].offer;
  for (int64_t i = 0; i < n; i++) tag[V->xb[i]] = offer_tag(r, I->src.buf, V->xa[i]);
}

/* SIGNAL at rank r's pc: publish (epoch, n) with r's clock, then tick. */
static void shm_signal(vstate *V, int r, const collc_instr *I) {
  vrank *X = &V->R[r];
  int64_t value = (int64_t)X->epoch * STEP_DONE + I->n;
  if (!V->L || value <= X->flag) {
    verr(V, "rank %d addr %d: SIGNAL %lld does not follow %lld", r, X->pc, (long long)I->n,
         (long long)(X->flag - (int64_t)X->epoch * STEP_DONE));
    return;
  }
  if (X->nsig == X->capsig) {
    X->capsig = X->capsig ? 2 * X->capsig : 8;
    X->sig = realloc(X->sig, (size_t)X->capsig * sizeof *X->sig);
  }
  int64_t *snap = malloc((size_t)V->p * sizeof *snap);
  if (!X->sig || !snap) {
    free(snap);
    verr(V, "out of memory");
    return;
  }
  memcpy(snap, X->vc, (size_t)V->p * sizeof *snap);
  X->sig[X->nsig++] = (vsig){value, snap, know_snap(V, r)};
  X->flag = value;
  X->vc[r]++;
  if (I->n == STEP_DONE) X->after_done = 1;
}

/* AWAIT at rank r's pc: 1 if peer's flag has reached the step (r acquires
 * the earliest release that did), 0 if r must wait. */
static int shm_await(vstate *V, int r, const collc_instr *I) {
  vrank *X = &V->R[r];
  int q = I->peer;
  int64_t want = (int64_t)X->epoch * STEP_DONE + I->n;
  for (int s = 0; s < X->P->nslots; s++)
    if (X->slot_req[s] >= 0) {
      verr(V, "rank %d addr %d: AWAIT with request slot %d in flight", r, X->pc, s);
      break;
    }
  if (!V->L || q < 0 || q >= V->p || V->L->node_of[q] != V->L->node_of[r] || q == r) {
    verr(V, "rank %d addr %d: AWAIT on rank %d, not of its node", r, X->pc, q);
    return 1;
  }
  const vrank *Q = &V->R[q];
  int s = 0;
  while (s < Q->nsig && Q->sig[s].value < want) s++;
  if (want > 0 && s == Q->nsig) return 0;
  for (int i = 0; want > 0 && i < V->p; i++)
    if (Q->sig[s].vc[i] > X->vc[i]) X->vc[i] = Q->sig[s].vc[i];
  if (want > 0) know_merge(V, r, Q->sig[s].snap);
  if (!X->aw0[q]) X->aw0[q] = 1, X->awaited0++; /* (any step of this run: q ended the last) */
  return 1;
}

static void set_inputs(vstate *V, int r);
static void check_rank(vstate *V, int r);

/* Rank r ended a run: its rules and outputs; 1 if it runs again. */
static int end_run(vstate *V, int r) {
  vrank *X = &V->R[r];
  for (int s = 0; s < X->P->nslots; s++)
    if (X->slot_req[s] >= 0) verr(V, "rank %d: request in slot %d never waited", r, s);
  if (X->P->shm_units && V->L->size[V->L->node_of[r]] > 1 && !X->after_done)
    verr(V, "rank %d: uses SHM but ends without SIGNAL STEP_DONE", r);
  for (int b = BUF_SEND; V->remote && b < BUF_COUNT; b++)
    for (int64_t i = 0; b != BUF_SHM && i < X->n[b] * V->p; i++)
      if (X->pr[b][i] && X->vc[i % V->p] < X->pr[b][i]) {
        verr(V, "rank %d: ends its run while rank %lld may still read its %s[%lld] in place "
             "(missing AWAIT)", r, (long long)(i % V->p), buf_name(b), (long long)(i / V->p));
        break;
      }
  for (int q = 0; V->sync && q < V->p; q++)
    if (X->known[q] <= X->epoch) {
      verr(V, "rank %d leaves%s before rank %d has entered (no chain of messages or flags "
           "from its entry)", r, X->epoch ? " the second run" : "", q);
      break;
    }
  check_rank(V, r);
  if (++X->epoch == V->epochs) return 0;
  X->pc = 0, X->after_done = 0, X->awaited0 = 0;
  memset(X->aw0, 0, (size_t)V->p);
  set_inputs(V, r);
  return 1;
}

/* What an instruction's handler did: rank r must wait at it; it is done
 * (go on to the next); or a group call ran, which moved all its members. */
enum { V_BLOCKED = 0, V_NEXT, V_GROUP };

/* Handlers, one per opcode (the table below): instruction I at rank r's
 * pc, applied to the symbolic state; V_BLOCKED, V_NEXT or V_GROUP. */
typedef int (*vstep)(vstate *V, int r, const collc_instr *I);

static int verify_NOP(vstate *V, int r, const collc_instr *I) {
  (void)V, (void)r, (void)I;
  return V_NEXT;
}

static int verify_SEND(vstate *V, int r, const collc_instr *I) {
  post(V, r, I, 1);
  return V_NEXT;
}

static int verify_RECV(vstate *V, int r, const collc_instr *I) {
  post(V, r, I, 0);
  return V_NEXT;
}

static int verify_WAIT(vstate *V, int r, const collc_instr *I) {
  (void)I;
  return try_wait(V, r) ? V_NEXT : V_BLOCKED;
}

/* dst = src. */
static int verify_COPY(vstate *V, int r, const collc_instr *I) {
  int64_t n = local_units(V, r, I);
  if (n < 0) return V_NEXT;
  vtok *s = V->R[r].tok[I->src.buf], *d = V->R[r].tok[I->dst.buf];
  for (int64_t i = 0; i < n; i++) d[V->xb[i]] = s[V->xa[i]];
  return V_NEXT;
}

/* dst = src op dst. */
static int verify_REDUCE(vstate *V, int r, const collc_instr *I) {
  int64_t n = local_units(V, r, I);
  if (n < 0) return V_NEXT;
  vtok *s = V->R[r].tok[I->src.buf], *d = V->R[r].tok[I->dst.buf];
  for (int64_t i = 0; i < n; i++) d[V->xb[i]] = tok_concat(s[V->xa[i]], d[V->xb[i]]);
  check_defined(V, r, I, n);
  return V_NEXT;
}

/* dst = src op src2: src2's units pair with src's in message order. */
static int verify_COMBINE(vstate *V, int r, const collc_instr *I) {
  vrank *X = &V->R[r];
  int64_t n = local_units(V, r, I);
  if (n < 0) return V_NEXT;
  const vtok *s = X->tok[I->src.buf], *s2 = X->tok[I->src2.buf];
  vtok *d = X->tok[I->dst.buf];
  int64_t *x2 = malloc((size_t)(n + 1) * sizeof *x2);
  if (!x2) {
    verr(V, "out of memory");
    return V_NEXT;
  }
  expand(X->P, I->src2, x2);
  for (int64_t i = 0; i < n; i++) d[V->xb[i]] = tok_concat(s[V->xa[i]], s2[x2[i]]);
  free(x2);
  check_defined(V, r, I, n);
  return V_NEXT;
}

static int verify_ALLTOALL(vstate *V, int r, const collc_instr *I) {
  (void)I;
  return arrive(V, r) ? V_GROUP : V_BLOCKED;
}

static int verify_SIGNAL(vstate *V, int r, const collc_instr *I) {
  shm_signal(V, r, I);
  return V_NEXT;
}

static int verify_AWAIT(vstate *V, int r, const collc_instr *I) {
  return shm_await(V, r, I) ? V_NEXT : V_BLOCKED;
}

/* A copy into the slot (the executor may make it), tagged with its source. */
static int verify_OFFER(vstate *V, int r, const collc_instr *I) {
  verify_COPY(V, r, I);
  offer(V, r, I);
  return V_NEXT;
}

static int verify_GET(vstate *V, int r, const collc_instr *I) {
  remote_get(V, r, I);
  return V_NEXT;
}

/* The handler of every opcode: a missing verify_<NAME> does not compile. */
static const vstep verify_step[COLLC_OP_COUNT] = {
#define VERIFY_ENTRY(name, flags, doc) [COLLC_OP_##name] = verify_##name,
    COLLC_OPS(VERIFY_ENTRY)
#undef VERIFY_ENTRY
};

/* Run rank r until it blocks or ends; returns 1 if anything advanced. */
static int run_rank(vstate *V, int r) {
  vrank *X = &V->R[r];
  int moved = 0;
  for (;;) {
    if (X->pc == X->P->nins && !end_run(V, r)) break;
    if (X->pc == X->P->nins) continue; /* (an empty program) */
    const collc_instr *I = &X->P->ins[X->pc];
    int rc = V_NEXT;
    if (I->op < COLLC_OP_COUNT) rc = verify_step[I->op](V, r, I);
    else verr(V, "rank %d addr %d: unknown opcode %d", r, X->pc, I->op);
    if (rc == V_BLOCKED) return moved;
    if (rc == V_GROUP) return 1;
    X->pc++;
    moved = 1;
  }
  X->done = 1;
  return moved;
}

/* Leaf id of unit u of rank q's input in run e. */
static int64_t leaf_id(const vstate *V, int e, int q, int64_t u) {
  return ((int64_t)e * V->p + q) * V->U + u;
}

/* Fill rank r's input with the leaf tokens of its current run. */
static void set_inputs(vstate *V, int r) {
  vrank *X = &V->R[r];
  coll_region in = coll_desc_of(X->P->spec.coll)->input(&X->P->spec, r);
  if (V->sync) X->known[r] = (uint8_t)(X->epoch + 1); /* (its entry of this run) */
  for (int64_t u = 0; u < in.units && in.off + u < X->n[in.buf]; u++)
    X->tok[in.buf][in.off + u] = tok_leaf(leaf_id(V, X->epoch, r, u));
  for (int b = BUF_SEND; V->remote && b < BUF_COUNT; b++) /* a new run: fresh buffers */
    for (int64_t u = 0; b != BUF_SHM && u < X->n[b]; u++) {
      X->pw[b][u] = X->vc[r];
      memset(&X->pr[b][u * V->p], 0, (size_t)V->p * sizeof(int64_t));
    }
}

/* Allocate rank r's buffers (SHM: its node's) and fill its input. */
static int setup_rank(vstate *V, int r) {
  vrank *X = &V->R[r];
  for (int b = BUF_SEND; b < BUF_COUNT; b++) {
    int64_t n = X->n[b] = prog_buf_units(X->P, b);
    X->tok[b] = b == BUF_SHM ? NULL : malloc((size_t)(n + 1) * sizeof(vtok));
    X->rd[b] = calloc((size_t)n + 1, sizeof(uint32_t));
    X->wr[b] = calloc((size_t)n + 1, 1);
    if ((b != BUF_SHM && !X->tok[b]) || !X->rd[b] || !X->wr[b]) return -1;
    if (V->remote && b != BUF_SHM) {
      X->pw[b] = malloc((size_t)(n + 1) * sizeof(int64_t));
      X->pr[b] = calloc((size_t)(n + 1) * (size_t)V->p, sizeof(int64_t));
      if (!X->pw[b] || !X->pr[b]) return -1;
    }
    for (int64_t u = 0; u < n && b != BUF_SHM; u++) X->tok[b][u] = tok_undefined();
  }
  if (V->node) X->tok[BUF_SHM] = V->node[V->L->node_of[r]].tok;
  X->vc = calloc((size_t)V->p, sizeof(int64_t));
  X->aw0 = calloc((size_t)V->p, 1);
  X->known = calloc((size_t)V->p, 1);
  X->slot_req = malloc(((size_t)X->P->nslots + 1) * sizeof(int));
  if (!X->slot_req || !X->vc || !X->aw0 || !X->known) return -1;
  X->vc[r] = 1;
  set_inputs(V, r);
  for (int s = 0; s <= X->P->nslots; s++) X->slot_req[s] = -1;
  return 0;
}

/* Node segments for programs that use one (all ranks of a node must agree
 * on its size); 0, or -1 out of memory / on disagreement (reported). */
static int setup_nodes(vstate *V) {
  int used = 0;
  for (int r = 0; r < V->p; r++) used |= V->R[r].P->shm_units > 0;
  if (!used) return 0;
  if (!V->L) return verr(V, "programs use SHM without a node layout"), -1;
  V->epochs = 2;
  V->node = calloc((size_t)V->L->nnodes, sizeof *V->node);
  for (int n = 0; V->node && n < V->L->nnodes; n++) {
    vnode *N = &V->node[n];
    N->k = V->L->size[n];
    N->n = V->R[layout_rank(V->L, n, 0)].P->shm_units;
    for (int j = 1; j < N->k; j++)
      if (V->R[layout_rank(V->L, n, j)].P->shm_units != N->n)
        return verr(V, "ranks of node %d disagree on the segment size", n), -1;
    N->tok = malloc((size_t)(N->n + 1) * sizeof *N->tok);
    N->wrank = malloc((size_t)(N->n + 1) * sizeof(int));
    N->wclk = calloc((size_t)N->n + 1, sizeof(int64_t));
    N->rclk = calloc((size_t)(N->n + 1) * (size_t)N->k, sizeof(int64_t));
    N->offer = malloc((size_t)(N->n + 1) * sizeof(int64_t));
    if (!N->tok || !N->wrank || !N->wclk || !N->rclk || !N->offer) return -1;
    for (int64_t u = 0; u < N->n; u++)
      N->tok[u] = tok_undefined(), N->wrank[u] = -1, N->offer[u] = -1;
  }
  return V->node ? 0 : -1;
}

static void free_state(vstate *V, int own_programs) {
  for (int r = 0; r < V->p && V->R; r++) {
    vrank *X = &V->R[r];
    for (int b = 0; b < BUF_COUNT; b++) {
      if (b != BUF_SHM) free(X->tok[b]);
      free(X->rd[b]);
      free(X->wr[b]);
      free(X->pw[b]);
      free(X->pr[b]);
    }
    for (int i = 0; i < X->nsig; i++) free(X->sig[i].vc);
    free(X->sig), free(X->vc), free(X->aw0), free(X->known), free(X->slot_req);
    if (own_programs) prog_free(X->P);
  }
  for (int n = 0; V->node && n < V->L->nnodes; n++)
    free(V->node[n].tok), free(V->node[n].wrank), free(V->node[n].wclk), free(V->node[n].rclk),
        free(V->node[n].offer);
  free(V->node);
  for (int i = 0; i < V->nrdv; i++) free(V->rdv[i].ranks);
  free(V->R), free(V->req), free(V->rdv), free(V->xa), free(V->xb);
  free(V->sq), free(V->sqt), free(V->rq), free(V->rqt);
  free(V->fold[0]), free(V->fold[1]);
  free(V->kpool);
}

/* Allocate the state for programs progs[0..p-1] (given, or compiled from c
 * when progs is NULL); 0 or -1. */
/* Alltoallv (every rank's vectors, s->vall): rank sr->rank's spec as the
 * dispatch layer gives it: its own vectors only (vall 0), or for a choice
 * that agrees what the agreement round gives (src/mpi/agree.c): the other
 * ranks' send sides, its own both sides and displacements, zeros elsewhere.
 * So a program reading more is caught. *own: the vectors, malloc'd. 0, or
 * -1 out of memory. */
static int a2av_view(collc_spec *sr, const collc_choice *c, int64_t **own) {
  int p = sr->p, side = sr->in_place ? A2AV_RECV : A2AV_SEND, all = algo_registry[c->algo]->agrees;
  size_t vec = 2 * (size_t)p, n = all ? (size_t)p * vec : vec, at = all ? (size_t)sr->rank * vec : 0;
  const int64_t *oc = spec_own_vec(sr, sr->counts), *od = spec_own_vec(sr, sr->displs);
  int64_t *C = sr->vall ? calloc(2 * n, sizeof *C) : NULL, *D = C + n;
  if (!sr->vall) return 0;
  if (!C) return -1;
  for (int q = 0; all && q < p; q++)
    for (int j = 0; j < p; j++) C[q * vec + side * p + j] = a2av_count(sr, q, A2AV_SEND, j);
  memcpy(C + at, oc, vec * sizeof *C);
  if (od) memcpy(D + at, od, vec * sizeof *D);
  sr->counts = *own = C, sr->displs = od ? D : NULL, sr->vall = all;
  return 0;
}

/* Gatherv and scatterv off the root, for a choice that does not agree on
 * the counts: the rank's spec as MPI gives it (its own count, zeros, no
 * displs; *own the counts, malloc'd), so that a program reading other
 * ranks' counts is caught. 0, or -1 out of memory. */
static int mpi_view(collc_spec *sr, const collc_choice *c, int64_t **own) {
  if (coll_desc_of(sr->coll)->counts_local) return a2av_view(sr, c, own);
  if (!coll_desc_of(sr->coll)->root_counts || sr->rank == sr->root || algo_registry[c->algo]->agrees)
    return 0;
  if (!(*own = calloc((size_t)sr->p, sizeof **own))) return -1;
  (*own)[sr->rank] = sr->counts[sr->rank];
  sr->counts = *own, sr->displs = NULL, sr->count = (*own)[sr->rank], sr->agreed = 0;
  return 0;
}

static int setup(vstate *V, const collc_spec *s, const collc_choice *c,
                 collc_prog *const progs[]) {
  int p = V->p = s->p;
  size_t pp = (size_t)p * (size_t)p;
  const coll_desc *d = coll_desc_of(s->coll);
  if (!d) return verr(V, "unknown collective %d", s->coll), -1;
  V->S = s;
  V->U = 1; /* leaf ids: units per rank, the widest input (counted ones differ), >= 1 */
  for (int r = 0; r < p; r++)
    if (d->input(s, r).units > V->U) V->U = d->input(s, r).units;
  V->sync = d->synchronizes;
  V->R = calloc((size_t)p, sizeof *V->R);
  V->sq = malloc(pp * sizeof(int)), V->sqt = malloc(pp * sizeof(int));
  V->rq = malloc(pp * sizeof(int)), V->rqt = malloc(pp * sizeof(int));
  if (!V->R || !V->sq || !V->sqt || !V->rq || !V->rqt) return -1;
  memset(V->sq, -1, pp * sizeof(int)), memset(V->sqt, -1, pp * sizeof(int));
  memset(V->rq, -1, pp * sizeof(int)), memset(V->rqt, -1, pp * sizeof(int));
  int64_t maxn = 1;
  V->L = s->layout, V->epochs = 1;
  for (int r = 0; r < p; r++) {
    collc_spec sr = spec_rank(s, r);
    char why[200];
    int64_t *own = NULL;
    if (!progs && mpi_view(&sr, c, &own)) return -1;
    V->R[r].P = progs ? progs[r] : choice_compile(&sr, c, why, sizeof why);
    free(own);
    if (!V->R[r].P) {
      verr(V, "rank %d: %s", r, progs ? "no program" : why);
      return -1;
    }
  }
  for (int r = 0; r < p; r++)
    for (int a = 0; a < V->R[r].P->nins; a++) V->remote |= (ops_flags(V->R[r].P->ins[a].op) & OPF_REMOTE) != 0;
  if (setup_nodes(V)) return -1;
  for (int r = 0; r < p; r++) {
    if (setup_rank(V, r)) return -1;
    for (int b = 0; b < BUF_COUNT; b++)
      if (V->R[r].n[b] > maxn) maxn = V->R[r].n[b];
  }
  V->xa = malloc((size_t)maxn * sizeof(int64_t));
  V->xb = malloc((size_t)maxn * sizeof(int64_t));
  return V->xa && V->xb ? 0 : -1;
}

/* The reduction over all ranks, in rank order, of input unit e of run
 * ep, for every e < U (computed once per run); NULL if not a reduction or
 * out of memory. */
static vtok *folds(vstate *V, const collc_spec *s, int ep) {
  if (!coll_reduces(s->coll) || V->fold[ep]) return V->fold[ep];
  vtok *f = V->fold[ep] = malloc((size_t)(V->U + 1) * sizeof *f);
  for (int64_t e = 0; f && e < V->U; e++) {
    f[e] = tok_leaf(leaf_id(V, ep, 0, e));
    for (int q = 1; q < V->p; q++) f[e] = tok_concat(f[e], tok_leaf(leaf_id(V, ep, q, e)));
  }
  return f;
}

/* What RECV unit u of rank r must hold after run ep, as the collective's
 * row says (fold: see folds()). Returns 0 if the unit is not part of the
 * result (reduce off the root, reduce_scatter_block's other blocks). */
static int expected(const vstate *V, const collc_spec *s, const vtok *fold, int ep, int r,
                    int64_t u, vtok *want) {
  coll_want w = coll_desc_of(s->coll)->expect(s, r, u);
  if (w.kind == COLL_NOT_RESULT) return 0;
  *want = w.kind == COLL_LEAF ? tok_leaf(leaf_id(V, ep, w.rank, w.unit)) : fold[w.unit];
  return 1;
}

/* Describe token t into buf for error messages. */
static const char *describe(const vstate *V, vtok t, char *buf, size_t len) {
  int64_t run = V->p * V->U;
  if (t.n == 0) snprintf(buf, len, "undefined");
  else if (t.n == 1) snprintf(buf, len, "unit %lld of rank %lld%s", (long long)(t.leaf % V->U),
                              (long long)(t.leaf % run / V->U),
                              V->epochs > 1 && t.leaf >= run ? " (second run)" : "");
  else snprintf(buf, len, "a combination of %lld contributions", (long long)t.n);
  return buf;
}

/* Every output unit of rank r must hold what the collective defines after
 * the run it just ended (the first mismatch is kept in V->late); order of
 * combination only matters for non-commutative operations. */
static void check_rank(vstate *V, int r) {
  collc_spec sr = spec_rank(V->S, r); /* (a program's own spec holds its rank's vectors only) */
  const coll_desc *d = coll_desc_of(sr.coll); /* (off the root, MPI gives gatherv fewer counts) */
  const collc_spec *s = d->counts_local || d->root_counts ? &sr : &V->R[r].P->spec;
  int ordered = !(coll_reduces(s->coll) && s->commutative), ep = V->R[r].epoch;
  int64_t n = V->R[r].n[BUF_RECV];
  vtok *fold = folds(V, s, ep);
  if (V->late[0] && V->late_at < (int64_t)ep * V->p + r) return;
  if (coll_reduces(s->coll) && !fold) {
    snprintf(V->late, sizeof V->late, "out of memory");
    return;
  }
  for (int64_t u = 0; u < n; u++) {
    vtok want, got = V->R[r].tok[BUF_RECV][u];
    char g[96], w[96];
    if (!expected(V, s, fold, ep, r, u, &want) || tok_same(got, want, ordered)) continue;
    snprintf(V->late, sizeof V->late, "rank %d RECV[%lld] holds %s, expected %s%s%s", r,
             (long long)u, describe(V, got, g, sizeof g), describe(V, want, w, sizeof w),
             got.n == want.n && ordered ? " (wrong contributions or order)" : "",
             ep ? " after the second run" : "");
    V->late_at = (int64_t)ep * V->p + r;
    return;
  }
}

/* Sweep the ranks until nothing moves; report ranks left blocked. */
static void run_all(vstate *V) {
  int moved = 1;
  while (moved) {
    moved = 0;
    for (int r = 0; r < V->p; r++)
      if (!V->R[r].done) moved |= run_rank(V, r);
  }
  for (int r = 0; r < V->p; r++)
    if (!V->R[r].done) {
      if (!V->rep->deadlock)
        verr(V, "deadlock: rank %d blocked at addr %d (%s)", r, V->R[r].pc,
             ops_name(V->R[r].P->ins[V->R[r].pc].op));
      V->rep->deadlock = 1;
    }
}

/* Run the p programs of spec s (compiled from c, or given) and check them. */
static int verify(const collc_spec *s, const collc_choice *c, collc_prog *const progs[],
                  verify_report *R) {
  vstate V;
  memset(&V, 0, sizeof V);
  memset(R, 0, sizeof *R);
  V.rep = R;
  if (setup(&V, s, c, progs) == 0) {
    run_all(&V);
    if (!R->deadlock && V.late[0]) verr(&V, "%s", V.late);
    for (int r = 0; r < V.p; r++)
      if (V.R[r].sent > R->max_rank_units) R->max_rank_units = V.R[r].sent;
  } else if (!R->errors) {
    verr(&V, "out of memory");
  }
  free_state(&V, progs == NULL);
  R->ok = R->errors == 0;
  return R->ok;
}

int verify_choice(const collc_spec *s, const collc_choice *c, verify_report *R) {
  return verify(s, c, NULL, R);
}

int verify_programs(const collc_spec *s, collc_prog *const progs[], verify_report *R) {
  return verify(s, NULL, progs, R);
}
