#!/usr/bin/env python3
"""BCS-MPI jobs on real local clusters (storm-mm, storm-nm, the node's BCS
engine): programs built with BUILD/bcsmpi/bcsmpicc, run with
`stormctl run --mpi=bcs`.

Usage: test_jobs.py BUILD TEST

  core          tests/bcsmpi/core.c on 1, 2, 3 and 4 ranks: every call of
                the core, each result checked by the program; then 5001
                communicators made and freed on 2 ranks (more than the
                engine holds at once);
  determinism   an ANY_SOURCE program (tests/bcsmpi/anysource.c) run 20
                times, a CPU hog perturbing every other run: the same
                output each time; --bcs-order=arrival runs it too;
  mpich_binary  core.c built with Debian's mpicc.mpich (asking for
                libmpich.so.12), unchanged, run with --mpi=bcs on 1, 2
                and 4 ranks: every check passes on BCS-MPI; the job's
                LD_LIBRARY_PATH puts mpich_abi_dir before the user's;
  badinput      tests/bcsmpi/badinput.c: bad constructors, overlapping
                receives, predefined and freed handles refused with the
                standard's classes; an overlapping receive under the
                default handler: FAILED naming the call;
  breadth       tests/bcsmpi/breadth.c on 1 to 4 ranks, built with
                bcsmpicc and with mpicc.mpich: Rsend, Irsend,
                Sendrecv_replace, Scan, Exscan (a non-commutative user
                op too), Reduce_scatter(_block), in place, bad arguments'
                error classes; breadth_spread the same over 2 node
                managers;
  comms         tests/bcsmpi/comms.c the same way (groups, Comm_create,
                Comm_create_group, split_type, Cart_sub, names,
                attributes and their callbacks), and under MPICH;
  datatypes     tests/bcsmpi/datatypes.c the same way (structs, MPI_BOTTOM,
                subarray, indexed, Pack, contents), and its MPICH build
                under MPICH's own mpiexec: the expectations are MPICH's;
  fortran       tests/bcsmpi/fring.f (mpif.h) and fmodule.f90 (use mpi)
                built with bcsmpifort on 1 to 4 ranks, and with
                mpif90.mpich under MPICH;
  infoerr       tests/bcsmpi/infoerr.c the same way (info objects, error
                handlers and codes of the program's), and under MPICH;
  topos         tests/bcsmpi/topos.c the same way (graph and distributed
                graph topologies, neighborhood collectives on them and
                on a periodic Cartesian line), and under MPICH;
  inter         tests/bcsmpi/inter.c the same way (Intercomm_create and
                _merge, point-to-point and the collectives across,
                Comm_dup), under MPICH, and overlapping groups: FAILED
                naming the call;
  nbc           tests/bcsmpi/nbc.c the same way (every non-blocking
                collective, overlapped with compute and point-to-point,
                several at once; Alltoallw), and under MPICH;
  p2pmodes      tests/bcsmpi/p2pmodes.c the same way: persistent
                requests in every mode, Request_get_status, Cancel of
                receives, Bsend/Ibsend/Bsend_init with Buffer_attach and
                detach; a Bsend with no room under the default handler:
                FAILED naming the call and the rank;
  unsupported   MPI_Win_create, MPI_File_open, MPI_Comm_spawn (declared,
                not implemented) build and return
                MPI_ERR_UNSUPPORTED_OPERATION under MPI_ERRORS_RETURN;
                MPI_Win_fence under the default handler: FAILED naming
                the call and the rank;
  bad_exit      a rank that exits without MPI_Finalize (5 runs): the job
                ends FAILED naming the rank, what it printed delivered,
                no rank left waiting, the node manager alive for the
                next job;
  abort         MPI_Abort: FAILED with the error code and the call;
  large         messages of 0 B to 64 MiB (chunked across slices) arrive
                whole, pulled by their receivers, and again with every
                pull declined (the engine copies);
  flood         3000 sends posted before any receive: the ring fills,
                the sender waits (back-pressure), every message arrives
                in order;
  corrupt       a rank scribbles over its area of the segment: the job
                ends FAILED naming it, the engine and the next job fine;
  mismatch      a broadcast with different roots: FAILED with the call
                and the reason, never a hang;
  hostile       a rank tries to shrink its segment (sealed), rewrites the
                segment's layout (the engine keeps its own), and runs
                with no_new_privs (the engine writes into it as root),
                rings its doorbell 100000 times and reads it: the job
                completes, every result right;
  doorbell      a job on a one-second slice, on one node and over two
                (_spread): 300 rounds or more done within 90 s, since
                the ranks ring when they all wait;
  nap           a job that computes 2 x 3 s between collectives on a
                1 ms slice, on one node and over two (_spread): a
                cluster without jobs idles its strobe; during the job
                the strobe idles more than half the slices and no node
                manager's main loop wakes 1,500 times; every result
                right;
  trace_replay  a run matched by arrival, traced (--bcs-trace), then
                replayed (--bcs-replay): the same output; a log naming a
                send twice: FAILED naming the first differing match;
  gang          two BCS-MPI jobs on one node in two gang rows (MPL 2):
                switched in and out, both complete with every result
                right (a stopped job's communication waits for its
                turn);
  master_kill   three managers: the strobe master killed while a job
                communicates; under the new master the job completes,
                every result right (the engine sees only slower slices).

Jobs over several node managers (the engines' rounds, docs/bcsmpi.md
section 6), 1 or 2 ranks on each:
  core_spread   core on 2, 3 and 4 ranks of 4 node managers, one each;
  core_pairs    core on 4 and 3 ranks of 2 node managers, two each;
  large_spread  0 B to 64 MiB between two node managers, and the
                collectives of 64 and 32 MiB (chunks over many rounds);
  determinism_spread  the ANY_SOURCE program over 2 node managers, 8
                runs with a CPU hog in every other: one output;
  trace_replay_spread  trace_replay over 2 node managers (the log written
                by rank 0's node, the replay enforced by both);
  gang_spread   gang with each job over 2 node managers;
  master_kill_spread  master_kill with the job over 2 node managers;
  node_death    a node manager killed under a running job: the job ends
                FAILED saying why, its other node manager runs the next
                job.

Exit: 0 pass, 1 fail, 77 skipped (not root).
"""

import os
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "harness"))
import stormlab  # noqa: E402

SAN = os.environ.get("BCSMPI_SANITIZE", "none")


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def build_with(lab, cc, name, out):
    """tests/bcsmpi/NAME (NAME.c when it has no suffix) built with the
    compiler wrapper cc into the lab's directory as out (readable by the
    job's user)."""
    out = os.path.join(lab.dir, out)
    src = name if "." in name else name + ".c"
    argv = [cc, "-O1", "-Wall", "-o", out, os.path.join(HERE, src)]
    if SAN not in ("", "none"):
        # the library is instrumented: its runtime must come first
        argv.insert(1, "-fsanitize=" + SAN)
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    r = subprocess.run(argv, capture_output=True, text=True, env=env,
                       timeout=120)
    check(r.returncode == 0, "%s %s: %s" % (os.path.basename(cc), name,
                                            r.stderr))
    return out


def build_prog(lab, name):
    """NAME.c built with the build tree's bcsmpicc."""
    return build_with(lab, os.path.join(lab.build, "bcsmpi", "bcsmpicc"),
                      name, name)


def build_mpich(lab, name):
    """NAME.c built with Debian's mpicc.mpich (a binary asking for
    libmpich.so.12), as NAME-mpich."""
    return build_with(lab, "mpicc.mpich", name, name + "-mpich")


def run(lab, args, timeout=120):
    if SAN not in ("", "none") and args and args[0] in ("run", "submit"):
        # sanitized ranks (the library is instrumented): what a rank
        # leaks at exit is not this test's business
        args = args[:1] + ["--export", "ASAN_OPTIONS=detect_leaks=0"] + \
            args[1:]
    return subprocess.run([os.path.join(lab.build, "cli/stormctl"),
                           "--config", lab.conf] + args,
                          capture_output=True, text=True, timeout=timeout)


def show(lab, job):
    rep = stormlab.call(lab.sock(0), {"op": "show", "job": int(job)})
    return rep.get("job", rep)


def last_job(lab):
    jobs = lab.queue(0)
    return max(j["id"] for j in jobs)


def test_core(lab):
    prog = build_prog(lab, "core")
    for n in (1, 2, 3, 4):
        r = run(lab, ["run", "--mpi=bcs", "-n", str(n), prog])
        check(r.returncode == 0 and
              "core: all passed on %d ranks" % n in r.stdout,
              "core on %d ranks: exit %d\n%s\n%s" %
              (n, r.returncode, r.stdout, r.stderr))
        print("core on %d ranks: %s" % (n, " ".join(
            line.split()[1] for line in r.stdout.splitlines()
            if line.startswith("ok "))))
    # 5001 communicators made and freed, more than the engine holds at
    # once: MPI_Comm_free releases the engine's copy
    r = run(lab, ["run", "--mpi=bcs", "-n", "2", prog, "comms-loop"])
    check(r.returncode == 0 and "core: all passed on 2 ranks" in r.stdout,
          "core with 5001 communicators: exit %d\n%s\n%s" %
          (r.returncode, r.stdout, r.stderr))
    print("core on 2 ranks with 5001 communicators made and freed: passed")


def test_mpich_binary(lab):
    """core.c built with Debian's mpicc.mpich, unchanged, run with
    --mpi=bcs: it asks for libmpich.so.12 and gets BCS-MPI (core.c checks
    MPI_Get_library_version names BCS-MPI), every check of the core
    passing with MPICH's mpi.h values."""
    mpicc = "mpicc.mpich"
    out = build_mpich(lab, "core")
    r = subprocess.run(["readelf", "-d", out], capture_output=True,
                       text=True, timeout=30)
    check("[libmpich.so.12]" in r.stdout,
          "core built with %s does not ask for libmpich.so.12:\n%s" %
          (mpicc, r.stdout))
    for n in (1, 2, 4):
        r = run(lab, ["run", "--mpi=bcs", "-n", str(n), out])
        check(r.returncode == 0 and
              "core: all passed on %d ranks" % n in r.stdout,
              "core built with %s on %d ranks: exit %d\n%s\n%s" %
              (mpicc, n, r.returncode, r.stdout, r.stderr))
    print("core built with %s (libmpich.so.12) ran on BCS-MPI on 1, 2 "
          "and 4 ranks: all passed" % mpicc)
    # what the user exports follows BCS-MPI's directory
    abi = os.path.join(os.path.abspath(lab.build), "bcsmpi", "abi")
    for export, want in ((None, abi), ("/nonexistent",
                                       abi + ":/nonexistent")):
        # nothing of this test's own environment (meson's paths)
        args = ["run", "--mpi=bcs", "--export=NONE", "-n", "2"]
        if export:
            args[2:2] = ["--export", "LD_LIBRARY_PATH=" + export]
        r = run(lab, args + [out, "ldpath"])
        got = sorted(line for line in r.stdout.splitlines()
                     if "LD_LIBRARY_PATH=" in line)
        check(r.returncode == 0 and got == [
              "rank %d LD_LIBRARY_PATH=%s" % (i, want) for i in (0, 1)],
              "a BCS-MPI job's LD_LIBRARY_PATH (exported %s): want %s, "
              "got exit %d\n%s\n%s" % (export, want, r.returncode,
                                        r.stdout, r.stderr))
    # a job without --mpi=bcs keeps the user's alone
    r = run(lab, ["run", "--export=NONE", "-n", "1", "/bin/sh", "-c",
                  "echo LDP=${LD_LIBRARY_PATH-unset}"])
    check(r.returncode == 0 and "LDP=unset" in r.stdout,
          "a job without --mpi=bcs: LD_LIBRARY_PATH %s" % r.stdout)


def test_bad_exit(lab):
    prog = build_prog(lab, "badexit")
    for k in range(5):
        r = run(lab, ["run", "--mpi=bcs", "-n", "3", prog])
        check(r.returncode != 0, "a rank exiting early: exit 0")
        j = show(lab, last_job(lab))
        check(j["state"] == "FAILED" and "without MPI_Finalize" in
              j.get("reason", ""), "the job: %s" % j)
        # its last lines come before the failure (regression: the
        # failure went out first and the manager dropped them)
        check("rank 1: leaving without MPI_Finalize" in r.stdout and
              "rank 1: on stderr too" in r.stderr,
              "run %d: rank 1's output lost:\n%s\n%s" %
              (k + 1, r.stdout, r.stderr))
    # the node manager is fine: the next job runs
    prog = build_prog(lab, "core")
    r = run(lab, ["run", "--mpi=bcs", "-n", "2", prog])
    check(r.returncode == 0, "the next job: %s %s" % (r.stdout, r.stderr))
    print("bad_exit: %s" % j["reason"])


def test_abort(lab):
    prog = build_prog(lab, "abort")
    r = run(lab, ["run", "--mpi=bcs", "-n", "2", prog])
    check(r.returncode != 0, "MPI_Abort: exit 0")
    j = show(lab, last_job(lab))
    check(j["state"] == "FAILED" and "MPI_Abort" in j.get("reason", "") and
          "error code 42" in j.get("reason", ""), "the job: %s" % j)
    print("abort: %s" % j["reason"])


def fails_by_name(lab, prog, mode, words, passed_line):
    """PROG MODE on 2 ranks must end FAILED, its reason holding every one
    of words (the call, what was wrong, the rank) and the program never
    printing passed_line (it went on after the error).  The reason."""
    r = run(lab, ["run", "--mpi=bcs", "-n", "2", prog, mode])
    j = show(lab, last_job(lab))
    reason = j.get("reason", "")
    check(r.returncode != 0 and j["state"] == "FAILED" and
          all(w in reason for w in words) and passed_line not in r.stdout,
          "%s %s: exit %d, job %s\n%s" %
          (os.path.basename(prog), mode, r.returncode, j, r.stderr))
    return reason


def checked_program(lab, name):
    """tests/bcsmpi/NAME.c (checking its own results) on 1 to 4 ranks,
    built with bcsmpicc and with Debian's mpicc.mpich: each run must
    print "NAME: all passed on N ranks"."""
    progs = [build_prog(lab, name), build_mpich(lab, name)]
    for prog in progs:
        for n in (1, 2, 3, 4):
            r = run(lab, ["run", "--mpi=bcs", "-n", str(n), prog])
            check(r.returncode == 0 and
                  "%s: all passed on %d ranks" % (name, n) in r.stdout,
                  "%s on %d ranks: exit %d\n%s\n%s" %
                  (os.path.basename(prog), n, r.returncode, r.stdout,
                   r.stderr))
        print("%s on 1-4 ranks: %s" % (os.path.basename(prog), " ".join(
            line.split()[1] for line in r.stdout.splitlines()
            if line.startswith("ok "))))
    return progs[0]


def test_breadth(lab):
    """tests/bcsmpi/breadth.c (issue 15's calls beyond the core)."""
    checked_program(lab, "breadth")


def under_mpich(lab, name, n=2):
    """The mpicc.mpich build of NAME under Debian's MPICH itself (its
    mpiexec, its own libmpich): the program's expectations are MPICH's
    too."""
    prog = os.path.join(lab.dir, name + "-mpich")
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
    # what MPICH itself leaks at exit is not this test's business
    env["ASAN_OPTIONS"] = "detect_leaks=0"
    r = subprocess.run(["mpiexec.mpich", "-n", str(n), prog],
                       capture_output=True, text=True, timeout=120,
                       env=env)
    check(r.returncode == 0 and
          "%s: all passed on %d ranks" % (name, n) in r.stdout,
          "%s under MPICH: exit %d\n%s\n%s" %
          (name, r.returncode, r.stdout, r.stderr))
    print("%s-mpich under MPICH's mpiexec: all passed on %d ranks" %
          (name, n))
    return r


def test_datatypes(lab):
    """tests/bcsmpi/datatypes.c: derived datatypes in real messages on
    BCS-MPI, and under MPICH."""
    checked_program(lab, "datatypes")
    under_mpich(lab, "datatypes")


def test_comms(lab):
    """tests/bcsmpi/comms.c: groups, Comm_create(_group), split_type,
    Cart_sub, names, attributes, on BCS-MPI and under MPICH; every rank's
    MPI_COMM_SELF attribute is deleted by MPI_Finalize, once."""
    prog = checked_program(lab, "comms")
    r = run(lab, ["run", "--mpi=bcs", "-n", "3", prog])
    deleted = sorted(line for line in r.stdout.splitlines()
                     if "MPI_COMM_SELF attribute deleted" in line)
    check(r.returncode == 0 and deleted ==
          ["rank %d: MPI_COMM_SELF attribute deleted" % k
           for k in range(3)],
          "MPI_COMM_SELF's attributes at MPI_Finalize: %r\n%s" %
          (deleted, r.stderr))
    under_mpich(lab, "comms")


def test_nbc(lab):
    """tests/bcsmpi/nbc.c: non-blocking collectives and Alltoallw on
    BCS-MPI, and under MPICH."""
    checked_program(lab, "nbc")
    under_mpich(lab, "nbc")


def test_infoerr(lab):
    """tests/bcsmpi/infoerr.c: info objects, the program's error handlers
    and error codes, on BCS-MPI and under MPICH."""
    checked_program(lab, "infoerr")
    under_mpich(lab, "infoerr")


def test_topos(lab):
    """tests/bcsmpi/topos.c: graph topologies and neighborhood
    collectives on BCS-MPI, and under MPICH on 3 ranks (with one or two,
    MPICH 4.0's Neighbor_alltoallv swaps a process's -1 and +1 blocks
    where its Neighbor_alltoall does not)."""
    checked_program(lab, "topos")
    under_mpich(lab, "topos", n=3)


def test_badinput(lab):
    """tests/bcsmpi/badinput.c: issue 15's bad input refused with the
    standard's classes on 1 to 4 ranks; then a receive into overlapping
    entries under the default handler: FAILED naming the call and the
    rank, nothing left running."""
    prog = build_prog(lab, "badinput")
    for n in (1, 2, 3, 4):
        r = run(lab, ["run", "--mpi=bcs", "-n", str(n), prog])
        check(r.returncode == 0 and
              "badinput: all passed on %d ranks" % n in r.stdout,
              "badinput on %d ranks: exit %d\n%s\n%s" %
              (n, r.returncode, r.stdout, r.stderr))
    reason = fails_by_name(lab, prog, "overlap",
                           ("MPI_Sendrecv", "overlap", "rank"), "taken")
    print("badinput on 1-4 ranks: all passed; overlap: %s" % reason)


def test_inter(lab):
    """tests/bcsmpi/inter.c: intercommunicators on BCS-MPI and under
    MPICH; then groups that overlap: FAILED naming the call."""
    prog = checked_program(lab, "inter")
    under_mpich(lab, "inter", n=3)
    reason = fails_by_name(lab, prog, "overlap",
                           ("MPI_Intercomm_create", "overlap"), "taken")
    print("inter overlap: %s" % reason)


def test_fortran(lab):
    """Fortran programs built with bcsmpifort, on 1 to 4 ranks: a Fortran
    77 ring with mpif.h (fring.f) and `use mpi` in free form
    (fmodule.f90: reductions with a Fortran user operation, MPI_IN_PLACE,
    non-blocking point-to-point, strings, attributes, a matrix row and
    a struct from MPI_BOTTOM); both also built with MPICH's mpif90 and
    run under MPICH itself, so the expectations are MPICH's."""
    fc = os.path.join(lab.build, "bcsmpi", "bcsmpifort")
    if not os.path.exists(os.path.join(lab.build, "bcsmpi", "mpi.mod")):
        print("SKIP: no gfortran at build time (no mpi.mod)")
        sys.exit(77)
    for src in ("fring.f", "fmodule.f90"):
        name = src.split(".")[0]
        prog = build_with(lab, fc, src, name)
        for n in (1, 2, 3, 4):
            r = run(lab, ["run", "--mpi=bcs", "-n", str(n), prog])
            check(r.returncode == 0 and
                  "%s: all passed on %d ranks" % (name, n) in r.stdout,
                  "%s on %d ranks: exit %d\n%s\n%s" %
                  (name, n, r.returncode, r.stdout, r.stderr))
        print("%s (bcsmpifort) on 1-4 ranks: all passed" % name)
        mpich = build_with(lab, "mpif90.mpich", src, name + "-mpich")
        under_mpich(lab, name, n=3)
        # the MPICH build, unchanged, on BCS-MPI (its libmpichfort and
        # libmpich are libbcsmpi there)
        r = run(lab, ["run", "--mpi=bcs", "-n", "3", mpich])
        check(r.returncode == 0 and
              "%s: all passed on 3 ranks" % name in r.stdout,
              "%s-mpich on BCS-MPI: exit %d\n%s\n%s" %
              (name, r.returncode, r.stdout, r.stderr))
        print("%s-mpich (mpif90.mpich) on BCS-MPI: all passed on 3 ranks"
              % name)


def test_p2pmodes(lab):
    """tests/bcsmpi/p2pmodes.c: persistent requests, Request_get_status,
    Cancel, buffered mode; then a Bsend with no room under the default
    handler: FAILED naming the call and the rank."""
    prog = checked_program(lab, "p2pmodes")
    reason = fails_by_name(lab, prog, "fatal",
                           ("MPI_Bsend", "no room", "rank"), "returned")
    print("p2pmodes fatal: %s" % reason)


def test_unsupported(lab):
    """Calls mpi.h declares that BCS-MPI does not implement (generated by
    bcsmpi/unsupported.py): the program builds; under MPI_ERRORS_RETURN
    each returns MPI_ERR_UNSUPPORTED_OPERATION; under the default
    handler the job ends FAILED naming the call and the rank."""
    prog = build_prog(lab, "unsupported")
    r = run(lab, ["run", "--mpi=bcs", "-n", "2", prog])
    check(r.returncode == 0 and "every call returned "
          "MPI_ERR_UNSUPPORTED_OPERATION" in r.stdout,
          "unsupported calls under ERRORS_RETURN: exit %d\n%s\n%s" %
          (r.returncode, r.stdout, r.stderr))
    reason = fails_by_name(lab, prog, "fatal",
                           ("MPI_Win_fence is not supported by BCS-MPI",
                            "rank"), "returned")
    print("unsupported: returned the class; fatal: %s" % reason)


def test_large(lab):
    prog = build_prog(lab, "large")
    r = run(lab, ["run", "--mpi=bcs", "-n", "2", prog], timeout=300)
    check(r.returncode == 0 and "large: all arrived" in r.stdout,
          "large: exit %d\n%s\n%s" % (r.returncode, r.stdout, r.stderr))
    print(r.stdout.strip().splitlines()[-1])
    if lab.n == 1:
        # the ranks decline to pull (as where ptrace rules forbid it):
        # the engine copies every large message itself
        r = run(lab, ["run", "--mpi=bcs", "--export",
                      "STORM_BCS_NO_PULL=1", "-n", "2", prog], timeout=300)
        check(r.returncode == 0 and "large: all arrived" in r.stdout,
              "large, copied by the engine: exit %d\n%s\n%s" %
              (r.returncode, r.stdout, r.stderr))
        print("the same with every pull declined: all arrived")


def test_flood(lab):
    prog = build_prog(lab, "flood")
    r = run(lab, ["run", "--mpi=bcs", "-n", "2", prog])
    check(r.returncode == 0 and "flood: 3000 messages in order" in r.stdout,
          "flood: exit %d\n%s\n%s" % (r.returncode, r.stdout, r.stderr))
    print(r.stdout.strip())


def failed_with(lab, name, want, n=2):
    prog = build_prog(lab, name)
    r = run(lab, ["run", "--mpi=bcs", "-n", str(n), prog])
    check(r.returncode != 0, "%s: exit 0" % name)
    j = show(lab, last_job(lab))
    check(j["state"] == "FAILED" and all(w in j.get("reason", "")
                                         for w in want),
          "%s: the job: %s" % (name, j))
    # the engine and the node manager go on: the next job runs
    prog = build_prog(lab, "flood")
    r = run(lab, ["run", "--mpi=bcs", "-n", "2", prog])
    check(r.returncode == 0, "the next job: %s %s" % (r.stdout, r.stderr))
    print("%s: %s" % (name, j["reason"]))


def test_corrupt(lab):
    failed_with(lab, "corrupt", ["rank 1", "out of bounds", "corrupt"])


def test_mismatch(lab):
    failed_with(lab, "mismatch", ["MPI_Bcast", "different"])


def submit_loop(lab, name, n, iters, spin_ms):
    prog = build_prog(lab, "loop")
    out = os.path.join(lab.dir, name + ".out")
    r = run(lab, ["submit", "--mpi=bcs", "-n", str(n), "--name", name,
                  "-o", out, prog, str(iters), str(spin_ms)])
    check(r.returncode == 0, "submit %s: %s" % (name, r.stderr))
    return int(r.stdout.split()[-1]), out


def wait_end(lab, job, i=0, timeout_ms=120000):
    rep = stormlab.call(lab.sock(i), {"op": "wait", "client": "bcs",
                                      "seq": job, "job": job,
                                      "timeout_ms": timeout_ms},
                        timeout=timeout_ms / 1000 + 5)
    check(rep.get("ok"), "job %d did not end: %s" % (job, rep))
    return stormlab.call(lab.sock(i), {"op": "show", "job": job})["job"]


def test_gang(lab):
    a, out_a = submit_loop(lab, "a", 2, 300, 2)
    b, out_b = submit_loop(lab, "b", 2, 300, 2)
    # each fills the node: both run, in two rows of the matrix
    stormlab.wait_for(lambda: show(lab, a)["state"] == "RUNNING" and
                      show(lab, b)["state"] == "RUNNING", 60,
                      "both jobs running")
    rows = {show(lab, a).get("row"), show(lab, b).get("row")}
    check(len(rows) == 2, "both jobs in one row: %s" % rows)
    for job, out in ((a, out_a), (b, out_b)):
        j = wait_end(lab, job)
        check(j["state"] == "COMPLETED", "job %d: %s" % (job, j))
        with open(out) as f:
            text = f.read()
        check("loop: 300 iterations checked on 2 ranks" in text,
              "job %d printed %r" % (job, text))
    print("gang: two BCS-MPI jobs in gang rows %s, both completed" %
          sorted(rows))


def test_master_kill(lab):
    job, out = submit_loop(lab, "survivor", 2, 400, 5)
    stormlab.wait_for(lambda: show(lab, job)["state"] == "RUNNING", 60,
                      "the job running")
    victim = lab.master()
    check(victim is not None, "no strobe master")
    lab.p.kill("mm%d" % victim)
    alive = [i for i in range(lab.m) if i != victim][0]
    j = wait_end(lab, job, alive)
    check(j["state"] == "COMPLETED", "the job after mm%d died: %s" %
          (victim, j))
    with open(out) as f:
        text = f.read()
    check("loop: 400 iterations checked on 2 ranks" in text,
          "it printed %r" % text)
    print("master_kill: mm%d killed mid-run; %s" % (victim, text.strip()))


def test_hostile(lab):
    prog = build_prog(lab, "hostile")
    r = run(lab, ["run", "--mpi=bcs", "-n", "3", prog])
    check(r.returncode == 0 and "hostile: shrink refused, no_new_privs 1, "
          "sum 3 right" in r.stdout,
          "hostile: exit %d\n%s\n%s" % (r.returncode, r.stdout, r.stderr))
    print(r.stdout.strip())


def test_doorbell(lab):
    # a one-second slice: 100 iterations of an allreduce, a broadcast and
    # a ring exchange take 300 rounds or more, five minutes of strobe;
    # rung by the ranks when they all wait, each round runs at once (on
    # one node), or once every node's section is in (across nodes)
    prog = build_prog(lab, "loop")
    r = run(lab, ["run", "--mpi=bcs", "-n", "2", prog, "100", "0"],
            timeout=90)
    check(r.returncode == 0,
          "doorbell: exit %d\n%s\n%s" % (r.returncode, r.stdout, r.stderr))
    print("doorbell: 300 rounds or more within 90 s of a 1 s slice")


def main_switches(pid):
    with open("/proc/%d/task/%d/status" % (pid, pid)) as f:
        for line in f:
            if line.startswith("voluntary_ctxt_switches:"):
                return int(line.split()[1])
    return 0


def strobe_stats(lab, reset=False):
    rep = stormlab.call(lab.sock(0), {"op": "managers",
                                      "reset_strobe_stats": reset})
    check("strobe" in rep, "no strobe statistics: %s" % rep)
    return rep["strobe"]


def test_nap(lab):
    # a 1 ms slice; the job computes 2 x 3 s between a few collectives:
    # its engine naps, the node managers go quiet, and the strobe idles
    # (docs/manager.md §3, ticks and the idle strobe): a block every 32
    # slices, until a rank's post or wait wakes it through its node
    # manager — whose main loop wakes for those blocks, the doorbell and
    # the job's own events, not 1,000 times a second.  The collectives
    # between the compute phases still complete, with checked results.
    prog = build_prog(lab, "loop")
    # a cluster without jobs idles
    stormlab.wait_for(lambda: strobe_stats(lab)["idle"], 10,
                      "the strobe of a cluster without jobs to idle")
    nms = [lab.p.procs["nm%d" % (k + 1)].pid for k in range(lab.n)]
    before = [main_switches(p) for p in nms]
    strobe_stats(lab, reset=True)
    r = run(lab, ["run", "--mpi=bcs", "-n", "2", prog, "2", "3000"],
            timeout=90)
    st = strobe_stats(lab)
    woke = max(main_switches(p) - b for p, b in zip(nms, before))
    check(r.returncode == 0,
          "nap: exit %d\n%s\n%s" % (r.returncode, r.stdout, r.stderr))
    check(woke < 1500,
          "nap: a node manager's main loop woke %d times during a job "
          "of 6 s (6,000 slices) that only computed" % woke)
    idle = st["idle_slices"] / max(1, st["idle_slices"] + st["slices"])
    check(idle > 0.5,
          "nap: the strobe idled %d of %d slices of a job that only "
          "computed" % (st["idle_slices"],
                        st["idle_slices"] + st["slices"]))
    print("nap: a node manager's main loop woke %d times in 6,000 slices "
          "of a computing job; the strobe idled %d of %d slices"
          % (woke, st["idle_slices"], st["idle_slices"] + st["slices"]))


def test_trace_replay(lab):
    prog = build_prog(lab, "anysource")
    log = os.path.join(lab.dir, "matches.log")
    r = run(lab, ["run", "--mpi=bcs", "--bcs-order=arrival", "--bcs-trace",
                  log, "-n", "4", prog, "5"])
    check(r.returncode == 0, "traced run: %s %s" % (r.stdout, r.stderr))
    with open(log) as f:
        lines = f.read().splitlines()
    check(len(lines) == 36 and all(line.startswith("match ")
                                   for line in lines),
          "the log: %d lines, %r" % (len(lines), lines[:2]))
    traced = r.stdout
    r = run(lab, ["run", "--mpi=bcs", "--bcs-replay", log, "-n", "4", prog,
                  "2"])
    check(r.returncode == 0 and r.stdout == traced,
          "the replay printed otherwise:\n%s\nvs\n%s" % (r.stdout, traced))
    # a log whose second match names the first's send again: that send
    # is taken by then, and its rank has made it: the run diverges
    bad = os.path.join(lab.dir, "bad.log")
    first, second = lines[0].split(), lines[1].split()
    at = second.index("<-")
    second[at + 1:at + 5] = first[first.index("<-") + 1:
                                  first.index("<-") + 5]
    with open(bad, "w") as f:
        f.write("\n".join([lines[0], " ".join(second)] + lines[2:]) + "\n")
    r = run(lab, ["run", "--mpi=bcs", "--bcs-replay", bad, "-n", "4", prog])
    check(r.returncode != 0, "a diverging replay: exit 0")
    j = show(lab, last_job(lab))
    check(j["state"] == "FAILED" and "diverged" in j.get("reason", ""),
          "the diverging replay: %s" % j)
    print("trace_replay: %d matches logged by arrival, replayed alike; %s"
          % (len(lines), j["reason"]))


def test_determinism(lab, runs=20):
    prog = build_prog(lab, "anysource")
    outs = []
    for k in range(runs):
        hog = None
        if k % 2:
            # a CPU hog on the node's cpus: the ranks' timing changes
            hog = subprocess.Popen(["sh", "-c", "while :; do :; done"])
        try:
            r = run(lab, ["run", "--mpi=bcs", "-n", "4", prog, str(k)])
        finally:
            if hog:
                hog.kill()
                hog.wait()
        check(r.returncode == 0, "run %d: %s %s" % (k, r.stdout, r.stderr))
        outs.append(r.stdout)
    check(len(set(outs)) == 1, "outputs differ: %s" %
          [o.splitlines()[:3] for o in set(outs)])
    # the order by arrival: the program still runs (what it prints is
    # the timing's business); stormctl show says which order it had
    r = run(lab, ["run", "--mpi=bcs", "--bcs-order=arrival", "-n", "4",
                  prog, "1"])
    check(r.returncode == 0, "arrival order: %s %s" % (r.stdout, r.stderr))
    j = show(lab, last_job(lab))
    check(j.get("mpi") == "bcs (arrival order)", "show: %s" % j)
    print("determinism: %d runs (%d with a CPU hog), one output of %d "
          "lines; by arrival the output %s" % (
              runs, runs // 2, len(outs[0].splitlines()),
              "was the same" if r.stdout == outs[0] else "differed"))


def test_core_spread(lab):
    test_core_spread_n(lab, (2, 3, 4))


def test_core_pairs(lab):
    test_core_spread_n(lab, (4, 3))


def test_core_spread_n(lab, ns):
    prog = build_prog(lab, "core")
    for n in ns:
        r = run(lab, ["run", "--mpi=bcs", "-n", str(n), prog])
        check(r.returncode == 0 and
              "core: all passed on %d ranks" % n in r.stdout,
              "core on %d ranks: exit %d\n%s\n%s" %
              (n, r.returncode, r.stdout, r.stderr))
        print("core on %d ranks over %d node managers: passed" % (n, lab.n))


def test_determinism_spread(lab):
    test_determinism(lab, runs=8)


def test_node_death(lab):
    job, out = submit_loop(lab, "orphan", 2, 100000, 5)
    stormlab.wait_for(lambda: show(lab, job)["state"] == "RUNNING", 60,
                      "the job running")
    lab.p.kill("nm2")
    j = wait_end(lab, job)
    check(j["state"] == "FAILED", "the job after nm2 died: %s" % j)
    # the surviving node manager's engine is fine: a job runs there
    prog = build_prog(lab, "core")
    r = run(lab, ["run", "--mpi=bcs", "-n", "1", prog])
    check(r.returncode == 0 and "core: all passed on 1 ranks" in r.stdout,
          "the next job on nm1: %s %s" % (r.stdout, r.stderr))
    print("node_death: nm2 killed; the job FAILED (%s); nm1 ran the next"
          % j.get("reason"))


GANG = ["sched_policy = gang", "mpl = 2", "quantum_us = 200000"]

TESTS = {
    "core": (test_core, dict(managers=1, nodes=1, cpus=4, slice_us=1000)),
    "mpich_binary": (test_mpich_binary, dict(managers=1, nodes=1, cpus=4,
                                             slice_us=1000)),
    "unsupported": (test_unsupported, dict(managers=1, nodes=1, cpus=2)),
    "breadth": (test_breadth, dict(managers=1, nodes=1, cpus=4,
                                   slice_us=1000)),
    "breadth_spread": (test_breadth, dict(managers=1, nodes=2, cpus=2,
                                          slice_us=1000)),
    "comms": (test_comms, dict(managers=1, nodes=1, cpus=4,
                               slice_us=1000)),
    "comms_spread": (test_comms, dict(managers=1, nodes=2, cpus=2,
                                      slice_us=1000)),
    "datatypes": (test_datatypes, dict(managers=1, nodes=1, cpus=4,
                                       slice_us=1000)),
    "datatypes_spread": (test_datatypes, dict(managers=1, nodes=2, cpus=2,
                                              slice_us=1000)),
    "fortran": (test_fortran, dict(managers=1, nodes=1, cpus=4,
                                   slice_us=1000)),
    "fortran_spread": (test_fortran, dict(managers=1, nodes=2, cpus=2,
                                          slice_us=1000)),
    "infoerr": (test_infoerr, dict(managers=1, nodes=1, cpus=4,
                                   slice_us=1000)),
    "topos": (test_topos, dict(managers=1, nodes=1, cpus=4,
                               slice_us=1000)),
    "topos_spread": (test_topos, dict(managers=1, nodes=2, cpus=2,
                                      slice_us=1000)),
    "badinput": (test_badinput, dict(managers=1, nodes=1, cpus=4,
                                     slice_us=1000)),
    "inter": (test_inter, dict(managers=1, nodes=1, cpus=4,
                               slice_us=1000)),
    "inter_spread": (test_inter, dict(managers=1, nodes=2, cpus=2,
                                      slice_us=1000)),
    "nbc": (test_nbc, dict(managers=1, nodes=1, cpus=4, slice_us=1000)),
    "nbc_spread": (test_nbc, dict(managers=1, nodes=2, cpus=2,
                                  slice_us=1000)),
    "p2pmodes": (test_p2pmodes, dict(managers=1, nodes=1, cpus=4,
                                     slice_us=1000)),
    "p2pmodes_spread": (test_p2pmodes, dict(managers=1, nodes=2, cpus=2,
                                            slice_us=1000)),
    "bad_exit": (test_bad_exit, dict(managers=1, nodes=1, cpus=4)),
    "abort": (test_abort, dict(managers=1, nodes=1, cpus=4)),
    "large": (test_large, dict(managers=1, nodes=1, cpus=2)),
    "determinism": (test_determinism, dict(managers=1, nodes=1, cpus=4)),
    "flood": (test_flood, dict(managers=1, nodes=1, cpus=2)),
    "corrupt": (test_corrupt, dict(managers=1, nodes=1, cpus=2)),
    "mismatch": (test_mismatch, dict(managers=1, nodes=1, cpus=2)),
    "hostile": (test_hostile, dict(managers=1, nodes=1, cpus=3)),
    "doorbell": (test_doorbell, dict(managers=1, nodes=1, cpus=2,
                                     slice_us=1000000)),
    "nap": (test_nap, dict(managers=1, nodes=1, cpus=2, slice_us=1000)),
    "nap_spread": (test_nap, dict(managers=1, nodes=2, cpus=1,
                                  slice_us=1000)),
    "doorbell_spread": (test_doorbell, dict(managers=1, nodes=2, cpus=1,
                                            slice_us=1000000)),
    "trace_replay": (test_trace_replay, dict(managers=1, nodes=1, cpus=4)),
    "gang": (test_gang, dict(managers=1, nodes=1, cpus=2, extra=GANG)),
    "master_kill": (test_master_kill, dict(managers=3, nodes=1, cpus=2)),
    "core_spread": (test_core_spread, dict(managers=1, nodes=4, cpus=1)),
    "core_pairs": (test_core_pairs, dict(managers=1, nodes=2, cpus=2)),
    "large_spread": (test_large, dict(managers=1, nodes=2, cpus=1,
                                     slice_us=2000)),
    "determinism_spread": (test_determinism_spread,
                           dict(managers=1, nodes=2, cpus=2)),
    "trace_replay_spread": (test_trace_replay,
                            dict(managers=1, nodes=2, cpus=2)),
    "gang_spread": (test_gang, dict(managers=1, nodes=2, cpus=1,
                                    extra=GANG)),
    "master_kill_spread": (test_master_kill,
                           dict(managers=3, nodes=2, cpus=1)),
    "node_death": (test_node_death, dict(managers=1, nodes=2, cpus=1)),
}


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in TESTS:
        print(__doc__, file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("SKIP: needs root (daemons as root)", file=sys.stderr)
        return 77
    build, name = sys.argv[1], sys.argv[2]
    fn, kw = TESTS[name]
    # meson's timeout sends SIGTERM: stop the lab's daemons on the way out
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("SIGTERM"))
    stormlab.run_in_private_netns()
    d = tempfile.mkdtemp(prefix="storm-bcs-")
    os.chmod(d, 0o755)
    return stormlab.run_test(name, d, lambda: stormlab.Lab(build, d, **kw),
                             fn)


if __name__ == "__main__":
    sys.exit(main())
