#!/usr/bin/env python3
"""Web clients that try to stall the server, beside a running engine: the
real binary over real sockets, on a real SQLite file (or, with
PLANCTL_TEST_BACKEND=postgres, a schema of the suite's cluster).

Each scenario is played twice: against `planctl run --ui` (the page on the
engine's own loop) and against `planctl serve` beside a `planctl run`.
While the attackers below hold their connections, the engine runs a plan
of short steps whose timeout trips only if the loop stalls for seconds,
and new clients ask for pages:

  - pipeliners: clients that send request after request on one
    connection and never read an answer;
  - streams: more live pages (/stream) than the server has connections,
    from many loopback addresses, none of them reading, and more from one
    address than it allows;
  - a slow client: one header byte a second, never a whole request.

What must hold: every step of the plan ends DONE (no timeout: the loop
never waited on the attackers), each new client is answered (200) within
a generous bound, the server's memory (VmRSS from /proc) stays far below
what queued answers and updates would take, the streams of one address
are capped, and the slow client is dropped about 10 s after it began.

Exit 0 when every check passed, 1 otherwise, 77 when PostgreSQL is asked
for and no cluster runs (unless CI=true).
"""
import json
import os
import re
import resource
import socket
import subprocess
import sys
import threading
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import test_http  # noqa: E402
from test_http import BIN, Env, check  # noqa: E402

STEPS = 12           # serial steps of the engine's plan
STEP_TIMEOUT = "5s"  # trips when the loop stalls this long
ANSWER_BOUND = 5.0   # seconds a new client may wait for a page
RSS_BOUND = 200 << 20  # bytes the server may grow by under attack
PIPELINERS = 4
STREAM_ADDRS = 36    # loopback addresses 127.0.0.2 ... opening streams
STREAMS_PER_ADDR = 32
ONE_ADDR = 40        # streams tried from 127.0.1.1 alone
PER_ADDR_CAP = 32    # src/serve/limits.h SERVE_PAGE_STREAMS_PER_PEER


def rss(pid):
    try:
        with open("/proc/%d/status" % pid) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1]) * 1024
    except OSError:
        pass
    return 0


def setup(env):
    d = {
        "name": "abuse", "version": "1",
        "parameters": [{"name": "NOTE"}],
        "tasks": [{"name": "quick", "kind": "shell",
                   "spec": {"command": "sleep 0.2; echo step of $PLANCTL_INSTANCE"}},
                  {"name": "nothing", "kind": "Dummy"}],
        "plans": {"deploy": {"phases": [{"name": "d", "steps": [{"name": "d", "tasks": ["nothing"]}]}]}, "steady": {"phases": [{"name": "p", "steps": [
            {"name": "s%02d" % i, "tasks": ["quick"], "timeout": STEP_TIMEOUT,
             "retry": {"attempts": 1}} for i in range(STEPS)]}]}}}
    with open(os.path.join(env.dir, "abuse.json"), "w") as f:
        json.dump(d, f)
    env.cli("apply", "-f", "abuse.json")
    # A page worth rendering: an instance with a long note in its params.
    env.cli("create", "app", "--definition", "abuse", "-p", "NOTE=" + "n" * 2000)
    for i in range(40):
        env.cli("create", "other-%02d" % i, "--definition", "abuse")
    env.cli("run", "--until-idle")


def start(env, mode):
    """Starts the server (and the engine); returns (port, server pid)."""
    if mode == "ui":
        args = [BIN, "--db", env.db, "run", "--ui", "127.0.0.1:0"]
    else:
        engine = subprocess.Popen([BIN, "--db", env.db, "run"], cwd=env.dir,
                                  stderr=subprocess.DEVNULL)
        env.procs.append(engine)
        args = [BIN, "--db", env.db, "serve", "--listen", "127.0.0.1:0"]
    p = subprocess.Popen(args, cwd=env.dir, stderr=subprocess.PIPE, text=True)
    env.procs.append(p)
    deadline = time.time() + 30
    while time.time() < deadline:
        line = p.stderr.readline()
        if not line:
            break
        m = re.search(r"serving http://127\.0\.0\.1:(\d+)/", line)
        if m:
            threading.Thread(target=p.stderr.read, daemon=True).start()
            return int(m.group(1)), p.pid
    raise RuntimeError("%s did not say where it serves" % mode)


def stop(env):
    for p in env.procs:
        p.terminate()
        try:
            p.wait(timeout=20)
        except subprocess.TimeoutExpired:
            p.kill()
            p.wait()
    env.procs = []


class Attack:
    """The attackers' sockets, held until close()."""

    def __init__(self, port):
        self.port = port
        self.socks = []
        self.stop = threading.Event()
        self.threads = []
        self.slow_closed = None  # seconds after its start the server hung up
        self.one_addr_ok = 0
        self.settled = threading.Event()

    def connect(self, src="127.0.0.1"):
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.SOL_SOCKET, socket.SO_RCVBUF, 4096)
        s.bind((src, 0))
        s.settimeout(10)
        s.connect(("127.0.0.1", self.port))
        self.socks.append(s)
        return s

    def pipeliner(self, path):
        one = b"GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (
            path.encode(), self.port)
        burst = one * (65536 // len(one))
        s = self.connect()
        s.settimeout(1)
        sent = 0
        while not self.stop.is_set() and sent < (64 << 20):
            try:
                sent += s.send(burst)
            except socket.timeout:
                continue  # the server reads no more: it is held back
            except OSError:
                return

    def slow(self):
        s = self.connect()
        s.settimeout(1)
        t0 = time.time()
        data = b"GET / HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n" % self.port
        data += b"X-Slow: " + b"a" * 100
        for ch in data:
            if self.stop.is_set():
                return
            try:
                s.send(bytes([ch]))
                got = s.recv(4096)
                if got == b"":
                    self.slow_closed = time.time() - t0
                    return
            except socket.timeout:
                pass
            except OSError:
                self.slow_closed = time.time() - t0
                return

    def streams(self):
        path = b"/stream?path=%2Finstances%2Fapp"
        req = b"GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n\r\n" % (path, self.port)
        # From one address more than it may open: the answers are read.
        ok = 0
        for _ in range(ONE_ADDR):
            try:
                s = self.connect("127.0.1.1")
                s.sendall(req)
                head = b""
                while b"\r\n\r\n" not in head:
                    b = s.recv(4096)
                    if not b:
                        break
                    head += b
                if head.startswith(b"HTTP/1.1 200"):
                    ok += 1
            except OSError:
                pass
        self.one_addr_ok = ok
        many = []
        for a in range(STREAM_ADDRS):
            for _ in range(STREAMS_PER_ADDR):
                if self.stop.is_set():
                    return
                try:
                    s = self.connect("127.0.%d.%d" % (a // 200, 2 + a % 200))
                    s.sendall(req)
                    many.append(s)
                except OSError:
                    pass
        # Each stream's answer begun (200 or 503), then never read again:
        # the server's connections are as they will stay.
        deadline = time.time() + 60
        for s in many:
            head = b""
            while b"\r\n\r\n" not in head and time.time() < deadline:
                try:
                    b = s.recv(4096)
                except socket.timeout:
                    continue
                except OSError:
                    break
                if not b:
                    break
                head += b
        self.settled.set()
        # Now that the server's places are taken as they will stay (a new
        # client takes the place of the one slowest to send its request).
        self.slow()

    def begin(self):
        self.threads = [threading.Thread(target=self.streams, daemon=True)]
        for i in range(PIPELINERS):
            path = "/instances/app" if i % 2 else "/"
            self.threads.append(threading.Thread(target=self.pipeliner,
                                                 args=(path,), daemon=True))
        for t in self.threads:
            t.start()

    def close(self):
        self.stop.set()
        for t in self.threads:
            t.join(timeout=30)
        for s in self.socks:
            try:
                s.close()
            except OSError:
                pass


def timed_get(port, path):
    """(status, seconds) of one GET on a fresh connection; status 0 when
    nothing whole came within 20 s."""
    t0 = time.time()
    try:
        data = test_http.raw(port, b"GET %s HTTP/1.1\r\nHost: 127.0.0.1:%d\r\n"
                             b"Connection: close\r\n\r\n" % (path.encode(), port),
                             timeout=20)
        st = test_http.parse(data)[0][0] if data else 0
    except (OSError, ValueError, IndexError):
        st = 0
    return st, time.time() - t0


def scenario(env, mode):
    port, pid = start(env, mode)
    base = rss(pid)
    attack = Attack(port)
    attack.begin()
    attack.settled.wait(120)
    env.cli("trigger", "app", "steady", "--queue", "--reason",
            "under attack (%s)" % mode)
    worst, statuses, peak = 0.0, [], base
    deadline = time.time() + 120
    done = None
    while time.time() < deadline:
        for path in ["/", "/instances/app", "/engines"]:
            st, took = timed_get(port, path)
            statuses.append(st)
            worst = max(worst, took)
        peak = max(peak, rss(pid))
        if peak - base > 2 * RSS_BOUND or worst > 4 * ANSWER_BOUND:
            break  # the attack is won: stop before the machine suffers
        text = env.cli("history", "app", "-o", "json").stdout
        runs = [r for r in json.loads(text).get("runs", [])
                if r.get("reason") == "under attack (%s)" % mode]
        if runs and runs[0].get("status") in ("COMPLETE", "FATAL_ERROR",
                                                "CANCELLED"):
            done = runs[0]
            break
        time.sleep(0.5)
    # The slow client is dropped about 10 s after it began.
    t_wait = time.time() + 40
    while attack.slow_closed is None and time.time() < t_wait:
        time.sleep(0.5)
    attack.close()
    tag = "[%s] " % mode
    check(done is not None and done.get("status") == "COMPLETE",
          tag + "the plan's steps end in time beside the attackers (run: %r)"
          % (done and {k: done.get(k) for k in ("status", "message")}))
    check(statuses and all(s == 200 for s in statuses),
          tag + "every new client is answered 200: %r" % sorted(set(statuses)))
    check(worst < ANSWER_BOUND,
          tag + "a new client waits %.1f s at worst (bound %.0f s)" % (
              worst, ANSWER_BOUND))
    check(peak - base < RSS_BOUND,
          tag + "the server grows by %d MB under attack (bound %d MB)" % (
              (peak - base) >> 20, RSS_BOUND >> 20))
    check(attack.slow_closed is not None and attack.slow_closed >= 5,
          tag + "a client dripping a header byte a second is dropped after "
          "about 10 s (dropped after %r s)" % (
              attack.slow_closed and round(attack.slow_closed, 1)))
    check(attack.one_addr_ok <= PER_ADDR_CAP,
          tag + "one address opens at most %d streams (%d opened)" % (
              PER_ADDR_CAP, attack.one_addr_ok))
    st, _ = timed_get(port, "/")
    check(st == 200, tag + "the server answers after the attack (%d)" % st)
    stop(env)


def main():
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    need = STREAM_ADDRS * STREAMS_PER_ADDR + ONE_ADDR + 256
    if soft < need:
        resource.setrlimit(resource.RLIMIT_NOFILE, (min(hard, 4 * need), hard))
    env = Env()
    try:
        setup(env)
        scenario(env, "ui")
        scenario(env, "serve")
    finally:
        stop(env)
        env.close()
    if test_http.FAILURES:
        print("%d check(s) failed" % len(test_http.FAILURES))
        return 1
    print("all checks passed")
    return 0


if __name__ == "__main__":
    sys.exit(main())
