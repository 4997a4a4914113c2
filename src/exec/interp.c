/* interp.c - run plans: execution contexts and the instruction handlers.
 *
 * One handler per opcode, in a table generated from COLLC_OPS (a missing
 * handler does not compile). Handlers reach the machine only through the
 * context's backend (backend.h): messages, local copy and reduce, node
 * flags, remote reads. A context holds everything an execution changes,
 * so any number of contexts may run one plan at once.
 */
#include <stdlib.h>
#include <string.h>
#include "plan_impl.h"
#include "backend.h"

/* The context's backend. */
#define BE(c) ((c)->w.be)

/* Publish v in my flag of segment g. */
static void set_flag(const exec_ctx *c, shm_seg *g, uint64_t v) {
  BE(c)->signal(&g->flag[c->pl->flag], v);
}

/* The copy of I's resolved operands (a COPY; the slot copy of an OFFER or
 * of a GET, whose source is then src2): memcpy when units are plain bytes,
 * else a self send-receive with the operand types. */
static int copy_step(exec_ctx *c, const collc_instr *I, const xins *X) {
  const collc_plan *pl = c->pl;
  collc_instr k = *I;
  k.op = COLLC_OP_COPY;
  if (I->op == COLLC_OP_GET) k.src = I->src2;
  if (X->memcpy_ok) return BE(c)->local(pl->P, &k, c->base, &pl->lx);
  return BE(c)->copy_typed(c->base[k.src.buf] + X->src.off, X->src.count, X->src.type,
                           c->base[k.dst.buf] + X->dst.off, X->dst.count, X->dst.type, pl->self,
                           c->w.comm);
}

/* One instruction's behaviour: run I (resolved as X) in context c; not
 * blocking, an instruction that would wait sets *stall instead (and is
 * run again at the next advance). Returns an MPI code. */
typedef int (*step_fn)(exec_ctx *c, const collc_instr *I, const xins *X, int blocking,
                       int *stall);

/* The operand addresses of X in c. */
#define SRC(c, X) ((c)->base[(X)->src.buf] + (X)->src.off)
#define DST(c, X) ((c)->base[(X)->dst.buf] + (X)->dst.off)

static int x_NOP(exec_ctx *c, const collc_instr *I, const xins *X, int blocking, int *stall) {
  (void)c, (void)I, (void)X, (void)blocking, (void)stall;
  return MPI_SUCCESS;
}

static int x_SEND(exec_ctx *c, const collc_instr *I, const xins *X, int blocking, int *stall) {
  (void)blocking, (void)stall;
  return BE(c)->send(SRC(c, X), X->src.count, X->src.type, I->peer, c->w.tag, c->w.comm,
                     &c->req[I->slot]);
}

static int x_RECV(exec_ctx *c, const collc_instr *I, const xins *X, int blocking, int *stall) {
  (void)blocking, (void)stall;
  return BE(c)->recv(DST(c, X), X->dst.count, X->dst.type, I->peer, c->w.tag, c->w.comm,
                     &c->req[I->slot]);
}

static int x_WAIT(exec_ctx *c, const collc_instr *I, const xins *X, int blocking, int *stall) {
  int done = 1, rc = BE(c)->complete((int)I->n, &c->req[I->slot], blocking, &done);
  (void)X;
  *stall = !done;
  return rc;
}

static int x_COPY(exec_ctx *c, const collc_instr *I, const xins *X, int blocking, int *stall) {
  (void)blocking, (void)stall;
  return copy_step(c, I, X);
}

static int x_REDUCE(exec_ctx *c, const collc_instr *I, const xins *X, int blocking, int *stall) {
  (void)X, (void)blocking, (void)stall;
  return BE(c)->local(c->pl->P, I, c->base, &c->pl->lx);
}

#define x_COMBINE x_REDUCE

/* A group all-to-all: posted when not blocking (WAIT completes it). */
static int x_ALLTOALL(exec_ctx *c, const collc_instr *I, const xins *X, int blocking,
                      int *stall) {
  (void)stall;
  return BE(c)->group_alltoall(SRC(c, X), X->src.type, DST(c, X), X->dst.type,
                               c->w.gcomm[I->peer], blocking, &c->req[I->slot]);
}

static int x_SIGNAL(exec_ctx *c, const collc_instr *I, const xins *X, int blocking, int *stall) {
  (void)X, (void)blocking, (void)stall;
  set_flag(c, *c->w.seg, (c->seq - 1) * STEP_DONE + (uint64_t)I->n);
  return MPI_SUCCESS;
}

/* AWAIT on the flag of local rank X->flag: stalls (not blocking) until it
 * is reached; a poisoned flag (the peer failed) is an error. */
static int x_AWAIT(exec_ctx *c, const collc_instr *I, const xins *X, int blocking, int *stall) {
  shm_seg *g = *c->w.seg;
  int got = BE(c)->await(&g->flag[X->flag], (c->seq - 1) * STEP_DONE + (uint64_t)I->n,
                         blocking, g->yield);
  *stall = got == 0;
  return got < 0 ? MPI_ERR_OTHER : MPI_SUCCESS;
}

/* OFFER: in place if I published this buffer so (begin), else into the slot. */
static int x_OFFER(exec_ctx *c, const collc_instr *I, const xins *X, int blocking, int *stall) {
  (void)blocking, (void)stall;
  if ((*c->w.seg)->flag[c->pl->flag].direct & (1u << I->src.buf)) return MPI_SUCCESS;
  return copy_step(c, I, X);
}

/* GET: the peer's src read in place if it published that buffer so
 * (Cross Memory Attach; through the stage when my dst is not plain bytes),
 * else its copy in the slot. */
static int x_GET(exec_ctx *c, const collc_instr *I, const xins *X, int blocking, int *stall) {
  const seg_flag *f = &(*c->w.seg)->flag[X->flag];
  int b = I->src.buf - BUF_SEND;
  (void)blocking, (void)stall;
  if (!(f->direct & (1u << I->src.buf))) return copy_step(c, I, X);
  if (b < 0 || b > 2 || X->rend > f->limit[b]) return MPI_ERR_INTERN; /* (a wrong program) */
  char *to = X->stage ? c->stage : c->base[I->dst.buf];
  const struct iovec *v = c->pl->iov + X->iv;
  if (BE(c)->remote_read(f->pid, to, v, X->nl, f->base[b], v + X->nl, X->nr))
    return MPI_ERR_OTHER;
  if (!X->stage) return MPI_SUCCESS;
  return BE(c)->copy_typed(c->stage, (int)v[0].iov_len, MPI_PACKED, DST(c, X), X->dst.count,
                           X->dst.type, c->pl->self, c->w.comm);
}

/* Every opcode's behaviour, from the one opcode table: an opcode without an
 * x_<NAME> function does not compile. */
static const step_fn steps[COLLC_OP_COUNT] = {
#define X_ENTRY(name, flags, doc) [COLLC_OP_##name] = x_##name,
    COLLC_OPS(X_ENTRY)
#undef X_ENTRY
};

/* A batch (xbatch.h) begins at c->pc: the backend runs it at once, and the
 * execution continues after it. (The steps of batched executions.) */
static int x_BATCH(exec_ctx *c, const collc_instr *I, const xins *X, int blocking, int *stall) {
  const xbatch_tab *T = &c->pl->bt;
  int b = T->of[c->pc];
  if (b < 0) return steps[I->op](c, I, X, blocking, stall); /* (not a batch's first) */
  c->pc = T->b[b].end - 1;
  return BE(c)->batch(T, b, c->base, &c->pl->ks);
}

/* The steps of an execution that runs its plan's batches. */
#define LOCAL_OP(op) ((op) == COLLC_OP_COPY || (op) == COLLC_OP_REDUCE || (op) == COLLC_OP_COMBINE)
static const step_fn steps_batch[COLLC_OP_COUNT] = {
#define X_ENTRY(name, flags, doc) [COLLC_OP_##name] = LOCAL_OP(COLLC_OP_##name) ? x_BATCH : x_##name,
    COLLC_OPS(X_ENTRY)
#undef X_ENTRY
};
#undef LOCAL_OP

/* After a failure: cancel and release requests still in flight, so that
 * nothing of this call can match a later one; on the node segment, poison
 * my flag, so that peers waiting for me fail instead of hanging (the
 * segment stays unusable: after an error MPI leaves the state undefined). */
static void abandon(exec_ctx *c) {
  const collc_plan *pl = c->pl;
  if (pl->P->shm_units && c->w.seg && *c->w.seg) set_flag(c, *c->w.seg, FLAG_POISON);
  for (int s = 0; s < pl->P->nslots; s++)
    if (c->req[s] != MPI_REQUEST_NULL) BE(c)->cancel(&c->req[s]);
}

/* Run c's execution from pc until it ends or (not blocking) stalls on
 * incomplete requests or flags. *done tells which. Returns MPI_SUCCESS or
 * the class of the failing call (the execution is then abandoned and ended). */
static int run(exec_ctx *c, int blocking, int *done) {
  const collc_prog *P = c->pl->P;
  const step_fn *st = c->batched ? steps_batch : steps;
  for (; c->pc < P->nins; c->pc++) {
    const collc_instr *I = &P->ins[c->pc];
    if (blocking < 0 && I->op == COLLC_OP_WAIT) { /* posted: tested at the next completion call */
      *done = 0;
      return MPI_SUCCESS;
    }
    int stall = 0, rc = st[I->op](c, I, &c->pl->x[c->pc], blocking > 0, &stall);
    if (rc != MPI_SUCCESS) {
      int cls = BE(c)->error_class(rc);
      abandon(c);
      c->pc = P->nins;
      *done = 1;
      return cls;
    }
    if (stall) {
      *done = 0;
      return MPI_SUCCESS;
    }
  }
  *done = 1;
  return MPI_SUCCESS;
}

/* Free c's TMP buffer the way it was allocated. */
static void tmp_release(exec_ctx *c) {
  if (c->tmp_free) c->tmp_free(c->tmp_mem);
  else free(c->tmp_mem);
  c->tmp_mem = NULL, c->tmp_cap = 0, c->tmp_free = NULL;
}

/* Make c's buffers hold what pl needs with backend be (allocating only
 * when pl needs more than any plan before it, or TMP memory of another
 * kind than be's). MPI_SUCCESS or MPI_ERR_NO_MEM. */
static int reserve(exec_ctx *c, const collc_plan *pl, const exec_backend *be) {
  int n = pl->P->nslots + 1;
  if (n > c->nreq) {
    MPI_Request *r = realloc(c->req, (size_t)n * sizeof *r);
    if (!r) return MPI_ERR_NO_MEM;
    for (int s = c->nreq; s < n; s++) r[s] = MPI_REQUEST_NULL;
    c->req = r, c->nreq = n;
  }
  if (c->tmp_mem && c->tmp_free != be->tmp_free) tmp_release(c);
  if (pl->tmp_bytes > c->tmp_cap) {
    void *m = be->tmp_alloc ? be->tmp_alloc(pl->tmp_bytes) : malloc(pl->tmp_bytes);
    if (!m) return MPI_ERR_NO_MEM;
    tmp_release(c);
    c->tmp_mem = m, c->tmp_cap = pl->tmp_bytes, c->tmp_free = be->tmp_free;
  }
  if (pl->stage_bytes > c->stage_cap) {
    char *m = malloc(pl->stage_bytes);
    if (!m) return MPI_ERR_NO_MEM;
    free(c->stage);
    c->stage = m, c->stage_cap = pl->stage_bytes;
  }
  return MPI_SUCCESS;
}

/* Publish my buffers for single copy: read by others after they acquire a
 * later step of mine. */
static void publish_buffers(exec_ctx *c, shm_seg *g) {
  const collc_plan *pl = c->pl;
  seg_flag *me = &g->flag[pl->flag];
  me->pid = pl->pid;
  me->direct = g->cma ? pl->flat : 0;
  for (int b = BUF_SEND; b <= BUF_TMP; b++) {
    me->base[b - BUF_SEND] = (uint64_t)(uintptr_t)c->base[b];
    me->limit[b - BUF_SEND] = pl->limit[b - BUF_SEND];
  }
}

/* Begin an execution of pl in c at w on these buffers (and its number on
 * the segment); MPI_ERR_INTERN if the segment is missing or too small. */
static int begin(exec_ctx *c, collc_plan *pl, const exec_where *w, const void *sendbuf,
                 void *recvbuf) {
  int rc = reserve(c, pl, w->be ? w->be : &exec_backend_mpi);
  c->pl = pl;
  c->w = *w;
  if (!c->w.be) c->w.be = &exec_backend_mpi;
  c->batched = pl->bt.nb > 0 && c->w.be->batch;
  c->pc = pl->P->nins;
  if (rc) return rc;
  c->base[BUF_NONE] = NULL;
  c->base[BUF_SEND] = (char *)(uintptr_t)sendbuf;
  c->base[BUF_RECV] = recvbuf;
  c->base[BUF_TMP] = (char *)c->tmp_mem - pl->tmp_lb;
  c->base[BUF_SHM] = NULL;
  if (!pl->P->shm_units) return c->pc = 0, MPI_SUCCESS;
  shm_seg *g = w->seg ? *w->seg : NULL;
  if (!g || pl->shm_bytes > g->bytes) { /* peers must not wait for me */
    if (g) set_flag(c, g, FLAG_POISON);
    return MPI_ERR_INTERN;
  }
  c->seq = ++g->seq;
  c->base[BUF_SHM] = g->data - pl->shm_lb; /* unit u's data at data + u * its extent */
  if (pl->remote) publish_buffers(c, g);
  c->pc = 0;
  return MPI_SUCCESS;
}

exec_ctx *ctx_new(void) { return calloc(1, sizeof(exec_ctx)); }

void ctx_free(exec_ctx *c) {
  if (!c) return;
  tmp_release(c);
  free(c->req), free(c->stage);
  free(c);
}

int ctx_running(const exec_ctx *c) { return c->pl && c->pc < c->pl->P->nins; }

int ctx_execute(exec_ctx *c, collc_plan *pl, const exec_where *w, const void *sendbuf,
                void *recvbuf) {
  int done, rc = begin(c, pl, w, sendbuf, recvbuf);
  return rc ? rc : run(c, 1, &done);
}

int ctx_start(exec_ctx *c, collc_plan *pl, const exec_where *w, const void *sendbuf,
              void *recvbuf, int *done) {
  int rc = begin(c, pl, w, sendbuf, recvbuf);
  *done = rc != MPI_SUCCESS;
  return rc ? rc : run(c, -1, done);
}

int ctx_test(exec_ctx *c, int *done) { return run(c, 0, done); }

int ctx_wait(exec_ctx *c) {
  int done;
  return run(c, 1, &done);
}

void ctx_abort(exec_ctx *c) {
  if (ctx_running(c)) abandon(c);
  if (c->pl) c->pc = c->pl->P->nins;
}

