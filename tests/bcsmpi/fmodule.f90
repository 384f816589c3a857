! fmodule.f90 — `use mpi` in free form (tests/bcsmpi/test_jobs.py, test
! "fortran"): Allreduce of double arrays (MPI_SUM, MPI_IN_PLACE, a user
! operation written in Fortran), Bcast, Comm_split, non-blocking
! point-to-point with Waitall and MPI_STATUSES_IGNORE, Wtime,
! Get_processor_name, Comm_get_attr of MPI_TAG_UB, info strings, keyvals
! and an error handler with Fortran callbacks, and a derived type:
! a row of a column-major matrix (Type_vector), and a struct of separate
! variables sent from MPI_BOTTOM.  Prints "fmodule: all passed on N
! ranks" from rank 0.
module checks
  use mpi
  implicit none
contains
  subroutine check(cond, what)
    logical, intent(in) :: cond
    character(len=*), intent(in) :: what
    integer :: ierr, rank
    if (.not. cond) then
      call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
      print '(A,I0,A,A)', 'rank ', rank, ': ', what
      call mpi_abort(MPI_COMM_WORLD, 3, ierr)
    end if
  end subroutine check
end module checks

! the maximum of absolute values, elementwise (a user operation)
subroutine absmax(invec, inoutvec, n, datatype)
  implicit none
  integer :: n, datatype, i
  double precision :: invec(n), inoutvec(n)
  do i = 1, n
    inoutvec(i) = max(abs(invec(i)), abs(inoutvec(i)))
  end do
end subroutine absmax

! a keyval's copy and delete callbacks, counted in a module's variables
module counters
  implicit none
  integer :: copies = 0, deletes = 0, handled = 0, handled_code = 0
end module counters

subroutine copy_plus_one(oldcomm, keyval, extra, valin, valout, flag, ierr)
  use mpi
  use counters
  implicit none
  integer :: oldcomm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: extra, valin, valout
  logical :: flag
  copies = copies + 1
  valout = valin + extra
  flag = .true.
  ierr = MPI_SUCCESS
end subroutine copy_plus_one

subroutine count_delete(comm, keyval, val, extra, ierr)
  use mpi
  use counters
  implicit none
  integer :: comm, keyval, ierr
  integer(kind=MPI_ADDRESS_KIND) :: val, extra
  deletes = deletes + 1
  ierr = MPI_SUCCESS
end subroutine count_delete

subroutine on_error(comm, code)
  use counters
  implicit none
  integer :: comm, code
  handled = handled + 1
  handled_code = code
end subroutine on_error

program fmodule
  use mpi
  use checks
  implicit none
  external absmax
  integer :: ierr, rank, nproc, i, j, half, hrank, hsize, op, rowtype
  integer :: reqs(2), len, structtype
  integer :: blocks(2), types(2)
  integer(kind=MPI_ADDRESS_KIND) :: disps(2), tag_ub
  double precision :: v(4), w(4), t0, m(3, 4), row(4), x, xr
  integer :: a, ar, next, prev
  character(len=MPI_MAX_PROCESSOR_NAME) :: host
  character(len=32) :: value
  integer :: info
  logical :: flag

  call mpi_init(ierr)
  call mpi_comm_rank(MPI_COMM_WORLD, rank, ierr)
  call mpi_comm_size(MPI_COMM_WORLD, nproc, ierr)
  t0 = mpi_wtime()
  next = mod(rank + 1, nproc)
  prev = mod(rank + nproc - 1, nproc)

  do i = 1, 4
    v(i) = rank + i
  end do
  call mpi_allreduce(v, w, 4, MPI_DOUBLE_PRECISION, MPI_SUM, &
                     MPI_COMM_WORLD, ierr)
  do i = 1, 4
    call check(w(i) == nproc * i + nproc * (nproc - 1) / 2.0d0, &
               'allreduce sum')
  end do
  call mpi_allreduce(MPI_IN_PLACE, v, 4, MPI_DOUBLE_PRECISION, MPI_MAX, &
                     MPI_COMM_WORLD, ierr)
  call check(v(4) == nproc - 1 + 4, 'allreduce in place')
  ! a user operation in Fortran
  call mpi_op_create(absmax, .true., op, ierr)
  x = -(rank + 1.5d0)
  call mpi_allreduce(x, xr, 1, MPI_DOUBLE_PRECISION, op, &
                     MPI_COMM_WORLD, ierr)
  ! one rank: no operation, its own value
  call check(abs(xr) == nproc + 0.5d0, 'user operation')
  call mpi_op_free(op, ierr)
  if (rank == 0) print '(A)', 'ok reductions'

  a = -1
  if (rank == nproc - 1) a = 77
  call mpi_bcast(a, 1, MPI_INTEGER, nproc - 1, MPI_COMM_WORLD, ierr)
  call check(a == 77, 'bcast')
  call mpi_comm_split(MPI_COMM_WORLD, mod(rank, 2), rank, half, ierr)
  call mpi_comm_rank(half, hrank, ierr)
  call mpi_comm_size(half, hsize, ierr)
  call check(hrank == rank / 2, 'split rank')
  call mpi_comm_free(half, ierr)
  call mpi_irecv(ar, 1, MPI_INTEGER, prev, 4, MPI_COMM_WORLD, reqs(1), ierr)
  call mpi_isend(rank, 1, MPI_INTEGER, next, 4, MPI_COMM_WORLD, reqs(2), &
                 ierr)
  call mpi_waitall(2, reqs, MPI_STATUSES_IGNORE, ierr)
  call check(ar == prev, 'isend/irecv')
  call mpi_get_processor_name(host, len, ierr)
  call check(len > 0 .and. len <= MPI_MAX_PROCESSOR_NAME, 'processor name')
  call check(host(len+1:) == ' ', 'processor name blank padded')
  call mpi_comm_get_attr(MPI_COMM_WORLD, MPI_TAG_UB, tag_ub, flag, ierr)
  call check(flag .and. tag_ub >= 32767, 'MPI_TAG_UB')
  if (rank == 0) print '(A)', 'ok communication'

  ! a row of a column-major 3 x 4 matrix: 4 elements, stride 3
  do j = 1, 4
    do i = 1, 3
      m(i, j) = rank * 100 + i * 10 + j
    end do
  end do
  call mpi_type_vector(4, 1, 3, MPI_DOUBLE_PRECISION, rowtype, ierr)
  call mpi_type_commit(rowtype, ierr)
  call mpi_sendrecv(m(2, 1), 1, rowtype, next, 5, row, 4, &
                    MPI_DOUBLE_PRECISION, prev, 5, MPI_COMM_WORLD, &
                    MPI_STATUS_IGNORE, ierr)
  do j = 1, 4
    call check(row(j) == prev * 100 + 20 + j, 'matrix row')
  end do
  call mpi_type_free(rowtype, ierr)
  ! a struct of two separate variables, from MPI_BOTTOM
  a = rank + 1000
  x = rank + 0.25d0
  call mpi_get_address(a, disps(1), ierr)
  call mpi_get_address(x, disps(2), ierr)
  blocks = 1
  types(1) = MPI_INTEGER
  types(2) = MPI_DOUBLE_PRECISION
  call mpi_type_create_struct(2, blocks, disps, types, structtype, ierr)
  call mpi_type_commit(structtype, ierr)
  call mpi_sendrecv(MPI_BOTTOM, 1, structtype, next, 6, v, 12, &
                    MPI_BYTE, prev, 6, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
  call mpi_type_free(structtype, ierr)
  call check(mpi_aint_diff(disps(2), disps(1)) == disps(2) - disps(1) .and. &
             mpi_aint_add(disps(1), 8_MPI_ADDRESS_KIND) == disps(1) + 8, &
             'aint_add/diff')
  call check(transfer(v(1), a) == prev + 1000, 'struct from MPI_BOTTOM')
  if (rank == 0) print '(A)', 'ok datatypes'

  ! info objects: strings both ways
  call mpi_info_create(info, ierr)
  call mpi_info_set(info, 'cb_nodes', '8', ierr)
  call mpi_info_get(info, 'cb_nodes', 16, value, flag, ierr)
  call check(flag .and. value == '8', 'info get')
  call mpi_info_get_nthkey(info, 0, value, ierr)
  call check(value == 'cb_nodes', 'info nthkey')
  call mpi_info_free(info, ierr)
  if (rank == 0) print '(A)', 'ok info'

  ! keyvals with Fortran callbacks, and the predefined ones
  call test_keyvals()
  if (rank == 0) print '(A)', 'ok callbacks'

  call check(mpi_wtime() >= t0, 'wtime')
  if (rank == 0) print '(A,I0,A)', 'fmodule: all passed on ', nproc, ' ranks'
  call mpi_finalize(ierr)
contains
  subroutine test_keyvals()
    use counters
    external copy_plus_one, count_delete, on_error
    integer :: key, key2, dup1, dup2, eh, err, ierr2, x
    integer(kind=MPI_ADDRESS_KIND) :: val, extra
    logical :: flag2
    extra = 10
    call mpi_comm_create_keyval(copy_plus_one, count_delete, key, extra, &
                                ierr2)
    call mpi_comm_create_keyval(MPI_COMM_DUP_FN, MPI_COMM_NULL_DELETE_FN, &
                                key2, extra, ierr2)
    call mpi_comm_dup(MPI_COMM_WORLD, dup1, ierr2)
    val = 5
    call mpi_comm_set_attr(dup1, key, val, ierr2)
    val = 7
    call mpi_comm_set_attr(dup1, key2, val, ierr2)
    call mpi_comm_dup(dup1, dup2, ierr2)
    call mpi_comm_get_attr(dup2, key, val, flag2, ierr2)
    call check(flag2 .and. val == 15 .and. copies == 1, 'copy callback')
    call mpi_comm_get_attr(dup2, key2, val, flag2, ierr2)
    call check(flag2 .and. val == 7, 'MPI_COMM_DUP_FN')
    call mpi_comm_free(dup2, ierr2)
    call check(deletes == 1, 'delete callback on free')
    ! an error handler written in Fortran
    call mpi_comm_create_errhandler(on_error, eh, ierr2)
    call mpi_comm_set_errhandler(dup1, eh, ierr2)
    call mpi_send(x, 1, MPI_INTEGER, nproc + 5, 0, dup1, err)
    call check(handled == 1 .and. handled_code == err .and. &
               err /= MPI_SUCCESS, 'Fortran error handler')
    call mpi_errhandler_free(eh, ierr2)
    call mpi_comm_free(dup1, ierr2)
    call check(deletes == 2, 'delete callback on the first')
    call mpi_comm_free_keyval(key, ierr2)
    call mpi_comm_free_keyval(key2, ierr2)
  end subroutine test_keyvals
end program fmodule
