#!/usr/bin/env python3
"""bench/replication/bench.py -- the replicated Machine Manager's figures,
run by `bench/run replication` (which builds first and prints the table).

Usage: bench.py BUILD_DIR [--quick | --smoke] [--reps R] [--token MS]

Measures, in one run, on real corosync + storm-mm + storm-nm processes:
  * acknowledged submissions/s and p50/p99 latency with 1 and 3 replicas,
    1 and 8 clients (bench/replication/submit-load, one request at a time
    per client, each a new connection, as stormctl does);
  * the raw agreed-order CPG throughput on the same corosync for messages of
    the operations' size (cpg-probe, 3 senders): the ceiling;
  * abuse: root's submit p99 (one client, at the strobe master) unloaded
    and while `nobody` abuses that replica (tests/harness/abuse.py), and
    the strobe master's missed slices meanwhile (abuse_p99_ratio,
    abuse_missed_slices);
  * corosync's crypto cost: every run uses corosync with crypto_cipher
    aes256, crypto_hash sha256 and a generated authkey (the default of
    every configuration the project writes); the same 3 x 8 run with
    crypto off, alternating, gives crypto_cost_pct;
  * durability's cost: 3 replicas x 8 clients with LMDB MDB_NOMETASYNC and
    a meta flush before each answer (the default) against MDB_NOSYNC
    (nometasync_cost_pct);
  * bounded state: 10^4, 10^5, 10^6 jobs submitted then cancelled
    through 3 replicas (submit-load --cancel-every 2, 8 clients), with
    the default retention (10,000 ended jobs): the largest replica's own
    memory (RssAnon: rss_mb_1e4, rss_mb_1e6), LMDB's mapped pages apart
    (lmdb_mapped_mb_*), the state image (snapshot_mb_1e4,
    snapshot_mb_1e6) and the strobe's slice lateness p99
    (slice_p99_us_*); --quick stops at 10^5, --smoke at 10^4;
  * the client-visible failover gap (longest interval without an
    acknowledgement) after kill -9 of the strobe master, and after cutting
    off the strobe master's head namespace (three heads, headnet), next to
    corosync's own time from the cut to the new membership (cpg-probe watch
    on a surviving head) and the token timeout used.
Prints one JSON object: {"figures": {...}, "table": "..."}.
Figures are medians of R repetitions (the machine is small and noisy).
"""

import json
import os
import signal
import statistics
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
ROOT = os.path.dirname(os.path.dirname(HERE))
sys.path.insert(0, os.path.join(ROOT, "tests", "harness"))
import stormlab  # noqa: E402
import abuse  # noqa: E402

TARGET_RATE = 2000.0
TARGET_P99 = 20.0
TARGET_CEILING_SHARE = 0.30
TARGET_GAP_KILL = 50.0
TARGET_GAP_CUT_MARGIN = 100.0


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def load(build, eps, clients, seconds, extra=()):
    argv = [os.path.join(build, "bench/replication/submit-load"),
            "--managers", ",".join("unix:" + e for e in eps),
            "--clients", str(clients), "--seconds", str(seconds),
            "--program", "/bin/sleep", "--arg", "3600"] + list(extra)
    out = subprocess.run(argv, capture_output=True, text=True,
                         timeout=seconds + 60)
    if out.returncode != 0:
        raise RuntimeError("submit-load failed: %s %s" % (out.stdout,
                                                         out.stderr))
    return json.loads(out.stdout.strip().splitlines()[-1])


def throughput(build, d, managers, clients, seconds, extra=(), crypto=True):
    lab = stormlab.Lab(build, os.path.join(d, "tp-%d-%d-%d" % (
        managers, clients, time.monotonic_ns())), managers=managers, nodes=1,
        extra=extra, corosync_crypto=crypto)
    try:
        lab.up()
        return load(build, lab.endpoints(), clients, seconds)
    finally:
        lab.stop()


def abuse_row(build, d, seconds):
    """Root's submissions (one client, on the strobe master's unix
    socket) unloaded, then while `nobody` abuses that replica
    (tests/harness/abuse.py: 1,000 idle connections over unix and TCP, a
    16 MiB garbage frame every 100 ms, a slow loris); and the strobe
    master's missed slices during the abuse."""
    lab = stormlab.Lab(build, os.path.join(d, "abuse-%d" %
                                           time.monotonic_ns()),
                       managers=3, nodes=1,
                       extra=["client_frame_ms = 2000",
                              "client_idle_ms = 3000",
                              # missed slices count only if the strobe
                              # strobes every slice
                              "idle_slices = 0"])
    try:
        lab.up()
        k = lab.master()
        sock = lab.sock(k)
        tcp = ("127.0.0.1", int(lab.listen[k].split(":")[1]))
        base = load(build, [sock], 1, seconds)
        stormlab.call(sock, {"op": "managers", "reset_strobe_stats": True})
        pid, r = abuse.run_as_nobody(lab, tcp, seconds + 3, unix=sock)
        try:
            time.sleep(1.5)  # the connections are up, the garbage flows
            under = load(build, [sock], 1, seconds)
        finally:
            report, _ = abuse.collect(pid, r)
        strobe = stormlab.call(sock, {"op": "managers"}).get("strobe", {})
        return {"abuse_base_p99_ms": base["p99_ms"],
                "abuse_p99_ms": under["p99_ms"],
                "abuse_p99_ratio": under["p99_ms"] / base["p99_ms"],
                "abuse_submit_per_s": under["acked_per_s"],
                "abuse_missed_slices": strobe.get("missed", -1),
                "abuse_slices": strobe.get("slices", 0),
                "abuse_refused": len((report or {}).get("refused", []))}
    finally:
        lab.stop()


def rss_mb(pid, what="VmRSS"):
    """A process's resident memory (/proc/PID/status): VmRSS in all,
    RssAnon its own heap and stacks, RssFile mapped files (LMDB's map:
    page cache the kernel reclaims, shared with every reader)."""
    with open("/proc/%d/status" % pid) as f:
        for line in f:
            if line.startswith(what + ":"):
                return int(line.split()[1]) / 1024.0
    return 0.0


def bounded_state(build, d, marks):
    """Jobs submitted then cancelled until the job ids pass each mark:
    there, the largest replica memory (RssAnon: the process's own heap
    and stacks; RssFile apart: pages of LMDB's map, page cache bounded by
    the history's retention), the state image's size, and the strobe
    master's slice lateness p99 over the stretch before it."""
    lab = stormlab.Lab(build, os.path.join(d, "bounded-%d" %
                                           time.monotonic_ns()),
                       managers=3, nodes=1)
    out = {}
    try:
        lab.up()
        eps = lab.endpoints()
        t0 = time.monotonic()
        master = lab.master()
        stormlab.call(lab.sock(master), {"op": "managers",
                                         "reset_strobe_stats": True})
        for mark in marks:
            while True:
                rep = lab.managers(0)
                done = rep["state"]["next_id"] - 1
                if done >= mark:
                    break
                # about 3000 writes/s: a stretch of at most 20 s
                left = (mark - done) * 2 / 3000.0
                load(build, eps, 8, max(0.5, min(20.0, left)),
                     ["--cancel-every", "2"])
            lab.converged(60)
            strobe = stormlab.call(lab.sock(master), {
                "op": "managers", "reset_strobe_stats": True}).get(
                    "strobe", {})
            sizes = stormlab.call(lab.sock(0), {"op": "managers",
                                                "sizes": True}, timeout=30)
            pids = [lab.p.procs["mm%d" % i].pid for i in range(lab.m)]
            out[mark] = {"jobs": done,
                         "rss_mb": max(rss_mb(p, "RssAnon") for p in pids),
                         "mapped_mb": max(rss_mb(p, "RssFile")
                                          for p in pids),
                         "snapshot_mb": sizes["state"]["snapshot_bytes"] /
                         1048576.0, "state_jobs": sizes["state"]["jobs"],
                         "history_jobs": sizes["history"]["jobs"],
                         "slice_p99_us": strobe.get("p99_us", -1),
                         "missed": strobe.get("missed", -1),
                         "elapsed_s": time.monotonic() - t0}
            log("   %(jobs)d jobs: RssAnon %(rss_mb).1f MB, RssFile "
                "%(mapped_mb).1f MB, image %(snapshot_mb).2f MB, "
                "%(state_jobs)d in the state, %(history_jobs)d in the "
                "history, slice p99 %(slice_p99_us)d us" % out[mark])
        return out
    finally:
        lab.stop()


def ceiling(build, d, seconds, size, senders, window):
    """Raw CPG agreed-order throughput on a corosync configured like the
    replicas': `senders` processes each keeping `window` messages of
    `size` bytes in flight."""
    lab = stormlab.Lab(build, os.path.join(d, "ceiling-%d" %
                                           time.monotonic_ns()),
                       managers=3, nodes=1)
    probe = os.path.join(build, "bench/replication/cpg-probe")
    try:
        lab.start_corosync()
        procs = [subprocess.Popen([probe, "ceiling", "--group", "ceiling",
                                   "--size", str(size), "--seconds",
                                   str(seconds), "--senders", str(senders),
                                   "--window", str(window)],
                                  stdout=subprocess.PIPE, text=True)
                 for _ in range(senders)]
        outs = [p.communicate(timeout=seconds + 60)[0] for p in procs]
        res = [json.loads(o.strip().splitlines()[-1]) for o in outs]
        # every sender counts every delivery: the group's rate is one's
        return statistics.median(r["delivered_per_s"] for r in res)
    finally:
        lab.stop()


def gap_kill(build, d, seconds):
    lab = stormlab.Lab(build, os.path.join(d, "kill-%d" % time.monotonic_ns()),
                       managers=3, nodes=1)
    try:
        lab.up()
        master = lab.master()
        argv = [os.path.join(build, "bench/replication/submit-load"),
                "--managers", ",".join("unix:" + e for e in lab.endpoints()),
                "--clients", "8", "--seconds", str(seconds), "--program",
                "/bin/sleep", "--arg", "3600"]
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        time.sleep(seconds / 2.0)
        lab.p.kill("mm%d" % master)
        out = p.communicate(timeout=seconds + 60)[0]
        return json.loads(out.strip().splitlines()[-1])["max_gap_ms"]
    finally:
        lab.stop()


def gap_cut(build, d, seconds, token):
    """Cut the strobe master's head off; the clients use every replica."""
    mh = stormlab.MultiHost(build, os.path.join(d, "cut-%d" %
                                                time.monotonic_ns()),
                            heads=3, nodes=1, token=token)
    watch = None
    try:
        mh.up()
        master = mh.master()
        survivor = (master + 1) % 3
        probe = os.path.join(build, "bench/replication/cpg-probe")
        watch = subprocess.Popen(["ip", "netns", "exec",
                                  mh.head_ns[survivor], probe, "watch",
                                  "--group", "watch"],
                                 stdout=subprocess.PIPE, text=True)
        time.sleep(1.0)  # its own join settles before the load starts
        argv = [os.path.join(build, "bench/replication/submit-load"),
                "--managers", ",".join("unix:" + e for e in mh.endpoints()),
                "--clients", "8", "--seconds", str(seconds),
                "--timeout-ms", str(4 * token), "--program", "/bin/sleep",
                "--arg", "3600"]
        p = subprocess.Popen(argv, stdout=subprocess.PIPE, text=True)
        time.sleep(seconds / 3.0)
        cut = mh.cut(master)
        out = p.communicate(timeout=seconds + 120)[0]
        res = json.loads(out.strip().splitlines()[-1])
        watch.send_signal(signal.SIGTERM)
        lines = watch.communicate(timeout=10)[0].splitlines()
        cut_ms = float(cut["HEADNET_CUT_MONO_MS"])
        confchg = None
        # corosync's new membership (the ring without the cut head), as a
        # client on a surviving head is told
        for line in lines:
            ev = json.loads(line)
            if ev.get("event") == "totem" and ev["mono_ms"] >= cut_ms and \
                    ev.get("members", 3) < 3:
                confchg = ev["mono_ms"] - cut_ms
                break
        if confchg is None:
            raise RuntimeError("no membership change seen after the cut")
        return res["max_gap_ms"], confchg
    finally:
        if watch and watch.poll() is None:
            watch.kill()
            watch.wait()
        mh.stop()


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    build = args[0]
    smoke = "--smoke" in args
    quick = "--quick" in args or smoke
    reps = int(args[args.index("--reps") + 1]) if "--reps" in args else \
        (1 if quick else 3)
    token = int(args[args.index("--token") + 1]) if "--token" in args else 300
    secs = 1 if smoke else 2 if quick else 5
    stormlab.run_in_private_netns()
    # a killed benchmark still stops every process it started (finally)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("SIGTERM"))
    d = tempfile.mkdtemp(prefix="storm-bench-repl-")
    os.chmod(d, 0o755)  # the abuser runs as nobody
    fig = {}
    rows = []
    try:
        for m in (1, 3):
            for c in (1, 8):
                rs = []
                for _ in range(reps):
                    log("== %d replica(s), %d client(s)" % (m, c))
                    rs.append(throughput(build, d, m, c, secs))
                rate = statistics.median(r["acked_per_s"] for r in rs)
                p50 = statistics.median(r["p50_ms"] for r in rs)
                p99 = statistics.median(r["p99_ms"] for r in rs)
                fig["submit_per_s_r%d_c%d" % (m, c)] = rate
                fig["submit_p50_ms_r%d_c%d" % (m, c)] = p50
                fig["submit_p99_ms_r%d_c%d" % (m, c)] = p99
                rows.append((m, c, rate, p50, p99))
        # Durability's cost: the same 3 x 8 run with LMDB's MDB_NOSYNC
        # (unsafe: a host crash may corrupt the state) against the
        # default MDB_NOMETASYNC + one meta flush before each answer,
        # alternating, medians
        log("== durability: state_sync = nosync vs nometasync")
        safe, unsafe = [], []
        for _ in range(reps):
            unsafe.append(throughput(build, d, 3, 8, secs,
                                     ["state_sync = nosync"])
                          ["acked_per_s"])
            safe.append(throughput(build, d, 3, 8, secs)["acked_per_s"])
        fig["submit_per_s_r3_c8_nosync"] = statistics.median(unsafe)
        fig["submit_per_s_r3_c8_nometasync"] = statistics.median(safe)
        fig["nometasync_cost_pct"] = 100.0 * (
            fig["submit_per_s_r3_c8_nosync"] -
            fig["submit_per_s_r3_c8_nometasync"]) / \
            fig["submit_per_s_r3_c8_nosync"]
        # corosync's crypto (aes256 + sha256, the default everywhere)
        # against none: the same 3 x 8 run, alternating, medians
        log("== corosync crypto: aes256 + sha256 vs none")
        on, off = [], []
        for _ in range(reps):
            off.append(throughput(build, d, 3, 8, secs, crypto=False)
                       ["acked_per_s"])
            on.append(throughput(build, d, 3, 8, secs)["acked_per_s"])
        fig["submit_per_s_r3_c8_crypto_off"] = statistics.median(off)
        fig["submit_per_s_r3_c8_crypto_on"] = statistics.median(on)
        fig["crypto_cost_pct"] = 100.0 * (
            fig["submit_per_s_r3_c8_crypto_off"] -
            fig["submit_per_s_r3_c8_crypto_on"]) / \
            fig["submit_per_s_r3_c8_crypto_off"]
        log("== abuse: root's submissions while nobody abuses the master")
        rows_ab = [abuse_row(build, d, secs) for _ in range(reps)]
        for key in rows_ab[0]:
            fig[key] = statistics.median(x[key] for x in rows_ab)
        # The ceiling at the workload's concurrency: 8 senders, one
        # message each in flight, as 8 clients with one request each;
        # and corosync's pipelined maximum (3 senders, 64 in flight).
        log("== CPG ceiling")
        fig["cpg_ceiling_per_s"] = statistics.median(
            ceiling(build, d, secs, 320, 8, 1) for _ in range(reps))
        fig["cpg_ceiling_pipelined_per_s"] = statistics.median(
            ceiling(build, d, secs, 320, 3, 64) for _ in range(reps))
        fig["ceiling_share_r3_c8"] = fig["submit_per_s_r3_c8"] / \
            fig["cpg_ceiling_per_s"]
        marks = (10000,) if smoke else (10000, 100000) if quick else \
            (10000, 100000, 1000000)
        log("== bounded state: %s jobs submitted then cancelled" %
            ", ".join(str(m) for m in marks))
        bounded = bounded_state(build, d, marks)
        names = {10000: "1e4", 100000: "1e5", 1000000: "1e6"}
        for m, b in bounded.items():
            fig["rss_mb_" + names[m]] = b["rss_mb"]
            fig["lmdb_mapped_mb_" + names[m]] = b["mapped_mb"]
            fig["snapshot_mb_" + names[m]] = b["snapshot_mb"]
            fig["slice_p99_us_" + names[m]] = b["slice_p99_us"]
        top = max(marks)
        fig["bounded_rss_ratio"] = bounded[top]["rss_mb"] / \
            bounded[10000]["rss_mb"]
        fig["bounded_snapshot_ratio"] = bounded[top]["snapshot_mb"] / \
            bounded[10000]["snapshot_mb"]
        log("== failover: kill -9 of the strobe master")
        fig["failover_gap_ms_kill"] = statistics.median(
            gap_kill(build, d, 6 if not quick else 4) for _ in range(reps))
        log("== failover: cut off the strobe master's head (token %d ms)"
            % token)
        cuts = [gap_cut(build, d, 8 if not quick else 6, token)
                for _ in range(reps)]
        fig["failover_gap_ms_cut"] = statistics.median(g for g, _ in cuts)
        fig["confchg_ms_cut"] = statistics.median(c for _, c in cuts)
        fig["token_ms"] = token
    finally:
        subprocess.run(["rm", "-rf", d])
    t = []
    t.append("bench replication: acknowledged submissions through stormctl's "
             "protocol (submit-load), medians of %d rep(s), %d s each" %
             (reps, secs))
    t.append("")
    t.append("replicas  clients  submit/s   p50 ms   p99 ms")
    t.append("--------  -------  --------  -------  -------")
    for m, c, rate, p50, p99 in rows:
        t.append("%8d  %7d  %8.0f  %7.2f  %7.2f" % (m, c, rate, p50, p99))
    t.append("")
    t.append("raw CPG agreed-order ceiling, 320 B messages, same corosync: "
             "%.0f msg/s with 8 senders x 1 in flight (the 8 clients' "
             "concurrency); 3 replicas x 8 clients reach %.1f %% of it" %
             (fig["cpg_ceiling_per_s"], 100 * fig["ceiling_share_r3_c8"]))
    t.append("  (pipelined, 3 senders x 64 in flight: %.0f msg/s, %.1f %%)" %
             (fig["cpg_ceiling_pipelined_per_s"],
              100 * fig["submit_per_s_r3_c8"] /
              fig["cpg_ceiling_pipelined_per_s"]))
    t.append("durability: 3 replicas x 8 clients %.0f/s with LMDB "
             "MDB_NOMETASYNC + a meta flush before each answer (the "
             "default) against %.0f/s with MDB_NOSYNC (unsafe): costs "
             "%.1f %%" % (fig["submit_per_s_r3_c8_nometasync"],
                          fig["submit_per_s_r3_c8_nosync"],
                          fig["nometasync_cost_pct"]))
    t.append("corosync crypto: 3 replicas x 8 clients %.0f/s with "
             "crypto_cipher aes256 + crypto_hash sha256 (the default) "
             "against %.0f/s with none: costs %.1f %%" % (
                 fig["submit_per_s_r3_c8_crypto_on"],
                 fig["submit_per_s_r3_c8_crypto_off"],
                 fig["crypto_cost_pct"]))
    t.append("abuse (nobody: 1,000 idle connections over unix and TCP, "
             "16 MiB garbage every 100 ms, a slow loris, at the strobe "
             "master): root's submit p99 %.2f ms against %.2f ms unloaded "
             "(x%.2f), %d of %d slices missed" % (
                 fig["abuse_p99_ms"], fig["abuse_base_p99_ms"],
                 fig["abuse_p99_ratio"], fig["abuse_missed_slices"],
                 fig["abuse_slices"]))
    t.append("bounded state (3 replicas, jobs submitted then cancelled, "
             "retention 10,000 ended jobs):")
    t.append("      jobs  RssAnon MB  RssFile MB  image MB  in state  "
             "in history  slice p99 us  elapsed s")
    for m in sorted(bounded):
        b = bounded[m]
        t.append("%10d  %10.1f  %10.1f  %8.2f  %8d  %10d  %12d  %9.0f" % (
            b["jobs"], b["rss_mb"], b["mapped_mb"], b["snapshot_mb"],
            b["state_jobs"], b["history_jobs"], b["slice_p99_us"],
            b["elapsed_s"]))
    t.append("  (RssAnon: the replica's own memory; RssFile: pages of "
             "LMDB's map, page cache the kernel reclaims, bounded by "
             "history_jobs)")
    t.append("failover gap, kill -9 of the strobe master: %.1f ms" %
             fig["failover_gap_ms_kill"])
    t.append("failover gap, strobe master's head cut off: %.1f ms; "
             "corosync's own confchg after the cut: %.1f ms (token %d ms)" %
             (fig["failover_gap_ms_cut"], fig["confchg_ms_cut"], token))
    t.append("")
    t.append("Targets:")

    def tgt(name, ok, text):
        t.append("  %-34s %s  %s" % (name, text, "PASS" if ok else "FAIL"))
    tgt("submit/s (3 replicas, 8 clients)", fig["submit_per_s_r3_c8"] >=
        TARGET_RATE, "%.0f >= %.0f" % (fig["submit_per_s_r3_c8"], TARGET_RATE))
    tgt("p99 ms (3 replicas, 8 clients)", fig["submit_p99_ms_r3_c8"] <=
        TARGET_P99, "%.2f <= %.0f" % (fig["submit_p99_ms_r3_c8"], TARGET_P99))
    tgt("share of the CPG ceiling", fig["ceiling_share_r3_c8"] >=
        TARGET_CEILING_SHARE, "%.1f %% >= %.0f %%" % (
            100 * fig["ceiling_share_r3_c8"], 100 * TARGET_CEILING_SHARE))
    tgt("root's p99 under abuse / unloaded", fig["abuse_p99_ratio"] <= 2.0,
        "%.2f <= 2" % fig["abuse_p99_ratio"])
    tgt("strobe slices missed under abuse", fig["abuse_missed_slices"] == 0,
        "%d == 0" % fig["abuse_missed_slices"])
    tgt("RssAnon at %d jobs / at 10^4" % top, fig["bounded_rss_ratio"] <= 1.5,
        "%.2f <= 1.5" % fig["bounded_rss_ratio"])
    tgt("image at %d jobs / at 10^4" % top,
        fig["bounded_snapshot_ratio"] <= 1.5,
        "%.2f <= 1.5" % fig["bounded_snapshot_ratio"])
    tgt("failover gap, kill", fig["failover_gap_ms_kill"] <= TARGET_GAP_KILL,
        "%.1f <= %.0f ms" % (fig["failover_gap_ms_kill"], TARGET_GAP_KILL))
    tgt("failover gap, cut", fig["failover_gap_ms_cut"] <=
        fig["confchg_ms_cut"] + TARGET_GAP_CUT_MARGIN,
        "%.1f <= %.1f + %.0f ms" % (fig["failover_gap_ms_cut"],
                                    fig["confchg_ms_cut"],
                                    TARGET_GAP_CUT_MARGIN))
    print(json.dumps({"figures": fig, "table": "\n".join(t)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
