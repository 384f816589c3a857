"""stormlab -- real Storm clusters for fault tests and benchmarks (Python).

Why it exists: the replication tests kill and restart storm-mm replicas,
cut head nodes off the network and check what every replica applied; that
orchestration reads better in Python than in C.  Everything it starts is
real: corosync, storm-mm, storm-nm, LMDB files, TCP on loopback or veth.

Two layouts:
  * Lab(...)          one corosync (a single-node ring) and M replicas, in
                      the caller's network namespace; run_in_private_netns()
                      first gives the test a network and /run of its own;
  * MultiHost(...)    tests/harness/headnet: one network namespace per head
                      node with its own corosync and storm-mm, the node
                      managers in a compute namespace, a bridge between.

Key invariants: every process started is recorded by PID and killed in
stop() (TERM, then KILL after a bound), pass or fail; ports are chosen
free at run time; waits are bounded.
"""

import glob
import hashlib
import json
import os
import random
import signal
import socket
import struct
import subprocess
import sys
import time

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(
    os.path.abspath(__file__))))
RETRY_ERRNOS = {4096 + 10, 4096 + 11, 4096 + 12}  # ENOQUORUM, ENOTSYNCED, EUNKNOWN


def run_in_private_netns():
    """Re-exec this script in new network and mount namespaces (root only):
    corosync's IPC (abstract sockets) and ports are then the test's own."""
    if os.environ.get("STORMLAB_NS") == "1":
        subprocess.run(["ip", "link", "set", "lo", "up"], check=True)
        subprocess.run(["mount", "-t", "tmpfs", "tmpfs", "/run"], check=True)
        return
    if os.geteuid() != 0:
        print("SKIP: needs root for network namespaces", file=sys.stderr)
        sys.exit(77)
    env = dict(os.environ, STORMLAB_NS="1")
    os.execvpe("unshare", ["unshare", "--net", "--mount", "--propagation",
                           "private", "--", sys.executable] + sys.argv, env)


def remove_node_cgroups(cluster, d, nodes):
    """The cgroup directories of this lab's node managers (a node
    manager stopped by a signal removes its own; one SIGKILLed leaves
    them): storm-CLUSTER-NODE-HASH, HASH from its RAM-disk directory as
    node/cgroup.c makes it.  Best effort: an empty directory goes."""
    mounts, own = [], {}
    with open("/proc/self/mounts") as f:
        for line in f:
            x = line.split()
            if x[2] == "cgroup2":
                mounts.append((x[1], ""))
            elif x[2] == "cgroup" and "memory" in x[3].split(","):
                mounts.append((x[1], "memory"))
    with open("/proc/self/cgroup") as f:
        for line in f:
            _, ctls, path = line.rstrip("\n").split(":", 2)
            for c in (ctls.split(",") if ctls else [""]):
                own[c] = "" if path == "/" else path
    for j in range(1, nodes + 1):
        place = "%s/ramdisk/%s-nm%d" % (d, cluster, j)
        h = hashlib.blake2b(place.encode(), digest_size=16).hexdigest()[:8]
        for mnt, ctl in mounts:
            top = os.path.join(mnt + own.get(ctl, ""),
                               "storm-%s-nm%d-%s" % (cluster, j, h))
            for sub in glob.glob(os.path.join(top, "job-*")) + [top]:
                try:
                    os.rmdir(sub)
                except OSError:
                    pass


def write_key(d, name="storm.key"):
    """A cluster key in d (like storm-keygen: 32 random bytes, 0400);
    its path.  Kept if there already (a lab restarted in d)."""
    path = os.path.join(d, name)
    try:
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o400)
    except FileExistsError:
        return path
    try:
        os.write(fd, os.urandom(32))
    finally:
        os.close(fd)
    return path


def free_ports(n, host="127.0.0.1"):
    socks = [socket.socket() for _ in range(n)]
    for s in socks:
        s.bind((host, 0))
    ports = [s.getsockname()[1] for s in socks]
    for s in socks:
        s.close()
    return ports


# ---- the client protocol ------------------------------------------------------

REQUEST, SEALED, INPUT = 1, 5, 6  # frame types (docs/protocol.md 2.1)
INPUT_CHUNK = 1 << 20             # bytes in an INPUT frame (as stormctl)


def frame_of(ftype, payload):
    """A frame of type ftype around payload (bytes)."""
    return (b"STRM" + bytes([1, ftype, 0, 0]) +
            struct.pack(">I", len(payload)) + payload)


def input_paths(req):
    """The inputs a run or submit request hands over (docs/protocol.md
    5.1): its program, then each of its files; [] for any other request."""
    job = req.get("job")
    if req.get("op") not in ("run", "submit") or not isinstance(job, dict) \
            or not job.get("argv"):
        return []
    return [job["argv"][0]] + list(job.get("files") or [])


def open_inputs(paths):
    """The paths opened read-only, as stormctl opens them (with this
    process's rights): their descriptors, to be closed by the caller."""
    fds = []
    try:
        for p in paths:
            fds.append(os.open(p, os.O_RDONLY | os.O_CLOEXEC))
    except OSError:
        for fd in fds:
            os.close(fd)
        raise
    return fds


def call(endpoint, req, timeout=5.0):
    """One request on one connection; returns the reply object.  endpoint:
    a unix socket path or (host, port).  A run or submit on the unix
    socket passes its inputs as stormctl does: its program and files
    opened here and handed over as descriptors ("fds", SCM_RIGHTS).
    Raises OSError on transport failures (and if an input cannot be
    opened)."""
    paths = input_paths(req) if isinstance(endpoint, str) else []
    if not paths:
        return call_raw(endpoint, frame_of(REQUEST, json.dumps(req).encode()),
                        timeout)
    body = json.dumps(dict(req, fds=len(paths))).encode()
    fds = open_inputs(paths)
    try:
        return call_raw(endpoint, frame_of(REQUEST, body), timeout, fds=fds)
    finally:
        for fd in fds:
            os.close(fd)


def call_raw(endpoint, frame, timeout=5.0, fds=(), then=None):
    """call() with the request frame's bytes as given (a sealed one, a
    replayed one); returns the reply object.  fds: descriptors passed
    with the frame (unix socket).  then: over TCP, a run or submit sent
    once frame (a sealed "auth") has authenticated the connection, with
    its inputs' bytes (send_with_inputs); the reply is then its own, or
    frame's refusal."""
    if isinstance(endpoint, str):
        s = socket.socket(socket.AF_UNIX)
    else:
        s = socket.socket()
    try:
        if isinstance(endpoint, str):
            # like stormctl: a blocking connect waits for room in a full
            # listen backlog (a timeout's non-blocking connect would fail
            # at once with EAGAIN); SO_SNDTIMEO bounds the wait
            s.setsockopt(socket.SOL_SOCKET, socket.SO_SNDTIMEO,
                         struct.pack("ll", int(timeout),
                                     int(timeout % 1 * 1e6)))
            s.connect(endpoint)
            s.settimeout(timeout)
        else:
            s.settimeout(timeout)
            s.connect(endpoint)
        if fds:
            # the descriptors ride on the frame's first bytes
            sent = socket.send_fds(s, [frame[:12]], list(fds))
            s.sendall(frame[sent:])
        else:
            s.sendall(frame)
        rep = recv_reply(s)
        if then is not None and rep.get("ok"):
            rep = send_with_inputs(s, then)
        return rep
    finally:
        s.close()


def recv_reply(s):
    """The next frame's JSON from s."""
    hdr = recv_exact(s, 12)
    n = struct.unpack(">I", hdr[8:12])[0]
    return json.loads(recv_exact(s, n))


def send_with_inputs(s, req):
    """Over TCP, on a connection that has authenticated: req (a run or
    submit) as stormctl sends it (docs/protocol.md 2.7): "inputs" names
    each input's size and mode, and once the manager says
    {"inputs": "send"} their bytes follow in INPUT frames.  Returns the
    request's reply (or the refusal of its announcement)."""
    fds = open_inputs(input_paths(req))
    try:
        sizes = []
        for fd in fds:
            st = os.fstat(fd)
            sizes.append({"size": st.st_size, "mode": st.st_mode & 0o777})
        s.sendall(frame_of(REQUEST, json.dumps(dict(req, inputs=sizes))
                           .encode()))
        rep = recv_reply(s)
        if not (rep.get("ok") and rep.get("inputs") == "send"):
            return rep  # a refusal, or (all inputs empty) the answer
        for fd, x in zip(fds, sizes):
            off = 0
            while off < x["size"]:
                d = os.pread(fd, min(INPUT_CHUNK, x["size"] - off), off)
                if not d:
                    raise OSError("an input shrank while being sent")
                s.sendall(frame_of(INPUT, d))
                off += len(d)
        return recv_reply(s)
    finally:
        for fd in fds:
            os.close(fd)


# Sealed requests (docs/protocol.md 2.6): what stormctl sends over TCP.

def seal_payload(body):
    """The MUNGE payload that binds body (bytes): its SHA-256 and a
    fresh nonce."""
    return "storm-seal-1 sha256=%s nonce=%s" % (
        hashlib.sha256(body).hexdigest(), os.urandom(16).hex())


def munge_cred(sock, payload, ttl=None):
    """A credential from the munged at sock for payload (text)."""
    argv = ["munge", "-S", sock, "-s", payload]
    if ttl:
        argv += ["-t", str(ttl)]
    return subprocess.run(argv, capture_output=True, text=True,
                          check=True).stdout.strip()


def sealed_frame(cred, body):
    """A SEALED frame: the credential (text) and the body (bytes)."""
    c = cred.encode()
    return frame_of(SEALED, bytes([1, 1]) + struct.pack(">H", len(c)) + c +
                    body)


def sealed_request(sock, req, ttl=None):
    """The bytes stormctl would send for req over TCP, sealed with a
    credential of the munged at sock."""
    body = json.dumps(req).encode()
    return sealed_frame(munge_cred(sock, seal_payload(body), ttl), body)


def recv_exact(s, n):
    buf = b""
    while len(buf) < n:
        d = s.recv(n - len(buf))
        if not d:
            raise ConnectionResetError("manager closed the connection")
        buf += d
    return buf


class Client:
    """A client that rides out failover: the same (client, seq) goes to the
    next replica after a transport failure or a go-elsewhere refusal."""

    def __init__(self, name, endpoints, deadline_s=20.0):
        self.name = name
        self.endpoints = list(endpoints)
        self.next = random.randrange(len(self.endpoints))
        self.seq = 0
        self.deadline_s = deadline_s
        self.retries = 0

    def request(self, req):
        self.seq += 1
        req = dict(req, client=self.name, seq=self.seq)
        end = time.monotonic() + self.deadline_s
        tries = 0
        while True:
            ep = self.endpoints[self.next % len(self.endpoints)]
            try:
                rep = call(ep, req)
                if rep.get("ok") or rep.get("errno") not in RETRY_ERRNOS:
                    return self.seq, rep
            except OSError:
                pass
            self.retries += 1
            self.next += 1
            tries += 1
            if time.monotonic() > end:
                raise TimeoutError("%s seq %d: no replica answered" %
                                   (self.name, self.seq))
            if tries % len(self.endpoints) == 0:
                time.sleep(0.02)


# ---- processes ---------------------------------------------------------------------

class Procs:
    def __init__(self):
        self.procs = {}  # name -> Popen (the latest of that name)
        self.pids = []   # every process started, restarts included

    def start(self, name, argv, log, netns=None, env=None):
        if netns:  # not `ip netns exec`: it remounts /sys, hiding cgroups
            argv = ["nsenter", "--net=/var/run/netns/%s" % netns] + argv
        f = open(log, "ab")
        p = subprocess.Popen(argv, stdout=f, stderr=subprocess.STDOUT,
                             env=env, start_new_session=True)
        f.close()
        self.procs[name] = p
        self.pids.append(p.pid)
        return p

    def kill(self, name, sig=signal.SIGKILL):
        p = self.procs.get(name)
        if p and p.poll() is None:
            p.send_signal(sig)
            p.wait(timeout=10)
        if p:
            cleanup_shm(p.pid)  # its crash blackbox: 1 MiB of /dev/shm
        return p

    def stop_all(self):
        for p in self.procs.values():
            if p.poll() is None:
                p.send_signal(signal.SIGTERM)
        end = time.monotonic() + 5
        for p in self.procs.values():
            try:
                p.wait(timeout=max(0.1, end - time.monotonic()))
            except subprocess.TimeoutExpired:
                p.kill()
                p.wait()
        # a process killed and restarted under the same name left its
        # blackbox too
        for pid in self.pids:
            cleanup_shm(pid)


def cleanup_shm(pid):
    for f in os.listdir("/dev/shm"):
        if f.startswith("qb-") and ("-%d-" % pid) in f:
            path = os.path.join("/dev/shm", f)
            subprocess.run(["rm", "-rf", path])


# ---- one corosync, M replicas ---------------------------------------------------

class Lab:
    """A local cluster: corosync + M storm-mm + N storm-nm, tcp on loopback."""

    def __init__(self, build, d, managers=3, nodes=2, cpus=1, slice_us=10000,
                 log_level=os.environ.get("STORMLAB_LOG_LEVEL", "info"),
                 extra=(), provider="tcp", manager_extra=None,
                 corosync_crypto=True, node_wrap=(), metrics=False):
        # manager_extra: i -> lines for [manager mmI] (a head's own
        # munge_socket); node_wrap: argv words put before each storm-nm's
        # command line, a command that execs the rest in place (its PID
        # is the node manager's: `unshare --mount ... sh -c '...; exec
        # "$@"'` for a view of /proc of its own)
        self.build, self.dir = build, d
        self.node_wrap = list(node_wrap)
        self.m, self.n = managers, nodes
        # corosync authenticates and encrypts its traffic (aes256 +
        # sha256, a generated authkey) unless a benchmark measures it off
        self.corosync_crypto = corosync_crypto
        self.p = Procs()
        os.makedirs(d, exist_ok=True)
        ports = free_ports(nodes + 2 * managers + 1 +
                           (managers if metrics else 0))
        # metrics: each replica's Prometheus page (metrics_url(i))
        self.metrics = ["127.0.0.1:%d" % ports[nodes + 2 * managers + 1 + i]
                        for i in range(managers)] if metrics else []
        self.listen = ["127.0.0.1:%d" % ports[nodes + managers + i]
                       for i in range(managers)]
        # shm: the fabric's addresses are names, one per incarnation of
        # this lab (the managers' client ports stay TCP)
        def addr(name, port):
            return ("storm-%d-%s" % (os.getpid(), name) if provider == "shm"
                    else "127.0.0.1:%d" % port)
        lines = ["[cluster]", "name = lab", "provider = %s" % provider,
                 "auth_key = %s" % write_key(d),
                 "slice_us = %d" % slice_us, "hb_period_ms = 50",
                 "hb_timeout_ms = 1000", "ramdisk = %s/ramdisk" % d,
                 "state_dir = %s/state" % d, "run_dir = %s" % d,
                 "log = %s/storm.log" % d, "log_level = %s" % log_level,
                 # BCS-MPI under MPICH's sonames, from this build tree
                 "mpich_abi_dir = %s" % os.path.join(
                     os.path.abspath(build), "bcsmpi", "abi"),
                 # Open MPI's ranks: libstorm-pmi from this build, and
                 # its TCP transport allowed on loopback
                 "pmi_library = %s" % os.path.join(
                     os.path.abspath(build), "node", "libstorm-pmi.so.0"),
                 "mpi_env = OMPI_MCA_btl_tcp_if_include=lo"]
        if managers > 1:
            lines.append("replication = corosync")
        lines += list(extra)
        for i in range(managers):
            lines += ["", "[manager mm%d]" % i,
                      "address = %s" % addr("mm%d" % i, ports[i]),
                      "listen = %s" % self.listen[i]]
            if metrics:
                lines.append("metrics_listen = %s" % self.metrics[i])
            lines += list(manager_extra(i) if manager_extra else [])
        for j in range(nodes):
            lines += ["", "[node nm%d]" % (j + 1),
                      "address = %s" % addr("nm%d" % (j + 1),
                                            ports[managers + j]),
                      "cpus = %d" % cpus]
        self.conf = os.path.join(d, "storm.conf")
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")
        self.knet_port = ports[nodes + 2 * managers]

    def sock(self, i):
        return os.path.join(self.dir, "storm-mm-mm%d.sock" % i)

    def metrics_url(self, i):
        return "http://%s/metrics" % self.metrics[i]

    def endpoints(self):
        return [self.sock(i) for i in range(self.m)]

    def start_corosync(self):
        cdir = os.path.join(self.dir, "corosync")
        os.makedirs(cdir, exist_ok=True)
        with open(os.path.join(cdir, "corosync.conf"), "w") as f:
            # realtime corosync starves the replicas sharing its cores
            # (scripts/cluster does the same; docs/replication.md §6)
            f.write(COROSYNC_ONE % dict(
                port=self.knet_port, dir=cdir,
                rr=os.environ.get("STORM_COROSYNC_RR", "no"),
                crypto=corosync_crypto_lines(
                    corosync_authkey(os.path.join(cdir, "authkey"))
                    if self.corosync_crypto else None)))
        self.p.start("corosync", ["corosync", "-f", "-c",
                                  os.path.join(cdir, "corosync.conf")],
                     os.path.join(cdir, "corosync.out"))
        wait_for(lambda: b"Quorate:          Yes" in subprocess.run(
            ["corosync-quorumtool", "-s"], capture_output=True).stdout,
                 20, "corosync quorate")

    def start_mm(self, i):
        try:
            os.unlink(self.sock(i))
        except FileNotFoundError:
            pass
        self.p.start("mm%d" % i, [os.path.join(self.build, "manager/mmd/storm-mm"),
                                  "--config", self.conf, "--name", "mm%d" % i],
                     os.path.join(self.dir, "mm%d.out" % i))

    def start_nm(self, j):
        self.p.start("nm%d" % j, self.node_wrap + [
            os.path.join(self.build, "node/storm-nm"),
            "--config", self.conf, "--name", "nm%d" % j],
                     os.path.join(self.dir, "nm%d.out" % j))

    def up(self):
        if self.m > 1:
            self.start_corosync()
        for i in range(self.m):
            self.start_mm(i)
        for i in range(self.m):
            wait_for(lambda: os.path.exists(self.sock(i)), 30,
                     "mm%d's socket" % i)
        for j in range(1, self.n + 1):
            self.start_nm(j)
        rep = call(self.sock(0), {"op": "wait", "nodes_up": self.n,
                                  "timeout_ms": 30000}, timeout=40)
        if not rep.get("ok"):
            raise RuntimeError("nodes did not come up: %s" % rep)

    def mm_pid(self, i):
        p = self.p.procs.get("mm%d" % i)
        return p.pid if p and p.poll() is None else None

    def managers(self, i, timeout=5.0):
        return call(self.sock(i), {"op": "managers"}, timeout=timeout)

    def master(self):
        for i in range(self.m):
            try:
                rep = self.managers(i)
            except OSError:
                continue
            for k, m in enumerate(rep.get("managers", [])):
                if m.get("master"):
                    return k
        return None

    def converged(self, timeout=30.0):
        """Bounded wait until every replica is synced at one applied index
        with one digest (no event reports convergence: it is polled)."""
        end = time.monotonic() + timeout
        last = None
        while time.monotonic() < end:
            try:
                reps = [self.managers(i) for i in range(self.m)]
                last = [(r.get("synced"), r.get("applied"), r.get("digest"),
                         r.get("quorate"), r.get("replication"))
                        for r in reps]
                if all(x[0] for x in last) and len({x[1] for x in last}) == 1 \
                        and len({x[2] for x in last}) == 1:
                    return reps
            except OSError:
                pass
            time.sleep(0.1)
        raise AssertionError("replicas did not converge: %s" % last)

    def queue(self, i):
        """Every job replica i holds, page by page."""
        jobs, start = [], 1
        while start:
            rep = call(self.sock(i), {"op": "queue", "all": True,
                                      "from": start}, timeout=10)
            assert rep.get("ok"), rep
            jobs += rep["jobs"]
            start = rep.get("next", 0)
        return jobs

    def stop(self):
        self.p.stop_all()
        remove_node_cgroups("lab", self.dir, self.n)


def corosync_authkey(path):
    """corosync's cluster key at path (made if missing): corosync-keygen,
    256 bytes from /dev/urandom, mode 0400, the caller's (root's)."""
    if not os.path.exists(path):
        subprocess.run(["corosync-keygen", "-k", path], capture_output=True,
                       check=True)
    os.chmod(path, 0o400)
    return path


def corosync_crypto_lines(key):
    """totem's crypto lines: aes256 + sha256 with the key file, or (key
    None) none, for a benchmark's measure of their cost."""
    if key is None:
        return "  crypto_cipher: none\n  crypto_hash: none"
    return ("  crypto_cipher: aes256\n  crypto_hash: sha256\n"
            "  keyfile: %s" % key)


COROSYNC_ONE = """totem {
  version: 2
  cluster_name: stormlab
  transport: knet
%(crypto)s
  interface {
    linknumber: 0
    mcastport: %(port)d
  }
}
nodelist {
  node {
    ring0_addr: 127.0.0.1
    nodeid: 1
    name: lab
  }
}
quorum {
  provider: corosync_votequorum
}
logging {
  to_stderr: no
  to_syslog: no
  to_logfile: yes
  logfile: %(dir)s/corosync.log
  timestamp: on
}
system {
  state_dir: %(dir)s
  sched_rr: %(rr)s
}
"""


def build_sanitizer(build):
    """A meson build's b_sanitize ('none' if unknown): a program linked
    against its sanitized libraries must be built with the same."""
    path = os.path.join(build, "meson-info", "intro-buildoptions.json")
    try:
        with open(path) as fp:
            for o in json.load(fp):
                if o.get("name") == "b_sanitize":
                    return str(o.get("value") or "none")
    except (OSError, ValueError):
        pass
    return "none"


class CtlRun:
    """`stormctl run ARGS` as uid (the same gid) in the background, its
    stdout and stderr read into lines and errs as they come."""

    def __init__(self, lab, args, uid):
        import threading
        self.lines, self.errs = [], []
        self.proc = subprocess.Popen(
            ["setpriv", "--reuid=%d" % uid, "--regid=%d" % uid,
             "--clear-groups", os.path.join(lab.build, "cli/stormctl"),
             "--config", lab.conf, "run"] + list(args),
            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
            cwd=lab.dir)
        self.readers = [threading.Thread(target=lambda f, into:
                                         into.extend(f), args=a,
                                         daemon=True)
                        for a in ((self.proc.stdout, self.lines),
                                  (self.proc.stderr, self.errs))]
        for t in self.readers:
            t.start()

    def wait(self, timeout):
        """Its exit status; killed (and reaped) if it outlives timeout."""
        try:
            rc = self.proc.wait(timeout=timeout)
        finally:
            self.stop()
        return rc

    def stop(self):
        """Killed if still running, reaped, its output read to the end."""
        if self.proc.poll() is None:
            self.proc.kill()
            self.proc.wait()
        for t in self.readers:
            t.join(10)


def pids_of(lab, job):
    """The PIDs of job's rank processes (their environment names it)."""
    want = b"STORM_JOB_ID=%d\0" % job
    where = lab.dir.encode()
    out = []
    for env in glob.glob("/proc/[0-9]*/environ"):
        try:
            with open(env, "rb") as f:
                e = f.read()
        except OSError:
            continue
        if want in e and where in e:
            out.append(int(env.split("/")[2]))
    return out


def wait_for(pred, timeout, what):
    end = time.monotonic() + timeout
    while time.monotonic() < end:
        try:
            if pred():
                return
        except OSError:
            pass
        time.sleep(0.05)
    raise TimeoutError("timed out waiting for %s" % what)



def run_test(name, d, make_lab, fn):
    """A test's whole life: lab = make_lab() (not yet up), lab.up(),
    fn(lab).  On failure, says why with the tail of the cluster's log;
    pass or fail, stops every process the lab started; removes d if the
    test passed (a failed one's directory stays for its logs).  Returns
    the exit code: 0 pass, 1 fail."""
    lab = None
    ok = False
    try:
        lab = make_lab()
        lab.up()
        fn(lab)
        ok = True
    except Exception as e:  # noqa: BLE001 -- report any failure with logs
        print("FAIL %s: %s" % (name, e), file=sys.stderr)
        log = os.path.join(d, "storm.log")
        if os.path.exists(log):
            subprocess.run(["tail", "-40", log], stdout=sys.stderr)
    finally:
        if lab:
            lab.stop()
        if ok:
            subprocess.run(["rm", "-rf", d])
    print("%s %s" % ("PASS" if ok else "FAIL", name))
    return 0 if ok else 1

# ---- several head nodes (network namespaces) --------------------------------

class MultiHost(Lab):
    """Three (or more) head namespaces, each with its own corosync and
    storm-mm; the node managers in a compute namespace; one bridge
    (tests/harness/headnet).  Unix sockets are files, so the test talks
    to every replica from where it runs."""

    FABRIC, LISTEN, NM = 7101, 7201, 7301

    def __init__(self, build, d, heads=3, nodes=2, token=300):
        self.build, self.dir = build, d
        self.m, self.n = heads, nodes
        self.p = Procs()
        self.net = os.path.join(d, "net")
        os.makedirs(d, exist_ok=True)
        self.headnet = os.path.join(ROOT, "tests", "harness", "headnet")
        out = subprocess.run([self.headnet, "up", "--dir", self.net,
                              "--heads", str(heads), "--token", str(token),
                              "--cluster", "stormmh"],
                             capture_output=True, text=True, timeout=120)
        if out.returncode != 0:
            raise RuntimeError("headnet up failed: %s" % out.stderr)
        self.env = dict(line.split("=", 1) for line in out.stdout.split()
                        if "=" in line)
        self.token = token
        self.head_ns = [self.env["HEADNET_HEAD%d_NS" % (k + 1)]
                        for k in range(heads)]
        addrs = [self.env["HEADNET_HEAD%d_ADDR" % (k + 1)]
                 for k in range(heads)]
        self.compute_ns = self.env["HEADNET_COMPUTE_NS"]
        caddr = self.env["HEADNET_COMPUTE_ADDR"]
        lines = ["[cluster]", "name = mh", "provider = tcp",
                 "auth_key = %s" % write_key(d),
                 "slice_us = 10000", "hb_period_ms = 50",
                 "hb_timeout_ms = 1000", "ramdisk = %s/ramdisk" % d,
                 "state_dir = %s/state" % d, "run_dir = %s" % d,
                 "log = %s/storm.log" % d, "log_level = info",
                 "replication = corosync"]
        self.listen = []
        for k in range(heads):
            self.listen.append("%s:%d" % (addrs[k], self.LISTEN))
            lines += ["", "[manager mm%d]" % k,
                      "address = %s:%d" % (addrs[k], self.FABRIC),
                      "listen = %s" % self.listen[-1]]
        for j in range(nodes):
            lines += ["", "[node nm%d]" % (j + 1),
                      "address = %s:%d" % (caddr, self.NM + j), "cpus = 1"]
        self.conf = os.path.join(d, "storm.conf")
        with open(self.conf, "w") as f:
            f.write("\n".join(lines) + "\n")

    def start_corosync(self):
        pass  # headnet runs one per head

    def start_mm(self, i):
        try:
            os.unlink(self.sock(i))
        except FileNotFoundError:
            pass
        self.p.start("mm%d" % i, [os.path.join(self.build, "manager/mmd/storm-mm"),
                                  "--config", self.conf, "--name", "mm%d" % i],
                     os.path.join(self.dir, "mm%d.out" % i),
                     netns=self.head_ns[i])

    def start_nm(self, j):
        self.p.start("nm%d" % j, [os.path.join(self.build, "node/storm-nm"),
                                  "--config", self.conf, "--name", "nm%d" % j],
                     os.path.join(self.dir, "nm%d.out" % j),
                     netns=self.compute_ns)

    def up(self):
        # the heads' corosyncs are up (headnet waited for quorum)
        self.m_up = True
        Lab.up(self)

    def cut(self, k):
        out = subprocess.run([self.headnet, "cut", "--dir", self.net,
                              str(k + 1)], capture_output=True, text=True,
                             check=True)
        return dict(line.split("=", 1) for line in out.stdout.split()
                    if "=" in line)

    def heal(self, k):
        subprocess.run([self.headnet, "heal", "--dir", self.net, str(k + 1)],
                       capture_output=True, check=True)

    def stop(self):
        try:
            self.p.stop_all()
            remove_node_cgroups("mh", self.dir, self.n)
        finally:
            subprocess.run([self.headnet, "down", "--dir", self.net],
                           capture_output=True)


def start_munged(procs, d, name="munged", key=None):
    """A munged of the test's own: socket under d (which other users must
    be able to reach: their credentials come from it), started as
    procs' NAME.  key: the key file to share with other munged (each
    head of a cluster runs its own munged with the cluster's key); None:
    d/munge.key, generated if missing."""
    os.chmod(d, 0o755)
    key = key or os.path.join(d, "munge.key")
    if not os.path.exists(key):
        with open(key, "wb") as f:
            f.write(os.urandom(1024))
        os.chmod(key, 0o600)
    base = os.path.join(d, name)
    sock = base + ".socket" if name != "munged" else os.path.join(
        d, "munge.socket")
    procs.start(name, ["munged", "-F", "--force", "--socket", sock,
                       "--key-file", key, "--pid-file", base + ".pid",
                       "--log-file", base + ".log", "--seed-file",
                       base + ".seed"], base + ".out")
    wait_for(lambda: os.path.exists(sock), 10, "%s's socket" % name)
    return sock
