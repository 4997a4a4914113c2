! mixed.F90 - an unmodified `use mpi` program whose C half (mixed_c.c)
! makes and completes requests too: C's completed by Fortran, Fortran's by
! C, and a Fortran MPI_WAITALL over a C collective request and native
! point-to-point ones; 20 requests at once. Closed forms; COLLC_TEST_BREAK corrupts one result.
#ifdef COLLC_MPIX
#define P_ALLREDUCE_INIT MPIX_Allreduce_init
#else
#define P_ALLREDUCE_INIT MPI_Allreduce_init
#endif
program mixed
use mpi
use iso_c_binding, only: c_int
#ifdef COLLC_MPIX
use mpi_ext
#endif
implicit none
interface
  integer(c_int) function mixc_iallreduce(sb, rb, n) bind(C)
    import :: c_int
    integer(c_int) :: sb(*), rb(*), n
  end function
  integer(c_int) function mixc_allreduce_init(sb, rb, n) bind(C)
    import :: c_int
    integer(c_int) :: sb(*), rb(*), n
  end function
  integer(c_int) function mixc_wait(f) bind(C)
    import :: c_int
    integer(c_int) :: f
  end function
  integer(c_int) function mixc_start(f) bind(C)
    import :: c_int
    integer(c_int) :: f
  end function
  integer(c_int) function mixc_free(f) bind(C)
    import :: c_int
    integer(c_int) :: f
  end function
end interface
integer, parameter :: n = 4
integer :: rank, p, ierr, i, round, nbad, r(3), pq
integer :: sb(n), rb(n), want(n), tok(2), many(20), mb(n, 20), msts(MPI_STATUS_SIZE, 20)
integer :: idxs(20), outc, done
character(len=32) :: env
call MPI_Init(ierr)
call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
call MPI_Comm_size(MPI_COMM_WORLD, p, ierr)
nbad = 0
do i = 1, n
  sb(i) = 10 * rank + i
  want(i) = 10 * p * (p - 1) / 2 + p * i
end do

! Made in C, waited for in Fortran.
rb = 0
r(1) = mixc_iallreduce(sb, rb, n)
call MPI_Wait(r(1), MPI_STATUS_IGNORE, ierr)
call get_environment_variable('COLLC_TEST_BREAK', env, status=i)
if (i == 0 .and. rank == 0) rb(1) = rb(1) + 1
call check(r(1) == MPI_REQUEST_NULL .and. all(rb == want), 'C iallreduce, Fortran MPI_WAIT')

! Persistent, made in C, started and waited for in Fortran, freed in C.
pq = mixc_allreduce_init(sb, rb, n)
do round = 1, 2
  rb = 0
  call MPI_Start(pq, ierr)
  call MPI_Wait(pq, MPI_STATUS_IGNORE, ierr)
  call check(pq /= MPI_REQUEST_NULL .and. all(rb == want), 'C allreduce_init, Fortran start/wait')
end do
i = mixc_free(pq)
call check(i == MPI_SUCCESS .and. pq == MPI_REQUEST_NULL, 'C request_free')

! Made in Fortran, waited for in C.
rb = 0
call MPI_Iallreduce(sb, rb, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, r(1), ierr)
i = mixc_wait(r(1))
call check(i == MPI_SUCCESS .and. r(1) == MPI_REQUEST_NULL .and. all(rb == want), &
           'Fortran iallreduce, C MPI_Wait')

! Persistent, made in Fortran, started and waited for in C, freed in Fortran.
call P_ALLREDUCE_INIT(sb, rb, n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, MPI_INFO_NULL, pq, ierr)
do round = 1, 2
  rb = 0
  i = mixc_start(pq)
  i = i + mixc_wait(pq) ! (separate statements: .and. has no evaluation order)
  call check(i == MPI_SUCCESS .and. all(rb == want), 'Fortran allreduce_init, C start/wait')
end do
call MPI_Request_free(pq, ierr)
call check(pq == MPI_REQUEST_NULL, 'Fortran request_free')

! One Fortran MPI_WAITALL: a C collective request and native ones.
rb = 0
tok = -1
r(1) = mixc_iallreduce(sb, rb, n)
call MPI_Irecv(tok(1), 1, MPI_INTEGER, mod(rank + p - 1, p), 5, MPI_COMM_WORLD, r(2), ierr)
call MPI_Isend(rank, 1, MPI_INTEGER, mod(rank + 1, p), 5, MPI_COMM_WORLD, r(3), ierr)
call MPI_Waitall(3, r, MPI_STATUSES_IGNORE, ierr)
call check(all(r == MPI_REQUEST_NULL) .and. all(rb == want) .and. tok(1) == mod(rank + p - 1, p), &
           'Fortran waitall over C collective and native requests')

! More requests than the conversions hold on the stack (16): 20 nonblocking
! calls, completed by MPI_WAITSOME with statuses, then one MPI_WAITALL.
mb = 0
do i = 1, 20
  call MPI_Iallreduce(sb, mb(:, i), n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, many(i), ierr)
end do
done = 0
do while (done < 20)
  call MPI_Waitsome(20, many, outc, idxs, msts, ierr)
  if (outc == MPI_UNDEFINED .or. ierr /= MPI_SUCCESS) exit
  call check(all(idxs(1:outc) >= 1 .and. idxs(1:outc) <= 20), 'waitsome indices in 1..20')
  done = done + outc
end do
call check(done == 20 .and. all(many == MPI_REQUEST_NULL), 'waitsome: 20 requests completed')
do i = 1, 20
  call check(all(mb(:, i) == want), 'iallreduce of 20')
end do
do i = 1, 20
  call MPI_Iallreduce(sb, mb(:, i), n, MPI_INTEGER, MPI_SUM, MPI_COMM_WORLD, many(i), ierr)
end do
call MPI_Waitall(20, many, msts, ierr)
call check(ierr == MPI_SUCCESS .and. all(many == MPI_REQUEST_NULL), 'waitall of 20')

call finish('fortran mixed test')
contains
#include "finish.inc"
subroutine check(ok, what)
  logical, intent(in) :: ok
  character(*), intent(in) :: what
  if (.not. ok) then
    print '(a,i0,2a)', 'rank ', rank, ': failed: ', what
    nbad = nbad + 1
  end if
end subroutine
end program
