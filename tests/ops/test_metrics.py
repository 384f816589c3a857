#!/usr/bin/env python3
"""Each manager replica's Prometheus metrics (docs/metrics.md), read from
a real cluster (three managers over corosync, three node managers) and
parsed with Prometheus's own client library.

Usage: test_metrics.py BUILD TEST

  metrics  every replica's page parses and holds every family (jobs and
           nodes by state, failures, strobe lateness, applied index,
           quorum, launch and failover times, request latency); a job
           run shows on every replica (agreed state) and in the
           master's launch histogram and the serving replica's request
           latency; a killed node is DOWN with one failure; the strobe
           master killed: a survivor takes over and counts it; other
           paths are 404, other methods 405;
  port     a metrics_listen port another process holds: storm-mm exits
           1 at once, naming the address and the cause.

Exit: 0 pass, 1 fail, 77 skipped (not root).
"""

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
import stormlab  # noqa: E402

try:
    from prometheus_client.parser import text_string_to_metric_families
except ImportError:
    # scripts/deps installs it with pip for this python3, and Debian's
    # python3-prometheus-client (pure Python) for the system's
    sys.path.append("/usr/lib/python3/dist-packages")
    try:
        from prometheus_client.parser import \
            text_string_to_metric_families
    except ImportError:
        text_string_to_metric_families = None


def check(cond, what):
    if not cond:
        raise AssertionError(what)


def scrape(lab, i):
    """Replica i's page: {family name: {(sample name, labels): value}}."""
    with urllib.request.urlopen(lab.metrics_url(i), timeout=10) as r:
        check(r.status == 200 and r.headers["Content-Type"].startswith(
            "text/plain; version=0.0.4"), "mm%d: %s %s" %
            (i, r.status, r.headers["Content-Type"]))
        text = r.read().decode()
    fams = {}
    for f in text_string_to_metric_families(text):
        fams[f.name] = {(s.name, tuple(sorted(s.labels.items()))): s.value
                        for s in f.samples}
        fams[f.name + ".type"] = f.type
    return fams


def value(fams, fam, sample=None, **labels):
    return fams[fam].get((sample or fam, tuple(sorted(labels.items()))))


WANT = {"storm_jobs": "gauge", "storm_nodes": "gauge",
        "storm_node_failures": "counter",
        "storm_strobe_lateness_seconds": "histogram",
        "storm_replica_applied_index": "gauge",
        "storm_replica_quorum": "gauge",
        "storm_launch_seconds": "histogram",
        "storm_failover_seconds": "gauge",
        "storm_master_changes": "counter",
        "storm_request_seconds": "histogram",
        "storm_strobe_master": "gauge"}


def test_metrics(lab):
    check(text_string_to_metric_families is not None,
          "no prometheus_client for this python3 (scripts/deps installs "
          "it with pip)")
    pages = [scrape(lab, i) for i in range(lab.m)]
    for i, f in enumerate(pages):
        for fam, kind in WANT.items():
            check(f.get(fam + ".type") == kind,
                  "mm%d: %s is %s, want %s" % (i, fam, f.get(fam + ".type"),
                                              kind))
        check(value(f, "storm_replica_quorum") == 1, "mm%d: quorum" % i)
        check(value(f, "storm_nodes", state="UP") == 3, "mm%d nodes" % i)
    r = subprocess.run([os.path.join(os.path.abspath(lab.build),
                                     "cli/stormctl"), "--config", lab.conf,
                        "--socket", lab.sock(0), "run", "-n", "3",
                        "/bin/true"], capture_output=True, text=True,
                       timeout=60)
    check(r.returncode == 0, "run: %s" % r.stderr)
    master = lab.master()
    pages = [scrape(lab, i) for i in range(lab.m)]
    for i, f in enumerate(pages):
        check(value(f, "storm_jobs", state="COMPLETED") == 1,
              "mm%d: the job not COMPLETED in its state" % i)
        check(value(f, "storm_strobe_master") == (1 if i == master else 0),
              "mm%d: strobe master %s (master is mm%d)" %
              (i, value(f, "storm_strobe_master"), master))
    check(value(pages[master], "storm_launch_seconds",
                "storm_launch_seconds_count") >= 1, "no launch counted")
    check(value(pages[0], "storm_request_seconds",
                "storm_request_seconds_count", op="run") >= 1,
          "mm0 served a run, not counted")
    applied = [value(f, "storm_replica_applied_index") for f in pages]
    check(min(applied) > 0, "applied indexes %s" % applied)
    # a node dies
    lab.p.kill("nm3")
    stormlab.wait_for(lambda: value(scrape(lab, 0), "storm_nodes",
                                    state="DOWN") == 1, 30, "nm3 DOWN")
    check(value(scrape(lab, 0), "storm_node_failures",
                "storm_node_failures_total") == 1, "one failure")
    # the strobe master dies: a survivor takes over and counts it
    before = {i: value(pages[i], "storm_master_changes",
                       "storm_master_changes_total")
              for i in range(lab.m) if i != master}
    lab.p.kill("mm%d" % master)
    left = [i for i in range(lab.m) if i != master]

    def took_over():
        fs = {i: scrape(lab, i) for i in left}
        return sum(value(f, "storm_strobe_master") for f in fs.values()) == 1 \
            and all(value(fs[i], "storm_master_changes",
                          "storm_master_changes_total") > before[i]
                    for i in left)
    stormlab.wait_for(took_over, 60, "a new strobe master, counted")
    # anything else is refused
    base = lab.metrics_url(left[0])[:-len("/metrics")]
    for url, method, code in ((base + "/", "GET", 404),
                              (base + "/metrics", "POST", 405)):
        try:
            urllib.request.urlopen(urllib.request.Request(
                url, method=method, data=b"x" if method == "POST" else
                None), timeout=10)
            check(False, "%s %s answered 200" % (method, url))
        except urllib.error.HTTPError as e:
            check(e.code == code, "%s %s: %d, want %d" % (method, url,
                                                          e.code, code))
    print("metrics: %d families on every replica; job, node death and "
          "failover seen; 404, 405" % len(WANT))


def test_port(build, d):
    held = socket.socket()
    held.bind(("127.0.0.1", 0))
    held.listen(1)
    port = held.getsockname()[1]
    lab = stormlab.Lab(build, d, managers=1, nodes=1, metrics=True)
    with open(lab.conf) as f:
        conf = f.read().replace("metrics_listen = %s" % lab.metrics[0],
                                "metrics_listen = 127.0.0.1:%d" % port)
    with open(lab.conf, "w") as f:
        f.write(conf)
    r = subprocess.run([os.path.join(build, "manager/mmd/storm-mm"),
                        "--config", lab.conf, "--name", "mm0"],
                       capture_output=True, text=True, timeout=60)
    held.close()
    check(r.returncode == 1 and "metrics_listen = \"127.0.0.1:%d\": cannot "
          "listen: Address already in use" % port in r.stderr,
          "storm-mm with its metrics port held: exit %d\n%s" %
          (r.returncode, r.stderr))
    print("port: %s" % r.stderr.strip().splitlines()[-1])


def main():
    if len(sys.argv) != 3 or sys.argv[2] not in ("metrics", "port"):
        print(__doc__, file=sys.stderr)
        return 2
    if os.geteuid() != 0:
        print("SKIP: needs root (daemons as root)", file=sys.stderr)
        return 77
    build, name = os.path.abspath(sys.argv[1]), sys.argv[2]
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("SIGTERM"))
    stormlab.run_in_private_netns()
    d = tempfile.mkdtemp(prefix="storm-metrics-")
    os.chmod(d, 0o755)
    if name == "port":
        try:
            test_port(build, d)
        except Exception as e:  # noqa: BLE001 -- report any failure
            print("FAIL port: %s" % e, file=sys.stderr)
            print("FAIL port")
            return 1
        subprocess.run(["rm", "-rf", d])
        print("PASS port")
        return 0
    return stormlab.run_test(
        name, d, lambda: stormlab.Lab(build, d, managers=3, nodes=3,
                                      metrics=True), test_metrics)


if __name__ == "__main__":
    sys.exit(main())
