/* reduce.c - MPI_Allreduce, MPI_Reduce_scatter_block and MPI_Reduce over
 * PMPI, and collc's entry points for them. */
#include "collc.h"
#include "args.h"
#include "dispatch.h"
#include "../plan/config.h"
#include "pinit.h"

static int native_allreduce(const dispatch_call *d) {
  return PMPI_Allreduce(d->sendbuf, d->recvbuf, (int)d->spec.count, d->bind.recvtype, d->bind.op,
                        d->comm);
}

static int native_rsb(const dispatch_call *d) {
  return PMPI_Reduce_scatter_block(d->sendbuf, d->recvbuf, (int)d->spec.count, d->bind.recvtype,
                                   d->bind.op, d->comm);
}

static int native_reduce(const dispatch_call *d) {
  return PMPI_Reduce(d->sendbuf, d->recvbuf, (int)d->spec.count, d->bind.recvtype, d->bind.op,
                     d->spec.root, d->comm);
}

static int inative_allreduce(const dispatch_call *d, MPI_Request *r) {
  return PMPI_Iallreduce(d->sendbuf, d->recvbuf, (int)d->spec.count, d->bind.recvtype,
                         d->bind.op, d->comm, r);
}

static int inative_rsb(const dispatch_call *d, MPI_Request *r) {
  return PMPI_Ireduce_scatter_block(d->sendbuf, d->recvbuf, (int)d->spec.count,
                                    d->bind.recvtype, d->bind.op, d->comm, r);
}

static int inative_reduce(const dispatch_call *d, MPI_Request *r) {
  return PMPI_Ireduce(d->sendbuf, d->recvbuf, (int)d->spec.count, d->bind.recvtype, d->bind.op,
                      d->spec.root, d->comm, r);
}

/* MPI error class of bad reduction arguments (d filled in), or MPI_SUCCESS. */
static int check(const dispatch_call *d) {
  const collc_spec *s = &d->spec;
  int root_ok = s->coll != COLLC_COLL_REDUCE || s->rank == s->root, err;
  int n = (int)s->count, in_place = d->sendbuf == MPI_IN_PLACE;
  MPI_Datatype t = d->bind.recvtype;
  if ((err = args_count_type(n, t)) || (err = args_op(d->bind.op))) return err;
  if (s->coll == COLLC_COLL_REDUCE && (err = args_root(s->root, s->p))) return err;
  if (in_place && !root_ok) return MPI_ERR_BUFFER; /* MPI_IN_PLACE only at the root */
  int64_t in = s->coll == COLLC_COLL_REDUCE_SCATTER_BLOCK ? (int64_t)n * s->p : n;
  if (in > 0x7fffffff) return MPI_ERR_COUNT;
  if (root_ok && d->recvbuf == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  if (root_ok && (err = args_buffer(d->recvbuf, n, t))) return err;
  if (!in_place && (err = args_buffer(d->sendbuf, (int)in, t))) return err;
  if (!in_place && root_ok && n > 0 && d->sendbuf == d->recvbuf) return MPI_ERR_BUFFER;
  return MPI_SUCCESS;
}

/* Validate and run one reduction collective (coll) with algorithm forced,
 * or with pa, make its persistent request; ck: the call-cache key of a
 * blocking call of the default selection (else NULL). */
static int reduction(int coll, const char *forced, const void *sb, void *rb, int n,
                     MPI_Datatype t, MPI_Op op, int root, MPI_Comm comm,
                     const persist_args *pa, const call_key *ck) {
  static int (*const natives[COLLC_COLL_COUNT])(const dispatch_call *) = {
      [COLLC_COLL_ALLREDUCE] = native_allreduce,
      [COLLC_COLL_REDUCE_SCATTER_BLOCK] = native_rsb,
      [COLLC_COLL_REDUCE] = native_reduce};
  static int (*const inatives[COLLC_COLL_COUNT])(const dispatch_call *, MPI_Request *) = {
      [COLLC_COLL_ALLREDUCE] = inative_allreduce,
      [COLLC_COLL_REDUCE_SCATTER_BLOCK] = inative_rsb,
      [COLLC_COLL_REDUCE] = inative_reduce};
  char hint[256];
  int inter, p = 1, rank = 0, commute = 1, err = args_comm(comm, &inter);
  if (err) return collc_raise(MPI_COMM_NULL, err);
  PMPI_Comm_size(comm, &p);
  PMPI_Comm_rank(comm, &rank);
  dispatch_call d = {.spec = {.coll = coll, .p = p, .rank = rank, .count = n, .root = root},
                     .bind = {1, 1, t, t, op},
                     .sendbuf = sb,
                     .recvbuf = rb,
                     .comm = comm,
                     .native = natives[coll],
                     .inative = inatives[coll],
                     .ck = ck,
                     .ftext = ck ? forced : NULL};
  if ((err = dispatch_persist(&d, pa, hint, sizeof hint))) return collc_raise(comm, err);
  if (inter) return dispatch_native(&d, 0);
  if ((err = check(&d))) return collc_raise(comm, err);
  long long size = args_bytes(1, t);
  PMPI_Op_commutative(op, &commute);
  d.spec = spec_rank(&(collc_spec){.coll = coll, .p = p, .count = n, .unit_bytes = size,
                                   .in_place = sb == MPI_IN_PLACE, .root = root,
                                   .commutative = commute}, rank);
  long long bytes = (long long)n * size; /* native estimate (README) */
  if (coll == COLLC_COLL_ALLREDUCE) bytes = 2 * bytes * (p - 1) / p;
  if (coll == COLLC_COLL_REDUCE_SCATTER_BLOCK) bytes *= p - 1;
  if (!args_reducible(t, op)) return dispatch_native(&d, bytes); /* e.g. a type with holes */
  return dispatch(&d, forced, bytes);
}

/* The call-cache key of a reduction. */
COLLC_HOT call_key reduction_key(int coll, const void *sb, int n, MPI_Datatype t, MPI_Op op,
                              int root) {
  return (call_key){.coll = coll, .in_place = sb == MPI_IN_PLACE, .root = root, .rcount = n,
                    .stype = MPI_DATATYPE_NULL, .rtype = t, .op = op};
}

/* The PMPI_ call of reduction coll (root: a reduce's). */
COLLC_HOT int reduction_native(int coll, const void *sendbuf, void *recvbuf, int count,
                               MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) {
  if (coll == COLLC_COLL_ALLREDUCE)
    return PMPI_Allreduce(sendbuf, recvbuf, count, datatype, op, comm);
  if (coll == COLLC_COLL_REDUCE_SCATTER_BLOCK)
    return PMPI_Reduce_scatter_block(sendbuf, recvbuf, count, datatype, op, comm);
  return PMPI_Reduce(sendbuf, recvbuf, count, datatype, op, root, comm);
}

/* A blocking reduction of the default selection (collc_<coll>, MPI_<Coll>)
 * behind the memo: the call cache, else reduction(); COLLC_DISABLE hands it
 * to the library. */
COLLC_HOT int reduction_slow(int coll, const void *sendbuf, void *recvbuf, int count,
                             MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) {
  call_key k = reduction_key(coll, sendbuf, count, datatype, op, root);
  int rc, how = dispatch_fast(comm, &k, sendbuf, recvbuf, &rc);
  if (how == FAST_DONE) return rc;
  if (how == FAST_NATIVE || config_get()->disable)
    return reduction_native(coll, sendbuf, recvbuf, count, datatype, op, root, comm);
  return reduction(coll, NULL, sendbuf, recvbuf, count, datatype, op, root, comm, NULL, &k);
}

/* reduction_slow of each collective, with its entry point's arguments (so
 * the entry point's miss is a tail call). */
#define SLOW static __attribute__((noinline))
SLOW int allreduce_slow(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op,
                        MPI_Comm comm) {
  return reduction_slow(COLLC_COLL_ALLREDUCE, sb, rb, n, t, op, 0, comm);
}
SLOW int rsb_slow(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, MPI_Comm comm) {
  return reduction_slow(COLLC_COLL_REDUCE_SCATTER_BLOCK, sb, rb, n, t, op, 0, comm);
}
SLOW int reduce_slow(const void *sb, void *rb, int n, MPI_Datatype t, MPI_Op op, int root,
                     MPI_Comm comm) {
  return reduction_slow(COLLC_COLL_REDUCE, sb, rb, n, t, op, root, comm);
}
#undef SLOW

/* The same, the memo first. */
COLLC_HOT int reduction_call(int coll, const void *sendbuf, void *recvbuf, int count,
                             MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) {
  call_key k = reduction_key(coll, sendbuf, count, datatype, op, root);
  int rc, how = dispatch_memo(comm, &k, sendbuf, recvbuf, &rc);
  if (how == FAST_NATIVE)
    return reduction_native(coll, sendbuf, recvbuf, count, datatype, op, root, comm);
  if (how == FAST_DONE) return rc;
  if (coll == COLLC_COLL_ALLREDUCE)
    return allreduce_slow(sendbuf, recvbuf, count, datatype, op, comm);
  if (coll == COLLC_COLL_REDUCE_SCATTER_BLOCK)
    return rsb_slow(sendbuf, recvbuf, count, datatype, op, comm);
  return reduce_slow(sendbuf, recvbuf, count, datatype, op, root, comm);
}

int collc_allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, MPI_Comm comm) {
  return reduction_call(COLLC_COLL_ALLREDUCE, sendbuf, recvbuf, count, datatype, op, 0, comm);
}

int collc_reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                               MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return reduction_call(COLLC_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount, datatype,
                        op, 0, comm);
}

int collc_reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                 int root, MPI_Comm comm) {
  return reduction_call(COLLC_COLL_REDUCE, sendbuf, recvbuf, count, datatype, op, root, comm);
}

int MPI_Allreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                  MPI_Op op, MPI_Comm comm) {
  return reduction_call(COLLC_COLL_ALLREDUCE, sendbuf, recvbuf, count, datatype, op, 0, comm);
}

int MPI_Reduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                             MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return reduction_call(COLLC_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvbuf, recvcount, datatype,
                        op, 0, comm);
}

int MPI_Reduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
               int root, MPI_Comm comm) {
  return reduction_call(COLLC_COLL_REDUCE, sendbuf, recvbuf, count, datatype, op, root, comm);
}

/* A blocking reduction naming its algorithm: the forced-call cache, else
 * reduction(), which remembers it there. */
static int reduction_forced(int coll, const char *algorithm, const void *sendbuf, void *recvbuf,
                            int count, MPI_Datatype datatype, MPI_Op op, int root,
                            MPI_Comm comm) {
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  call_key k = reduction_key(coll, sendbuf, count, datatype, op, root);
  int rc, how = dispatch_forced(comm, &k, algorithm, sendbuf, recvbuf, &rc);
  if (how == FAST_DONE) return rc;
  if (how == FAST_NATIVE)
    return reduction_native(coll, sendbuf, recvbuf, count, datatype, op, root, comm);
  return reduction(coll, algorithm, sendbuf, recvbuf, count, datatype, op, root, comm, NULL, &k);
}

int collc_allreduce_algo(const char *algorithm, const void *sendbuf, void *recvbuf, int count,
                         MPI_Datatype datatype, MPI_Op op, MPI_Comm comm) {
  return reduction_forced(COLLC_COLL_ALLREDUCE, algorithm, sendbuf, recvbuf, count, datatype, op,
                          0, comm);
}

int collc_reduce_scatter_block_algo(const char *algorithm, const void *sendbuf, void *recvbuf,
                                    int recvcount, MPI_Datatype datatype, MPI_Op op,
                                    MPI_Comm comm) {
  return reduction_forced(COLLC_COLL_REDUCE_SCATTER_BLOCK, algorithm, sendbuf, recvbuf,
                          recvcount, datatype, op, 0, comm);
}

int collc_reduce_algo(const char *algorithm, const void *sendbuf, void *recvbuf, int count,
                      MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm) {
  return reduction_forced(COLLC_COLL_REDUCE, algorithm, sendbuf, recvbuf, count, datatype, op,
                          root, comm);
}

/* Nonblocking calls (MPI-3). */
int MPI_Iallreduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                   MPI_Op op, MPI_Comm comm, MPI_Request *request) {
  call_key k = reduction_key(COLLC_COLL_ALLREDUCE, sendbuf, count, datatype, op, 0);
  int rc, how = nb_fast(comm, &k, sendbuf, recvbuf, request, &rc);
  if (how == FAST_NATIVE || (how == FAST_MISS && config_get()->disable))
    return PMPI_Iallreduce(sendbuf, recvbuf, count, datatype, op, comm, request);
  if (how == FAST_DONE) return rc;
  return reduction(COLLC_COLL_ALLREDUCE, NULL, sendbuf, recvbuf, count, datatype, op, 0, comm,
                   &(persist_args){.request = request, .oneshot = 1}, &k);
}

int MPI_Ireduce_scatter_block(const void *sendbuf, void *recvbuf, int recvcount,
                              MPI_Datatype datatype, MPI_Op op, MPI_Comm comm,
                              MPI_Request *request) {
  call_key k = reduction_key(COLLC_COLL_REDUCE_SCATTER_BLOCK, sendbuf, recvcount, datatype, op, 0);
  int rc, how = nb_fast(comm, &k, sendbuf, recvbuf, request, &rc);
  if (how == FAST_NATIVE || (how == FAST_MISS && config_get()->disable))
    return PMPI_Ireduce_scatter_block(sendbuf, recvbuf, recvcount, datatype, op, comm, request);
  if (how == FAST_DONE) return rc;
  return reduction(COLLC_COLL_REDUCE_SCATTER_BLOCK, NULL, sendbuf, recvbuf, recvcount, datatype,
                   op, 0, comm, &(persist_args){.request = request, .oneshot = 1}, &k);
}

int MPI_Ireduce(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype, MPI_Op op,
                int root, MPI_Comm comm, MPI_Request *request) {
  call_key k = reduction_key(COLLC_COLL_REDUCE, sendbuf, count, datatype, op, root);
  int rc, how = nb_fast(comm, &k, sendbuf, recvbuf, request, &rc);
  if (how == FAST_NATIVE || (how == FAST_MISS && config_get()->disable))
    return PMPI_Ireduce(sendbuf, recvbuf, count, datatype, op, root, comm, request);
  if (how == FAST_DONE) return rc;
  return reduction(COLLC_COLL_REDUCE, NULL, sendbuf, recvbuf, count, datatype, op, root, comm,
                   &(persist_args){.request = request, .oneshot = 1}, &k);
}

int collc_iallreduce_algo(const char *algorithm, const void *sendbuf, void *recvbuf, int count,
                          MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Request *request) {
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return reduction(COLLC_COLL_ALLREDUCE, algorithm, sendbuf, recvbuf, count, datatype, op, 0,
                   comm, &(persist_args){.request = request, .oneshot = 1}, NULL);
}

int collc_ireduce_scatter_block_algo(const char *algorithm, const void *sendbuf, void *recvbuf,
                                     int recvcount, MPI_Datatype datatype, MPI_Op op,
                                     MPI_Comm comm, MPI_Request *request) {
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return reduction(COLLC_COLL_REDUCE_SCATTER_BLOCK, algorithm, sendbuf, recvbuf, recvcount,
                   datatype, op, 0, comm, &(persist_args){.request = request, .oneshot = 1},
                   NULL);
}

int collc_ireduce_algo(const char *algorithm, const void *sendbuf, void *recvbuf, int count,
                       MPI_Datatype datatype, MPI_Op op, int root, MPI_Comm comm,
                       MPI_Request *request) {
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return reduction(COLLC_COLL_REDUCE, algorithm, sendbuf, recvbuf, count, datatype, op, root,
                   comm, &(persist_args){.request = request, .oneshot = 1}, NULL);
}

/* Persistent inits (MPI-4). */
int MPI_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                       MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
#ifdef PINIT
  if (config_get()->disable)
    return PINIT(Allreduce)(sendbuf, recvbuf, count, datatype, op, comm, info, request);
#endif
  return reduction(COLLC_COLL_ALLREDUCE, NULL, sendbuf, recvbuf, count, datatype, op, 0, comm,
                   &(persist_args){.info = info, .request = request}, NULL);
}

int MPI_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                  MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                  MPI_Request *request) {
#ifdef PINIT
  if (config_get()->disable)
    return PINIT(Reduce_scatter_block)(sendbuf, recvbuf, recvcount, datatype, op, comm, info,
                                       request);
#endif
  return reduction(COLLC_COLL_REDUCE_SCATTER_BLOCK, NULL, sendbuf, recvbuf, recvcount, datatype,
                   op, 0, comm, &(persist_args){.info = info, .request = request}, NULL);
}

int MPI_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                    MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
#ifdef PINIT
  if (config_get()->disable)
    return PINIT(Reduce)(sendbuf, recvbuf, count, datatype, op, root, comm, info, request);
#endif
  return reduction(COLLC_COLL_REDUCE, NULL, sendbuf, recvbuf, count, datatype, op, root, comm,
                   &(persist_args){.info = info, .request = request}, NULL);
}

#ifdef COLLC_MPIX_INIT
int MPIX_Allreduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                        MPI_Op op, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
  return MPI_Allreduce_init(sendbuf, recvbuf, count, datatype, op, comm, info, request);
}

int MPIX_Reduce_scatter_block_init(const void *sendbuf, void *recvbuf, int recvcount,
                                   MPI_Datatype datatype, MPI_Op op, MPI_Comm comm, MPI_Info info,
                                   MPI_Request *request) {
  return MPI_Reduce_scatter_block_init(sendbuf, recvbuf, recvcount, datatype, op, comm, info,
                                       request);
}

int MPIX_Reduce_init(const void *sendbuf, void *recvbuf, int count, MPI_Datatype datatype,
                     MPI_Op op, int root, MPI_Comm comm, MPI_Info info, MPI_Request *request) {
  return MPI_Reduce_init(sendbuf, recvbuf, count, datatype, op, root, comm, info, request);
}
#endif
