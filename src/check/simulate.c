/* simulate.c - the cost simulator (simulate.h).
 *
 * Each rank's program is first flattened into simulator operations (sop):
 * operand shapes become byte counts and a native group ALLTOALL becomes
 * its point-to-point pattern, so the programs can be freed before the run.
 * Messages match dynamically in MPI's order: per (source, destination,
 * channel) one FIFO holds whichever side has posted unmatched. Ranks wait in a
 * heap ordered by their clocks; the earliest runs until it blocks or passes
 * the next one, so shared network links are granted in time order.
 */
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include "simulate.h"

typedef struct {
  uint8_t op;    /* COLLC_OP_*; ALLTOALL (expanded) marks its request slot complete */
  int32_t peer;  /* SEND/RECV/AWAIT/GET: rank; WAIT: slot count */
  int32_t slot;  /* SEND/RECV: request slot; WAIT: first slot */
  int32_t addr;  /* instruction of the program it comes from */
  int32_t chan;  /* SEND/RECV: 0 on the communicator, else a group's channel */
  int64_t bytes; /* SEND/RECV/COPY/...: bytes; SIGNAL/AWAIT: the step */
} sop;

typedef struct {
  int src, dst, chan, posted; /* posted: 1 send, 2 receive, 3 both */
  int next;                   /* next unmatched message of the same pair, -1 */
  int64_t bytes;
  double ts, tr, arr;         /* send, receive posted; data arrived (-1: not yet) */
} smsg;

typedef struct {
  int src, dst, chan; /* src -1: a free entry */
  int head, tail;     /* oldest and newest unmatched message, head -1: none */
} pairq;

typedef struct {
  sop *ops;
  int nops, pc, nslots, blocked, inheap, done;
  int *slot;      /* slot -> message * 2 + (1 for the receive side), -1 free,
                     -2 a completed group call */
  int wi;         /* WAIT in progress: its next slot to check (slots before it are done) */
  double t, wt;   /* clock; WAIT in progress: the latest completion seen */
  double *sig_t;  /* SIGNAL times, in order, with their steps sig_n */
  int64_t *sig_n;
  int nsig, cap_sig;
  int64_t sent_msgs, sent_bytes;
} srank;

typedef struct {
  const collc_spec *s;
  const sim_params *M;
  const collc_layout *L;
  int p;
  srank *R;
  smsg *msg;
  int nmsg, cap_msg;
  pairq *pq;         /* FIFOs of unmatched messages: open addressing on (src, dst, chan), */
  int64_t npq;       /* npq a power of two above all ranks' posts; or dense: src * p + dst */
  int dense;
  double *out_free, *in_free; /* per node: when its network link is next free */
  int64_t nops;      /* operations of all ranks so far (at most SIM_MAX_OPS) */
  int *heap, nheap;
  int *waiters, nwaiters, cap_waiters; /* ranks blocked in AWAIT */
  sim_report *rep;
} sim;

/* ---- parameters ---- */

/* The torus paper's cluster as bench/platforms/paper-36x32.xml models it
 * (SMPI, lat/bw factors 1, computation not simulated): node links 12.5 GB/s
 * each way, loopback 20 GB/s per message and not shared, local work free.
 * Latencies as smpirun -np 64 collc-bench --calibrate measured them on two
 * of its nodes: 0.31 us in a node, 1.53 us between nodes (two 0.5 us hops
 * and SMPI's own overheads). */
static const sim_params preset_paper = {
    {0.31e-6, 0.31e-6, 1.53e-6}, {20e9, 20e9, 12.5e9}, 12.5e9, 0, 0, 0, 0.2e-6, 65536,
    COMP_LINEAR};
/* This 2-core machine: mpirun -np 2 collc-bench --calibrate, Open MPI 4.1,
 * one node (all levels alike); eager: Open MPI's shared-memory limit. */
static const sim_params preset_local = {
    {1.8e-6, 1.8e-6, 1.8e-6}, {1.2e10, 1.2e10, 1.2e10}, 0, 3e-8, 4e10, 1.4e10, 1e-7, 4096,
    COMP_LINEAR};

/* Parse "a,b,c" (or one value for all three) into v[3]; 0 or -1. */
static int parse_levels(const char *s, double v[SIM_LEVELS]) {
  char *end;
  for (int i = 0; i < SIM_LEVELS; i++) {
    v[i] = strtod(s, &end);
    if (end == s || !(v[i] >= 0) || !isfinite(v[i])) return -1;
    if (i == 0 && (*end == 0)) {
      v[1] = v[2] = v[0];
      return 0;
    }
    if (i < SIM_LEVELS - 1 && *end != '/') return -1;
    s = end + 1;
  }
  return *end ? -1 : 0;
}

/* Apply one word "key=value" (or a preset name) to M; 0 or -1. */
static int param_word(char *w, sim_params *M) {
  char *v = strchr(w, '='), *end;
  if (!v) {
    if (!strcmp(w, "paper")) return *M = preset_paper, 0;
    if (!strcmp(w, "local")) return *M = preset_local, 0;
    return -1;
  }
  *v++ = 0;
  if (!strcmp(w, "lat")) return parse_levels(v, M->lat);
  if (!strcmp(w, "bw")) return parse_levels(v, M->bw);
  if (!strcmp(w, "group")) {
    int c = comp_from_name(v, strlen(v));
    if (c != COMP_LINEAR && c != COMP_PAIRWISE) return -1;
    return M->group_comp = c, 0;
  }
  double x = strtod(v, &end);
  if (end == v || *end || x < 0 || !isfinite(x)) return -1;
  double *f = !strcmp(w, "nic") ? &M->nic_bw : !strcmp(w, "o") ? &M->o
            : !strcmp(w, "copy") ? &M->copy_bw : !strcmp(w, "reduce") ? &M->reduce_bw
            : !strcmp(w, "flag") ? &M->flag_lat : !strcmp(w, "eager") ? &M->eager : NULL;
  return f ? (*f = x, 0) : -1;
}

/* The text of parameter file name: a new string, or NULL when name is a
 * preset, holds '=', or is not a regular file; *bad when it is one but
 * cannot be read whole (over 4 KiB). */
static char *slurp(const char *name, int *bad) {
  struct stat st;
  *bad = 0;
  if (!strcmp(name, "paper") || !strcmp(name, "local") || strchr(name, '=') ||
      stat(name, &st) || !S_ISREG(st.st_mode))
    return NULL;
  FILE *f = fopen(name, "r");
  char *buf = f ? malloc(4098) : NULL;
  size_t n = buf ? fread(buf, 1, 4097, f) : 0;
  if (f) fclose(f);
  if (!buf || n > 4096) return free(buf), *bad = 1, NULL;
  buf[n] = 0;
  return buf;
}

int sim_params_parse(const char *text, sim_params *M, char *why, size_t wlen) {
  int bad;
  *M = preset_paper;
  char *own = slurp(text, &bad), *s = own ? own : strdup(text), *save = NULL;
  int rc = bad ? COLLC_EINVAL : s ? 0 : COLLC_ENOMEM;
  if (bad) snprintf(why, wlen, "simulator parameters: cannot read %s (at most 4 KiB)", text);
  for (char *line = s && !rc ? strtok_r(s, "\n", &save) : NULL; line && !rc;
       line = strtok_r(NULL, "\n", &save)) {
    char *hash = strchr(line, '#'), *save2 = NULL;
    if (hash) *hash = 0;
    for (char *w = strtok_r(line, " \t,", &save2); w && !rc; w = strtok_r(NULL, " \t,", &save2))
      if (param_word(w, M)) {
        snprintf(why, wlen, "simulator parameters: bad word '%s'", w);
        rc = COLLC_EINVAL;
      }
  }
  free(s);
  return rc;
}

void sim_params_format(const sim_params *M, char *buf, size_t len) {
  snprintf(buf, len,
           "lat=%g/%g/%g bw=%g/%g/%g nic=%g o=%g copy=%g reduce=%g flag=%g eager=%g group=%s",
           M->lat[0], M->lat[1], M->lat[2], M->bw[0], M->bw[1], M->bw[2], M->nic_bw, M->o,
           M->copy_bw, M->reduce_bw, M->flag_lat, M->eager, comp_name(M->group_comp));
}

/* ---- flattening programs into simulator operations ---- */

/* Append o to rank X's operations; 0 or -1 (out of memory). */
static int add_op(srank *X, int *cap, sop o) {
  if (X->nops == *cap) {
    if (*cap >= SIM_MAX_OPS / 2) return -1;
    int n = *cap ? 2 * *cap : 64;
    sop *a = realloc(X->ops, (size_t)n * sizeof *a);
    if (!a) return -1;
    X->ops = a, *cap = n;
  }
  X->ops[X->nops++] = o;
  return 0;
}

/* A native group ALLTOALL (instruction a of P, this rank member `me`) as
 * the point-to-point pattern M->group_comp, on the group's own channel. */
static int expand_group(const sim *S, srank *X, int *cap, const collc_prog *P, int a) {
  const collc_instr *I = &P->ins[a];
  collc_group g = P->groups[I->peer];
  int me = (P->spec.rank - g.base) / g.stride, rc = 0, v = P->nslots;
  int64_t part = opnd_units(P, I->src) * P->spec.unit_bytes;
  int32_t chan = 1 + (int32_t)((((int64_t)g.n * 1000003 + g.stride) * 7919 + g.base) & 0x3fffffff);
  int pairwise = S->M->group_comp == COMP_PAIRWISE;
  for (int i = 1; i < g.n && !rc; i++) {
    int to = g.base + (me + i) % g.n * g.stride, from = g.base + (me - i + g.n) % g.n * g.stride;
    int s0 = pairwise ? v : v + 2 * (i - 1);
    rc |= add_op(X, cap, (sop){COLLC_OP_RECV, from, s0, a, chan, part});
    rc |= add_op(X, cap, (sop){COLLC_OP_SEND, to, s0 + 1, a, chan, part});
    if (pairwise) rc |= add_op(X, cap, (sop){COLLC_OP_WAIT, 2, v, a, 0, 0});
  }
  rc |= add_op(X, cap, (sop){COLLC_OP_COPY, 0, 0, a, 0, part});
  if (!pairwise && g.n > 1) rc |= add_op(X, cap, (sop){COLLC_OP_WAIT, 2 * (g.n - 1), v, a, 0, 0});
  rc |= add_op(X, cap, (sop){COLLC_OP_ALLTOALL, 0, I->slot, a, 0, 0}); /* the call's request */
  int need = v + (pairwise ? 2 : 2 * (g.n - 1));
  if (need > X->nslots) X->nslots = need;
  return rc;
}

/* Bytes an instruction moves or computes: its destination's (a send's
 * source), in the program's units. */
static int64_t instr_bytes(const collc_prog *P, const collc_instr *I) {
  collc_opnd o = ops_flags(I->op) & OPF_WRITES ? I->dst : I->src;
  return opnd_units(P, o) * P->spec.unit_bytes;
}

/* Flatten P (rank r's program) into S->R[r]; 0 or -1. */
static int flatten(sim *S, int r, const collc_prog *P) {
  srank *X = &S->R[r];
  int cap = 0, rc = 0;
  X->nslots = P->nslots;
  for (int a = 0; a < P->nins && !rc; a++) {
    const collc_instr *I = &P->ins[a];
    int f = ops_flags(I->op);
    if (f & OPF_GROUP) rc = expand_group(S, X, &cap, P, a);
    else
      rc = add_op(X, &cap, (sop){I->op, (f & OPF_WAITS) ? (int32_t)I->n : I->peer, I->slot, a, 0,
                                 (f & OPF_SYNC) ? I->n : instr_bytes(P, I)});
  }
  X->slot = rc ? NULL : malloc(((size_t)X->nslots + 1) * sizeof(int));
  if (!X->slot) return -1;
  for (int i = 0; i <= X->nslots; i++) X->slot[i] = -1;
  return 0;
}

/* ---- the run ---- */

/* Level of a message between ranks a and b. */
static int level(const sim *S, int a, int b) {
  const collc_layout *L = S->L;
  if (!L || L->node_of[a] != L->node_of[b]) return SIM_NET;
  if (L->socket > 0 && L->local_of[a] / L->socket == L->local_of[b] / L->socket) return SIM_SOCKET;
  return SIM_NODE;
}

/* Seconds to move bytes at bw (0: free). */
static double at(double bytes, double bw) { return bw > 0 ? bytes / bw : 0; }

/* Move message m's data, starting at time t0: sets m->arr. The message
 * takes its level's latency plus bytes at its level's bandwidth; between
 * nodes it also queues for the sender's node link out and the receiver's
 * node link in, each link moving one message's bytes at a time at nic_bw
 * (the links are queued independently: a fluid model's batch time). */
static void transfer(sim *S, smsg *m, double t0) {
  const sim_params *M = S->M;
  int l = level(S, m->src, m->dst);
  double t = t0 + M->lat[l] + at((double)m->bytes, M->bw[l]);
  if (l == SIM_NET && M->nic_bw > 0) {
    int a = S->L ? S->L->node_of[m->src] : m->src, b = S->L ? S->L->node_of[m->dst] : m->dst;
    double x = at((double)m->bytes, M->nic_bw);
    S->out_free[a] = fmax(t0, S->out_free[a]) + x;
    S->in_free[b] = fmax(t0, S->in_free[b]) + x;
    t = fmax(t, fmax(S->out_free[a], S->in_free[b]) + M->lat[l]);
  }
  m->arr = t;
  S->rep->messages++, S->rep->bytes += m->bytes;
  if (l == SIM_NET) S->rep->net_messages++, S->rep->net_bytes += m->bytes;
}

/* Heap of ranks by clock (ties: lower rank). */
static int earlier(const sim *S, int a, int b) {
  return S->R[a].t < S->R[b].t || (S->R[a].t == S->R[b].t && a < b);
}

static void heap_push(sim *S, int r) {
  if (S->R[r].inheap || S->R[r].done) return;
  int i = S->nheap++;
  S->R[r].inheap = 1;
  while (i > 0 && earlier(S, r, S->heap[(i - 1) / 2])) S->heap[i] = S->heap[(i - 1) / 2], i = (i - 1) / 2;
  S->heap[i] = r;
}

static int heap_pop(sim *S) {
  int top = S->heap[0], last = S->heap[--S->nheap], i = 0;
  for (;;) {
    int c = 2 * i + 1;
    if (c >= S->nheap) break;
    if (c + 1 < S->nheap && earlier(S, S->heap[c + 1], S->heap[c])) c++;
    if (!earlier(S, S->heap[c], last)) break;
    S->heap[i] = S->heap[c], i = c;
  }
  if (S->nheap) S->heap[i] = last;
  S->R[top].inheap = 0;
  return top;
}

/* Wake rank r if it is blocked: it retries its instruction. */
static void wake(sim *S, int r) {
  if (S->R[r].blocked) S->R[r].blocked = 0, heap_push(S, r);
}

/* The FIFO of (src, dst, chan), made empty on first use. Dense tables
 * hold one channel per pair at a time: NULL when another one still has
 * unmatched messages there. */
static pairq *pair_queue(sim *S, int src, int dst, int chan) {
  if (S->dense) {
    pairq *q = &S->pq[(size_t)src * (size_t)S->p + (size_t)dst];
    if (q->src < 0 || q->head < 0) *q = (pairq){src, dst, chan, -1, -1};
    return q->chan == chan ? q : NULL;
  }
  uint64_t h = ((uint64_t)(unsigned)src * 0x9E3779B97F4A7C15ULL) ^
               ((uint64_t)(unsigned)dst * 0xC2B2AE3D27D4EB4FULL) ^ (uint64_t)(unsigned)chan;
  for (int64_t i = (int64_t)((h ^ (h >> 29)) & (uint64_t)(S->npq - 1));; i = (i + 1) & (S->npq - 1)) {
    pairq *q = &S->pq[i];
    if (q->src < 0) *q = (pairq){src, dst, chan, -1, -1};
    if (q->src == src && q->dst == dst && q->chan == chan) return q;
  }
}

/* New or matching message for a post of side (1 send, 2 receive) from
 * src to dst on chan (each channel, like each communicator, matches on its
 * own); its index, or -1 (out of memory, sizes differ). */
static int match(sim *S, int src, int dst, int chan, int side, int64_t bytes) {
  pairq *q = pair_queue(S, src, dst, chan);
  if (!q) {
    snprintf(S->rep->error, sizeof S->rep->error, "message %d -> %d: channels interleaved", src, dst);
    return -1;
  }
  int m = q->head;
  if (m >= 0 && S->msg[m].posted != side) { /* the other side is waiting: take the oldest */
    if (S->msg[m].bytes != bytes) {
      snprintf(S->rep->error, sizeof S->rep->error, "message %d -> %d: %lld bytes sent, %lld received",
               src, dst, (long long)(side == 1 ? bytes : S->msg[m].bytes),
               (long long)(side == 1 ? S->msg[m].bytes : bytes));
      return -1;
    }
    q->head = S->msg[m].next;
    S->msg[m].posted = 3;
    return m;
  }
  if (S->nmsg == S->cap_msg) {
    int n = S->cap_msg ? 2 * S->cap_msg : 1024;
    smsg *a = realloc(S->msg, (size_t)n * sizeof *a);
    if (!a) return -1;
    S->msg = a, S->cap_msg = n;
  }
  m = S->nmsg++;
  S->msg[m] = (smsg){src, dst, chan, side, -1, bytes, -1, -1, -1};
  if (q->head < 0) q->head = m;
  else S->msg[q->tail].next = m;
  q->tail = m;
  return m;
}

static int fail(sim *S, const char *what, int r) {
  if (!S->rep->error[0])
    snprintf(S->rep->error, sizeof S->rep->error, "rank %d: %s", r, what);
  return -1;
}

/* Rank r posts a send (side 1) or receive (side 2); 1, or -1 on failure. */
static int post(sim *S, int r, const sop *o, int side) {
  srank *X = &S->R[r];
  int src = side == 1 ? r : o->peer;
  int dst = side == 1 ? o->peer : r;
  if (o->peer < 0 || o->peer >= S->p || o->slot < 0 || o->slot >= X->nslots) return fail(S, "bad operands", r);
  int m = match(S, src, dst, o->chan, side, o->bytes);
  if (m < 0) return fail(S, "unmatched message", r);
  smsg *g = &S->msg[m];
  X->t += S->M->o;
  if (side == 1) g->ts = X->t, X->sent_msgs++, X->sent_bytes += o->bytes;
  else g->tr = X->t;
  X->slot[o->slot] = 2 * m + (side == 2);
  int eager = (double)o->bytes < S->M->eager;
  if (g->arr < 0 && g->ts >= 0 && (eager || g->tr >= 0))
    transfer(S, g, eager ? g->ts : fmax(g->ts, g->tr));
  srank *Q = &S->R[o->peer];
  if (Q->blocked && Q->ops[Q->pc].op == COLLC_OP_WAIT) wake(S, o->peer);
  return 1;
}

/* When request v (message * 2 + receive side) completes; -1 unknown yet. */
static double done_at(const sim *S, int v) {
  const smsg *g = &S->msg[v >> 1];
  if (v & 1) return g->arr;
  return (double)g->bytes < S->M->eager ? g->ts : g->arr;
}

/* Rank r completes slots [o->slot, o->slot + o->peer): 1, 0 blocked, -1.
 * A blocked WAIT resumes at the slot it stopped at. */
static int wait_slots(sim *S, int r, const sop *o) {
  srank *X = &S->R[r];
  if (o->slot < 0 || o->peer < 0 || o->slot + o->peer > X->nslots) return fail(S, "bad WAIT", r);
  if (X->wi < o->slot) X->wi = o->slot, X->wt = X->t;
  for (; X->wi < o->slot + o->peer; X->wi++) {
    int v = X->slot[X->wi];
    if (v == -1) return fail(S, "WAIT on a slot with no request", r);
    double d = v == -2 ? X->wt : done_at(S, v);
    if (d < 0) return X->blocked = 1, 0;
    X->wt = d > X->wt ? d : X->wt;
    X->slot[X->wi] = -1;
  }
  X->t = X->wt, X->wi = -1;
  return 1;
}

/* SIGNAL: record (step, time) and wake the ranks awaiting r. */
static int signal_step(sim *S, int r, const sop *o) {
  srank *X = &S->R[r];
  if (X->nsig == X->cap_sig) {
    int n = X->cap_sig ? 2 * X->cap_sig : 16;
    double *t = realloc(X->sig_t, (size_t)n * sizeof *t);
    if (t) X->sig_t = t;
    int64_t *s = t ? realloc(X->sig_n, (size_t)n * sizeof *s) : NULL;
    if (!s) return fail(S, "out of memory", r);
    X->sig_n = s, X->cap_sig = n;
  }
  X->sig_t[X->nsig] = X->t, X->sig_n[X->nsig++] = o->bytes;
  for (int i = 0; i < S->nwaiters;)
    if (S->R[S->waiters[i]].ops[S->R[S->waiters[i]].pc].peer == r)
      wake(S, S->waiters[i]), S->waiters[i] = S->waiters[--S->nwaiters];
    else
      i++;
  return 1;
}

/* AWAIT: 1 once peer has signalled the step (0: its previous run, which
 * a single simulated run has not got), else 0 (blocked) or -1. */
static int await_step(sim *S, int r, const sop *o) {
  srank *X = &S->R[r], *Q;
  if (o->peer < 0 || o->peer >= S->p) return fail(S, "bad AWAIT peer", r);
  if (o->bytes == 0) return 1;
  Q = &S->R[o->peer];
  for (int i = 0; i < Q->nsig; i++)
    if (Q->sig_n[i] >= o->bytes) {
      X->t = fmax(X->t, Q->sig_t[i] + S->M->flag_lat);
      return 1;
    }
  if (S->nwaiters == S->cap_waiters) {
    int n = S->cap_waiters ? 2 * S->cap_waiters : 64;
    int *w = realloc(S->waiters, (size_t)n * sizeof *w);
    if (!w) return fail(S, "out of memory", r);
    S->waiters = w, S->cap_waiters = n;
  }
  S->waiters[S->nwaiters++] = r;
  return X->blocked = 1, 0;
}

/* Handlers, one per opcode (the table below): execute rank r's current
 * operation o; 1 done, 0 blocked, -1 failed. */
typedef int (*sim_step)(sim *S, int r, const sop *o);

static int sim_NOP(sim *S, int r, const sop *o) {
  (void)S, (void)r, (void)o;
  return 1;
}

static int sim_SEND(sim *S, int r, const sop *o) { return post(S, r, o, 1); }

static int sim_RECV(sim *S, int r, const sop *o) { return post(S, r, o, 2); }

static int sim_WAIT(sim *S, int r, const sop *o) { return wait_slots(S, r, o); }

/* The expanded group call's request: complete (its messages came before). */
static int sim_ALLTOALL(sim *S, int r, const sop *o) {
  srank *X = &S->R[r];
  if (o->slot < 0 || o->slot >= X->nslots) return fail(S, "bad group call slot", r);
  X->slot[o->slot] = -2;
  return 1;
}

static int sim_SIGNAL(sim *S, int r, const sop *o) { return signal_step(S, r, o); }

static int sim_AWAIT(sim *S, int r, const sop *o) { return await_step(S, r, o); }

/* Local work: o->bytes at the reduction or the copy bandwidth. */
static int sim_REDUCE(sim *S, int r, const sop *o) {
  S->R[r].t += at((double)o->bytes, S->M->reduce_bw);
  return 1;
}

static int sim_COMBINE(sim *S, int r, const sop *o) { return sim_REDUCE(S, r, o); }

static int sim_COPY(sim *S, int r, const sop *o) {
  S->R[r].t += at((double)o->bytes, S->M->copy_bw);
  return 1;
}

static int sim_GET(sim *S, int r, const sop *o) { return sim_COPY(S, r, o); }

/* Read in place: nothing to do until the GETs. */
static int sim_OFFER(sim *S, int r, const sop *o) { return sim_NOP(S, r, o); }

/* The handler of every opcode: a missing sim_<NAME> does not compile. */
static const sim_step sim_steps[COLLC_OP_COUNT] = {
#define SIM_ENTRY(name, flags, doc) [COLLC_OP_##name] = sim_##name,
    COLLC_OPS(SIM_ENTRY)
#undef SIM_ENTRY
};

/* Execute rank r's current operation: 1 done, 0 blocked, -1 failed. */
static int step(sim *S, int r) {
  const sop *o = &S->R[r].ops[S->R[r].pc];
  if (o->op >= COLLC_OP_COUNT) return fail(S, "unknown opcode", r);
  return sim_steps[o->op](S, r, o);
}

/* Run rank r from the heap until it ends, blocks, or passes the next
 * rank's clock; 0 or -1. */
static int run_rank(sim *S, int r) {
  srank *X = &S->R[r];
  sim_report *R = S->rep;
  for (;;) {
    int rc = step(S, r);
    if (rc <= 0) return rc;
    if (R->trace && r == R->trace_rank) R->trace[X->ops[X->pc].addr] = X->t;
    if (++X->pc == X->nops) return X->done = 1, 0;
    if (S->nheap && earlier(S, S->heap[0], r)) return heap_push(S, r), 0;
  }
}

/* Simulate the flattened ranks to their ends; 0 or -1. */
static int run_all(sim *S) {
  for (int r = 0; r < S->p; r++) {
    S->R[r].done = S->R[r].nops == 0, S->R[r].wi = -1;
    heap_push(S, r);
  }
  while (S->nheap)
    if (run_rank(S, heap_pop(S))) return -1;
  for (int r = 0; r < S->p; r++)
    if (!S->R[r].done) return fail(S, "deadlock: blocked with no progress possible", r);
  return 0;
}

/* Fill the report from the finished ranks. */
static void summarize(sim *S) {
  sim_report *R = S->rep;
  for (int r = 0; r < S->p; r++) {
    srank *X = &S->R[r];
    if (X->t > R->time || r == 0) R->time = X->t, R->slowest = r;
    if (X->sent_msgs > R->max_rank_messages) R->max_rank_messages = X->sent_msgs;
    if (X->sent_bytes > R->max_rank_bytes) R->max_rank_bytes = X->sent_bytes;
  }
  R->ok = 1;
}

/* Allocate S for spec s; 0 or -1. */
static int setup(sim *S, const collc_spec *s, const sim_params *M, sim_report *R) {
  int nodes = s->layout ? s->layout->nnodes : s->p;
  memset(S, 0, sizeof *S);
  S->s = s, S->M = M, S->L = s->layout, S->p = s->p, S->rep = R;
  if (s->layout && s->layout->p != s->p) return fail(S, "layout does not match p", 0);
  if (!coll_desc_of(s->coll)) return fail(S, "unknown collective", 0);
  S->R = calloc((size_t)s->p, sizeof *S->R);
  S->out_free = calloc((size_t)nodes, sizeof(double));
  S->in_free = calloc((size_t)nodes, sizeof(double));
  S->heap = malloc((size_t)s->p * sizeof(int));
  if (!S->R || !S->out_free || !S->in_free || !S->heap) return fail(S, "out of memory", 0);
  return 0;
}

/* The message FIFOs, sized by the flattened ranks' posts (every key
 * needs one): memory grows with the messages, not with p^2, except where
 * nearly every pair communicates (linear, pairwise), where a dense p x p
 * table is smaller and faster (cache); 0 or -1. */
static int setup_queues(sim *S) {
  int64_t posts = 0, pp = (int64_t)S->p * S->p;
  for (int r = 0; r < S->p; r++)
    for (int i = 0; i < S->R[r].nops; i++)
      posts += S->R[r].ops[i].op == COLLC_OP_SEND || S->R[r].ops[i].op == COLLC_OP_RECV;
  for (S->npq = 64; S->npq <= posts; S->npq *= 2) {}
  if ((S->dense = pp <= S->npq)) S->npq = pp;
  S->pq = malloc((size_t)S->npq * sizeof *S->pq);
  if (!S->pq) return fail(S, "out of memory", 0);
  for (int64_t i = 0; i < S->npq; i++) S->pq[i].src = -1;
  return 0;
}

static void teardown(sim *S) {
  for (int r = 0; S->R && r < S->p; r++)
    free(S->R[r].ops), free(S->R[r].slot), free(S->R[r].sig_t), free(S->R[r].sig_n);
  free(S->R), free(S->msg), free(S->pq), free(S->out_free), free(S->in_free);
  free(S->heap), free(S->waiters);
}

/* Simulate rank programs taken from progs[] or compiled from c. */
static int simulate(const collc_spec *s, const collc_choice *c, collc_prog *const progs[],
                    const sim_params *M, sim_report *R) {
  sim S = {.rep = R};
  double *trace = R->trace;
  int tr = R->trace_rank;
  memset(R, 0, sizeof *R);
  R->trace = trace, R->trace_rank = tr;
  int rc = s->p < 1 || s->p > SIM_MAX_OPS ? fail(&S, "p out of range", 0) : setup(&S, s, M, R);
  for (int r = 0; r < s->p && !rc; r++) {
    char why[200] = "";
    collc_spec sr = spec_rank(s, r);
    collc_prog *P = progs ? progs[r] : choice_compile(&sr, c, why, sizeof why);
    if (!P) rc = fail(&S, why[0] ? why : "no program", r);
    else if (flatten(&S, r, P))
      rc = fail(&S, S.R[r].nops >= SIM_MAX_OPS / 2 ? "too large to simulate" : "out of memory", r);
    else if ((S.nops += S.R[r].nops) > SIM_MAX_OPS) rc = fail(&S, "too large to simulate", r);
    if (!progs) prog_free(P);
  }
  if (!rc && !setup_queues(&S) && !run_all(&S)) summarize(&S);
  teardown(&S);
  return R->ok;
}

int sim_choice(const collc_spec *s, const collc_choice *c, const sim_params *M, sim_report *R) {
  return simulate(s, c, NULL, M, R);
}

int sim_programs(const collc_spec *s, collc_prog *const progs[], const sim_params *M,
                 sim_report *R) {
  return simulate(s, NULL, progs, M, R);
}

int sim_best(const collc_spec *s, const char *const cand[], const sim_params *M, double *t) {
  int best = -1;
  for (int i = 0; cand[i]; i++) {
    collc_choice c;
    sim_report R = {0};
    char why[200];
    if (choice_parse(s->coll, cand[i], &c, why, sizeof why) ||
        choice_resolve(s, &c, why, sizeof why) || choice_is_native(&c) || !sim_choice(s, &c, M, &R))
      continue;
    if (best < 0 || R.time < *t) best = i, *t = R.time;
  }
  return best;
}

const char *sim_native_model(const collc_spec *s, char *buf, size_t len) {
  const coll_desc *d = coll_desc_of(s->coll);
  return d ? d->native_model(s, buf, len) : NULL;
}
