#!/usr/bin/env python3
"""Browser tests of `planctl serve`: real pages in headless Chromium.

The suite builds its own world with the real CLI (PLANCTL_BIN): a temp
directory, a SQLite database, the definition tests/web/webtest.json, a few
instances, a real engine (`planctl run`) in the background and servers
(`planctl serve --listen 127.0.0.1:0`).  It drives Chromium through the
DevTools protocol (cdp.py, standard library only) and checks the pages
against the contract of the server (what the pages carry, their ids and
data- attributes) and against what the CLI itself says (-o json): no
result is written down here, each is read from the CLI at the time.

Usage: PLANCTL_BIN=build/planctl python3 tests/web/test_browser.py [CASE...]
  CASE: run only the cases whose name contains it.
Exit 0 when every case passed, 1 when any failed (each failure printed),
77 (skip) when /usr/bin/chromium is missing and CI is not "true".
Screenshots go to PLANCTL_WEB_ARTIFACTS (default: web-artifacts next to
the temp directory), and stay.
"""

import atexit
import datetime
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import sys
import tempfile
import time
import traceback
import urllib.parse
from http.client import HTTPResponse

HERE = os.path.dirname(os.path.abspath(__file__))
sys.dont_write_bytecode = True   # no __pycache__ in the source tree
sys.path.insert(0, HERE)
import cdp  # noqa: E402  (after the path is set)

DEFINITION = os.path.join(os.environ.get("PLANCTL_SOURCE_DIR") or os.path.dirname(os.path.dirname(HERE)),
                          "tests", "web", "webtest.json")

# The documented bound: a step's completion shows on an open page "within
# a second" of its commit.  Measured from the step's finished_at (set by
# the engine as it commits) to the moment a MutationObserver in the page
# sees the new status; 1.5 s is allowed rather than 1.0 s, the slack a
# loaded 2-core CI machine needs (the engine, the server and Chromium's
# renderer share the two cores).
LIVE_BOUND = 1.5
# The polling fallback is held to the same bound ("~1.5 s").
POLL_BOUND = 1.5

# Hostile text.  Instance names cannot carry it (the CLI refuses them), so
# a parameter value, a run's reason and a task's output do.  The NOTE
# value stays under 60 characters so that no page has a reason to cut it.
HOSTILE_SCRIPT = "<script>alert(1)</script>"
HOSTILE_IMG = '"><img src=x onerror=alert(1)>'
HOSTILE_NOTE = HOSTILE_SCRIPT + HOSTILE_IMG
HOSTILE_REASON = 'why \u202egnp.exe\u202c ' + HOSTILE_IMG
# What the note task prints besides NOTE (see webtest.json).
BIDI_OUTPUT = "bidi [\u202egnp.exe\u202c]"

CSP = ("default-src 'none'; script-src 'self'; style-src 'self'; "
       "img-src 'self'; connect-src 'self'; form-action 'self'; "
       "frame-ancestors 'none'; base-uri 'none'")


class Failed(Exception):
    """A case gives up: its message is the failure."""


# --------------------------------------------------------------------------
# Processes: every one started is killed at exit, whatever happened.

_PROCS = []


def _kill_all():
    for proc in reversed(_PROCS):
        if proc.poll() is None:
            proc.terminate()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()


atexit.register(_kill_all)
# A SIGTERM (ctest's timeout) must also run the atexit handlers.
signal.signal(signal.SIGTERM, lambda *_: sys.exit(143))


def spawn(argv, log_path, **kw):
    log = open(log_path, "wb")
    proc = subprocess.Popen(argv, stdin=subprocess.DEVNULL, stdout=log,
                            stderr=subprocess.STDOUT if kw.pop("merge", False) else log,
                            **kw)
    log.close()
    _PROCS.append(proc)
    return proc


def stop(proc, timeout=10):
    """SIGTERM, then the exit status (SIGKILL after TIMEOUT)."""
    if proc.poll() is None:
        proc.terminate()
        try:
            proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait()
            return None
    return proc.returncode


# --------------------------------------------------------------------------
# HTTP without a browser: headers, API, forged POSTs.

def http(method, url, headers=None, body=None, timeout=10, split=False):
    """(status, headers, body bytes) of one request on its own connection;
    a redirect is an answer, not followed.  The request goes in one write
    (urllib writes the body after the headers, which the server must
    also take: split=True does that on purpose, see test_actions_readonly)."""
    u = urllib.parse.urlsplit(url)
    hdrs = {"Host": u.netloc, "Connection": "close", **(headers or {})}
    if body is not None:
        hdrs["Content-Length"] = str(len(body))
    path = (u.path or "/") + ("?" + u.query if u.query else "")
    head = (f"{method} {path} HTTP/1.1\r\n" +
            "".join(f"{k}: {v}\r\n" for k, v in hdrs.items()) + "\r\n").encode("latin-1")
    with socket.create_connection((u.hostname, u.port), timeout=timeout) as sock:
        if split and body:
            sock.sendall(head)
            # Long enough for the server to read the headers alone first,
            # as it would from a slow client: this makes the case fail,
            # never pass.
            time.sleep(0.05)
            sock.sendall(body)
        else:
            sock.sendall(head + (body or b""))
        r = HTTPResponse(sock, method=method)
        r.begin()
        return r.status, r.headers, r.read()


def parse_time(s):
    return datetime.datetime.fromisoformat(s.replace("Z", "+00:00")).timestamp()


# --------------------------------------------------------------------------
# The world: database, engine, servers, browser.

class Server:
    def __init__(self, env, name, flags, expect_exit=False):
        self.name = name
        self.log = os.path.join(env.tmp, f"serve-{name}.log")
        self.proc = spawn([env.bin, "--db", env.db, "serve", *flags], self.log)
        self.url = None
        if expect_exit:
            return
        # The one line on stderr names the port "127.0.0.1:0" picked.
        deadline = time.monotonic() + 15
        pat = re.compile(r"^planctl: serving (http://[^ ]+?:(\d+)/) \((read-only|actions allowed)\)$",
                         re.M)
        while True:
            text = open(self.log, errors="replace").read()
            m = pat.search(text)
            if m:
                self.port = int(m.group(2))
                # Always talk to loopback, whatever address it listens on.
                self.url = f"http://127.0.0.1:{self.port}"
                self.mode = m.group(3)
                self.first_line = text.splitlines()[0] if text else ""
                return
            if self.proc.poll() is not None:
                raise Failed(f"planctl serve {' '.join(flags)} exited "
                             f"{self.proc.returncode} before serving; its stderr: {text.strip()!r}")
            if time.monotonic() > deadline:
                raise Failed(f"planctl serve {' '.join(flags)} printed no "
                             f"'planctl: serving http://...' line in 15s; stderr: {text.strip()!r}")
            time.sleep(0.05)

    def stop(self):
        """Stop it; the contract says SIGTERM ends it with status 0."""
        return stop(self.proc)


class Env:
    def __init__(self):
        self.bin = os.environ.get("PLANCTL_BIN")
        if not self.bin or not os.access(self.bin, os.X_OK):
            raise SystemExit(f"PLANCTL_BIN must name the planctl binary (got {self.bin!r})")
        self.bin = os.path.abspath(self.bin)
        self.tmp = tempfile.mkdtemp(prefix="planctl-web-")
        self.db = os.path.join(self.tmp, "planctl.db")
        self.artifacts = os.environ.get("PLANCTL_WEB_ARTIFACTS") or os.path.join(
            os.path.dirname(self.tmp), "web-artifacts")
        os.makedirs(self.artifacts, exist_ok=True)
        self.engine = None
        self.servers = {}
        self.browser = None
        self.favicon_problems = []   # reported once, by the console case

    # -- the CLI ------------------------------------------------------------

    def cli(self, *args, check=True):
        r = subprocess.run([self.bin, "--db", self.db, *args], cwd=self.tmp,
                           capture_output=True, text=True, timeout=60)
        if check and r.returncode != 0:
            raise Failed(f"planctl {' '.join(args)} exited {r.returncode}: {r.stderr.strip()}")
        return r

    def json(self, *args):
        return json.loads(self.cli(*args, "-o", "json").stdout)

    def status(self, name):
        return self.json("status", name)

    def plan_run(self, name, plan):
        for p in self.status(name)["plans"]:
            if p["name"] == plan:
                return p["run"]
        raise Failed(f"planctl status {name}: no plan {plan}")

    def wait_cli(self, predicate, what, timeout=20):
        """Poll the CLI until predicate() is truthy (it returns the value)."""
        deadline = time.monotonic() + timeout
        while True:
            value = predicate()
            if value:
                return value
            if time.monotonic() > deadline:
                raise Failed(f"timed out after {timeout}s waiting for {what}")
            time.sleep(0.05)

    def last_seq(self, name):
        return self.json("events", name)["last_seq"] or 0

    # -- setup ----------------------------------------------------------------

    def setup(self):
        self.cli("apply", "-f", DEFINITION)
        for name in ("alpha", "broken", "live", "poll", "ro"):
            self.cli("create", name, "--definition", "webtest")
        self.cli("create", "hostile", "--definition", "webtest", "-p", "NOTE=" + HOSTILE_NOTE)
        # Queued behind their deploy: a run that fails for good, printing a
        # recognizable line (and, for hostile, the hostile text).
        self.cli("trigger", "broken", "broken", "--queue")
        self.cli("trigger", "hostile", "broken", "--queue", "--reason", HOSTILE_REASON)
        # The README's example, as its main job runs it.
        src = os.environ.get("PLANCTL_SOURCE_DIR") or os.path.join(
            os.path.dirname(os.path.abspath(__file__)), "..", "..")
        self.cli("apply", "-f", os.path.join(src, "tools", "examples", "zookeeper.json"))
        self.cli("create", "zk", "--definition", "zookeeper", "-p", "NODE_COUNT=3")
        self.cli("trigger", "zk", "backup", "--queue", "--reason", "nightly backup")
        self.engine = spawn([self.bin, "--db", self.db, "run", "--grace", "1s"],
                            os.path.join(self.tmp, "engine.log"))

        def idle():
            docs = self.json("instances")["instances"]
            return all(i["active_run"] is None for i in docs) and all(
                not self.status(n)["queued"] for n in ("broken", "hostile", "zk"))
        self.wait_cli(idle, "the first runs of every instance to end", timeout=60)
        for name in ("broken", "hostile"):
            run = self.plan_run(name, "broken")
            if not run or run["status"] != "FATAL_ERROR":
                raise Failed(f"setup: plan broken of {name} should be FATAL_ERROR, is {run}")
        self.servers["ro"] = Server(self, "ro", ["--listen", "127.0.0.1:0"])
        self.browser = cdp.Browser()

    def actions_server(self):
        if "rw" not in self.servers:
            self.servers["rw"] = Server(self, "rw", ["--listen", "127.0.0.1:0",
                                                     "--allow-actions"])
        return self.servers["rw"]

    def teardown(self):
        """Stop everything; returns failures found doing so."""
        problems = []
        if self.browser:
            self.browser.close()
        for name, srv in self.servers.items():
            rc = srv.stop()
            if rc != 0:
                problems.append(f"server {name}: SIGTERM should end it with status 0, "
                                f"it ended with {rc}; log: {open(srv.log).read()[-500:]!r}")
        if self.engine:
            stop(self.engine)
        _kill_all()
        return problems


# --------------------------------------------------------------------------
# One case: its failures, its pages.

class Case:
    def __init__(self, env, name):
        self.env = env
        self.name = name
        self.failures = []
        self.pages = []

    def expect(self, cond, msg):
        if not cond:
            self.failures.append(msg)
        return cond

    def page(self, width=1280, height=800, mobile=False):
        p = self.env.browser.new_page(width, height, mobile=mobile)
        self.pages.append(p)
        return p

    def drain(self, page, allow=()):
        """The page's problems now, except those matching a regex of ALLOW
        (an expected 401/403 logs a failed load) and favicon's, which the
        console case reports once."""
        for p in page.take_problems():
            if any(re.search(a, p) for a in allow):
                continue
            if "favicon.ico" in p:
                self.env.favicon_problems.append(p)
            else:
                self.failures.append(p)

    def finish(self):
        for p in self.pages:
            try:
                self.drain(p)
            except cdp.CDPError as e:
                self.failures.append(f"reading the page's problems: {e}")
            p.close()


# --------------------------------------------------------------------------
# Reading pages.

def load(t, page, url, status=200):
    """Navigate; the page must answer STATUS (None: any)."""
    got = page.navigate(url)
    if status is not None and got != status:
        raise Failed(f"GET {url}: expected HTTP {status}, got {got}")
    return got


READ_INSTANCES = r"""
(() => {
  const t = document.querySelector('table#instances');
  if (!t) return null;
  return [...t.querySelectorAll('tbody tr[data-instance]')].map(tr => ({
    name: tr.dataset.instance,
    status: tr.querySelector('td.status span.status')?.dataset.status ?? null,
    definition: tr.querySelector('td.definition')?.textContent.trim() ?? null,
    href: tr.querySelector('td.name a')?.getAttribute('href') ?? null,
    link: tr.querySelector('td.name a')?.textContent.trim() ?? null,
    progress: tr.querySelector('td.progress')?.textContent.trim() ?? null,
    queue: tr.querySelector('td.queue')?.textContent.trim() ?? null,
  }));
})()
"""

READ_TREE = r"""
(() => {
  const tree = document.querySelector('#tree');
  if (!tree) return null;
  return [...tree.querySelectorAll('li.plan')].map(p => ({
    plan: p.dataset.plan,
    // The plan's own span.status: the contract writes li.plan > span.status;
    // the server puts it in a div.line of the li, so take the first one
    // that belongs to no phase.
    status: [...p.querySelectorAll('span.status')]
              .find(s => !s.closest('details.phase'))?.dataset.status ?? null,
    phases: [...p.querySelectorAll('details.phase')].map(d => ({
      phase: d.dataset.phase, id: d.id, open: d.open,
      // The phase's own status: its span.status that is no step's.
      status: [...d.querySelectorAll('span.status')]
                .find(s => !s.closest('li.step'))?.dataset.status ?? null,
      steps: [...d.querySelectorAll('li.step')].map(s => ({
        step: s.dataset.step,
        status: s.querySelector(':scope > span.status')?.dataset.status ?? null,
      })),
    })),
  }));
})()
"""

# Every span.status carries its word in its text, next to an icon.
BAD_STATUS_SPANS = r"""
[...document.querySelectorAll('span.status')].filter(s => {
  const w = s.dataset.status || '';
  const text = s.textContent.replace(/\s+/g, ' ').trim();
  const norm = text.replace(/ /g, '_');
  return !w || !(text.includes(w) || norm.includes(w)) ||
         text.replace(w, '').replace(w.replace(/_/g, ' '), '').trim() === '';
}).map(s => s.outerHTML)
"""


def compare_tree(t, page_tree, doc, where):
    """The page's #tree against a status document of the CLI; the
    differences are failures of T (or returned when T is None)."""
    if t is None:
        class Collect:
            failures = []

            def expect(self, cond, msg):
                if not cond:
                    self.failures.append(msg)
                return cond
        t = Collect()
        compare_tree(t, page_tree, doc, where)
        return t.failures
    if page_tree is None:
        t.expect(False, f"{where}: no #tree")
        return
    by_plan = {p["plan"]: p for p in page_tree}
    for plan in doc["plans"]:
        got = by_plan.get(plan["name"])
        if not t.expect(got is not None, f"{where}: no li.plan[data-plan={plan['name']}] "
                                          f"(page has {sorted(by_plan)})"):
            continue
        t.expect(got["status"] == plan["status"],
                 f"{where}: plan {plan['name']}: status {got['status']!r}, CLI says {plan['status']!r}")
        run = plan.get("run")
        if not run:
            continue
        phases = {ph["phase"]: ph for ph in got["phases"]}
        for ph in run["phases"]:
            gph = phases.get(ph["name"])
            if not t.expect(gph is not None, f"{where}: plan {plan['name']}: no "
                                             f"details.phase[data-phase={ph['name']}]"):
                continue
            want_id = f"phase-{plan['name']}-{ph['name']}"
            t.expect(gph["id"] == want_id, f"{where}: phase id {gph['id']!r}, expected {want_id!r}")
            t.expect(gph["status"] == ph["status"],
                     f"{where}: phase {plan['name']}/{ph['name']}: status {gph['status']!r}, "
                     f"CLI says {ph['status']!r}")
            want = [(s["name"], s["status"]) for s in ph["steps"]]
            seen = [(s["step"], s["status"]) for s in gph["steps"]]
            t.expect(seen == want, f"{where}: steps of {plan['name']}/{ph['name']}: page {seen}, "
                                   f"CLI {want}")


READ_RUN_PHASES = r"""
[...document.querySelectorAll('#tree details.phase')].map(d => ({
  phase: d.dataset.phase, id: d.id,
  status: [...d.querySelectorAll('span.status')]
            .find(s => !s.closest('li.step'))?.dataset.status ?? null,
  steps: [...d.querySelectorAll('li.step')].map(s => [s.dataset.step,
           s.querySelector(':scope > span.status')?.dataset.status ?? null]),
}))
"""


def compare_run_tree(t, page, doc, plan, run_id, where):
    """A run page's #tree (this run's phases and steps) against the CLI's
    status --run document."""
    run = [p for p in doc["plans"] if p["name"] == plan][0]["run"]
    t.expect(run and run["id"] == run_id, f"{where}: status --run {run_id} has run {run}")
    want = [{"phase": ph["name"], "id": f"phase-{plan}-{ph['name']}", "status": ph["status"],
             "steps": [[s["name"], s["status"]] for s in ph["steps"]]} for ph in run["phases"]]
    got = page.evaluate(READ_RUN_PHASES)
    t.expect(got == want, f"{where}: #tree phases {got}, CLI {want}")


def stable(env, read_cli, read_page, tries=6):
    """Read the CLI, the page, the CLI again, until the CLI did not change
    in between (the engine may move things): then (cli, page) agree in
    time.  Returns the last pair even if it never settled."""
    for _ in range(tries):
        before = read_cli()
        page = read_page()
        after = read_cli()
        if before == after:
            return after, page
        time.sleep(0.2)
    return after, page


def unbidi(text):
    """The server may show a bidi control as the visible text <U+202E>
    (so that it cannot reorder what is around it); that is the same text
    for these checks."""
    return re.sub(r"<U\+([0-9A-Fa-f]{4,6})>", lambda m: chr(int(m.group(1), 16)), text)


def hostile_dom_checks(t, page, where):
    """Nothing hostile ran or became markup on this page."""
    bad = page.evaluate(r"""(() => ({
      foreignScripts: [...document.scripts].filter(s => !s.src ||
          !new URL(s.src).pathname.startsWith('/assets/')).map(s => s.outerHTML),
      imgX: [...document.querySelectorAll('img')].filter(i =>
          (i.getAttribute('src') || '') === 'x').map(i => i.outerHTML),
      handlers: [...document.querySelectorAll('*')].filter(e =>
          [...e.attributes].some(a => /^on/i.test(a.name))).map(e => e.outerHTML.slice(0, 120)),
    }))()""")
    t.expect(not bad["foreignScripts"], f"{where}: script elements other than /assets/: "
                                        f"{bad['foreignScripts']}")
    t.expect(not bad["imgX"], f"{where}: hostile <img src=x> became an element: {bad['imgX']}")
    t.expect(not bad["handlers"], f"{where}: elements with on* attributes: {bad['handlers']}")
    t.expect(not page.dialogs, f"{where}: a dialog opened: {page.dialogs}")


def check_headers(t, method, url, headers=None, body=None):
    """The contract's security headers on this answer."""
    s, h, _ = http(method, url, headers, body)
    where = f"{method} {urllib.parse.urlsplit(url).path} ({s})"
    want = {d.strip() for d in CSP.split(";")}
    csp = {d.strip() for d in (h.get("Content-Security-Policy") or "").split(";") if d.strip()}
    t.expect(csp == want, f"{where}: Content-Security-Policy {h.get('Content-Security-Policy')!r}")
    t.expect(h.get("X-Content-Type-Options") == "nosniff",
             f"{where}: X-Content-Type-Options {h.get('X-Content-Type-Options')!r}")
    # same-origin: no referrer to other sites, while a form's POST still
    # carries its own Origin (no-referrer made Chromium send "null").
    t.expect(h.get("Referrer-Policy") == "same-origin",
             f"{where}: Referrer-Policy {h.get('Referrer-Policy')!r}")


def text_of(page, selector):
    return page.evaluate("(() => { const e = document.querySelector(%s);"
                         " return e ? e.textContent : null; })()" % json.dumps(selector))


def exists(page, selector):
    return page.evaluate("!!document.querySelector(%s)" % json.dumps(selector))


def shot(env, page, name):
    page.screenshot(os.path.join(env.artifacts, name + ".png"))


# --------------------------------------------------------------------------
# The cases.

def test_instances_page(env, t):
    """The instances page lists exactly what `planctl instances -o json` does."""
    srv = env.servers["ro"]
    page = t.page()
    load(t, page, srv.url + "/")

    def cli():
        return env.json("instances")["instances"]

    def read():
        page.navigate(srv.url + "/")
        return page.evaluate(READ_INSTANCES)

    docs, rows = stable(env, cli, read)
    if rows is None:
        raise Failed("GET /: no table#instances")
    want = {i["name"]: i for i in docs}
    names = [r["name"] for r in rows]
    t.expect(sorted(names) == sorted(want) and len(names) == len(set(names)),
             f"rows tr[data-instance] {names}, CLI lists {sorted(want)}")
    for r in rows:
        i = want.get(r["name"])
        if not i:
            continue
        t.expect(r["status"] == i["status"],
                 f"row {r['name']}: span.status[data-status] {r['status']!r}, CLI {i['status']!r}")
        d = f"{i['definition']['name']}@{i['definition']['version']}"
        t.expect(r["definition"] == d, f"row {r['name']}: td.definition {r['definition']!r}, expected {d!r}")
        href = "/instances/" + urllib.parse.quote(r["name"], safe="")
        t.expect(r["href"] is not None and urllib.parse.urlsplit(r["href"]).path == href,
                 f"row {r['name']}: td.name a href {r['href']!r}, expected {href!r}")
        t.expect(r["queue"] is not None and r["queue"].isdigit(),
                 f"row {r['name']}: td.queue {r['queue']!r} is not a number")
    t.expect(exists(page, "form#filter input[name=name]") and exists(page, "form#filter select[name=status]"),
             "no form#filter with input[name=name] and select[name=status]")
    t.expect(not exists(page, "nav.pager a[rel=next]"),
             f"{len(rows)} instances (fewer than 50) but a nav.pager a[rel=next]")
    bad = page.evaluate(BAD_STATUS_SPANS)
    t.expect(not bad, f"span.status without an icon and its word: {bad[:3]}")

    # The filters, against the same list filtered here.
    for query, keep in (("name=o", lambda i: "o" in i["name"]),
                        ("status=FATAL_ERROR", lambda i: i["status"] == "FATAL_ERROR")):
        load(t, page, f"{srv.url}/?{query}")
        got = sorted(r["name"] for r in page.evaluate(READ_INSTANCES) or [])
        exp = sorted(i["name"] for i in cli() if keep(i))
        t.expect(got == exp and exp, f"GET /?{query}: rows {got}, expected {exp}")
    load(t, page, srv.url + "/?name=no-such-instance-zzz")
    t.expect(exists(page, "p#empty"), "GET /?name=no-such-instance-zzz: no p#empty")
    t.expect(not (page.evaluate(READ_INSTANCES) or []),
             "GET /?name=no-such-instance-zzz: rows listed anyway")

    # The API is exactly the CLI's document.
    def api():
        s, _, body = http("GET", srv.url + "/api/v1/instances")
        return s, json.loads(body) if s == 200 else body
    doc, (s, body) = stable(env, lambda: env.json("instances"), api)
    t.expect(s == 200 and body == doc,
             f"GET /api/v1/instances: {s} {str(body)[:300]} differs from planctl instances -o json "
             f"{str(doc)[:300]}")


def test_instance_tree(env, t):
    """An instance page shows the plans, phases and steps of `status -o json`."""
    srv = env.servers["ro"]
    page = t.page()
    # zk: the README's example (tools/examples/zookeeper.json).
    for name in ("alpha", "broken", "zk"):
        url = f"{srv.url}/instances/{name}"

        def read():
            load(t, page, url)
            return page.evaluate(READ_TREE)
        doc, tree = stable(env, lambda: env.status(name), read)
        compare_tree(t, tree, doc, f"GET /instances/{name}")
        h1 = text_of(page, "h1")
        t.expect(h1 is not None and h1.strip() == name, f"GET /instances/{name}: h1 {h1!r}")
        t.expect(exists(page, f'main#live[data-live-path="/instances/{name}"]'),
                 f"GET /instances/{name}: no main#live[data-live-path=\"/instances/{name}\"]")
        # Parameters, a secret as (secret) and never its value.
        params = page.evaluate(r"""Object.fromEntries([...document.querySelectorAll(
            '#params tr[data-param]')].map(tr => [tr.dataset.param, {
              text: tr.querySelector('td.value')?.textContent.trim() ?? null,
              secret: !!tr.querySelector('td.value.secret')}]))""")
        for p in doc["parameters"]:
            got = params.get(p["name"])
            if not t.expect(got is not None, f"/instances/{name}: no #params tr[data-param={p['name']}]"):
                continue
            if p["secret"]:
                t.expect(got["secret"] and got["text"] == "(secret)",
                         f"/instances/{name}: secret {p['name']} shows {got}, expected td.value.secret '(secret)'")
            elif p["value"] is not None:
                t.expect(got["text"] == p["value"],
                         f"/instances/{name}: parameter {p['name']} shows {got['text']!r}, CLI {p['value']!r}")
        html = page.evaluate("document.documentElement.outerHTML")
        t.expect("s3cr3t-WEBTEST-value" not in html,
                 f"/instances/{name}: the secret's value is in the page")
        # History: a row, with a link to the run page, for each run.
        runs = env.json("history", name)["runs"]
        for run in runs:
            sel = f'#history tbody tr[data-run="{run["id"]}"] a[href$="/instances/{name}/runs/{run["id"]}"]'
            t.expect(exists(page, sel), f"/instances/{name}: no {sel}")
        t.expect(exists(page, "#actions p#readonly"),
                 f"/instances/{name} on a read-only server: no #actions p#readonly")
        t.expect(not exists(page, "#actions form"),
                 f"/instances/{name} on a read-only server: an action form is shown")
        bad = page.evaluate(BAD_STATUS_SPANS)
        t.expect(not bad, f"/instances/{name}: span.status without an icon and its word: {bad[:3]}")

        def api():
            s, _, body = http("GET", f"{srv.url}/api/v1/instances/{name}")
            return s, json.loads(body) if s == 200 else body
        doc, (s, body) = stable(env, lambda: env.status(name), api)
        t.expect(s == 200 and body == doc,
                 f"GET /api/v1/instances/{name}: {s}, differs from planctl status {name} -o json")
    load(t, page, srv.url + "/instances/no-such-instance", status=404)
    t.drain(page, allow=[r"status of 404"])


def _watch_next_step(env, t, page, name):
    """Install a MutationObserver for the first step of plan slow that is
    not COMPLETE yet, in the CLI and on the page; returns the step's
    (phase, step).  The observer stamps window.__seenAt with Date.now()
    the moment the page shows it COMPLETE."""
    run = env.plan_run(name, "slow")
    for ph in run["phases"]:
        for st in ph["steps"]:
            if st["status"] == "COMPLETE":
                continue
            sel = (f'li.plan[data-plan="slow"] details.phase[data-phase="{ph["name"]}"] '
                   f'li.step[data-step="{st["name"]}"] > span.status[data-status="COMPLETE"]')
            already = page.evaluate(r"""((sel) => {
              window.__seenAt = null;
              if (window.__observer) window.__observer.disconnect();
              const check = () => { if (!window.__seenAt && document.querySelector(sel))
                                      window.__seenAt = Date.now(); };
              window.__observer = new MutationObserver(check);
              window.__observer.observe(document.documentElement,
                {subtree: true, childList: true, attributes: true, characterData: true});
              check();
              return window.__seenAt !== null;
            })(%s)""" % json.dumps(sel))
            if not already:
                return ph["name"], st["name"]
    return None


def _measure_step(env, t, page, name, bound, label):
    """Wait until the watched step shows COMPLETE; check the delay since
    its commit is within BOUND.  Returns the delay."""
    target = _watch_next_step(env, t, page, name)
    if target is None:
        raise Failed(f"{label}: the slow run of {name} ended before a step could be watched")
    phase, step = target
    seen_ms = page.wait_for("window.__seenAt", timeout=15,
                            what=f"step slow/{phase}/{step} of {name} to show COMPLETE on the open page")

    def finished():
        for ph in env.plan_run(name, "slow")["phases"]:
            for st in ph["steps"]:
                if ph["name"] == phase and st["name"] == step and st["finished_at"]:
                    return st["finished_at"]
    finished_at = env.wait_cli(finished, f"finished_at of step {step}", timeout=5)
    delay = seen_ms / 1000.0 - parse_time(finished_at)
    print(f"  {label}: step {phase}/{step} shown {delay:.3f}s after its commit")
    t.expect(delay <= bound, f"{label}: step slow/{phase}/{step} of {name} showed COMPLETE "
                             f"{delay:.2f}s after its commit (finished_at {finished_at}); bound {bound}s")
    return delay


def _start_slow(env, name):
    env.cli("trigger", name, "slow")
    env.wait_cli(lambda: (env.plan_run(name, "slow") or {}).get("status") == "IN_PROGRESS",
                 f"the slow run of {name} to be IN_PROGRESS")


def test_live_update(env, t):
    """A step completing in the engine shows on the open page within the
    bound, without a reload, keeping details' state and the scroll."""
    srv = env.servers["ro"]
    name = "live"
    _start_slow(env, name)
    # A short window, so that the page scrolls.
    page = t.page(1024, 420)
    load(t, page, f"{srv.url}/instances/{name}")
    page.wait_for("document.documentElement.dataset.live === 'sse'", timeout=5,
                  what="html[data-live=sse] (the stream open)")
    page.evaluate("window.__marker = 'no reload ' + Math.random()")
    marker = page.evaluate("window.__marker")
    nav_start = page.evaluate("performance.timeOrigin")
    updates0 = int(page.evaluate("document.querySelector('main#live').dataset.updates || '0'"))

    # The user closes phase two (open by default) and leaves phase one
    # open; then scrolls down.
    two = 'li.plan[data-plan="slow"] details.phase[data-phase="two"]'
    one = 'li.plan[data-plan="slow"] details.phase[data-phase="one"]'
    if not exists(page, two + " > summary"):
        raise Failed(f"no {two} > summary to close")
    t.expect(page.evaluate(f"document.querySelector({json.dumps(two)}).open"),
             "phase two was not open at load (contract: open unless summarised)")
    page.click(two + " > summary")
    page.wait_for(f"!document.querySelector({json.dumps(two)}).open", timeout=2,
                  what="phase two to close on a click of its summary")
    max_scroll = page.evaluate("document.documentElement.scrollHeight - innerHeight")
    if max_scroll < 20:
        raise Failed(f"the instance page does not scroll at 1024x420 (max {max_scroll}px): "
                     f"cannot check the scroll is kept")
    y = min(150, max_scroll)
    page.evaluate(f"window.scrollTo(0, {y})")
    page.wait_for(f"Math.abs(scrollY - {y}) < 1", timeout=2, what="the scroll to apply")

    # Two steps: one lucky update could land in time even from a server
    # that sends them late.
    _measure_step(env, t, page, name, LIVE_BOUND, "sse")
    _measure_step(env, t, page, name, LIVE_BOUND, "sse")

    t.expect(page.evaluate("window.__marker") == marker and
             page.evaluate("performance.timeOrigin") == nav_start,
             "the page was reloaded to show the update (window marker lost)")
    updates1 = int(page.evaluate("document.querySelector('main#live').dataset.updates || '0'"))
    t.expect(updates1 > updates0, f"main#live[data-updates] did not grow: {updates0} -> {updates1}")
    t.expect(not page.evaluate(f"document.querySelector({json.dumps(two)})?.open"),
             "phase two, closed by the user, is open again after the update")
    t.expect(page.evaluate(f"!!document.querySelector({json.dumps(one)})?.open"),
             "phase one, open, is closed after the update")
    sy = page.evaluate("scrollY")
    t.expect(abs(sy - y) <= 1, f"scroll position not kept across the update: {y} -> {sy}")
    t.expect(page.evaluate("document.documentElement.dataset.live") == "sse",
             "html[data-live] is no longer sse after an update")
    # And the open page keeps agreeing with the CLI: it catches up within
    # the bound after any commit, so it must match within a few seconds.
    deadline = time.monotonic() + 3 * LIVE_BOUND
    while True:
        diffs = compare_tree(None, page.evaluate(READ_TREE), env.status(name),
                             f"/instances/{name} after live updates")
        if not diffs or time.monotonic() > deadline:
            break
        time.sleep(0.1)
    t.failures.extend(diffs)


def test_poll_fallback(env, t):
    """Without EventSource the page polls, and still updates in time."""
    srv = env.servers["ro"]
    name = "poll"
    _start_slow(env, name)
    page = t.page()
    # Before app.js runs in every document: no EventSource at all.
    page.add_init_script("window.EventSource = undefined;")
    load(t, page, f"{srv.url}/instances/{name}")
    page.wait_for("document.documentElement.dataset.live === 'poll'", timeout=5,
                  what="html[data-live=poll] with EventSource undefined")
    page.evaluate("window.__marker = 'poll page'")
    updates0 = int(page.evaluate("document.querySelector('main#live').dataset.updates || '0'"))
    _measure_step(env, t, page, name, POLL_BOUND, "poll")
    _measure_step(env, t, page, name, POLL_BOUND, "poll")
    t.expect(page.evaluate("window.__marker") == "poll page", "the polling page reloaded")
    updates1 = int(page.evaluate("document.querySelector('main#live').dataset.updates || '0'"))
    t.expect(updates1 > updates0, f"main#live[data-updates] did not grow while polling: "
                                  f"{updates0} -> {updates1}")


def test_failed_output(env, t):
    """A failed step's output is on its run page."""
    srv = env.servers["ro"]
    name = "broken"
    run = env.plan_run(name, "broken")
    logs = env.json("logs", name, "--run", str(run["id"]))["attempts"]
    failed = [a for a in logs if a["status"] != "COMPLETE"]
    if not failed:
        raise Failed(f"planctl logs {name} --run {run['id']}: no failed attempt")
    a = failed[-1]
    page = t.page()
    url = f"{srv.url}/instances/{name}/runs/{run['id']}"
    load(t, page, url)
    sec = f'#attempts section.attempt[data-step="{a["step"]}"][data-attempt="{a["attempt"]}"]'
    out = text_of(page, sec + " pre.output")
    line = f"WEBTEST-FAILURE-LINE from {name}"
    t.expect(out is not None and line in out,
             f"GET {url}: {sec} pre.output is {out!r}, expected it to contain {line!r}")
    t.expect(out is not None and out.strip() == a["output"].strip(),
             f"GET {url}: pre.output {out!r} is not the attempt's output {a['output']!r}")
    code = text_of(page, sec + " .exit-code")
    t.expect(code is not None and re.search(rf"\b{a['exit_code']}\b", code),
             f"GET {url}: .exit-code {code!r}, expected {a['exit_code']}")
    doc = env.json("status", name, "--run", str(run["id"]))
    compare_run_tree(t, page, doc, "broken", run["id"], f"GET {url}")
    seqs = [e["seq"] for e in env.json("events", name, "--run", str(run["id"]))["events"]]
    shown = page.evaluate("[...document.querySelectorAll('#events tbody tr[data-seq]')]"
                          ".map(tr => +tr.dataset.seq)")
    t.expect(set(seqs) <= set(shown), f"GET {url}: #events rows {shown}, CLI events {seqs}")
    img = page.evaluate("(() => { const i = document.querySelector('img#timeline');"
                        " return i && {src: i.getAttribute('src'), w: i.naturalWidth,"
                        " done: i.complete}; })()")
    t.expect(img and urllib.parse.urlsplit(img["src"]).path ==
             f"/instances/{name}/runs/{run['id']}/timeline.svg",
             f"GET {url}: img#timeline is {img}")
    if img:
        page.wait_for("document.querySelector('img#timeline').complete", timeout=5,
                      what="img#timeline to load")
        t.expect(page.evaluate("document.querySelector('img#timeline').naturalWidth") > 0,
                 f"GET {url}: img#timeline did not load an image")


# A definition of its own for test_running_output: a shell step that
# prints a line, waits for a file the test creates, prints another, waits
# for a second file.  Nothing in it depends on how long anything takes.
FOLLOW_DEFINITION = {
    "name": "webfollow", "version": "1",
    "description": "test_running_output: a step that prints, then waits for files",
    "parameters": [{"name": "GATE", "description": "the files to wait for: GATE.1, GATE.2"}],
    "tasks": [{"name": "talk", "kind": "shell", "spec": {
        "command": "echo WEBTEST-LIVE-FIRST; "
                   "while [ ! -e \"$PLANCTL_PARAM_GATE.1\" ]; do sleep 0.05; done; "
                   "echo WEBTEST-LIVE-SECOND; "
                   "while [ ! -e \"$PLANCTL_PARAM_GATE.2\" ]; do sleep 0.05; done",
        "timeout": "10m"}}],
    "plans": {"deploy": {"phases": [{"name": "only", "steps": [
        {"name": "talk", "tasks": ["talk"]}]}]}},
}


# test_actions' own definition: its plan "hold" runs until a file the
# case creates at its end appears, so that pause, resume and cancel find
# the run going however long each of them takes.
HOLD_DEFINITION = {
    "name": "webhold", "version": "1",
    "description": "test_actions: a plan that runs until a file appears",
    "parameters": [{"name": "GATE", "description": "the file that ends the hold steps"}],
    "tasks": [{"name": "quick", "kind": "Dummy"},
              {"name": "hold", "kind": "shell", "spec": {
                  "command": "while [ ! -e \"$PLANCTL_PARAM_GATE\" ]; do sleep 0.05; done",
                  "timeout": "10m"}}],
    "plans": {"deploy": {"phases": [{"name": "only", "steps": [
                  {"name": "quick", "tasks": ["quick"]}]}]},
              "hold": {"phases": [{"name": "wait", "steps": [
                  {"name": "first", "tasks": ["hold"]},
                  {"name": "second", "tasks": ["hold"]}]}]}},
}


def test_running_output(env, t):
    """A running attempt's output shows on its run page and grows there
    without a reload, over the stream and when polling."""
    srv = env.servers["ro"]
    name = "follow"
    gate = os.path.join(env.tmp, "follow-gate")
    path = os.path.join(env.tmp, "webfollow.json")
    with open(path, "w") as f:
        json.dump(FOLLOW_DEFINITION, f)
    env.cli("apply", "-f", path)
    # Creating it runs its deploy plan.
    env.cli("create", name, "--definition", "webfollow", "-p", "GATE=" + gate)

    def running_output(text):
        """The running attempt's output once `planctl logs` has TEXT in it."""
        def check():
            for a in env.json("logs", name)["attempts"]:
                if a["finished_at"] is None and text in (a["output"] or ""):
                    return a
        return check
    try:
        a = env.wait_cli(running_output("WEBTEST-LIVE-FIRST"),
                         "planctl logs to show the running attempt's first line", timeout=30)
        url = f"{srv.url}/instances/{name}/runs/{a['run']}"
        sec = f'#attempts section.attempt[data-step="talk"][data-attempt="{a["attempt"]}"]'
        sse = t.page()
        load(t, sse, url)
        poll = t.page()
        poll.add_init_script("window.EventSource = undefined;")
        load(t, poll, url)
        for page, how in ((sse, "sse"), (poll, "poll")):
            out = text_of(page, sec + " pre.output")
            t.expect(out is not None and "WEBTEST-LIVE-FIRST" in out,
                     f"GET {url} ({how}): the running attempt's {sec} pre.output is {out!r}, "
                     f"expected the line it printed, WEBTEST-LIVE-FIRST (planctl logs has it)")
            st = page.evaluate(f"document.querySelector({json.dumps(sec + ' h3 span.status')})"
                               "?.dataset.status ?? null")
            t.expect(st == "IN_PROGRESS", f"GET {url} ({how}): the attempt shows {st!r}, "
                                          f"expected IN_PROGRESS")
            page.wait_for(f"document.documentElement.dataset.live === {json.dumps(how)}",
                          timeout=5, what=f"html[data-live={how}]")
            page.evaluate("window.__marker = 'no reload'")
        # The output grows while the page is open: it follows.
        open(gate + ".1", "w").close()
        env.wait_cli(running_output("WEBTEST-LIVE-SECOND"),
                     "planctl logs to show the running attempt's second line", timeout=30)
        for page, how in ((sse, "sse"), (poll, "poll")):
            page.wait_for("(document.querySelector(%s)?.textContent ?? '')"
                          ".includes('WEBTEST-LIVE-SECOND')" % json.dumps(sec + " pre.output"),
                          timeout=15, what=f"the second line on the open run page ({how})")
            t.expect(page.evaluate("window.__marker") == "no reload",
                     f"the run page ({how}) reloaded to show the output")
        shot(env, sse, "run-running-output")
    finally:
        open(gate + ".1", "w").close()
        open(gate + ".2", "w").close()
    env.wait_cli(lambda: (env.plan_run(name, "deploy") or {}).get("status") == "COMPLETE",
                 f"the deploy run of {name} to complete", timeout=30)


def _submit(env, t, page, action, fields):
    """Fill form[data-action=ACTION] and click its submit button, as a
    user; waits for the page that answers.  Returns (path+query, status).

    When the server refuses the browser's own form as coming from another
    site (Chromium sends "Origin: null" from a page whose Referrer-Policy
    is no-referrer, as the server's first version had), that is a failure
    of the case, reported once; the
    same fields are then posted over HTTP with the page's own Origin, so
    that the rest of the actions are still checked."""
    err = page.evaluate(r"""((action, fields) => {
      const f = document.querySelector(`#actions form[data-action="${action}"]`);
      if (!f) return `no #actions form[data-action=${action}]`;
      for (const [k, v] of Object.entries(fields)) {
        const el = f.elements[k];
        if (!el) return `form ${action} has no field ${k}`;
        el.value = v;
        if (el.value !== v) return `form ${action}: field ${k} does not take ${v}`;
      }
      const b = f.querySelector('button[type=submit], button:not([type]), input[type=submit]');
      if (!b) return `form ${action} has no submit button`;
      document.querySelectorAll('[data-cdp-submit]').forEach(e => e.removeAttribute('data-cdp-submit'));
      b.setAttribute('data-cdp-submit', '');
      return null;
    })(%s, %s)""" % (json.dumps(action), json.dumps(fields)))
    if err:
        raise Failed(err)
    form = page.evaluate(r"""((action) => {
      const f = document.querySelector(`#actions form[data-action="${action}"]`);
      return {action: f.action, fields: [...new FormData(f).entries()]};
    })(%s)""" % json.dumps(action))
    mark = page.browser.event_mark()
    page.click("[data-cdp-submit]")
    status = page.wait_load(mark, what=f"the page answering the {action} form")
    error = text_of(page, "p#error")
    if status == 403 and error and "another site" in error:
        if not getattr(t, "origin_null_reported", False):
            t.origin_null_reported = True
            t.failures.append(
                f"the page's own {action} form is refused: 403 p#error {error.strip()!r}; "
                f"Chromium sends 'Origin: null' on a POST from a page with Referrer-Policy: "
                f"no-referrer (the rest of this case posts the forms' fields over HTTP)")
        page.take_problems()   # the 403 just reported
        cookies = page.send("Network.getCookies", {"urls": [form["action"]]})["cookies"]
        hdrs = {"Content-Type": "application/x-www-form-urlencoded",
                "Origin": "{0.scheme}://{0.netloc}".format(urllib.parse.urlsplit(form["action"]))}
        if cookies:
            hdrs["Cookie"] = "; ".join(f"{c['name']}={c['value']}" for c in cookies)
        s, h, body = http("POST", form["action"], hdrs,
                          urllib.parse.urlencode([tuple(f) for f in form["fields"]]).encode())
        if s == 303:
            status = page.navigate(urllib.parse.urljoin(form["action"], h.get("Location")))
        else:
            return f"(HTTP POST answered {s}: {body[:200]!r})", s
    return page.evaluate("location.pathname + location.search"), status


def _actor_check(env, t, name, since, entity_to, action):
    evs = env.json("events", name, "--since", str(since))["events"]
    hits = [e for e in evs if e["entity"] == "run" and e["to"] == entity_to]
    t.expect(hits and all(e["actor"] != "engine" for e in hits),
             f"{action}: planctl events {name} has no run event to {entity_to} by an actor "
             f"other than engine after seq {since}: {[(e['to'], e['actor']) for e in evs]}")
    if hits:
        print(f"  {action}: recorded as actor {hits[0]['actor']!r}")
    return hits


def test_actions_readonly(env, t):
    """A read-only server shows no forms and refuses every POST."""
    srv = env.servers["ro"]
    name = "ro"
    _start_slow(env, name)
    run_id = env.plan_run(name, "slow")["id"]
    page = t.page()
    load(t, page, f"{srv.url}/instances/{name}")
    t.expect(exists(page, "#actions p#readonly"), "read-only: no #actions p#readonly")
    res = page.evaluate(r"""(async (name) => {
      const csrf = document.querySelector('input[name=csrf]')?.value ?? 'none';
      const r = await fetch(`/instances/${name}/cancel`, {method: 'POST', redirect: 'manual',
          body: new URLSearchParams({csrf, reason: 'should not cancel'})});
      const html = await r.text();
      const d = new DOMParser().parseFromString(html, 'text/html');
      return {status: r.status, error: d.querySelector('p#error')?.textContent ?? null};
    })(%s)""" % json.dumps(name))
    t.expect(res["status"] == 403, f"read-only POST /instances/{name}/cancel: {res['status']}, expected 403")
    t.expect(res["error"] is not None and res["error"].strip().startswith("read-only:"),
             f"read-only POST: p#error {res['error']!r}, expected 'read-only: ...'")
    for split in (False, True):
        s, _, body = http("POST", f"{srv.url}/api/v1/instances/{name}/cancel",
                          {"Content-Type": "application/json"}, b'{"reason":"no"}', split=split)
        how = " (its body in a second write, as urllib sends it)" if split else ""
        t.expect(s == 403 and b'"error"' in body,
                 f"read-only POST /api/v1/instances/{name}/cancel{how}: {s} {body[:200]!r}, "
                 f"expected 403 with a JSON error")
    check_headers(t, "POST", f"{srv.url}/api/v1/instances/{name}/cancel",
                  {"Content-Type": "application/json"}, b'{"reason":"no"}')
    run = env.plan_run(name, "slow")
    t.expect(run["id"] == run_id and run["status"] != "CANCELLED",
             f"read-only server: the run was cancelled anyway: {run['status']}")
    t.drain(page, allow=[r"status of 403"])


def test_actions(env, t):
    """With --allow-actions the forms trigger, pause, resume, cancel and
    retry, as the CLI then says, recorded with a non-engine actor; a
    POST without csrf or from another origin is refused."""
    srv = env.actions_server()
    t.expect(srv.mode == "actions allowed", f"--allow-actions: its line says ({srv.mode})")
    name = "act"
    url = f"{srv.url}/instances/{name}"
    # Its own definition: a plan whose steps run until a file appears, so
    # that a run is still going whatever each step of this case takes.
    gate = os.path.join(env.tmp, "act-gate")
    path = os.path.join(env.tmp, "webhold.json")
    with open(path, "w") as f:
        json.dump(HOLD_DEFINITION, f)
    env.cli("apply", "-f", path)
    env.cli("create", name, "--definition", "webhold", "-p", "GATE=" + gate)
    env.wait_cli(lambda: (env.plan_run(name, "deploy") or {}).get("status") == "COMPLETE",
                 f"the deploy run of {name} to complete")
    try:
        _actions(env, t, srv, name, url)
    finally:
        open(gate, "w").close()


def test_queue_plans(env, t):
    """The instance page's queue names the plan of each queued run, as
    `planctl status` does, not only its id."""
    srv = env.servers["ro"]
    name = "queue"
    gate = os.path.join(env.tmp, "queue-gate")
    path = os.path.join(env.tmp, "webhold.json")
    with open(path, "w") as f:
        json.dump(HOLD_DEFINITION, f)
    env.cli("apply", "-f", path)
    env.cli("create", name, "--definition", "webhold", "-p", "GATE=" + gate)
    env.wait_cli(lambda: (env.plan_run(name, "deploy") or {}).get("status") == "COMPLETE",
                 f"the deploy run of {name} to complete")
    queued = []
    try:
        # A hold run stays active until the gate file appears: the runs
        # triggered behind it stay QUEUED while the page is read.
        env.cli("trigger", name, "hold")
        for plan in ("deploy", "hold"):
            env.cli("trigger", name, plan, "--queue")
        queued = env.status(name)["queued"]
        t.expect(len(queued) == 2, f"{name}: queued {queued}, expected two runs")
        page = t.page()
        load(t, page, f"{srv.url}/instances/{name}")
        items = page.evaluate(r"""[...document.querySelectorAll('#queue ol li')].map(
            li => li.textContent.replace(/\s+/g, ' ').trim())""")
        want = [f"run {queued[0]} of plan deploy", f"run {queued[1]} of plan hold"]
        t.expect(items == want, f"/instances/{name}: #queue items {items}, expected {want}")
        links = page.evaluate(r"""[...document.querySelectorAll('#queue ol li a')].map(
            a => a.getAttribute('href'))""")
        t.expect(links == [f"/instances/{name}/runs/{i}" for i in queued],
                 f"/instances/{name}: #queue links {links}")
    finally:
        for run in queued:
            env.cli("cancel", name, "--run", str(run), check=False)
        open(gate, "w").close()


def _offered(page):
    """The actions whose forms the page shows."""
    return page.evaluate("[...document.querySelectorAll('#actions form[data-action]')]"
                         ".filter(f => !f.hidden && f.offsetParent !== null)"
                         ".map(f => f.dataset.action)")


# The icons (span.status > span[aria-hidden]) that the page's fonts do not
# have: drawn on a canvas in the icon's own font, each is compared with a
# code point no font has (U+0378, unassigned), which draws the font's
# empty box.
TOFU_ICONS = r"""
(() => {
  const c = document.createElement('canvas'); c.width = 64; c.height = 64;
  const x = c.getContext('2d');
  const draw = (ch, font) => {
    x.clearRect(0, 0, 64, 64); x.font = font; x.fillStyle = '#000';
    x.textBaseline = 'top'; x.fillText(ch, 8, 8);
    return Array.from(x.getImageData(0, 0, 64, 64).data).join(',');
  };
  const bad = new Set();
  for (const s of document.querySelectorAll('span.status > span[aria-hidden]')) {
    const font = getComputedStyle(s).font;
    if (draw(s.textContent.trim(), font) === draw('͸', font))
      bad.add(s.parentElement.dataset.status + ' ' + s.textContent.trim());
  }
  return [...bad];
})()
"""


def _actions(env, t, srv, name, url):

    def fresh():
        # Each step in a tab of its own: a page left in one tab keeps its
        # stream open (see test_navigation), and that defect must not
        # stop this case.  The refusals below log their 403s.
        if t.pages:
            old = t.pages.pop()
            t.drain(old, allow=[r"status of 40[0349]"])
            old.close()
        p = t.page()
        load(t, p, url)
        return p
    page = fresh()
    t.expect(not exists(page, "#actions p#readonly"), "--allow-actions: p#readonly shown")
    # Only what applies is offered: nothing runs, the last run COMPLETE.
    got = _offered(page)
    t.expect(got == ["trigger"], f"no active run, the last COMPLETE: forms offered {got}, "
                                 f"expected only trigger")

    # trigger
    seq = env.last_seq(name)
    where, status = _submit(env, t, page, "trigger", {"plan": "hold", "reason": "from the web page"})
    t.expect(where.startswith(f"/instances/{name}?done=trigger&") and status == 200,
             f"trigger: landed on {where} ({status}), expected /instances/{name}?done=trigger&...")
    t.expect(exists(page, "p#flash"), "trigger: no p#flash on the page after it")
    run = env.wait_cli(lambda: env.plan_run(name, "hold"), "a hold run")
    # The page after it names the run, as `planctl trigger` does.
    flash = (text_of(page, "p#flash") or "").strip()
    want = f'Triggered: run {run["id"]} of plan "hold" admitted.'
    t.expect(flash == want, f"trigger: p#flash says {flash!r}, expected {want!r}")
    t.expect(exists(page, f'p#flash a[href="/instances/{name}/runs/{run["id"]}"]'),
             "trigger: p#flash does not link to the run")
    t.expect(run["reason"] == "from the web page", f"trigger: run reason {run['reason']!r}")
    _actor_check(env, t, name, seq, "PENDING", "trigger")
    env.wait_cli(lambda: env.plan_run(name, "hold")["status"] == "IN_PROGRESS",
                 "the triggered run to be IN_PROGRESS")

    # pause
    page = fresh()
    got = _offered(page)
    t.expect(got == ["trigger", "cancel", "pause"],
             f"a run IN_PROGRESS: forms offered {got}, expected trigger, cancel, pause")
    seq = env.last_seq(name)
    where, status = _submit(env, t, page, "pause", {})
    t.expect(where.startswith(f"/instances/{name}?done=pause"), f"pause: landed on {where}")
    env.wait_cli(lambda: env.plan_run(name, "hold")["status"] == "PAUSED", "the run to be PAUSED")
    _actor_check(env, t, name, seq, "PAUSED", "pause")
    page = fresh()
    got = _offered(page)
    t.expect(got == ["trigger", "cancel", "resume"],
             f"a run PAUSED: forms offered {got}, expected trigger, cancel, resume")
    # The PAUSED icon is drawn by the fonts this machine has (Debian's
    # DejaVu), as is every other icon on the page.
    t.expect(exists(page, 'span.status[data-status="PAUSED"] > span[aria-hidden]'),
             "a run PAUSED: no span.status[data-status=PAUSED] with its icon")
    bad = page.evaluate(TOFU_ICONS)
    t.expect(not bad, f"status icons the page's fonts cannot draw (an empty box): {bad}")
    shot(env, page, "instance-paused")

    # Forged resumes: the csrf of the page with another Origin, then no
    # csrf at all.  Both 403, the run stays PAUSED.
    page = fresh()
    csrf = page.evaluate("document.querySelector('#actions form[data-action=resume] input[name=csrf]')?.value")
    t.expect(csrf, "no input[name=csrf] in the resume form")
    cookies = page.send("Network.getCookies", {"urls": [srv.url + "/"]})["cookies"]
    cookie = "; ".join(f"{c['name']}={c['value']}" for c in cookies)
    hdrs = {"Content-Type": "application/x-www-form-urlencoded", "Origin": "http://evil.example"}
    if cookie:
        hdrs["Cookie"] = cookie
    s, _, _ = http("POST", f"{url}/resume", hdrs, urllib.parse.urlencode({"csrf": csrf or ""}).encode())
    t.expect(s == 403, f"POST {url}/resume with the csrf but Origin http://evil.example: {s}, expected 403")
    res = page.evaluate("""fetch(%s, {method: 'POST', redirect: 'manual',
        body: new URLSearchParams({reason: 'x'})}).then(r => r.status)""" % json.dumps(f"/instances/{name}/resume"))
    t.expect(res == 403, f"POST /instances/{name}/resume without csrf: {res}, expected 403")
    # Whatever Origin the fetch above sent, the refusal must also hold
    # over HTTP with the right Origin, and no csrf or a wrong one.
    hdrs["Origin"] = srv.url
    for form, what in (({}, "without csrf"), ({"csrf": "0" * 32}, "with a wrong csrf")):
        s, _, _ = http("POST", f"{url}/resume", hdrs, urllib.parse.urlencode(form).encode())
        t.expect(s == 403, f"POST {url}/resume {what} (Origin {srv.url}): {s}, expected 403")
    t.expect(env.plan_run(name, "hold")["status"] == "PAUSED",
             "a refused resume resumed the run anyway")
    # The control: the same request with the page's own origin goes through
    # (so the 403 above was for the origin, not for a missing cookie).
    hdrs["Origin"] = srv.url
    s, h, _ = http("POST", f"{url}/resume", hdrs, urllib.parse.urlencode({"csrf": csrf or ""}).encode())
    t.expect(s == 303 and f"/instances/{name}?done=resume" in (h.get("Location") or ""),
             f"POST {url}/resume with csrf and its own Origin: {s} Location {h.get('Location')!r}, "
             f"expected 303 to /instances/{name}?done=resume")
    env.wait_cli(lambda: env.plan_run(name, "hold")["status"] == "IN_PROGRESS",
                 "the run to be IN_PROGRESS after the resume")

    # pause, resume again, through the forms.
    page = fresh()
    _submit(env, t, page, "pause", {})
    env.wait_cli(lambda: env.plan_run(name, "hold")["status"] == "PAUSED", "the run to be PAUSED")
    page = fresh()
    seq = env.last_seq(name)
    where, _ = _submit(env, t, page, "resume", {})
    t.expect(where.startswith(f"/instances/{name}?done=resume"), f"resume: landed on {where}")
    t.expect(exists(page, "p#flash"), "resume: no p#flash")
    env.wait_cli(lambda: env.plan_run(name, "hold")["status"] == "IN_PROGRESS",
                 "the run to be IN_PROGRESS after the resume form")
    _actor_check(env, t, name, seq, "IN_PROGRESS", "resume")

    # cancel, with a reason
    page = fresh()
    seq = env.last_seq(name)
    where, _ = _submit(env, t, page, "cancel", {"reason": "cancelled from the web"})
    t.expect(where.startswith(f"/instances/{name}?done=cancel"), f"cancel: landed on {where}")
    env.wait_cli(lambda: env.plan_run(name, "hold")["status"] == "CANCELLED", "the run to be CANCELLED")
    hits = _actor_check(env, t, name, seq, "CANCELLED", "cancel")
    t.expect(any("cancelled from the web" in (e["message"] or "") for e in hits),
             f"cancel: the reason is not in the event's message: {[e['message'] for e in hits]}")

    # retry the cancelled run
    cancelled = env.plan_run(name, "hold")["id"]
    page = fresh()
    seq = env.last_seq(name)
    where, _ = _submit(env, t, page, "retry", {"run": str(cancelled)})
    t.expect(where.startswith(f"/instances/{name}?done=retry"), f"retry: landed on {where}")
    run = env.wait_cli(lambda: (lambda r: r if r["id"] != cancelled else None)(env.plan_run(name, "hold")),
                       "a new hold run after the retry")
    t.expect(run["retry_of"] == cancelled, f"retry: the new run's retry_of is {run['retry_of']}")
    _actor_check(env, t, name, seq, "PENDING", "retry")

    # The forms follow the run on the open page: cancelled by the CLI,
    # the page offers a retry and no cancel, without a reload.
    env.wait_cli(lambda: env.plan_run(name, "hold")["status"] == "IN_PROGRESS",
                 "the retry to be IN_PROGRESS")
    page = fresh()
    got = _offered(page)
    t.expect(got == ["trigger", "cancel", "pause"],
             f"after the retry, a run IN_PROGRESS: forms offered {got}")
    page.evaluate("window.__marker = 'offered'")
    env.cli("cancel", name)
    page.wait_for("(() => { const o = [...document.querySelectorAll('#actions form[data-action]')]"
                  ".filter(f => !f.hidden).map(f => f.dataset.action).join(' ');"
                  " return o === 'trigger retry'; })()", timeout=15,
                  what="the open page to offer trigger and retry once the run is cancelled")
    t.expect(page.evaluate("window.__marker") == "offered", "the page reloaded to change its forms")

    # A refused action: pause when nothing is IN_PROGRESS is answered with
    # the CLI's own message in p#error, and a link back to the instance.
    r = env.cli("pause", name, check=False)
    page = fresh()
    res = page.evaluate(r"""(async (name) => {
      const csrf = document.querySelector('input[name=csrf]')?.value ?? '';
      const r = await fetch(`/instances/${name}/pause`, {method: 'POST', redirect: 'manual',
          body: new URLSearchParams({csrf})});
      const d = new DOMParser().parseFromString(await r.text(), 'text/html');
      return {status: r.status, error: d.querySelector('p#error')?.textContent ?? null,
              back: d.querySelector('a#back')?.getAttribute('href') ?? null};
    })(%s)""" % json.dumps(name))
    t.expect(res["back"] == f"/instances/{name}",
             f"refused pause: the page links back to {res['back']!r}, expected /instances/{name}")
    want = r.stderr.strip().removeprefix("planctl: ")
    t.expect(res["status"] in (400, 404, 409) and res["error"] is not None and want in res["error"],
             f"refused pause: {res}, expected 400/404/409 with p#error holding {want!r}")
    t.drain(page, allow=[r"status of 40[0349]"])


def test_hostile_text(env, t):
    """Markup and bidi controls in values, reasons and output show as text."""
    srv = env.servers["ro"]
    name = "hostile"
    doc = env.status(name)
    note = [p for p in doc["parameters"] if p["name"] == "NOTE"][0]["value"]
    if note != HOSTILE_NOTE:
        raise Failed(f"setup: NOTE of {name} is {note!r}")
    page = t.page()
    url = f"{srv.url}/instances/{name}"
    load(t, page, url)
    body = unbidi(page.evaluate("document.body.textContent"))
    value = text_of(page, '#params tr[data-param="NOTE"] td.value')
    t.expect(value is not None and value.strip() == HOSTILE_NOTE,
             f"{url}: NOTE shows {value!r}, expected the text {HOSTILE_NOTE!r}")
    # The contract does not say where a run's reason shows; where it does,
    # it must be the whole text.
    if "gnp.exe" in body:
        t.expect(HOSTILE_REASON in body, f"{url}: the reason shows, but not as the text "
                                         f"{HOSTILE_REASON!r}")
    hostile_dom_checks(t, page, url)

    for plan, must in (("broken", [HOSTILE_SCRIPT, HOSTILE_IMG, HOSTILE_NOTE]),
                       ("deploy", [HOSTILE_NOTE, BIDI_OUTPUT])):
        run = env.plan_run(name, plan)
        rurl = f"{url}/runs/{run['id']}"
        load(t, page, rurl)
        outs = page.evaluate("[...document.querySelectorAll('#attempts pre.output')].map(p => p.textContent)")
        joined = unbidi("\n".join(outs))
        for m in must:
            t.expect(m in joined, f"{rurl}: pre.output does not hold the text {m!r}: {outs}")
        body = unbidi(page.evaluate("document.body.textContent"))
        if "gnp.exe" in body.replace(BIDI_OUTPUT, ""):
            t.expect(HOSTILE_REASON in body,
                     f"{rurl}: the reason shows, but not as the text {HOSTILE_REASON!r}")
        hostile_dom_checks(t, page, rurl)

    # Reflected: the filter's text goes back into the form.
    q = urllib.parse.quote(HOSTILE_NOTE)
    load(t, page, f"{srv.url}/?name={q}")
    got = page.evaluate("document.querySelector('form#filter input[name=name]')?.value")
    t.expect(got == HOSTILE_NOTE, f"GET /?name=<hostile>: the filter input holds {got!r}")
    hostile_dom_checks(t, page, "GET /?name=<hostile>")
    load(t, page, f"{srv.url}/instances/{q}", status=None)
    hostile_dom_checks(t, page, "GET /instances/<hostile>")
    t.drain(page, allow=[r"status of 40[04]"])
    s, _, _ = http("GET", f"{srv.url}/instances/{q}")
    t.expect(s in (400, 404), f"GET /instances/<hostile name>: {s}, expected 400 or 404")


def _visit_all(env, srv):
    run = env.plan_run("broken", "broken")
    return ["/", "/?status=COMPLETE&sort=status&order=desc",
            "/instances/alpha", "/instances/hostile", "/instances/broken",
            f"/instances/broken/runs/{run['id']}", "/engines"]


def test_no_console_errors(env, t):
    """No console error, exception or CSP violation on any page, and the
    headers of the contract on every answer."""
    srv = env.servers["ro"]
    for path in _visit_all(env, srv):
        # A tab per page, for the reason given in test_actions.
        page = t.page()
        load(t, page, srv.url + path)
        # Let app.js settle (open its stream) before judging.  The contract
        # does not say a finished run's page streams, so "off" may stay;
        # "poll" means the stream failed although EventSource is there.
        try:
            page.wait_for("['sse', 'poll'].includes(document.documentElement.dataset.live)",
                          timeout=3, what="html[data-live] sse or poll")
        except cdp.CDPTimeout:
            pass
        live = page.evaluate("document.documentElement.dataset.live")
        t.expect(live != "poll", f"GET {path}: html[data-live=poll]: the stream failed")
        t.drain(page)
        t.pages.remove(page)
        page.close()
    if env.favicon_problems:
        t.expect(False, f"the browser's request for /favicon.ico fails, which logs a console "
                        f"error on every page: {env.favicon_problems[0]}")

    run = env.plan_run("broken", "broken")
    urls = _visit_all(env, srv) + [
        f"/instances/broken/runs/{run['id']}/timeline.svg", "/assets/app.css", "/assets/app.js",
        "/api/v1/instances", "/api/v1/engines", "/no-such-page", "/instances/no-such"]
    for path in urls:
        check_headers(t, "GET", srv.url + path)
    # The live region alone, with an ETag that answers 304 when unchanged.
    s, h, body = http("GET", srv.url + "/instances/alpha?part=live")
    etag = h.get("ETag")
    t.expect(s == 200 and etag, f"GET /instances/alpha?part=live: {s}, ETag {etag!r}")
    t.expect(b"<html" not in body.lower(), "GET ?part=live: a whole document, not the live region")
    if etag:
        s, _, _ = http("GET", srv.url + "/instances/alpha?part=live", {"If-None-Match": etag})
        t.expect(s == 304, f"GET ?part=live with If-None-Match {etag}: {s}, expected 304")


def test_navigation(env, t):
    """Going from page to page in one tab keeps working: the stream of a
    page left behind does not hold a connection."""
    srv = env.servers["ro"]
    page = t.page()
    paths = ["/", "/instances/alpha", "/engines", "/instances/broken"] * 3
    for i, path in enumerate(paths):
        try:
            load(t, page, srv.url + path)
        except cdp.CDPTimeout as e:
            # Chromium keeps 6 connections per host (HTTP/1.1); a left page
            # kept in the back/forward cache with its EventSource open holds
            # one each, so the 7th load waits forever.  A real browser does
            # the same: app.js must close its stream on pagehide.
            raise Failed(f"load {i + 1} of {len(paths)} in one tab hangs: {e}; the streams of "
                         f"the pages left behind hold the connections (app.js should close "
                         f"its EventSource on pagehide)")
        page.wait_for("['sse', 'poll', 'off'].includes(document.documentElement.dataset.live)",
                      timeout=3, what=f"html[data-live] on {path}")


def test_engines_page(env, t):
    """The engines page lists what `planctl engines -o json` does."""
    srv = env.servers["ro"]
    page = t.page()

    def read():
        load(t, page, srv.url + "/engines")
        return page.evaluate("[...document.querySelectorAll('#engines tbody tr[data-engine]')].length")
    doc, rows = stable(env, lambda: len(env.json("engines")["engines"]), read)
    t.expect(rows == doc, f"/engines: {rows} rows tr[data-engine], planctl engines lists {doc}")
    if doc == 0:
        t.expect(exists(page, "p#no-engine"), "/engines with no engine: no p#no-engine")


def test_token(env, t):
    """Off loopback a token is required: refused without --token-file;
    with it, pages answer 401 until /login, the API wants Bearer."""
    srv = Server(env, "open", ["--listen", "0.0.0.0:0"], expect_exit=True)
    try:
        rc = srv.proc.wait(timeout=10)
    except subprocess.TimeoutExpired:
        rc = "still running after 10s"
    err = open(srv.log).read()
    t.expect(rc == 2 and len(err.strip().splitlines()) == 1,
             f"serve --listen 0.0.0.0:0 without --token-file: exit {rc}, stderr {err!r}; "
             f"expected exit 2 and one line")

    token = "webtest-" + os.urandom(12).hex()
    tf = os.path.join(env.tmp, "token")
    fd = os.open(tf, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
    os.write(fd, (token + "\n").encode())
    os.close(fd)
    srv = Server(env, "token", ["--listen", "0.0.0.0:0", "--token-file", tf])
    env.servers["token"] = srv
    page = t.page()
    load(t, page, srv.url + "/", status=401)
    t.expect(exists(page, "p#unauthorized"), "GET / without the token: no p#unauthorized")
    t.expect(not exists(page, "table#instances"), "GET / without the token: the instances are shown")
    load(t, page, srv.url + "/login?token=wrong-" + token, status=None)
    t.expect(exists(page, "p#unauthorized"), "GET /login with a wrong token: let in")
    load(t, page, srv.url + "/login?token=" + urllib.parse.quote(token))
    t.expect(page.evaluate("location.pathname") == "/" and exists(page, "table#instances"),
             f"GET /login?token=T: ended on {page.evaluate('location.href')} "
             f"without table#instances")
    load(t, page, srv.url + "/instances/alpha")
    t.expect(exists(page, "#tree"), "/instances/alpha after login: no #tree")
    t.drain(page, allow=[r"status of 401"])

    s, h, body = http("GET", srv.url + "/login?token=" + urllib.parse.quote(token))
    t.expect(s == 303 and "planctl_token=" in (h.get("Set-Cookie") or ""),
             f"GET /login?token=T: {s}, Set-Cookie {h.get('Set-Cookie')!r}; expected 303 and the cookie")
    api = srv.url + "/api/v1/instances"
    s, _, body = http("GET", api)
    t.expect(s == 401 and b'"error"' in body, f"GET {api} without a token: {s} {body[:120]!r}")
    s, _, _ = http("GET", api, {"Authorization": "Bearer nope"})
    t.expect(s == 401, f"GET {api} with a wrong Bearer: {s}, expected 401")
    def bearer():
        s, _, body = http("GET", api, {"Authorization": "Bearer " + token})
        return s, json.loads(body) if s == 200 else body
    doc, (s, got) = stable(env, lambda: env.json("instances"), bearer)
    t.expect(s == 200 and got == doc, f"GET {api} with Bearer: {s}, not the CLI's document")
    s, _, _ = http("GET", srv.url + "/assets/app.js")
    t.expect(s == 401, f"GET /assets/app.js without the token: {s}, expected 401 (every request)")
    # "Response headers on every answer": the refusals too.
    check_headers(t, "GET", srv.url + "/")
    check_headers(t, "GET", api)


def test_phone_width(env, t):
    """At 390x844 the instance page has no horizontal scrollbar."""
    srv = env.servers["ro"]
    page = t.page(390, 844, mobile=True)
    for name in ("live", "hostile"):
        load(t, page, f"{srv.url}/instances/{name}")
        # In mobile emulation innerWidth grows to fit wide content (the
        # layout viewport), so compare with clientWidth and the 390 px set.
        w = page.evaluate("[document.documentElement.scrollWidth, innerWidth,"
                          " document.documentElement.clientWidth]")
        t.expect(w[0] <= min(w[2], 390),
                 f"/instances/{name} at 390x844: scrollWidth {w[0]} > the width 390 "
                 f"(clientWidth {w[2]}, innerWidth {w[1]}): a horizontal scrollbar")
        if name == "live":
            shot(env, page, "instance-phone")


def test_screenshots(env, t):
    """PNGs of each page at 1280x800 for a human to look at."""
    srv = env.servers["ro"]
    page = t.page(1280, 800)
    run = env.plan_run("broken", "broken")
    for fname, path in (("instances", "/"), ("instance", "/instances/zk"),
                        ("run", f"/instances/broken/runs/{run['id']}"), ("engines", "/engines")):
        load(t, page, srv.url + path)
        shot(env, page, fname)
        p = os.path.join(env.artifacts, fname + ".png")
        with open(p, "rb") as f:
            t.expect(f.read(8) == b"\x89PNG\r\n\x1a\n", f"{p} is not a PNG")


CASES = [test_instances_page, test_navigation, test_instance_tree, test_live_update, test_poll_fallback,
         test_failed_output, test_running_output, test_actions_readonly, test_actions, test_queue_plans, test_hostile_text,
         test_engines_page, test_token, test_phone_width, test_screenshots,
         test_no_console_errors]


def main(argv):
    if not os.access(cdp.CHROMIUM, os.X_OK):
        if os.environ.get("CI") == "true":
            print(f"{cdp.CHROMIUM} is missing; CI must run the browser tests")
            return 1
        print(f"skipped: {cdp.CHROMIUM} is missing (apt-get install chromium)")
        return 77
    only = argv[1:]
    env = Env()
    print(f"temp dir {env.tmp}; screenshots in {env.artifacts}")
    failed = []
    try:
        try:
            env.setup()
        except (Failed, cdp.CDPError) as e:
            print(f"FAIL setup: {e}")
            failed.append("setup")
            return 1
        for fn in CASES:
            name = fn.__name__.removeprefix("test_")
            if only and not any(o in name for o in only):
                continue
            t = Case(env, name)
            start = time.monotonic()
            try:
                fn(env, t)
            except (Failed, cdp.CDPError) as e:
                t.failures.append(str(e))
            except Exception:
                t.failures.append("unexpected error:\n" + traceback.format_exc())
            finally:
                t.finish()
            took = time.monotonic() - start
            if t.failures:
                failed.append(name)
                print(f"FAIL {name} ({took:.1f}s): {fn.__doc__.splitlines()[0]}")
                for f in t.failures:
                    print("    - " + f.replace("\n", "\n      "))
            else:
                print(f"ok   {name} ({took:.1f}s)")
    finally:
        for p in env.teardown():
            print("FAIL teardown: " + p)
            failed.append("teardown")
        if failed:
            print(f"{len(failed)} failed: {', '.join(failed)}; kept {env.tmp} (logs, database)")
        else:
            shutil.rmtree(env.tmp, ignore_errors=True)
            print("all passed")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
