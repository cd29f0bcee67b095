#!/usr/bin/env python3
"""The benchmarks' delaying forwarder (tools/bench/delay.c, built alone as
planctl-delay): bytes pass unchanged and in order, both ways, on several
connections at once, to a Unix socket and to a TCP address; an end of
stream is passed on; and each direction is late by at least the delay
asked.  Only the lower bound is checked (a loaded machine can make it
later, never earlier), so the test does not depend on timing to pass.

usage: test_delay.py PATH_TO_PLANCTL_DELAY
"""
import os
import random
import socket
import subprocess
import sys
import tempfile
import threading
import time

TIMEOUT = 120  # seconds a socket may wait before the test fails


class Echo:
    """A server that sends back what it reads and ends when its client
    ends; records when each connection's first byte came."""

    def __init__(self, family, addr):
        self.sock = socket.socket(family, socket.SOCK_STREAM)
        self.sock.bind(addr)
        self.sock.listen(16)
        self.addr = self.sock.getsockname()
        self.first = []  # monotonic time of each connection's first byte
        self.lock = threading.Lock()
        threading.Thread(target=self.serve, daemon=True).start()

    def serve(self):
        while True:
            c, _ = self.sock.accept()
            threading.Thread(target=self.echo, args=(c,), daemon=True).start()

    def echo(self, c):
        c.settimeout(TIMEOUT)
        seen = False
        while True:
            b = c.recv(65536)
            if not seen and b:
                with self.lock:
                    self.first.append(time.monotonic())
                seen = True
            if not b:
                break
            c.sendall(b)
        c.shutdown(socket.SHUT_WR)
        c.close()


def start_forwarder(binary, to, delay_us):
    p = subprocess.Popen([binary, "--to", to, "--delay-us", str(delay_us)],
                         stdout=subprocess.PIPE, text=True)
    line = p.stdout.readline().strip()
    if not line.startswith("listening on 127.0.0.1:"):
        p.kill()
        sys.exit("forwarder did not start: %r" % line)
    return p, int(line.rsplit(":", 1)[1])


def connect(port):
    c = socket.create_connection(("127.0.0.1", port), timeout=TIMEOUT)
    c.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    return c


def check_delay(port, echo, delay_s, times=3):
    """One byte out and back: late by the delay each way."""
    for _ in range(times):
        with echo.lock:
            n = len(echo.first)
        c = connect(port)
        t0 = time.monotonic()
        c.sendall(b"x")
        got = c.recv(1)
        t1 = time.monotonic()
        if got != b"x":
            sys.exit("ping: got %r back" % got)
        with echo.lock:
            t_srv = echo.first[n]
        out, back = t_srv - t0, t1 - t_srv
        print("delay %.1f ms: out %.2f ms, back %.2f ms" %
              (delay_s * 1e3, out * 1e3, back * 1e3))
        if out < delay_s or back < delay_s:
            sys.exit("a byte was held less than %.1f ms (out %.3f, back "
                     "%.3f ms)" % (delay_s * 1e3, out * 1e3, back * 1e3))
        c.close()


def check_bytes(port, conns, size):
    """conns connections at once, each size random bytes sent in pieces
    of random sizes and read back whole, then the end of stream."""
    rng = random.Random(34)
    errors = []

    def one(k):
        data = os.urandom(size)
        c = connect(port)
        got = []

        def reader():
            while True:
                b = c.recv(65536)
                if not b:
                    break
                got.append(b)

        t = threading.Thread(target=reader)
        t.start()
        off = 0
        while off < size:
            n = rng.randint(1, 100000)
            c.sendall(data[off:off + n])
            off += n
        c.shutdown(socket.SHUT_WR)
        t.join(TIMEOUT)
        c.close()
        back = b"".join(got)
        if t.is_alive() or back != data:
            errors.append("connection %d: %d bytes back of %d, equal: %s" %
                          (k, len(back), size, back == data[:len(back)]))

    ts = [threading.Thread(target=one, args=(k,)) for k in range(conns)]
    for t in ts:
        t.start()
    for t in ts:
        t.join()
    if errors:
        sys.exit("bytes changed: " + "; ".join(errors))
    print("%d connections x %d bytes: back unchanged, in order" %
          (conns, size))


def main():
    binary = sys.argv[1]
    with tempfile.TemporaryDirectory(prefix="planctl-delay.") as d:
        unix_echo = Echo(socket.AF_UNIX, os.path.join(d, "echo.sock"))
        tcp_echo = Echo(socket.AF_INET, ("127.0.0.1", 0))
        procs = []
        try:
            # To a Unix socket (as to the suite's PostgreSQL): 20 ms each way.
            p, port = start_forwarder(binary, unix_echo.addr, 20000)
            procs.append(p)
            check_delay(port, unix_echo, 0.020)
            check_bytes(port, 3, 3 << 20)
            # To a TCP address: 5 ms each way.
            p, port = start_forwarder(
                binary, "127.0.0.1:%d" % tcp_echo.addr[1], 5000)
            procs.append(p)
            check_delay(port, tcp_echo, 0.005)
            check_bytes(port, 2, 1 << 20)
            # No delay: still every byte, in order.
            p, port = start_forwarder(binary, unix_echo.addr, 0)
            procs.append(p)
            check_bytes(port, 4, 1 << 20)
            for p in procs:
                if p.poll() is not None:
                    sys.exit("the forwarder exited (%d)" % p.returncode)
        finally:
            for p in procs:
                p.kill()
                p.wait()
    print("ok")


if __name__ == "__main__":
    main()
