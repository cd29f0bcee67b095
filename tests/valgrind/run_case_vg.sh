#!/bin/sh
# run_case_vg.sh - runs one CLI case (tests/cli/<case>/) with every planctl
# process under valgrind memcheck, and fails on any memory error or leak.
#
# Usage (ctest does this for each case when configured with
# -DPLANCTL_VALGRIND=ON, label "valgrind"):
#     sh run_case_vg.sh PLANCTL_BINARY CASE_DIR SOURCE_DIR
#
# The case runs through tests/cli/run_case.sh with CLI_WRAPPER set, so its
# output must still equal its "expected" file (except for the few cases
# listed in timing-sensitive, whose output depends on speed).  Valgrind writes its reports
# to files of their own (one per process), not to the case's stderr, so a
# case that discards stderr cannot hide them; this script then requires
# every report to show zero errors, leaks of kinds definite and indirect
# counting as errors (--errors-for-leak-kinds), and prints the reports that
# do not.  "Still reachable" memory (libuv's and SQLite's process-lifetime
# allocations) is not an error.  A process that never reaches its summary
# (one the case kills with SIGKILL on purpose) must at least have reported
# no error before it died.  Shell tasks and other programs planctl starts
# are not traced (a child is silent between fork and exec).

set -u

if [ $# -ne 3 ]; then
    echo "usage: sh run_case_vg.sh PLANCTL_BINARY CASE_DIR SOURCE_DIR" >&2
    exit 2
fi
valgrind=$(command -v valgrind) || {
    echo "run_case_vg.sh: valgrind is not installed (apt-get install valgrind)" >&2
    exit 1
}

logs=$(mktemp -d "${TMPDIR:-/tmp}/planctl-vg.XXXXXX") || exit 1
trap 'rm -rf "$logs"' EXIT
# The read-only case runs planctl as another user (setpriv), which must be
# able to write its report here too.
chmod 0777 "$logs"

CLI_WRAPPER="$valgrind --log-file=$logs/vg.%p.log --error-exitcode=99 \
--leak-check=full --errors-for-leak-kinds=definite,indirect \
--show-leak-kinds=definite,indirect --child-silent-after-fork=yes \
--num-callers=30"
export CLI_WRAPPER

sh "$3/tests/cli/run_case.sh" "$1" "$2" "$3"
rc=$?
case_name=$(basename "$2")
if [ "$rc" -ne 0 ] &&
    grep -q "^$case_name	" "$(dirname "$0")/timing-sensitive"; then
    echo "run_case_vg.sh: $case_name is timing-sensitive (see" \
        "tests/valgrind/timing-sensitive): its output is not compared" \
        "under valgrind"
    rc=0
fi

# What memcheck writes when it finds something, summary or not.
errors='Invalid (read|write|free)|uninitialised|Mismatched free|Syscall param|overlap|are (definitely|indirectly) lost|Process terminating|Jump to the invalid'
n=0
bad=0
cut=0
for log in "$logs"/vg.*.log; do
    [ -s "$log" ] || continue # a forked child, silent until its exec
    n=$((n + 1))
    if grep -q 'ERROR SUMMARY: ' "$log"; then
        grep -q 'ERROR SUMMARY: 0 errors' "$log" && continue
    elif ! grep -Eq "$errors" "$log"; then
        cut=$((cut + 1)) # killed before its summary, nothing reported
        continue
    fi
    bad=$((bad + 1))
    echo "--- valgrind report $log"
    cat "$log"
done
echo "valgrind: $n planctl process(es), $bad with errors or leaks, $cut killed before their summary"
if [ "$n" -eq 0 ]; then
    echo "run_case_vg.sh: no valgrind report was written" >&2
    exit 1
fi
[ "$bad" -eq 0 ] && [ "$rc" -eq 0 ]
