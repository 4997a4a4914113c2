/* mixed_c.c - the C half of mixed.F90: requests made in C and completed
 * from Fortran, and the other way round (handles through MPI_Request_c2f
 * and MPI_Request_f2c). Part of an unmodified program: no collc headers. */
#include <mpi.h>
#if MPI_VERSION < 4 && defined(OPEN_MPI)
#include <mpi-ext.h>
#define ALLREDUCE_INIT MPIX_Allreduce_init
#else
#define ALLREDUCE_INIT MPI_Allreduce_init
#endif

/* A nonblocking sum of n ints over MPI_COMM_WORLD; its Fortran handle. */
MPI_Fint mixc_iallreduce(const int *sb, int *rb, const int *n) {
  MPI_Request q = MPI_REQUEST_NULL;
  MPI_Iallreduce(sb, rb, *n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, &q);
  return MPI_Request_c2f(q);
}

/* A persistent sum of n ints over MPI_COMM_WORLD; its Fortran handle. */
MPI_Fint mixc_allreduce_init(const int *sb, int *rb, const int *n) {
  MPI_Request q = MPI_REQUEST_NULL;
  ALLREDUCE_INIT(sb, rb, *n, MPI_INT, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, &q);
  return MPI_Request_c2f(q);
}

/* Wait for Fortran request *f in C; *f gets the handle after (null for a
 * nonblocking call's). Returns the error code. */
int mixc_wait(MPI_Fint *f) {
  MPI_Request q = MPI_Request_f2c(*f);
  int rc = MPI_Wait(&q, MPI_STATUS_IGNORE);
  *f = MPI_Request_c2f(q);
  return rc;
}

/* Start Fortran persistent request f in C. */
int mixc_start(const MPI_Fint *f) {
  MPI_Request q = MPI_Request_f2c(*f);
  return MPI_Start(&q);
}

/* Free Fortran request *f in C. */
int mixc_free(MPI_Fint *f) {
  MPI_Request q = MPI_Request_f2c(*f);
  int rc = MPI_Request_free(&q);
  *f = MPI_Request_c2f(q);
  return rc;
}
