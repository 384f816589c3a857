#!/usr/bin/env python3
"""bench/bcsmpi/bench.py -- BCS-MPI against Debian's Open MPI and MPICH,
in one run, alternating; run by `bench/run bcsmpi` (which builds Storm
first and prints the table).

Usage: bench.py BUILD_DIR [--quick | --smoke] [--reps R]
                [--peers ompi,mpich | --peers none] [--part synth,osu,pair]

The same C programs (bench/bcsmpi/*.c) are built three times, with the
build tree's bcsmpicc, with mpicc.openmpi and with mpicc.mpich, and run:
  * BCS-MPI: `stormctl run --mpi=bcs -n N` on a local cluster of one
    storm-mm and one storm-nm, and for the cells over 4 node managers
    (keys _n8x4) one storm-mm and 4 storm-nm of cpus = 2 each, so that
    `-n 8` places 2 ranks on each and the job's engines exchange their
    per-slice records over the fabric (docs/bcsmpi.md); slice_us = 1000
    (STORM_BENCH_SLICE_US), started for each group of measurements and
    stopped after it, so that Storm's daemons and their strobe cost only
    Storm's figures;
  * Open MPI: `mpirun.openmpi --allow-run-as-root --oversubscribe -n N`;
  * MPICH: `mpirun.mpich -n N`;
all in a private network namespace (loopback only).  Within every group
the three take turns, who goes first rotating between repetitions;
figures are medians over R repetitions.

Measured (bench/README.md says how to read each):
  * the synthetic loops (bench-synth): barrier and stencil for G = 1, 10,
    100 ms and N = 2, 4, 8 ranks, and N = 8 over 4 node managers (the
    peers run their 8 ranks on this one machine as for N = 8: the same
    work on the same cores), each one's overhead over the compute loop
    of the same N and G run bare by mpirun (Open MPI's; MPICH's if Open
    MPI is absent);
  * OSU-style point-to-point (bench-osu p2p, N = 2): ping-pong latency of
    8 B and 1 MiB, windowed bandwidth (64 messages) of 1 MiB and 4 MiB;
  * collective latencies (bench-osu coll, N = 2 and 8, and BCS-MPI's
    N = 8 over 4 node managers): barrier, allreduce of 8 B, bcast of
    1 MiB;
  * a pair: two 2-rank barrier-loop jobs at once, gang-scheduled by
    Storm (sched_policy = gang, mpl = 2, on a node of 2 cpus) against the
    same two jobs under each peer, time-shared by the kernel: wall time
    until both finished;
  * a master/worker MPI_ANY_SOURCE job (bench-anysrc): its runtime, that
    its match order is the same on every BCS-MPI run, and, once stormctl
    has --bcs-order=arrival, what the deterministic order costs.
Prints one JSON object: {"figures": {...}, "table": "..."}.
"""

import json
import os
import shutil
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

SLICE_US = int(os.environ.get("STORM_BENCH_SLICE_US", "1000"))
# the daemons' SCHED_FIFO priority (docs/gang.md); 0, the default here:
# under SCHED_FIFO the fabric's yield-spins after each heartbeat never
# yield to the ranks (measured: a BCS-MPI barrier loop 10-20 % slower)
REALTIME = int(os.environ.get("STORM_BENCH_REALTIME", "0"))
PROVIDER = os.environ.get("STORM_BENCH_PROVIDER", "shm")

# the synthetic loops
GS_MS = [1, 10, 100]
NS = [2, 4, 8]
GS_MS_QUICK = [10, 100]
NS_QUICK = [2, 8]
NOMINAL_S = 1.0      # compute per rank at N = 2; at N ranks 2/N of it
MIN_ITERS = 5
# N = 8 over 4 node managers: BCS-MPI's cluster of XNODES storm-nm of
# XCPUS cpus each (2 ranks a node); the peers run the same N on this
# machine, as for N = 8
XN, XNODES, XCPUS = 8, 4, 2
# (g, n, nodes) cells of the smoke: the figures the issue names, and one
# cell over 4 node managers, few iterations
SMOKE_CELLS = {(10, 2, 1): 5, (100, 2, 1): 2, (10, 8, 1): 3,
               (10, XN, XNODES): 3}
SMOKE_LOOPS = {(10, 2, 1): ("barrier", "stencil", "compute"),
               (100, 2, 1): ("barrier", "compute"),
               (10, 8, 1): ("barrier", "compute"),
               (10, XN, XNODES): ("barrier", "compute")}
LOOPS = ("barrier", "stencil", "compute")

# OSU-style: iterations (8 B / collectives), of 1 MiB, bandwidth windows
OSU_FULL = (500, 50, 10)
OSU_QUICK = (200, 20, 4)
OSU_SMOKE = (10, 3, 1)
COLL_NS = [2, 8]
# collectives of BCS-MPI's job of XN ranks over XNODES node managers
# (_n8x4); the peers' figures of those keys are their N = 8 run of the
# same group: the same job on this machine, not run twice
COLL_X = [(XN, XNODES)]

# the pair: two barrier-loop jobs of 2 ranks, G = 10 ms; the gang quantum
PAIR_G_MS = 10
PAIR_ITERS, PAIR_ITERS_SMOKE = 100, 10
QUANTUM_US = int(os.environ.get("STORM_BENCH_QUANTUM_US", "50000"))

# the ANY_SOURCE job: ranks, tasks
ANY_N = 4
ANY_TASKS, ANY_TASKS_SMOKE = 400, 20

RUN_TIMEOUT_S = 600
# --smoke: its runs take seconds; a hung one fails in this bound, with its
# command and the cluster's log, before meson's 600 s limit on the test
RUN_TIMEOUT_SMOKE_S = 120
RUN_TIMEOUT = [RUN_TIMEOUT_S]
# the median group kept above this much others' work: the report warns
OTHER_BUSY = 0.15

MPIS = ("bcs", "ompi", "mpich")
NAME = {"bcs": "BCS-MPI", "ompi": "Open MPI", "mpich": "MPICH"}
# figure key prefix per MPI
PFX = {"bcs": "", "ompi": "ompi_", "mpich": "mpich_"}

LOADS = []


def log(msg):
    print(msg, file=sys.stderr, flush=True)


def note_load():
    try:
        with open("/proc/loadavg") as fp:
            LOADS.append(float(fp.read().split()[0]))
    except (OSError, ValueError, IndexError):
        pass


HZ = os.sysconf("SC_CLK_TCK")
OTHERS = []  # CPUs' worth of others' work during each group


# a group of measurements during which others' work took more than
# OTHER_MAX cpus is taken again, up to TRIES times in all (the least
# disturbed kept), at most REDO_BUDGET times in a run (--smoke: never)
OTHER_MAX = 0.15
TRIES = 3
REDO_BUDGET = [30]
REDONE = [0]


def cpu_snap():
    """(busy ticks of the whole machine, ticks of this process and its
    reaped children, monotonic seconds).  Busy counts steal: a vCPU the
    hypervisor gave to someone else is disturbance too."""
    with open("/proc/stat") as fp:
        v = [int(x) for x in fp.readline().split()[1:]]
    t = os.times()
    return (sum(v[:8]) - v[3] - v[4],
            (t.user + t.system + t.children_user + t.children_system) * HZ,
            time.monotonic())


def undisturbed(group, raw):
    """group() -> {key: value}, run again while others' work (CPUs' worth
    not this benchmark's: every process of a group is reaped by its end,
    Storm's daemons included) exceeded OTHER_MAX; the least disturbed
    try's values are appended to raw[key]."""
    best = None
    for i in range(TRIES):
        a = cpu_snap()
        vals = group()
        b = cpu_snap()
        other = max(0.0, ((b[0] - a[0]) - (b[1] - a[1])) / HZ /
                    max(1e-3, b[2] - a[2]))
        if best is None or other < best[0]:
            best = (other, vals)
        if other <= OTHER_MAX or REDONE[0] >= REDO_BUDGET[0]:
            break
        if i + 1 < TRIES:
            REDONE[0] += 1
            log("   (others' work took %.2f cpu: measured again)" % other)
    OTHERS.append(best[0])
    for k, v in best[1].items():
        raw.setdefault(k, []).append(v)


def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None


class Failed(Exception):
    """A run of ours failed: the benchmark stops."""


# ---- building ---------------------------------------------------------------

def compilers(build, peers):
    """MPI -> compiler wrapper argv."""
    san = stormlab.build_sanitizer(build)
    bcs = [os.path.join(build, "bcsmpi", "bcsmpicc")]
    if san not in ("", "none"):
        bcs.append("-fsanitize=" + san)
    cc = {"bcs": bcs}
    if "ompi" in peers:
        cc["ompi"] = ["mpicc.openmpi"]
    if "mpich" in peers:
        cc["mpich"] = ["mpicc.mpich"]
    return cc


def build_programs(build, out, peers):
    """bench-calib with cc, and bench-synth, bench-osu, bench-anysrc with
    each MPI's wrapper, into out/ (where the jobs' user can read them).
    Returns {MPI: {prog: path}} and the calib path.  A peer whose build
    fails is dropped (its reason in PEER_ERRORS)."""
    flags = ["-O2", "-std=c11", "-Wall", "-Wextra",
             "-Wno-stringop-overflow"]  # MPICH's MPI_Status[] prototypes

    def cc(argv, src, exe):
        r = subprocess.run(argv + flags + ["-o", exe,
                                           os.path.join(HERE, src)],
                           capture_output=True, text=True, timeout=300)
        if r.returncode != 0:
            raise RuntimeError("%s %s: %s" % (" ".join(argv), src,
                                             r.stderr.strip()[-2000:]))

    calib = os.path.join(out, "bench-calib")
    try:
        cc(["cc"], "calib.c", calib)
        cc(["cc"], "tick.c", os.path.join(out, "bench-tick"))
    except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
        raise Failed("building bench-calib, bench-tick: %s" % e)
    progs = {}
    for mpi, argv in compilers(build, peers).items():
        try:
            progs[mpi] = {}
            for p in ("synth", "osu", "anysrc"):
                exe = os.path.join(out, "%s-bench-%s" % (mpi, p))
                cc(argv, p + ".c", exe)
                progs[mpi][p] = exe
        except (RuntimeError, OSError, subprocess.TimeoutExpired) as e:
            if mpi == "bcs":
                raise Failed("building with bcsmpicc: %s" % e)
            PEER_ERRORS[mpi] = "build failed: %s" % str(e)[-500:]
            log("   %s: %s" % (NAME[mpi], PEER_ERRORS[mpi]))
            del progs[mpi]
    return progs, calib


PEER_ERRORS = {}


def calibrate(calib):
    """work() steps per ms: the fastest of three bench-calib runs (each
    already the fastest of 15 trials)."""
    best = 0
    for _ in range(3):
        out = subprocess.run([calib], capture_output=True, text=True,
                             check=True, timeout=120).stdout
        best = max(best, float(out.split()[0]))
    return best


# ---- running ----------------------------------------------------------------

def last_json(out, what):
    for line in reversed(out.strip().splitlines()):
        line = line.strip()
        if line.startswith("{"):
            try:
                return json.loads(line)
            except ValueError:
                break
    raise RuntimeError("%s printed no JSON line: %r" % (what, out[-500:]))


def run_argv(argv, what, timeout=None, env=None):
    """argv in its own session; (stdout, stderr, exit status).  A hung run
    is killed with its process group."""
    timeout = timeout or RUN_TIMEOUT[0]
    p = subprocess.Popen(argv, stdout=subprocess.PIPE,
                         stderr=subprocess.PIPE, text=True, env=env,
                         start_new_session=True)
    try:
        out, err = p.communicate(timeout=timeout)
    except subprocess.TimeoutExpired:
        os.killpg(p.pid, signal.SIGKILL)
        p.communicate()
        raise RuntimeError("%s: timed out after %d s" % (what, timeout))
    return out, err, p.returncode


MPIRUN_ENV = dict(os.environ, OMPI_ALLOW_RUN_AS_ROOT="1",
                  OMPI_ALLOW_RUN_AS_ROOT_CONFIRM="1")
# Open MPI's runtime and any TCP it uses on loopback (the namespace has no
# other interface)
OMPI_ARGS = ["--allow-run-as-root", "--oversubscribe",
             "--mca", "oob_tcp_if_include", "lo",
             "--mca", "btl_tcp_if_include", "lo"]


def peer_argv(mpi, n, exe, args):
    if mpi == "ompi":
        return ["mpirun.openmpi"] + OMPI_ARGS + ["-n", str(n), exe] + \
            [str(a) for a in args]
    return ["mpirun.mpich", "-n", str(n), exe] + [str(a) for a in args]


class Storm:
    """A local cluster for one group of BCS-MPI measurements: one
    storm-mm, `nodes` storm-nm of `cpus` cpus each; up on entry, stopped
    (every process it started) on exit."""

    def __init__(self, ctx, cpus, extra=(), nodes=1):
        self.ctx = ctx
        self.nodes = nodes
        self.dir = tempfile.mkdtemp(prefix="lab-", dir=ctx.dir)
        os.chmod(self.dir, 0o755)
        self.lab = stormlab.Lab(
            ctx.build, self.dir, managers=1, nodes=nodes, cpus=cpus,
            slice_us=ctx.slice_us, provider=PROVIDER,
            extra=("micro_slices = 1", "realtime = %d" % REALTIME) +
            tuple(extra))

    def __enter__(self):
        try:
            self.lab.up()
        except BaseException:
            self.lab.stop()
            raise
        return self

    def __exit__(self, *exc):
        self.lab.stop()
        if exc[0] is None:
            subprocess.run(["rm", "-rf", self.dir])
        return False

    def argv(self, n, exe, args, extra=()):
        a = [os.path.join(self.ctx.build, "cli", "stormctl"), "--config",
             self.lab.conf, "run", "--mpi=bcs", "-n", str(n)] + list(extra)
        if self.ctx.sanitize not in ("", "none"):
            # a sanitized rank: its runtime must not take the engine's
            # children or the library's tables for leaks
            a += ["--export", "ASAN_OPTIONS=detect_leaks=0"]
        return a + [exe] + [str(x) for x in args]

    def run(self, n, exe, args, what, extra=()):
        note_load()
        argv = self.argv(n, exe, args, extra)
        try:
            out, err, rc = run_argv(argv, what)
        except RuntimeError as e:  # hung: killed
            raise Failed(self.failure(str(e), argv))
        if rc != 0:
            raise Failed(self.failure(
                "%s: stormctl run exit %d\n  stdout: %s\n  stderr: %s" % (
                    what, rc, out.strip()[-800:], err.strip()[-800:]), argv))
        try:
            return last_json(out, what)
        except RuntimeError as e:
            raise Failed(self.failure(str(e), argv))

    def failure(self, what, argv=None):
        """A failed run's message: the tail of the cluster's log, then
        (last, as bench/run shows the last lines) what failed, the
        command and where the whole log is kept."""
        return "the cluster's log: %s\n%s%s\n  %s" % (
            self.log_tail(), what,
            "\n  command: %s" % " ".join(argv) if argv else "",
            self.keep_log())

    def log_tail(self, n=12):
        try:
            with open(os.path.join(self.dir, "storm.log")) as fp:
                return "\n    " + "\n    ".join(
                    fp.read().splitlines()[-n:])
        except OSError:
            return "(none)"

    def keep_log(self):
        """The benchmark's directory goes at its end: the whole log of a
        failed run (every node manager's) is copied out of it, as
        storm-bench-bcsmpi-*.log beside it."""
        try:
            fd, path = tempfile.mkstemp(
                prefix="storm-bench-bcsmpi-", suffix=".log",
                dir=os.path.dirname(self.ctx.dir))
            with os.fdopen(fd, "w") as out, \
                    open(os.path.join(self.dir, "storm.log")) as src:
                shutil.copyfileobj(src, out)
            return "the whole log (%d node manager(s)): %s" % (self.nodes,
                                                               path)
        except OSError as e:
            return "the whole log not kept: %s" % e


class Ctx:
    def __init__(self, build, d, progs, peers, steps_per_ms, slice_us,
                 sanitize):
        self.build, self.dir, self.progs = build, d, progs
        self.peers = peers
        self.steps = steps_per_ms
        self.slice_us = slice_us
        self.sanitize = sanitize

    def mpis(self):
        return [m for m in MPIS if m in self.progs]

    def peer(self, mpi, n, prog, args, what):
        """One peer run; its JSON, or None (the failure noted: a peer's
        failure costs only its own figures)."""
        note_load()
        try:
            out, err, rc = run_argv(peer_argv(mpi, n, self.progs[mpi][prog],
                                              args), what, env=MPIRUN_ENV)
            if rc != 0:
                raise RuntimeError("%s: exit %d: %s" % (
                    what, rc, (err.strip() or out.strip())[-600:]))
            return last_json(out, what)
        except (RuntimeError, OSError) as e:
            PEER_ERRORS.setdefault(mpi, str(e))
            log("   %s failed: %s" % (NAME[mpi], e))
            return None


def rotation(r):
    """Who goes first in repetition r: BCS, Open MPI, MPICH, then Open
    MPI, MPICH, BCS, ..."""
    k = r % len(MPIS)
    return list(MPIS[k:] + MPIS[:k])


# ---- the synthetic loops ----------------------------------------------------

def iters_for(g, n):
    return max(MIN_ITERS, int(round(NOMINAL_S * 1000.0 / g * 2.0 / n)))


def suffix(g, n, nodes=1):
    """A cell's key suffix: _gG_nN, and xK when BCS-MPI's job spans K
    node managers (_g10_n8x4)."""
    return "g%g_n%d" % (g, n) + ("x%d" % nodes if nodes > 1 else "")


def label(g, n, nodes=1):
    return "G=%g ms N=%d" % (g, n) + (" over %d NMs" % nodes
                                      if nodes > 1 else "")


def synth(ctx, cells, reps):
    """cells: [(g, n, iters, loops, nodes)].  Returns raw[(mpi, loop, g,
    n, nodes)] = [runtime_s per rep] (None where a peer failed)."""
    raw = {}
    for r in range(reps):
        for (g, n, iters, loops, nodes) in cells:
            log("== synth %s (%d iterations) rep %d/%d" %
                (label(g, n, nodes), iters, r + 1, reps))
            undisturbed(lambda: synth_group(ctx, r, g, n, iters, loops,
                                            nodes), raw)
    return raw


def synth_group(ctx, r, g, n, iters, loops, nodes):
    """One cell of one repetition: each MPI's loops, in rotation.  With
    nodes > 1, BCS-MPI's job spans that many node managers of XCPUS cpus
    each; the peers run their n ranks on this machine as always."""
    raw = {}
    for mpi in rotation(r):
        if mpi not in ctx.progs:
            continue
        args = [None, g, iters, "%.0f" % ctx.steps]
        if mpi == "bcs":
            cpus = max(NS) if nodes == 1 else XCPUS
            with Storm(ctx, cpus, nodes=nodes) as st:
                for loop in loops:
                    args[0] = loop
                    o = st.run(n, ctx.progs["bcs"]["synth"], args,
                               "BCS-MPI synth %s %s" % (
                                   loop, label(g, n, nodes)))
                    raw[("bcs", loop, g, n, nodes)] = o["runtime_s"]
                    log("   BCS-MPI  %-8s %.3f s" % (loop, o["runtime_s"]))
        else:
            for loop in loops:
                args[0] = loop
                o = ctx.peer(mpi, n, "synth", args, "%s synth %s G=%g N=%d"
                             % (NAME[mpi], loop, g, n))
                v = o["runtime_s"] if o else None
                raw[(mpi, loop, g, n, nodes)] = v
                if v is not None:
                    log("   %-8s %-8s %.3f s" % (NAME[mpi], loop, v))
            if mpi == ctx.peers[0] and "compute" in loops and nodes == 1:
                args[0] = "compute"
                v = tick_floor(ctx, mpi, n, args, g)
                raw[("tick", "compute", g, n, nodes)] = v
                if v is not None:
                    log("   %-8s %-8s %.3f s (+ a wake every slice)" % (
                        NAME[mpi], "compute", v))
    return raw


def tick_floor(ctx, mpi, n, args, g):
    """The peer's bare compute loop again, beside bench-tick waking every
    slice: what a strobe that sends nothing costs its ranks here."""
    tick = subprocess.Popen([os.path.join(ctx.dir, "bench-tick"),
                             str(ctx.slice_us)])
    try:
        o = ctx.peer(mpi, n, "synth", args, "%s synth compute G=%g N=%d "
                     "beside bench-tick" % (NAME[mpi], g, n))
    finally:
        tick.kill()
        tick.wait()
    return o["runtime_s"] if o else None


def synth_figures(raw, cells, reps, fig):
    """Overheads over the baseline (compute under mpirun), per rep, then
    the median."""
    base_mpi = next((m for m in ("ompi", "mpich", "bcs")
                     if any(raw.get((m, "compute", g, n, x)) and
                            any(v is not None for v in
                                raw[(m, "compute", g, n, x)])
                            for g, n, _, _, x in cells)), None)
    fig["baseline"] = {"ompi": "mpirun.openmpi", "mpich": "mpirun.mpich",
                       "bcs": "stormctl (no peer)"}.get(base_mpi)
    for g, n, iters, loops, nodes in cells:
        sfx = suffix(g, n, nodes)
        # the base of a cell over node managers: the peer's compute loop
        # of the same N run in that cell's groups (the same job as for
        # one node: mpirun's N ranks on this machine)
        base = raw.get((base_mpi, "compute", g, n, nodes), [None] * reps)
        fig["base_s_" + sfx] = med(base)
        fig["iters_" + sfx] = iters
        for mpi in MPIS:
            for loop in loops:
                rt = raw.get((mpi, loop, g, n, nodes))
                key = "%s_%s" % (loop, sfx)
                fig[PFX[mpi] + "runtime_s_" + key] = med(rt or [])
                if loop == "compute" and mpi == base_mpi:
                    continue
                ovh = [100.0 * (a - b) / b for a, b in zip(rt or [], base)
                       if a is not None and b]
                fig[PFX[mpi] + "ovh_pct_" + key] = med(ovh)
        # the floor: the peer's compute loop beside a wake every slice
        tk = raw.get(("tick", "compute", g, n, nodes))
        if tk:
            ovh = [100.0 * (a - b) / b for a, b in zip(tk, base)
                   if a is not None and b]
            fig["tick_ovh_pct_compute_" + sfx] = med(ovh)


# ---- OSU-style and the ANY_SOURCE job --------------------------------------

P2P_KEYS = ("lat_us_8b", "lat_us_1m", "bw_mbs_1m", "bw_mbs_4m")
COLL_KEYS = ("barrier_us", "allreduce_us_8b", "bcast_us_1m")


def has_bcs_order(ctx):
    """Whether this stormctl has --bcs-order (issue 14; not invented
    here: its help is asked)."""
    r = subprocess.run([os.path.join(ctx.build, "cli", "stormctl"), "run",
                        "--help"], capture_output=True, text=True)
    return "--bcs-order" in (r.stdout + r.stderr)


def osu(ctx, reps, osu_iters, any_tasks, arrival):
    raw = {}
    for r in range(reps):
        log("== point-to-point, collectives, ANY_SOURCE rep %d/%d" %
            (r + 1, reps))
        undisturbed(lambda: osu_group(ctx, r, osu_iters, any_tasks,
                                      arrival), raw)
    return raw


def osu_group(ctx, r, osu_iters, any_tasks, arrival):
    """One repetition: each MPI's programs, in rotation."""
    it, large, windows = osu_iters
    raw = {}

    def add(key, v):
        raw[key] = v
    for mpi in rotation(r):
        if mpi not in ctx.progs:
            continue
        p = PFX[mpi]
        if mpi == "bcs":
            with Storm(ctx, max(max(COLL_NS), ANY_N)) as st:
                o = st.run(2, ctx.progs["bcs"]["osu"],
                           ["p2p", it, large, windows], "BCS-MPI p2p")
                for k in P2P_KEYS:
                    add(k, o[k])
                log("   BCS-MPI  p2p %s" % json.dumps(o))
                for n in COLL_NS:
                    o = st.run(n, ctx.progs["bcs"]["osu"],
                               ["coll", it, large],
                               "BCS-MPI coll N=%d" % n)
                    for k in COLL_KEYS:
                        add("%s_n%d" % (k, n), o[k])
                    log("   BCS-MPI  coll %s" % json.dumps(o))
                # the ANY_SOURCE job, deterministic (and by arrival)
                orders = [("det", [])]
                if arrival:
                    orders.append(("arrival", ["--bcs-order=arrival"]))
                if r % 2:
                    orders.reverse()
                for kind, extra in orders:
                    o = st.run(ANY_N, ctx.progs["bcs"]["anysrc"],
                               [any_tasks, "%.0f" % ctx.steps],
                               "BCS-MPI anysrc (%s)" % kind, extra)
                    add("anysrc_s" if kind == "det" else
                        "anysrc_arrival_s", o["runtime_s"])
                    if kind == "det":
                        add("anysrc_order", o["order"])
                    log("   BCS-MPI  anysrc %s %s" % (kind,
                                                    json.dumps(o)))
            for n, nodes in COLL_X:
                with Storm(ctx, XCPUS, nodes=nodes) as st:
                    o = st.run(n, ctx.progs["bcs"]["osu"],
                               ["coll", it, large],
                               "BCS-MPI coll N=%d over %d NMs" % (n, nodes))
                    for k in COLL_KEYS:
                        add("%s_%s" % (k, coll_sfx(n, nodes)), o[k])
                    log("   BCS-MPI  coll over %d NMs %s" % (
                        nodes, json.dumps(o)))
        else:
            o = ctx.peer(mpi, 2, "osu", ["p2p", it, large, windows],
                         "%s p2p" % NAME[mpi])
            for k in P2P_KEYS:
                add(p + k, o[k] if o else None)
            if o:
                log("   %-8s p2p %s" % (NAME[mpi], json.dumps(o)))
            for n in COLL_NS:
                o = ctx.peer(mpi, n, "osu", ["coll", it, large],
                             "%s coll N=%d" % (NAME[mpi], n))
                for k in COLL_KEYS:
                    add("%s%s_n%d" % (p, k, n), o[k] if o else None)
                    for xn, nodes in COLL_X:
                        if xn == n:
                            add("%s%s_%s" % (p, k, coll_sfx(n, nodes)),
                                o[k] if o else None)
                if o:
                    log("   %-8s coll %s" % (NAME[mpi], json.dumps(o)))
            o = ctx.peer(mpi, ANY_N, "anysrc",
                         [any_tasks, "%.0f" % ctx.steps],
                         "%s anysrc" % NAME[mpi])
            add(p + "anysrc_s", o["runtime_s"] if o else None)
    return raw


def coll_sfx(n, nodes=1):
    return "n%d" % n + ("x%d" % nodes if nodes > 1 else "")


def osu_figures(raw, fig, arrival):
    for mpi in MPIS:
        p = PFX[mpi]
        for k in P2P_KEYS:
            fig[p + k] = med(raw.get(p + k, []))
        for n, nodes in [(n, 1) for n in COLL_NS] + COLL_X:
            for k in COLL_KEYS:
                key = "%s%s_%s" % (p, k, coll_sfx(n, nodes))
                fig[key] = med(raw.get(key, []))
        fig[p + "anysrc_s"] = med(raw.get(p + "anysrc_s", []))
    orders = raw.get("anysrc_order", [])
    fig["anysrc_runs"] = len(orders)
    fig["anysrc_orders"] = len(set(orders))
    if arrival:
        det, arr = raw.get("anysrc_s", []), raw.get("anysrc_arrival_s", [])
        fig["anysrc_arrival_s"] = med(arr)
        fig["determinism_cost_pct"] = med(
            [100.0 * (a - b) / b for a, b in zip(det, arr) if b])
        fig["determinism_note"] = None
    else:
        fig["anysrc_arrival_s"] = None
        fig["determinism_cost_pct"] = None
        fig["determinism_note"] = ("stormctl has no --bcs-order=arrival "
                                   "yet: the cost of the deterministic "
                                   "order cannot be measured")


# ---- the pair ---------------------------------------------------------------

def pair_once(argvs, env, what):
    """Both jobs started at once; wall seconds until both ended, and
    their outputs."""
    t0 = time.monotonic()
    ps = [subprocess.Popen(a, stdout=subprocess.PIPE, stderr=subprocess.PIPE,
                           text=True, env=env, start_new_session=True)
          for a in argvs]
    outs = []
    try:
        for p in ps:
            try:
                out, err = p.communicate(timeout=max(
                    1.0, RUN_TIMEOUT[0] - (time.monotonic() - t0)))
            except subprocess.TimeoutExpired:
                raise RuntimeError("%s: timed out after %d s" %
                                   (what, RUN_TIMEOUT[0]))
            if p.returncode != 0:
                raise RuntimeError("%s: exit %d: %s" % (
                    what, p.returncode, (err.strip() or out.strip())[-600:]))
            outs.append(last_json(out, what))
        return time.monotonic() - t0, outs
    finally:
        for p in ps:
            if p.poll() is None:
                os.killpg(p.pid, signal.SIGKILL)
                p.communicate()


def pair(ctx, reps, iters):
    args = ["barrier", PAIR_G_MS, iters, "%.0f" % ctx.steps]
    raw = {}
    for r in range(reps):
        log("== pair: two 2-rank barrier jobs at once, rep %d/%d" %
            (r + 1, reps))
        undisturbed(lambda: pair_group(ctx, r, args), raw)
    return raw


def pair_group(ctx, r, args):
    """One repetition: each MPI's pair, in rotation."""
    raw = {}
    for mpi in rotation(r):
        if mpi not in ctx.progs:
            continue
        note_load()
        if mpi == "bcs":
            with Storm(ctx, 2, ("sched_policy = gang", "mpl = 2",
                                "quantum_us = %d" % ctx.quantum_us)
                       ) as st:
                argv = st.argv(2, ctx.progs["bcs"]["synth"], args)
                try:
                    wall, outs = pair_once([argv, argv], None,
                                           "BCS-MPI gang pair")
                except RuntimeError as e:
                    raise Failed(st.failure(str(e), argv))
        else:
            argv = peer_argv(mpi, 2, ctx.progs[mpi]["synth"], args)
            try:
                wall, outs = pair_once([argv, argv], MPIRUN_ENV,
                                       "%s pair" % NAME[mpi])
            except (RuntimeError, OSError) as e:
                PEER_ERRORS.setdefault(mpi, str(e))
                log("   %s failed: %s" % (NAME[mpi], e))
                raw[mpi] = raw[mpi + "_wall"] = None
                continue
        span = max(o["end_s"] for o in outs) - \
            min(o["start_s"] for o in outs)
        raw[mpi] = span
        raw[mpi + "_wall"] = wall
        log("   %-8s pair: span %.3f s, wall %.3f s (the jobs' own "
            "runtimes %s)" % (NAME[mpi], span, wall, ", ".join(
                "%.3f" % o["runtime_s"] for o in outs)))
    return raw


# ---- the report -------------------------------------------------------------

def f(v, fmt="%.2f"):
    return "-" if v is None else fmt % v


def ratio(a, b):
    return a / b if a is not None and b else None


def table(title, header, rows, out):
    widths = [max(len(str(c)) for c in col) for col in zip(header, *rows)]

    def line(cells):
        return "  ".join(str(c).ljust(w) if i == 0 else str(c).rjust(w)
                         for i, (c, w) in enumerate(zip(cells, widths)))
    out.append(title)
    out.append(line(header))
    out.append("  ".join("-" * w for w in widths))
    out.extend(line(r) for r in rows)
    out.append("")


def report(fig, cells, ctx):
    out = []
    s = fig["slice_us"]
    out.append("bench bcsmpi: BCS-MPI (stormctl run --mpi=bcs, 1 storm-mm "
               "+ 1 storm-nm, slice %d us, realtime %d, provider %s) vs "
               "Open MPI (mpirun.openmpi) and MPICH (mpirun.mpich) on this "
               "%d-cpu machine; medians of %d rep(s), who goes first "
               "rotating" % (s, REALTIME, PROVIDER, os.cpu_count() or 0,
                             fig["reps"]))
    out.append("  'over %d NMs': BCS-MPI's job on 1 storm-mm + %d storm-nm "
               "of cpus = %d (%d ranks a node); the peers run the same N "
               "on this machine, as for one node" % (
                   XNODES, XNODES, XCPUS, XN // XNODES))
    out.append("  ratio = BCS-MPI / Open MPI (for overheads: of the "
               "runtimes, (100 + ovh) / (100 + ovh of Open MPI))")
    out.append("")
    rows = []
    for g, n, iters, loops, nodes in cells:
        sfx = suffix(g, n, nodes)
        for loop in loops:
            key = "ovh_pct_%s_%s" % (loop, sfx)
            b, o, m = fig.get(key), fig.get("ompi_" + key), \
                fig.get("mpich_" + key)
            rt = None
            if b is not None and o is not None:
                rt = (100 + b) / (100 + o)
            rows.append(("%s %s" % (loop, label(g, n, nodes)), iters,
                         f(fig.get("base_s_" + sfx), "%.3f"),
                         f(b, "%+.1f"), f(o, "%+.1f"), f(m, "%+.1f"),
                         f(rt)))
        tk = fig.get("tick_ovh_pct_compute_" + sfx)
        if tk is not None:
            # the floor, in the peer's column: it ran the loop
            rows.append(("compute %s + a wake every slice" % label(
                g, n, nodes), iters, f(fig.get("base_s_" + sfx), "%.3f"),
                "", f(tk, "%+.1f") if fig.get("baseline") ==
                "mpirun.openmpi" else "", f(tk, "%+.1f") if
                fig.get("baseline") == "mpirun.mpich" else "", ""))
    table("Synthetic loops: overhead %% over the compute loop run bare by "
          "%s (base s); compute rows: what running under each costs alone"
          % (fig.get("baseline") or "-"),
          ("loop", "iters", "base s", "BCS-MPI %", "Open MPI %",
           "MPICH %", "ratio"), rows, out)

    rows = []
    for what, k, fmt in (("latency 8 B (us)", "lat_us_8b", "%.1f"),
                         ("latency 1 MiB (us)", "lat_us_1m", "%.1f"),
                         ("bandwidth 1 MiB (MB/s)", "bw_mbs_1m", "%.0f"),
                         ("bandwidth 4 MiB (MB/s)", "bw_mbs_4m", "%.0f")):
        rows.append((what, f(fig.get(k), fmt), f(fig.get("ompi_" + k), fmt),
                     f(fig.get("mpich_" + k), fmt),
                     f(ratio(fig.get(k), fig.get("ompi_" + k)))))
    for n, nodes in [(n, 1) for n in COLL_NS] + COLL_X:
        for what, k in (("barrier", "barrier_us"),
                        ("allreduce 8 B", "allreduce_us_8b"),
                        ("bcast 1 MiB", "bcast_us_1m")):
            key = "%s_%s" % (k, coll_sfx(n, nodes))
            rows.append(("%s N=%d%s (us)" % (
                what, n, " over %d NMs" % nodes if nodes > 1 else ""),
                         f(fig.get(key), "%.1f"),
                         f(fig.get("ompi_" + key), "%.1f"),
                         f(fig.get("mpich_" + key), "%.1f"),
                         f(ratio(fig.get(key), fig.get("ompi_" + key)))))
    rows.append(("ANY_SOURCE master/worker N=%d (s)" % ANY_N,
                 f(fig.get("anysrc_s"), "%.3f"),
                 f(fig.get("ompi_anysrc_s"), "%.3f"),
                 f(fig.get("mpich_anysrc_s"), "%.3f"),
                 f(ratio(fig.get("anysrc_s"), fig.get("ompi_anysrc_s")))))
    for what, k in (("two jobs at once: span (s)", "pair_s"),
                    ("two jobs at once: wall (s)", "pair_wall_s")):
        rows.append((what, f(fig.get("gang_" + k), "%.3f"),
                     f(fig.get("ompi_" + k), "%.3f"),
                     f(fig.get("mpich_" + k), "%.3f"),
                     f(ratio(fig.get("gang_" + k), fig.get("ompi_" + k)))))
    table("Point-to-point (N=2; bandwidth: windows of %d messages), "
          "collectives, ANY_SOURCE, the pair" % 64,
          ("figure", "BCS-MPI", "Open MPI", "MPICH", "ratio"), rows, out)

    parts = fig.get("parts", ())
    if "pair" in parts:
        out.append(
            "the pair: two jobs of 2 ranks (barrier loop, G = %d ms, %d "
            "iterations) started at once; BCS-MPI gang-scheduled by Storm "
            "(sched_policy = gang, mpl = 2, quantum %g ms, one node of 2 "
            "cpus), the peers time-shared by the kernel; span = the first "
            "job's loop start to the last one's end (the ranks' clock), "
            "wall = both launched to both ended (launches included); floor "
            "(the two back to back, the bare compute loop): %s s" % (
                PAIR_G_MS, fig["pair_iters"], fig["quantum_us"] / 1e3,
                f(fig.get("pair_floor_s"), "%.3f")))
    if "osu" in parts:
        out.append("ANY_SOURCE: match order the same on every BCS-MPI run: %s "
                   "(%d run(s), %d order(s))" % (
                       "yes" if fig["anysrc_orders"] == 1 else "NO",
                       fig["anysrc_runs"], fig["anysrc_orders"]))
        if fig.get("determinism_cost_pct") is not None:
            out.append("determinism cost (deterministic vs "
                       "--bcs-order=arrival): %+.1f %%" %
                       fig["determinism_cost_pct"])
        else:
            out.append("determinism cost: - (%s)" % fig["determinism_note"])
    for mpi in ("ompi", "mpich"):
        if mpi in fig["peers_skipped"]:
            out.append("%s skipped: %s" % (NAME[mpi],
                                          fig["peers_skipped"][mpi]))
        elif fig["peer_errors"].get(mpi):
            out.append("%s failed (its figures are missing): %s" % (
                NAME[mpi], fig["peer_errors"][mpi]))
    out.append("")

    def verdict(ok):
        return "-" if ok is None else "PASS" if ok else "FAIL"

    out.append("Targets (issue 14; S = slice = %d us):" % s)
    for loop in ("barrier", "stencil"):
        for g in sorted({c[0] for c in cells}):
            v = fig.get("ovh_pct_%s_g%g_n2" % (loop, g))
            if ("ovh_pct_%s_g%g_n2" % (loop, g)) not in fig:
                continue
            lim = 1.5 * s / (g * 1e3) * 100 + 2
            tk = fig.get("tick_ovh_pct_compute_g%g_n2" % g)
            out.append("  N=2 %-7s G=%-3g ms: %8s %% <= %.1f %%  %s%s" % (
                loop, g, f(v, "%+.1f"), lim,
                verdict(None if v is None else v <= lim),
                "" if tk is None else
                "  (a bare wake every slice costs %+.1f %% here)" % tk))
    b, o, m = (fig.get("ovh_pct_barrier_g10_n8"),
               fig.get("ompi_ovh_pct_barrier_g10_n8"),
               fig.get("mpich_ovh_pct_barrier_g10_n8"))
    peers_n8 = [x for x in (o, m) if x is not None]
    out.append("  N=8 barrier G=10 ms: %s %% < Open MPI %s %%, MPICH %s %%"
               "  %s" % (f(b, "%+.1f"), f(o, "%+.1f"), f(m, "%+.1f"),
                         verdict(None if b is None or not peers_n8
                                 else b < min(peers_n8))))
    bw, obw = fig.get("bw_mbs_4m"), fig.get("ompi_bw_mbs_4m")
    out.append("  bandwidth 4 MiB: %s MB/s >= 50 %% of Open MPI's %s MB/s"
               "  %s" % (f(bw, "%.0f"), f(obw, "%.0f"),
                         verdict(None if bw is None or obw is None
                                 else bw >= 0.5 * obw)))
    lat = fig.get("lat_us_8b")
    out.append("  latency 8 B: %s us <= 1.5 S + 50 = %.0f us  %s" % (
        f(lat, "%.1f"), 1.5 * s + 50,
        verdict(None if lat is None else lat <= 1.5 * s + 50)))
    if OTHERS:
        out.append("other work (processes not this benchmark's, steal "
                   "included) during the groups of measurements kept: "
                   "median %.2f, max %.2f cpu of %d; %d group(s) measured "
                   "again because it exceeded %.2f cpu" % (
                       med(OTHERS), max(OTHERS), os.cpu_count() or 0,
                       fig["redone"], OTHER_MAX) +
                   ("  -- other work was running: figures are disturbed"
                    if med(OTHERS) > OTHER_BUSY else ""))
    if LOADS:
        # the benchmark's own ranks count: 8 of them alone make ~9
        out.append("machine load (1-minute average) at the measurements: "
                   "%.1f .. %.1f on %d cpus (N = 8 ranks alone reach ~9)" % (
                       min(LOADS), max(LOADS), os.cpu_count() or 0))
    out.append("(elapsed %s s)" % fig["elapsed_s"])
    return "\n".join(out)


# ---- main -------------------------------------------------------------------

def usage():
    print(__doc__, file=sys.stderr)
    return 2


def main():
    args = sys.argv[1:]
    if not args or args[0].startswith("-"):
        return usage()
    build = os.path.abspath(args[0])
    smoke = "--smoke" in args
    quick = "--quick" in args or smoke
    reps = int(args[args.index("--reps") + 1]) if "--reps" in args else \
        (1 if quick else 3)
    want = args[args.index("--peers") + 1] if "--peers" in args else \
        "ompi,mpich"
    want = [] if want == "none" else want.split(",")
    parts = (args[args.index("--part") + 1] if "--part" in args else
             "synth,osu,pair").split(",")
    if reps < 1 or any(w not in ("ompi", "mpich") for w in want) or \
            any(x not in ("synth", "osu", "pair") for x in parts):
        return usage()
    if smoke:
        REDO_BUDGET[0] = 0
        RUN_TIMEOUT[0] = RUN_TIMEOUT_SMOKE_S
    stormlab.run_in_private_netns()
    # a killed benchmark still stops every process it started (finally)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit("SIGTERM"))

    t0 = time.monotonic()
    skipped = {}
    peers = []
    for mpi, tools in (("ompi", ("mpicc.openmpi", "mpirun.openmpi")),
                       ("mpich", ("mpicc.mpich", "mpirun.mpich"))):
        if mpi not in want:
            skipped[mpi] = "not asked for (--peers)"
        elif not all(shutil.which(t) for t in tools):
            skipped[mpi] = "%s not installed (scripts/deps --bench)" % \
                " / ".join(tools)
        else:
            peers.append(mpi)
    for mpi, why in skipped.items():
        log("== %s skipped: %s" % (NAME[mpi], why))

    d = tempfile.mkdtemp(prefix="storm-bench-bcsmpi-")
    os.chmod(d, 0o755)  # the jobs' programs are read by their user
    fig = {}
    try:
        log("== building the programs (bcsmpicc%s)" % "".join(
            ", " + {"ompi": "mpicc.openmpi", "mpich": "mpicc.mpich"}[p]
            for p in peers))
        progs, calib = build_programs(build, d, peers)
        steps = calibrate(calib)
        log("== calibration: %.0f work() steps per ms" % steps)
        ctx = Ctx(build, d, progs, peers, steps, SLICE_US,
                  stormlab.build_sanitizer(build))
        ctx.quantum_us = QUANTUM_US

        if smoke:
            cells = [(g, n, it, SMOKE_LOOPS[(g, n, x)], x)
                     for (g, n, x), it in SMOKE_CELLS.items()]
        else:
            gs, ns = (GS_MS_QUICK, NS_QUICK) if quick else (GS_MS, NS)
            cells = [(g, n, iters_for(g, n), LOOPS, 1)
                     for n in ns for g in gs] + \
                [(g, XN, iters_for(g, XN), LOOPS, XNODES) for g in gs]
        if "synth" not in parts:
            cells = []
        raw = synth(ctx, cells, reps)
        synth_figures(raw, cells, reps, fig)

        if "osu" in parts:
            arrival = has_bcs_order(ctx)
            osu_iters = OSU_SMOKE if smoke else OSU_QUICK if quick else \
                OSU_FULL
            raw = osu(ctx, reps, osu_iters,
                      ANY_TASKS_SMOKE if smoke else ANY_TASKS, arrival)
            osu_figures(raw, fig, arrival)

        pair_iters = PAIR_ITERS_SMOKE if smoke else PAIR_ITERS
        raw = pair(ctx, reps, pair_iters) if "pair" in parts else {}
        fig["gang_pair_s"] = med(raw.get("bcs", []))
        fig["ompi_pair_s"] = med(raw.get("ompi", []))
        fig["mpich_pair_s"] = med(raw.get("mpich", []))
        fig["gang_pair_wall_s"] = med(raw.get("bcs_wall", []))
        fig["ompi_pair_wall_s"] = med(raw.get("ompi_wall", []))
        fig["mpich_pair_wall_s"] = med(raw.get("mpich_wall", []))
        fig["pair_iters"] = pair_iters
        fig["quantum_us"] = QUANTUM_US
        base = fig.get("base_s_g%d_n2" % PAIR_G_MS)
        fig["pair_floor_s"] = 2 * base * pair_iters / fig[
            "iters_g%d_n2" % PAIR_G_MS] if base else None
        fig["parts"] = parts
    except (Failed, RuntimeError, OSError, subprocess.SubprocessError) as e:
        log("bench bcsmpi: FAILED: %s" % e)
        return 1
    finally:
        subprocess.run(["rm", "-rf", d])
    fig["slice_us"] = SLICE_US
    fig["realtime"] = REALTIME
    fig["provider"] = PROVIDER
    fig["steps_per_ms"] = round(steps)
    fig["sanitize"] = ctx.sanitize
    fig["peers"] = peers
    fig["peers_skipped"] = skipped
    fig["peer_errors"] = dict(PEER_ERRORS)
    fig["load_max"] = max(LOADS) if LOADS else None
    fig["other_cpu_median"] = round(med(OTHERS), 3) if OTHERS else None
    fig["other_cpu_max"] = round(max(OTHERS), 3) if OTHERS else None
    fig["redone"] = REDONE[0]
    fig["reps"] = reps
    fig["quick"] = quick
    fig["smoke"] = smoke
    fig["elapsed_s"] = round(time.monotonic() - t0, 1)
    print(json.dumps({"figures": fig, "table": report(fig, cells, ctx)}))
    return 0


if __name__ == "__main__":
    sys.exit(main())
