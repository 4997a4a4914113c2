/* factorize.c - collc_comm_factorize: Träff's Listings 1-2.
 *
 * A periodic Cartesian communicator over comm (no reordering) and one
 * communicator per dimension (MPI_Cart_sub), cached in the communicator's
 * collc state; the state's delete callback frees them with the Cartesian
 * communicator. The dimension communicators are registered as group
 * families, so the torus all-to-all on this communicator (collc_alltoall_torus,
 * or MPI_Alltoall with COLLC_ALLTOALL=torus:<same dims>) splits nothing. */
#include <stdlib.h>
#include "collc.h"
#include "internal.h"

/* Error class of bad arguments, or MPI_SUCCESS. */
static int check_args(MPI_Comm comm, int d, const int order[], MPI_Comm *out, int *inter) {
  int size;
  if (comm == MPI_COMM_NULL || PMPI_Comm_test_inter(comm, inter) || *inter) return MPI_ERR_COMM;
  if (!out || (d > 0 && !order)) return MPI_ERR_ARG;
  if (d < 1 || d > COLLC_MAXF) return MPI_ERR_DIMS;
  PMPI_Comm_size(comm, &size);
  long long prod = 1;
  for (int i = 0; i < d; i++) {
    if (order[i] < 1) return MPI_ERR_DIMS;
    if ((prod *= order[i]) > size) return MPI_ERR_DIMS;
  }
  return prod == size ? MPI_SUCCESS : MPI_ERR_DIMS;
}

/* Create and register the d dimension communicators of cart. */
static int make_dims(MPI_Comm cart, int d, const int order[], collc_state *st) {
  int remain[COLLC_MAXF] = {0}, rc = MPI_SUCCESS, stride = 1;
  for (int i = d - 1; i >= 0 && !rc; stride *= order[i], i--) {
    MPI_Comm sub;
    remain[i] = 1;
    rc = PMPI_Cart_sub(cart, remain, &sub);
    remain[i] = 0;
    if (!rc) PMPI_Comm_set_errhandler(sub, MPI_ERRORS_RETURN);
    if (!rc && (rc = state_add_family(st, order[i], stride, sub))) PMPI_Comm_free(&sub);
  }
  return rc;
}

int collc_comm_factorize(MPI_Comm comm, int d, const int order[], MPI_Comm *factorcomm) {
  int inter = 0, rc = check_args(comm, d, order, factorcomm, &inter);
  if (rc) return collc_raise(comm, rc);
  int periods[COLLC_MAXF];
  for (int i = 0; i < d; i++) periods[i] = 1;
  if ((rc = PMPI_Cart_create(comm, d, order, periods, 0, factorcomm))) {
    int cls = MPI_ERR_INTERN;
    PMPI_Error_class(rc, &cls);
    return collc_raise(comm, cls);
  }
  collc_state *st = state_get(*factorcomm, 1);
  rc = st ? make_dims(*factorcomm, d, order, st) : MPI_ERR_NO_MEM;
  if (rc) {
    PMPI_Comm_free(factorcomm);
    return collc_raise(comm, rc);
  }
  st->torus_d = d;
  for (int i = 0; i < d; i++) st->torus_dims[i] = order[i];
  return MPI_SUCCESS;
}
