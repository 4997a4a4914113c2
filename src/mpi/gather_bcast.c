/* gather_bcast.c - MPI_Allgather and MPI_Bcast over PMPI, and collc's entry
 * points for them. */
#include "collc.h"
#include "args.h"
#include "dispatch.h"
#include "../plan/config.h"
#include "pinit.h"

static int native_allgather(const dispatch_call *d) {
  return PMPI_Allgather(d->sendbuf, d->bind.sendcount, d->bind.sendtype, d->recvbuf,
                        d->bind.recvcount, d->bind.recvtype, d->comm);
}

static int native_bcast(const dispatch_call *d) {
  return PMPI_Bcast(d->recvbuf, (int)d->spec.count, d->bind.recvtype, d->spec.root, d->comm);
}

static int inative_allgather(const dispatch_call *d, MPI_Request *r) {
  return PMPI_Iallgather(d->sendbuf, d->bind.sendcount, d->bind.sendtype, d->recvbuf,
                         d->bind.recvcount, d->bind.recvtype, d->comm, r);
}

static int inative_bcast(const dispatch_call *d, MPI_Request *r) {
  return PMPI_Ibcast(d->recvbuf, (int)d->spec.count, d->bind.recvtype, d->spec.root, d->comm, r);
}

/* Validate and run one allgather with algorithm forced (NULL: selection),
 * or with pa, make its persistent request. */
static int allgather(const char *forced, const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                     MPI_Datatype rt, MPI_Comm comm, const persist_args *pa) {
  pair_args a = {sb, sc, st, rb, rc, rt, NULL};
  return dispatch_pair(COLLC_COLL_ALLGATHER, forced, &a, comm, pa, native_allgather,
                       inative_allgather);
}

/* Validate and run one broadcast with algorithm forced (NULL: selection),
 * or with pa, make its persistent request. */
static int bcast(const char *forced, void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm,
                 const persist_args *pa, const call_key *ck) {
  char hint[256];
  int inter, p = 1, rank = 0, err = args_comm(comm, &inter);
  if (err) return collc_raise(MPI_COMM_NULL, err);
  PMPI_Comm_size(comm, &p);
  PMPI_Comm_rank(comm, &rank);
  long long size = 0; /* (set once the type is known to be valid) */
  dispatch_call d = {.spec = {.coll = COLLC_COLL_BCAST, .p = p, .rank = rank, .count = n,
                              .unit_bytes = size, .in_place = 1, .root = root},
                     .bind = {1, 1, t, t, MPI_OP_NULL},
                     .sendbuf = NULL,
                     .recvbuf = buf,
                     .comm = comm,
                     .native = native_bcast,
                     .inative = inative_bcast,
                     .ck = ck,
                     .ftext = ck ? forced : NULL};
  if ((err = dispatch_persist(&d, pa, hint, sizeof hint))) return collc_raise(comm, err);
  if (inter) return dispatch_native(&d, 0);
  if ((err = args_count_type(n, t)) || (err = args_root(root, p)) ||
      (err = args_buffer(buf, n, t)))
    return collc_raise(comm, err);
  d.spec.unit_bytes = size = args_bytes(1, t);
  return dispatch(&d, forced, (long long)n * size);
}

/* collc_allgather behind the memo (a tail call of the entry points). */
static __attribute__((noinline)) int allgather_slow(const void *sendbuf, int sendcount,
                                                  MPI_Datatype sendtype, void *recvbuf,
                                                  int recvcount, MPI_Datatype recvtype,
                                                  MPI_Comm comm) {
  pair_args a = {sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, NULL};
  return dispatch_pair_slow(COLLC_COLL_ALLGATHER, &a, comm, PMPI_Allgather, native_allgather, inative_allgather);
}

int collc_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return dispatch_pair_default(COLLC_COLL_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                               recvtype, comm, PMPI_Allgather, allgather_slow);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return dispatch_pair_default(COLLC_COLL_ALLGATHER, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                               recvtype, comm, PMPI_Allgather, allgather_slow);
}

int collc_allgather_algo(const char *algorithm, const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm) {
  pair_args a = {sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, NULL};
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return dispatch_pair_forced(COLLC_COLL_ALLGATHER, algorithm, &a, comm, PMPI_Allgather,
                              native_allgather, inative_allgather);
}

/* The call-cache key of a broadcast. */
COLLC_HOT call_key bcast_key(int count, MPI_Datatype datatype, int root) {
  return (call_key){.coll = COLLC_COLL_BCAST, .in_place = 1, .root = root, .rcount = count,
                    .stype = MPI_DATATYPE_NULL, .rtype = datatype, .op = MPI_OP_NULL};
}

/* collc_bcast behind the memo (a tail call of the entry points;
 * COLLC_DISABLE hands it to the library). */
static __attribute__((noinline)) int bcast_slow(void *buffer, int count, MPI_Datatype datatype,
                                                int root, MPI_Comm comm) {
  call_key k = bcast_key(count, datatype, root);
  int rc, how = dispatch_fast(comm, &k, NULL, buffer, &rc);
  if (how == FAST_DONE) return rc;
  if (how == FAST_NATIVE || config_get()->disable)
    return PMPI_Bcast(buffer, count, datatype, root, comm);
  return bcast(NULL, buffer, count, datatype, root, comm, NULL, &k);
}

/* The same, the memo first. */
COLLC_HOT int bcast_call(void *buffer, int count, MPI_Datatype datatype, int root,
                         MPI_Comm comm) {
  call_key k = bcast_key(count, datatype, root);
  int rc, how = dispatch_memo(comm, &k, NULL, buffer, &rc);
  if (how == FAST_NATIVE) return PMPI_Bcast(buffer, count, datatype, root, comm);
  if (how == FAST_DONE) return rc;
  return bcast_slow(buffer, count, datatype, root, comm);
}

int collc_bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return bcast_call(buffer, count, datatype, root, comm);
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return bcast_call(buffer, count, datatype, root, comm);
}

int collc_bcast_algo(const char *algorithm, void *buffer, int count, MPI_Datatype datatype,
                     int root, MPI_Comm comm) {
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  call_key k = bcast_key(count, datatype, root);
  int rc, how = dispatch_forced(comm, &k, algorithm, NULL, buffer, &rc);
  if (how == FAST_DONE) return rc;
  if (how == FAST_NATIVE) return PMPI_Bcast(buffer, count, datatype, root, comm);
  return bcast(algorithm, buffer, count, datatype, root, comm, NULL, &k);
}

int MPI_Iallgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
  pair_args a = {sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, NULL};
  return dispatch_ipair(COLLC_COLL_ALLGATHER, &a, comm, request, PMPI_Iallgather,
                        native_allgather, inative_allgather);
}

int MPI_Ibcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
               MPI_Request *request) {
  call_key k = bcast_key(count, datatype, root);
  int rc, how = nb_fast(comm, &k, NULL, buffer, request, &rc);
  if (how == FAST_NATIVE || (how == FAST_MISS && config_get()->disable))
    return PMPI_Ibcast(buffer, count, datatype, root, comm, request);
  if (how == FAST_DONE) return rc;
  return bcast(NULL, buffer, count, datatype, root, comm,
               &(persist_args){.request = request, .oneshot = 1}, &k);
}

int collc_iallgather_algo(const char *algorithm, const void *sendbuf, int sendcount,
                          MPI_Datatype sendtype, void *recvbuf, int recvcount,
                          MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return allgather(algorithm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                   &(persist_args){.request = request, .oneshot = 1});
}

int collc_ibcast_algo(const char *algorithm, void *buffer, int count, MPI_Datatype datatype,
                      int root, MPI_Comm comm, MPI_Request *request) {
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return bcast(algorithm, buffer, count, datatype, root, comm,
               &(persist_args){.request = request, .oneshot = 1}, NULL);
}

int MPI_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request) {
#ifdef PINIT
  if (config_get()->disable)
    return PINIT(Allgather)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                            info, request);
#endif
  return allgather(NULL, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                   &(persist_args){.info = info, .request = request});
}

int MPI_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                   MPI_Info info, MPI_Request *request) {
#ifdef PINIT
  if (config_get()->disable)
    return PINIT(Bcast)(buffer, count, datatype, root, comm, info, request);
#endif
  return bcast(NULL, buffer, count, datatype, root, comm, &(persist_args){.info = info, .request = request}, NULL);
}

#ifdef COLLC_MPIX_INIT
int MPIX_Allgather_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                        int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                        MPI_Request *request) {
  return MPI_Allgather_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                            info, request);
}

int MPIX_Bcast_init(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm,
                    MPI_Info info, MPI_Request *request) {
  return MPI_Bcast_init(buffer, count, datatype, root, comm, info, request);
}
#endif
