"""abuse -- what a hostile local user throws at storm-mm, as `nobody`:
1,000 idle connections over the unix socket and TCP each, a 16 MiB
garbage frame every 100 ms, and a frame trickled byte by byte (slow
loris).  Shared by tests/load/test_load.py (abuse) and
bench/replication/bench.py (the abuse row).  Bounded: it stops when told
and closes everything it opened.
"""

import json
import os
import socket
import struct
import threading
import time

import stormlab


def frame(body):
    return b"STRM" + bytes([1, 1, 0, 0]) + struct.pack(">I", len(body)) + body


def reply_of(s, timeout=10):
    """The next frame's JSON from s, or None if it closed first."""
    s.settimeout(timeout)
    try:
        hdr = stormlab.recv_exact(s, 12)
        n = struct.unpack(">I", hdr[8:12])[0]
        return json.loads(stormlab.recv_exact(s, n))
    except (OSError, ValueError):
        return None


def connect(ep):
    s = socket.socket(socket.AF_UNIX if isinstance(ep, str)
                      else socket.AF_INET)
    s.settimeout(10)
    s.connect(ep)
    return s


def abuser(lab, tcp, report, stop, unix=None):
    """As nobody: the abuse of one replica (its unix socket, default
    replica 0's, and its TCP address), until stop is set; findings into
    report."""
    unix = unix or lab.sock(0)
    held, refused = [], []
    report["garbage"] = []
    report["loris"] = None

    def garbage():
        junk = os.urandom(16 << 20)
        while not stop.is_set():
            try:
                with connect(unix) as g:
                    g.sendall(frame(junk))
                    report["garbage"].append(reply_of(g))
            except OSError as e:
                report["garbage"].append({"refused": str(e)})
            stop.wait(0.1)

    def loris():
        t0 = time.monotonic()
        try:
            with connect(unix) as g:
                for b in frame(b'{"op": "status"}' * 100):
                    g.sendall(bytes([b]))
                    if stop.wait(0.2):
                        break
            report["loris"] = ("survived", time.monotonic() - t0)
        except OSError:
            report["loris"] = ("closed", time.monotonic() - t0)
    ts = [threading.Thread(target=garbage), threading.Thread(target=loris)]
    for t in ts:
        t.start()
    stop.wait(1)
    for k in range(1000):
        for ep, kind in ((unix, "unix"), (tcp, "tcp")):
            try:
                s = connect(ep)
            except OSError:
                refused.append((kind, "connect failed"))
                continue
            s.setblocking(False)
            held.append((kind, s))
    time.sleep(0.5)
    # the refused ones got an error frame and EOF; the held ones nothing
    for kind, s in held:
        try:
            d = s.recv(4096)
        except BlockingIOError:
            continue
        except OSError:
            d = b""
        refused.append((kind, d[12:].decode(errors="replace")))
    report["refused"] = refused
    report["held"] = len(held)
    stop.wait(30)
    for t in ts:
        t.join()
    for _, s in held:
        s.close()


def run_as_nobody(lab, tcp, seconds, unix=None):
    """Fork a child that drops to nobody and abuses lab for `seconds`;
    returns (pid, read_fd): read the JSON report from read_fd to EOF,
    then waitpid(pid)."""
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:
        code = 1
        try:
            os.close(r)
            os.setgroups([])
            os.setgid(65534)
            os.setuid(65534)
            report, stop = {}, threading.Event()
            t = threading.Thread(target=abuser,
                                 args=(lab, tcp, report, stop, unix))
            t.start()
            time.sleep(seconds)
            stop.set()
            t.join()
            os.write(w, json.dumps(report).encode())
            code = 0
        finally:
            os._exit(code)
    os.close(w)
    return pid, r


def collect(pid, r):
    """The child's report (read to EOF, so it can finish writing) and its
    exit status."""
    data = b""
    while True:
        d = os.read(r, 1 << 20)
        if not d:
            break
        data += d
    os.close(r)
    _, status = os.waitpid(pid, 0)
    return (json.loads(data) if data else None), status
