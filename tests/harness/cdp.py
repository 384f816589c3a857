"""cdp -- headless Debian chromium, driven over the Chrome DevTools
protocol, for the tests and scripts that look at storm-web's page.

Why it exists: the dashboard is a live page (server-sent events redraw
it), so a test loads it once and reads its DOM again and again as the
cluster changes; a --dump-dom run would see one moment only.  The
protocol's WebSocket is spoken by a minimal client here (text frames,
masked from us, never fragmented by chromium in practice but reassembled
anyway), so no Python package beyond the standard library is needed
whichever python3 runs the tests.

Key invariant: chromium runs in a process group of its own, killed
whole by close() (its zygote and renderers included), pass or fail.
"""

import base64
import json
import os
import shutil
import signal
import socket
import struct
import subprocess
import time
import urllib.parse
import urllib.request


def chromium_path():
    for name in ("chromium", "chromium-browser", "google-chrome"):
        p = shutil.which(name)
        if p:
            return p
    return None


class WebSocket:
    """A client WebSocket (RFC 6455) to ws://host:port/path: enough for
    the DevTools protocol."""

    def __init__(self, url, timeout=30.0):
        u = urllib.parse.urlparse(url)
        self.s = socket.create_connection((u.hostname, u.port),
                                          timeout=timeout)
        key = base64.b64encode(os.urandom(16)).decode()
        self.s.sendall(("GET %s HTTP/1.1\r\nHost: %s:%d\r\n"
                        "Upgrade: websocket\r\nConnection: Upgrade\r\n"
                        "Sec-WebSocket-Key: %s\r\n"
                        "Sec-WebSocket-Version: 13\r\n\r\n" %
                        (u.path or "/", u.hostname, u.port, key)).encode())
        head = b""
        while b"\r\n\r\n" not in head:
            b = self.s.recv(1)
            if not b:
                raise OSError("devtools closed the handshake")
            head += b
        if not head.startswith(b"HTTP/1.1 101"):
            raise OSError("devtools refused the WebSocket: %r" % head[:80])

    def _exact(self, n):
        b = b""
        while len(b) < n:
            x = self.s.recv(n - len(b))
            if not x:
                raise OSError("devtools closed the connection")
            b += x
        return b

    def send(self, text):
        data = text.encode()
        n = len(data)
        head = bytes([0x81])
        if n < 126:
            head += bytes([0x80 | n])
        elif n < 65536:
            head += bytes([0x80 | 126]) + struct.pack(">H", n)
        else:
            head += bytes([0x80 | 127]) + struct.pack(">Q", n)
        mask = os.urandom(4)
        self.s.sendall(head + mask +
                       bytes(b ^ mask[i % 4] for i, b in enumerate(data)))

    def recv(self):
        """The next text message (pings answered, fragments joined)."""
        msg = b""
        while True:
            b0, b1 = self._exact(2)
            n = b1 & 0x7f
            if n == 126:
                n = struct.unpack(">H", self._exact(2))[0]
            elif n == 127:
                n = struct.unpack(">Q", self._exact(8))[0]
            data = self._exact(n)
            op = b0 & 0x0f
            if op == 8:
                raise OSError("devtools closed the WebSocket")
            if op == 9:  # ping: pong
                self.s.sendall(bytes([0x8a, 0x80]) + os.urandom(4))
                continue
            if op in (0, 1, 2):
                msg += data
                if b0 & 0x80:
                    return msg.decode()

    def close(self):
        self.s.close()


class Chromium:
    """Headless chromium showing url, its profile under d; eval() runs
    JavaScript in the page and returns the value."""

    def __init__(self, url, d, width=1280, height=900, log=None):
        self.dir = os.path.join(d, "chromium")
        os.makedirs(self.dir, exist_ok=True)
        exe = chromium_path()
        if not exe:
            raise RuntimeError("no chromium (scripts/deps installs it)")
        argv = [exe, "--headless", "--disable-gpu", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions",
                "--disable-background-networking", "--mute-audio",
                "--hide-scrollbars", "--window-size=%d,%d" % (width, height),
                "--remote-debugging-port=0", "--remote-allow-origins=*",
                "--user-data-dir=" + os.path.join(self.dir, "profile"),
                url]
        if os.geteuid() == 0:
            argv.insert(1, "--no-sandbox")  # chromium refuses root else
        out = open(log or os.path.join(self.dir, "chromium.log"), "ab")
        # a group of its own: close() kills it and every child
        self.proc = subprocess.Popen(argv, stdout=out, stderr=out,
                                     stdin=subprocess.DEVNULL,
                                     start_new_session=True)
        out.close()
        self.ws = None
        self.next_id = 0
        try:
            self._attach()
        except Exception:
            self.close()
            raise

    def _attach(self, timeout=30.0):
        portfile = os.path.join(self.dir, "profile", "DevToolsActivePort")
        end = time.monotonic() + timeout
        target = None
        while time.monotonic() < end and target is None:
            if self.proc.poll() is not None:
                raise RuntimeError("chromium exited %d (see %s)" %
                                   (self.proc.returncode, self.dir))
            try:
                with open(portfile) as f:
                    port = int(f.readline())
                with urllib.request.urlopen("http://127.0.0.1:%d/json/list"
                                            % port, timeout=5) as r:
                    pages = [t for t in json.load(r)
                             if t.get("type") == "page"]
                if pages:
                    target = pages[0]["webSocketDebuggerUrl"]
            except (OSError, ValueError):
                pass
            if target is None:
                time.sleep(0.1)
        if target is None:
            raise RuntimeError("chromium's DevTools did not come up")
        self.ws = WebSocket(target)

    def call(self, method, **params):
        """One DevTools command; its result (events in between dropped)."""
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method,
                                 "params": params}))
        while True:
            m = json.loads(self.ws.recv())
            if m.get("id") == self.next_id:
                if "error" in m:
                    raise RuntimeError("%s: %s" % (method, m["error"]))
                return m.get("result", {})

    def eval(self, expr):
        r = self.call("Runtime.evaluate", expression=expr,
                      returnByValue=True)
        if "exceptionDetails" in r:
            raise RuntimeError("%s: %s" % (expr, r["exceptionDetails"]))
        return r.get("result", {}).get("value")

    def screenshot(self, path, selector=None):
        """A PNG of the page, or of the element selector names."""
        params = {"format": "png"}
        if selector:
            box = self.eval("(() => { const r = document.querySelector(%s)"
                            ".getBoundingClientRect(); return [r.x + "
                            "scrollX, r.y + scrollY, r.width, r.height]; })()"
                            % json.dumps(selector))
            params["clip"] = {"x": box[0], "y": box[1], "width": box[2],
                              "height": box[3], "scale": 1}
            params["captureBeyondViewport"] = True
        data = self.call("Page.captureScreenshot", **params)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))

    def close(self):
        if self.ws:
            try:
                self.ws.close()
            except OSError:
                pass
        # the group even if chromium itself is gone: its children stay
        try:
            os.killpg(self.proc.pid, signal.SIGKILL)
        except ProcessLookupError:
            pass
        self.proc.wait()
