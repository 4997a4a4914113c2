! nothing.f90 - an unmodified Fortran program that calls no collective:
! with COLLC_STATS=1 collc must still say so at MPI_FINALIZE (a line
! "collc-stats: no collective served by collc"), however the library's
! MPI_FINALIZE reaches MPI (Open MPI's calls PMPI_Finalize).
program nothing
use mpi_f08
implicit none
integer :: rank
call MPI_Init()
call MPI_Comm_rank(MPI_COMM_WORLD, rank)
if (rank == 0) print '(a)', 'fortran nothing test passed'
call MPI_Finalize()
end program
