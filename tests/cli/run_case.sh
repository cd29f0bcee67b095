#!/bin/sh
# run_case.sh - runs one planctl CLI test case and compares its output.
#
# Usage (ctest does this for every tests/cli/<case>/ holding a file "cmd"):
#     sh run_case.sh PLANCTL_BINARY CASE_DIR SOURCE_DIR
#
# The case's "cmd" script runs in a fresh temporary directory with
#     PLANCTL_DB=$tmp/planctl.db NO_COLOR=1 TZ=UTC LC_ALL=C
#     PLANCTL_NOW=2026-11-21T14:03:05Z SRC=SOURCE_DIR
# and the binary's directory first in PATH, so it calls plain `planctl`.
# Its stdout and stderr, merged, must equal CASE_DIR/expected; the temporary
# directory's path is shown as $TMP there.  cmd prints exit codes itself
# where they matter (`planctl status zz; echo "exit=$?"`).
#
# Environment:
#     UPDATE=1      rewrite CASE_DIR/expected with the actual output instead
#                   of comparing (then review the diff by eye before
#                   committing it).
#     CLI_WRAPPER   a command to run planctl under, e.g.
#                   CLI_WRAPPER="valgrind -q --leak-check=full
#                   --errors-for-leak-kinds=all --error-exitcode=99"; its
#                   complaints show up as differences.

set -u

if [ $# -ne 3 ]; then
    echo "usage: sh run_case.sh PLANCTL_BINARY CASE_DIR SOURCE_DIR" >&2
    exit 2
fi

abspath() {
    (cd "$(dirname "$1")" && printf '%s/%s\n' "$(pwd)" "$(basename "$1")")
}

bin=$(abspath "$1") || exit 1
case_dir=$(cd "$2" && pwd) || exit 1
src=$(cd "$3" && pwd) || exit 1

if [ ! -x "$bin" ]; then
    echo "run_case.sh: $bin is not an executable" >&2
    exit 1
fi

root=$(mktemp -d "${TMPDIR:-/tmp}/planctl-cli.XXXXXX") || exit 1
trap 'rm -rf "$root"' EXIT
trap 'exit 130' INT TERM
tmp=$root/work
mkdir "$tmp" "$root/bin" || exit 1

# With a wrapper, a small planctl script in a directory of its own comes
# first in PATH; it stays out of the case's working directory.
if [ -n "${CLI_WRAPPER:-}" ]; then
    cat > "$root/bin/planctl" <<WRAP
#!/bin/sh
exec $CLI_WRAPPER "$bin" "\$@"
WRAP
    chmod +x "$root/bin/planctl"
    # The binary's directory still follows, for the test tools built
    # beside it (xmlcheck).
    PATH=$root/bin:$(dirname "$bin"):$PATH
else
    PATH=$(dirname "$bin"):$PATH
fi

PLANCTL_DB=$tmp/planctl.db
NO_COLOR=1
TZ=UTC
LC_ALL=C
PLANCTL_NOW=2026-11-21T14:03:05Z
SRC=$src
export PATH PLANCTL_DB NO_COLOR TZ LC_ALL PLANCTL_NOW SRC
unset COLUMNS

cd "$tmp" || exit 1
sh "$case_dir/cmd" > "$root/raw" 2>&1 < /dev/null
# Paths under the temporary directory differ on every run.  Under
# libfaketime (the cli.ahead1y/behind1y cases), its own complaints about
# the semaphore it shares between a process and its children are dropped:
# seen once in hundreds of runs ("sem_open failed ... created locally:
# false"), they say nothing of planctl, and every process still reads the
# faked time from FAKETIME.
if [ -n "${FAKETIME:-}" ]; then
    grep -v '^libfaketime: ' "$root/raw" > "$root/raw.kept"
    mv "$root/raw.kept" "$root/raw"
fi
sed "s|$tmp|\$TMP|g" "$root/raw" > "$root/actual"

if [ "${UPDATE:-}" = 1 ]; then
    cp "$root/actual" "$case_dir/expected" || exit 1
    echo "updated $case_dir/expected"
    exit 0
fi

if [ ! -f "$case_dir/expected" ]; then
    echo "run_case.sh: $case_dir/expected is missing; run with UPDATE=1" >&2
    cat "$root/actual"
    exit 1
fi
diff -u "$case_dir/expected" "$root/actual"
