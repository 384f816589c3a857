#!/usr/bin/env python3
"""Production load on a real cluster (issue 12).

Usage: test_load.py BUILD_DIR TEST

  concurrent_jobs  three replicas, 8 nodes x 128 cpus: 1,000 one-rank
                   jobs run at once, all blocked on one FIFO, then end
                   together; every one completes, each job's output
                   arrives exactly once, each rank's usage is reported,
                   and every replica holds the same state.  (Job ids
                   64 apart used to share a done slot: jobs stayed
                   RUNNING forever with no process left.)
  heartbeat_sweep  a heartbeat block too small for the jobs (1 KiB: 90
                   jobs) over 300 concurrent jobs: the listing sweeps
                   over them, every job starts and ends, and a job
                   cancelled while it runs loses its processes.
Exit: 0 pass, 1 fail, 77 skip (not root).
"""

import glob
import os
import signal
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "harness"))
import stormlab  # noqa: E402


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def submit(lab, name, argv, i=0):
    job = {"name": name, "ranks": 1, "argv": list(argv), "env": [],
           "files": [], "cwd": lab.dir, "stdout": "out-%j"}
    rep = stormlab.call(lab.sock(i), {"op": "submit", "job": job},
                        timeout=30)
    check(rep.get("ok"), "submit %s: %s" % (name, rep))
    return rep["job"]


def states(lab, i=0):
    return {j["id"]: j for j in lab.queue(i)}


def pids_of(lab, job):
    want = b"STORM_JOB_ID=%d\0" % job
    where = lab.dir.encode()
    out = []
    for env in glob.glob("/proc/[0-9]*/environ"):
        try:
            with open(env, "rb") as f:
                e = f.read()
        except OSError:
            continue
        if want in e and where in e:
            out.append(int(env.split("/")[2]))
    return out


def blocked_jobs(lab, n, fifo, prefix):
    """n jobs that each read one line of fifo, then print and exit.  The
    lines are bare newlines: readers of one pipe take bytes one by one, so
    a longer line could be shared between two of them."""
    script = 'read x < %s; echo "go $STORM_JOB_ID"' % fifo
    return [submit(lab, "%s%d" % (prefix, k), ["/bin/sh", "-c", script],
                   i=k % lab.m) for k in range(n)]


def release(fifo_fd, n):
    os.write(fifo_fd, b"\n" * n)


def wait_all(lab, ids, want, timeout, i=0):
    ids = set(ids)

    def done():
        s = states(lab, i)
        return all(s[x]["state"] in want for x in ids)
    stormlab.wait_for(done, timeout, "%d jobs %s" % (len(ids),
                                                     "/".join(want)))


def test_concurrent_jobs(lab):
    n = 1000
    fifo = os.path.join(lab.dir, "gate")
    os.mkfifo(fifo)
    # held open read-write: readers never see EOF, opens never block
    fd = os.open(fifo, os.O_RDWR)
    try:
        ids = blocked_jobs(lab, n, fifo, "c")
        wait_all(lab, ids, {"RUNNING"}, 600)
        s = states(lab)
        check(sum(1 for x in ids if s[x]["state"] == "RUNNING") == n,
              "not all %d jobs running at once" % n)
        release(fd, n)
        wait_all(lab, ids, {"COMPLETED", "FAILED", "CANCELLED"}, 300)
    finally:
        os.close(fd)
    for i in range(lab.m):
        s = states(lab, i)
        bad = [(x, s[x]["state"], s[x]["reason"]) for x in ids
               if s[x]["state"] != "COMPLETED"]
        check(not bad, "replica %d: %d jobs did not complete: %s"
              % (i, len(bad), bad[:5]))
    # output: exactly one line per job, its own
    for x in ids:
        path = os.path.join(lab.dir, "out-%d" % x)
        stormlab.wait_for(lambda: os.path.exists(path), 30, path)
        with open(path) as f:
            lines = f.read().splitlines()
        check(lines == ["go %d" % x], "job %d output %r" % (x, lines))
    # usage of every rank, on the replica that answers
    rep = stormlab.call(lab.sock(0), {"op": "show", "job": ids[-1]})
    u = rep["job"].get("usage")
    check(u and len(u) == 1 and u[0]["maxrss_kib"] > 0,
          "job %d usage: %s" % (ids[-1], u))
    lab.converged(60)
    check(not any(pids_of(lab, x) for x in ids), "a job process is left")


def test_heartbeat_sweep(lab):
    n = 300
    fifo = os.path.join(lab.dir, "gate")
    os.mkfifo(fifo)
    fd = os.open(fifo, os.O_RDWR)
    try:
        ids = blocked_jobs(lab, n, fifo, "s")
        wait_all(lab, ids, {"RUNNING"}, 300)
        # every rank's process exists: the sweep listed every job RUN
        stormlab.wait_for(lambda: all(pids_of(lab, x) for x in ids), 60,
                          "every job's process")
        victim = ids[n // 2]
        rep = stormlab.call(lab.sock(0), {"op": "cancel", "job": victim})
        check(rep.get("ok"), "cancel: %s" % rep)
        stormlab.wait_for(lambda: not pids_of(lab, victim), 60,
                          "the cancelled job's process to go")
        release(fd, n)
        wait_all(lab, ids, {"COMPLETED", "CANCELLED", "FAILED"}, 300)
    finally:
        os.close(fd)
    s = states(lab)
    bad = [x for x in ids if x != victim and s[x]["state"] != "COMPLETED"]
    check(not bad, "%d jobs did not complete: %s" % (len(bad), bad[:5]))
    check(s[victim]["state"] == "CANCELLED", "victim %s" % s[victim])
    check(not any(pids_of(lab, x) for x in ids), "a job process is left")


TESTS = {
    "concurrent_jobs": (test_concurrent_jobs,
                        dict(managers=3, nodes=8, cpus=128)),
    "heartbeat_sweep": (test_heartbeat_sweep,
                        dict(managers=1, nodes=4, cpus=128,
                             extra=["heartbeat_kib = 1"])),
}


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in TESTS:
        print(__doc__, file=sys.stderr)
        return 2
    build, name = sys.argv[1], sys.argv[2]
    fn, kw = TESTS[name]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("SIGTERM"))
    stormlab.run_in_private_netns()
    d = tempfile.mkdtemp(prefix="storm-load-")
    os.chmod(d, 0o755)
    return stormlab.run_test(name, d, lambda: stormlab.Lab(build, d, **kw),
                             fn)


if __name__ == "__main__":
    sys.exit(main())
