"""A small Chrome DevTools Protocol client over --remote-debugging-pipe.

Python 3 standard library only: the project's dependencies are fixed, so
no puppeteer, playwright or websocket package.  The pipe transport needs
none of them: Chromium reads commands from its fd 3 and writes replies
and events to its fd 4, each message one JSON text followed by a NUL byte.

One Browser owns one Chromium process and a fresh profile directory,
both removed by close() (also registered with atexit, so an exception or
a failed assertion in a test never leaves a browser behind).  Pages are
flattened sessions (Target.attachToTarget with flatten: true): every
message of a page carries its sessionId on the one pipe.

Every wait has a timeout and raises CDPTimeout naming what it waited for.
Each Page records its "problems": console errors, uncaught exceptions,
error entries of the browser's log (CSP violations, failed loads) and any
JavaScript dialog.  A dialog is always a failure in these tests (a hostile
string such as <img onerror=alert(1)> must never run); it is dismissed at
once so that the page does not hang.
"""

import atexit
import base64
import fcntl
import itertools
import json
import os
import shutil
import subprocess
import tempfile
import threading
import time

CHROMIUM = "/usr/bin/chromium"

# The flags the test machines need: --no-sandbox as we run as root; the
# background-networking, component-update and sync flags because the
# closed network here makes Chromium stall on them otherwise.
CHROMIUM_FLAGS = [
    "--headless", "--no-sandbox", "--disable-gpu", "--disable-quic",
    "--no-first-run", "--disable-background-networking",
    "--disable-component-update", "--disable-sync", "--disable-extensions",
    "--remote-debugging-pipe",
]

DEFAULT_TIMEOUT = 10.0


class CDPError(Exception):
    """A command answered with an error, or the browser went away."""


class CDPTimeout(CDPError):
    """A wait ran out of time; the message says what was awaited."""


def _high_fd(fd):
    """Move fd to a number >= 10 (close-on-exec), closing the original.

    The launcher moves our pipe ends to fds 3 and 4 of Chromium with shell
    redirections; if an end were itself 3 or 4 the redirections could
    overwrite each other, so keep both well above."""
    high = fcntl.fcntl(fd, fcntl.F_DUPFD_CLOEXEC, 10)
    os.close(fd)
    return high


class Browser:
    """One headless Chromium driven over the pipe."""

    def __init__(self, executable=CHROMIUM, extra_flags=(), start_timeout=30.0):
        self._ids = itertools.count(1)
        self._lock = threading.Condition()
        self._write_lock = threading.Lock()
        self._replies = {}          # id -> message, until send() takes it
        self._events = []           # every event, in arrival order
        self._listeners = []        # callables(event) run on the reader thread
        self._dead = None           # why the pipe closed, once it has
        self._closed = False
        self.profile = tempfile.mkdtemp(prefix="planctl-chromium-")
        self.stderr_path = os.path.join(self.profile, "chromium.stderr")

        # to_chrome: we write, Chromium reads (its fd 3);
        # from_chrome: Chromium writes (its fd 4), we read.
        to_r, to_w = (_high_fd(fd) for fd in os.pipe())
        from_r, from_w = (_high_fd(fd) for fd in os.pipe())
        argv = [executable, *CHROMIUM_FLAGS, *extra_flags,
                "--user-data-dir=" + os.path.join(self.profile, "profile"),
                "about:blank"]
        # pass_fds keeps the two child ends open across exec; bash puts them
        # at 3 and 4 and closes the originals before exec'ing (bash, not
        # sh: dash takes only one-digit fd numbers in redirections).
        script = f'exec "$@" 3<&{to_r} 4>&{from_w} {to_r}<&- {from_w}>&-'
        self._stderr = open(self.stderr_path, "wb")
        self.proc = subprocess.Popen(
            ["/bin/bash", "-c", script, "bash", *argv],
            stdin=subprocess.DEVNULL, stdout=self._stderr, stderr=self._stderr,
            pass_fds=(to_r, from_w), start_new_session=True)
        os.close(to_r)
        os.close(from_w)
        self._wfd = to_w
        self._rfd = from_r
        atexit.register(self.close)
        self._reader = threading.Thread(target=self._read_loop, daemon=True)
        self._reader.start()
        # The first command answers once the browser is up.
        self.send("Browser.getVersion", timeout=start_timeout)

    # -- transport ---------------------------------------------------------

    def _read_loop(self):
        buf = b""
        try:
            while True:
                chunk = os.read(self._rfd, 1 << 16)
                if not chunk:
                    break
                buf += chunk
                while b"\0" in buf:
                    raw, buf = buf.split(b"\0", 1)
                    self._dispatch(json.loads(raw))
        except OSError as e:
            reason = f"reading the pipe failed: {e}"
        else:
            reason = "Chromium closed its pipe (exited or crashed)"
        try:
            with open(self.stderr_path, "rb") as f:
                tail = f.read()[-2000:].decode(errors="replace").strip()
        except OSError:
            tail = ""
        if tail:
            reason += "; its stderr ends: " + tail
        with self._lock:
            self._dead = reason
            self._lock.notify_all()

    def _dispatch(self, msg):
        if "id" in msg:
            with self._lock:
                self._replies[msg["id"]] = msg
                self._lock.notify_all()
            return
        for listener in list(self._listeners):
            listener(msg)
        with self._lock:
            self._events.append(msg)
            self._lock.notify_all()

    def _write(self, msg):
        data = json.dumps(msg).encode() + b"\0"
        with self._write_lock:
            view = memoryview(data)
            while view:
                n = os.write(self._wfd, view)
                view = view[n:]

    def send_nowait(self, method, params=None, session_id=None):
        """Send a command without waiting for its answer (safe from the
        reader thread, which must never block on a reply it would read)."""
        msg = {"id": next(self._ids), "method": method, "params": params or {}}
        if session_id:
            msg["sessionId"] = session_id
        self._write(msg)
        return msg["id"]

    def send(self, method, params=None, session_id=None, timeout=DEFAULT_TIMEOUT):
        """Send a command and return its result; CDPError on an error."""
        if self._dead:
            raise CDPError(f"{method}: {self._dead}")
        mid = self.send_nowait(method, params, session_id)
        deadline = time.monotonic() + timeout
        with self._lock:
            while mid not in self._replies:
                if self._dead:
                    raise CDPError(f"{method}: {self._dead}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise CDPTimeout(f"{method}: no answer within {timeout:.1f}s")
                self._lock.wait(left)
            reply = self._replies.pop(mid)
        if "error" in reply:
            raise CDPError(f"{method}: {reply['error'].get('message')} "
                           f"({reply['error'].get('data', '')})")
        return reply.get("result", {})

    def event_mark(self):
        """A position in the event log: wait_event(after=mark) only sees
        events that arrived later (take it BEFORE the command that causes
        them, so that a fast event is not missed)."""
        with self._lock:
            return len(self._events)

    def wait_event(self, method, session_id=None, after=0, predicate=None,
                   timeout=DEFAULT_TIMEOUT, what=None):
        """The first event METHOD (of session_id) after mark AFTER that
        satisfies predicate(params)."""
        deadline = time.monotonic() + timeout
        i = after
        with self._lock:
            while True:
                while i < len(self._events):
                    ev = self._events[i]
                    i += 1
                    if ev.get("method") != method:
                        continue
                    if session_id and ev.get("sessionId") != session_id:
                        continue
                    if predicate and not predicate(ev.get("params", {})):
                        continue
                    return ev.get("params", {})
                if self._dead:
                    raise CDPError(f"waiting for {what or method}: {self._dead}")
                left = deadline - time.monotonic()
                if left <= 0:
                    raise CDPTimeout(f"timed out after {timeout:.1f}s waiting for "
                                     f"{what or method}")
                self._lock.wait(left)

    # -- pages ---------------------------------------------------------------

    def new_page(self, width=1280, height=800, isolated=True, mobile=False):
        """Open a blank page of the given viewport.  isolated: in a browser
        context of its own, so cookies (the token's) do not leak between
        pages of different tests."""
        params = {"url": "about:blank"}
        if isolated:
            ctx = self.send("Target.createBrowserContext", {"disposeOnDetach": True})
            params["browserContextId"] = ctx["browserContextId"]
        target_id = self.send("Target.createTarget", params)["targetId"]
        session_id = self.send("Target.attachToTarget",
                               {"targetId": target_id, "flatten": True})["sessionId"]
        page = Page(self, target_id, session_id)
        page._setup(width, height, mobile)
        return page

    def close(self):
        """Kill Chromium and remove its profile; idempotent."""
        if self._closed:
            return
        self._closed = True
        try:
            if self.proc.poll() is None and not self._dead:
                try:
                    self.send("Browser.close", timeout=3)
                except CDPError:
                    pass
            try:
                self.proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                pass
        finally:
            # The whole process group: the renderer and GPU helpers too.
            if self.proc.poll() is None:
                try:
                    os.killpg(self.proc.pid, 9)
                except ProcessLookupError:
                    pass
                self.proc.wait()
            else:
                try:
                    os.killpg(self.proc.pid, 9)   # stragglers of the group
                except (ProcessLookupError, PermissionError):
                    pass
            for fd in (self._wfd, self._rfd):
                try:
                    os.close(fd)
                except OSError:
                    pass
            self._stderr.close()
            shutil.rmtree(self.profile, ignore_errors=True)


# Installed in every document before its own scripts: records CSP
# violations the page sees (belt and braces with the browser's log) and
# gives each document an identity, so a test can tell a reload apart.
_INIT_SCRIPT = r"""
(() => {
  window.__cdpViolations = [];
  document.addEventListener('securitypolicyviolation', (e) => {
    window.__cdpViolations.push(e.violatedDirective + ' blocked ' +
                                (e.blockedURI || '(inline)'));
  });
})();
"""


class Page:
    """One tab, attached as a flattened session."""

    def __init__(self, browser, target_id, session_id):
        self.browser = browser
        self.target_id = target_id
        self.session_id = session_id
        self.problems = []          # strings: each a console error etc.
        self.dialogs = []           # messages of the dialogs that opened
        self.last_status = None     # HTTP status of the last navigation
        self.url = "about:blank"    # the document's, named in each problem
        browser._listeners.append(self._on_event)

    def _setup(self, width, height, mobile):
        for domain in ("Page.enable", "Runtime.enable", "Log.enable",
                       "Network.enable"):
            self.send(domain)
        self.send("Page.setLifecycleEventsEnabled", {"enabled": True})
        self.send("Page.addScriptToEvaluateOnNewDocument", {"source": _INIT_SCRIPT})
        self.set_size(width, height, mobile)

    def send(self, method, params=None, timeout=DEFAULT_TIMEOUT):
        return self.browser.send(method, params, self.session_id, timeout)

    def set_size(self, width, height, mobile=False):
        self.send("Emulation.setDeviceMetricsOverride",
                  {"width": width, "height": height, "deviceScaleFactor": 1,
                   "mobile": mobile})

    # -- what went wrong -------------------------------------------------------

    def _on_event(self, ev):
        """Runs on the reader thread: record problems, dismiss dialogs."""
        if ev.get("sessionId") != self.session_id:
            return
        method, p = ev.get("method"), ev.get("params", {})
        problem = None
        if method == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
            text = " ".join(str(a.get("value", a.get("description", "")))
                            for a in p.get("args", []))
            problem = f"console.{p['type']}: {text}"
        elif method == "Runtime.exceptionThrown":
            d = p.get("exceptionDetails", {})
            desc = d.get("exception", {}).get("description") or d.get("text")
            problem = (f"uncaught exception: {desc} at "
                       f"{d.get('url', '?')}:{d.get('lineNumber', '?')}")
        elif method == "Log.entryAdded" and p.get("entry", {}).get("level") == "error":
            e = p["entry"]
            problem = f"log error ({e.get('source')}): {e.get('text')} {e.get('url', '')}".rstrip()
        elif method == "Page.javascriptDialogOpening":
            self.dialogs.append(p.get("message", ""))
            problem = f"a {p.get('type')} dialog opened: {p.get('message', '')!r}"
            # Never from here with send(): this thread reads the answers.
            self.browser.send_nowait("Page.handleJavaScriptDialog",
                                     {"accept": False}, self.session_id)
        elif method == "Network.responseReceived" and p.get("type") == "Document":
            self.last_status = p.get("response", {}).get("status")
        elif method == "Page.frameNavigated" and not p.get("frame", {}).get("parentId"):
            self.url = p["frame"].get("url", "?")
        if problem:
            self.problems.append(f"on {self.url}: {problem}")

    def take_problems(self):
        """The problems recorded so far, and those the document itself saw
        (CSP violations), clearing both."""
        problems, self.problems = self.problems, []
        try:
            seen = self.evaluate("(() => { const v = window.__cdpViolations || [];"
                                 " window.__cdpViolations = []; return v; })()")
        except CDPError:
            seen = []
        problems.extend(f"on {self.url}: CSP violation seen by the page: {v}" for v in seen)
        return problems

    # -- navigation and scripts ------------------------------------------------

    def add_init_script(self, source):
        """Run SOURCE in every new document of this page, before its scripts."""
        return self.send("Page.addScriptToEvaluateOnNewDocument", {"source": source})

    def navigate(self, url, timeout=DEFAULT_TIMEOUT):
        """Load URL and wait for its load event; returns the HTTP status."""
        mark = self.browser.event_mark()
        self.last_status = None
        try:
            res = self.send("Page.navigate", {"url": url}, timeout=timeout)
        except CDPTimeout:
            raise CDPTimeout(f"navigating to {url}: no response within {timeout:.1f}s")
        if res.get("errorText"):
            raise CDPError(f"navigating to {url}: {res['errorText']}")
        self.browser.wait_event("Page.loadEventFired", self.session_id, after=mark,
                                timeout=timeout, what=f"the load event of {url}")
        return self.last_status

    def wait_load(self, mark, timeout=DEFAULT_TIMEOUT, what="a page load"):
        """Wait for a load event after MARK (browser.event_mark()), as after
        a click that submits a form."""
        self.browser.wait_event("Page.loadEventFired", self.session_id, after=mark,
                                timeout=timeout, what=what)
        return self.last_status

    def evaluate(self, expression, await_promise=True, timeout=DEFAULT_TIMEOUT):
        """The value of a JS expression (a promise is awaited); CDPError
        with the exception's text when it throws."""
        res = self.send("Runtime.evaluate",
                        {"expression": expression, "returnByValue": True,
                         "awaitPromise": await_promise, "userGesture": True},
                        timeout=timeout)
        if "exceptionDetails" in res:
            d = res["exceptionDetails"]
            desc = d.get("exception", {}).get("description") or d.get("text")
            raise CDPError(f"evaluating {expression[:80]!r}: {desc}")
        return res.get("result", {}).get("value")

    def wait_for(self, predicate_js, timeout=DEFAULT_TIMEOUT, what=None,
                 interval=0.05):
        """Poll a JS expression until it is truthy; returns its value.  An
        expression that throws counts as false (the page may be between
        documents), but the last error is named on timeout."""
        deadline = time.monotonic() + timeout
        last_err = None
        while True:
            try:
                value = self.evaluate(predicate_js, timeout=max(1.0, timeout))
                if value:
                    return value
            except CDPTimeout:
                raise
            except CDPError as e:
                last_err = e
            if time.monotonic() >= deadline:
                extra = f" (last error: {last_err})" if last_err else ""
                raise CDPTimeout(f"timed out after {timeout:.1f}s waiting for "
                                 f"{what or predicate_js}{extra}")
            time.sleep(interval)

    # -- input -------------------------------------------------------------------

    def click(self, selector):
        """Click the element's centre with real mouse events (a trusted
        click, as a user's: default actions such as submitting run)."""
        box = self.evaluate(
            "(() => { const e = document.querySelector(%s); if (!e) return null;"
            " e.scrollIntoView({block: 'center'});"
            " const r = e.getBoundingClientRect();"
            " return [r.left + r.width / 2, r.top + r.height / 2]; })()"
            % json.dumps(selector))
        if box is None:
            raise CDPError(f"click: no element matches {selector!r}")
        x, y = box
        for kind in ("mouseMoved", "mousePressed", "mouseReleased"):
            params = {"type": kind, "x": x, "y": y}
            if kind != "mouseMoved":
                params.update(button="left", clickCount=1)
            self.send("Input.dispatchMouseEvent", params)

    def js_click(self, selector):
        """element.click() from script: no coordinates needed."""
        ok = self.evaluate("(() => { const e = document.querySelector(%s);"
                           " if (!e) return false; e.click(); return true; })()"
                           % json.dumps(selector))
        if not ok:
            raise CDPError(f"js_click: no element matches {selector!r}")

    def type_text(self, selector, text):
        """Focus the element and insert TEXT as typed input."""
        ok = self.evaluate("(() => { const e = document.querySelector(%s);"
                           " if (!e) return false; e.focus(); return true; })()"
                           % json.dumps(selector))
        if not ok:
            raise CDPError(f"type_text: no element matches {selector!r}")
        self.send("Input.insertText", {"text": text})

    def screenshot(self, path, full_page=False):
        """Write a PNG of the viewport (or the whole page) to PATH."""
        params = {"format": "png"}
        if full_page:
            params["captureBeyondViewport"] = True
        data = self.send("Page.captureScreenshot", params, timeout=30)["data"]
        with open(path, "wb") as f:
            f.write(base64.b64decode(data))
        return path

    def close(self):
        try:
            self.browser.send("Target.closeTarget", {"targetId": self.target_id})
        except CDPError:
            pass
        if self._on_event in self.browser._listeners:
            self.browser._listeners.remove(self._on_event)
