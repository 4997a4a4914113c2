/* plan.c - bind a program to this rank's typing of the buffers: a plan.
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
 * which is right for any datatype. The interpreter (interp.c) runs plans.
 */
#include <limits.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>
#include "plan_impl.h"
#include "../ir/batch.h"
#include "backend_cuda.h"

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

/* Whether every local instruction of pl can run in a batch: copies of plain
 * bytes (memcpy), reductions with a compiled kernel (not user operations). */
static int batchable(const collc_plan *pl) {
  for (int a = 0; a < pl->P->nins; a++) {
    int op = pl->P->ins[a].op;
    if (op == COLLC_OP_COPY && !pl->x[a].memcpy_ok) return 0;
    if ((op == COLLC_OP_REDUCE || op == COLLC_OP_COMBINE) && !pl->lx.k) return 0;
  }
  return 1;
}

/* Descriptor D of batches in units, as bytes of this plan (xbatch.h). */
static xdesc bytes_of(const collc_plan *pl, const batch_desc *D) {
  const MPI_Aint *e = pl->lx.ext;
  uint64_t n = D->kind == BATCH_COPY ? (uint64_t)(D->n * e[D->dbuf])
                                     : (uint64_t)D->n * (uint64_t)pl->lx.c * pl->ks.elems;
  return (xdesc){D->kind, D->sbuf, D->s2buf, D->dbuf, (uint64_t)(D->s * e[D->sbuf]),
                 (uint64_t)(D->s2 * e[D->s2buf]), (uint64_t)(D->d * e[D->dbuf]), n};
}

/* The byte descriptor tables of pl's batches (none when not batchable).
 * MPI_SUCCESS or MPI_ERR_NO_MEM. */
static int bind_batches(collc_plan *pl) {
  collc_batches B;
  xbatch_tab *T = &pl->bt;
  if (!batchable(pl)) return MPI_SUCCESS;
  if (batch_build(pl->P, &B)) return MPI_ERR_NO_MEM;
  T->d = malloc(((size_t)B.nd + 1) * sizeof *T->d);
  T->b = malloc(((size_t)B.nb + 1) * sizeof *T->b);
  T->of = B.of, B.of = NULL;
  if (T->d && T->b) {
    for (int64_t i = 0; i < B.nd; i++) T->d[i] = bytes_of(pl, &B.d[i]);
    for (int k = 0; k < B.nb; k++) T->b[k] = (xspan){B.b[k].d0, B.b[k].nd, B.b[k].end};
    T->nd = B.nd, T->nb = B.nb, T->kernel = pl->lx.k ? pl->ks.id : -1;
  }
  batch_free(&B);
  return T->d && T->b ? MPI_SUCCESS : MPI_ERR_NO_MEM;
}

const xbatch_tab *plan_batches(const collc_plan *pl) { return pl->bt.nb ? &pl->bt : NULL; }

int plan_batchable(const collc_plan *pl, int *kernel) {
  *kernel = pl->lx.k ? pl->ks.id : -1;
  return batchable(pl) && (pl->lx.op == MPI_OP_NULL || pl->lx.k);
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
  if (!rc && b->batch) rc = bind_batches(pl);
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
  backend_cuda_table_free(pl->bt.dev);
  free(pl->bt.d), free(pl->bt.b), free(pl->bt.of);
  prog_free(pl->P);
  free(pl);
}

void plan_adopt_types(collc_plan *pl, MPI_Datatype sendtype, MPI_Datatype recvtype) {
  pl->adopted[0] = sendtype, pl->adopted[1] = recvtype;
}
