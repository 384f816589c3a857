#!/usr/bin/env python3
"""Multi-user safety tests (issue 13): real daemons as root, clients as
real unprivileged users (nobody, and a user the test creates with a
supplementary group and removes).

Usage: test_security.py BUILD_DIR TEST
  id_as_owner    `id` in a job prints the submitter's uid, gid and groups
                 (root, nobody, a created user with an extra group);
  job_env        a rank's environment is the user's exports, STORM_* and
                 the documented allow-list (HOME, USER, LOGNAME, SHELL from
                 the node's passwd, a default PATH), nothing of the
                 daemon's; its RAM-disk directory is the user's, 0700;
  unknown_uid    a uid the node's NSS does not know: the job fails with a
                 reason naming it, and the node manager runs on;
  ngroups        storm-nm's NGROUPS_MAX lowered to 2 (a file bind-mounted
                 over /proc/sys/kernel/ngroups_max in its own mount
                 namespace): a user in 4 groups fails its job with a
                 reason naming them and the limit; the node manager runs
                 on and nobody's job on that node completes;
  cancel_other   one user's cancel of another's job refused, logged with
                 the uid;
  root_only_input  a root-only program or --file: stormctl, which opens
                 inputs with the user's rights, refuses them for nobody;
                 a FIFO passed as a descriptor is refused by the manager
                 (fstat, before any read); root's own still runs;
  slow_input     while the manager's worker reads a job's inputs (held up
                 by a test-only delay), the applied index keeps moving;
  input_cap      inputs over max_input_mib refused with the cap named, on
                 the unix socket and over TCP;
  tcp_large_input  over TCP a --file larger than one frame arrives whole
                 (its SHA-256 in the job);
  unlinked_input  over the unix socket the manager reads the descriptor: a
                 file removed before the request was sent still arrives;
  input_survives_head  three replicas: a job's inputs are on a majority
                 before its submit is acknowledged; the replica that took
                 it killed and the master's copy removed, the job runs
                 with the bytes the master fetched from the third;
  planted_dirs   a daemon's directory owned by another user, writable by
                 others, or a planted symbolic link: the daemon refuses to
                 start (exit 2) saying which and what to do;
  output_paths   batch output is written by the nodes as the job's user:
                 nobody's -o into a root-owned directory, or through a
                 symbolic link another user planted, fails the job with
                 the reason and writes nothing; a file nobody may write
                 is nobody's; root's own output still lands;
  daemon_gone    a rank that starts a setsid daemon and traps SIGTERM:
                 cancel sends SIGTERM first (the trap runs, its line is
                 written), then kills everything in the job's cgroup, the
                 daemon too, after kill_grace_ms;
  oom            a job over its --mem limit ends FAILED with the OOM
                 reason; its CPU time and peak memory are shown;
  cgroup_readonly  the cgroup hierarchy read-only: a job fails naming the
                 cause, the node manager runs on;
  replayed_credential  a sealed request captured on its way to replica 0
                 (nobody's credential), sent again byte for byte to
                 replica 1, whose own munged has not seen it: refused,
                 errno 13, "replayed", logged with the uid;
  altered_body   a credential whose body was altered in transit (the
                 digest it binds differs): refused, errno 13, logged;
  forged_node    a node manager at a real node's address without the
                 cluster key (none, or another): never joins, while a job
                 on the other node runs to the end with its output whole;
                 the real one, restarted with the key, joins;
  bad_key        a key file of the wrong mode, length or owner, or a
                 symbolic link: the daemon refuses to start (exit 2),
                 naming the file, the cause and the fix.
Exit: 0 pass, 1 fail, 77 skipped (not root).
"""

import json
import os
import hashlib
import pwd
import grp
import socket
import struct
import subprocess
import sys
import tempfile
import time

sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))), "harness"))
import stormlab  # noqa: E402


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def as_user(lab, uid, gid, args, init_groups=None, timeout=60):
    """stormctl ARGS run as uid/gid (setpriv; with init_groups: the
    user's groups from NSS, else none)."""
    pre = ["setpriv", "--reuid=%d" % uid, "--regid=%d" % gid]
    pre += ["--init-groups"] if init_groups else ["--clear-groups"]
    return subprocess.run(pre + [os.path.join(lab.build, "cli/stormctl"),
                                 "--config", lab.conf] + args,
                          capture_output=True, text=True, timeout=timeout)


class TestUser:
    """A user and extra groups of the test's own (groups of them, one by
    default), removed at the end; what was made is removed also when
    making the rest failed."""

    def __init__(self, groups=1):
        tag = "st%d" % (os.getpid() % 100000)
        self.name = tag + "u"
        self.groups = []
        try:
            for k in range(groups):
                g = tag + "g" + (str(k) if k else "")
                subprocess.run(["groupadd", g], check=True)
                self.groups.append(g)
            subprocess.run(["useradd", "--no-create-home", "--shell",
                            "/bin/sh", "-G", ",".join(self.groups),
                            self.name], check=True)
        except BaseException:
            self.remove()
            raise
        self.group = self.groups[0]
        pw = pwd.getpwnam(self.name)
        self.uid, self.gid = pw.pw_uid, pw.pw_gid
        self.extra = grp.getgrnam(self.group).gr_gid

    def remove(self):
        subprocess.run(["userdel", self.name], capture_output=True)
        for g in self.groups:
            subprocess.run(["groupdel", g], capture_output=True)


def test_id_as_owner(lab):
    r = as_user(lab, 0, 0, ["run", "-n", "2", "/usr/bin/id"],
                init_groups=True)
    check(r.returncode == 0, "root's id: %s" % r.stderr)
    check(all(l.startswith("uid=0(root) gid=0(root)")
              for l in r.stdout.splitlines()) and
          len(r.stdout.splitlines()) == 2, "root's job: %r" % r.stdout)
    r = as_user(lab, 65534, 65534, ["run", "-n", "2", "/usr/bin/id"])
    check(r.returncode == 0, "nobody's id: %s" % r.stderr)
    lines = r.stdout.splitlines()
    check(len(lines) == 2 and all(
        l == "uid=65534(nobody) gid=65534(nogroup) groups=65534(nogroup)"
        for l in lines), "nobody's job ran as: %r" % r.stdout)
    u = TestUser()
    try:
        r = as_user(lab, u.uid, u.gid, ["run", "-n", "1", "/usr/bin/id"],
                    init_groups=True)
        check(r.returncode == 0, "%s's id: %s" % (u.name, r.stderr))
        out = r.stdout.strip()
        check(out.startswith("uid=%d(%s) gid=%d(" % (u.uid, u.name, u.gid))
              and "%d(%s)" % (u.extra, u.group) in out.split("groups=")[1],
              "%s's job: %r (want uid %d, gid %d, groups with %d)" % (
                  u.name, out, u.uid, u.gid, u.extra))
    finally:
        u.remove()
    print("id_as_owner: root, nobody and a created user's jobs ran as "
          "them, supplementary groups from the node's NSS")


def test_job_env(lab):
    script = ('env; stat -c "dir %U %a" "$STORM_JOB_DIR"; '
              'stat -c "prog %U" "$STORM_JOB_DIR/sh"; '
              'ls /proc/$$/fd | sed "s/^/fd /"')
    r = as_user(lab, 65534, 65534, ["run", "-n", "1", "--export", "MINE=1",
                                    "/bin/sh", "-c", script])
    check(r.returncode == 0, "nobody's job: %s" % r.stderr)
    env = dict(l.split("=", 1) for l in r.stdout.splitlines() if "=" in l)
    want = {"MINE": "1", "USER": "nobody", "LOGNAME": "nobody",
            "HOME": pwd.getpwnam("nobody").pw_dir,
            "SHELL": pwd.getpwnam("nobody").pw_shell,
            "PATH": "/usr/local/bin:/usr/bin:/bin"}
    for k, v in want.items():
        check(env.get(k) == v, "%s=%r in the job, want %r" % (
            k, env.get(k), v))
    allowed = set(want) | {"PWD", "SHLVL", "_"}
    extra = [k for k in env if k not in allowed and
             not k.startswith("STORM_")]
    check(not extra, "the daemon's variables leaked into the job: %s" %
          extra)
    check("STORMLAB_DAEMON_ONLY" not in r.stdout, "daemon marker leaked")
    check("dir nobody 700" in r.stdout, "job directory: %r" % r.stdout)
    check("prog nobody" in r.stdout, "program file: %r" % r.stdout)
    # no descriptor of the daemon's (its log, its fabric sockets)
    fds = sorted(int(l.split()[1]) for l in r.stdout.splitlines()
                 if l.startswith("fd "))
    check(fds == [0, 1, 2], "the rank holds descriptors %s, want 0-2 "
          "only" % fds)
    print("job_env: exports, STORM_* and the allow-list only; the job "
          "directory is the user's, 0700; descriptors 0-2 only")


def test_unknown_uid(lab):
    uid = 54321
    while True:
        try:
            pwd.getpwuid(uid)
            uid += 1
        except KeyError:
            break
    r = as_user(lab, uid, uid, ["run", "-n", "1", "/usr/bin/id"])
    check(r.returncode != 0, "a job of uid %d with no passwd entry ran: "
          "%r" % (uid, r.stdout))
    check("uid %d has no passwd entry" % uid in r.stderr,
          "the failure does not name the cause: %r" % r.stderr)
    why = r.stderr.strip()
    check(lab.p.procs["nm1"].poll() is None, "nm1 stopped")
    r = as_user(lab, 65534, 65534, ["run", "-n", "1", "/bin/true"])
    check(r.returncode == 0, "the node no longer runs jobs: %s" % r.stderr)
    print("unknown_uid: uid %d's job failed: %s" % (uid, why))


def test_cancel_other(lab):
    """One user's cancel of another's job is refused, and the refusal is
    logged with the uid; the owner's own cancel works."""
    u = TestUser()
    try:
        r = as_user(lab, 65534, 65534, ["submit", "-o", "/dev/null", "-e",
                                        "/dev/null", "/bin/sleep", "600"])
        check(r.returncode == 0, "nobody's submit: %s" % r.stderr)
        job = r.stdout.split()[-1]
        r = as_user(lab, u.uid, u.gid, ["cancel", job], init_groups=True)
        check(r.returncode != 0 and "belongs to uid 65534" in r.stderr,
              "%s cancelled nobody's job %s: %r %r" % (
                  u.name, job, r.stdout, r.stderr))
        with open(os.path.join(lab.dir, "storm.log")) as f:
            log = f.read()
        check("uid %d refused" % u.uid in log,
              "the refusal is not in the log with the uid")
        r = as_user(lab, 65534, 65534, ["cancel", job])
        check(r.returncode == 0, "nobody's own cancel: %s" % r.stderr)
    finally:
        u.remove()
    print("cancel_other: uid %d's cancel of nobody's job %s refused and "
          "logged; the owner's went through" % (u.uid, job))


def refused_start(lab, name, start, want):
    """Start daemon name; it must exit 2 saying want (a substring)."""
    start()
    stormlab.wait_for(lambda: lab.p.procs[name].poll() is not None, 20,
                      "%s to refuse its directory" % name)
    code = lab.p.procs[name].returncode
    with open(os.path.join(lab.dir, "%s.out" % name)) as f:
        out = f.read()
    check(code == 2 and want in out, "%s exited %s: %r (want 2 and %r)" %
          (name, code, out, want))
    return out.strip().splitlines()[-1]


def test_planted_dirs(lab):
    """A daemon's directory someone else made, others may write into, or
    a symbolic link planted in its place: the daemon refuses to start
    (exit 2) and says which and what to do."""
    said = []
    # the node's RAM disk directory, given to nobody
    rd = os.path.join(lab.dir, "ramdisk", "lab-nm1")
    lab.p.kill("nm1")
    stormlab.wait_for(lambda: lab.p.procs["nm1"].poll() is not None, 10,
                      "nm1 gone")
    os.chown(rd, 65534, 65534)
    said.append(refused_start(lab, "nm1", lambda: lab.start_nm(1),
                              "belongs to uid 65534"))
    os.chown(rd, 0, 0)
    lab.start_nm(1)
    rep = stormlab.call(lab.sock(0), {"op": "wait", "nodes_up": lab.n,
                                      "timeout_ms": 30000}, timeout=40)
    check(rep.get("ok"), "nm1 after the repair: %s" % rep)
    # the replica's state directory: writable by all, then a symlink
    st = os.path.join(lab.dir, "state", "mm0")
    lab.p.kill("mm0")
    stormlab.wait_for(lambda: lab.mm_pid(0) is None, 10, "mm0 gone")
    os.chmod(st, 0o777)
    said.append(refused_start(lab, "mm0", lambda: lab.start_mm(0),
                              "writable by others"))
    os.chmod(st, 0o700)
    os.rename(st, st + ".real")
    os.symlink(st + ".real", st)
    said.append(refused_start(lab, "mm0", lambda: lab.start_mm(0),
                              "is a symbolic link"))
    os.unlink(st)
    os.rename(st + ".real", st)
    # back to normal: it starts and a job runs
    lab.start_mm(0)
    stormlab.wait_for(lambda: os.path.exists(lab.sock(0)), 30, "mm0 back")
    rep = stormlab.call(lab.sock(0), {"op": "wait", "nodes_up": lab.n,
                                      "timeout_ms": 30000}, timeout=40)
    check(rep.get("ok"), "nodes after the repair: %s" % rep)
    r = as_user(lab, 65534, 65534, ["run", "-n", "2", "/bin/true"])
    check(r.returncode == 0, "a job after the repair: %s" % r.stderr)
    print("planted_dirs: refused with: " + " | ".join(said))


def test_root_only_input(lab):
    """A program or --file only root may read, and a FIFO: stormctl opens
    a job's inputs with the user's own rights and hands the manager the
    descriptors, and the manager takes only regular files, so nobody's
    jobs are refused with the reason, and the strobe goes on."""
    priv = os.path.join(lab.dir, "priv")
    os.mkdir(priv, 0o755)
    secret = os.path.join(priv, "secret")
    with open(secret, "w") as f:
        f.write("root's secret\n")
    os.chmod(secret, 0o600)
    prog = os.path.join(priv, "rootcat")
    subprocess.run(["cp", "/bin/cat", prog], check=True)
    os.chmod(prog, 0o700)
    fifo = os.path.join(priv, "fifo")
    os.mkfifo(fifo, 0o666)
    said = []
    r = as_user(lab, 65534, 65534, ["run", "-n", "1", prog, "/etc/hostname"])
    check(r.returncode == 2 and "cannot read the program %s: Permission "
          "denied" % prog in r.stderr,
          "nobody ran a root-only program: %r %r" % (r.stdout, r.stderr))
    said.append(r.stderr.strip())
    r = as_user(lab, 65534, 65534, ["run", "-n", "1", "--file", secret,
                                    "/bin/cat", "secret"])
    check(r.returncode == 2 and "root's secret" not in r.stdout and
          "cannot read --file %s: Permission denied" % secret in r.stderr,
          "nobody staged a root-only file: %r %r" % (r.stdout, r.stderr))
    said.append(r.stderr.strip())
    before = stormlab.call(lab.sock(0), {"op": "managers"})["applied"]
    # stormctl opens the FIFO without waiting for a writer and passes it;
    # the manager's fstat refuses it before any read
    r = as_user(lab, 65534, 65534, ["run", "-n", "1", "--file", fifo,
                                    "/bin/true"], timeout=30)
    check(r.returncode == 1 and "%s is a FIFO, not a regular file" % fifo
          in r.stderr,
          "a FIFO as input: %r %r" % (r.stdout, r.stderr))
    said.append(r.stderr.strip())
    check("uid 65534 refused: input %s is a FIFO" % fifo in storm_log(lab),
          "the FIFO's refusal is not logged with the uid")
    # root still may, and the strobe moved on meanwhile
    r = as_user(lab, 0, 0, ["run", "-n", "1", "--file", secret,
                            "/bin/sh", "-c", 'cat "$STORM_JOB_DIR/secret"'],
                init_groups=True)
    check(r.returncode == 0 and "root's secret" in r.stdout,
          "root's own job with its file: %r %r" % (r.stdout, r.stderr))
    after = stormlab.call(lab.sock(0), {"op": "managers"})["applied"]
    check(after > before, "the applied index did not move (%d)" % after)
    print("root_only_input: refused with: " + " | ".join(said))


def test_slow_input(lab):
    """The manager reads a job's inputs off its main loop: while one is
    being read (held up by the test-only delay the daemons run with,
    STORM_TEST_INPUT_DELAY_MS, for the first set they read), another
    user's job is submitted, applied, run and ended, and the strobe goes
    on; then the slow one runs with its file."""
    data = os.path.join(lab.dir, "slow.txt")
    with open(data, "w") as f:
        f.write("arrived late\n")
    os.chmod(data, 0o644)
    m0 = stormlab.call(lab.sock(0), {"op": "managers"})
    t0 = time.monotonic()
    proc = subprocess.Popen(
        ["setpriv", "--reuid=65534", "--regid=65534", "--clear-groups",
         os.path.join(lab.build, "cli/stormctl"), "--config", lab.conf,
         "run", "-n", "1", "--file", data, "/bin/sh", "-c",
         'cat "$STORM_JOB_DIR/slow.txt"'],
        stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        # the slow set is with a worker once the manager holds a
        # connection for it
        stormlab.wait_for(lambda: stormlab.call(lab.sock(0), {
            "op": "managers"})["connections"] >= 2, 10,
            "stormctl's connection")
        r = as_user(lab, 0, 0, ["run", "-n", "1", "/bin/echo", "meanwhile"],
                    init_groups=True)
        m1 = stormlab.call(lab.sock(0), {"op": "managers"})
        still = proc.poll() is None
        check(r.returncode == 0 and "meanwhile" in r.stdout,
              "root's job while an input is read: %r" % r.stderr)
        check(still, "the slow input was read before root's job ended "
              "(the test proves nothing): %r" % (proc.poll(),))
        check(m1["applied"] > m0["applied"] and
              m1["strobe"]["slices"] > m0["strobe"]["slices"],
              "the applied index or the strobe did not move: %s -> %s" %
              (m0["applied"], m1["applied"]))
        out, err = proc.communicate(timeout=60)
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.wait()
    check(proc.returncode == 0 and "arrived late" in out,
          "the slow input's job: %r %r" % (out, err))
    print("slow_input: applied %d -> %d, %d slices while the input was "
          "read; its job done in %.1f s" % (
              m0["applied"], m1["applied"],
              m1["strobe"]["slices"] - m0["strobe"]["slices"],
              time.monotonic() - t0))


def big_file(lab, name, mib):
    path = os.path.join(lab.dir, name)
    with open(path, "wb") as f:
        f.write(os.urandom(mib << 20))
    os.chmod(path, 0o644)
    with open(path, "rb") as f:
        return path, hashlib.sha256(f.read()).hexdigest()


def tcp_user(lab, uid, args, timeout=120):
    """stormctl ARGS as uid over TCP to replica 0 (sealed with the
    lab's munged)."""
    env = dict(os.environ, STORM_MUNGE_SOCKET=lab.munge_sockets[0])
    return subprocess.run(
        ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid,
         "--clear-groups", os.path.join(lab.build, "cli/stormctl"),
         "--manager", lab.listen[0]] + args,
        capture_output=True, text=True, timeout=timeout, env=env)


def test_input_cap(lab):
    """A job's inputs over max_input_mib (24 in this lab) are refused
    with the cap named, on the unix socket (counted while read) and over
    TCP (the announced sizes, before a byte is kept); nothing applied."""
    path, _ = big_file(lab, "over.bin", 30)
    said = []
    r = as_user(lab, 65534, 65534, ["submit", "--file", path, "/bin/true"])
    check(r.returncode == 1 and "max_input_mib" in r.stderr and
          "cap of 24 MiB per job" in r.stderr,
          "unix: inputs over the cap: %r" % r.stderr)
    said.append(r.stderr.strip())
    r = tcp_user(lab, 65534, ["submit", "--file", path, "/bin/true"])
    check(r.returncode == 1 and "max_input_mib" in r.stderr and
          "cap of 24 MiB per job" in r.stderr,
          "TCP: inputs over the cap: %r" % r.stderr)
    said.append(r.stderr.strip())
    check(not lab.queue(0), "a job over the cap was queued: %s" %
          lab.queue(0))
    check("uid 65534 refused: the job's inputs pass the cap" in
          storm_log(lab), "the refusal is not logged with the uid")
    print("input_cap: " + " | ".join(said))


def test_tcp_large_input(lab):
    """Over TCP stormctl sends the inputs' bytes itself, in INPUT frames:
    a file larger than one frame (20 MiB > 16 MiB) arrives whole (its
    SHA-256 in the job is the file's)."""
    path, digest = big_file(lab, "big.bin", 20)
    r = tcp_user(lab, 65534, ["run", "-n", "1", "--file", path,
                              "/bin/sh", "-c",
                              'sha256sum "$STORM_JOB_DIR/big.bin"'])
    check(r.returncode == 0 and r.stdout.split()[:1] == [digest],
          "the job's checksum of the 20 MiB input: %r %r (want %s)" %
          (r.stdout, r.stderr, digest))
    print("tcp_large_input: 20 MiB over TCP, sha256 %s in the job" %
          digest[:16])


def run_unlinked(lab, i, name):
    """A run through replica i's unix socket of `cat` of a file opened,
    then removed before the request is even sent (raw frames, the
    descriptors by SCM_RIGHTS): the END frame and the job's output."""
    path = os.path.join(lab.dir, name)
    with open(path, "w") as f:
        f.write("read through the descriptor\n")
    prog = open("/bin/sh", "rb")
    data = open(path, "rb")
    os.unlink(path)  # no path left for anyone to open
    req = {"op": "run", "client": "sec-%s:1:0" % name, "seq": 1, "fds": 2,
           "job": {"name": name, "argv": [
               "/bin/sh", "-c", 'cat "$STORM_JOB_DIR/%s"' % name],
               "ranks": 1, "env": [], "cwd": "/", "files": [path]}}
    body = json.dumps(req).encode()
    frame = b"STRM" + bytes([1, 1, 0, 0]) + struct.pack(">I", len(body))
    s = socket.socket(socket.AF_UNIX)
    out, end = b"", None
    try:
        s.settimeout(30)
        s.connect(lab.sock(i))
        socket.send_fds(s, [frame], [prog.fileno(), data.fileno()])
        s.sendall(body)
        while end is None:
            hdr = stormlab.recv_exact(s, 12)
            n = struct.unpack(">I", hdr[8:12])[0]
            payload = stormlab.recv_exact(s, n)
            if hdr[5] == 2:
                rep = json.loads(payload)
                check(rep.get("ok"), "the run request: %s" % rep)
            elif hdr[5] == 3:
                out += payload[9:]
            elif hdr[5] == 4:
                end = json.loads(payload)
    finally:
        s.close()
        prog.close()
        data.close()
    return end, out


def test_unlinked_input(lab):
    """Over the unix socket the manager reads the client's descriptors,
    never its paths: a file opened, then removed before the request is
    even sent, still arrives whole."""
    end, out = run_unlinked(lab, 0, "gone.txt")
    check(end["state"] == "COMPLETED" and
          out == b"read through the descriptor\n",
          "the job of the removed file: %s %r" % (end, out))
    print("unlinked_input: the removed file's bytes arrived: %r" % out)


def blob_path(lab, i, data):
    """Where replica i keeps the blob of these bytes (inputs.h)."""
    return os.path.join(lab.dir, "state", "mm%d" % i, "inputs",
                        hashlib.sha256(data).hexdigest())


def submit_unlinked(lab, i, name, out):
    """A batch submit through replica i's unix socket of `cat` of a file
    opened, then removed before the request is sent (the descriptors by
    SCM_RIGHTS): the job id once acknowledged."""
    path = os.path.join(lab.dir, name)
    with open(path, "w") as f:
        f.write("kept by the replicas\n")
    prog = open("/bin/sh", "rb")
    data = open(path, "rb")
    os.unlink(path)  # no path left for anyone to open
    req = {"op": "submit", "client": "sec-%s:1:0" % name, "seq": 1,
           "fds": 2, "job": {"name": name, "argv": [
               "/bin/sh", "-c", 'cat "$STORM_JOB_DIR/%s"' % name],
               "ranks": 1, "env": [], "cwd": lab.dir, "files": [path],
               "stdout": out}}
    body = json.dumps(req).encode()
    frame = b"STRM" + bytes([1, 1, 0, 0]) + struct.pack(">I", len(body))
    s = socket.socket(socket.AF_UNIX)
    try:
        s.settimeout(30)
        s.connect(lab.sock(i))
        socket.send_fds(s, [frame], [prog.fileno(), data.fileno()])
        s.sendall(body)
        hdr = stormlab.recv_exact(s, 12)
        rep = json.loads(stormlab.recv_exact(
            s, struct.unpack(">I", hdr[8:12])[0]))
    finally:
        s.close()
        prog.close()
        data.close()
    check(rep.get("ok"), "the submit through mm%d: %s" % (i, rep))
    return int(rep["job"])


def test_input_survives_head(lab):
    """Three replicas: a job's inputs are on a majority of them before
    its submit is acknowledged.  The replica that took the job is killed
    once it answered, the strobe master loses its own copy of the file
    too, and the job still runs: the master fetches the bytes from the
    third replica (inputs_fetch), never from a path."""
    master = lab.master()
    check(master in (0, 1, 2), "no strobe master: %s" % master)
    took = (master + 1) % 3
    third = 3 - master - took
    r = subprocess.run([os.path.join(lab.build, "cli/stormctl"),
                        "--config", lab.conf, "submit", "--name", "block",
                        "/bin/sleep", "3600"], capture_output=True,
                       text=True, timeout=60)
    check(r.returncode == 0, "the blocking job: %s" % r.stderr)
    block = int(r.stdout.split()[-1])
    stormlab.wait_for(lambda: stormlab.call(lab.sock(master), {
        "op": "show", "job": block})["job"]["state"] == "RUNNING", 30,
        "the blocking job running")
    out = os.path.join(lab.dir, "survives.out")
    job = submit_unlinked(lab, took, "survives.txt", out)
    data = b"kept by the replicas\n"
    held = [os.path.exists(blob_path(lab, i, data)) for i in range(3)]
    check(sum(held) >= 2 and held[took],
          "acknowledged with the file's bytes on replicas %s only" % held)
    lab.p.kill("mm%d" % took)
    if os.path.exists(blob_path(lab, master, data)):
        os.unlink(blob_path(lab, master, data))
    check(os.path.exists(blob_path(lab, third, data)),
          "mm%d holds no copy: nothing to fetch from" % third)
    rep = stormlab.call(lab.sock(master), {
        "op": "cancel", "client": "sec-survives", "seq": 1, "job": block})
    check(rep.get("ok"), "cancel of the blocking job: %s" % rep)
    rep = stormlab.call(lab.sock(master), {
        "op": "wait", "client": "sec", "seq": 2, "job": job,
        "timeout_ms": 60000}, timeout=65)
    check(rep.get("ok"), "job %d did not end: %s" % (job, rep))
    end = stormlab.call(lab.sock(master), {"op": "show", "job": job})["job"]
    check(end["state"] == "COMPLETED", "the job after mm%d died: %s"
          % (took, end))
    with open(out, "rb") as f:
        got = f.read()
    check(got == data, "its output: %r" % got)
    check("input blobs fetched from a peer" in storm_log(lab),
          "the master did not log the fetch")
    print("input_survives_head: taken by mm%d (killed after the ack), "
          "blob on %s, staged by mm%d from mm%d's copy: %r"
          % (took, held, master, third, got))


def wait_job(lab, job, timeout_ms=30000):
    """The job's record once it has ended (op wait)."""
    rep = stormlab.call(lab.sock(0), {"op": "wait", "client": "sec",
                                      "seq": 1, "job": int(job),
                                      "timeout_ms": timeout_ms},
                        timeout=timeout_ms / 1000 + 5)
    check(rep.get("ok"), "job %s did not end: %s" % (job, rep))
    rep = stormlab.call(lab.sock(0), {"op": "show", "job": int(job)})
    return rep["job"] if "job" in rep else rep


def submit_as(lab, uid, gid, args):
    r = as_user(lab, uid, gid, ["submit"] + args)
    check(r.returncode == 0, "submit %s: %s" % (args, r.stderr))
    return int(r.stdout.split()[-1])


def test_output_paths(lab):
    """Batch output files are opened by the nodes with the job user's
    rights, O_NOFOLLOW, regular files only."""
    u = TestUser()
    try:
        pub = os.path.join(lab.dir, "pub")
        os.mkdir(pub)
        os.chmod(pub, 0o1777)  # like /tmp
        victim = os.path.join(lab.dir, "victim")
        with open(victim, "w") as f:
            f.write("root's file\n")
        os.chmod(victim, 0o666)  # even one anybody may write
        said = []
        # 1. into a directory only root may write
        job = submit_as(lab, 65534, 65534, [
            "-o", "/etc/storm-sec-%j.out", "-e", "/dev/null", "/bin/echo",
            "x"])
        j = wait_job(lab, job)
        check(j["state"] == "FAILED" and "cannot open its output file "
              "/etc/storm-sec-%d.out as uid 65534: Permission denied" % job
              in j.get("reason", ""), "nobody's -o /etc/...: %s" % j)
        check(not os.path.exists("/etc/storm-sec-%d.out" % job),
              "a file was created in /etc")
        said.append(j["reason"])
        # 2. through a symbolic link nobody planted for another user
        link = os.path.join(pub, "planted.out")
        subprocess.run(["setpriv", "--reuid=65534", "--regid=65534",
                        "--clear-groups", "ln", "-s", victim, link],
                       check=True)
        job = submit_as(lab, u.uid, u.gid, ["-o", link, "-e", "/dev/null",
                                            "/bin/echo", "x"])
        j = wait_job(lab, job)
        # (the kernel's protected_symlinks may refuse it before
        # O_NOFOLLOW does)
        check(j["state"] == "FAILED" and (
            "symbolic link" in j.get("reason", "") or
            "as uid %d: Permission denied" % u.uid in j.get("reason", "")),
              "output through a planted link: %s" % j)
        said.append(j["reason"])
        # ... and one of the user's own: O_NOFOLLOW
        own = os.path.join(lab.dir, "own")
        os.mkdir(own)
        os.chown(own, u.uid, u.gid)
        os.symlink(victim, os.path.join(own, "link.out"))
        os.lchown(os.path.join(own, "link.out"), u.uid, u.gid)
        job = submit_as(lab, u.uid, u.gid, [
            "-o", os.path.join(own, "link.out"), "-e", "/dev/null",
            "/bin/echo", "x"])
        j = wait_job(lab, job)
        check(j["state"] == "FAILED" and "it is a symbolic link" in
              j.get("reason", ""), "output through a link: %s" % j)
        with open(victim) as f:
            check(f.read() == "root's file\n", "the link's target changed")
        said.append(j["reason"])
        # 3. nobody's own file, relative to its working directory
        job = submit_as(lab, 65534, 65534, [
            "-n", "2", "-o", os.path.join(pub, "mine-%j.out"),
            "-e", "/dev/null",
            "/bin/sh", "-c", "echo rank $STORM_RANK"])
        j = wait_job(lab, job)
        check(j["state"] == "COMPLETED", "nobody's batch job: %s" % j)
        path = os.path.join(pub, "mine-%d.out" % job)
        st = os.stat(path)
        with open(path) as f:
            lines = sorted(f.read().splitlines())
        check(st.st_uid == 65534 and lines == ["rank 0", "rank 1"],
              "nobody's output file: uid %d, %r" % (st.st_uid, lines))
        # 4. root's own still lands where root says
        job = submit_as(lab, 0, 0, ["-o", os.path.join(lab.dir, "root-%j"),
                                    "-e", "/dev/null", "/bin/echo", "root"])
        j = wait_job(lab, job)
        with open(os.path.join(lab.dir, "root-%d" % job)) as f:
            check(j["state"] == "COMPLETED" and f.read() == "root\n",
                  "root's batch output: %s" % j)
        with open(os.path.join(lab.dir, "storm.log")) as f:
            log = f.read()
        check("uid 65534 refused" in log and "uid %d refused" % u.uid in log,
              "the refusals are not in the log with the uid")
    finally:
        u.remove()
    print("output_paths: refused with: " + " | ".join(said))


def alive(pid):
    try:
        os.kill(pid, 0)
        return True
    except ProcessLookupError:
        return False


def test_daemon_gone(lab):
    """A process that leaves its rank's session is still in the job's
    cgroup: cancel reaches it.  SIGTERM comes first, SIGKILL after the
    grace period."""
    pub = os.path.join(lab.dir, "pub")
    os.mkdir(pub)
    os.chmod(pub, 0o1777)
    pidf, termf = os.path.join(pub, "daemon.pid"), os.path.join(pub, "term")
    script = ('setsid sh -c \'echo $$ > %s; trap "" TERM; '
              'exec sleep 600\' </dev/null >/dev/null 2>&1 & '
              'trap "echo got TERM > %s; exit 0" TERM; '
              'while :; do sleep 1; done' % (pidf, termf))
    job = submit_as(lab, 65534, 65534, ["-o", "/dev/null", "-e", "/dev/null",
                                        "/bin/sh", "-c", script])
    stormlab.wait_for(lambda: os.path.exists(pidf) and
                      open(pidf).read().strip(), 30, "the daemon's pid")
    pid = int(open(pidf).read())
    with open("/proc/%d/stat" % pid) as f:
        fields = f.read().rsplit(")", 1)[1].split()
    check(int(fields[2]) == pid and int(fields[3]) == pid,
          "the daemon did not leave the rank's session: %s" % fields[:6])
    t0 = time.monotonic()
    r = as_user(lab, 65534, 65534, ["cancel", str(job)])
    check(r.returncode == 0, "cancel: %s" % r.stderr)
    # it ignores SIGTERM: only the kill after the grace ends it
    stormlab.wait_for(lambda: not alive(pid), 30,
                      "the setsid daemon to be killed")
    took = time.monotonic() - t0
    check(os.path.exists(termf), "the rank's SIGTERM trap did not run")
    check(took >= 0.9, "killed after %.2f s, before the grace period" %
          took)
    print("daemon_gone: the rank trapped SIGTERM, the setsid daemon "
          "(pid %d, its own session) was killed %.2f s after cancel" %
          (pid, took))


def test_oom(lab):
    """--mem: the job's cgroup has the limit; over it, the kernel's OOM
    killer ends a process and the job is FAILED with that reason."""
    job = submit_as(lab, 65534, 65534, [
        "--mem", "64M", "-o", "/dev/null", "-e", "/dev/null",
        "/usr/bin/python3", "-c",
        "b = bytearray(512 << 20); print(len(b))"])
    j = wait_job(lab, job)
    check(j["state"] == "FAILED" and "out of memory" in j.get("reason", "")
          and "64 MiB" in j["reason"], "a job over --mem 64M: %s" % j)
    check(j.get("mem_bytes") == 64 << 20, "mem_bytes shown: %s" % j)
    # within its limit, a job runs, and its usage is the cgroup's
    job = submit_as(lab, 65534, 65534, [
        "--mem", "256M", "-o", "/dev/null", "-e", "/dev/null",
        "/usr/bin/python3", "-c", "b = bytearray(64 << 20); b[::4096] = "
        "b'x' * len(b[::4096])"])
    j = wait_job(lab, job)
    check(j["state"] == "COMPLETED", "a job within --mem: %s" % j)
    peak = max(u["maxrss_kib"] for u in j["usage"])
    check(peak >= 64 << 10, "peak memory %d KiB, below the 64 MiB the job "
          "touched" % peak)
    r = as_user(lab, 65534, 65534, ["run", "--mem", "0", "/bin/true"])
    check(r.returncode == 2 and "--mem" in r.stderr,
          "--mem 0: %r" % r.stderr)
    print("oom: over --mem 64M: FAILED (%s); within: peak %d KiB" % (
        "out of memory", peak))


def test_cgroup_readonly(lab):
    """The cgroup hierarchy mounted read-only (in this test's mount
    namespace): every job fails naming the cause; the daemon runs on."""
    r = as_user(lab, 65534, 65534, ["run", "/bin/true"])
    check(r.returncode != 0 and "no cgroup for it" in r.stderr and
          "Read-only file system" in r.stderr,
          "a job without a cgroup: %r" % r.stderr)
    check(lab.p.procs["nm1"].poll() is None, "nm1 stopped")
    print("cgroup_readonly: " + r.stderr.strip())


NGROUPS_LIMIT = 2  # storm-nm's NGROUPS_MAX in test_ngroups (main())


def test_ngroups(lab):
    """storm-nm's NGROUPS_MAX lowered (its own mount namespace, main()):
    a user in more groups fails its job with the cause named; the daemon
    runs on and another user's job on the node completes."""
    nm = lab.p.procs["nm1"]
    with open("/proc/%d/root/proc/sys/kernel/ngroups_max" % nm.pid) as f:
        seen = f.read().strip()
    check(seen == str(NGROUPS_LIMIT), "storm-nm (pid %d) sees ngroups_max "
          "%r, want %d" % (nm.pid, seen, NGROUPS_LIMIT))
    with open("/proc/sys/kernel/ngroups_max") as f:
        check(int(f.read()) > NGROUPS_LIMIT + 2,
              "the limit was lowered outside storm-nm too")
    u = TestUser(groups=NGROUPS_LIMIT + 1)
    try:
        n = len(os.getgrouplist(u.name, u.gid))
        check(n == NGROUPS_LIMIT + 2, "%s is in %d groups, want %d" % (
            u.name, n, NGROUPS_LIMIT + 2))
        job = submit_as(lab, u.uid, u.gid, ["-o", "/dev/null", "-e",
                                            "/dev/null", "/usr/bin/id"])
        j = wait_job(lab, job)
        want = ("user %s (uid %d) is in %d groups on this node, more than "
                "its NGROUPS_MAX (%d)" % (u.name, u.uid, n, NGROUPS_LIMIT))
        check(j["state"] == "FAILED" and want in j.get("reason", ""),
              "%s's job in %d groups: %s (want FAILED, %r)" % (
                  u.name, n, j, want))
        why = j["reason"]
        # what its owner is shown, and what the node manager logged
        r = as_user(lab, u.uid, u.gid, ["show", str(job)])
        check(r.returncode == 0 and want in r.stdout,
              "stormctl show %d as %s: %r %r" % (job, u.name, r.stdout,
                                                  r.stderr))
        check("job %d: node nm1: cannot start job %d: %s" % (job, job, want)
              in storm_log(lab), "the node manager did not log the cause")
    finally:
        u.remove()
    check(nm.poll() is None, "nm1 stopped (exit %s)" % nm.returncode)
    # the same node (the lab's only one) runs the next user's job
    r = as_user(lab, 65534, 65534, ["run", "-n", "1", "/usr/bin/id"])
    check(r.returncode == 0 and r.stdout.strip() ==
          "uid=65534(nobody) gid=65534(nogroup) groups=65534(nogroup)",
          "nobody's job after it: %d %r %r" % (r.returncode, r.stdout,
                                               r.stderr))
    check(nm.poll() is None, "nm1 stopped after nobody's job")
    print("ngroups: storm-nm's NGROUPS_MAX %d, a user in %d groups: %s; "
          "nobody's job then ran on nm1" % (NGROUPS_LIMIT, n, why))


def nobody_request(lab, munge_sock, req):
    """The bytes stormctl run as nobody would send for req over TCP: the
    body and a credential of nobody's from the munged at munge_sock,
    bound to it."""
    body = json.dumps(req).encode()
    cred = subprocess.run(["setpriv", "--reuid=65534", "--regid=65534",
                           "--clear-groups", "munge", "-S", munge_sock,
                           "-s", stormlab.seal_payload(body)],
                          capture_output=True, text=True, check=True
                          ).stdout.strip()
    return body, cred


def tcp(lab, i):
    host, port = lab.listen[i].split(":")
    return (host, int(port))


def storm_log(lab):
    with open(os.path.join(lab.dir, "storm.log")) as f:
        return f.read()


def test_replayed_credential(lab):
    """Each head has its own munged (one key): munged's replay check is
    per host, so only the cluster's replicated cache can refuse a
    credential replayed to another replica.  The request is a cancel of
    nobody's own job (a write in one frame: a submit's inputs follow its
    request, docs/protocol.md 2.7)."""
    job = submit_as(lab, 65534, 65534, ["--name", "once", "-o", "/dev/null",
                                        "-e", "/dev/null", "/bin/sleep",
                                        "600"])
    req = {"op": "cancel", "client": "sec-replay:1:0", "seq": 1, "job": job}
    body, cred = nobody_request(lab, lab.munge_sockets[0], req)
    frame = stormlab.sealed_frame(cred, body)
    first = stormlab.call_raw(tcp(lab, 0), frame)
    check(first.get("ok"), "nobody's sealed cancel at replica 0: %s" % first)
    # head 1's munged never saw it and vouches for it: the refusal must
    # be the cluster's (its text, not munged's "Replayed credential")
    again = stormlab.call_raw(tcp(lab, 1), frame)
    check(not again.get("ok") and again.get("errno") == 13 and
          "replayed" in again.get("error", "") and
          "the cluster accepted it before" in again.get("error", ""),
          "the replayed credential at replica 1: %s" % again)
    # and replica 0 too (its munged's own check aside)
    again0 = stormlab.call_raw(tcp(lab, 0), frame)
    check(not again0.get("ok") and again0.get("errno") == 13,
          "the replayed credential at replica 0: %s" % again0)
    jobs = [j for j in lab.queue(1) if j["name"] == "once"]
    check(len(jobs) == 1 and jobs[0]["uid"] == 65534 and
          jobs[0]["state"] == "CANCELLED", "jobs named once: %s" % jobs)
    log = storm_log(lab)
    check("uid 65534 refused" in log and "replayed" in log,
          "the refusal is not in the log with the uid")
    # a fresh credential for another request still works at replica 1
    req2 = dict(req, seq=2, op="show", job=jobs[0]["id"])
    body, cred = nobody_request(lab, lab.munge_sockets[1], req2)
    rep = stormlab.call_raw(tcp(lab, 1), stormlab.sealed_frame(cred, body))
    check(rep.get("ok") and rep["job"]["uid"] == 65534,
          "a fresh credential at replica 1: %s" % rep)
    print("replayed_credential: replica 0 took nobody's credential once; "
          "the same bytes at replica 1 (its munged vouching) refused: %s" %
          again["error"])


def test_altered_body(lab):
    """A credential bound to one body, sent with another: refused before
    the uid is trusted, logged with the uid.  The request is a cancel of
    one of nobody's jobs, altered to cancel the other."""
    meant, other = [submit_as(lab, 65534, 65534, [
        "--name", n, "-o", "/dev/null", "-e", "/dev/null", "/bin/sleep",
        "600"]) for n in ("meant", "other")]
    req = {"op": "cancel", "client": "sec-alter:1:0", "seq": 1, "job": meant}
    body, cred = nobody_request(lab, lab.munge_sockets[0], req)
    altered = body.replace(b'"job": %d' % meant, b'"job": %d' % other)
    check(altered != body, "the test did not alter the body")
    rep = stormlab.call_raw(tcp(lab, 0), stormlab.sealed_frame(cred, altered))
    check(not rep.get("ok") and rep.get("errno") == 13 and
          "binds another request body" in rep.get("error", ""),
          "the altered request: %s" % rep)
    check(not [j for j in lab.queue(0) if j["state"] == "CANCELLED"],
          "the altered request was applied")
    check("uid 65534 refused" in storm_log(lab),
          "the refusal is not in the log with the uid")
    print("altered_body: refused: %s" % rep["error"])
    # the cluster did not take it: with its own body, at the other head
    # (whose munged has not seen it), it is good
    rep = stormlab.call_raw(tcp(lab, 1), stormlab.sealed_frame(cred, body))
    check(rep.get("ok"), "the credential with its own body: %s" % rep)


def nodes_up(lab):
    rep = stormlab.call(lab.sock(0), {"op": "nodes"})
    return {n["name"] for n in rep["nodes"] if n["state"] == "UP"}


def test_forged_node(lab):
    """The fabric is authenticated (auth_key): a process at nm2's address
    without the key cannot join, report, or touch another node's job."""
    lab.p.kill("nm2")
    stormlab.wait_for(lambda: "nm2" not in nodes_up(lab), 30, "nm2 down")
    with open(lab.conf) as f:
        conf = f.read()
    other = stormlab.write_key(lab.dir, "other.key")
    forged = {"nokey": "\n".join(l for l in conf.splitlines()
                                  if not l.startswith("auth_key")),
              "otherkey": conf.replace(
                  "auth_key = %s" % os.path.join(lab.dir, "storm.key"),
                  "auth_key = %s" % other)}
    for tag, text in forged.items():
        path = os.path.join(lab.dir, "forged-%s.conf" % tag)
        with open(path, "w") as f:
            f.write(text)
        p = lab.p.start("forged-" + tag, [
            os.path.join(lab.build, "node/storm-nm"), "--config", path,
            "--name", "nm2"], os.path.join(lab.dir, "forged-%s.out" % tag))
        try:
            # a job on nm1 meanwhile: it runs whole
            before = stormlab.call(lab.sock(0), {"op": "status"})["slice"]
            r = as_user(lab, 65534, 65534, [
                "run", "-n", "1", "-w", "1", "/bin/sh", "-c",
                "for i in 1 2 3 4 5; do echo line $i; done"])
            check(r.returncode == 0 and r.stdout == "".join(
                "line %d\n" % i for i in range(1, 6)),
                  "%s: the job on nm1: %r %r" % (tag, r.stdout, r.stderr))
            # the strobe goes on for 100 slices; the forger is not heard
            stormlab.wait_for(lambda: stormlab.call(
                lab.sock(0), {"op": "status"})["slice"] > before + 100,
                              30, "100 more slices")
            check(p.poll() is None or p.returncode != 0,
                  "%s: the forged node manager exited 0" % tag)
            check("nm2" not in nodes_up(lab),
                  "%s: a node manager without the key joined" % tag)
        finally:
            lab.p.kill("forged-" + tag)
    lab.start_nm(2)
    stormlab.wait_for(lambda: "nm2" in nodes_up(lab), 30,
                      "the real nm2, with the key, to join")
    print("forged_node: without the key, and with another, nm2's address "
          "never joined; a job on nm1 ran whole; the real nm2 rejoined")


def test_bad_key(lab):
    """A key file a daemon must not trust: refused at start, exit 2."""
    key = os.path.join(lab.dir, "storm.key")
    with open(lab.conf) as f:
        conf = f.read()
    bad = os.path.join(lab.dir, "bad.key")

    def start_with(prep, want):
        try:
            os.unlink(bad)
        except FileNotFoundError:
            pass
        prep()
        path = os.path.join(lab.dir, "bad.conf")
        with open(path, "w") as f:
            f.write(conf.replace("auth_key = %s" % key, "auth_key = %s" % bad))
        r = subprocess.run([os.path.join(lab.build, "node/storm-nm"),
                            "--config", path, "--name", "nm2"],
                           capture_output=True, text=True, timeout=30)
        check(r.returncode == 2 and want in r.stderr and bad in r.stderr,
              "storm-nm with %s: exit %d, %r" % (want, r.returncode,
                                                 r.stderr))
        return r.stderr.strip()

    def mode644():
        with open(bad, "wb") as f:
            f.write(os.urandom(32))
        os.chmod(bad, 0o644)

    def short():
        fd = os.open(bad, os.O_WRONLY | os.O_CREAT, 0o400)
        os.write(fd, os.urandom(16))
        os.close(fd)

    def others():
        mode644()
        os.chmod(bad, 0o400)
        os.chown(bad, 65534, 65534)

    said = [start_with(mode644, "mode 0644"),
            start_with(short, "16 bytes, a key has exactly 32"),
            start_with(others, "belongs to uid 65534"),
            start_with(lambda: os.symlink(key, bad), "symbolic link")]
    print("bad_key: refused with: " + " | ".join(said))


TESTS = {
    "forged_node": test_forged_node,
    "bad_key": test_bad_key,
    "daemon_gone": test_daemon_gone,
    "oom": test_oom,
    "cgroup_readonly": test_cgroup_readonly,
    "output_paths": test_output_paths,
    "replayed_credential": test_replayed_credential,
    "altered_body": test_altered_body,
    "root_only_input": test_root_only_input,
    "slow_input": test_slow_input,
    "input_cap": test_input_cap,
    "tcp_large_input": test_tcp_large_input,
    "unlinked_input": test_unlinked_input,
    "input_survives_head": test_input_survives_head,
    "planted_dirs": test_planted_dirs,
    "cancel_other": test_cancel_other,
    "id_as_owner": test_id_as_owner,
    "job_env": test_job_env,
    "unknown_uid": test_unknown_uid,
    "ngroups": test_ngroups,
}


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in TESTS:
        print(__doc__, file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("SKIP: needs root (daemons as root, clients as users)",
              file=sys.stderr)
        return 77
    build, name = sys.argv[1], sys.argv[2]
    stormlab.run_in_private_netns()
    d = tempfile.mkdtemp(prefix="storm-sec-")
    os.chmod(d, 0o755)  # clients run as other users
    os.environ["STORMLAB_DAEMON_ONLY"] = "1"  # must not reach a job

    if name == "cgroup_readonly":
        # this namespace's view of every cgroup hierarchy, read-only
        subprocess.run("for m in $(awk '$3 ~ /^cgroup/ {print $2}' "
                       "/proc/self/mounts); do mount -o remount,ro,bind "
                       "$m $m; done", shell=True, check=True)

    if name == "slow_input":
        # test only: the inputs worker waits this long before each read
        os.environ["STORM_TEST_INPUT_DELAY_MS"] = "3000"

    def make_lab():
        if name == "ngroups":
            # glibc's sysconf(_SC_NGROUPS_MAX) reads this file: the node
            # manager alone, in a mount namespace of its own, sees a
            # small number bound over it (exec: its PID is storm-nm's)
            limit = os.path.join(d, "ngroups_max")
            with open(limit, "w") as f:
                f.write("%d\n" % NGROUPS_LIMIT)
            return stormlab.Lab(build, d, managers=1, nodes=1, node_wrap=[
                "unshare", "--mount", "--propagation", "private", "--",
                "sh", "-c", 'mount --bind "$0" /proc/sys/kernel/ngroups_max'
                ' && exec "$@"', limit])
        if name in ("input_cap", "tcp_large_input"):
            # one head with a munged of the test's own (stormctl over TCP)
            procs = stormlab.Procs()
            sock = stormlab.start_munged(procs, d)
            lab = stormlab.Lab(build, d, managers=1, nodes=1,
                               extra=["max_input_mib = 24",
                                      "munge_socket = %s" % sock])
            lab.p.procs.update(procs.procs)
            lab.p.pids += procs.pids
            lab.munge_sockets = [sock]
            return lab
        if name == "input_survives_head":
            return stormlab.Lab(build, d, managers=3, nodes=1)
        if name not in ("replayed_credential", "altered_body"):
            return stormlab.Lab(build, d, managers=1, nodes=2,
                                extra=["kill_grace_ms = 1000"])
        # two heads, each with its own munged sharing one key
        procs = stormlab.Procs()
        socks = [stormlab.start_munged(procs, d, "munged%d" % i,
                                       key=os.path.join(d, "munge.key"))
                 for i in range(2)]
        lab = stormlab.Lab(build, d, managers=2, nodes=1,
                           manager_extra=lambda i: [
                               "munge_socket = %s" % socks[i]])
        lab.p.procs.update(procs.procs)
        lab.p.pids += procs.pids
        lab.munge_sockets = socks
        return lab
    return stormlab.run_test(name, d, make_lab, TESTS[name])


if __name__ == "__main__":
    sys.exit(main())
