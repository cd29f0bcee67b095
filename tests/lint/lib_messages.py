#!/usr/bin/env python3
"""lib_messages.py - no library message names a CLI flag or command.

The library (src/core, src/store, src/engine) says what is wrong: the thing
and its state.  How to fix it with `planctl`'s flags and commands is the
CLI's to say (src/cli/hints.c); an embedder, the web API and the Go
package say it in their own words.  This scans the string literals of the
library's C files, adjacent literals joined as the compiler joins them,
and fails on one that names a long flag (--queue) or `planctl <command>`
for a command of the CLI (the cmd_*.c files of src/cli/cmd).

Usage: lib_messages.py SOURCE_DIR
"""
import os
import re
import sys

# Files whose literals are not messages, each with the reason.
ALLOWED = {
    # The definition reference (planctl explain, planctl-definition(5)),
    # written for the CLI's user, not a message.
    "src/core/schema.c": "the definition reference, not a message",
    # The argv of setpriv, which the shell executor runs.
    "src/engine/exec_shell.c": "argv of setpriv --pdeathsig, not a message",
}

LITERAL = re.compile(r'"((?:[^"\\\n]|\\.)*)"')


def strip_comments(text):
    """Drops comments and character literals, keeping strings."""
    out, i, n = [], 0, len(text)
    while i < n:
        c = text[i]
        if text.startswith("/*", i):
            j = text.find("*/", i + 2)
            j = n if j < 0 else j + 2
            out.append(" " + "\n" * text.count("\n", i, j))
            i = j
        elif text.startswith("//", i):
            j = text.find("\n", i)
            i = n if j < 0 else j
        elif c == '"':
            j = i + 1
            while j < n and text[j] != '"':
                j += 2 if text[j] == "\\" else 1
            out.append(text[i:j + 1])
            i = j + 1
        elif c == "'":
            j = i + 1
            while j < n and text[j] != "'":
                j += 2 if text[j] == "\\" else 1
            out.append(" ")
            i = j + 1
        else:
            out.append(c)
            i += 1
    return "".join(out)


def joined_literals(code):
    """Yields (line, text) of each run of adjacent string literals."""
    pos, run, start = 0, None, 0
    for m in LITERAL.finditer(code):
        between = code[pos:m.start()]
        if run is not None and between.strip() == "":
            run += m.group(1)
        else:
            if run is not None:
                yield code.count("\n", 0, start) + 1, run
            run, start = m.group(1), m.start()
        pos = m.end()
    if run is not None:
        yield code.count("\n", 0, start) + 1, run


def main():
    root = sys.argv[1]
    cmd_dir = "src/cli/cmd"
    commands = sorted(
        f[4:-2] for f in os.listdir(os.path.join(root, cmd_dir))
        if f.startswith("cmd_") and f.endswith(".c"))
    if not commands:
        # No command names would make the check below pass on anything.
        print(f"lib_messages: no cmd_*.c in {cmd_dir}; where did the "
              "commands go? (fix cmd_dir in tests/lint/lib_messages.py)")
        return 1
    flag = re.compile(r"(?<![\w-])--[a-z][a-z-]*")
    command = re.compile(r"\bplanctl (%s)\b" % "|".join(commands))
    bad = 0
    for folder in ("src/core", "src/store", "src/engine"):
        for dirpath, _, files in os.walk(os.path.join(root, folder)):
            for name in sorted(files):
                if not name.endswith((".c", ".h")):
                    continue
                path = os.path.join(dirpath, name)
                rel = os.path.relpath(path, root)
                if rel in ALLOWED:
                    continue
                with open(path, encoding="utf-8") as f:
                    code = strip_comments(f.read())
                for line, text in joined_literals(code):
                    hit = flag.search(text) or command.search(text)
                    if hit:
                        print("%s:%d: library message names the CLI (%s): "
                              "\"%s\"" % (rel, line, hit.group(0), text))
                        bad += 1
    if bad:
        print("%d library message(s) name a CLI flag or command: say the "
              "thing and its state, and add the advice in src/cli/hints.c"
              % bad)
        return 1
    print("no library message names a CLI flag or command (%d commands "
          "known)" % len(commands))
    return 0


if __name__ == "__main__":
    sys.exit(main())
