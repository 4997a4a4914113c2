/* exec_mpi.c - execute a program with MPI point-to-point (and group calls).
 *
 * Buffers: a unit of SEND is sendcount x sendtype ("kind 0"), a unit of RECV
 * and TMP is recvcount x recvtype ("kind 1"). A unit of the node segment
 * ("kind 2") is the receive unit's data bytes, packed (MPI_PACKED), so
 * that its layout is the same on ranks that type the data differently;
 * reductions, whose type is the same on every rank, keep the receive
 * unit's layout there (the kernels need it). Every operand is resolved at
 * plan time to (buffer, byte offset, count, datatype): a contiguous shape is
 * count x the user's type itself, any other shape one committed derived
 * datatype (hvector levels or hindexed runs) made once and shared by all
 * operands of that (kind, shape). Local copies use memcpy when both unit
 * types are dense and a self send-receive with the operand types otherwise,
 * which is right for any datatype.
 */
#include <limits.h>
#include <stdatomic.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "exec.h"
#include "kernels.h"
#include "local.h"
#include "segment.h"
#include "cma.h"

#define TAG_P2P 0x7c11
#define TAG_SELF 0x7c12

typedef struct {
  MPI_Datatype t; /* the user's type */
  int c;          /* user elements per unit */
  MPI_Aint ext;   /* bytes between units */
  MPI_Aint bytes; /* data bytes of a unit */
  int dense;      /* predefined type without holes (exec_type_dense) */
  int flat;       /* exactly `bytes` contiguous bytes from the unit's start */
} unit;

typedef struct {
  int buf;
  MPI_Aint off; /* bytes */
  int count;
  MPI_Datatype type;
} xopnd;

typedef struct {
  xopnd src, dst; /* GET: src is the slot (the copy path) */
  int memcpy_ok;
  int flag;       /* AWAIT, GET: the peer's local index (its flag) */
  int iv, nl, nr; /* GET: its local, then remote pieces in the plan's iov pool */
  uint64_t rend;  /* GET: the end of the remote pieces (bytes from the peer's base) */
  int stage;      /* GET: dst is not plain bytes: read into the stage, then unpack */
} xins;

/* The immutable part: everything resolved once per (program, binding).
 * Shared by every execution context that runs it (exec.h). */
struct collc_plan {
  collc_prog *P;
  int self;       /* my rank (in every communicator an execution runs on) */
  unit u[3];      /* kinds: SEND, RECV and TMP, SHM */
  xins *x;
  MPI_Datatype *dt; /* [kind * nshapes + shape], MPI_DATATYPE_NULL if not built */
  int *dtcount;
  MPI_Datatype *owned; /* every type this plan created, freed with it */
  int nowned;
  kernel_sel ks;  /* typed kernel of a reduction, if one exists */
  local_ctx lx;   /* how local instructions treat units */
  size_t tmp_bytes;      /* scratch an execution needs (0: none) */
  MPI_Aint tmp_lb;       /* its base is shifted by the recv type's true lower bound */
  long long bytes;
  struct iovec *iov;     /* GET pieces (iov_base: offsets from a buffer's base) */
  int niov;
  size_t stage_bytes;    /* GETs into buffers that are not plain bytes read there first */
  uint32_t flat;         /* bit b: buffer b may be read in place (BUF_SEND, RECV, TMP) */
  int remote;            /* the program OFFERs or GETs: publish buffers at each start */
  int pid;
  uint64_t limit[3];     /* bytes of SEND, RECV, TMP as published (fixed by the binding) */
  MPI_Aint shm_lb;       /* true lower bound of a segment unit: the base is shifted by it */
  size_t shm_bytes;      /* segment bytes this plan touches */
  int flag;              /* my local index (my flag) */
  atomic_int refs;       /* owners: a cache, requests, running contexts */
  MPI_Datatype adopted[2]; /* datatypes freed with the plan (plan_adopt_types) */
};

/* The mutable part: one execution of a plan (exec.h). Buffers grow to the
 * largest plan run in the context, so a context allocates only when it
 * first meets a larger plan. */
struct exec_ctx {
  collc_plan *pl;        /* running (pc < nins), or last run */
  exec_where w;          /* where it runs */
  int pc;                /* next instruction of a started execution */
  char *base[BUF_COUNT]; /* buffer bases of the current execution */
  uint64_t seq;          /* this execution's number on the segment */
  MPI_Request *req;
  int nreq;              /* capacity of req */
  void *tmp_mem;
  size_t tmp_cap;
  char *stage;
  size_t stage_cap;
};

static int kind_of(int buf) { return buf == BUF_SEND ? 0 : buf == BUF_SHM ? 2 : 1; }

int exec_type_named(MPI_Datatype t) {
  int ni, na, nd, comb;
  return PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) == MPI_SUCCESS &&
         comb == MPI_COMBINER_NAMED;
}

int exec_type_dense(MPI_Datatype t) {
  int ni, na, nd, comb, size;
  MPI_Aint lb, ext;
  if (PMPI_Type_get_envelope(t, &ni, &na, &nd, &comb) != MPI_SUCCESS) return 0;
  PMPI_Type_size(t, &size);
  PMPI_Type_get_extent(t, &lb, &ext);
  return comb == MPI_COMBINER_NAMED && lb == 0 && ext == size;
}

/* Remember a type this plan owns; commit it. */
static int own(collc_plan *pl, MPI_Datatype t) {
  pl->owned[pl->nowned++] = t;
  return PMPI_Type_commit(&pl->owned[pl->nowned - 1]);
}

/* Build the derived type of a non-contiguous (or oversized) shape. */
static int build_type(collc_plan *pl, const unit *U, const collc_shape *S, MPI_Datatype *t) {
  const int64_t *d = pl->P->pool + S->data;
  int rc;
  if (S->kind == SHAPE_INDEXED) {
    int *bl = malloc((size_t)S->nlev * sizeof *bl);
    MPI_Aint *dis = malloc((size_t)S->nlev * sizeof *dis);
    rc = bl && dis ? MPI_SUCCESS : MPI_ERR_NO_MEM;
    for (int i = 0; i < S->nlev && !rc; i++) {
      if (d[2 * i + 1] * U->c > INT_MAX) rc = MPI_ERR_COUNT;
      else bl[i] = (int)(d[2 * i + 1] * U->c), dis[i] = (MPI_Aint)d[2 * i] * U->ext;
    }
    if (!rc) rc = PMPI_Type_create_hindexed(S->nlev, bl, dis, U->t, t);
    free(bl), free(dis);
    return rc;
  }
  if (S->run * U->c > INT_MAX) return MPI_ERR_COUNT;
  rc = PMPI_Type_contiguous((int)(S->run * U->c), U->t, t);
  for (int l = 0; l < S->nlev && !rc; l++) {
    MPI_Datatype inner = *t;
    rc = PMPI_Type_create_hvector((int)d[2 * l], 1, (MPI_Aint)d[2 * l + 1] * U->ext, inner, t);
    PMPI_Type_free(&inner);
  }
  return rc;
}

/* Resolve operand o to (buffer, bytes, count, type), building types once. */
static int resolve(collc_plan *pl, collc_opnd o, xopnd *x) {
  int k = kind_of(o.buf), at = k * pl->P->nshapes + o.shape;
  const unit *U = &pl->u[k];
  const collc_shape *S = &pl->P->shapes[o.shape];
  x->buf = o.buf;
  x->off = (MPI_Aint)o.off * U->ext;
  if (pl->dt[at] == MPI_DATATYPE_NULL) {
    if (S->kind == SHAPE_STRIDED && S->nlev == 0 && S->run * U->c <= INT_MAX) {
      pl->dt[at] = U->t;
      pl->dtcount[at] = (int)(S->run * U->c);
    } else {
      MPI_Datatype t;
      int rc = build_type(pl, U, S, &t);
      if (rc) return rc;
      if ((rc = own(pl, t))) return rc;
      pl->dt[at] = t;
      pl->dtcount[at] = 1;
    }
  }
  x->type = pl->dt[at];
  x->count = pl->dtcount[at];
  return MPI_SUCCESS;
}

/* A group call's operand: the part type resized to the member stride. */
static int resolve_tiled(collc_plan *pl, collc_opnd o, int64_t stride, xopnd *x) {
  int rc = resolve(pl, o, x);
  MPI_Datatype part = x->type, tiled = MPI_DATATYPE_NULL;
  if (!rc && x->count != 1) rc = PMPI_Type_contiguous(x->count, x->type, &part);
  if (!rc) rc = PMPI_Type_create_resized(part, 0, (MPI_Aint)stride * pl->u[kind_of(o.buf)].ext,
                                         &tiled);
  if (part != x->type) PMPI_Type_free(&part);
  if (!rc) rc = own(pl, tiled);
  x->type = tiled;
  x->count = 1;
  return rc;
}

/* Append the byte pieces of operand o (units of ub bytes, ext apart) to
 * the plan's iov pool (offsets from the buffer's base). */
static int add_pieces(collc_plan *pl, collc_opnd o, MPI_Aint ub, MPI_Aint ext) {
  const collc_shape *S = &pl->P->shapes[o.shape];
  struct iovec *v = realloc(pl->iov, (size_t)(pl->niov + S->nruns + 1) * sizeof *v);
  if (!v) return MPI_ERR_NO_MEM;
  pl->iov = v;
  for (int64_t k = 0; k < S->nruns; k++) {
    int64_t off, len;
    shape_run(pl->P, o.shape, k, &off, &len);
    v[pl->niov].iov_base = (void *)(uintptr_t)((o.off + off) * ext);
    v[pl->niov++].iov_len = (size_t)(len * ub);
  }
  return MPI_SUCCESS;
}

/* GET I: where the bytes go (my dst, or the stage when dst is not plain
 * bytes) and come from (the peer's src: plain bytes, or it copies to the
 * slot instead). */
static int get_pieces(collc_plan *pl, const collc_instr *I, xins *X) {
  const unit *D = &pl->u[kind_of(I->dst.buf)];
  MPI_Aint ub = pl->u[kind_of(I->src.buf)].bytes;
  size_t bytes = (size_t)(opnd_units(pl->P, I->src) * ub);
  int rc;
  X->flag = pl->P->spec.layout->local_of[I->peer];
  X->iv = pl->niov;
  X->stage = !D->flat;
  if (X->stage) {
    struct iovec *v = realloc(pl->iov, (size_t)(pl->niov + 1) * sizeof *v);
    if (!v) return MPI_ERR_NO_MEM;
    pl->iov = v;
    v[pl->niov].iov_base = 0, v[pl->niov++].iov_len = bytes;
    if (bytes > pl->stage_bytes) pl->stage_bytes = bytes;
  } else if ((rc = add_pieces(pl, I->dst, D->bytes, D->ext))) {
    return rc;
  }
  X->nl = pl->niov - X->iv;
  if ((rc = add_pieces(pl, I->src, ub, ub))) return rc;
  X->nr = pl->niov - X->iv - X->nl;
  X->rend = 0;
  for (int i = X->iv + X->nl; i < pl->niov; i++) {
    uint64_t end = (uint64_t)(uintptr_t)pl->iov[i].iov_base + pl->iov[i].iov_len;
    if (end > X->rend) X->rend = end;
  }
  return MPI_SUCCESS;
}

/* Resolve instruction a (operands, group communicator, copy mode). */
static int resolve_instr(collc_plan *pl, int a) {
  const collc_instr *I = &pl->P->ins[a];
  xins *X = &pl->x[a];
  int f = ops_flags(I->op), rc = MPI_SUCCESS;
  if (I->op == COLLC_OP_AWAIT) {
    X->flag = pl->P->spec.layout->local_of[I->peer];
    return MPI_SUCCESS;
  }
  if (f & OPF_GROUP) {
    rc = resolve_tiled(pl, I->src, I->n, &X->src);
    if (!rc) rc = resolve_tiled(pl, I->dst, I->n, &X->dst);
    if (!rc) pl->bytes += (long long)(pl->P->groups[I->peer].n - 1) *
                          opnd_units(pl->P, I->src) * pl->u[kind_of(I->src.buf)].bytes;
    return rc;
  }
  collc_opnd from = I->op == COLLC_OP_GET ? I->src2 : I->src; /* (GET: its copy path) */
  if (f & OPF_READS) rc = resolve(pl, from, &X->src);
  if (!rc && (f & OPF_WRITES)) rc = resolve(pl, I->dst, &X->dst);
  if (I->op == COLLC_OP_SEND)
    pl->bytes += (long long)opnd_units(pl->P, I->src) * pl->u[kind_of(I->src.buf)].bytes;
  if (!rc && I->op == COLLC_OP_GET) rc = get_pieces(pl, I, X);
  if (I->op == COLLC_OP_COPY || I->op == COLLC_OP_OFFER || I->op == COLLC_OP_GET) {
    const unit *a0 = &pl->u[kind_of(from.buf)], *a1 = &pl->u[kind_of(I->dst.buf)];
    X->memcpy_ok = (a0->flat && a1->flat && a0->ext == a1->ext) ||
                   (a0->t == a1->t && a0->c == a1->c && exec_type_named(a0->t));
  }
  return rc;
}

static void unit_init(unit *U, int count, MPI_Datatype t) {
  MPI_Aint lb, ext, tlb, text;
  int size;
  U->t = t;
  U->c = count;
  if (t == MPI_DATATYPE_NULL) return;
  PMPI_Type_get_extent(t, &lb, &ext);
  PMPI_Type_get_true_extent(t, &tlb, &text);
  PMPI_Type_size(t, &size);
  U->ext = ext * count;
  U->bytes = (MPI_Aint)size * count;
  U->dense = exec_type_dense(t);
  U->flat = lb == 0 && tlb == 0 && ext == size && text == size;
}

/* The unit of the node segment for binding b (file comment): packed
 * bytes, or the receive unit itself for reductions and for units that are
 * plain bytes already. *lb gets the shift of the segment base. */
static void shm_unit(const exec_bind *b, unit *U, MPI_Aint *lb) {
  MPI_Aint text;
  unit_init(U, b->recvcount, b->recvtype);
  *lb = 0;
  if (b->op != MPI_OP_NULL || U->flat) {
    PMPI_Type_get_true_extent(b->recvtype, lb, &text);
    return;
  }
  unit_init(U, (int)U->bytes, MPI_PACKED);
  U->ext = U->bytes = U->c, U->dense = U->flat = 1;
}

/* The scratch of tmp_units recv units an execution needs, addressed like a
 * receive buffer (its base shifted by the type's true lower bound). */
static void size_tmp(collc_plan *pl, const exec_bind *b) {
  MPI_Aint tlb, text;
  if (pl->P->tmp_units == 0) return;
  PMPI_Type_get_true_extent(b->recvtype, &tlb, &text);
  pl->tmp_bytes = (size_t)(pl->P->tmp_units * pl->u[1].ext) + (size_t)text + 64;
  pl->tmp_lb = tlb;
}

/* Whether b's operation works on its type (MPI_ERR_OP if not): a plan on
 * the node segment must not fail half-way on some ranks only, so it finds
 * out before its first execution. */
static int probe_op(const exec_bind *b) {
  MPI_Aint lb, ext;
  PMPI_Type_get_true_extent(b->recvtype, &lb, &ext);
  char *m = calloc(2, (size_t)ext + 16);
  if (!m) return MPI_ERR_NO_MEM;
  int rc = PMPI_Reduce_local(m - lb, m + ext + 16 - lb, 1, b->recvtype, b->op), cls = rc;
  free(m);
  if (rc) PMPI_Error_class(rc, &cls);
  return cls;
}

/* Where a program on the node segment finds it: my flag, its units, the
 * base shift and size for b; the operation probed. MPI_SUCCESS or a class. */
static int bind_segment(collc_plan *pl, const exec_bind *b) {
  const collc_prog *P = pl->P;
  if (!P->shm_units) return MPI_SUCCESS;
  if (!P->spec.layout) return MPI_ERR_INTERN;
  if (pl->u[1].bytes > INT_MAX) return MPI_ERR_COUNT; /* (a packed unit's count is an int) */
  pl->flag = P->spec.layout->local_of[P->spec.rank];
  shm_unit(b, &pl->u[2], &pl->shm_lb);
  pl->shm_bytes = plan_shm_bytes(P, b);
  return b->op != MPI_OP_NULL ? probe_op(b) : MPI_SUCCESS;
}

int plan_create(collc_prog *P, const exec_bind *b, collc_plan **out) {
  collc_plan *pl = calloc(1, sizeof *pl);
  int rc = MPI_ERR_NO_MEM;
  *out = NULL;
  if (!pl) {
    prog_free(P);
    return rc;
  }
  pl->P = P;
  pl->self = P->spec.rank;
  atomic_init(&pl->refs, 1);
  pl->adopted[0] = pl->adopted[1] = MPI_DATATYPE_NULL;
  unit_init(&pl->u[0], b->sendcount, P->spec.in_place ? b->recvtype : b->sendtype);
  unit_init(&pl->u[1], b->recvcount, b->recvtype);
  if ((rc = bind_segment(pl, b)) != MPI_SUCCESS) {
    plan_free(pl);
    return rc;
  }
  pl->lx = (local_ctx){.c = b->recvcount, .t = b->recvtype, .op = b->op};
  for (int k = BUF_SEND; k < BUF_COUNT; k++) pl->lx.ext[k] = pl->u[kind_of(k)].ext;
  rc = MPI_ERR_NO_MEM;
  if (b->op != MPI_OP_NULL && kernel_select(b->recvtype, b->op, &pl->ks)) pl->lx.k = &pl->ks;
  size_t nd = 3 * (size_t)P->nshapes + 1;
  pl->x = calloc((size_t)P->nins + 1, sizeof *pl->x);
  pl->dt = malloc(nd * sizeof *pl->dt);
  pl->dtcount = calloc(nd, sizeof *pl->dtcount);
  pl->owned = malloc((nd + 2 * (size_t)P->nins) * sizeof *pl->owned);
  if (pl->x && pl->dt && pl->dtcount && pl->owned) {
    for (size_t i = 0; i < nd; i++) pl->dt[i] = MPI_DATATYPE_NULL;
    size_tmp(pl, b);
    rc = MPI_SUCCESS;
    for (int a = 0; a < P->nins && !rc; a++) rc = resolve_instr(pl, a);
  }
  for (int a = 0; a < P->nins; a++)
    pl->remote |= P->ins[a].op == COLLC_OP_OFFER || P->ins[a].op == COLLC_OP_GET;
  pl->pid = (int)getpid();
  for (int k = BUF_SEND; k <= BUF_TMP; k++)
    pl->limit[k - BUF_SEND] = (uint64_t)(prog_buf_units(P, k) * pl->u[kind_of(k)].ext);
  pl->flat = (pl->u[0].flat && !P->spec.in_place ? 1u << BUF_SEND : 0) |
             (pl->u[1].flat ? 1u << BUF_RECV | 1u << BUF_TMP : 0);
  if (rc) {
    plan_free(pl);
    return rc;
  }
  *out = pl;
  return MPI_SUCCESS;
}

/* PMPI_Waitall ignoring statuses. MPICH declares MPI_STATUSES_IGNORE as
 * (MPI_Status *)1 and annotates the argument, which gcc mistakes for a
 * zero-size buffer. */
static int waitall(int n, MPI_Request *req) {
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
  return PMPI_Waitall(n, req, MPI_STATUSES_IGNORE);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
}

static int testall(int n, MPI_Request *req, int *flag) {
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
  return PMPI_Testall(n, req, flag, MPI_STATUSES_IGNORE);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
}

/* Publish v in my flag of segment g. */
static void set_flag(const collc_plan *pl, shm_seg *g, uint64_t v) {
  flag_publish(&g->flag[pl->flag], v);
}

/* The copy of I's resolved operands (a COPY; the slot copy of an OFFER or
 * of a GET, whose source is then src2): memcpy when units are plain bytes,
 * else a self send-receive with the operand types. */
static int copy_step(exec_ctx *c, const collc_instr *I, const xins *X) {
  const collc_plan *pl = c->pl;
  collc_instr k = *I;
  k.op = COLLC_OP_COPY;
  if (I->op == COLLC_OP_GET) k.src = I->src2;
  if (X->memcpy_ok) return local_run(pl->P, &k, c->base, &pl->lx);
  return PMPI_Sendrecv(c->base[k.src.buf] + X->src.off, X->src.count, X->src.type, pl->self,
                       TAG_SELF, c->base[k.dst.buf] + X->dst.off, X->dst.count, X->dst.type,
                       pl->self, TAG_SELF, c->w.comm, MPI_STATUS_IGNORE);
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
  return PMPI_Isend(SRC(c, X), X->src.count, X->src.type, I->peer, c->w.tag, c->w.comm,
                    &c->req[I->slot]);
}

static int x_RECV(exec_ctx *c, const collc_instr *I, const xins *X, int blocking, int *stall) {
  (void)blocking, (void)stall;
  return PMPI_Irecv(DST(c, X), X->dst.count, X->dst.type, I->peer, c->w.tag, c->w.comm,
                    &c->req[I->slot]);
}

static int x_WAIT(exec_ctx *c, const collc_instr *I, const xins *X, int blocking, int *stall) {
  int done = 1, n = (int)I->n;
  MPI_Request *r = &c->req[I->slot];
  int rc = blocking ? waitall(n, r) : testall(n, r, &done);
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
  return local_run(c->pl->P, I, c->base, &c->pl->lx);
}

#define x_COMBINE x_REDUCE

/* A group all-to-all: posted when not blocking (WAIT completes it). */
static int x_ALLTOALL(exec_ctx *c, const collc_instr *I, const xins *X, int blocking,
                      int *stall) {
  MPI_Request *r = &c->req[I->slot];
  MPI_Comm g = c->w.gcomm[I->peer];
  (void)stall;
  if (!blocking) return PMPI_Ialltoall(SRC(c, X), 1, X->src.type, DST(c, X), 1, X->dst.type, g, r);
  *r = MPI_REQUEST_NULL;
  return PMPI_Alltoall(SRC(c, X), 1, X->src.type, DST(c, X), 1, X->dst.type, g);
}

static int x_SIGNAL(exec_ctx *c, const collc_instr *I, const xins *X, int blocking, int *stall) {
  (void)X, (void)blocking, (void)stall;
  set_flag(c->pl, *c->w.seg, (c->seq - 1) * STEP_DONE + (uint64_t)I->n);
  return MPI_SUCCESS;
}

/* AWAIT on the flag of local rank X->flag: stalls (not blocking) until it
 * is reached; a poisoned flag (the peer failed) is an error. */
static int x_AWAIT(exec_ctx *c, const collc_instr *I, const xins *X, int blocking, int *stall) {
  shm_seg *g = *c->w.seg;
  int got = flag_wait(&g->flag[X->flag], (c->seq - 1) * STEP_DONE + (uint64_t)I->n, blocking,
                      g->yield);
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
  if (cma_read(f->pid, to, v, X->nl, f->base[b], v + X->nl, X->nr)) return MPI_ERR_OTHER;
  if (!X->stage) return MPI_SUCCESS;
  return PMPI_Sendrecv(c->stage, (int)v[0].iov_len, MPI_PACKED, c->pl->self, TAG_SELF,
                       DST(c, X), X->dst.count, X->dst.type, c->pl->self, TAG_SELF, c->w.comm,
                       MPI_STATUS_IGNORE);
}

/* Every opcode's behaviour, from the one opcode table: an opcode without an
 * x_<NAME> function does not compile. */
static const step_fn steps[COLLC_OP_COUNT] = {
#define X_ENTRY(name, flags, doc) [COLLC_OP_##name] = x_##name,
    COLLC_OPS(X_ENTRY)
#undef X_ENTRY
};

/* After a failure: cancel and release requests still in flight, so that
 * nothing of this call can match a later one; on the node segment, poison
 * my flag, so that peers waiting for me fail instead of hanging (the
 * segment stays unusable: after an error MPI leaves the state undefined). */
static void abandon(exec_ctx *c) {
  const collc_plan *pl = c->pl;
  if (pl->P->shm_units && c->w.seg && *c->w.seg) set_flag(pl, *c->w.seg, FLAG_POISON);
  for (int s = 0; s < pl->P->nslots; s++)
    if (c->req[s] != MPI_REQUEST_NULL) {
      PMPI_Cancel(&c->req[s]);
      PMPI_Request_free(&c->req[s]);
    }
}

/* Run c's execution from pc until it ends or (not blocking) stalls on
 * incomplete requests or flags. *done tells which. Returns MPI_SUCCESS or
 * the class of the failing call (the execution is then abandoned and ended). */
static int run(exec_ctx *c, int blocking, int *done) {
  const collc_prog *P = c->pl->P;
  for (; c->pc < P->nins; c->pc++) {
    const collc_instr *I = &P->ins[c->pc];
    int stall = 0, rc = steps[I->op](c, I, &c->pl->x[c->pc], blocking, &stall);
    if (rc != MPI_SUCCESS) {
      int cls = MPI_ERR_INTERN;
      PMPI_Error_class(rc, &cls);
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

/* Make c's buffers hold what pl needs (allocating only when pl needs more
 * than any plan before it). MPI_SUCCESS or MPI_ERR_NO_MEM. */
static int reserve(exec_ctx *c, const collc_plan *pl) {
  int n = pl->P->nslots + 1;
  if (n > c->nreq) {
    MPI_Request *r = realloc(c->req, (size_t)n * sizeof *r);
    if (!r) return MPI_ERR_NO_MEM;
    for (int s = c->nreq; s < n; s++) r[s] = MPI_REQUEST_NULL;
    c->req = r, c->nreq = n;
  }
  if (pl->tmp_bytes > c->tmp_cap) {
    void *m = malloc(pl->tmp_bytes);
    if (!m) return MPI_ERR_NO_MEM;
    free(c->tmp_mem);
    c->tmp_mem = m, c->tmp_cap = pl->tmp_bytes;
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
  int rc = reserve(c, pl);
  c->pl = pl;
  c->w = *w;
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
    if (g) set_flag(pl, g, FLAG_POISON);
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
  free(c->req), free(c->tmp_mem), free(c->stage);
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
  return rc ? rc : run(c, 0, done);
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

long long plan_bytes(const collc_plan *pl) { return pl->bytes; }

MPI_Aint plan_shm_unit(const exec_bind *b) {
  MPI_Aint lb;
  unit U;
  shm_unit(b, &U, &lb);
  return U.ext;
}

size_t plan_shm_bytes(const collc_prog *P, const exec_bind *b) {
  MPI_Aint lb, tlb, text;
  unit U;
  if (!P->shm_units) return 0;
  shm_unit(b, &U, &lb);
  if (U.flat) return (size_t)(P->shm_units * U.ext); /* (packed, or plain bytes: units x bytes) */
  PMPI_Type_get_true_extent(b->recvtype, &tlb, &text);
  return (size_t)(P->shm_units * U.ext) + (size_t)(text > U.ext ? text : U.ext);
}

const collc_prog *plan_prog(const collc_plan *pl) { return pl->P; }

void plan_ref(collc_plan *pl) { atomic_fetch_add_explicit(&pl->refs, 1, memory_order_relaxed); }

void plan_free(collc_plan *pl) {
  if (!pl || atomic_fetch_sub_explicit(&pl->refs, 1, memory_order_acq_rel) != 1) return;
  for (int i = 0; i < pl->nowned; i++) PMPI_Type_free(&pl->owned[i]);
  for (int i = 0; i < 2; i++)
    if (pl->adopted[i] != MPI_DATATYPE_NULL && !exec_type_named(pl->adopted[i]))
      PMPI_Type_free(&pl->adopted[i]);
  free(pl->owned), free(pl->dt), free(pl->dtcount), free(pl->x);
  free(pl->iov);
  prog_free(pl->P);
  free(pl);
}

void plan_adopt_types(collc_plan *pl, MPI_Datatype sendtype, MPI_Datatype recvtype) {
  pl->adopted[0] = sendtype, pl->adopted[1] = recvtype;
}
