! f08.F90 - an unmodified `use mpi_f08` program: body.inc's test.
#ifdef COLLC_MPIX
#define P_ALLREDUCE_INIT MPIX_Allreduce_init
#define P_REDUCE_SCATTER_BLOCK_INIT MPIX_Reduce_scatter_block_init
#define P_REDUCE_INIT MPIX_Reduce_init
#define P_ALLGATHER_INIT MPIX_Allgather_init
#define P_ALLTOALL_INIT MPIX_Alltoall_init
#define P_BCAST_INIT MPIX_Bcast_init
#else
#define P_ALLREDUCE_INIT MPI_Allreduce_init
#define P_REDUCE_SCATTER_BLOCK_INIT MPI_Reduce_scatter_block_init
#define P_REDUCE_INIT MPI_Reduce_init
#define P_ALLGATHER_INIT MPI_Allgather_init
#define P_ALLTOALL_INIT MPI_Alltoall_init
#define P_BCAST_INIT MPI_Bcast_init
#endif
#define IS_F08 .true.
program f08
use mpi_f08
#ifdef COLLC_MPIX
use mpi_f08_ext
#endif
implicit none
type(MPI_Request) :: req(6), preq(6)
type(MPI_Status) :: st
type(MPI_Datatype) :: tb
#include "decl.inc"
call MPI_Init(ierr)
#include "body.inc"
contains
#include "check.inc"
end program
