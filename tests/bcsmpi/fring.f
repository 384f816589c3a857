! fring.f — a Fortran 77 ring with mpif.h (tests/bcsmpi/test_jobs.py,
! test "fortran"): each rank passes a token on N times, checks what came
! and from whom (the status array), then a Sendrecv and an Allreduce.
! Prints "fring: all passed on N ranks" from rank 0.
      PROGRAM FRING
      IMPLICIT NONE
      INCLUDE 'mpif.h'
      INTEGER IERR, RANK, NPROC, NEXT, PREV, TOKEN, I, TOTAL
      INTEGER STATUS(MPI_STATUS_SIZE), GOT
      CALL MPI_INIT(IERR)
      CALL MPI_COMM_RANK(MPI_COMM_WORLD, RANK, IERR)
      CALL MPI_COMM_SIZE(MPI_COMM_WORLD, NPROC, IERR)
      NEXT = MOD(RANK + 1, NPROC)
      PREV = MOD(RANK + NPROC - 1, NPROC)
      TOKEN = 0
      DO 10 I = 1, 3
         IF (RANK .EQ. 0) THEN
            TOKEN = TOKEN + 1
            CALL MPI_SEND(TOKEN, 1, MPI_INTEGER, NEXT, 7,
     &                    MPI_COMM_WORLD, IERR)
            CALL MPI_RECV(TOKEN, 1, MPI_INTEGER, PREV, 7,
     &                    MPI_COMM_WORLD, STATUS, IERR)
         ELSE
            CALL MPI_RECV(TOKEN, 1, MPI_INTEGER, PREV, 7,
     &                    MPI_COMM_WORLD, STATUS, IERR)
            TOKEN = TOKEN + 1
            CALL MPI_SEND(TOKEN, 1, MPI_INTEGER, NEXT, 7,
     &                    MPI_COMM_WORLD, IERR)
         END IF
         IF (STATUS(MPI_SOURCE) .NE. PREV .OR.
     &       STATUS(MPI_TAG) .NE. 7) THEN
            PRINT *, 'rank', RANK, ': status source', STATUS(MPI_SOURCE)
            CALL MPI_ABORT(MPI_COMM_WORLD, 3, IERR)
         END IF
   10 CONTINUE
      IF (RANK .EQ. 0 .AND. TOKEN .NE. 3 * NPROC) THEN
         PRINT *, 'ring token', TOKEN, 'want', 3 * NPROC
         CALL MPI_ABORT(MPI_COMM_WORLD, 3, IERR)
      END IF
      CALL MPI_SENDRECV(RANK, 1, MPI_INTEGER, NEXT, 8, GOT, 1,
     &                  MPI_INTEGER, PREV, 8, MPI_COMM_WORLD,
     &                  MPI_STATUS_IGNORE, IERR)
      IF (GOT .NE. PREV) THEN
         PRINT *, 'rank', RANK, ': sendrecv got', GOT
         CALL MPI_ABORT(MPI_COMM_WORLD, 3, IERR)
      END IF
      CALL MPI_ALLREDUCE(RANK, TOTAL, 1, MPI_INTEGER, MPI_SUM,
     &                   MPI_COMM_WORLD, IERR)
      IF (TOTAL .NE. NPROC * (NPROC - 1) / 2) THEN
         PRINT *, 'rank', RANK, ': allreduce', TOTAL
         CALL MPI_ABORT(MPI_COMM_WORLD, 3, IERR)
      END IF
      IF (RANK .EQ. 0) WRITE (*, '(A,I0,A)')
     &   'fring: all passed on ', NPROC, ' ranks'
      CALL MPI_FINALIZE(IERR)
      END
