#!/usr/bin/env python3
"""MPI programs of their own MPI under Storm's PMI, on real local clusters
(storm-mm, storm-nm serving PMI-1 on PMI_FD, the barriers through the
managers): tests/pmi/mpiring.c built with Debian's mpicc.mpich and with
Open MPI's mpicc.openmpi, run with plain `stormctl run` (--mpi picked
from the program's libraries: pmi1 for MPICH, pmix for Open MPI, whose
ranks load libstorm-pmi through their flux component).

Usage: test_pmi_jobs.py BUILD TEST

  mpich        8 ranks on 4 node managers x 2 cpus: exit 0, every rank's
               ring token, allreduce and shared-memory communicator size
               (2, the ranks on its node) right; the job's MPI is pmi1
               without --mpi; --mpi=none runs 8 singletons (each rank 0
               of 1); the same program on 1 rank;
  abort        rank 3 calls MPI_Abort(MPI_COMM_WORLD, 42) while the
               others wait in an allreduce: the job ends FAILED naming the
               rank and the code, within the test's bound (no hang); the
               cluster runs the next job;
  master_kill  three managers: rank 0 holds back from MPI_Init until the
               strobe master is killed, so the startup barrier the other
               7 ranks wait in completes under the new master: every
               rank's results right;
  site_default  mpi_default = pmi1 in the configuration: a program whose
               libraries name no MPI gets PMI (its ranks see PMI_SIZE);
               --mpi=none still says none;
  ompi, ompi_abort, ompi_master_kill
               the same three with the program built by mpicc.openmpi
               (its job's MPI: pmix).

Exit: 0 pass, 1 fail, 77 skipped (not root, or no mpicc.mpich).
"""

import os
import shutil
import signal
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "harness"))
import stormlab  # noqa: E402


def check(cond, what):
    if not cond:
        raise AssertionError(what)


MPI = {"mpich": ("mpicc.mpich", "pmi1"), "ompi": ("mpicc.openmpi", "pmix")}
KIND = "mpich"


def build_mpich(lab):
    """mpiring.c built with the compiler of the MPI under test."""
    cc = MPI[KIND][0]
    out = os.path.join(lab.dir, "mpiring-" + KIND)
    env = {k: v for k, v in os.environ.items()
           if k not in ("LD_LIBRARY_PATH", "LD_PRELOAD")}
    r = subprocess.run([cc, "-O1", "-Wall", "-o", out,
                        os.path.join(HERE, "mpiring.c")],
                       capture_output=True, text=True, env=env, timeout=120)
    check(r.returncode == 0, "%s mpiring.c: %s" % (cc, r.stderr))
    return out


def run(lab, args, timeout=120):
    return subprocess.run([os.path.join(lab.build, "cli/stormctl"),
                           "--config", lab.conf] + args,
                          capture_output=True, text=True, timeout=timeout)


def show(lab, job, i=0):
    return stormlab.call(lab.sock(i), {"op": "show", "job": int(job)})["job"]


def last_job(lab, i=0):
    return max(j["id"] for j in lab.queue(i))


def want_lines(n, per_node):
    total = n * (n - 1) // 2
    return sorted("rank %d of %d: ring %d allreduce %d node-size %d" %
                  (r, n, total if r == 0 else r * (r + 1) // 2, total,
                   per_node) for r in range(n))


def ring_lines(text):
    return sorted(line for line in text.splitlines()
                  if line.startswith("rank ") and " of " in line)


def test_mpich(lab):
    prog = build_mpich(lab)
    r = run(lab, ["run", "-n", "8", prog])
    check(r.returncode == 0 and ring_lines(r.stdout) == want_lines(8, 2),
          "8 ranks: exit %d\n%s\n%s" % (r.returncode, r.stdout, r.stderr))
    j = show(lab, last_job(lab))
    check(j.get("mpi") == MPI[KIND][1],
          "the job's MPI without --mpi: %s" % j)
    print("%s: 8 ranks on 4 nodes x 2: ring, allreduce, node-size 2 "
          "right (mpi %s)" % (KIND, j.get("mpi")))
    r = run(lab, ["run", "--mpi=none", "-n", "8", prog])
    got = ring_lines(r.stdout)
    check(r.returncode == 0 and len(got) == 8 and
          all(line == "rank 0 of 1: ring 0 allreduce 0 node-size 1"
              for line in got),
          "--mpi=none: singletons expected: exit %d\n%s\n%s" %
          (r.returncode, r.stdout, r.stderr))
    print("%s: --mpi=none: 8 singletons, each rank 0 of 1" % KIND)
    r = run(lab, ["run", "-n", "1", prog])
    check(r.returncode == 0 and ring_lines(r.stdout) == want_lines(1, 1),
          "1 rank: exit %d\n%s\n%s" % (r.returncode, r.stdout, r.stderr))


def test_abort(lab):
    prog = build_mpich(lab)
    r = run(lab, ["run", "-n", "8", prog, "abort", "3"], timeout=60)
    j = show(lab, last_job(lab))
    check(r.returncode != 0 and j["state"] == "FAILED" and
          "rank 3 called MPI_Abort (exit code 42)" in j.get("reason", "")
          and "N/A" not in j.get("reason", ""),
          "MPI_Abort: exit %d, job %s\n%s" % (r.returncode, j, r.stderr))
    print("abort: %s" % j["reason"])
    r = run(lab, ["run", "-n", "4", prog])
    check(r.returncode == 0 and ring_lines(r.stdout) == want_lines(4, 2),
          "the next job: exit %d\n%s\n%s" % (r.returncode, r.stdout,
                                            r.stderr))


def test_master_kill(lab):
    prog = build_mpich(lab)
    go = os.path.join(lab.dir, "go")
    out = os.path.join(lab.dir, "hold.out")
    r = run(lab, ["submit", "-n", "8", "-o", out, prog, "hold", go])
    check(r.returncode == 0, "submit: %s" % r.stderr)
    job = int(r.stdout.split()[-1])

    def held():
        try:
            with open(out) as f:
                text = f.read()
        except OSError:
            return False
        return all("rank %d: before MPI_Init" % k in text
                   for k in range(8))
    stormlab.wait_for(held, 60, "every rank started")
    victim = lab.master()
    check(victim is not None, "no strobe master")
    lab.p.kill("mm%d" % victim)
    open(go, "w").close()
    alive = [i for i in range(lab.m) if i != victim][0]
    rep = stormlab.call(lab.sock(alive), {
        "op": "wait", "client": "pmi", "seq": job, "job": job,
        "timeout_ms": 90000}, timeout=95)
    check(rep.get("ok"), "job %d did not end: %s" % (job, rep))
    j = show(lab, job, alive)
    with open(out) as f:
        text = f.read()
    check(j["state"] == "COMPLETED" and ring_lines(text) == want_lines(8, 2),
          "after mm%d died: job %s\n%s" % (victim, j, text))
    print("master_kill: mm%d killed while 7 ranks waited in the startup "
          "barrier; the job completed, every result right" % victim)


def test_site_default(lab):
    r = run(lab, ["run", "-n", "4", "/bin/sh", "-c", "echo size $PMI_SIZE"])
    check(r.returncode == 0 and r.stdout.splitlines() == ["size 4"] * 4,
          "mpi_default pmi1: exit %d %r %s" % (r.returncode, r.stdout,
                                              r.stderr))
    check(show(lab, last_job(lab)).get("mpi") == "pmi1", "its MPI")
    r = run(lab, ["run", "--mpi=none", "-n", "2", "/bin/sh", "-c",
                  "echo size ${PMI_SIZE-none}"])
    check(r.returncode == 0 and r.stdout.splitlines() == ["size none"] * 2,
          "--mpi=none: %r" % r.stdout)
    print("site_default: a plain program got pmi1 from mpi_default; "
          "--mpi=none wins")


TESTS = {
    "site_default": (test_site_default, dict(managers=1, nodes=2, cpus=2,
                                             extra=["mpi_default = pmi1"])),
    "mpich": (test_mpich, dict(managers=1, nodes=4, cpus=2)),
    "abort": (test_abort, dict(managers=1, nodes=4, cpus=2)),
    "master_kill": (test_master_kill, dict(managers=3, nodes=4, cpus=2)),
    "ompi": (test_mpich, dict(managers=1, nodes=4, cpus=2)),
    "ompi_abort": (test_abort, dict(managers=1, nodes=4, cpus=2)),
    "ompi_master_kill": (test_master_kill,
                         dict(managers=3, nodes=4, cpus=2)),
}


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in TESTS:
        print(__doc__, file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("SKIP: needs root (daemons as root)", file=sys.stderr)
        return 77
    build, name = sys.argv[1], sys.argv[2]
    global KIND
    KIND = "ompi" if name.startswith("ompi") else "mpich"
    if not shutil.which(MPI[KIND][0]):
        print("SKIP: no %s (scripts/deps installs it)" % MPI[KIND][0],
              file=sys.stderr)
        return 77
    fn, kw = TESTS[name]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("SIGTERM"))
    stormlab.run_in_private_netns()
    d = tempfile.mkdtemp(prefix="storm-pmi-")
    os.chmod(d, 0o755)
    return stormlab.run_test(name, d, lambda: stormlab.Lab(build, d, **kw),
                             fn)


if __name__ == "__main__":
    sys.exit(main())
