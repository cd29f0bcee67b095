#!/bin/sh
# run_controller.sh - builds the Go example controller
# (src/go/examples/controller) against the libplanctl just built and runs
# three reconcile passes over a directory of site specs: two sites
# created; one changed and one removed; nothing to do.  Its output is
# compared with controller.expected, the files it made are checked, and
# the shell step's output is read back with the planctl command.
#
# Usage: sh run_controller.sh SOURCE_DIR PC_DIR WORK_DIR PLANCTL
set -u
src=$1 pcdir=$2 work=$3 planctl=$4
here=$src/tests/go

if ! command -v go >/dev/null 2>&1; then
    if [ "${CI:-}" = true ]; then
        echo "run_controller: no go on the PATH (CI=true: required; apt-get install golang-go)" >&2
        exit 1
    fi
    echo "run_controller: no go on the PATH: skipped (apt-get install golang-go)" >&2
    exit 77
fi
fail() { echo "run_controller: FAIL: $*" >&2; exit 1; }

rm -rf "$work/run" && mkdir -p "$work/run/sites" || exit 1
export GOCACHE="${PLANCTL_GOCACHE:-$work/cache}" GOPATH="$work/gopath" GOFLAGS=-mod=mod \
    GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=1 PKG_CONFIG_PATH="$pcdir"
(cd "$src/src/go" && go build -o "$work/controller" ./examples/controller) ||
    fail "the controller does not build"

cd "$work/run" || exit 1
pass() { "$work/controller" -once -sites sites -out www -db c.db >>out 2>&1 ||
    fail "pass $1 exited $?: $(cat out)"; }
echo '{"title": "Hi", "owner": "ann"}' >sites/alpha.json
echo '{"title": "Yo"}' >sites/beta.json
echo "# pass 1: alpha and beta are new" >out
pass 1
echo '{"title": "Bonjour", "owner": "ann"}' >sites/alpha.json
rm sites/beta.json
echo "# pass 2: alpha changed, beta removed" >>out
pass 2
echo "# pass 3: nothing changed" >>out
pass 3
diff -u "$here/controller.expected" out || fail "the output differs from controller.expected"

[ "$(cat www/alpha/index.html)" = "<h1>Bonjour</h1>" ] || fail "alpha's index.html: $(cat www/alpha/index.html)"
[ "$(cat www/alpha/about/index.html)" = "<p>Run by ann.</p>" ] || fail "alpha's about page"
[ -z "$(find www/beta -type f)" ] || fail "beta's files are still there: $(find www/beta -type f)"
# The shell step of alpha's update checked site.conf and said so.
"$planctl" --db c.db logs alpha --step check >logs 2>&1 || fail "planctl logs: $(cat logs)"
grep -q "site.conf says Bonjour" logs || fail "the shell step's output: $(cat logs)"
echo "run_controller: three passes as expected"
