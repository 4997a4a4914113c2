/* backend_mpi.c - the MPI and shared-memory backend (backend.h): messages
 * through PMPI, local data with memcpy and the typed kernels (local.c),
 * node flags in the segment (flag.c), remote reads by Cross Memory Attach
 * (cma.c). */
#include "backend.h"
#include "cma.h"
#include "batch_host.h"

#define TAG_SELF 0x7c12

static int mpi_send(const void *buf, int count, MPI_Datatype t, int peer, int tag, MPI_Comm comm,
                    MPI_Request *r) {
  return PMPI_Isend(buf, count, t, peer, tag, comm, r);
}

static int mpi_recv(void *buf, int count, MPI_Datatype t, int peer, int tag, MPI_Comm comm,
                    MPI_Request *r) {
  return PMPI_Irecv(buf, count, t, peer, tag, comm, r);
}

/* MPI_STATUSES_IGNORE: MPICH declares it (MPI_Status *)1 and annotates the
 * argument, which gcc mistakes for a zero-size buffer. */
static int mpi_complete(int n, MPI_Request *r, int blocking, int *done) {
  *done = 1;
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wstringop-overflow"
#endif
  return blocking ? PMPI_Waitall(n, r, MPI_STATUSES_IGNORE)
                  : PMPI_Testall(n, r, done, MPI_STATUSES_IGNORE);
#if defined(__GNUC__) && !defined(__clang__)
#pragma GCC diagnostic pop
#endif
}

static void mpi_cancel(MPI_Request *r) {
  PMPI_Cancel(r);
  PMPI_Request_free(r);
}

/* Always the nonblocking call (its WAIT completes it): ranks of one group
 * may run the plan blocking or polling, and MPI never matches a blocking
 * collective with a nonblocking one. */
static int mpi_group_alltoall(const void *s, MPI_Datatype st, void *d, MPI_Datatype dt,
                              MPI_Comm g, int blocking, MPI_Request *r) {
  (void)blocking;
  return PMPI_Ialltoall(s, 1, st, d, 1, dt, g, r);
}

/* A self send-receive: right for any pair of layouts of one signature. */
static int mpi_copy_typed(const void *s, int sc, MPI_Datatype st, void *d, int dc,
                          MPI_Datatype dt, int self, MPI_Comm comm) {
  return PMPI_Sendrecv(s, sc, st, self, TAG_SELF, d, dc, dt, self, TAG_SELF, comm,
                       MPI_STATUS_IGNORE);
}

static int mpi_error_class(int rc) {
  int cls = MPI_ERR_INTERN;
  PMPI_Error_class(rc, &cls);
  return cls;
}

const exec_backend exec_backend_mpi = {
    .name = "mpi",
    .send = mpi_send,
    .recv = mpi_recv,
    .complete = mpi_complete,
    .cancel = mpi_cancel,
    .group_alltoall = mpi_group_alltoall,
    .local = local_run,
    .copy_typed = mpi_copy_typed,
    .signal = flag_publish,
    .await = flag_wait,
    .remote_read = cma_read,
    .batch = batch_run_host,
    .error_class = mpi_error_class,
};
