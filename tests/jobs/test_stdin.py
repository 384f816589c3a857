#!/usr/bin/env python3
"""stormctl run's stdin forwarded to rank 0 (issue 17, "stdin to rank 0 or
none"), on a real local cluster (3 node managers x 2 cpus, one manager).

Usage: test_stdin.py BUILD TEST

  rank0    `echo hello | stormctl run -n 2 /bin/cat` prints hello once:
           rank 0 reads it, rank 1 reads /dev/null; a batch job's rank 0
           (submit) still reads /dev/null;
  big      6 MiB of random bytes through `run -n1 /bin/cat` come back
           byte for byte (SHA-256 compared), stormctl's memory bounded;
  none     --input=none: rank 0 reads end of file at once while
           stormctl's own stdin stays open; a bad value is refused
           (exit 2);
  noread   rank 0 never reads (sh -c 'exit 3') while stormctl's stdin is
           an endless stream: the job ends, stormctl exits 3; rank 0
           that closes its stdin (head -c 5) stops stormctl reading;
  killed   stormctl killed (SIGKILL, by PID) while it streams: rank 0
           reads end of file, the job completes, no rank is left.

Exit: 0 pass, 1 fail, 77 skipped (not root).
"""

import hashlib
import os
import select
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "harness"))
import stormlab  # noqa: E402


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def ctl_argv(lab, args):
    return [os.path.join(os.path.abspath(lab.build), "cli/stormctl"),
            "--config", lab.conf] + args


def ctl(lab, args, stdin=None, timeout=60):
    return subprocess.run(ctl_argv(lab, args), input=stdin,
                          capture_output=True, timeout=timeout,
                          cwd=lab.dir)


def show(lab, job):
    return stormlab.call(lab.sock(0), {"op": "show", "job": int(job)})["job"]


def last_job(lab):
    return max(j["id"] for j in lab.queue(0))


def test_rank0(lab):
    r = ctl(lab, ["run", "-n", "2", "/bin/cat"], stdin=b"hello\n")
    check(r.returncode == 0 and r.stdout == b"hello\n",
          "-n 2 cat: exit %d, out %r, err %r" % (r.returncode, r.stdout,
                                                r.stderr))
    r = ctl(lab, ["run", "-n", "2", "-l", "/bin/sh", "-c",
                  "read x; echo got=$x"], stdin=b"one\ntwo\n")
    got = sorted(r.stdout.decode().splitlines())
    check(r.returncode == 0 and got == ["0: got=one", "1: got="],
          "rank 0 reads, rank 1 /dev/null: %r %r" % (got, r.stderr))
    out = os.path.join(lab.dir, "sub-%j.out")
    r = ctl(lab, ["submit", "-o", out, "/bin/sh", "-c",
                  "wc -c; readlink /proc/self/fd/0"],
            stdin=b"not for a batch job\n")
    check(r.returncode == 0, "submit: %r" % r.stderr)
    job = int(r.stdout.split()[-1])
    stormlab.call(lab.sock(0), {"op": "wait", "job": job,
                                "timeout_ms": 30000}, timeout=35)
    with open(out.replace("%j", str(job))) as f:
        text = f.read().split()
    check(text == ["0", "/dev/null"], "batch stdin: %r" % text)
    print("rank0: hello once; rank 1 and batch read /dev/null")


def test_big(lab):
    data = os.urandom(6 << 20)
    r = ctl(lab, ["run", "-n", "1", "/usr/bin/sha256sum"], stdin=data,
            timeout=120)
    want = hashlib.sha256(data).hexdigest()
    lines = r.stdout.decode().split()
    check(r.returncode == 0 and lines[:1] == [want],
          "6 MiB: exit %d, %r (want %s), err %r" % (
              r.returncode, lines, want, r.stderr[-500:]))
    # the bytes come back too: rank 0 cats them
    with tempfile.TemporaryFile() as f:
        f.write(data)
        f.seek(0)
        p = subprocess.run(["/usr/bin/time", "-f", "%M"] +
                           ctl_argv(lab, ["run", "-n1", "/bin/cat"]),
                           stdin=f, capture_output=True, timeout=120,
                           cwd=lab.dir)
    rss_kib = int(p.stderr.decode().split()[-1])
    check(p.returncode == 0 and p.stdout == data,
          "cat round trip: exit %d, %d bytes back, err %r" % (
              p.returncode, len(p.stdout), p.stderr[-300:]))
    check(rss_kib < 64 << 10, "stormctl's peak RSS %d KiB" % rss_kib)
    print("big: 6 MiB round trip, sha256 %s..., stormctl %d KiB" % (
        want[:12], rss_kib))


def test_none(lab):
    # stormctl's stdin is a pipe that stays open: only --input=none
    # lets cat end
    rd, wr = os.pipe()
    try:
        r = subprocess.run(ctl_argv(lab, ["run", "--input=none", "-n1",
                                          "/bin/sh", "-c",
                                          "cat; echo eof"]),
                           stdin=rd, capture_output=True, timeout=30,
                           cwd=lab.dir)
    finally:
        os.close(rd)
        os.close(wr)
    check(r.returncode == 0 and r.stdout == b"eof\n",
          "--input=none: exit %d, %r %r" % (r.returncode, r.stdout,
                                            r.stderr))
    r = ctl(lab, ["run", "-i", "all", "/bin/true"])
    check(r.returncode == 2 and b"--input" in r.stderr,
          "-i all: exit %d, %r" % (r.returncode, r.stderr))
    print("none: EOF at once; -i all refused (exit 2)")


def test_noread(lab):
    yes = subprocess.Popen(["yes"], stdout=subprocess.PIPE)
    try:
        r = subprocess.run(ctl_argv(lab, ["run", "-n1", "/bin/sh", "-c",
                                          "exit 3"]),
                           stdin=yes.stdout, capture_output=True,
                           timeout=60, cwd=lab.dir)
        check(r.returncode == 3, "rank 0 that never reads: exit %d, %r" %
              (r.returncode, r.stderr))
        r = subprocess.run(ctl_argv(lab, ["run", "-n1", "/bin/sh", "-c",
                                          "head -c 5; exec 0<&-; "
                                          "sleep 1; echo ok"]),
                           stdin=yes.stdout, capture_output=True,
                           timeout=60, cwd=lab.dir)
        check(r.returncode == 0 and r.stdout == b"y\ny\ny" + b"ok\n",
              "rank 0 closes stdin: exit %d, %r %r" % (
                  r.returncode, r.stdout, r.stderr))
    finally:
        yes.kill()
        yes.wait()
    print("noread: exit 3 passed through; a closed stdin stops stormctl")


def test_killed(lab):
    rd, wr = os.pipe()
    p = subprocess.Popen(ctl_argv(lab, ["run", "-n1", "/bin/cat"]),
                         stdin=rd, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, cwd=lab.dir)
    os.close(rd)
    try:
        os.write(wr, b"x" * 1000 + b"\n")
        # the line comes back: the stream is flowing
        got = b""
        end = time.monotonic() + 30
        while len(got) < 1001 and time.monotonic() < end:
            r, _, _ = select.select([p.stdout], [], [], 1)
            if r:
                chunk = os.read(p.stdout.fileno(), 4096)
                check(chunk, "stormctl ended early")
                got += chunk
        check(len(got) == 1001, "the line back: %d bytes" % len(got))
        job = last_job(lab)
        check(stormlab.pids_of(lab, job), "no rank of job %d" % job)
        p.send_signal(signal.SIGKILL)
        p.wait(timeout=10)
    finally:
        os.close(wr)
        if p.poll() is None:
            p.kill()
            p.wait()
        p.stdout.close()
        p.stderr.close()
    reply = stormlab.call(lab.sock(0), {"op": "wait", "job": job,
                                        "timeout_ms": 30000}, timeout=35)
    j = reply["job"]
    check(j["state"] == "COMPLETED" and j["exit_code"] == 0,
          "job %d after its stormctl died: %s %r" % (job, j["state"],
                                                     j.get("reason")))
    stormlab.wait_for(lambda: not stormlab.pids_of(lab, job), 10,
                      "job %d's ranks to go" % job)
    print("killed: rank 0 read EOF, job %d COMPLETED, nothing left" % job)


TESTS = {"rank0": test_rank0, "big": test_big, "none": test_none,
         "noread": test_noread, "killed": test_killed}


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
    d = tempfile.mkdtemp(prefix="storm-stdin-")
    os.chmod(d, 0o755)
    return stormlab.run_test(
        name, d, lambda: stormlab.Lab(build, d, managers=1, nodes=3, cpus=2),
        TESTS[name])


if __name__ == "__main__":
    sys.exit(main())
