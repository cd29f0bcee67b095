#!/bin/sh
# run_package.sh - the Go package's checks (src/go), against the
# libplanctl just built, through pkg-config (PC_DIR holds a planctl.pc for
# the build tree, tests/go/CMakeLists.txt).
#
# Usage: sh run_package.sh SOURCE_DIR PC_DIR WORK_DIR WHAT
#   WHAT: vet     go vet (with its stdversion check: nothing of the
#                 standard library newer than go.mod's go 1.19), gofmt, and
#                 a build with CGO_ENABLED=0 that must fail saying why
#         race    go test -race (many goroutines, own and shared handles)
#         cgocheck go test with the strictest cgo pointer checks
#         pg      go test on PostgreSQL (PLANCTL_PG_STATE: the suite's
#                 cluster), each test in a schema of its own
#
# With no go on the PATH it skips (77), except with CI=true, where it
# fails: CI must run it (tools/dev installs Debian's golang-go).
set -u
src=$1 pcdir=$2 work=$3 what=$4

if ! command -v go >/dev/null 2>&1; then
    if [ "${CI:-}" = true ]; then
        echo "run_package: no go on the PATH (CI=true: required; apt-get install golang-go)" >&2
        exit 1
    fi
    echo "run_package: no go on the PATH: skipped (apt-get install golang-go)" >&2
    exit 77
fi

mkdir -p "$work" || exit 1
# Standard library and cgo only: nothing to download, ever.
export GOCACHE="${PLANCTL_GOCACHE:-$work/cache}" GOPATH="$work/gopath" GOFLAGS=-mod=mod \
    GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=1 PKG_CONFIG_PATH="$pcdir"
unset PLANCTL_GO_PG
cd "$src/src/go" || exit 1

case $what in
vet)
    go vet ./... || exit 1
    bad=$(gofmt -l .)
    if [ -n "$bad" ]; then
        echo "run_package: not gofmt'ed: $bad" >&2
        exit 1
    fi
    # Without cgo the build must fail, naming why.
    if out=$(CGO_ENABLED=0 go build . 2>&1); then
        echo "run_package: the package built without cgo" >&2
        exit 1
    fi
    case $out in
    *planctl_package_needs_cgo__build_with_CGO_ENABLED_1*) ;;
    *)
        echo "run_package: the build without cgo failed without saying why:" >&2
        echo "$out" >&2
        exit 1
        ;;
    esac
    echo "run_package: vet, gofmt and the cgo-less build's message ok"
    ;;
race)
    go test -race -count=1 -timeout 600s ./... ;;
cgocheck)
    # GODEBUG=cgocheck=2 is the run-time setting of Go before 1.21; from
    # 1.21 on the same checks need the build experiment cgocheck2.
    minor=$(go env GOVERSION | sed -n 's/^go1\.\([0-9]*\).*/\1/p')
    if [ "${minor:-0}" -ge 21 ]; then
        GOEXPERIMENT=cgocheck2 go test -count=1 -timeout 600s ./...
    else
        GODEBUG=cgocheck=2 go test -count=1 -timeout 600s ./...
    fi
    ;;
pg)
    if [ ! -f "${PLANCTL_PG_STATE:-/nonexistent}/env" ]; then
        [ "${CI:-}" = true ] && { echo "run_package: no PostgreSQL cluster (CI=true requires one)" >&2; exit 1; }
        echo "run_package: no PostgreSQL cluster: skipped" >&2
        exit 77
    fi
    # shellcheck disable=SC1091
    . "$PLANCTL_PG_STATE/env"
    export PLANCTL_GO_PG="postgresql:///$PLANCTL_PG_CLI_DB?host=$PGHOST&port=$PGPORT&user=$PGUSER"
    go test -count=1 -timeout 600s ./...
    ;;
*)
    echo "run_package: WHAT is vet, race, cgocheck or pg, not $what" >&2
    exit 2
    ;;
esac
