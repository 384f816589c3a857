#!/usr/bin/env python3
"""Coordinated checkpoints of running jobs on a real cluster (issue 16).

Usage: test_ckpt_jobs.py BUILD_DIR TEST

Each test brings up real storm-mm / storm-nm processes in a network
namespace of its own (stormlab) and runs tests/ckpt/ckpt_loop as the job:
  commit     `stormctl checkpoint` of a 2-rank job over 2 node managers:
             epoch 1 is committed (every node's images, then the
             master's compare), show lists it; a second one is a delta
             (smaller); the images are the job owner's (0600) and another
             user can read none; the job still ends with the result an
             uninterrupted run prints;
  refused    a job with a thread: the epoch fails with the rank and the
             reason, the job runs on and ends well; a finished job, an
             unknown one and another user's are refused with the reason.
  restart    `stormctl restart` of a checkpointed job: its ranks end and
             are restored from epoch 1's images; then `stormctl
             checkpoint --requeue`: epoch 2 committed, the job queued
             again and restored from it; it ends with an
             uninterrupted run's result; an unknown epoch, a job without
             an epoch and an ended job are refused;
  node_kill  kill -9 of a node manager (and so its ranks) of a job with
             a committed epoch copied to ckpt_shared_dir: the job goes
             back to the queue by itself, runs on from the epoch on the
             nodes left and ends with an uninterrupted run's result.
  buddy      no shared directory: epoch 1 of a 2-rank job is on L1+L2
             (each node's images copied to the next node manager); kill
             -9 of one of its nodes: the job runs on from the epoch on
             the nodes left, each rank's images taken from the node that
             keeps them (a copy, or the image itself) where its new node
             has none, and ends with an uninterrupted run's result;
             with ckpt_buddy_kib = 0 (no copy) the epoch is L1 only.
  requeue    a job with --requeue and no checkpoint: kill -9 of a node
             manager queues it again, it runs from the start on the
             nodes left and ends well; without --requeue it FAILS.
  rerun_output  `stormctl run` of ranks printing a line every tenth step,
             checkpointed, then restarted from the epoch: every line
             reaches the client exactly once, stderr too, no mark.
  bcs        a BCS-MPI job of ANY_SOURCE receives on one node,
             checkpointed, its node killed: it runs on from the epoch on
             the other node and prints byte for byte what an
             uninterrupted run prints.
  bcs_spread the same with 4 ranks over 2 of 4 node managers: the nodes
             cut the job after one same round; one killed, the job runs
             on from the epoch on two others, commits an epoch again,
             and prints what an uninterrupted run prints.
  compact    ckpt_chain = 2: after a full image and two deltas the chain is
             folded into a full image in the background (here and in
             L3), the images before the full one before go, and a
             restart from the last epoch ends well.
  failover   three replicas: kill -9 of the strobe master right after a
             checkpoint is asked for, and again right after a restart:
             the epoch is committed and the restart happens under the new
             master; the job ends with an uninterrupted run's result.
  disk_full  the node-local image directory (ckpt_dir) is a 4 MiB tmpfs:
             the epoch aborts with "No space left on device" naming the
             node and rank, nothing of it is left, the job runs on and
             ends well.
  periodic   `--checkpoint 2`: the strobe takes an epoch every 2 s by
             itself (the last ckpt_keep kept); `--checkpoint auto` is
             accepted; an interval of 0, a negative one or one of more
             than a year is refused (exit 2) with what is wrong.
  limits     ckpt_quota_mib = 12, every image full (ckpt_chain = 0),
             ckpt_linger_s = 1: a first epoch (8.5 MB a node) commits, a
             second fails with the quota named, the job runs on; once it
             ended its images leave the nodes a second later.
Exit: 0 pass, 1 fail.
"""

import glob
import json
import os
import signal
import stat
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "harness"))
import stormlab  # noqa: E402

NOBODY = 65534


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def stormctl(lab, args, uid=None, timeout=60):
    pre = []
    if uid is not None:
        pre = ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid,
               "--clear-groups"]
    return subprocess.run(pre + [os.path.join(lab.build, "cli/stormctl"),
                                 "--config", lab.conf] + args,
                          capture_output=True, text=True, timeout=timeout)


def loop_prog(lab):
    return os.path.join(lab.build, "tests/ckpt_loop")


def out_path(lab, args):
    d = os.path.join(lab.dir, "out")
    if not os.path.isdir(d):
        os.mkdir(d)
        os.chown(d, NOBODY, NOBODY)  # the job's user writes its output
    return os.path.join(d, "out-%d.txt" % len(args))


def submit(lab, args, uid=None, opts=()):
    r = stormctl(lab, ["--json", "submit", "-n", "2"] + list(opts) + ["-o",
                       out_path(lab, args), "-e", out_path(lab, args) +
                       ".err",
                       "--", loop_prog(lab)] + args, uid=uid)
    check(r.returncode == 0, "submit: %s %s" % (r.stdout, r.stderr))
    return json.loads(r.stdout)["job"]


ALIVE = [0]  # the replica show asks (the failover test moves it)


def show(lab, job):
    rep = stormlab.call(lab.sock(ALIVE[0]), {"op": "show", "job": job})
    check(rep.get("ok"), "show %d: %s" % (job, rep))
    return rep["job"]


def wait_state(lab, job, states, timeout=60):
    stormlab.wait_for(lambda: show(lab, job)["state"] in states, timeout,
                      "job %d to be %s" % (job, "/".join(states)))
    return show(lab, job)


def wait_started(lab, job, n=2):
    """Running, and every rank past its setup (it printed "started")."""
    wait_state(lab, job, ["RUNNING"])
    stormlab.wait_for(lambda: len(stormlab.pids_of(lab, job)) == n, 30,
                      "job %d's %d ranks" % (job, n))


def images(lab, job, epoch):
    return sorted(glob.glob(os.path.join(
        lab.dir, "ramdisk", "lab-nm*", "ckpt", "job-%d" % job,
        "epoch-%d" % epoch, "rank-*.img")))


def checkpoint(lab, job, uid=None):
    r = stormctl(lab, ["--json", "checkpoint", str(job)], uid=uid)
    return r


def committed(lab, job):
    """`stormctl checkpoint` of job as its owner, which must commit."""
    r = checkpoint(lab, job, uid=NOBODY)
    check(r.returncode == 0, "checkpoint: %s %s" % (r.stdout, r.stderr))
    return r


def test_commit(lab):
    prog_args = ["16", "2", "6"]
    job = submit(lab, prog_args, uid=NOBODY)
    wait_started(lab, job)
    r = committed(lab, job)
    first = json.loads(r.stdout)
    check(first["epoch"] == 1, "first epoch: %s" % first)
    j = show(lab, job)
    check([e["epoch"] for e in j["checkpoints"]] == [1],
          "catalog: %s" % j.get("checkpoints"))
    full = j["checkpoints"][0]["bytes"]
    check(full > 2 * 16 << 20, "epoch 1: %d bytes for 2 x 16 MiB" % full)
    imgs = images(lab, job, 1)
    check(len(imgs) == 2, "images of epoch 1: %s" % imgs)
    for p in imgs:
        st = os.stat(p)
        check(stat.S_IMODE(st.st_mode) == 0o600 and st.st_uid == NOBODY,
              "%s: mode %o uid %d" % (p, st.st_mode, st.st_uid))
    # another user can read none of them
    rd = subprocess.run(["setpriv", "--reuid=1", "--regid=1",
                         "--clear-groups", "cat", imgs[0]],
                        capture_output=True)
    check(rd.returncode != 0, "another user read %s" % imgs[0])
    # the second: a delta, a fraction of the first
    r = checkpoint(lab, job, uid=NOBODY)
    check(r.returncode == 0, "checkpoint 2: %s %s" % (r.stdout, r.stderr))
    j = show(lab, job)
    check([e["epoch"] for e in j["checkpoints"]] == [1, 2],
          "catalog: %s" % j.get("checkpoints"))
    delta = j["checkpoints"][1]["bytes"]
    check(delta < full / 2, "epoch 2 (a delta): %d bytes, epoch 1 %d" % (
        delta, full))
    print("commit: epoch 1 %d bytes, epoch 2 %d bytes, stopped %.1f/%.1f "
          "ms" % (full, delta, j["checkpoints"][0]["stop_ms"],
                  j["checkpoints"][1]["stop_ms"]))
    j = wait_state(lab, job, ["COMPLETED", "FAILED"], timeout=90)
    check(j["state"] == "COMPLETED", "job: %s" % j)
    # what it printed is an uninterrupted run's
    env = dict(os.environ)
    want = set()
    for rank in ("0", "1"):
        env["STORM_RANK"] = rank
        out = subprocess.run([loop_prog(lab)] + prog_args, env=env,
                             capture_output=True, text=True).stdout
        want.add(out.splitlines()[-1])
    got = open(out_path(lab, prog_args)).read()
    for line in want:
        check(line in got, "output %r lacks %r" % (got, line))


def test_refused(lab):
    job = submit(lab, ["4", "1", "4", "thread"])
    wait_started(lab, job)
    r = checkpoint(lab, job)
    check(r.returncode == 1 and "threads" in r.stderr and "rank" in
          r.stderr, "a job with a thread: %d %s" % (r.returncode, r.stderr))
    j = show(lab, job)
    check(j["state"] == "RUNNING" and not j["checkpoints"] and
          "threads" in j.get("checkpoint_error", ""),
          "after the refusal: %s" % j)
    # another user's job
    r = checkpoint(lab, job, uid=NOBODY)
    check(r.returncode == 1 and "belongs to" in r.stderr,
          "another user's job: %d %s" % (r.returncode, r.stderr))
    j = wait_state(lab, job, ["COMPLETED", "FAILED"], timeout=60)
    check(j["state"] == "COMPLETED", "job after a failed epoch: %s" % j)
    r = checkpoint(lab, job)
    check(r.returncode == 1 and "already ended" in r.stderr,
          "a finished job: %d %s" % (r.returncode, r.stderr))
    r = checkpoint(lab, 999)
    check(r.returncode == 1 and "no job 999" in r.stderr,
          "an unknown job: %d %s" % (r.returncode, r.stderr))
    print("refused: %s" % j.get("checkpoint_error"))


def uninterrupted(lab, prog_args):
    """The "done" lines of each rank run alone, without Storm."""
    env = dict(os.environ)
    want = set()
    for rank in ("0", "1"):
        env["STORM_RANK"] = rank
        out = subprocess.run([loop_prog(lab)] + prog_args, env=env,
                             capture_output=True, text=True).stdout
        want.add(out.splitlines()[-1])
    return want


def check_result(lab, job, prog_args, timeout=120):
    j = wait_state(lab, job, ["COMPLETED", "FAILED", "CANCELLED"],
                   timeout=timeout)
    check(j["state"] == "COMPLETED", "job: %s" % j)
    got = open(out_path(lab, prog_args)).read()
    for line in uninterrupted(lab, prog_args):
        check(got.count(line) == 1, "output %r: %r not once" % (got, line))
    return j


def test_restart(lab):
    prog_args = ["8", "2", "10"]
    job = submit(lab, prog_args, uid=NOBODY)
    wait_started(lab, job)
    r = stormctl(lab, ["restart", str(job)], uid=NOBODY)
    check(r.returncode == 1 and "no committed checkpoint" in r.stderr,
          "restart without an epoch: %d %s" % (r.returncode, r.stderr))
    r = committed(lab, job)
    r = stormctl(lab, ["restart", "--epoch", "5", str(job)], uid=NOBODY)
    check(r.returncode == 1 and "no committed epoch 5" in r.stderr,
          "restart from an unknown epoch: %d %s" % (r.returncode, r.stderr))
    before = sorted(stormlab.pids_of(lab, job))
    r = stormctl(lab, ["--json", "restart", str(job)], uid=NOBODY)
    check(r.returncode == 0 and json.loads(r.stdout)["epoch"] == 1,
          "restart: %d %s %s" % (r.returncode, r.stdout, r.stderr))
    stormlab.wait_for(lambda: show(lab, job)["state"] == "RUNNING" and
                      sorted(stormlab.pids_of(lab, job)) not in
                      ([], before) and
                      len(stormlab.pids_of(lab, job)) == 2, 60,
                      "job %d restored" % job)
    j = show(lab, job)
    check(j.get("restore_epoch") == 1 and j.get("restarts") == 1,
          "after the restart: %s" % j)
    # checkpoint --requeue: epoch 2 committed, the job off its nodes and
    # back, running on from it
    r = stormctl(lab, ["checkpoint", "--requeue", str(job)], uid=NOBODY)
    check(r.returncode == 0 and "epoch 2 committed" in r.stdout and
          "requeued" in r.stdout, "checkpoint --requeue: %d %s %s" % (
              r.returncode, r.stdout, r.stderr))
    stormlab.wait_for(lambda: show(lab, job).get("restarts") == 2 and
                      show(lab, job)["state"] == "RUNNING" and
                      len(stormlab.pids_of(lab, job)) == 2, 60,
                      "job %d requeued and restored" % job)
    check(show(lab, job).get("restore_epoch") == 2, "after --requeue: %s" %
          show(lab, job))
    j = check_result(lab, job, prog_args)
    r = stormctl(lab, ["restart", str(job)])
    check(r.returncode == 1 and "already ended" in r.stderr,
          "restart of an ended job: %d %s" % (r.returncode, r.stderr))
    print("restart: job %d ran on from epoch 1 and ended well" % job)


def test_rerun_output(lab):
    """An interactive run restarted from an epoch prints every line once:
    what the restored ranks print again is dropped by the managers."""
    args = ["8", "1", "6", "say"]
    run = stormlab.CtlRun(lab, ["-n", "2", "--", loop_prog(lab)] + args,
                          NOBODY)
    lines, errs, ids = run.lines, run.errs, []
    try:
        stormlab.wait_for(lambda: sum(l.startswith("step ") for l in lines)
                          >= 4, 30, "the run's first steps")

        def running():
            ids[:] = [j["id"] for j in stormlab.call(
                lab.sock(0), {"op": "queue"}).get("jobs", [])
                      if j.get("state") == "RUNNING"]
            return ids
        stormlab.wait_for(running, 10, "the run's job")
        job = ids[0]
        r = committed(lab, job)
        after = len(lines)
        stormlab.wait_for(lambda: len(lines) >= after + 4, 30,
                          "steps after the epoch")
        r = stormctl(lab, ["restart", str(job)], uid=NOBODY)
        check(r.returncode == 0, "restart: %s %s" % (r.stdout, r.stderr))
        rc = run.wait(120)
    finally:
        run.stop()
    check(rc == 0, "run: exit %d: %s" % (rc, "".join(errs)))
    check(show(lab, job).get("restarts") == 1, "restarted: %s" %
          show(lab, job))
    want = ["step %d %d\n" % (r, s) for r in (0, 1) for s in
            range(0, 600, 10)]
    for line in want + ["started 0\n", "started 1\n"]:
        check(lines.count(line) == 1, "%r %d times in %r" % (
            line, lines.count(line), "".join(lines)))
    check(not [l for l in lines if l.startswith("storm:")],
          "a rerun marked: %r" % "".join(lines))
    check(sum(l.startswith("done ") for l in lines) == 2,
          "done: %r" % "".join(lines))
    check(sorted(errs) == ["half 0\n", "half 1\n"], "stderr: %r" % errs)
    print("rerun_output: job %d restarted from epoch 1; %d lines, each once"
          % (job, len(lines)))


SAN = os.environ.get("CKPT_SANITIZE", "none")


def build_bcs(lab):
    """tests/ckpt/bcs_anyloop.c built with the build tree's bcsmpicc
    into the lab's directory (readable by the job's user)."""
    out = os.path.join(lab.dir, "bcs_anyloop")
    env = dict(os.environ)
    env.pop("LD_LIBRARY_PATH", None)
    r = subprocess.run([os.path.join(lab.build, "bcsmpi", "bcsmpicc"),
                        "-O1", "-o", out, os.path.join(
                            os.path.dirname(os.path.abspath(__file__)),
                            "bcs_anyloop.c")],
                       capture_output=True, text=True, env=env, timeout=120)
    check(r.returncode == 0, "bcsmpicc: %s" % r.stderr)
    return out


def running_job(lab):
    ids = []

    def running():
        ids[:] = [j["id"] for j in stormlab.call(
            lab.sock(ALIVE[0]), {"op": "queue"}).get("jobs", [])
                  if j.get("state") == "RUNNING"]
        return ids
    stormlab.wait_for(running, 15, "a running job")
    return ids[0]


def test_bcs(lab):
    """A BCS-MPI job of ANY_SOURCE receives on one node: checkpointed
    (its engine's state and segment with its ranks), its node killed, it
    runs on from the epoch on the other node and prints byte for byte
    what an uninterrupted run prints."""
    bcs_killed(lab, "bcs", 3, 1, 150)


def test_bcs_spread(lab):
    """The same over two nodes (4 ranks, 2 a node): both nodes cut the
    job after one round and capture it there, so the epoch holds no
    section in flight; one node killed, the job runs on from the epoch
    on two others, whose engines read the images' nodes as theirs, and
    prints what an uninterrupted run prints; a second epoch after the
    restart commits too."""
    bcs_killed(lab, "bcs_spread", 4, 2, 300)


def bcs_killed(lab, name, ranks, nnodes, iters):
    prog = build_bcs(lab)
    args = ["--mpi=bcs", "-n", str(ranks), "--", prog, str(iters), "20",
            "8"]
    ref = stormlab.CtlRun(lab, args, NOBODY)
    rc = ref.wait(120)
    check(rc == 0 and ref.lines and ref.lines[-1].startswith("done %d " % ranks),
          "uninterrupted: exit %d: %s %s" % (rc, "".join(ref.lines[-3:]),
                                             "".join(ref.errs)))
    run = stormlab.CtlRun(lab, args, NOBODY)
    try:
        job = running_job(lab)
        j = show(lab, job)
        check(len(j["node_names"]) == nnodes, "not on %d node(s): %s"
              % (nnodes, j))
        stormlab.wait_for(lambda: len(run.lines) >= 20, 30, "iterations")
        committed(lab, job)
        j = show(lab, job)
        check(j["checkpoints"][0]["levels"] == "L1+L2+L3", "levels: %s" % j)
        at = len(run.lines)
        stormlab.wait_for(lambda: len(run.lines) >= at + 20, 30,
                          "iterations after the epoch")
        victim = j["node_names"][-1]
        check(lab.p.kill(victim) is not None, "no process %s" % victim)
        stormlab.wait_for(lambda: show(lab, job).get("restarts") == 1, 30,
                          "job %d requeued" % job)
        if nnodes > 1:
            # the restored run cuts and commits an epoch of its own
            stormlab.wait_for(lambda: show(lab, job)["state"] == "RUNNING",
                              60, "job %d running again" % job)
            at = len(run.lines)
            stormlab.wait_for(lambda: len(run.lines) >= at + 10, 60,
                              "iterations after the restart")
            committed(lab, job)
        rc = run.wait(120)
    finally:
        run.stop()
    j = show(lab, job)
    check(rc == 0 and j["state"] == "COMPLETED",
          "restarted run: exit %d, %s: %s" % (rc, j, "".join(run.errs)))
    check(victim not in j["node_names"], "ran again on %s: %s" % (victim, j))
    check(run.lines == ref.lines, "output differs:\n%s\nvs\n%s" % (
        "".join(run.lines), "".join(ref.lines)))
    print("%s: job %d (%d BCS-MPI ranks, ANY_SOURCE) killed with %s after "
          "epoch 1, ran on from it on %s; its %d lines identical to an "
          "uninterrupted run's" % (name, job, ranks, victim,
                                   ",".join(j["node_names"]),
                                   len(run.lines)))


def test_node_kill(lab):
    prog_args = ["8", "2", "10"]
    job = submit(lab, prog_args, uid=NOBODY)
    wait_started(lab, job)
    j = show(lab, job)
    r = committed(lab, job)
    j = show(lab, job)
    check(j["checkpoints"][0]["levels"] == "L1+L2+L3", "levels: %s" % j)
    victim = j["node_names"][-1]
    before = stormlab.pids_of(lab, job)
    t0 = time.monotonic()
    check(lab.p.kill(victim) is not None, "no process %s" % victim)
    stormlab.wait_for(lambda: show(lab, job).get("restarts") == 1, 30,
                      "job %d requeued" % job)
    try:
        stormlab.wait_for(lambda: show(lab, job)["state"] == "RUNNING" and
                          len(stormlab.pids_of(lab, job)) == 2, 60,
                          "job %d running again" % job)
    except TimeoutError:
        raise AssertionError("not running again: %s" % show(lab, job))
    took = time.monotonic() - t0
    j = show(lab, job)
    check(victim not in j["node_names"], "still on %s: %s" % (victim, j))
    # the run before is gone everywhere: the surviving node's rank too
    # (it is told by the incarnation in the heartbeat, even if the job
    # was listed again before it saw it unlisted)
    stormlab.wait_for(lambda: not any(os.path.exists("/proc/%d" % p)
                                      for p in before), 15,
                      "the ranks of the run before gone")
    check("restarting from checkpoint epoch 1" in j["reason"] or
          j.get("restore_epoch") == 1, "restarted: %s" % j)
    check_result(lab, job, prog_args)
    # a batch file is not filtered: a line marks where the rerun began
    got = open(out_path(lab, prog_args)).read()
    check(got.count("storm: job %d restarted from checkpoint epoch 1;" %
                    job) == 1, "no restart mark in %r" % got)
    print("node_kill: %s killed; job %d RUNNING again from epoch 1 on %s "
          "after %.2f s" % (victim, job, ",".join(j["node_names"]), took))


def node_log(lab):
    with open(os.path.join(lab.dir, "storm.log"), errors="replace") as f:
        return f.read()


def test_buddy(lab):
    prog_args = ["8", "2", "10"]
    job = submit(lab, prog_args, uid=NOBODY)
    wait_started(lab, job)
    r = committed(lab, job)
    j = show(lab, job)
    check(j["checkpoints"][0]["levels"] == "L1+L2", "levels: %s" % j)
    first = j["node_names"]
    # each node's copies are with the next node manager, the owner's
    copies = sorted(glob.glob(os.path.join(
        lab.dir, "ramdisk", "*", "ckpt", "buddy", "job-%d" % job, "epoch-1",
        "rank-*.img")))
    check(len(copies) == 2, "copies: %s" % copies)
    for c in copies:
        st = os.stat(c)
        check(st.st_uid == NOBODY and stat.S_IMODE(st.st_mode) == 0o600,
              "%s: uid %d mode %o" % (c, st.st_uid, st.st_mode))
    victim = first[-1]
    check(lab.p.kill(victim) is not None, "no process %s" % victim)
    stormlab.wait_for(lambda: show(lab, job).get("restarts") == 1, 30,
                      "job %d requeued" % job)
    j = check_result(lab, job, prog_args)
    check(victim not in j["node_names"], "ran again on %s: %s" % (victim, j))
    fetched = node_log(lab).count("not here: asked the other nodes")
    # rank 0's copy was on the victim: away from its first node, its
    # image came from that node's L1
    if first[0] not in j["node_names"]:
        check(fetched >= 1, "rank 0 on %s without a fetch" % j)
    print("buddy: epoch 1 on L1+L2 (%s); %s killed; job %d ran on from it "
          "on %s, %d rank(s) fetched from another node" % (
              ",".join(first), victim, job, ",".join(j["node_names"]),
              fetched))


def test_requeue(lab):
    """--requeue without a checkpoint: a node's death queues the job
    again and it runs from the start on the nodes left; without the flag
    the same death fails the job."""
    prog_args = ["8", "2", "6"]
    job = submit(lab, prog_args, uid=NOBODY, opts=["--requeue"])
    r = stormctl(lab, ["show", str(job)])
    check(r.returncode == 0 and "requeue" in r.stdout and "yes" in r.stdout,
          "show: %s %s" % (r.stdout, r.stderr))
    wait_started(lab, job)
    j = show(lab, job)
    check(j.get("requeue") is True and not j.get("checkpoints"),
          "before: %s" % j)
    victim = j["node_names"][-1]
    before = stormlab.pids_of(lab, job)
    check(lab.p.kill(victim) is not None, "no process %s" % victim)
    stormlab.wait_for(lambda: show(lab, job).get("restarts") == 1, 30,
                      "job %d requeued" % job)
    j = show(lab, job)
    # (placed again at once, it may have left PENDING and its reason)
    check(j.get("restore_epoch") == 0 and ("to start over" in j["reason"] or
                                           j["state"] != "PENDING"),
          "requeued: %s" % j)
    stormlab.wait_for(lambda: not any(os.path.exists("/proc/%d" % p)
                                      for p in before), 15,
                      "the ranks of the run before gone")
    j = check_result(lab, job, prog_args)
    check(victim not in j["node_names"], "ran again on %s: %s" % (victim, j))
    r = stormctl(lab, ["show", str(job)])
    check("1 (from the start)" in r.stdout, "show restarts: %s" % r.stdout)
    got = open(out_path(lab, prog_args)).read()
    check(got.count("storm: job %d started over (requeued);" % job) == 1,
          "no start-over mark in %r" % got)
    # the same death without --requeue: FAILED, naming the node
    job2 = submit(lab, ["8", "2", "30"], uid=NOBODY)
    wait_started(lab, job2)
    victim2 = show(lab, job2)["node_names"][-1]
    check(lab.p.kill(victim2) is not None, "no process %s" % victim2)
    j2 = wait_state(lab, job2, ["FAILED", "PENDING"], timeout=30)
    check(j2["state"] == "FAILED" and victim2 in j2["reason"],
          "without --requeue: %s" % j2)
    print("requeue: %s killed; job %d ran again from the start on %s" %
          (victim, job, ",".join(j["node_names"])))


def kind_of(path):
    """An image's kind (1 full, 2 delta), from its header."""
    with open(path, "rb") as f:
        return int.from_bytes(f.read(16)[12:16], "little")


def test_compact(lab):
    """ckpt_chain = 2: the chain is folded into a full image in the
    background once two deltas follow a full one; the images before the
    full one before go; a restart from the last epoch still works."""
    prog_args = ["8", "2", "12"]
    job = submit(lab, prog_args, uid=NOBODY)
    wait_started(lab, job)
    for e in range(1, 6):
        r = checkpoint(lab, job, uid=NOBODY)
        check(r.returncode == 0, "checkpoint %d: %s %s" % (e, r.stdout,
                                                          r.stderr))
    shared = os.path.join(lab.dir, "shared")

    def compacted(e):
        imgs = images(lab, job, e) + sorted(glob.glob(os.path.join(
            shared, "job-%d" % job, "epoch-%d" % e, "rank-*.img")))
        return len(imgs) == 4 and all(kind_of(p) == 1 for p in imgs)
    # epoch 1 full, 2 and 3 deltas: 3 compacted; 4 and 5 deltas of it: 5
    stormlab.wait_for(lambda: compacted(3) and compacted(5), 30,
                      "epochs 3 and 5 compacted here and in L3")
    check(all(kind_of(p) == 2 for p in images(lab, job, 4)),
          "epoch 4 is not a delta")
    stormlab.wait_for(lambda: not images(lab, job, 1) and
                      not images(lab, job, 2) and not glob.glob(
                          os.path.join(shared, "job-%d" % job, "epoch-[12]")),
                      15, "epochs 1 and 2 removed, here and in L3 (a full "
                      "image at 3 and 5)")
    r = stormctl(lab, ["restart", str(job)], uid=NOBODY)
    check(r.returncode == 0, "restart: %s %s" % (r.stdout, r.stderr))
    stormlab.wait_for(lambda: show(lab, job).get("restarts") == 1 and
                      show(lab, job)["state"] == "RUNNING" and
                      len(stormlab.pids_of(lab, job)) == 2, 60,
                      "job %d restored from epoch 5" % job)
    check(show(lab, job).get("restore_epoch") == 5, "restored from %s" %
          show(lab, job))
    check_result(lab, job, prog_args)
    print("compact: epochs 3 and 5 folded into full images in the "
          "background; restored from 5, ended well")


def kill_master(lab):
    """kill -9 of the strobe master; show asks a replica left, and a
    new master is awaited."""
    victim = lab.master()
    check(victim is not None, "no strobe master")
    os.kill(lab.mm_pid(victim), signal.SIGKILL)
    alive = [i for i in range(lab.m) if i != victim]
    ALIVE[0] = alive[0]

    def new_master():
        rep = stormlab.call(lab.sock(alive[0]), {"op": "managers"})
        return any(x.get("master") and n != victim
                   for n, x in enumerate(rep.get("managers", [])))
    stormlab.wait_for(new_master, 30, "a new strobe master")
    return victim


def test_failover(lab):
    prog_args = ["8", "2", "12"]
    job = submit(lab, prog_args, uid=NOBODY)
    wait_started(lab, job)
    lab.converged()
    r = stormctl(lab, ["--json", "checkpoint", "--no-wait", str(job)],
                 uid=NOBODY)
    check(r.returncode == 0, "checkpoint: %s" % r.stderr)
    epoch = json.loads(r.stdout)["epoch"]
    v1 = kill_master(lab)
    stormlab.wait_for(lambda: [c["epoch"] for c in
                               show(lab, job).get("checkpoints", [])] ==
                      [epoch], 60, "epoch %d committed after the "
                      "failover" % epoch)
    # a second replica's death would cost the quorum: bring the first back
    lab.start_mm(v1)
    lab.converged(timeout=60)
    r = stormctl(lab, ["--json", "restart", str(job)], uid=NOBODY)
    check(r.returncode == 0, "restart: %s" % r.stderr)
    kill_master(lab)
    stormlab.wait_for(lambda: show(lab, job).get("restarts") == 1 and
                      show(lab, job)["state"] == "RUNNING" and
                      len(stormlab.pids_of(lab, job)) == 2, 90,
                      "job %d restored under the new master" % job)
    check_result(lab, job, prog_args, timeout=180)
    print("failover: epoch %d committed and the restart done across two "
          "strobe masters' deaths" % epoch)


def small_dir(d):
    """A 4 MiB tmpfs as ckpt_dir (this test's own mount namespace)."""
    small = os.path.join(d, "small")
    os.mkdir(small)
    subprocess.run(["mount", "-t", "tmpfs", "-o", "size=4m,mode=0755",
                    "tmpfs", small], check=True)
    return ["ckpt_dir = %s" % small]


def test_disk_full(lab):
    try:
        disk_full(lab)
    finally:  # the mount goes, so the test's directory can
        lab.stop()
        subprocess.run(["umount", os.path.join(lab.dir, "small")])


def disk_full(lab):
    prog_args = ["8", "2", "6"]
    job = submit(lab, prog_args, uid=NOBODY)
    wait_started(lab, job)
    r = checkpoint(lab, job, uid=NOBODY)
    check(r.returncode == 1 and "No space left on device" in r.stderr and
          "rank" in r.stderr and "node" in r.stderr,
          "a full disk: %d %s" % (r.returncode, r.stderr))
    j = show(lab, job)
    check(j["state"] == "RUNNING" and not j["checkpoints"], "after: %s" % j)
    left = glob.glob(os.path.join(lab.dir, "small", "*", "job-%d" % job,
                                  "epoch-*", "*"))
    check(not left, "images of the failed epoch left: %s" % left)
    check_result(lab, job, prog_args)
    print("disk_full: %s" % j.get("checkpoint_error"))


def test_periodic(lab):
    prog = [os.path.join(lab.build, "tests/ckpt_loop"), "4", "1", "3"]
    for bad in ("0", "-5", "400d", "366d", "2y", "3000000000", "x"):
        r = stormctl(lab, ["submit", "--checkpoint", bad, "--"] + prog)
        check(r.returncode == 2 and "--checkpoint" in r.stderr and
              "interval" in r.stderr, "--checkpoint %s: %d %s" % (
                  bad, r.returncode, r.stderr))
    prog_args = ["8", "2", "9"]
    job = submit(lab, prog_args, uid=NOBODY, opts=["--checkpoint", "2"])
    check(show(lab, job).get("checkpoint_s") == 2, "show: %s" %
          show(lab, job))
    wait_started(lab, job)
    stormlab.wait_for(lambda: show(lab, job).get("checkpoints") and
                      show(lab, job)["checkpoints"][-1]["epoch"] >= 3, 30,
                      "three epochs by themselves")
    j = check_result(lab, job, prog_args)
    eps = [c["epoch"] for c in j["checkpoints"]]
    check(len(eps) == 2 and eps[-1] >= 3, "catalog (keep 2): %s" % eps)
    job2 = submit(lab, ["4", "1", "2"], uid=NOBODY,
                  opts=["--checkpoint", "auto"])
    check(show(lab, job2).get("checkpoint_s") == "auto", "auto: %s" %
          show(lab, job2))
    print("periodic: epochs up to %d every 2 s, kept %s; auto accepted" % (
        eps[-1], eps))


def test_limits(lab):
    prog_args = ["8", "2", "6"]
    job = submit(lab, prog_args, uid=NOBODY)
    wait_started(lab, job)
    r = checkpoint(lab, job, uid=NOBODY)
    check(r.returncode == 0, "epoch 1: %s" % r.stderr)
    r = checkpoint(lab, job, uid=NOBODY)
    check(r.returncode == 1 and "ckpt_quota_mib" in r.stderr and
          "uid %d" % NOBODY in r.stderr, "over the quota: %d %s" % (
              r.returncode, r.stderr))
    check(len(images(lab, job, 1)) == 2, "epoch 1's images: %s" %
          images(lab, job, 1))
    # each node over the quota removes what it wrote of epoch 2 (the
    # other may still be writing when the first one's failure aborts it)
    stormlab.wait_for(lambda: not images(lab, job, 2) and not glob.glob(
        os.path.join(lab.dir, "shared", "job-%d" % job, "epoch-2",
                     "rank-*.img")), 10,
                      "epoch 2's images removed, their L3 copies too")
    check([c["epoch"] for c in show(lab, job)["checkpoints"]] == [1],
          "catalog: %s" % show(lab, job)["checkpoints"])
    check_result(lab, job, prog_args)
    stormlab.wait_for(lambda: not glob.glob(os.path.join(
        lab.dir, "ramdisk", "lab-nm*", "ckpt", "job-%d" % job)) and
                      not os.path.exists(os.path.join(
                          lab.dir, "shared", "job-%d" % job)), 15,
                      "job %d's images deleted after ckpt_linger_s, their "
                      "L3 copies too" % job)
    print("limits: %s; images gone after the linger" %
          show(lab, job).get("checkpoint_error"))


TESTS = {
    "commit": (test_commit, dict(managers=1, nodes=2)),
    "refused": (test_refused, dict(managers=1, nodes=2)),
    "restart": (test_restart, dict(managers=1, nodes=2)),
    "node_kill": (test_node_kill, dict(managers=1, nodes=4)),
    "requeue": (test_requeue, dict(managers=1, nodes=4)),
    "buddy": (test_buddy, dict(managers=1, nodes=4, shared=False)),
    "bcs": (test_bcs, dict(managers=1, nodes=2, cpus=4)),
    "bcs_spread": (test_bcs_spread, dict(managers=1, nodes=4, cpus=2)),
    "compact": (test_compact, dict(managers=1, nodes=2,
                                   setup=lambda d: ["ckpt_chain = 2"])),
    "rerun_output": (test_rerun_output, dict(managers=1, nodes=2)),
    "failover": (test_failover, dict(managers=3, nodes=2)),
    "disk_full": (test_disk_full, dict(managers=1, nodes=2,
                                       setup=small_dir)),
    "periodic": (test_periodic, dict(managers=1, nodes=2)),
    "limits": (test_limits, dict(managers=1, nodes=2,
                                 setup=lambda d: ["ckpt_quota_mib = 12",
                                                  "ckpt_chain = 0",
                                                  "ckpt_linger_s = 1"])),
}


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in TESTS:
        print(__doc__, file=sys.stderr)
        return 2
    build, name = sys.argv[1], sys.argv[2]
    fn, kw = TESTS[name]
    if name.startswith("bcs") and SAN not in ("", "none"):
        # a sanitized rank (the library is instrumented) maps terabytes
        # of shadow memory: not what a checkpoint of a user's rank is for
        print("SKIP: BCS-MPI ranks built with sanitizers", file=sys.stderr)
        return 77
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("SIGTERM"))
    stormlab.run_in_private_netns()
    d = tempfile.mkdtemp(prefix="storm-ckpt-")
    os.chmod(d, 0o755)  # the job's user reaches its output file
    kw = dict(kw)
    setup = kw.pop("setup", None)
    shared = kw.pop("shared", True)
    kw["extra"] = (["ckpt_shared_dir = %s/shared" % d] if shared else []) + (
        setup(d) if setup else [])
    return stormlab.run_test(name, d, lambda: stormlab.Lab(build, d, **kw),
                             fn)


if __name__ == "__main__":
    sys.exit(main())
