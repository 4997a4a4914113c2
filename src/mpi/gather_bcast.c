/* gather_bcast.c - MPI_Allgather and MPI_Bcast over PMPI, and collc's entry
 * points for them. */
#include "collc.h"
#include "args.h"
#include "dispatch.h"
#include "../plan/config.h"

static int native_allgather(const dispatch_call *d) {
  return PMPI_Allgather(d->sendbuf, d->bind.sendcount, d->bind.sendtype, d->recvbuf,
                        d->bind.recvcount, d->bind.recvtype, d->comm);
}

static int native_bcast(const dispatch_call *d) {
  return PMPI_Bcast(d->recvbuf, (int)d->spec.count, d->bind.recvtype, d->spec.root, d->comm);
}

/* Validate and run one allgather with algorithm forced (NULL: selection). */
static int allgather(const char *forced, const void *sb, int sc, MPI_Datatype st, void *rb, int rc,
                     MPI_Datatype rt, MPI_Comm comm) {
  int inter, p = 1, rank = 0, err = args_comm(comm, &inter);
  if (err) return collc_raise(MPI_COMM_NULL, err);
  if (inter) {
    stats_add(COLLC_COLL_ALLGATHER, 0, 0);
    return PMPI_Allgather(sb, sc, st, rb, rc, rt, comm);
  }
  if ((err = args_pair(sb, sc, st, rb, rc, rt))) return collc_raise(comm, err);
  PMPI_Comm_size(comm, &p);
  PMPI_Comm_rank(comm, &rank);
  long long block = args_bytes(rc, rt);
  dispatch_call d = {.spec = {.coll = COLLC_COLL_ALLGATHER, .p = p, .rank = rank, .count = rc,
                              .unit_bytes = block, .in_place = sb == MPI_IN_PLACE},
                     .bind = {sc, rc, st, rt, MPI_OP_NULL},
                     .sendbuf = sb,
                     .recvbuf = rb,
                     .comm = comm,
                     .native = native_allgather};
  return dispatch(&d, forced, (p - 1) * block);
}

/* Validate and run one broadcast with algorithm forced (NULL: selection). */
static int bcast(const char *forced, void *buf, int n, MPI_Datatype t, int root, MPI_Comm comm) {
  int inter, p = 1, rank = 0, err = args_comm(comm, &inter);
  if (err) return collc_raise(MPI_COMM_NULL, err);
  if (inter) {
    stats_add(COLLC_COLL_BCAST, 0, 0);
    return PMPI_Bcast(buf, n, t, root, comm);
  }
  PMPI_Comm_size(comm, &p);
  PMPI_Comm_rank(comm, &rank);
  if ((err = args_count_type(n, t)) || (err = args_root(root, p)) ||
      (err = args_buffer(buf, n, t)))
    return collc_raise(comm, err);
  long long size = args_bytes(1, t);
  dispatch_call d = {.spec = {.coll = COLLC_COLL_BCAST, .p = p, .rank = rank, .count = n,
                              .unit_bytes = size, .in_place = 1, .root = root},
                     .bind = {1, 1, t, t, MPI_OP_NULL},
                     .sendbuf = NULL,
                     .recvbuf = buf,
                     .comm = comm,
                     .native = native_bcast};
  return dispatch(&d, forced, (long long)n * size);
}

int MPI_Allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                  int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  if (config_get()->disable)
    return PMPI_Allgather(sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
  return allgather(NULL, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int collc_allgather(const void *sendbuf, int sendcount, MPI_Datatype sendtype, void *recvbuf,
                    int recvcount, MPI_Datatype recvtype, MPI_Comm comm) {
  return allgather(NULL, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int collc_allgather_algo(const char *algorithm, const void *sendbuf, int sendcount,
                         MPI_Datatype sendtype, void *recvbuf, int recvcount,
                         MPI_Datatype recvtype, MPI_Comm comm) {
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return allgather(algorithm, sendbuf, sendcount, sendtype, recvbuf, recvcount, recvtype, comm);
}

int MPI_Bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  if (config_get()->disable) return PMPI_Bcast(buffer, count, datatype, root, comm);
  return bcast(NULL, buffer, count, datatype, root, comm);
}

int collc_bcast(void *buffer, int count, MPI_Datatype datatype, int root, MPI_Comm comm) {
  return bcast(NULL, buffer, count, datatype, root, comm);
}

int collc_bcast_algo(const char *algorithm, void *buffer, int count, MPI_Datatype datatype,
                     int root, MPI_Comm comm) {
  if (!algorithm) return collc_raise(comm, MPI_ERR_ARG);
  return bcast(algorithm, buffer, count, datatype, root, comm);
}
