#!/usr/bin/env python3
"""The daemons as systemd runs them (scripts/systemd/).

Usage: test_units.py BUILD TEST

  verify   `systemd-analyze verify` of storm-mm's, storm-nm's and storm-web's units,
           as configured with this build's paths: exit 0 and not a
           warning (it only warns of a key it cannot parse);
  notify   Type=notify without systemd as PID 1: a local cluster (one
           manager, one node) started with NOTIFY_SOCKET naming a
           datagram socket of the test's: storm-mm and storm-nm each
           send READY=1 with a STATUS naming them, from their own pid,
           once they serve; on SIGTERM each sends STOPPING=1.

  completion   the bash completion (scripts/completion/stormctl) with
           this build's stormctl: commands, a command's options, global
           options after the command, --mpi's values.

Where systemd is PID 1 the units could be booted for real; this machine
(a container) has none, and this test does not need it.

Exit: 0 pass, 1 fail, 77 skipped (not root, or no systemd-analyze).
"""

import os
import shutil
import signal
import socket
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


def test_verify(build):
    units = [os.path.join(build, "scripts", "systemd", u + "-build.service")
             for u in ("storm-mm", "storm-nm", "storm-web")]
    r = subprocess.run(["systemd-analyze", "verify", "--man=no"] + units,
                       capture_output=True, text=True, timeout=60)
    check(r.returncode == 0 and not r.stdout.strip() and
          not r.stderr.strip(),
          "systemd-analyze verify: exit %d\n%s%s" % (r.returncode,
                                                     r.stdout, r.stderr))
    # it does catch a mistake: a unit with a bad Type is warned about
    with open(units[0]) as f:
        text = f.read()
    bad = os.path.join(tempfile.mkdtemp(), "storm-mm-bad.service")
    with open(bad, "w") as f:
        f.write(text.replace("Type=notify", "Type=notyfy"))
    r = subprocess.run(["systemd-analyze", "verify", "--man=no", bad],
                       capture_output=True, text=True, timeout=60)
    check("notyfy" in r.stderr, "a bad Type went unnoticed: %s" % r.stderr)
    shutil.rmtree(os.path.dirname(bad))
    print("verify: both units clean; a bad Type is caught")


class Notify:
    """NOTIFY_SOCKET's receiving end, with each sender's pid."""

    def __init__(self, path):
        self.s = socket.socket(socket.AF_UNIX, socket.SOCK_DGRAM)
        self.s.bind(path)
        self.s.setsockopt(socket.SOL_SOCKET, socket.SO_PASSCRED, 1)
        self.got = []  # (pid, text)

    def wait(self, pred, timeout, what):
        end = time.monotonic() + timeout
        while not any(pred(p, t) for p, t in self.got):
            left = end - time.monotonic()
            check(left > 0, "no %s in %.0f s; got %s" % (what, timeout,
                                                        self.got))
            self.s.settimeout(left)
            try:
                msg, anc, _, _ = self.s.recvmsg(4096, socket.CMSG_SPACE(12))
            except socket.timeout:
                continue
            pid = 0
            for level, kind, data in anc:
                if level == socket.SOL_SOCKET and \
                        kind == socket.SCM_CREDENTIALS:
                    pid = int.from_bytes(data[0:4], "little")
            self.got.append((pid, msg.decode(errors="replace")))


def test_notify(build):
    d = tempfile.mkdtemp(prefix="storm-units-")
    os.chmod(d, 0o755)
    path = os.path.join(d, "notify.sock")
    n = Notify(path)
    os.environ["NOTIFY_SOCKET"] = path
    lab = stormlab.Lab(build, d, managers=1, nodes=1, cpus=1)
    ok = False
    try:
        lab.up()
        mm = lab.p.procs["mm0"].pid
        nm = lab.p.procs["nm1"].pid
        n.wait(lambda p, t: p == mm and "READY=1" in t and
               "STATUS=manager mm0 of cluster lab" in t, 30,
               "READY=1 from storm-mm")
        n.wait(lambda p, t: p == nm and "READY=1" in t and
               "STATUS=node nm1" in t, 30, "READY=1 from storm-nm")
        lab.p.kill("nm1", signal.SIGTERM)
        n.wait(lambda p, t: p == nm and "STOPPING=1" in t, 30,
               "STOPPING=1 from storm-nm")
        lab.p.kill("mm0", signal.SIGTERM)
        n.wait(lambda p, t: p == mm and "STOPPING=1" in t, 30,
               "STOPPING=1 from storm-mm")
        ok = True
        print("notify: READY=1 and STOPPING=1 from storm-mm (%d) and "
              "storm-nm (%d)" % (mm, nm))
    finally:
        lab.stop()
        n.s.close()
        if ok:
            shutil.rmtree(d, ignore_errors=True)


def test_completion(build):
    script = os.path.join(HERE, "..", "..", "scripts", "completion",
                          "stormctl")
    probe = r"""
source "$1"
comp() { COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1)); COMPREPLY=()
         _stormctl; echo "${COMPREPLY[*]}"; }
echo "A:$(comp stormctl ru)"
echo "B:$(comp stormctl run --cpu)"
echo "C:$(comp stormctl run --mpi p)"
echo "D:$(comp stormctl queue --js)"
echo "E:$(comp stormctl -)"
echo "F:$(comp stormctl help ch)"
"""
    env = dict(os.environ, PATH=os.path.join(build, "cli") + ":" +
               os.environ.get("PATH", ""))
    r = subprocess.run(["bash", "-c", probe, "probe", script],
                       capture_output=True, text=True, env=env, timeout=60)
    got = dict(line.split(":", 1) for line in r.stdout.splitlines()
               if ":" in line)
    want = {"A": "run", "B": "--cpu-bind --cpus-per-task",
            "C": "pmi1 pmix", "D": "--json", "F": "checkpoint"}
    for k, v in want.items():
        check(got.get(k) == v, "completion %s: want %r, got %r (%s)" %
              (k, v, got.get(k), r.stderr))
    check("--config" in got.get("E", "") and "--json" in got.get("E", ""),
          "global options: %r" % got.get("E"))
    print("completion: commands, options, values from stormctl's help")


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("verify", "notify",
                                                 "completion"):
        print(__doc__, file=sys.stderr)
        return 2
    build, name = sys.argv[1], sys.argv[2]
    if name == "completion":
        fn = test_completion
    elif name == "verify":
        if not shutil.which("systemd-analyze"):
            print("SKIP: no systemd-analyze", file=sys.stderr)
            return 77
        fn = test_verify
    else:
        if os.geteuid() != 0:
            print("SKIP: needs root (daemons as root)", file=sys.stderr)
            return 77
        signal.signal(signal.SIGTERM, lambda *_: sys.exit("SIGTERM"))
        stormlab.run_in_private_netns()
        fn = test_notify
    try:
        fn(os.path.abspath(build))
    except Exception as e:  # noqa: BLE001 -- report any failure
        print("FAIL %s: %s" % (name, e), file=sys.stderr)
        print("FAIL %s" % name)
        return 1
    print("PASS %s" % name)
    return 0


if __name__ == "__main__":
    sys.exit(main())
