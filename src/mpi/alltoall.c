/* alltoall.c - MPI_Alltoall over PMPI and collc's all-to-all entry points. */
#include <string.h>
#include "collc.h"
#include "dispatch.h"
#include "../plan/config.h"
#include "pinit.h"

static int native_alltoall(const dispatch_call *d) {
  return PMPI_Alltoall(d->sendbuf, d->bind.sendcount, d->bind.sendtype, d->recvbuf,
                       d->bind.recvcount, d->bind.recvtype, d->comm);
}

static int inative_alltoall(const dispatch_call *d, MPI_Request *r) {
  return PMPI_Ialltoall(d->sendbuf, d->bind.sendcount, d->bind.sendtype, d->recvbuf,
                        d->bind.recvcount, d->bind.recvtype, d->comm, r);
}

/* Validate and run one all-to-all with algorithm forced (NULL: selection),
 * or with pa, make its persistent request. */
static int alltoall(const char *forced, const void *sb, int sc, MPI_Datatype st, void *rb,
                    int rc, MPI_Datatype rt, MPI_Comm comm, const persist_args *pa) {
  pair_args a = {sb, sc, st, rb, rc, rt, NULL};
  return dispatch_pair(COLLC_COLL_ALLTOALL, forced, &a, comm, pa, native_alltoall,
                       inative_alltoall);
}

/* collc_alltoall behind the memo (a tail call of the entry points). */
static __attribute__((noinline)) int alltoall_slow(const void *sendbuf, int sendcount,
                                                  MPI_Datatype sendtype, void *recvbuf,
                                                  int recvcount, MPI_Datatype recvtype,
                                                  MPI_Comm comm) {
  pair_args a = {sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, NULL};
  return dispatch_pair_slow(COLLC_COLL_ALLTOALL, &a, comm, PMPI_Alltoall, native_alltoall, inative_alltoall);
}

int collc_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return dispatch_pair_default(COLLC_COLL_ALLTOALL, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                               recvtype, comm, PMPI_Alltoall, alltoall_slow);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return dispatch_pair_default(COLLC_COLL_ALLTOALL, sendbuf, sendcount, sendtype, recvbuf, recvcount,
                               recvtype, comm, PMPI_Alltoall, alltoall_slow);
}

int collc_alltoall_algo(const char *algorithm, const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm) {
  pair_args a = {sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, NULL};
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return dispatch_pair_forced(COLLC_COLL_ALLTOALL, algorithm, &a, comm, PMPI_Alltoall,
                              native_alltoall, inative_alltoall);
}

int collc_alltoall_torus(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                         void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  collc_state *st = comm == MPI_COMM_NULL ? NULL : state_get(comm, 0);
  char text[COLLC_MAXF * 12 + 32] = "torus:";
  size_t at = strlen(text);
  if (!st || !st->torus_d) /* not factorised: the default all-to-all */
    return alltoall(NULL, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL);
  for (int i = 0; i < st->torus_d; i++)
    at += (size_t)snprintf(text + at, sizeof text - at, "%s%d", i ? "x" : "", st->torus_dims[i]);
  snprintf(text + at, sizeof text - at, ":native");
  return alltoall(text, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, NULL);
}

int MPI_Ialltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
  pair_args a = {sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, NULL};
  return dispatch_ipair(COLLC_COLL_ALLTOALL, &a, comm, request, PMPI_Ialltoall, native_alltoall,
                        inative_alltoall);
}

int collc_ialltoall_algo(const char *algorithm, const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm, MPI_Request *request) {
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return alltoall(algorithm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                  &(persist_args){.request = request, .oneshot = 1});
}

int MPI_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                      int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                      MPI_Request *request) {
#ifdef PINIT
  if (config_get()->disable)
    return PINIT(Alltoall)(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info,
                           request);
#endif
  return alltoall(NULL, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm,
                  &(persist_args){.info = info, .request = request});
}

#ifdef COLLC_MPIX_INIT
int MPIX_Alltoall_init(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                       int recvcount, MPI_Datatype recvtype, MPI_Comm comm, MPI_Info info,
                       MPI_Request *request) {
  return MPI_Alltoall_init(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm, info,
                           request);
}
#endif
