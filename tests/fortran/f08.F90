! f08.F90 - an unmodified `use mpi_f08` program: body.inc's test.
#include "pinit.inc"
#define IS_F08 .true.
program f08
use mpi_f08
#ifdef COLLC_MPIX
use mpi_f08_ext
#endif
implicit none
type(MPI_Request) :: req(6), preq(6), bq
type(MPI_Status) :: st
type(MPI_Datatype) :: tb
#include "decl.inc"
call MPI_Init(ierr)
#include "body.inc"
contains
#include "check.inc"
#include "finish.inc"
end program
