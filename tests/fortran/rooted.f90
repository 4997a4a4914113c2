! rooted.f90 - an unmodified Fortran program (use mpi) calling MPI_GATHER,
! MPI_SCATTER, MPI_GATHERV, MPI_SCATTERV, MPI_IGATHER and MPI_ISCATTERV for
! every root, checked against closed forms: gather's block q holds
! q * 100 + i; scatter's rank r gets the root's block r; gatherv's and
! scatterv's rank q has q + 1 elements, at displacements in reverse rank
! order with a gap of one; then MPI_ALLTOALLV and MPI_IALLTOALLV (below).
! COLLC_TEST_BREAK set: one result is corrupted
! (the program must then fail). Exits nonzero on any failure.
program rooted
use mpi
implicit none
integer, parameter :: n = 3, pmax = 16
integer :: rank, p, ierr, root, i, q, nbad, req, brk, at
integer :: sb(n * pmax), rb(n * pmax), vb(pmax * pmax * 2), cnt(pmax), dsp(pmax), ab(pmax * 4)
character(len=8) :: env
call MPI_Init(ierr)
call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
call MPI_Comm_size(MPI_COMM_WORLD, p, ierr)
call get_environment_variable('COLLC_TEST_BREAK', env, status=i)
brk = 0
if (i == 0) brk = 1
if (p > pmax) call MPI_Abort(MPI_COMM_WORLD, 2, ierr)
nbad = 0
at = 0
do q = p - 1, 0, -1
  cnt(q + 1) = q + 1
  dsp(q + 1) = at
  at = at + q + 2
end do
do root = 0, p - 1
  do i = 1, n
    sb(i) = rank * 100 + i
  end do
  rb = -1
  call MPI_Gather(sb, n, MPI_INTEGER, rb, n, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
  if (brk == 1 .and. rank == root) rb(1) = rb(1) + 1
  if (rank == root) call want_gather()
  rb = -1
  call MPI_Igather(sb, n, MPI_INTEGER, rb, n, MPI_INTEGER, root, MPI_COMM_WORLD, req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  if (rank == root) call want_gather()
  do i = 1, n * p
    sb(i) = i + root
  end do
  rb = -1
  call MPI_Scatter(sb, n, MPI_INTEGER, rb, n, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
  do i = 1, n
    if (rb(i) /= rank * n + i + root .or. ierr /= MPI_SUCCESS) nbad = nbad + 1
  end do
  do i = 1, rank + 1
    sb(i) = rank * 100 + i
  end do
  vb = -1
  call MPI_Gatherv(sb, rank + 1, MPI_INTEGER, vb, cnt, dsp, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
  if (rank == root) then
    do q = 0, p - 1
      do i = 1, q + 1
        if (vb(dsp(q + 1) + i) /= q * 100 + i) nbad = nbad + 1
      end do
    end do
  end if
  do i = 1, size(vb)
    vb(i) = i * 7 + root
  end do
  rb = -1
  call MPI_Iscatterv(vb, cnt, dsp, MPI_INTEGER, rb, rank + 1, MPI_INTEGER, root, MPI_COMM_WORLD, &
                     req, ierr)
  call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  do i = 1, rank + 1
    if (rb(i) /= (dsp(rank + 1) + i) * 7 + root) nbad = nbad + 1
  end do
  rb = -1
  call MPI_Scatterv(vb, cnt, dsp, MPI_INTEGER, rb, rank + 1, MPI_INTEGER, root, MPI_COMM_WORLD, ierr)
  do i = 1, rank + 1
    if (rb(i) /= (dsp(rank + 1) + i) * 7 + root) nbad = nbad + 1
  end do
end do
! MPI_ALLTOALLV and MPI_IALLTOALLV: rank r sends rank q mod(q + r, 3) + 1
! elements r * 1000 + q * 10 + i (so it receives as many from q), blocks
! with a gap of one, in reverse rank order; against the closed form.
at = 0
do q = p - 1, 0, -1
  cnt(q + 1) = mod(q + rank, 3) + 1
  dsp(q + 1) = at
  at = at + cnt(q + 1) + 1
end do
do q = 0, p - 1
  do i = 1, cnt(q + 1)
    ab(dsp(q + 1) + i) = rank * 1000 + q * 10 + i
  end do
end do
do i = 0, 1
  vb = -1
  if (i == 0) call MPI_Alltoallv(ab, cnt, dsp, MPI_INTEGER, vb, cnt, dsp, MPI_INTEGER, &
                                 MPI_COMM_WORLD, ierr)
  if (i == 1) call MPI_Ialltoallv(ab, cnt, dsp, MPI_INTEGER, vb, cnt, dsp, MPI_INTEGER, &
                                  MPI_COMM_WORLD, req, ierr)
  if (i == 1) call MPI_Wait(req, MPI_STATUS_IGNORE, ierr)
  if (brk == 1 .and. rank == 0 .and. i == 1) vb(dsp(1) + 1) = -7
  do q = 0, p - 1
    do at = 1, cnt(q + 1)
      if (vb(dsp(q + 1) + at) /= q * 1000 + rank * 10 + at) nbad = nbad + 1
    end do
  end do
end do
call finish('fortran rooted test')
contains
include 'finish.inc'
  subroutine want_gather()
    integer :: qq, ii
    do qq = 0, p - 1
      do ii = 1, n
        if (rb(qq * n + ii) /= qq * 100 + ii) nbad = nbad + 1
      end do
    end do
  end subroutine
end program
