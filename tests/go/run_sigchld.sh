#!/bin/sh
# run_sigchld.sh - builds the Go regression of planctl.h's "Signals"
# (tests/go/sigchld) against the built libplanctl and runs it RUNS times
# (20 unless set): an engine's shell steps and goroutines' os/exec
# together.  Every run must end well: no crash of the Go runtime, and Go's
# SIGCHLD handler back after the engine.
#
# Usage: sh run_sigchld.sh SOURCE_DIR LIB_DIR WORK_DIR
#
# With no go on the PATH it skips (77), except with CI=true, where it
# fails: CI must run it (tools/dev installs Debian's golang-go).
set -u
src=$1 libdir=$2 work=$3
runs=${RUNS:-20}

if ! command -v go >/dev/null 2>&1; then
    if [ "${CI:-}" = true ]; then
        echo "run_sigchld: no go on the PATH (CI=true: required; apt-get install golang-go)" >&2
        exit 1
    fi
    echo "run_sigchld: no go on the PATH: skipped (apt-get install golang-go)" >&2
    exit 77
fi

mkdir -p "$work" || exit 1
# Standard library and cgo only: nothing to download, ever.
export GOCACHE="$work/cache" GOPATH="$work/gopath" GOFLAGS=-mod=mod \
    GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=1
export CGO_CFLAGS="-I$src/src" CGO_LDFLAGS="-L$libdir -Wl,-rpath,$libdir"
(cd "$src/tests/go/sigchld" && go build -o "$work/sigchld" .) || {
    echo "run_sigchld: the Go program does not build" >&2
    exit 1
}

ok=0 crashed=0 failed=0 i=1
while [ "$i" -le "$runs" ]; do
    "$work/sigchld" >"$work/out" 2>"$work/err"
    rc=$?
    if [ "$rc" -eq 0 ]; then
        ok=$((ok + 1))
    elif [ "$rc" -eq 2 ] || [ "$rc" -gt 128 ]; then
        # 2: the Go runtime's fatal error or panic; >128: killed by a
        # signal.
        crashed=$((crashed + 1))
        echo "run $i: crashed (exit $rc):" >&2
        head -n 5 "$work/err" >&2
    else
        failed=$((failed + 1))
        echo "run $i: failed (exit $rc):" >&2
        head -n 5 "$work/err" >&2
    fi
    i=$((i + 1))
done
echo "run_sigchld: $runs runs: $ok ok, $crashed crashed, $failed failed a check"
[ "$ok" -eq "$runs" ]
