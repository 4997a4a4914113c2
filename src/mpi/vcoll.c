/* vcoll.c - MPI_Allgatherv and MPI_Reduce_scatter (per-rank counts) over
 * PMPI, blocking, nonblocking (MPI_I<coll>) and persistent (<Coll>_init),
 * and collc's entry points for them: one path (counted) for all three, as
 * dispatch_pair is for allgather.
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
 * program, which sends and receives exactly what the others' programs do
 * (a nonblocking call copies at the call, a persistent request at each
 * start: dispatch_call.prestart).
 * Above VCOLL_MAXP ranks (the counts live on the stack: nothing is
 * allocated per call) the calls are native. */
#include <limits.h>
#include "collc.h"
#include "args.h"
#include "dispatch.h"
#include "../plan/config.h"
#include "pinit.h"
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

/* The total count of call a of the default selection on p ranks when it
 * may be served under its loose key, else -1: its count arguments pass
 * counts_usable (allgatherv's sendcount too), its receive buffer is not
 * MPI_IN_PLACE (an error whose class collc gives), the total fits an int.
 * The rule's rows see the counts only through their total (select_bytes). */
COLLC_HOT long long loose_total(const vargs *a, int p) {
  const int *d = a->coll == COLLC_COLL_REDUCE_SCATTER ? a->rc : a->displs;
  if (a->rb == MPI_IN_PLACE || a->sc < 0) return -1;
  long long t = counts_total(p, a->rc, d);
  return t <= INT_MAX ? t : -1;
}

/* The loose key of call a whose counts total tot (loose_total): the
 * counts stand in it by their total alone. */
COLLC_HOT call_key vloose_key(const vargs *a, long long tot) {
  call_key k = loose_key(a->coll, a->sb, a->st, a->rt, a->op);
  k.rcount = (int)tot;
  return k;
}

/* Whether the memo says call a on comm (nb: nonblocking) is to be made
 * natively. The key needs the total, the total p, which any memo of the
 * communicator holds (no PMPI_Comm_size per call). */
COLLC_HOT int hot_native(const vargs *a, MPI_Comm comm, int nb) {
  const call_memo *m = memo_any(comm, a->coll, nb);
  long long tot = m ? loose_total(a, m->p) : -1;
  if (tot < 0) return 0;
  call_key k = vloose_key(a, tot);
  return memo_says_native(memo_find_from(m, comm, &k, nb), nb, a->sb, a->rb);
}

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

/* Copy allgatherv d's own block from its send typing into its place in
 * the receive buffer: by the library (PMPI_Sendrecv on MPI_COMM_SELF), or
 * with device buffers that collc stages (the library is not CUDA-aware
 * and would read device memory) by the CUDA backend's copy when both
 * typings are dense, else MPI_ERR_TYPE (the caller hands the call to the
 * library). */
static int own_block_copy(const dispatch_call *d) {
  MPI_Aint lb, ext;
  int me = d->spec.rank, mine = d->vcounts[me], size;
  PMPI_Type_get_extent(d->bind.recvtype, &lb, &ext);
  char *at = (char *)user_rb(d) + (MPI_Aint)d->vdispls[me] * ext;
  if (!on_device(d->sendbuf, user_rb(d)) || !backend_cuda() || backend_cuda_aware())
    return PMPI_Sendrecv(d->sendbuf, d->vsendcount, d->bind.sendtype, 0, 0, at, mine,
                         d->bind.recvtype, 0, 0, MPI_COMM_SELF, MPI_STATUS_IGNORE);
  const char *from = dense_at(d->sendbuf, d->vsendcount, d->bind.sendtype);
  const char *to = dense_at(at, mine, d->bind.recvtype);
  PMPI_Type_size(d->bind.sendtype, &size);
  if (!from || !to) return MPI_ERR_TYPE;
  return backend_cuda_copy((void *)(uintptr_t)to, from, (size_t)d->vsendcount * (size_t)size);
}

/* Allgatherv on a rank whose send typing is not its block's: the in-place
 * program, after the block is copied into place (see the header): now, or
 * for a persistent request at each start (d->prestart). */
static int own_block_first(dispatch_call *d) {
  d->spec.in_place = 1, d->ck = NULL; /* (the native call still sends from sendbuf) */
  if (d->request) return (d->prestart = own_block_copy), MPI_SUCCESS;
  return own_block_copy(d);
}

/* The native calls of the counted collectives, blocking and nonblocking. */
static int (*const natives[COLLC_COLL_COUNT])(const dispatch_call *) = {
    [COLLC_COLL_ALLGATHERV] = native_allgatherv, [COLLC_COLL_REDUCE_SCATTER] = native_rs};
static int (*const inatives[COLLC_COLL_COUNT])(const dispatch_call *, MPI_Request *) = {
    [COLLC_COLL_ALLGATHERV] = inative_allgatherv, [COLLC_COLL_REDUCE_SCATTER] = inative_rs};

/* The fast path of counted call d (blocking, or nonblocking: d->ireq)
 * under key k: FAST_DONE, served (natively too), *rc its result; else
 * FAST_MISS. */
static int counted_fast(const dispatch_call *d, const call_key *k, int *rc) {
  int how = d->ireq ? nb_fast(d->comm, k, d->sendbuf, d->recvbuf, d->ireq, rc)
                    : dispatch_fast(d->comm, k, d->sendbuf, d->recvbuf, rc);
  if (how == FAST_NATIVE) *rc = d->ireq ? d->inative(d, d->ireq) : d->native(d);
  return how == FAST_MISS ? FAST_MISS : FAST_DONE;
}

/* The call-cache key of counted call a as d holds it (vectors in c[]). */
static call_key counted_key(const vargs *a, const dispatch_call *d, const int64_t *c) {
  int gv = a->coll == COLLC_COLL_ALLGATHERV;
  call_key k = {.coll = a->coll, .in_place = d->spec.in_place, .scount = gv ? a->sc : 0,
                .rcount = (int)(d->spec.count & INT_MAX),
                .stype = gv ? a->st : MPI_DATATYPE_NULL, .rtype = a->rt,
                .op = gv ? MPI_OP_NULL : a->op, .chash = binding_chash(&d->spec), .counts = c,
                .displs = d->spec.displs};
  if (d->spec.in_place) k.stype = MPI_DATATYPE_NULL, k.scount = 0;
  return k;
}

/* Fill in d's spec from counted call a (validated here; vectors into c[],
 * dsp[]): MPI_SUCCESS or the error class. */
static int counted_spec(const vargs *a, dispatch_call *d, int64_t *c, int64_t *dsp) {
  int64_t total = 0, shift = 0;
  int p = d->spec.p, commute = 1, gv = a->coll == COLLC_COLL_ALLGATHERV, err;
  if ((err = vectors_in(a, p, c, gv ? dsp : NULL, &total, &shift))) return err;
  d->spec.counts = c, d->spec.displs = gv ? dsp : NULL, d->spec.count = total;
  if ((err = check(a, d))) return err;
  d->spec.unit_bytes = args_bytes(1, a->rt);
  if (!gv) PMPI_Op_commutative(a->op, &commute);
  d->spec.commutative = commute;
  if (shift) { /* the program's RECV starts at the lowest block */
    MPI_Aint lb, ext;
    PMPI_Type_get_extent(a->rt, &lb, &ext);
    d->vshift = (long long)(shift * ext), d->recvbuf = (char *)a->rb + d->vshift;
  }
  return MPI_SUCCESS;
}

/* Validate and run counted call a on comm with algorithm forced (NULL: the
 * selection), or with pa make its persistent or (oneshot) nonblocking
 * request; fast: a call of the default selection (the call cache). */
static int counted(const vargs *a, const char *forced, MPI_Comm comm, const persist_args *pa,
                   int fast) {
  int64_t c[VCOLL_MAXP], dsp[VCOLL_MAXP];
  char hint[256];
  int inter, p = 1, rank = 0, rc, gv = a->coll == COLLC_COLL_ALLGATHERV;
  int err = args_comm(comm, &inter);
  if (err) return collc_raise(MPI_COMM_NULL, err);
  PMPI_Comm_size(comm, &p);
  PMPI_Comm_rank(comm, &rank);
  dispatch_call d = {.spec = {.coll = a->coll, .p = p, .rank = rank, .in_place = a->sb == MPI_IN_PLACE},
                     .bind = {1, 1, gv ? a->st : a->rt, a->rt, gv ? MPI_OP_NULL : a->op},
                     .sendbuf = a->sb, .recvbuf = a->rb, .comm = comm,
                     .native = natives[a->coll], .inative = inatives[a->coll],
                     .vcounts = a->rc, .vdispls = a->displs, .vsendcount = a->sc};
  if ((err = dispatch_persist(&d, pa, hint, sizeof hint))) return collc_raise(comm, err);
  if (inter || p > VCOLL_MAXP) return dispatch_native(&d, 0);
  long long tot = fast && (!pa || pa->oneshot) && !config_get()->stats ? loose_total(a, p) : -1;
  call_key lk = vloose_key(a, tot), k;
  int loose = 0; /* (counts deciding nothing beyond their total: remembered by it) */
  if (tot >= 0) {
    if (dispatch_loose(&d, &lk, &rc) == FAST_DONE) return rc; /* (unvalidated: the library's) */
    loose = d.ck != NULL;
  }
  if ((err = counted_spec(a, &d, c, dsp))) return collc_raise(comm, err);
  if (tot >= 0 && !loose && select_native_by_total(&d.spec))
    d.ck = &lk, loose = 1; /* (rows of ours at p, none at this total: native by it) */
  long long bytes = (d.spec.count - c[rank]) * d.spec.unit_bytes; /* native estimate */
  if (fast && !loose) {
    k = counted_key(a, &d, c);
    if (counted_fast(&d, &k, &rc) == FAST_DONE) return rc;
    d.ck = &k;
  }
  if (!gv && !args_reducible(a->rt, a->op)) return dispatch_native(&d, bytes);
  if (gv && !d.spec.in_place && (a->st != a->rt || a->sc != a->rc[rank]) &&
      (err = own_block_first(&d))) {
    if (err != MPI_ERR_TYPE || !on_device(a->sb, a->rb)) return collc_raise(comm, err);
    stats_device(a->coll); /* (a device block collc cannot copy: the library's call) */
    return dispatch_native(&d, bytes);
  }
  return dispatch(&d, forced, bytes);
}

/* The arguments of an allgatherv and of a reduce_scatter. */
static vargs gv_args(const void *sb, int sc, MPI_Datatype st, void *rb, const int *rc,
                     const int *displs, MPI_Datatype rt) {
  return (vargs){COLLC_COLL_ALLGATHERV, sb, sc, st, rb, rc, displs, rt, MPI_OP_NULL};
}

static vargs rs_args(const void *sb, void *rb, const int *rc, MPI_Datatype t, MPI_Op op) {
  return (vargs){COLLC_COLL_REDUCE_SCATTER, sb, 0, MPI_DATATYPE_NULL, rb, rc, NULL, t, op};
}

int collc_allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                     const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                     MPI_Comm comm) {
  vargs a = gv_args(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
  return counted(&a, NULL, comm, NULL, 1);
}

int collc_allgatherv_algo(const char *algorithm, const void *sendbuf, int sendcount,
                          MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                          const int displs[], MPI_Datatype recvtype, MPI_Comm comm) {
  vargs a = gv_args(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return counted(&a, algorithm, comm, NULL, 0);
}

/* MPI_Allgatherv behind the memo (a miss): apart, so that the memo's hit
 * makes only its tail call. */
static __attribute__((noinline)) int allgatherv_slow(const void *sendbuf, int sendcount,
                                                     MPI_Datatype sendtype, void *recvbuf,
                                                     const int recvcounts[], const int displs[],
                                                     MPI_Datatype recvtype, MPI_Comm comm) {
  if (config_get()->disable)
    return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           comm);
  return collc_allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                          comm);
}

int MPI_Allgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                   MPI_Comm comm) {
  vargs a = gv_args(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
  if (hot_native(&a, comm, 0))
    return PMPI_Allgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                           comm);
  return allgatherv_slow(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype,
                         comm);
}

int collc_reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  vargs a = rs_args(sendbuf, recvbuf, recvcounts, datatype, op);
  return counted(&a, NULL, comm, NULL, 1);
}

int collc_reduce_scatter_algo(const char *algorithm, const void *sendbuf, void *recvbuf,
                              const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                              MPI_Comm comm) {
  vargs a = rs_args(sendbuf, recvbuf, recvcounts, datatype, op);
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return counted(&a, algorithm, comm, NULL, 0);
}

/* MPI_Reduce_scatter behind the memo (a miss), as allgatherv_slow. */
static __attribute__((noinline)) int rs_slow(const void *sendbuf, void *recvbuf,
                                             const int recvcounts[], MPI_Datatype datatype,
                                             MPI_Op op, MPI_Comm comm) {
  if (config_get()->disable)
    return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
  return collc_reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
}

int MPI_Reduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                       MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  vargs a = rs_args(sendbuf, recvbuf, recvcounts, datatype, op);
  if (hot_native(&a, comm, 0))
    return PMPI_Reduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm);
  return rs_slow(sendbuf, recvbuf, recvcounts, datatype, op, comm);
}

/* Nonblocking calls (MPI-3): a request of their own (nonblocking.c). */
int MPI_Iallgatherv(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    const int recvcounts[], const int displs[], MPI_Datatype recvtype,
                    MPI_Comm comm, MPI_Request *request) {
  vargs a = gv_args(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
  if ((request && hot_native(&a, comm, 1)) || config_get()->disable)
    return PMPI_Iallgatherv(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                            recvtype, comm, request);
  return counted(&a, NULL, comm, &(persist_args){.request = request, .oneshot = 1}, 1);
}

int MPI_Ireduce_scatter(const void *sendbuf, void *recvbuf, const int recvcounts[],
                        MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request) {
  vargs a = rs_args(sendbuf, recvbuf, recvcounts, datatype, op);
  if ((request && hot_native(&a, comm, 1)) || config_get()->disable)
    return PMPI_Ireduce_scatter(sendbuf, recvbuf, recvcounts, datatype, op, comm, request);
  return counted(&a, NULL, comm, &(persist_args){.request = request, .oneshot = 1}, 1);
}

int collc_iallgatherv_algo(const char *algorithm, const void *sendbuf, int sendcount,
                           MPI_Datatype sendtype, void *recvbuf, const int recvcounts[],
                           const int displs[], MPI_Datatype recvtype, MPI_Comm comm,
                           MPI_Request *request) {
  vargs a = gv_args(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return counted(&a, algorithm, comm, &(persist_args){.request = request, .oneshot = 1}, 0);
}

int collc_ireduce_scatter_algo(const char *algorithm, const void *sendbuf, void *recvbuf,
                               const int recvcounts[], MPI_Datatype datatype, MPI_Op op,
                               MPI_Comm comm, MPI_Request *request) {
  vargs a = rs_args(sendbuf, recvbuf, recvcounts, datatype, op);
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return counted(&a, algorithm, comm, &(persist_args){.request = request, .oneshot = 1}, 0);
}

/* Persistent inits (MPI-4; the request reads recvcounts and displs, which
 * MPI keeps unchanged while it exists, only where it is served natively). */
int MPI_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                        void *recvbuf, const int recvcounts[], const int displs[],
                        MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request) {
  vargs a = gv_args(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs, recvtype);
#ifdef PINIT
  if (config_get()->disable)
    return PINIT(Allgatherv)(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                             recvtype, comm, info, request);
#endif
  return counted(&a, NULL, comm, &(persist_args){.info = info, .request = request}, 0);
}

int MPI_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                            MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                            MPI_Request *request) {
  vargs a = rs_args(sendbuf, recvbuf, recvcounts, datatype, op);
#ifdef PINIT
  if (config_get()->disable)
    return PINIT(Reduce_scatter)(sendbuf, recvbuf, recvcounts, datatype, op, comm, info,
                                 request);
#endif
  return counted(&a, NULL, comm, &(persist_args){.info = info, .request = request}, 0);
}

#ifdef COLLC_MPIX_INIT
int MPIX_Allgatherv_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                         void *recvbuf, const int recvcounts[], const int displs[],
                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                         MPI_Request *request) {
  return MPI_Allgatherv_init(sendbuf, sendcount, sendtype, recvbuf, recvcounts, displs,
                             recvtype, comm, info, request);
}

int MPIX_Reduce_scatter_init(const void *sendbuf, void *recvbuf, const int recvcounts[],
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                             MPI_Request *request) {
  return MPI_Reduce_scatter_init(sendbuf, recvbuf, recvcounts, datatype, op, comm, info,
                                 request);
}
#endif
