/* alltoall.c - MPI_Alltoall over PMPI and collc's all-to-all entry points. */
#include <string.h>
#include "collc.h"
#include "args.h"
#include "dispatch.h"
#include "../plan/config.h"

static int native_alltoall(const dispatch_call *d) {
  return PMPI_Alltoall(d->sendbuf, d->bind.sendcount, d->bind.sendtype, d->recvbuf,
                       d->bind.recvcount, d->bind.recvtype, d->comm);
}

/* Validate and run one all-to-all with algorithm forced (NULL: selection). */
static int alltoall(const char *forced, const void *sb, int sc, MPI_Datatype st, void *rb,
                    int rc, MPI_Datatype rt, MPI_Comm comm) {
  int inter, p, rank, err = args_comm(comm, &inter);
  if (err) return collc_raise(MPI_COMM_NULL, err);
  if (inter) {
    stats_add(COLLC_COLL_ALLTOALL, 0, 0);
    return PMPI_Alltoall(sb, sc, st, rb, rc, rt, comm);
  }
  if ((err = args_pair(sb, sc, st, rb, rc, rt))) return collc_raise(comm, err);
  PMPI_Comm_size(comm, &p);
  PMPI_Comm_rank(comm, &rank);
  long long block = args_bytes(rc, rt);
  dispatch_call d = {.spec = {.coll = COLLC_COLL_ALLTOALL, .p = p, .rank = rank, .count = rc,
                              .unit_bytes = block, .in_place = sb == MPI_IN_PLACE},
                     .bind = {sc, rc, st, rt, MPI_OP_NULL},
                     .sendbuf = sb,
                     .recvbuf = rb,
                     .comm = comm,
                     .native = native_alltoall};
  return dispatch(&d, forced, (p - 1) * block);
}

int MPI_Alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                 int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (config_get()->disable)
    return PMPI_Alltoall(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return alltoall(NULL, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int collc_alltoall(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                   int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return alltoall(NULL, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int collc_alltoall_algo(const char *algorithm, const void *sendbuf, int sendcount,
                        MPI_Datatype sendtype, void *recvbuf, int recvcount,
                        MPI_Datatype recvtype, MPI_Comm comm) {
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return alltoall(algorithm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int collc_alltoall_torus(const void *sendbuf, int sendcount, MPI_Datatype sendtype,
                         void *recvbuf, int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  collc_state *st = comm == MPI_COMM_NULL ? NULL : state_get(comm, 0);
  char text[COLLC_MAXF * 12 + 32] = "torus:";
  size_t at = strlen(text);
  if (!st || !st->torus_d) /* not factorised: the default all-to-all */
    return alltoall(NULL, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  for (int i = 0; i < st->torus_d; i++)
    at += (size_t)snprintf(text + at, sizeof text - at, "%s%d", i ? "x" : "", st->torus_dims[i]);
  snprintf(text + at, sizeof text - at, ":native");
  return alltoall(text, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}
