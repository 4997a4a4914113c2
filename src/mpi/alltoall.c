/* alltoall.c - MPI_Alltoall over PMPI and collc's all-to-all entry points. */
#include <string.h>
#include "collc.h"
#include "dispatch.h"
#include "../plan/config.h"

/* MPI error class of bad MPI_Alltoall arguments, or MPI_SUCCESS. */
static int check_args(const void *sb, int sc, MPI_Datatype st, const void *rb, int rc,
                      MPI_Datatype rt) {
  int in_place = sb == MPI_IN_PLACE, ssize = 0, rsize = 0;
  if (rc < 0 || (!in_place && sc < 0)) return MPI_ERR_COUNT;
  if (rt == MPI_DATATYPE_NULL || (!in_place && st == MPI_DATATYPE_NULL)) return MPI_ERR_TYPE;
  if (rb == MPI_IN_PLACE) return MPI_ERR_BUFFER;
  if (PMPI_Type_size(rt, &rsize) || (!in_place && PMPI_Type_size(st, &ssize)))
    return MPI_ERR_TYPE;
  long long rbytes = (long long)rc * rsize, sbytes = (long long)sc * ssize;
  if (!in_place && sbytes != rbytes) return sbytes > rbytes ? MPI_ERR_TRUNCATE : MPI_ERR_ARG;
  if (rbytes && !rb && exec_type_dense(rt)) return MPI_ERR_BUFFER;
  if (!in_place && sbytes && !sb && exec_type_dense(st)) return MPI_ERR_BUFFER;
  if (!in_place && rbytes && sb == rb) return MPI_ERR_BUFFER;
  return MPI_SUCCESS;
}

static int native_alltoall(const dispatch_call *d) {
  return PMPI_Alltoall(d->sendbuf, d->bind.sendcount, d->bind.sendtype, d->recvbuf,
                       d->bind.recvcount, d->bind.recvtype, d->comm);
}

/* Validate and run one all-to-all with algorithm forced (NULL: selection). */
static int alltoall(const char *forced, const void *sb, int sc, MPI_Datatype st, void *rb,
                    int rc, MPI_Datatype rt, MPI_Comm comm) {
  int inter = 0, p, rank, rsize, err;
  if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, &inter) != MPI_SUCCESS)
    return collc_raise(MPI_COMM_NULL, MPI_ERR_COMM);
  if (inter) {
    stats_add(COLLC_COLL_ALLTOALL, 0, 0);
    return PMPI_Alltoall(sb, sc, st, rb, rc, rt, comm);
  }
  if ((err = check_args(sb, sc, st, rb, rc, rt))) return collc_raise(comm, err);
  PMPI_Comm_size(comm, &p);
  PMPI_Comm_rank(comm, &rank);
  PMPI_Type_size(rt, &rsize);
  long long block = (long long)rc * rsize;
  dispatch_call d = {.spec = {.coll = COLLC_COLL_ALLTOALL, .p = p, .rank = rank, .count = rc,
                              .unit_bytes = block, .in_place = sb == MPI_IN_PLACE},
                     .bind = {sc, rc, st, rt},
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
