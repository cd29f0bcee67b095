# lib.sh - what the hostile-input tests share (sourced, not run).
#
# The caller sets `bin` (the planctl binary) and `src` (the source
# directory) from its arguments and sources this file, which makes a
# temporary directory $T (removed on exit) with PLANCTL_DB=$T/planctl.db,
# and defines:
#   planctl ARGS...   the binary under test
#   fail MESSAGE      prints "FAIL: MESSAGE" and counts it
#   ok MESSAGE        prints "ok: MESSAGE"
#   expect_exit N WHAT CMD...
#                     runs CMD, its stderr to $T/err; fails unless it exits
#                     N and, when N is not 0, wrote exactly one line
#   finish            exits 1 if anything failed, else 0

set -u
failures=0
if [ ! -x "$bin" ]; then
    echo "$bin is not an executable" >&2
    exit 1
fi
bin=$(cd "$(dirname "$bin")" && pwd)/$(basename "$bin")
T=$(mktemp -d "${TMPDIR:-/tmp}/planctl-hostile.XXXXXX") || exit 1
trap 'chmod -R u+w "$T" 2>/dev/null; rm -rf "$T"' EXIT
PLANCTL_DB=$T/planctl.db
NO_COLOR=1
TZ=UTC
LC_ALL=C
export PLANCTL_DB NO_COLOR TZ LC_ALL
unset PLANCTL_NOW PLANCTL_KINDS

planctl() { "$bin" "$@"; }

fail() {
    echo "FAIL: $*"
    failures=$((failures + 1))
}

ok() { echo "ok: $*"; }

expect_exit() { # N WHAT CMD...
    want=$1
    what=$2
    shift 2
    "$@" > "$T/out" 2> "$T/err"
    got=$?
    lines=$(wc -l < "$T/err")
    if [ "$got" -ne "$want" ]; then
        fail "$what: exit $got, expected $want; stderr: $(cat "$T/err")"
    elif [ "$want" -ne 0 ] && [ "$lines" -ne 1 ]; then
        fail "$what: $lines lines on stderr, expected one: $(cat "$T/err")"
    elif [ "$want" -ne 0 ]; then
        ok "$what (exit $got): $(head -c 300 "$T/err")"
    else
        ok "$what (exit $got)"
    fi
}

# A fingerprint of what the database holds (events, instances,
# definitions), to show that a refused command changed nothing.
db_state() {
    planctl events -o jsonl 2>&1 | cksum
    planctl instances -o json 2>&1 | cksum
    planctl definitions -o json 2>&1 | cksum
}

finish() {
    if [ "$failures" -ne 0 ]; then
        echo "$failures check(s) failed"
        exit 1
    fi
    echo "all checks passed"
    exit 0
}
