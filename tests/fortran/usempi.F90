! usempi.F90 - an unmodified `use mpi` program: body.inc's test.
#include "pinit.inc"
#define IS_F08 .false.
program usempi
use mpi
#ifdef COLLC_MPIX
use mpi_ext
#endif
implicit none
integer :: req(6), preq(6), bq, st(MPI_STATUS_SIZE), provided
integer :: tb
#include "decl.inc"
call MPI_Init_thread(MPI_THREAD_SINGLE, provided, ierr)
#include "body.inc"
contains
#include "check.inc"
#include "finish.inc"
end program
