#!/usr/bin/env python3
"""Gang scheduling on a real cluster (issue 5, tests 4 and bad input).

Usage: test_gang.py BUILD_DIR TEST

Each test brings up real storm-mm / storm-nm processes (and corosync for
the failover test) in a network namespace of its own (stormlab) and
asserts what it is named for:
  context_switch  two CPU-bound jobs at MPL 2: a job's processes gain no
                  CPU time while they are stopped (/proc), both progress,
                  and each spends a good part of the time stopped;
  mpl1_no_switch  at MPL 1 a running job is never stopped;
  mixed_sizes     jobs of 1, 2, 3 and 4 ranks at MPL 2 on 4 PEs all run
                  to completion; the matrix stays consistent throughout;
  node_failure    kill -9 a node manager while jobs are gang-scheduled:
                  the jobs with ranks there fail with the reason, the
                  others keep switching, the matrix is consistent;
  failover        three replicas: kill -9 the strobe master while two jobs
                  share the matrix: every replica shows the same matrix
                  (cells, digest) before and after, and the jobs go on
                  switching under the new master;
  bad_input       impossible jobs, scheduler settings out of range or
                  unknown, cancels during context switches: clear errors,
                  documented exit codes, a consistent matrix.
Exit: 0 pass, 1 fail.
"""

import os
import signal
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "harness"))
import stormlab  # noqa: E402

SPIN = ["/bin/sh", "-c", "while :; do :; done"]
CLK = os.sysconf("SC_CLK_TCK")


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def gang(mpl=2, quantum_us=200000, slice_us=10000):
    return ["sched_policy = gang", "mpl = %d" % mpl,
            "quantum_us = %d" % quantum_us], slice_us


def submit(lab, name, ranks, argv=SPIN, i=0, limit=0, nodes=None):
    job = {"name": name, "ranks": ranks, "argv": list(argv), "env": [],
           "files": [], "cwd": "/", "stdout": "/dev/null",
           "stderr": "/dev/null"}
    if limit:
        job["time_limit_ms"] = limit
    if nodes:
        job["nodes"] = nodes
    rep = stormlab.call(lab.sock(i), {"op": "submit", "job": job})
    check(rep.get("ok"), "submit %s: %s" % (name, rep))
    return rep["job"]


def show(lab, job, i=0):
    rep = stormlab.call(lab.sock(i), {"op": "show", "job": job})
    check(rep.get("ok"), "show %d: %s" % (job, rep))
    return rep["job"]


def matrix(lab, i=0):
    rep = stormlab.call(lab.sock(i), {"op": "matrix"})
    check(rep.get("ok"), "matrix: %s" % rep)
    return rep


def consistent(lab, i=0):
    m = matrix(lab, i)
    check(m.get("consistent", True) is True,
          "matrix inconsistent on replica %d: %s" % (i, m.get("consistent")))
    return m


def wait_state(lab, job, states, timeout=30):
    stormlab.wait_for(lambda: show(lab, job)["state"] in states, timeout,
                      "job %d to be %s" % (job, "/".join(states)))
    return show(lab, job)


def pids_of(lab, job):
    return stormlab.pids_of(lab, job)


def cgroup2_mount():
    with open("/proc/self/mounts") as f:
        for line in f:
            x = line.split()
            if x[2] == "cgroup2":
                return x[1]
    return None


CG2 = cgroup2_mount()


def frozen(pid):
    """Whether pid's cgroup (v2) is frozen: a stop also freezes the job's
    cgroup, and a process frozen before it took its SIGSTOP shows S."""
    try:
        with open("/proc/%d/cgroup" % pid) as f:
            path = [l.strip()[3:] for l in f if l.startswith("0::")][0]
        with open(os.path.join(CG2 + path, "cgroup.events")) as f:
            return "frozen 1" in f.read()
    except (OSError, IndexError, TypeError):
        return False


def stat(pid):
    """(state letter, utime + stime in ticks) of pid, or None; a process
    whose cgroup was frozen both before and after its CPU time was read
    counts as stopped (T).  Looked at only after, frozen may describe a
    stop that came between the reads; only before, a continue: either
    way the CPU time read lacks a last run, which the next sample would
    count as time gained while stopped."""
    was_frozen = frozen(pid)
    try:
        with open("/proc/%d/stat" % pid) as f:
            s = f.read()
    except OSError:
        return None
    f = s[s.rindex(")") + 2:].split()
    state = f[0]
    if state != "T" and was_frozen and frozen(pid):
        state = "T"
    return state, int(f[11]) + int(f[12])


def sample(pids, seconds, period=0.02):
    """[(t, {pid: (state, cpu)})] every period for seconds."""
    out, end = [], time.monotonic() + seconds
    while time.monotonic() < end:
        out.append((time.monotonic(), {p: stat(p) for p in pids}))
        time.sleep(period)  # the sampling rate itself, not a wait
    return out


def job_pids(lab, job, n):
    stormlab.wait_for(lambda: len(pids_of(lab, job)) == n, 30,
                      "job %d's %d processes" % (job, n))
    return pids_of(lab, job)


def cpu_while_stopped(samples, pids):
    """Ticks gained between two samples that both saw every process of
    the job stopped, how many such intervals, and the total gained."""
    stopped_gain, stopped_n, total = 0, 0, 0
    for (_, a), (_, b) in zip(samples, samples[1:]):
        if any(a[p] is None or b[p] is None for p in pids):
            continue
        gain = sum(b[p][1] - a[p][1] for p in pids)
        total += gain
        if all(a[p][0] == "T" and b[p][0] == "T" for p in pids):
            stopped_gain += gain
            stopped_n += 1
    return stopped_gain, stopped_n, total


# ---- tests ---------------------------------------------------------------


def test_context_switch(lab):
    a = submit(lab, "a", 2)
    b = submit(lab, "b", 2)
    wait_state(lab, a, ["RUNNING"])
    wait_state(lab, b, ["RUNNING"])
    m = consistent(lab)
    rows = {m["jobs"][k]["job"]: m["jobs"][k]["row"]
            for k in range(len(m["jobs"]))}
    check(rows[a] != rows[b], "jobs share a row: %s" % rows)
    pa, pb = job_pids(lab, a, 2), job_pids(lab, b, 2)
    samples = sample(pa + pb, 4.0)
    intervals = len(samples) - 1
    for name, pids in (("a", pa), ("b", pb)):
        gain, n, total = cpu_while_stopped(samples, pids)
        print("job %s: %d of %d intervals stopped, %d ticks gained then, "
              "%d in all" % (name, n, intervals, gain, total))
        check(gain == 0, "job %s gained %d ticks of CPU while stopped"
              % (name, gain))
        check(n >= intervals // 5, "job %s was stopped in only %d of %d "
              "intervals: no context switch" % (name, n, intervals))
        check(total >= 0.2 * 4.0 * CLK, "job %s made no progress (%d "
              "ticks in 4 s)" % (name, total))
    for j in (a, b):
        rep = stormlab.call(lab.sock(0), {"op": "cancel", "job": j})
        check(rep.get("ok"), "cancel: %s" % rep)
    for j in (a, b):
        wait_state(lab, j, ["CANCELLED"])
    stormlab.wait_for(lambda: not pids_of(lab, a) and not pids_of(lab, b),
                      10, "cancelled jobs' processes to go")
    consistent(lab)


def test_mpl1_no_switch(lab):
    a = submit(lab, "a", 2)
    wait_state(lab, a, ["RUNNING"])
    pa = job_pids(lab, a, 2)
    samples = sample(pa, 2.0)
    stops = sum(1 for _, s in samples for p in pa if s[p] and s[p][0] == "T")
    check(stops == 0, "a job at MPL 1 was seen stopped %d times" % stops)
    check(matrix(lab)["mpl"] == 1, "mpl is not 1")


def test_mixed_sizes(lab):
    sizes = [1, 2, 3, 4, 1, 2, 4, 3]
    jobs = [submit(lab, "mix%d" % k, n,
                   argv=("/bin/sh", "-c", "i=0; while [ $i -lt 20000 ]; "
                         "do i=$((i+1)); done"))
            for k, n in enumerate(sizes)]
    seen_shared = False
    end = time.monotonic() + 120
    while time.monotonic() < end:
        m = consistent(lab)
        seen_shared |= len({j["row"] for j in m["jobs"]}) > 1
        states = [show(lab, j)["state"] for j in jobs]
        if all(s in ("COMPLETED", "FAILED", "CANCELLED") for s in states):
            break
        time.sleep(0.1)  # polling the matrix is the point of this loop
    for j in jobs:
        rec = show(lab, j)
        check(rec["state"] == "COMPLETED", "job %d (%d ranks): %s %s"
              % (j, rec["ranks"], rec["state"], rec.get("reason")))
    check(seen_shared, "no two rows were ever in use at MPL 2")
    m = consistent(lab)
    check(all(c == 0 for row in m["cells"] for c in row),
          "cells still held after every job ended: %s" % m["cells"])


def test_node_failure(lab):
    # 2 nodes x 1 cpu, MPL 2: a on nm1 only, b on both, c on nm2 only
    a = submit(lab, "a", 1, nodes="1")
    b = submit(lab, "b", 2)
    c = submit(lab, "c", 1, nodes="2")
    for j in (a, b, c):
        wait_state(lab, j, ["RUNNING"])
    consistent(lab)
    lab.p.kill("nm2", signal.SIGKILL)
    for j in (b, c):
        rec = wait_state(lab, j, ["FAILED"], timeout=30)
        check("nm2" in rec.get("reason", ""), "job %d failed for another "
              "reason: %s" % (j, rec.get("reason")))
    check(show(lab, a)["state"] == "RUNNING", "job a (not on nm2) ended")
    m = consistent(lab)
    check(all(j["job"] == a for j in m["jobs"]), "matrix still holds the "
          "failed jobs: %s" % m["jobs"])
    # the survivor and a newcomer on nm1 share nm1's column by turns
    d = submit(lab, "d", 1, nodes="1")
    wait_state(lab, d, ["RUNNING"])
    pa, pd = job_pids(lab, a, 1), job_pids(lab, d, 1)
    samples = sample(pa + pd, 3.0)
    for name, pids in (("a", pa), ("d", pd)):
        gain, n, _ = cpu_while_stopped(samples, pids)
        check(gain == 0 and n > 0, "job %s after the failure: %d stopped "
              "intervals, %d ticks gained while stopped" % (name, n, gain))
    lab.start_nm(2)
    rep = stormlab.call(lab.sock(0), {"op": "wait", "nodes_up": 2,
                                      "timeout_ms": 30000}, timeout=40)
    check(rep.get("ok"), "nm2 did not come back: %s" % rep)
    consistent(lab)


def cells_of(m):
    return (m["digest"], m["cells"], m["mpl"], m["policy"])


def test_failover(lab):
    a = submit(lab, "a", 2)
    b = submit(lab, "b", 2)
    wait_state(lab, a, ["RUNNING"])
    wait_state(lab, b, ["RUNNING"])
    lab.converged()
    before = [cells_of(consistent(lab, i)) for i in range(lab.m)]
    check(len({repr(x) for x in before}) == 1, "replicas differ: %s"
          % before)
    victim = lab.master()
    check(victim is not None, "no strobe master")
    os.kill(lab.mm_pid(victim), signal.SIGKILL)
    alive = [i for i in range(lab.m) if i != victim]

    def new_master():
        k = None
        for i in alive:
            for n, x in enumerate(stormlab.call(lab.sock(i),
                                                {"op": "managers"})
                                  .get("managers", [])):
                if x.get("master") and n != victim:
                    k = n
        return k is not None
    stormlab.wait_for(new_master, 30, "a new strobe master")
    after = [cells_of(consistent(lab, i)) for i in alive]
    check(all(x == before[0] for x in after), "the matrix changed over the "
          "failover:\nbefore %s\nafter %s" % (before[0], after))
    pa, pb = job_pids(lab, a, 2), job_pids(lab, b, 2)
    samples = sample(pa + pb, 3.0)
    for name, pids in (("a", pa), ("b", pb)):
        gain, n, total = cpu_while_stopped(samples, pids)
        check(gain == 0 and n > 0 and total > 0, "job %s under the new "
              "master: %d stopped intervals, %d ticks while stopped, %d in "
              "all" % (name, n, gain, total))
    lab.start_mm(victim)
    lab.converged()
    m = [cells_of(consistent(lab, i)) for i in range(lab.m)]
    check(all(x == before[0] for x in m), "the restarted replica's matrix "
          "differs: %s" % m)


def stormctl(lab, *args):
    return subprocess.run([os.path.join(lab.build, "cli/stormctl"),
                           "--config", lab.conf] + list(args),
                          capture_output=True, text=True, timeout=60)


def bad_config(lab, key, value, what):
    conf = os.path.join(lab.dir, "bad-%s.conf" % key)
    with open(lab.conf) as f:
        text = f.read()
    text = text.replace("[cluster]\n", "[cluster]\n%s = %s\n" % (key, value),
                        1)
    # the key may already be there: the first one given is replaced
    lines, seen = [], False
    for ln in text.split("\n"):
        if ln.startswith(key + " =") and seen:
            continue
        seen |= ln.startswith(key + " =")
        lines.append(ln)
    with open(conf, "w") as f:
        f.write("\n".join(lines))
    r = subprocess.run([os.path.join(lab.build, "manager/mmd/storm-mm"),
                        "--config", conf, "--name", "mm0"],
                       capture_output=True, text=True, timeout=30)
    check(r.returncode == 2, "%s = %s: storm-mm exit %d, not 2 (%s)"
          % (key, value, r.returncode, r.stderr))
    check(what in r.stderr, "%s = %s: the error does not say %r: %s"
          % (key, value, what, r.stderr))


def test_bad_input(lab):
    # scheduler settings: unknown or out of range -> exit 2, the reason
    bad_config(lab, "sched_policy", "roundrobin", "no such policy")
    bad_config(lab, "mpl", "17", "mpl")
    bad_config(lab, "mpl", "0", "mpl")
    bad_config(lab, "quantum_us", "1500", "whole number of slices")
    bad_config(lab, "placement", "random", "placement")
    # impossible jobs: refused whole; exit 2 (usage: stormctl's own
    # checks) or 1 (the manager refused it), a message either way
    for args, what in ((["-n", "99"], "ranks"), (["-n", "0"], "ranks"),
                       (["-n", "-2"], ""), (["--time-limit", "-5"], ""),
                       (["--time-limit", "0"], "time-limit"),
                       (["--time-limit", "0x"], "")):
        r = stormctl(lab, "submit", *args, "/bin/true")
        check(r.returncode in (1, 2) and r.stderr.strip(), "submit %s: exit "
              "%d, stderr %r" % (args, r.returncode, r.stderr))
        check(what in r.stderr, "submit %s: %r does not mention %r"
              % (args, r.stderr, what))
    q = stormlab.call(lab.sock(0), {"op": "queue", "all": True})
    check(q.get("ok") and not q["jobs"], "a refused job entered the queue: %s"
          % q)
    # cancels landing during context switches (quantum = 2 slices)
    d0 = consistent(lab)["digest"]
    for k in range(12):
        a = submit(lab, "x%d" % k, 2)
        b = submit(lab, "y%d" % k, 2)
        wait_state(lab, a, ["RUNNING", "STAGING"])
        rep = stormlab.call(lab.sock(0), {"op": "cancel", "job": a})
        check(rep.get("ok"), "cancel: %s" % rep)
        rep = stormlab.call(lab.sock(0), {"op": "cancel", "job": b})
        check(rep.get("ok") or "already" in rep.get("error", ""),
              "cancel: %s" % rep)
        consistent(lab)
    stormlab.wait_for(lambda: all(
        j["state"] == "CANCELLED"
        for j in stormlab.call(lab.sock(0), {"op": "queue",
                                             "all": True})["jobs"]),
        30, "every job cancelled")
    m = consistent(lab)
    check(m["digest"] == d0 and all(c == 0 for r in m["cells"] for c in r),
          "matrix not back to empty after the cancels: %s" % m["cells"])
    stormlab.wait_for(lambda: not any(
        pids_of(lab, j) for j in range(1, 30)), 15, "no job process left")


G2 = gang()
G2_FAST = gang(quantum_us=2000, slice_us=1000)
def allowed(pid):
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith("Cpus_allowed_list:"):
                return line.split(":")[1].strip()
    return None


NCPU = len(os.sched_getaffinity(0))


def test_cpu_bind(lab):
    """A node whose configured cpus are its machine's binds each rank to
    the cpu of its scheduler column: two ranks of a job on one node, each
    on a cpu of its own; a second job in the other gang row takes the
    same cpus (its own columns)."""
    a = submit(lab, "a", NCPU, nodes="1")
    wait_state(lab, a, ["RUNNING"])
    pa = job_pids(lab, a, NCPU)
    cpus = sorted(allowed(p) for p in pa)
    want = sorted(str(c) for c in os.sched_getaffinity(0))
    check(cpus == want, "ranks bound to %s, want one each of %s" % (
        cpus, want))
    rep = stormlab.call(lab.sock(0), {"op": "cancel", "job": a})
    check(rep.get("ok"), "cancel: %s" % rep)
    wait_state(lab, a, ["CANCELLED"])
    print("cpu_bind: %d ranks on cpus %s" % (NCPU, ",".join(cpus)))


TESTS = {
    "cpu_bind": (test_cpu_bind, dict(managers=1, nodes=1, cpus=NCPU)),
    "context_switch": (test_context_switch,
                       dict(managers=1, nodes=2, extra=G2[0], slice_us=G2[1])),
    "mpl1_no_switch": (test_mpl1_no_switch, dict(managers=1, nodes=2)),
    "mixed_sizes": (test_mixed_sizes, dict(managers=1, nodes=2, cpus=2,
                                           extra=G2[0], slice_us=G2[1])),
    "node_failure": (test_node_failure, dict(managers=1, nodes=2,
                                             extra=G2[0], slice_us=G2[1])),
    "failover": (test_failover, dict(managers=3, nodes=2, extra=G2[0],
                                     slice_us=G2[1])),
    "bad_input": (test_bad_input, dict(managers=1, nodes=2,
                                       extra=G2_FAST[0],
                                       slice_us=G2_FAST[1])),
}


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in TESTS:
        print(__doc__, file=sys.stderr)
        return 2
    build, name = sys.argv[1], sys.argv[2]
    fn, kw = TESTS[name]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("SIGTERM"))
    stormlab.run_in_private_netns()
    d = tempfile.mkdtemp(prefix="storm-gang-")
    return stormlab.run_test(name, d, lambda: stormlab.Lab(build, d, **kw),
                             fn)


if __name__ == "__main__":
    sys.exit(main())
