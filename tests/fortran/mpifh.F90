! mpifh.F90 - an unmodified mpif.h program: body.inc's test.
#include "pinit.inc"
#define IS_F08 .false.
program mpifh
implicit none
include 'mpif.h'
integer :: req(6), preq(6), bq, st(MPI_STATUS_SIZE)
integer :: tb
#include "decl.inc"
call MPI_Init(ierr)
#include "body.inc"
contains
#include "check.inc"
#include "finish.inc"
end program
