! badargs.f90 - an unmodified `use mpi` program passing handles that name
! nothing: collc's Fortran entry points must return the error class in
! ierror (MPI_ERRORS_RETURN), never crash. (Open MPI 4.1's own bindings
! crash on the communicator: this test runs preloaded only.) COLLC_TEST_BREAK
! set: one expected class is wrong (the program must then fail).
program badargs
use mpi
implicit none
integer :: ierr, cls, i, x(2), y(2), rs(1), nbad, brk
character(len=32) :: env
call MPI_Init(ierr)
call get_environment_variable('COLLC_TEST_BREAK', env, status=i)
brk = 0
if (i == 0) brk = 1
nbad = 0
x = 1
call MPI_Comm_set_errhandler(MPI_COMM_WORLD, MPI_ERRORS_RETURN, ierr)
call MPI_Allreduce(x, y, 2, MPI_INTEGER, MPI_SUM, 987654, ierr)
call expect(MPI_ERR_COMM + brk, 'allreduce on an unknown communicator')
call MPI_Allreduce(x, y, 2, 987654, MPI_SUM, MPI_COMM_WORLD, ierr)
call expect(MPI_ERR_TYPE, 'allreduce of an unknown datatype')
call MPI_Bcast(x, -2, MPI_INTEGER, 0, MPI_COMM_WORLD, ierr)
call expect(MPI_ERR_COUNT, 'bcast count -2')
rs(1) = 987654
call MPI_Wait(rs(1), MPI_STATUS_IGNORE, ierr)
call expect(MPI_ERR_REQUEST, 'wait on an unknown request')
call MPI_Waitall(-1, rs, MPI_STATUSES_IGNORE, ierr)
call expect(MPI_ERR_COUNT, 'waitall count -1')
if (nbad > 0) call MPI_Abort(MPI_COMM_WORLD, 1, ierr)
print '(a)', 'fortran badargs test passed'
call MPI_Finalize(ierr)
contains
subroutine expect(want, what)
  integer, intent(in) :: want
  character(*), intent(in) :: what
  integer :: c, l
  c = -1
  if (ierr /= MPI_SUCCESS) call MPI_Error_class(ierr, c, l)
  if (c /= want) then
    print '(3a,i0,a,i0)', 'failed: ', what, ': class ', c, ', want ', want
    nbad = nbad + 1
  end if
end subroutine
end program
