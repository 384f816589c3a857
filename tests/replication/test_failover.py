#!/usr/bin/env python3
"""Fault-injection tests of the replicated Machine Manager (issue 4, 7a-7d).

Usage: test_failover.py BUILD_DIR TEST   (TEST: kill_random | kill_all |
       master_during_job | cut_head | disk_full | ...)

Each test brings up a real cluster in a network namespace of its own
(stormlab), injects the fault, and asserts what the issue names:
  kill_random        kill -9 a random replica every ~2 s while 8 clients
                     submit and cancel: every acknowledged request applied
                     exactly once, no acknowledged job lost, equal digests;
  kill_all           kill -9 every replica at once, restart them: every
                     acknowledged job is present;
  master_during_job  kill the strobe master while a job runs: the job
                     completes with its whole output;
  cut_head           three head namespaces (headnet): cut one off; it
                     loses quorum and refuses writes, the other two serve,
                     after the heal it catches up by state transfer;
  disk_full          one replica's state on a 1 MiB tmpfs fills: it stops
                     (fail-stop) while the others go on, and with room
                     again it rejoins and converges (issue 12);
  statuses_rejoin    a rank's exit agreed before a replica's restart
                     reaches it through the snapshot: the job ends under
                     whichever master;
  joiner_master      a restarted replica, not yet in the nodes' view, is
                     elected strobe master (its pid made the lowest) as
                     the old master dies while a rank's EXIT box is on its
                     way: the node sends the unacknowledged box to the
                     replica once it joins the view, and the job ends
                     under it;
  history            retention moves ended jobs to the history on every
                     replica, one that joins afterwards included (it
                     fetches what it lacks from a peer); show, queue -a
                     and stormctl history find them; users see their own;
  budget_retention   a small state budget fills: "state full", reads and
                     cancels served; retention frees it and writes
                     resume;
  shm_join           three replicas and eight nodes on the shm fabric
                     start together: every replica joins the machine at
                     its first try, and a job on every node ends;
  join_wait          two replicas restart while no machine is up to join
                     (manager 0, its founder, is down): they sync, and
                     answer every request at once while their join
                     attempts fail in the background.
Exit: 0 pass, 1 fail, 77 skipped (not root).
"""

import json
import os
import random
import signal
import subprocess
import sys
import tempfile
import threading
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "harness"))
import stormlab  # noqa: E402

KILL_SECONDS = float(os.environ.get("STORM_FAULT_SECONDS", "60"))


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def jobs_by_name(lab, i):
    out = {}
    for j in lab.queue(i):
        out.setdefault(j["name"], []).append(j)
    return out


def submit_req(name, argv=("/bin/sleep", "3600")):
    return {"op": "submit", "job": {"name": name, "ranks": 1,
                                    "argv": list(argv), "env": [],
                                    "files": [], "cwd": "/",
                                    "stdout": "/dev/null",
                                    "stderr": "/dev/null"}}


def test_kill_random(lab):
    stop = threading.Event()
    acked = []            # (name, job) of acknowledged submissions
    cancelled = []        # job ids of acknowledged cancels
    errors = []
    unknown = []          # requests that got no answer in time
    lock = threading.Lock()

    def client(k):
        c = stormlab.Client("fault-%d-%d" % (os.getpid(), k), lab.endpoints())
        mine = []
        i = 0
        while not stop.is_set():
            # paced (~50 requests/s each): the check reads every job back
            # with one queue reply, which must stay within a frame
            time.sleep(0.02)
            i += 1
            try:
                if i % 5 == 0 and mine:
                    job = mine.pop(random.randrange(len(mine)))
                    _, rep = c.request({"op": "cancel", "job": job})
                    if rep.get("ok"):
                        with lock:
                            cancelled.append(job)
                    elif "terminal" not in rep.get("error", "") and \
                            "already" not in rep.get("error", ""):
                        errors.append(("cancel", job, rep))
                else:
                    name = "c%d-%d" % (k, i)
                    _, rep = c.request(submit_req(name))
                    if rep.get("ok"):
                        with lock:
                            acked.append((name, rep["job"]))
                        mine.append(rep["job"])
                    else:
                        errors.append(("submit", name, rep))
            except TimeoutError:
                # not acknowledged: applied once or not at all (checked
                # below); the group may stall while it has no synced
                # member and a restart keeps interrupting its recovery
                with lock:
                    unknown.append(k)

    threads = [threading.Thread(target=client, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    kills = 0
    end = time.monotonic() + KILL_SECONDS
    try:
        while time.monotonic() < end:
            time.sleep(random.uniform(1.5, 2.5))
            victim = random.randrange(lab.m)
            lab.p.kill("mm%d" % victim)
            kills += 1
            time.sleep(0.2)
            lab.start_mm(victim)
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=60)
    print("kill_random: %d kills, %d submissions and %d cancels "
          "acknowledged, %d errors, %d unanswered" % (
              kills, len(acked), len(cancelled), len(errors),
              len(unknown)))
    check(not errors, "requests failed: %s" % errors[:5])
    check(len(acked) > 100, "too few acknowledged submissions: %d" % len(acked))
    reps = lab.converged(60)
    print("converged at index %d, digest %s" % (reps[0]["applied"],
                                                reps[0]["digest"]))
    cset = set(cancelled)
    for i in range(lab.m):
        byname = jobs_by_name(lab, i)
        for name, job in acked:
            got = byname.get(name, [])
            check(len(got) == 1, "mm%d: job %s (acked as %d) present %d "
                  "times" % (i, name, job, len(got)))
            check(got[0]["id"] == job, "mm%d: %s is job %d, acked as %d" %
                  (i, name, got[0]["id"], job))
            if job in cset:
                check(got[0]["state"] == "CANCELLED", "mm%d: job %d was "
                      "cancelled (acked) but is %s" % (i, job, got[0]["state"]))
        names = [n for n, js in byname.items() for _ in js]
        check(len(names) == len(set(names)), "mm%d: a job applied twice" % i)
    c = stormlab.Client("fault-after-%d" % os.getpid(), lab.endpoints())
    _, rep = c.request(submit_req("after-the-kills"))
    check(rep.get("ok"), "no write accepted after the kills: %s" % rep)


def test_kill_all(lab):
    c = stormlab.Client("killall-%d" % os.getpid(), lab.endpoints())
    acked = []
    for i in range(40):
        _, rep = c.request(submit_req("all-%d" % i))
        check(rep.get("ok"), "submit failed: %s" % rep)
        acked.append(("all-%d" % i, rep["job"]))
    for i in range(lab.m):
        lab.p.kill("mm%d" % i)
    for i in range(lab.m):
        lab.start_mm(i)
    reps = lab.converged(90)
    print("kill_all: %d jobs acknowledged; after the restart every replica "
          "is at index %d" % (len(acked), reps[0]["applied"]))
    for i in range(lab.m):
        byname = jobs_by_name(lab, i)
        for name, job in acked:
            got = byname.get(name, [])
            check(len(got) == 1 and got[0]["id"] == job,
                  "mm%d: acknowledged job %s (%d) lost or doubled: %s" %
                  (i, name, job, got))
    # and it still works
    _, rep = c.request(submit_req("after"))
    check(rep.get("ok"), "submit after the restart failed: %s" % rep)


def test_master_during_job(lab):
    master = lab.master()
    check(master is not None, "no strobe master")
    other = (master + 1) % lab.m
    script = "for i in 1 2 3 4 5 6 7 8 9 10; do echo line $i; sleep 0.3; done"
    errf = tempfile.TemporaryFile()
    p = subprocess.Popen([os.path.join(lab.build, "cli/stormctl"),
                          "--socket", lab.sock(other), "run", "-n",
                          str(lab.n), "-l", "/bin/sh", "-c", script],
                         stdout=subprocess.PIPE, stderr=errf)
    # the job runs once a line came out; every line is read through the
    # same buffered reader (communicate() would bypass what readline()
    # already buffered)
    first = p.stdout.readline()
    check(first, "no output before the kill")
    lab.p.kill("mm%d" % master)
    lines = [first.decode()] + [x.decode() for x in p.stdout]
    p.wait(timeout=60)
    errf.seek(0)
    err = errf.read()
    lines = sorted(lines)
    want = sorted("%d: line %d\n" % (r, i) for r in range(lab.n)
                  for i in range(1, 11))
    check(p.returncode == 0, "run exited %d: %s" % (p.returncode,
                                                    err.decode()))
    check(lines == want, "output differs after the master died:\n%s" %
          "".join(lines))
    new = lab.master()
    check(new is not None and new != master, "no new strobe master")
    print("master_during_job: mm%d killed mid-job, mm%d took over, %d lines "
          "each exactly once" % (master, new, len(lines)))


def test_cut_head(lab):
    c = stormlab.Client("cut-%d" % os.getpid(), lab.endpoints())
    acked = []
    for i in range(20):
        _, rep = c.request(submit_req("before-%d" % i))
        check(rep.get("ok"), "submit failed: %s" % rep)
        acked.append(("before-%d" % i, rep["job"]))
    victim = 2
    cut = lab.cut(victim)
    # the cut-off head loses quorum and refuses writes (clients go
    # elsewhere); bounded by corosync's detection (about 2.2 x token)
    end = time.monotonic() + 10
    refused = None
    while time.monotonic() < end:
        rep = stormlab.call(lab.sock(victim), dict(submit_req("minority"),
                                                   client="cut-minority",
                                                   seq=1), timeout=5)
        if not rep.get("ok"):
            refused = rep
            break
        time.sleep(0.05)
    check(refused and refused.get("errno") in stormlab.RETRY_ERRNOS,
          "the cut-off replica did not refuse writes: %s" % refused)
    refused_at = time.monotonic()
    # the other two keep serving
    majority = stormlab.Client("cut-majority-%d" % os.getpid(),
                               [lab.sock(0), lab.sock(1)])
    for i in range(20):
        _, rep = majority.request(submit_req("during-%d" % i))
        check(rep.get("ok"), "the majority refused: %s" % rep)
        acked.append(("during-%d" % i, rep["job"]))
    lab.heal(victim)
    reps = lab.converged(60)
    for i in range(lab.m):
        byname = jobs_by_name(lab, i)
        for name, job in acked:
            got = byname.get(name, [])
            check(len(got) == 1 and got[0]["id"] == job,
                  "mm%d: %s (%d) lost or doubled after the heal: %s" %
                  (i, name, job, got))
        check("minority" not in byname, "mm%d: the refused write was "
              "applied" % i)
    print("cut_head: head %d cut at %s ms, refused writes with %s; the "
          "majority took 20 writes; after the heal every replica is at "
          "index %d" % (victim + 1, cut.get("HEADNET_CUT_MONO_MS"),
                        refused.get("error"), reps[0]["applied"]))
    del refused_at


def tcp_stormctl(lab, timeout=30):
    """stormctl over the replicas' TCP addresses with MUNGE, as root or,
    with user=UID, as that user (setpriv)."""
    ctl = os.path.join(lab.build, "cli/stormctl")
    env = dict(os.environ, STORM_MUNGE_SOCKET=lab.munge_socket)
    tcp = ",".join(lab.listen)

    def stormctl(*args, user=None):
        argv = [ctl, "--managers", tcp] + list(args)
        if user is not None:
            argv = ["setpriv", "--reuid=%d" % user, "--regid=%d" % user,
                    "--clear-groups"] + argv
        return subprocess.run(argv, env=env, capture_output=True, text=True,
                              timeout=timeout)
    return stormctl


def test_munge_tcp(lab):
    """TCP clients authenticate with MUNGE; users act on their own jobs."""
    stormctl = tcp_stormctl(lab)
    host, port = lab.listen[0].split(":")

    r = stormctl("submit", "-n", "1", "--name", "mine", "/bin/sleep", "600")
    check(r.returncode == 0, "submit over TCP failed: %s" % r.stderr)
    job = int(r.stdout.split()[-1])
    rep = stormlab.call((host, int(port)), {"op": "show", "job": job})
    check(not rep.get("ok") and rep.get("errno") == 13 and "MUNGE" in
          rep.get("error", ""), "no credential accepted: %s" % rep)
    # a request over 16 KiB: stormctl authenticates the connection first
    big = "x" * 40000
    r = stormctl("submit", "-n", "1", "--name", "big", "/bin/echo", big)
    check(r.returncode == 0, "large submit over TCP failed: %s" % r.stderr)
    rep = stormlab.call(lab.sock(0), {"op": "show",
                                      "job": int(r.stdout.split()[-1])})
    check(rep.get("ok") and rep["job"]["argv"][-1] == big,
          "large submit's argv: %s" % str(rep)[:200])
    # ... and one that does not is refused before it is read
    rep = stormlab.call((host, int(port)), {"op": "show", "job": job,
                                            "pad": big})
    check(not rep.get("ok") and "authenticate first" in rep.get("error", ""),
          "large unauthenticated request: %s" % str(rep)[:200])
    ep = (host, int(port))
    req = {"op": "show", "job": job, "client": "x", "seq": 1}
    rep = stormlab.call_raw(ep, stormlab.sealed_frame(
        "MUNGE:forged:", json.dumps(req).encode()))
    check(not rep.get("ok") and rep.get("errno") == 13,
          "forged credential accepted: %s" % rep)
    # an older client's credential inside the request: refused, saying so
    rep = stormlab.call(ep, dict(req, munge="MUNGE:old:"))
    check(not rep.get("ok") and rep.get("errno") == 13 and
          "upgrade stormctl" in rep.get("error", ""),
          "credential inside the request: %s" % rep)
    # a credential is good for one request only
    frame = stormlab.sealed_request(lab.munge_socket, dict(req, client="y"))
    first = stormlab.call_raw(ep, frame)
    again = stormlab.call_raw(ep, frame)
    check(first.get("ok") and not again.get("ok") and
          "replayed" in again.get("error", "").lower(),
          "replayed credential: %s / %s" % (first, again))
    # an expired credential (its time to live is the behaviour under test)
    frame = stormlab.sealed_request(lab.munge_socket, dict(req, client="z"),
                                    ttl=1)
    time.sleep(2.5)
    rep = stormlab.call_raw(ep, frame)
    check(not rep.get("ok") and "expired" in rep.get("error", "").lower(),
          "expired credential accepted: %s" % rep)
    # another user may not cancel it; its owner (root) or an administrator
    # (uid 65533, admins in the configuration) may
    r = stormctl("cancel", str(job), user=65534)
    check(r.returncode != 0 and "belongs to uid 0" in r.stderr,
          "uid 65534 cancelled root's job, or failed otherwise: %s" %
          r.stderr)
    r = stormctl("cancel", str(job))
    check(r.returncode == 0, "root could not cancel: %s" % r.stderr)
    r = stormctl("submit", "-n", "1", "--name", "other", "/bin/sleep", "600")
    job2 = int(r.stdout.split()[-1])
    r = stormctl("cancel", str(job2), user=65533)
    check(r.returncode == 0, "an administrator could not cancel: %s" %
          r.stderr)
    print("munge_tcp: submit and cancel over TCP with MUNGE; missing, "
          "forged, replayed and expired credentials and another user's "
          "cancel refused; an administrator's accepted")


def test_bad_input(lab):
    """Replayed and old sequence numbers, a client gone mid-request, and a
    replica started on another cluster's state: refused, nothing applied
    twice, nobody crashes."""
    sock = lab.sock(0)
    req = dict(submit_req("seq-test"), client="bad-%d" % os.getpid())
    first = stormlab.call(sock, dict(req, seq=5))
    again = stormlab.call(lab.sock(1), dict(req, seq=5))
    older = stormlab.call(sock, dict(req, seq=4))
    check(first.get("ok") and again.get("ok") and
          again["job"] == first["job"], "a retry was not answered with the "
          "same job: %s / %s" % (first, again))
    check(not older.get("ok") and older.get("errno") == 4096 + 13,
          "an older sequence was not refused: %s" % older)
    check(len(jobs_by_name(lab, 2).get("seq-test", [])) == 1,
          "the retried submission was applied twice")
    # a client that leaves in the middle of a frame
    import socket as so
    s = so.socket(so.AF_UNIX)
    s.connect(sock)
    s.sendall(b"STRM" + bytes([1, 1, 0, 0]) + (1000).to_bytes(4, "big") +
              b'{"op": "sub')
    s.close()
    rep = stormlab.call(sock, {"op": "status"})
    check(rep.get("ok"), "the manager did not survive a torn request: %s"
          % rep)
    # another cluster's state directory is refused, exit status 2
    lab.p.kill("mm2", signal.SIGTERM)
    with open(lab.conf) as f:
        conf = f.read()
    other = lab.conf + ".other"
    with open(other, "w") as f:
        f.write(conf.replace("name = lab", "name = other"))
    out = subprocess.run([os.path.join(lab.build, "manager/mmd/storm-mm"),
                          "--config", other, "--name", "mm2"],
                         capture_output=True, text=True, timeout=30)
    check(out.returncode == 2 and "belongs to cluster" in out.stderr,
          "storm-mm on another cluster's state: exit %d, %s" %
          (out.returncode, out.stderr))
    lab.start_mm(2)
    reps = lab.converged(60)
    print("bad_input: retry answered with job %d, older sequence refused, "
          "torn request survived, foreign state refused (exit 2); replicas "
          "at index %d" % (first["job"], reps[0]["applied"]))


def test_rolling_restart(lab):
    """Stop and restart the replicas one by one (each waits for the last to
    be synced again) while clients submit: no request fails and writes are
    acknowledged during every restart."""
    stop = threading.Event()
    acks = []  # monotonic times of acknowledgements
    errors = []
    lock = threading.Lock()

    def client(k):
        c = stormlab.Client("roll-%d-%d" % (os.getpid(), k), lab.endpoints())
        i = 0
        while not stop.is_set():
            i += 1
            try:
                _, rep = c.request(submit_req("r%d-%d" % (k, i)))
                if rep.get("ok"):
                    with lock:
                        acks.append(time.monotonic())
                else:
                    errors.append(rep)
            except TimeoutError as e:
                errors.append(str(e))

    threads = [threading.Thread(target=client, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    phases = []
    try:
        for i in range(lab.m):
            t0 = time.monotonic()
            lab.p.kill("mm%d" % i, signal.SIGTERM)
            lab.start_mm(i)
            stormlab.wait_for(lambda: lab.managers(i).get("synced"), 60,
                              "mm%d synced again" % i)
            t1 = time.monotonic()
            with lock:
                n = sum(1 for a in acks if t0 <= a <= t1)
            phases.append((i, t1 - t0, n))
    finally:
        stop.set()
        for t in threads:
            t.join(timeout=60)
    check(not errors, "requests failed during the rolling restart: %s" %
          errors[:5])
    for i, dt, n in phases:
        check(n > 0, "no write acknowledged while mm%d restarted (%.1f s)" %
              (i, dt))
    lab.converged(60)
    print("rolling_restart: %s" % ", ".join(
        "mm%d back in %.1f s with %d writes acknowledged meanwhile" % p
        for p in phases))


def test_disk_full(lab):
    """A replica whose disk fills stops (fail-stop: it exits rather than
    hold a state its peers lack) while the others go on taking writes;
    with room again it restarts, rejoins by state transfer and holds the
    same state as the others."""
    mnt = os.path.join(lab.dir, "state", "mm2")
    c = stormlab.Client("disk-%d" % os.getpid(), [lab.sock(0)])
    env = ["PAD=" + "y" * 16000]  # 16 KB a job: mm2's 1 MiB fills fast
    n = 0
    for i in range(1000):
        req = submit_req("d%d" % i, argv=("/bin/true",))
        req["job"]["env"] = env
        _, rep = c.request(req)
        check(rep.get("ok"), "submit %d refused: %s" % (i, rep))
        n += 1
        if lab.mm_pid(2) is None:
            break
    check(lab.mm_pid(2) is None, "mm2 never stopped on its full disk")
    code = lab.p.procs["mm2"].returncode
    check(code == 1, "mm2 exited %s, want 1" % code)
    with open(os.path.join(lab.dir, "mm2.out")) as f:
        out = f.read()
    with open(os.path.join(lab.dir, "storm.log")) as f:
        log = f.read()
    check("No space left" in out + log or "ENOSPC" in out + log or
          "cannot" in out + log, "mm2 said nothing of its disk")
    # the others go on
    for i in range(20):
        _, rep = c.request(submit_req("after%d" % i, argv=("/bin/true",)))
        check(rep.get("ok"), "submit after mm2 stopped: %s" % rep)
    subprocess.run(["mount", "-o", "remount,size=256m", mnt], check=True)
    lab.start_mm(2)
    reps = lab.converged(90)
    # lazily: mm2 still has its files open until the lab stops
    subprocess.run(["umount", "-l", mnt], check=True)
    print("disk_full: mm2 stopped after %d submissions of 16 KB on its "
          "1 MiB disk; the others took 20 more; mm2 rejoined at index %d"
          % (n, reps[2]["applied"]))


def test_joiner_master(lab):
    """The box a node sent while a replica was out of its view reaches
    that replica when it joins: it may be the next strobe master."""
    gate = os.path.join(lab.dir, "gate")
    os.mkfifo(gate)
    fd = os.open(gate, os.O_RDWR)
    try:
        script = ('if [ "$STORM_RANK" = 0 ]; then exit 0; fi; '
                  'read x < %s' % gate)
        rep = stormlab.call(lab.sock(0), {"op": "submit", "job": {
            "name": "late", "ranks": 2, "argv": ["/bin/sh", "-c", script],
            "env": [], "files": [], "cwd": "/", "stdout": "/dev/null",
            "stderr": "/dev/null"}})
        check(rep.get("ok"), "submit: %s" % rep)
        job = rep["job"]
        stormlab.wait_for(lambda: stormlab.call(lab.sock(0), {
            "op": "show", "job": job})["job"].get("ranks_exited") == 1, 30,
                          "rank 0's exit")
        m = lab.master()
        k, o = [i for i in range(lab.m) if i != m]
        lab.p.kill("mm%d" % k)
        stormlab.wait_for(lambda: lab.mm_pid(k) is None, 10, "mm%d gone" % k)
        # the joiner's pid below the survivor's: the lowest synced
        # member (one corosync node here, then pid) once m goes
        with open("/proc/sys/kernel/ns_last_pid", "w") as f:
            f.write(str(lab.mm_pid(o) - 50))
        lab.start_mm(k)
        check(lab.mm_pid(k) < lab.mm_pid(o), "mm%d pid %d not below mm%d's "
              "%d" % (k, lab.mm_pid(k), o, lab.mm_pid(o)))
        stormlab.wait_for(lambda: lab.managers(k).get("synced"), 60,
                          "mm%d synced" % k)
        # m goes; rank 1 ends before the nodes notice: its box goes to m
        # (lost) and o, then to o alone, never to k unless sent again
        lab.p.kill("mm%d" % m)
        stormlab.wait_for(lambda: lab.master() == k, 30,
                          "mm%d elected strobe master" % k)
        os.write(fd, b"\n")
        stormlab.wait_for(lambda: stormlab.call(lab.sock(k), {
            "op": "show", "job": job})["job"]["state"] == "COMPLETED", 60,
                          "the job to complete under mm%d" % k)
    finally:
        os.close(fd)
    print("joiner_master: mm%d restarted, elected when mm%d died; the "
          "job completed under it" % (k, m))


def test_statuses_rejoin(lab):
    """A job's first rank exits, a replica restarts and rejoins by state
    transfer, the strobe master is killed: the rank's exit status, agreed
    before the restart and acknowledged to its node (it will not come
    again), reaches the joiner through the snapshot, so whichever replica
    is master when the last rank ends ends the job."""
    gate = os.path.join(lab.dir, "gate")
    os.mkfifo(gate)
    fd = os.open(gate, os.O_RDWR)
    try:
        script = ('if [ "$STORM_RANK" = 0 ]; then exit 0; fi; '
                  'read x < %s' % gate)
        rep = stormlab.call(lab.sock(0), {
            "op": "submit", "job": {"name": "split", "ranks": 2,
                                    "argv": ["/bin/sh", "-c", script],
                                    "env": [], "files": [], "cwd": "/",
                                    "stdout": "/dev/null",
                                    "stderr": "/dev/null"}})
        check(rep.get("ok"), "submit: %s" % rep)
        job = rep["job"]

        def exited(i):
            j = stormlab.call(lab.sock(i), {"op": "show", "job": job})
            return j["job"].get("ranks_exited") == 1
        stormlab.wait_for(lambda: all(exited(i) for i in range(lab.m)),
                          30, "rank 0's exit on every replica")
        # restart a replica that is not the strobe master
        m = lab.master()
        k = next(i for i in range(lab.m) if i != m)
        lab.p.kill("mm%d" % k)
        stormlab.wait_for(lambda: lab.mm_pid(k) is None, 10, "mm%d gone" % k)
        lab.start_mm(k)
        lab.converged(60)
        check(exited(k), "mm%d rejoined without rank 0's exit" % k)
        # rejoined the machine too (its join runs apart from its sync):
        # a master that has not cannot strobe until it has
        stormlab.wait_for(lambda: stormlab.call(lab.sock(k), {
            "op": "status"}).get("view_epoch", 0) > 0, 60,
                          "mm%d in the machine again" % k)
        # the master goes: another replica (maybe the joiner) takes over
        lab.p.kill("mm%d" % m)
        stormlab.wait_for(lambda: lab.master() not in (None, m), 30,
                          "a new strobe master")
        os.write(fd, b"\n")
        alive = [i for i in range(lab.m) if i != m]
        try:
            stormlab.wait_for(lambda: stormlab.call(lab.sock(alive[0]), {
                "op": "show", "job": job})["job"]["state"] == "COMPLETED",
                60, "the job to complete under the new master")
        except TimeoutError:
            # what each survivor says, for the failure's report
            for i in alive:
                print("mm%d: %s; %s" % (i, lab.managers(i).get(
                    "replication"), stormlab.call(lab.sock(i), {
                        "op": "show", "job": job})["job"]),
                      file=sys.stderr)
            raise
    finally:
        os.close(fd)
    print("statuses_rejoin: mm%d rejoined with rank 0's status; mm%d "
          "killed; the job completed under mm%d" % (k, m, lab.master()))


def history_of(lab, i, limit=10000):
    rep = stormlab.call(lab.sock(i), {"op": "history", "limit": limit},
                        timeout=10)
    check(rep.get("ok"), "history on mm%d: %s" % (i, rep))
    return rep


def test_history(lab):
    """Ended jobs leave the replicated state after the retention (here 20
    jobs) for the job history, written with the applied index, so every
    replica holds the same one; a replica away meanwhile fetches what it
    lacks from a peer when it rejoins.  show and queue -a fall back to the
    history; a user sees only their own jobs in it."""
    stormctl = tcp_stormctl(lab, timeout=60)
    # mm2 is away while the history forms
    lab.p.kill("mm2")
    stormlab.wait_for(lambda: lab.mm_pid(2) is None, 10, "mm2 gone")
    c = stormlab.Client("hist-%d" % os.getpid(), [lab.sock(0), lab.sock(1)])
    mine = []
    for i in range(5):  # the oldest: they reach the history
        r = stormctl("submit", "--name", "u%d" % i, "-o", "/dev/null",
                     "-e", "/dev/null", "/bin/true", user=65534)
        check(r.returncode == 0, "submit as uid 65534: %s" % r.stderr)
        mine.append(int(r.stdout.split()[-1]))
    for i in range(60):
        _, rep = c.request(submit_req("h%d" % i, argv=("/bin/true",)))
        check(rep.get("ok"), "submit %d: %s" % (i, rep))
    total = 65

    def settled():
        live = [j for j in lab.queue(0) if j["state"] in
                ("PENDING", "STAGING", "RUNNING")]
        return not live and len(history_of(lab, 0)["jobs"]) >= total - 20
    stormlab.wait_for(settled, 120, "65 jobs ended, 45 or more in history")
    state = {j["id"] for j in lab.queue(0)}
    hist = history_of(lab, 0)["jobs"]
    hids = {j["id"] for j in hist}
    check(len(state) <= 20, "%d ended jobs still in the state, retention "
          "20" % len(state))
    check(not state & hids and state | hids == set(range(1, total + 1)),
          "jobs lost or doubled between state %s and history %s" %
          (sorted(state), sorted(hids)))
    check(all(j["state"] == "COMPLETED" and j.get("history") for j in hist),
          "history records: %s" % hist[:2])
    check(history_of(lab, 1)["jobs"] == hist, "mm1's history differs")
    # the joiner: state transfer, then the history it lacks from a peer
    lab.start_mm(2)
    lab.converged(60)
    stormlab.wait_for(lambda: history_of(lab, 2)["jobs"] == hist and
                      not lab.managers(2)["history"]["backfilling"], 60,
                      "mm2's history to equal mm0's")
    old = min(hids)
    rep = stormlab.call(lab.sock(2), {"op": "show", "job": old})
    check(rep.get("ok") and rep["job"]["id"] == old and
          rep["job"].get("history"), "show %d on mm2: %s" % (old, rep))
    r = stormctl("show", str(old))
    check(r.returncode == 0 and "job history" in r.stdout,
          "stormctl show of a job in the history: %s" % r.stdout)
    r = stormctl("--json", "queue", "-a")
    qa = {j["id"] for j in json.loads(r.stdout)["jobs"]}
    check(qa == set(range(1, total + 1)), "queue -a lacks %s" %
          sorted(set(range(1, total + 1)) - qa))
    # users see their own jobs' history; root everyone's
    r = stormctl("--json", "history", user=65534)
    theirs = [j["id"] for j in json.loads(r.stdout)["jobs"]]
    check(r.returncode == 0 and sorted(theirs) == sorted(mine) and
          all(j in hids for j in theirs),
          "uid 65534 sees %s of its %s" % (theirs, mine))
    r = stormctl("history", "--user", "root", user=65534)
    check(r.returncode == 1 and "only its own" in r.stderr,
          "uid 65534 asked for root's history: %s" % r.stderr)
    r = stormctl("--json", "history", "--name", "h1*", "--state",
                 "completed", "--limit", "5")
    got = json.loads(r.stdout)["jobs"]
    check(r.returncode == 0 and len(got) <= 5 and got and
          all(j["name"].startswith("h1") for j in got),
          "history --name h1* --limit 5: %s" % r.stdout[:300])
    # impossible ranges and states: clear errors
    r = stormctl("history", "--since", "now", "--until", "-1h")
    check(r.returncode == 2 and "range is empty" in r.stderr,
          "since after until: %s" % r.stderr)
    rep = stormlab.call(lab.sock(0), {"op": "history", "since_ms": 10,
                                      "until_ms": 5})
    check(not rep.get("ok") and "range is empty" in rep.get("error", ""),
          "raw since > until: %s" % rep)
    rep = stormlab.call(lab.sock(0), {"op": "history",
                                      "states": ["RUNNING"]})
    check(not rep.get("ok") and "ended jobs only" in rep.get("error", ""),
          "history of RUNNING jobs: %s" % rep)
    rep = stormlab.call(lab.sock(0), {"op": "history_page", "below": 1,
                                      "after": 0, "cluster": "elsewhere"})
    check(not rep.get("ok") and "cluster" in rep.get("error", ""),
          "a page for another cluster: %s" % rep)
    print("history: %d jobs in the state, %d in the history on every "
          "replica; mm2 rejoined and fetched it; uid 65534 sees %d of its "
          "own" % (len(state), len(hids), len(theirs)))


def test_budget_retention(lab):
    """A state budget of 1 MiB fills with 16 KB jobs: "state full"
    refusals while reads and cancels go on; once the ended jobs pass
    their retention (2 s) they leave for the history and submissions are
    accepted again."""
    c = stormlab.Client("budget-%d" % os.getpid(), [lab.sock(0)])
    pad = ["PAD=" + "z" * 16000]
    held = None
    full = None
    for i in range(400):
        req = submit_req("b%d" % i, argv=("/bin/true",))
        req["job"]["env"] = pad
        _, rep = c.request(req)
        if not rep.get("ok"):
            full = rep
            break
        held = rep["job"]
    check(full and "state full" in full.get("error", ""),
          "no state full refusal: %s" % full)
    # reads and cancels are served while full
    check(stormlab.call(lab.sock(1), {"op": "queue"}).get("ok"),
          "queue refused while full")
    _, rep = c.request({"op": "cancel", "job": held})
    check(rep.get("ok") or "already ended" in rep.get("error", ""),
          "cancel refused while full: %s" % rep)

    def accepted():
        req = submit_req("again", argv=("/bin/true",))
        req["job"]["env"] = pad
        return c.request(req)[1].get("ok")
    stormlab.wait_for(accepted, 30, "a submission after the retention")
    hist = history_of(lab, 0)["jobs"]
    check(len(hist) > 0, "retention moved nothing to the history")
    lab.converged(30)
    print("budget_retention: full after %d jobs of 16 KB; served reads and "
          "a cancel; accepted again after %d jobs left for the history" %
          (held, len(hist)))


def test_shm_join(lab):
    """Three replicas and eight nodes start together on the shm fabric.
    The founding root gathers every member that knocks while it boots
    (a joiner it turned away wandered through the other candidates and
    gave up after 3 s, came back as a new incarnation, and the nodes'
    boxes never reached it again: jobs never ended).  Every replica joins
    at its first try, and a job of one rank per node runs and ends."""
    with open(os.path.join(lab.dir, "storm.log")) as f:
        log = f.read()
    check("cannot join the machine yet" not in log,
          "a replica's first join failed:\n%s" % "\n".join(
              l for l in log.splitlines() if "cannot join" in l))
    ctl = os.path.join(lab.build, "cli/stormctl")
    r = subprocess.run([ctl, "--socket", lab.sock(0), "run", "-n",
                        str(lab.n), "--", "/bin/hostname"],
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and len(r.stdout.splitlines()) == lab.n,
          "run -n %d on shm: exit %d, %d line(s): %s" % (
              lab.n, r.returncode, len(r.stdout.splitlines()), r.stderr))
    print("shm_join: 3 replicas and %d nodes joined at once; a %d-rank "
          "job ran and ended" % (lab.n, lab.n))


def test_join_wait(lab):
    """A replica that cannot join the machine yet (its root is gone)
    keeps serving: an attempt waits seconds for a view, in the join
    worker, not in the main loop (which once waited 3 s per attempt at
    every tick, starving its clients and its group, so that a replica
    restarted meanwhile could not sync and the group never converged)."""
    c = stormlab.Client("joinwait-%d" % os.getpid(), [lab.sock(1)])
    _, rep = c.request(submit_req("before"))
    check(rep.get("ok"), "submit: %s" % rep)
    # the node and manager 0 go first (manager 1 acts as the machine's
    # root), then the other two: the group recovers from them, the
    # machine is gone
    lab.p.kill("nm1")
    lab.p.kill("mm0")
    stormlab.wait_for(lambda: lab.mm_pid(0) is None, 10, "mm0 gone")
    stormlab.wait_for(lambda: lab.managers(1)["managers"][0].get(
        "member") is False, 30, "mm0 out of the group")
    for i in (1, 2):
        lab.p.kill("mm%d" % i)
    for i in (1, 2):
        stormlab.wait_for(lambda: lab.mm_pid(i) is None, 10,
                          "mm%d gone" % i)
        lab.start_mm(i)
    for i in (1, 2):
        stormlab.wait_for(lambda: lab.managers(i).get("synced"), 60,
                          "mm%d synced without manager 0" % i)
    log = os.path.join(lab.dir, "storm.log")
    stormlab.wait_for(lambda: "cannot join the machine yet" in
                      open(log).read(), 30, "a failed join attempt")
    # each answer within 2 s (an attempt waits 3 s for a view): 40 in a
    # row, spanning several attempts
    slow = 0
    for k in range(40):
        try:
            rep = stormlab.call(lab.sock(1 + k % 2), {"op": "managers"},
                                timeout=2)
            check(rep["replication"].get("world_stale") is True,
                  "mm%d joined a machine without its root: %s" %
                  (1 + k % 2, rep))
        except TimeoutError:
            slow += 1
    check(slow == 0, "%d of 40 requests unanswered for 2 s while the "
          "replicas tried to join" % slow)
    _, rep = c.request(submit_req("while-out"))
    check(rep.get("ok"), "submit while out of the machine: %s" % rep)
    lab.start_mm(0)
    reps = lab.converged(60)
    print("join_wait: 2 replicas synced without the machine, 40 requests "
          "answered during failed join attempts; converged at index %d" %
          reps[0]["applied"])


TESTS = {
    "kill_random": (test_kill_random, dict(managers=3, nodes=1)),
    "kill_all": (test_kill_all, dict(managers=3, nodes=1)),
    "master_during_job": (test_master_during_job, dict(managers=3, nodes=2)),
    # token 1000 ms: with 300 ms the ring flaps by itself on this machine
    # under the test's load (bench/run replication measures the cut at
    # the smallest stable token)
    "rolling_restart": (test_rolling_restart, dict(managers=3, nodes=1)),
    "bad_input": (test_bad_input, dict(managers=3, nodes=1)),
    "munge_tcp": (test_munge_tcp, dict(managers=3, nodes=1, munge=True)),
    "cut_head": (test_cut_head, dict(heads=3, nodes=2, token=1000)),
    "disk_full": (test_disk_full, dict(managers=3, nodes=1, small_disk=1)),
    "statuses_rejoin": (test_statuses_rejoin, dict(managers=3, nodes=2)),
    "joiner_master": (test_joiner_master, dict(managers=3, nodes=2)),
    "history": (test_history, dict(managers=3, nodes=1, munge=True,
                                   extra=["job_retention = 20"])),
    "shm_join": (test_shm_join, dict(managers=3, nodes=8,
                                     provider="shm")),
    "join_wait": (test_join_wait, dict(managers=3, nodes=1)),
    "budget_retention": (test_budget_retention, dict(
        managers=3, nodes=1, extra=["state_budget_mib = 1",
                                    "job_retention_s = 2"])),
}


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in TESTS:
        print(__doc__, file=sys.stderr)
        return 2
    build, name = sys.argv[1], sys.argv[2]
    fn, kw = TESTS[name]
    # meson's timeout sends SIGTERM: unwind so that every process started
    # is stopped (stormlab.run_test)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("SIGTERM"))
    multihost = "heads" in kw
    if not multihost:
        stormlab.run_in_private_netns()
    elif os.geteuid() != 0:
        print("SKIP: needs root for network namespaces", file=sys.stderr)
        return 77
    d = tempfile.mkdtemp(prefix="storm-fault-")

    def make_lab():
        munge = kw.pop("munge", False)
        if kw.pop("small_disk", False):
            # mm2's state on a 1 MiB tmpfs (this mount namespace's own)
            mnt = os.path.join(d, "state", "mm2")
            os.makedirs(mnt)
            subprocess.run(["mount", "-t", "tmpfs", "-o", "size=1m,mode=0700",
                            "tmpfs", mnt], check=True)
        if munge:
            procs = stormlab.Procs()
            sock = stormlab.start_munged(procs, d)
            kw["extra"] = ["munge_socket = %s" % sock,
                           "admins = 65533"] + kw.get("extra", [])
        lab = (stormlab.MultiHost if multihost else stormlab.Lab)(build, d,
                                                                   **kw)
        if munge:
            lab.p.procs["munged"] = procs.procs["munged"]
            lab.munge_socket = sock
        return lab
    return stormlab.run_test(name, d, make_lab, fn)


if __name__ == "__main__":
    sys.exit(main())
