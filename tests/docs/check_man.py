#!/usr/bin/env python3
"""check_man.py - the man pages are whole, render cleanly, and the README
points into them.

    check_man.py BUILD-DIR SOURCE-DIR
    check_man.py --self-test

Checks, each failure one line (exit 1):
  - every page (planctl.1, planctl-definition.5, planctl-json.7,
    planctl.3, planctl-engine.7) is in BUILD-DIR, has its .TH line, and
    `MANWIDTH=80 man --warnings -l PAGE` prints no warning;
  - planctl(3) names every function planctl.h declares;
  - every heading the README's reference table ("## Where the reference
    lives") names after a page, as in "planctl-engine(7) METRICS, LOGS",
    is a section (.SH) of that page;
  - the README has at most 400 lines and no paragraph, item or table cell
    of more than 8 lines, and its C snippet is planctl(3)'s EXAMPLE.
--self-test shows that a missing heading, a long paragraph and a
function planctl(3) lacks are each found.
"""
import os
import re
import subprocess
import sys
import tempfile

PAGES = {
    "planctl.1": "PLANCTL 1",
    "planctl-definition.5": "PLANCTL-DEFINITION 5",
    "planctl-json.7": "PLANCTL-JSON 7",
    "planctl.3": "PLANCTL 3",
    "planctl-engine.7": "PLANCTL-ENGINE 7",
}
PAGE_REF = re.compile(r"\b(planctl(?:-[a-z]+)?)\(([1-8])\)")
HEADINGS = re.compile(r"[A-Z][A-Z0-9:,'/ -]*[A-Z0-9]")


def unroff(s):
    """roff text as it reads: escapes of hyphens and guards removed."""
    s = s.replace("\\-", "-").replace("\\&", "").replace("\\%", "")
    return re.sub(r"\\f[BIRP]", "", s).replace("\\e", "\\")


def sections(text):
    return [unroff(line[4:]).strip() for line in text.splitlines()
            if line.startswith(".SH ")]


def render_warnings(path):
    env = dict(os.environ, MANWIDTH="80", LC_ALL="C.UTF-8")
    r = subprocess.run(["man", "--warnings", "-l", path], env=env,
                       stdout=subprocess.DEVNULL, stderr=subprocess.PIPE,
                       text=True)
    out = r.stderr.strip()
    if r.returncode != 0 and not out:
        out = "man exited %d" % r.returncode
    return out


def api_functions(header):
    return sorted(set(re.findall(r"PLANCTL_API\b[^;{(]*?\b(planctl_\w+)\s*\(",
                                 header, re.S)))


def missing_functions(header, page):
    text = unroff(page)
    return [f for f in api_functions(header)
            if not re.search(r"\b%s\b" % re.escape(f), text)]


def reference_table(readme):
    """The rows of the README's reference table: (line number, where)."""
    rows, inside = [], False
    for n, line in enumerate(readme.splitlines(), 1):
        if line.startswith("## "):
            inside = line == "## Where the reference lives"
        elif inside and line.startswith("|") and not set(line) <= set("|-: "):
            cells = [c.strip() for c in line.strip("|").split("|")]
            if len(cells) >= 2 and cells[0] != "what":
                rows.append((n, cells[-1]))
    return rows


def missing_headings(readme, pages):
    """Each heading the reference table names that its page lacks."""
    faults = []
    for n, where in reference_table(readme):
        for m in PAGE_REF.finditer(where):
            name = "%s.%s" % (m.group(1), m.group(2))
            if name not in pages:
                faults.append("README.md:%d: no page %s" % (n, name))
                continue
            have = sections(pages[name])
            rest = where[m.end():].lstrip()
            h = HEADINGS.match(rest)
            text = h.group(0) if h else ""
            while text:
                found = max((s for s in have if text == s or
                             text.startswith(s + ", ")), key=len, default=None)
                if not found:
                    faults.append("README.md:%d: %s(%s) has no section %r"
                                  % (n, m.group(1), m.group(2),
                                     text.split(", ")[0]))
                    break
                text = text[len(found):].lstrip(", ")
    return faults


def long_blocks(readme, limit=8):
    """Paragraphs, list items and table rows of the README longer than
    limit lines (outside fenced blocks)."""
    faults, block, start, fence = [], 0, 0, False
    lines = readme.splitlines()
    for n, line in enumerate(lines + [""], 1):
        if line.startswith("```"):
            fence = not fence
            block = 0
            continue
        if fence:
            continue
        new = (not line.strip() or line.startswith(("- ", "|", "#", "![")))
        if new or block == 0:
            if block > limit:
                faults.append("README.md:%d: a paragraph of %d lines (at most "
                              "%d)" % (start, block, limit))
            block, start = (0, n) if not line.strip() else (1, n)
            if line.startswith(("|", "#", "![")):
                block = 0
            continue
        block += 1
    if len(lines) > 400:
        faults.append("README.md: %d lines (at most 400)" % len(lines))
    return faults


def c_snippet(text):
    m = re.search(r"^```c\n(.*?)^```$", text, re.S | re.M)
    return m.group(1) if m else None


def check(build, src):
    faults, pages = [], {}
    for name, th in PAGES.items():
        path = os.path.join(build, name)
        if not os.path.isfile(path):
            faults.append("%s: not built" % path)
            continue
        with open(path) as fh:
            pages[name] = fh.read()
        if not re.search(r"^\.TH %s " % re.escape(th), pages[name], re.M):
            faults.append("%s: no .TH %s line" % (name, th))
        warnings = render_warnings(path)
        if warnings:
            faults.append("%s: man --warnings: %s" % (name, warnings))
    with open(os.path.join(src, "src", "planctl.h")) as fh:
        header = fh.read()
    with open(os.path.join(src, "README.md")) as fh:
        readme = fh.read()
    if "planctl.3" in pages:
        for f in missing_functions(header, pages["planctl.3"]):
            faults.append("planctl.3: %s() of planctl.h is not named" % f)
    faults += missing_headings(readme, pages)
    faults += long_blocks(readme)
    try:
        with open(os.path.join(src, "src", "cli", "doc", "man", "planctl.3.md")) as fh:
            page3 = fh.read()
    except OSError:
        page3 = ""
    if not c_snippet(readme) or c_snippet(readme) != c_snippet(page3):
        faults.append("README.md's C snippet is not the EXAMPLE of "
                      "src/cli/doc/man/planctl.3.md")
    return faults


def self_test():
    page = ".TH PLANCTL-ENGINE 7\n.SH METRICS\n.SH DEBUGGING: EVENTS, GC\n"
    readme = ("## Where the reference lives\n\n| what | where |\n|---|---|\n"
              "| a | planctl-engine(7) METRICS, DEBUGGING: EVENTS, GC |\n"
              "| b | planctl-engine(7) METRICS, LOGS; also x |\n")
    got = missing_headings(readme, {"planctl-engine.7": page})
    assert got == ["README.md:6: planctl-engine(7) has no section 'LOGS'"], got
    long = "x\n" * 9
    assert long_blocks(long) == [
        "README.md:1: a paragraph of 9 lines (at most 8)"], long_blocks(long)
    assert long_blocks("- a\n" + "  b\n" * 7 + "- c\n") == []
    header = "PLANCTL_API int planctl_a(void);\nPLANCTL_API int\nplanctl_b(int);\n"
    assert missing_functions(header, "\\fBplanctl_a()\\fR") == ["planctl_b"]
    with tempfile.TemporaryDirectory() as d:
        bad = os.path.join(d, "bad.7")
        with open(bad, "w") as fh:
            fh.write(".TH BAD 7\n.SH NAME\nbad \\- x\n.XY oops\n")
        assert render_warnings(bad), "man did not warn about .XY"
    print("check_man.py self-test: a missing heading, a long paragraph, an "
          "unnamed function and a bad page are each found")
    return 0


def main(argv):
    if argv[1:] == ["--self-test"]:
        return self_test()
    if len(argv) != 3:
        print(__doc__.split("\n\n")[1], file=sys.stderr)
        return 2
    try:
        subprocess.run(["man", "--version"], capture_output=True, check=True)
    except (OSError, subprocess.CalledProcessError):
        print("check_man.py: man(1) is not installed: apt-get install man-db",
              file=sys.stderr)
        return 1
    faults = check(argv[1], argv[2])
    for f in faults:
        print(f)
    if not faults:
        print("check_man.py: %d pages render without warnings and are whole; "
              "the README points into them" % len(PAGES))
    return 1 if faults else 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
