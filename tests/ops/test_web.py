#!/usr/bin/env python3
"""storm-web, the live dashboard (docs/web.md), on a real cluster (three
managers over corosync, three node managers) and in headless chromium.

Usage: test_web.py BUILD TEST

  dashboard  storm-web started as root runs as nobody; /api/state
             answers with every replica and node, other paths are 404,
             other methods 405; the page, loaded once in chromium and
             read through the DevTools protocol as the cluster changes,
             shows (1) a submitted job in the queue, (2) a killed node
             DOWN, (3) the replica storm-web was talking to, killed, as
             absent — and keeps updating (storm-web failed over);
             SIGTERM stops it with exit 0;
  port       a --listen port another process holds: storm-web exits 1
             at once, naming the address and the cause.

Exit: 0 pass, 1 fail, 77 skipped (not root, or no chromium).
"""

import json
import os
import signal
import socket
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, os.path.join(HERE, "..", "harness"))
import cdp  # noqa: E402
import stormlab  # noqa: E402

NOBODY = 65534


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def get(url, method="GET"):
    """(status, content type, body) of one request."""
    req = urllib.request.Request(url, method=method,
                                 data=b"x" if method == "POST" else None)
    try:
        with urllib.request.urlopen(req, timeout=10) as r:
            return r.status, r.headers["Content-Type"], r.read()
    except urllib.error.HTTPError as e:
        return e.code, e.headers["Content-Type"], e.read()


def state(base):
    code, ctype, body = get(base + "api/state")
    check(code == 200 and ctype == "application/json",
          "/api/state: %s %s" % (code, ctype))
    return json.loads(body)


def start_web(lab, port):
    """storm-web against lab, as root told to become nobody; its URL."""
    lab.p.start("web", [os.path.join(lab.build, "web/storm-web"),
                        "--config", lab.conf, "--user", "nobody",
                        "--listen", "127.0.0.1:%d" % port,
                        "--interval-ms", "200"],
                os.path.join(lab.dir, "web.out"))
    base = "http://127.0.0.1:%d/" % port
    stormlab.wait_for(lambda: state(base).get("ok"), 30,
                      "storm-web's first view")
    return base


def test_dashboard(lab):
    port = stormlab.free_ports(1)[0]
    base = start_web(lab, port)
    # it runs as nobody, having bound as root
    with open("/proc/%d/status" % lab.p.procs["web"].pid) as f:
        uids = [ln.split()[1:] for ln in f if ln.startswith(("Uid:",
                                                             "Gid:"))]
    check(all(int(x) == NOBODY for x in uids[0]), "uids %s" % uids[0])
    # the JSON API
    s = state(base)
    check([r["state"] for r in s["replicas"]] == ["member"] * 3,
          "replicas %s" % s["replicas"])
    check(s["quorate"] and sum(r["master"] for r in s["replicas"]) == 1,
          "quorum, one strobe master: %s" % s)
    check([n["state"] for n in s["nodes"]] == ["UP"] * 3,
          "nodes %s" % s["nodes"])
    for path, method, code in (("nope", "GET", 404),
                               ("api/state", "POST", 405),
                               ("api/events", "HEAD", 405)):
        got = get(base + path, method)[0]
        check(got == code, "%s /%s: %d, want %d" % (method, path, got, code))
    code, ctype, page = get(base)
    check(code == 200 and ctype.startswith("text/html") and
          b"EventSource" in page, "/: %s %s" % (code, ctype))

    # the page, loaded once; everything after is read from its live DOM
    chrome = cdp.Chromium(base, lab.dir)
    try:
        def dom(expr):
            return chrome.eval(expr)

        def events():
            return int(dom("document.body.dataset.events") or 0)

        stormlab.wait_for(lambda: dom(
            "document.querySelectorAll('#nodes .node').length") == 3 and
            dom("document.querySelectorAll('#replicas tr').length") == 3,
            30, "the page's first view")
        # (1) a submitted job appears in the queue
        r = subprocess.run([os.path.join(lab.build, "cli/stormctl"),
                            "--config", lab.conf, "--json", "submit",
                            "-n", "1", "--name", "webjob", "-o",
                            os.path.join(lab.dir, "webjob.out"), "--",
                            "/bin/sleep", "60"],
                           capture_output=True, text=True, timeout=60)
        check(r.returncode == 0, "submit: %s %s" % (r.stdout, r.stderr))
        job = json.loads(r.stdout)["job"]
        row = "document.querySelector('#queue tr[data-job=\"%d\"]')" % job
        stormlab.wait_for(lambda: dom(row + "?.textContent.includes("
                                      "'webjob')"), 30,
                          "job %d in the queue view" % job)
        # (2) a killed node turns DOWN
        lab.p.kill("nm3")
        stormlab.wait_for(lambda: dom(
            "document.querySelector('#nodes .node[data-node=\"nm3\"]')"
            ".dataset.state") == "DOWN", 30, "nm3 DOWN in the nodes view")
        # (3) the replica storm-web talks to, killed: absent, and the
        # page keeps updating through another one
        victim = state(base)["answered_by"]
        lab.p.kill(victim)
        rep = "document.querySelector('#replicas tr[data-replica=\"%s\"]')" \
            % victim
        stormlab.wait_for(lambda: dom(rep + ".dataset.state") == "absent",
                          40, "%s absent in the replicas view" % victim)
        seen = events()
        stormlab.wait_for(lambda: events() > seen + 2, 20,
                          "the page updating after the failover")
        check(dom("document.getElementById('status').textContent") ==
              "live", "status: %s" % dom(
                  "document.getElementById('status').textContent"))
        s = state(base)
        check(s["ok"] and s["answered_by"] != victim and s["quorate"],
              "after the failover: %s" % {k: s.get(k) for k in (
                  "ok", "answered_by", "quorate", "error")})
        check(dom("document.querySelectorAll('#replicas tr[data-state="
                  "\"member\"]').length") == 2, "two members left")
    finally:
        chrome.close()
    # SIGTERM: every stream ended, every thread joined, exit 0 (and,
    # under the sanitizers, nothing leaked)
    web = lab.p.kill("web", signal.SIGTERM)
    check(web.returncode == 0, "storm-web on SIGTERM: exit %s (see %s)" %
          (web.returncode, os.path.join(lab.dir, "web.out")))
    print("dashboard: job %d shown, nm3 DOWN, %s absent after failover; "
          "404, 405; runs as nobody" % (job, victim))


def test_port(build, d):
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen(1)
    port = held.getsockname()[1]
    try:
        r = subprocess.run([os.path.join(build, "web/storm-web"),
                            "--config", os.path.join(d, "none.conf"),
                            "--listen", "127.0.0.1:%d" % port],
                           capture_output=True, text=True, timeout=10)
    finally:
        held.close()
    check(r.returncode == 1 and "cannot listen on 127.0.0.1:%d: Address "
          "already in use (another process holds the port" % port
          in r.stderr, "storm-web with its port held: exit %d\n%s" %
          (r.returncode, r.stderr))
    print("port: %s" % r.stderr.strip().splitlines()[-1])


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("dashboard", "port"):
        print(__doc__, file=sys.stderr)
        return 2
    build, name = os.path.abspath(sys.argv[1]), sys.argv[2]
    if name == "port":
        d = tempfile.mkdtemp(prefix="storm-web-")
        try:
            test_port(build, d)
        except Exception as e:  # noqa: BLE001 -- report any failure
            print("FAIL port: %s" % e, file=sys.stderr)
            print("FAIL port")
            return 1
        finally:
            subprocess.run(["rm", "-rf", d])
        print("PASS port")
        return 0
    if os.geteuid() != 0:
        print("SKIP: needs root (daemons as root)", file=sys.stderr)
        return 77
    if not cdp.chromium_path():
        print("SKIP: no chromium (scripts/deps installs it)",
              file=sys.stderr)
        return 77
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("SIGTERM"))
    stormlab.run_in_private_netns()
    d = tempfile.mkdtemp(prefix="storm-web-")
    os.chmod(d, 0o755)  # nobody reads storm.conf and the sockets here
    return stormlab.run_test(
        name, d, lambda: stormlab.Lab(build, d, managers=3, nodes=3),
        test_dashboard)


if __name__ == "__main__":
    sys.exit(main())
