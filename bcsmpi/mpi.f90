! mpi.f90 — the `mpi` module of BCS-MPI (`use mpi`): mpif.h's constants,
! COMMON blocks and function types in a module, built with gfortran by
! bcsmpi/meson.build.  The subroutines themselves are the bindings of
! libbcsmpi (fortran.c), called without explicit interfaces, as with
! mpif.h: choice buffers of any type and rank pass unchecked.
module mpi
  implicit none
  include 'mpif.h'
end module mpi
