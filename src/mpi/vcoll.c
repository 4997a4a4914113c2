/* vcoll.c - MPI_Allgatherv and MPI_Reduce_scatter (per-rank counts) over
 * PMPI, and collc's entry points for them.
 *
 * What decides, what binds. The plan is decided collectively without an
 * extra round because MPI makes every rank pass every rank's count
 * (allgatherv: recvcounts[], significant on all ranks; reduce_scatter:
 * recvcounts[], identical on all ranks): the counts, hashed, are part of
 * the decision key. Allgatherv's displs[] are this rank's buffer layout
 * (MPI lets them differ between ranks): they key the binding only, and the
 * program addresses RECV at them (spec.displs; negative ones shift the
 * receive base). Units are elements of recvtype. A rank whose send typing
 * is not recvcounts[rank] elements of recvtype first copies its block into
 * place (PMPI_Sendrecv on MPI_COMM_SELF, local) and runs the in-place
 * program, which sends and receives exactly what the others' programs do.
 * Above VCOLL_MAXP ranks (the counts live on the stack: nothing is
 * allocated per call) the calls are native. */
#include <limits.h>
#include "collc.h"
#include "args.h"
#include "dispatch.h"
#include "../plan/config.h"
#include "../exec/backend_cuda.h"

#define VCOLL_MAXP 1024

/* The user's arguments of a counted call. */
typedef struct {
  int coll;
  const void *sb;
  int sc;
  MPI_Datatype st; /* allgatherv */
  void *rb;
  const int *rc, *displs; /* displs: allgatherv */
  MPI_Datatype rt;
  MPI_Op op; /* reduce_scatter */
} vargs;

/* The receive buffer as the user gave it (vshift undone). */
static void *user_rb(const dispatch_call *d) { return (char *)d->recvbuf - d->vshift; }

static int native_allgatherv(const dispatch_call *d) {
  return PMPI_Allgatherv(d->sendbuf, d->vsendcount, d->bind.sendtype, user_rb(d), d->vcounts,
                         d->vdispls, d->bind.recvtype, d->comm);
}

static int inative_allgatherv(const dispatch_call *d, MPI_Request *r) {
  return PMPI_Iallgatherv(d->sendbuf, d->vsendcount, d->bind.sendtype, user_rb(d), d->vcounts,
                          d->vdispls, d->bind.recvtype, d->comm, r);
}

static int native_rs(const dispatch_call *d) {
  return PMPI_Reduce_scatter(d->sendbuf, user_rb(d), d->vcounts, d->bind.recvtype, d->bind.op,
                             d->comm);
}

static int inative_rs(const dispatch_call *d, MPI_Request *r) {
  return PMPI_Ireduce_scatter(d->sendbuf, user_rb(d), d->vcounts, d->bind.recvtype,
                              d->bind.op, d->comm, r);
}

/* Counts (and allgatherv's displacements, shifted to start at >= 0) of a
 * into c[], dsp[] (NULL: reduce_scatter); *total their sum, *shift the
 * smallest negative displacement (else 0). MPI_SUCCESS, MPI_ERR_ARG (no
 * array) or MPI_ERR_COUNT (a negative count). */
static int vectors_in(const vargs *a, int p, int64_t *c, int64_t *dsp, int64_t *total,
                      int64_t *shift) {
  if (!a->rc || (dsp && !a->displs)) return MPI_ERR_ARG;
  *total = 0, *shift = 0;
  for (int q = 0; q < p; q++) {
    if (a->rc[q] < 0) return MPI_ERR_COUNT;
    *total += c[q] = a->rc[q];
    if (dsp && a->displs[q] < *shift) *shift = a->displs[q];
  }
  for (int q = 0; dsp && q < p; q++) dsp[q] = (int64_t)a->displs[q] - *shift;
  return MPI_SUCCESS;
}

/* MPI error class of bad buffer and type arguments of d (vectors read). */
static int check(const vargs *a, const dispatch_call *d) {
  const collc_spec *s = &d->spec;
  int in_place = a->sb == MPI_IN_PLACE, mine = a->rc[s->rank], err;
  int n = s->count > INT_MAX ? INT_MAX : (int)s->count; /* (buffer checks: non-NULL only) */
  if ((err = args_count_type(mine, a->rt))) return err;
  if (a->rb == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  if (a->coll == COLLC_COLL_REDUCE_SCATTER) {
    if ((err = args_op(a->op)) || (err = args_buffer(a->rb, mine, a->rt))) return err;
    if (!in_place && (err = args_buffer(a->sb, n, a->rt))) return err;
    return !in_place && n > 0 && a->sb == a->rb ? MPI_ERR_BUFFER : MPI_SUCCESS;
  }
  if ((err = args_buffer(a->rb, n, a->rt))) return err;
  if (in_place) return MPI_SUCCESS;
  if ((err = args_count_type(a->sc, a->st)) || (err = args_buffer(a->sb, a->sc, a->st))) return err;
  return args_bytes(a->sc, a->st) > args_bytes(mine, a->rt) ? MPI_ERR_TRUNCATE : MPI_SUCCESS;
}

/* The first byte of count elements of t at buf, if they are dense (no gap
 * and no overlap: a memcpy moves them), else NULL. */
static const char *dense_at(const void *buf, int count, MPI_Datatype t) {
  MPI_Aint lb, ext, tlb, text;
  int size;
  PMPI_Type_get_extent(t, &lb, &ext);
  PMPI_Type_get_true_extent(t, &tlb, &text);
  PMPI_Type_size(t, &size);
  return count <= 1 ? (text == size ? (const char *)buf + tlb : NULL)
                    : (text == size && ext == size ? (const char *)buf + tlb : NULL);
}

/* Copy the own block of allgatherv a from sendbuf to at: by the library
 * (PMPI_Sendrecv on MPI_COMM_SELF), or with device buffers that collc
 * stages (the library is not CUDA-aware and would read device memory) by
 * the CUDA backend's copy when both typings are dense, else MPI_ERR_TYPE
 * (the caller hands the call to the library). */
static int own_copy(const vargs *a, dispatch_call *d, char *at) {
  int mine = a->rc[d->spec.rank], size;
  if (!on_device(a->sb, d->recvbuf) || !backend_cuda() || backend_cuda_aware())
    return PMPI_Sendrecv(a->sb, a->sc, a->st, 0, 0, at, mine, a->rt, 0, 0, MPI_COMM_SELF,
                         MPI_STATUS_IGNORE);
  const char *from = dense_at(a->sb, a->sc, a->st), *to = dense_at(at, mine, a->rt);
  PMPI_Type_size(a->st, &size);
  if (!from || !to) return MPI_ERR_TYPE;
  return backend_cuda_copy((void *)(uintptr_t)to, from, (size_t)a->sc * (size_t)size);
}

/* Allgatherv on a rank whose send typing is not its block's: copy the block
 * into place now (local) and run the in-place program (see the header). */
static int own_block_first(const vargs *a, dispatch_call *d) {
  MPI_Aint lb, ext;
  PMPI_Type_get_extent(a->rt, &lb, &ext);
  char *at = (char *)d->recvbuf + (MPI_Aint)d->spec.displs[d->spec.rank] * ext;
  int rc = own_copy(a, d, at);
  d->spec.in_place = 1, d->ck = NULL; /* (the native call still sends from sendbuf) */
  return rc;
}

/* Validate and run counted call a on comm with algorithm forced (NULL: the
 * selection); fast: a blocking call of the default selection (the call
 * cache). */
static int counted(const vargs *a, const char *forced, MPI_Comm comm, int fast) {
  static int (*const natives[COLLC_COLL_COUNT])(const dispatch_call *) = {
      [COLLC_COLL_ALLGATHERV] = native_allgatherv, [COLLC_COLL_REDUCE_SCATTER] = native_rs};
  static int (*const inatives[COLLC_COLL_COUNT])(const dispatch_call *, MPI_Request *) = {
      [COLLC_COLL_ALLGATHERV] = inative_allgatherv, [COLLC_COLL_REDUCE_SCATTER] = inative_rs};
  int64_t c[VCOLL_MAXP], dsp[VCOLL_MAXP], total = 0, shift = 0;
  int inter, p = 1, rank = 0, commute = 1, rc, gv = a->coll == COLLC_COLL_ALLGATHERV;
  int err = args_comm(comm, &inter);
  if (err) return collc_raise(MPI_COMM_NULL, err);
  PMPI_Comm_size(comm, &p);
  PMPI_Comm_rank(comm, &rank);
  dispatch_call d = {.spec = {.coll = a->coll, .p = p, .rank = rank, .in_place = a->sb == MPI_IN_PLACE},
                     .bind = {1, 1, gv ? a->st : a->rt, a->rt, gv ? MPI_OP_NULL : a->op},
                     .sendbuf = a->sb, .recvbuf = a->rb, .comm = comm,
                     .native = natives[a->coll], .inative = inatives[a->coll],
                     .vcounts = a->rc, .vdispls = a->displs, .vsendcount = a->sc};
  if (inter || p > VCOLL_MAXP) return dispatch_native(&d, 0);
  if ((err = vectors_in(a, p, c, gv ? dsp : NULL, &total, &shift)))
    return collc_raise(comm, err);
  d.spec.counts = c, d.spec.displs = gv ? dsp : NULL, d.spec.count = total;
  if ((err = check(a, &d))) return collc_raise(comm, err);
  d.spec.unit_bytes = args_bytes(1, a->rt);
  if (!gv) PMPI_Op_commutative(a->op, &commute);
  d.spec.commutative = commute;
  if (shift) { /* the program's RECV starts at the lowest block */
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(a->rt, &lb, &ext);
    d.vshift = (long long)(shift * ext), d.recvbuf = (char *)a->rb + d.vshift;
  }
  long long bytes = (total - c[rank]) * d.spec.unit_bytes; /* native estimate */
  call_key k = {.coll = a->coll, .in_place = d.spec.in_place, .scount = gv ? a->sc : 0,
                .rcount = (int)(total & INT_MAX), .stype = gv ? a->st : MPI_DATATYPE_NULL,
                .rtype = a->rt, .op = gv ? MPI_OP_NULL : a->op,
                .chash = binding_chash(&d.spec), .counts = c, .displs = d.spec.displs};
  if (d.spec.in_place) k.stype = MPI_DATATYPE_NULL, k.scount = 0;
  if (fast) {
    int how = dispatch_fast(comm, &k, d.sendbuf, d.recvbuf, &rc);
    if (how == FAST_NATIVE) return d.native(&d);
    if (how == FAST_DONE) return rc;
    d.ck = &k;
  }
  if (!gv && !args_reducible(a->rt, a->op)) return dispatch_native(&d, bytes);
  if (gv && !d.spec.in_place && (a->st != a->rt || a->sc != a->rc[rank]) &&
      (err = own_block_first(a, &d))) {
    if (err != MPI_ERR_TYPE || !on_device(a->sb, a->rb)) return collc_raise(comm, err);
    stats_device(a->coll); /* (a device block collc cannot copy: the library's call) */
    return dispatch_native(&d, bytes);
  }
  return dispatch(&d, forced, bytes);
}

int collc_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm) {
  vargs a = {COLLC_COLL_ALLGATHERV, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
             recvtype, MPI_OP_NULL};
  return counted(&a, NULL, comm, 1);
}

int collc_allgatherv_algo(const char *algorithm, const void *sendbuf, int sendcount,
                          MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                          const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  vargs a = {COLLC_COLL_ALLGATHERV, sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
             recvtype, MPI_OP_NULL};
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return counted(&a, algorithm, comm, 0);
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
  if (config_get()->disable)
    return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           comm);
  return collc_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                          comm);
}

int collc_reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  vargs a = {COLLC_COLL_REDUCE_SCATTER, sendbuf, 0, MPI_DATATYPE_NULL, recvbuf, recvcounts,
             NULL, datatype, op};
  return counted(&a, NULL, comm, 1);
}

int collc_reduce_scatter_algo(const char *algorithm, const void *sendbuf, void *recvbuf,
                              const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm) {
  vargs a = {COLLC_COLL_REDUCE_SCATTER, sendbuf, 0, MPI_DATATYPE_NULL, recvbuf, recvcounts,
             NULL, datatype, op};
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return counted(&a, algorithm, comm, 0);
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  if (config_get()->disable)
    return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
  return collc_reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
}
