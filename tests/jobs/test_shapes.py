#!/usr/bin/env python3
"""Job shapes and the command line as Slurm users expect them, on a real
local cluster (3 node managers x 2 cpus, one manager).

Usage: test_shapes.py BUILD TEST

  env      each rank's STORM_NODEID (its node's place in the job, in
           the order of the nodes' first ranks), STORM_LOCALID (its place
           on its node) and STORM_NODELIST (the job's nodes by name);
           rank 0's stdin a pipe (stormctl's, issue 17), the others'
           /dev/null;
  shape    -N, -c, --ntasks-per-node: ranks on their nodes as Slurm's
           block distribution puts them (-N 3 -n 5: 2, 2, 1; -c 2: one
           rank per 2-cpu node; -N 2 alone: a rank on each of 2 nodes);
           what the machine cannot hold is refused, saying why;
  time     -t in Slurm's syntax becomes the job's limit (MM, MM:SS,
           HH:MM:SS, D-HH, D-HH:MM:SS; a bare number is minutes);
           --time-limit MS still works; a job over its limit ends FAILED;
           bad values are refused with exit 2 and the syntax;
  chdir    --chdir DIR runs the ranks there (relative: from here); a
           directory that does not exist fails the job naming it;
  export   the environment as srun's: all of the caller's by default
           (but STORM_* and PMI_*: a job's own win), NONE, a list with
           a comma inside a value, ALL plus one; bad words refused;
  drain    a node drained under a running job: DRAINING with the
           reason, new jobs go elsewhere, the job completes, then
           DRAINED; a user may not drain; resume puts it back;
  deps     --dependency afterok/afternotok: a job waits for another's
           end, then runs, or is cancelled saying why; a dependency on
           a job that does not exist, or another user's, is refused;
  array    --array 0-5%2: six jobs, each its STORM_ARRAY_TASK_ID, never
           more than two running at once; bad ranges refused;
  globals  global options after the command (`queue --json`, `run
           --json`... , `--config` last) mean what they mean before it.

Exit: 0 pass, 1 fail, 77 skipped (not root).
"""

import json
import os
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


def ctl(lab, args, timeout=60, cwd=None, config_last=False, env=None):
    argv = [os.path.join(os.path.abspath(lab.build), "cli/stormctl")]
    argv += args + ["--config", lab.conf] if config_last else \
        ["--config", lab.conf] + args
    return subprocess.run(argv, capture_output=True, text=True,
                          timeout=timeout, cwd=cwd, env=env)


def last_job(lab):
    return max(j["id"] for j in lab.queue(0))


def show(lab, job):
    return stormlab.call(lab.sock(0), {"op": "show", "job": int(job)})["job"]


def test_env(lab):
    r = ctl(lab, ["run", "-n", "5", "-l", "/bin/sh", "-c",
                  "echo $STORM_NODEID $STORM_LOCALID $STORM_NODELIST"])
    got = sorted(r.stdout.splitlines())
    want = ["0: 0 0 nm1,nm2,nm3", "1: 0 1 nm1,nm2,nm3",
            "2: 1 0 nm1,nm2,nm3", "3: 1 1 nm1,nm2,nm3",
            "4: 2 0 nm1,nm2,nm3"]
    check(r.returncode == 0 and got == want,
          "STORM_* per rank: exit %d\n%s\n%s" % (r.returncode, r.stdout,
                                                r.stderr))
    print("env: %s" % "; ".join(got))
    # stdin (issue 17): rank 0 of a run reads a pipe (stormctl's stdin,
    # here empty), every other rank /dev/null
    r = ctl(lab, ["run", "-n", "3", "-l", "/bin/sh", "-c",
                  "readlink /proc/self/fd/0 | cut -d: -f1"])
    got = sorted(r.stdout.splitlines())
    check(r.returncode == 0 and
          got == ["0: pipe", "1: /dev/null", "2: /dev/null"],
          "stdin per rank: exit %d\n%s\n%s" % (r.returncode, r.stdout,
                                                r.stderr))
    print("env: stdin %s" % "; ".join(got))


def node_of_ranks(out):
    """'R: NODE' lines -> [node of rank 0, 1, ...]."""
    pairs = sorted((int(line.split(":")[0]), line.split()[1])
                   for line in out.splitlines() if ":" in line)
    return [n for _, n in pairs]


def test_shape(lab):
    where = ["/bin/sh", "-c", "echo $STORM_NODENAME"]
    for args, want in ((["-N", "3", "-n", "5"],
                        ["nm1", "nm1", "nm2", "nm2", "nm3"]),
                       (["-c", "2", "-n", "3"], ["nm1", "nm2", "nm3"]),
                       (["--ntasks-per-node", "1", "-n", "2"],
                        ["nm1", "nm2"]),
                       (["-N", "2"], ["nm1", "nm2"])):
        r = ctl(lab, ["run", "-l"] + args + where)
        got = node_of_ranks(r.stdout)
        check(r.returncode == 0 and got == want,
              "%s: want %s, got %s (exit %d %s)" % (" ".join(args), want,
                                                   got, r.returncode,
                                                   r.stderr))
    j = show(lab, last_job(lab))
    check(j.get("node_count") == 2, "-N 2: the job %s" % j)
    for args, why in ((["-c", "3"], "3 cpus per task, but the largest "
                       "node has 2"),
                      (["-N", "4", "-n", "4"], "4 nodes requested but the "
                       "machine has only 3"),
                      (["-n", "4", "--ntasks-per-node", "1"],
                       "need more than the machine holds (3)")):
        r = ctl(lab, ["run"] + args + ["/bin/true"])
        check(r.returncode != 0 and why in r.stderr,
              "%s: exit %d %s" % (" ".join(args), r.returncode, r.stderr))
    r = ctl(lab, ["run", "-N", "3", "-n", "2", "/bin/true"])
    check(r.returncode == 2 and "more nodes than" in r.stderr, r.stderr)
    print("shape: -N 3 -n 5 on 2, 2, 1; -c 2 one per node; "
          "--ntasks-per-node 1; refusals name the cause")


def test_time(lab):
    for arg, ms in (("90", 90 * 60000), ("1:30", 90000),
                    ("2:00:05", 7205000), ("1-2", 93600000),
                    ("1-02:03:04", 93784000)):
        r = ctl(lab, ["run", "-t", arg, "/bin/true"])
        j = show(lab, last_job(lab))
        check(r.returncode == 0 and j.get("time_limit_ms") == ms,
              "-t %s: want %d ms, job %s" % (arg, ms, j))
    r = ctl(lab, ["run", "--time-limit", "1500", "/bin/true"])
    check(show(lab, last_job(lab)).get("time_limit_ms") == 1500,
          "--time-limit 1500")
    for bad in ("0", "1:2:3:4", "x", "1-", "-5", "1:xx", ""):
        r = ctl(lab, ["run", "-t", bad, "/bin/true"])
        check(r.returncode == 2 and "is not a time limit" in r.stderr and
              "HH:MM:SS" in r.stderr,
              "-t %r: exit %d %s" % (bad, r.returncode, r.stderr))
    # one second, then FAILED for its limit
    r = ctl(lab, ["run", "-t", "0:01", "/bin/sleep", "30"], timeout=60)
    j = show(lab, last_job(lab))
    check(r.returncode != 0 and j["state"] == "FAILED" and
          "time limit" in j.get("reason", ""), "over -t 0:01: %s" % j)
    print("time: -t forms and their limits right; over the limit: %s" %
          j.get("reason"))


def test_chdir(lab):
    d = tempfile.mkdtemp(prefix="chdir-", dir=lab.dir)
    os.chmod(d, 0o755)
    r = ctl(lab, ["run", "--chdir", os.path.basename(d), "/bin/pwd"],
            cwd=lab.dir)
    check(r.returncode == 0 and r.stdout.strip() == d,
          "--chdir relative: exit %d %r %s" % (r.returncode, r.stdout,
                                              r.stderr))
    r = ctl(lab, ["run", "--chdir", "/nonexistent-dir", "/bin/pwd"])
    j = show(lab, last_job(lab))
    check(r.returncode != 0 and j["state"] == "FAILED" and
          "cannot enter /nonexistent-dir: No such file or directory" in
          j.get("reason", ""),
          "--chdir to nothing: exit %d, job %s %s" % (r.returncode, j,
                                                     r.stderr))
    print("chdir: ran in %s; a missing one: %s" % (d, j.get("reason")))


def test_export(lab):
    # (STORM_JOB_ID would make run a step of that allocation)
    env = dict(os.environ, SHAPES_A="a b", SHAPES_B="0,1",
               STORM_RANK="999", PMI_RANK="7")
    env.pop("STORM_JOB_ID", None)
    show_env = ["/bin/sh", "-c", "echo A=${SHAPES_A-unset} "
                "B=${SHAPES_B-unset} C=${SHAPES_C-unset} J=$STORM_JOB_ID "
                "R=$STORM_RANK P=${PMI_RANK-unset}"]

    def run_env(extra):
        r = ctl(lab, ["run"] + extra + show_env, env=env)
        check(r.returncode == 0, "run %s: %s" % (extra, r.stderr))
        return r.stdout.strip()
    out = run_env([])
    job = last_job(lab)
    check(out == "A=a b B=0,1 C=unset J=%d R=0 P=unset" % job,
          "default (all): %r" % out)
    out = run_env(["--export=NONE"])
    check(out.startswith("A=unset B=unset C=unset"), "NONE: %r" % out)
    out = run_env(["--export", "SHAPES_A,SHAPES_C=7,8,SHAPES_B"])
    check(out.startswith("A=a b B=0,1 C=7,8"), "a list: %r" % out)
    out = run_env(["--export", "ALL,SHAPES_C=3"])
    check(out.startswith("A=a b B=0,1 C=3"), "ALL plus one: %r" % out)
    for bad in ("", "1X=2", "STORM_JOB_ID=5", "SHAPES_UNSET_HERE"):
        r = ctl(lab, ["run", "--export", bad, "/bin/true"], env=env)
        check(r.returncode == 2 and "--export" in r.stderr,
              "--export %r: %d %s" % (bad, r.returncode, r.stderr))
    print("export: all by default (STORM_*, PMI_* the job's own), NONE, "
          "lists, ALL plus one; bad words refused")


def nodes_by_name(lab):
    r = ctl(lab, ["nodes", "--json"])
    check(r.returncode == 0, "nodes: %s" % r.stderr)
    return {n["name"]: n for n in json.loads(r.stdout)["nodes"]}


def test_drain(lab):
    go = os.path.join(lab.dir, "drain-go")
    r = ctl(lab, ["submit", "-n", "2", "-w", "1", "/bin/sh", "-c",
                  "while [ ! -e %s ]; do sleep 0.05; done" % go])
    check(r.returncode == 0, "submit: %s" % r.stderr)
    job = int(r.stdout.split()[-1])
    stormlab.wait_for(lambda: show(lab, job)["state"] == "RUNNING", 30,
                      "the job running on nm1")
    r = ctl(lab, ["drain", "nm1", "--reason", "bad DIMM"])
    check(r.returncode == 0 and "Drained node nm1 (1)" in r.stdout,
          "drain: %d %s %s" % (r.returncode, r.stdout, r.stderr))
    n = nodes_by_name(lab)["nm1"]
    check(n["state"] == "DRAINING" and n["reason"] == "bad DIMM",
          "nm1 while its job runs: %s" % n)
    # (a buddy block of 2: a whole node, not the drained one)
    r = ctl(lab, ["run", "-n", "2", "-l", "/bin/sh", "-c",
                  "echo $STORM_NODENAME"])
    got = set(line.split()[1] for line in r.stdout.splitlines())
    check(r.returncode == 0 and got and got <= {"nm2", "nm3"},
          "a job while nm1 drains: %s %s" % (got, r.stderr))
    # a user may not, and nothing changes
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534",
                        "--clear-groups",
                        os.path.join(os.path.abspath(lab.build),
                                     "cli/stormctl"),
                        "--config", lab.conf, "resume", "nm1"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode != 0 and "only root may take node nm1 back into "
          "service" in r.stderr, "nobody's resume: %d %s" %
          (r.returncode, r.stderr))
    open(go, "w").close()
    rep = stormlab.call(lab.sock(0), {"op": "wait", "client": "drain",
                                      "seq": job, "job": job,
                                      "timeout_ms": 30000}, timeout=35)
    check(rep.get("ok") and show(lab, job)["state"] == "COMPLETED",
          "the drained node's job: %s" % rep)
    stormlab.wait_for(lambda: nodes_by_name(lab)["nm1"]["state"] ==
                      "DRAINED", 30, "nm1 DRAINED")
    r = ctl(lab, ["resume", "nm[1-1]"])
    check(r.returncode == 0 and
          nodes_by_name(lab)["nm1"]["state"] == "UP", "resume: %s" %
          r.stderr)
    r = ctl(lab, ["run", "-w", "1", "/bin/true"])
    check(r.returncode == 0, "a job on nm1 after resume: %s" % r.stderr)
    for bad, why in ((["drain", "nm9", "--reason", "x"],
                      "no compute node is called 'nm9'"),
                     (["drain", "nm2"], "say why: --reason")):
        r = ctl(lab, bad)
        check(r.returncode == 2 and why in r.stderr,
              "%s: %d %s" % (bad, r.returncode, r.stderr))
    print("drain: DRAINING under its job, new jobs elsewhere, DRAINED "
          "after; users refused; resume")


def submit(lab, args):
    r = ctl(lab, ["submit"] + args)
    check(r.returncode == 0, "submit %s: %s" % (args, r.stderr))
    return int(r.stdout.split()[3 if "array" in r.stdout else -1]
               .rstrip(":"))


def wait_end(lab, job, timeout_ms=60000):
    rep = stormlab.call(lab.sock(0), {"op": "wait", "client": "jobs",
                                      "seq": job, "job": job,
                                      "timeout_ms": timeout_ms},
                        timeout=timeout_ms / 1000 + 5)
    check(rep.get("ok"), "job %d did not end: %s" % (job, rep))
    return show(lab, job)


def test_deps(lab):
    go = os.path.join(lab.dir, "deps-go")
    first = submit(lab, ["/bin/sh", "-c",
                         "while [ ! -e %s ]; do sleep 0.05; done" % go])
    ok = submit(lab, ["-d", "afterok:%d" % first, "/bin/true"])
    notok = submit(lab, ["-d", "afternotok:%d" % first, "/bin/true"])
    stormlab.wait_for(lambda: "waiting for job %d to end (afterok)" % first
                      in show(lab, ok).get("reason", ""), 30,
                      "the dependent job waiting")
    check(show(lab, ok)["state"] == "PENDING", "started too soon")
    open(go, "w").close()
    check(wait_end(lab, ok)["state"] == "COMPLETED", "afterok job")
    j = wait_end(lab, notok)
    check(j["state"] == "CANCELLED" and "dependency never satisfied: job "
          "%d COMPLETED (afternotok:%d)" % (first, first) in j["reason"],
          "afternotok: %s" % j)
    r = ctl(lab, ["submit", "-d", "afterok:9999", "/bin/true"])
    check(r.returncode != 0 and "dependency on job 9999, which does not "
          "exist" in r.stderr, r.stderr)
    r = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534",
                        "--clear-groups",
                        os.path.join(os.path.abspath(lab.build),
                                     "cli/stormctl"),
                        "--config", lab.conf, "submit", "-d",
                        "afterany:%d" % first, "/bin/true"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode != 0 and "may depend only on its owner's jobs" in
          r.stderr, "nobody on root's job: %s" % r.stderr)
    r = ctl(lab, ["submit", "-d", "after:1", "/bin/true"])
    check(r.returncode == 2 and "is not TYPE:JOB" in r.stderr, r.stderr)
    print("deps: afterok waited then ran; afternotok cancelled saying "
          "why; missing and foreign jobs refused")


def test_array(lab):
    out = os.path.join(lab.dir, "arr-%j.out")
    first = submit(lab, ["--array", "0-5%2", "-o", out, "/bin/sh", "-c",
                         "sleep 0.3; echo task $STORM_ARRAY_TASK_ID "
                         "of $STORM_ARRAY_JOB_ID"])
    spans, tasks = [], []
    for k in range(6):
        j = wait_end(lab, first + k)
        check(j["state"] == "COMPLETED" and j.get("array_id") == first and
              j.get("array_task") == k, "task %d: %s" % (k, j))
        spans.append((j["start_ms"], j["end_ms"]))
        with open(os.path.join(lab.dir, "arr-%d.out" % (first + k))) as f:
            tasks.append(f.read().strip())
    check(tasks == ["task %d of %d" % (k, first) for k in range(6)],
          "tasks printed %s" % tasks)
    most = max(sum(1 for s, e in spans if s <= t < e) for t, _ in spans)
    check(most <= 2, "%d tasks ran at once, the most is 2: %s" %
          (most, spans))
    for bad in ("5-1", "x", "0-20000", "1-4%0"):
        r = ctl(lab, ["submit", "--array", bad, "/bin/true"])
        check(r.returncode == 2 and "--array" in r.stderr,
              "--array %s: %d %s" % (bad, r.returncode, r.stderr))
    print("array: 6 tasks, each its number, at most %d at once; bad "
          "ranges refused" % most)


def test_globals(lab):
    r = ctl(lab, ["queue", "--json"])
    check(r.returncode == 0 and json.loads(r.stdout).get("ok") is True,
          "queue --json: %d %s %s" % (r.returncode, r.stdout, r.stderr))
    r = ctl(lab, ["nodes", "--json"], config_last=True)
    check(r.returncode == 0 and len(json.loads(r.stdout)["nodes"]) == 3,
          "nodes --json --config: %d %s %s" % (r.returncode, r.stdout,
                                               r.stderr))
    # after the program, words are the program's
    r = ctl(lab, ["run", "/bin/echo", "--json"])
    check(r.returncode == 0 and r.stdout.strip() == "--json",
          "run /bin/echo --json: %r" % r.stdout)
    r = ctl(lab, ["queue", "--bogus"])
    check(r.returncode == 2 and "--bogus" in r.stderr, r.stderr)
    print("globals: queue --json, nodes --json --config, run PROG --json "
          "(the program's)")


TESTS = {"env": test_env, "shape": test_shape, "time": test_time,
         "chdir": test_chdir,
         "export": test_export, "drain": test_drain, "deps": test_deps,
         "array": test_array,
         "globals": test_globals}


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in TESTS:
        print(__doc__, file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("SKIP: needs root (daemons as root)", file=sys.stderr)
        return 77
    build, name = sys.argv[1], sys.argv[2]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("SIGTERM"))
    stormlab.run_in_private_netns()
    d = tempfile.mkdtemp(prefix="storm-shapes-")
    os.chmod(d, 0o755)
    return stormlab.run_test(
        name, d, lambda: stormlab.Lab(build, d, managers=1, nodes=3, cpus=2),
        TESTS[name])


if __name__ == "__main__":
    sys.exit(main())
