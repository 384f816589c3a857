#!/usr/bin/env python3
"""Batch scripts and their steps (docs/batch.md) on a real local cluster
(3 node managers x 2 cpus, one manager).

Usage: test_batch.py BUILD TEST

  steps       `stormctl batch` of a script whose #STORM lines ask for 4
              tasks, a name and a time (the command line's -t wins):
              the script runs once, on the allocation's first node, with
              STORM_JOB_ID and STORM_NTASKS; `stormctl run` inside starts
              steps on the allocation's nodes (all 4 tasks without -n),
              each a job of its own with its parent, state, exit code
              and usage; the allocation COMPLETES with the script;
  wait        two steps that together want more than the allocation's
              task slots: the second waits PENDING, saying why, and runs
              once the first ends;
  cancel      cancelling an allocation cancels its running step, saying
              so, and leaves none of their processes;
  bad         a script without #!, an unknown option, a word that is no
              option, a missing value, an unterminated quote in #STORM
              lines: exit 2 naming the file and line, nothing queued; a
              step outside an allocation, larger than it, or from
              another user: refused (exit 1) saying why.

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

NOBODY = 65534


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def stormctl(lab):
    return os.path.join(os.path.abspath(lab.build), "cli/stormctl")


def ctl(lab, args, timeout=60, env=None, cwd=None):
    if env is None:  # the test's own, outside any allocation
        env = {k: v for k, v in os.environ.items() if k != "STORM_JOB_ID"}
    e = dict(env, STORM_CONFIG=lab.conf)
    return subprocess.run([stormctl(lab)] + args, capture_output=True,
                          text=True, timeout=timeout, env=e,
                          cwd=cwd or lab.dir)


def show(lab, job):
    return stormlab.call(lab.sock(0), {"op": "show", "job": int(job)})["job"]


def wait_end(lab, job, timeout_ms=60000):
    rep = stormlab.call(lab.sock(0), {"op": "wait", "client": "batch",
                                      "seq": job, "job": job,
                                      "timeout_ms": timeout_ms},
                        timeout=timeout_ms / 1000 + 5)
    check(rep.get("ok"), "job %d did not end: %s" % (job, rep))
    return show(lab, job)


def script(lab, name, text):
    path = os.path.join(lab.dir, name)
    with open(path, "w") as f:
        f.write(text)
    os.chmod(path, 0o644)  # batch runs it whatever its mode
    return path


def batch(lab, args):
    r = ctl(lab, ["batch"] + args)
    check(r.returncode == 0 and r.stdout.startswith("Submitted batch job"),
          "batch %s: %d %s %s" % (args, r.returncode, r.stdout, r.stderr))
    return int(r.stdout.split()[-1])


def steps_of(lab, alloc):
    return sorted((j for j in lab.queue(0) if j.get("parent") == alloc),
                  key=lambda j: j["id"])


def test_steps(lab):
    script(lab, "steps.sh", """#!/bin/sh
# a comment between them is fine
#STORM -n 4
#STORM --name 'two words' -t 1:00
echo "script on $STORM_NODENAME job $STORM_JOB_ID tasks $STORM_NTASKS"
$STORMCTL run -l /bin/sh -c \\
  'echo "step $STORM_STEP_ID rank $STORM_RANK of $STORM_SIZE job $STORM_JOB_ID"'
$STORMCTL run -n 2 /bin/sh -c 'exit 3'
echo "second step exit $?"
""")
    env = dict(os.environ, STORMCTL=stormctl(lab), STORM_CONFIG=lab.conf)
    env.pop("STORM_JOB_ID", None)
    r = ctl(lab, ["batch", "-t", "2:00", "steps.sh"], env=env)
    check(r.returncode == 0, "batch: %s" % r.stderr)
    job = int(r.stdout.split()[-1])
    a = wait_end(lab, job)
    check(a["state"] == "COMPLETED" and a.get("alloc") and
          a["name"] == "two words" and a["ranks"] == 4 and
          a.get("time_limit_ms") == 120000,
          "the allocation: %s" % a)
    out = open(os.path.join(lab.dir, "storm-%d.out" % job)).read()
    lines = out.splitlines()
    first = a["node_names"][0]
    check(lines[0] == "script on %s job %d tasks 4" % (first, job),
          "the script's own line: %r" % out)
    steps = [j for j in stormlab.call(lab.sock(0), {
        "op": "queue", "all": True})["jobs"] if j.get("parent") == job]
    check(len(steps) == 2, "two steps: %s" % steps)
    s1, s2 = sorted(steps, key=lambda j: j["id"])
    ranks = sorted(x.split(": ", 1)[1] for x in lines
                   if x.split(": ", 1)[-1].startswith("step"))
    check(ranks == ["step %d rank %d of 4 job %d" % (s1["id"], k, job)
                    for k in range(4)], "the first step's ranks: %r" % out)
    check("second step exit 3" in lines, "the second's exit: %r" % out)
    s1, s2 = show(lab, s1["id"]), show(lab, s2["id"])
    check(s1["state"] == "COMPLETED" and s1["ranks"] == 4 and
          set(s1["node_names"]) <= set(a["node_names"]) and
          len(s1.get("usage", [])) == 4,
          "step 1: %s" % s1)
    check(s2["state"] == "FAILED" and s2["exit_code"] == 3 and
          s2["ranks"] == 2, "step 2: %s" % s2)
    print("steps: allocation %d (4 tasks on %s) ran its script on %s; "
          "step %d COMPLETED on 4 tasks, step %d FAILED with 3" %
          (job, a["nodes"], first, s1["id"], s2["id"]))


def test_wait(lab):
    gate = os.path.join(lab.dir, "gate")
    up = os.path.join(lab.dir, "up")  # the first step's rank 0 runs
    for f in (gate, up):
        os.mkfifo(f)
        os.chmod(f, 0o666)
    fd = os.open(gate, os.O_RDWR)
    try:
        script(lab, "wait.sh", """#!/bin/sh
#STORM -n 2
$STORMCTL run -n 2 --name first-step /bin/sh -c \\
  '[ "$STORM_RANK" = 0 ] && echo > %s; read x < %s; echo first' &
read x < %s
$STORMCTL run -n 1 /bin/echo second
wait
""" % (up, gate, up))
        env = dict(os.environ, STORMCTL=stormctl(lab),
                   STORM_CONFIG=lab.conf)
        env.pop("STORM_JOB_ID", None)
        r = ctl(lab, ["batch", "wait.sh"], env=env)
        check(r.returncode == 0, "batch: %s" % r.stderr)
        job = int(r.stdout.split()[-1])

        def two():
            s = steps_of(lab, job)
            return len(s) == 2 and s[0]["state"] == "RUNNING" and \
                s[1]["state"] == "PENDING" and \
                "free task slot of allocation %d" % job in \
                s[1]["reason"] and s
        stormlab.wait_for(two, 30, "a running step and one waiting for "
                          "task slots")
        s = two()
        os.write(fd, b"\n\n")  # a line for each of its ranks
        a = wait_end(lab, job)
    finally:
        os.close(fd)
    out = open(os.path.join(lab.dir, "storm-%d.out" % job)).read()
    check(a["state"] == "COMPLETED" and "first" in out and
          "second" in out, "after the gate: %s %r" % (a, out))
    print("wait: step %d waited (%s), then ran" % (s[1]["id"],
                                                   s[1]["reason"]))


def test_cancel(lab):
    script(lab, "cancel.sh", """#!/bin/sh
#STORM -n 3
exec $STORMCTL run -n 3 /bin/sleep 3600
""")
    env = dict(os.environ, STORMCTL=stormctl(lab), STORM_CONFIG=lab.conf)
    env.pop("STORM_JOB_ID", None)
    r = ctl(lab, ["batch", "cancel.sh"], env=env)
    check(r.returncode == 0, "batch: %s" % r.stderr)
    job = int(r.stdout.split()[-1])
    stormlab.wait_for(lambda: [s for s in steps_of(lab, job)
                               if s["state"] == "RUNNING"], 30,
                      "the step running")
    step = steps_of(lab, job)[0]["id"]
    stormlab.wait_for(lambda: len(stormlab.pids_of(lab, job)) >= 4, 30,
                      "the script and the step's 3 ranks")
    r = ctl(lab, ["cancel", str(job)])
    check(r.returncode == 0, "cancel: %s" % r.stderr)
    a = wait_end(lab, job)
    s = show(lab, step)
    check(a["state"] == "CANCELLED" and s["state"] == "CANCELLED" and
          "allocation" in s["reason"], "after cancel: %s %s" % (a, s))
    stormlab.wait_for(lambda: not stormlab.pids_of(lab, job), 30,
                      "no process of the allocation or its step")
    print("cancel: allocation %d CANCELLED; step %d: %s; no process left" %
          (job, step, s["reason"]))


def test_bad(lab):
    before = max([j["id"] for j in lab.queue(0)] + [0])
    cases = [
        ("noshebang.sh", "#STORM -n 2\necho hi\n", ":1:", "#!"),
        ("unknown.sh", "#!/bin/sh\n#STORM -n 2\n#STORM --bogus 3\n",
         ":3:", "unknown option --bogus"),
        ("word.sh", "#!/bin/sh\n#STORM -n 2 eight\n", ":2:",
         "'eight' is not an option"),
        ("value.sh", "#!/bin/sh\n\n#STORM -t\n", ":3:", "needs a value"),
        ("quote.sh", "#!/bin/sh\n#STORM --name 'x\n", ":2:",
         "unterminated"),
        ("empty.sh", "#!/bin/sh\n#STORM\n", ":2:", "without options"),
    ]
    for name, text, where, what in cases:
        path = script(lab, name, text)
        r = ctl(lab, ["batch", path])
        check(r.returncode == 2 and path + where in r.stderr and
              what in r.stderr, "%s: exit %d, %r" % (name, r.returncode,
                                                     r.stderr))
    after = max([j["id"] for j in lab.queue(0)] + [0])
    check(after == before, "a bad script queued a job (%d -> %d)" %
          (before, after))
    # #STORM lines after the first command are the script's business
    path = script(lab, "late.sh", "#!/bin/sh\ntrue\n#STORM --bogus\n")
    job = batch(lab, [path])
    check(wait_end(lab, job)["state"] == "COMPLETED", "late #STORM")
    # steps: outside an allocation, too large, another user's
    plain = int(ctl(lab, ["submit", "/bin/true"]).stdout.split()[-1])
    env = dict(os.environ, STORM_JOB_ID=str(plain))
    r = ctl(lab, ["run", "/bin/true"], env=env)
    check(r.returncode == 1 and "not a batch allocation" in r.stderr,
          "a step of a plain job: %d %r" % (r.returncode, r.stderr))
    gate = script(lab, "hold.sh", "#!/bin/sh\n#STORM -n 2\n"
                  "while [ ! -e %s/release ]; do sleep 0.05; done\n" %
                  lab.dir)
    job = batch(lab, [gate])
    stormlab.wait_for(lambda: show(lab, job)["state"] == "RUNNING", 30,
                      "the allocation running")
    env = dict(os.environ, STORM_JOB_ID=str(job))
    r = ctl(lab, ["run", "-n", "3", "/bin/true"], env=env)
    check(r.returncode == 1 and "2 task slots" in r.stderr,
          "a step too large: %d %r" % (r.returncode, r.stderr))
    r = ctl(lab, ["run", "-N", "2", "/bin/true"], env=env)
    check(r.returncode == 1 and "-n alone" in r.stderr,
          "a step with -N: %d %r" % (r.returncode, r.stderr))
    r = subprocess.run(["setpriv", "--reuid=%d" % NOBODY,
                        "--regid=%d" % NOBODY, "--clear-groups",
                        stormctl(lab), "--config", lab.conf, "run",
                        "/bin/true"], capture_output=True, text=True,
                       timeout=60, cwd="/", env=env)
    check(r.returncode == 1 and "only its owner" in r.stderr,
          "another user's step: %d %r" % (r.returncode, r.stderr))
    open(os.path.join(lab.dir, "release"), "w").close()
    check(wait_end(lab, job)["state"] == "COMPLETED", "the held one")
    print("bad: scripts refused at their line, nothing queued; steps "
          "outside, too large, with -N, another user's: refused")


TESTS = {"steps": test_steps, "wait": test_wait, "cancel": test_cancel,
         "bad": test_bad}


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
    d = tempfile.mkdtemp(prefix="storm-batch-")
    os.chmod(d, 0o755)
    return stormlab.run_test(
        name, d, lambda: stormlab.Lab(build, d, managers=1, nodes=3, cpus=2),
        TESTS[name])


if __name__ == "__main__":
    sys.exit(main())
