#!/bin/sh
# controller.sh - the example controller (tools/examples/controller) built
# out of tree against the installed planctl, as its README says, and run.
#
# Usage: sh controller.sh MODE, MODE one of
#   cmake          find_package(planctl), linking planctl::planctl
#   cmake-static   find_package(planctl), linking planctl::planctl_static
#   make           the Makefile (pkg-config), shared library
#   make-static    the Makefile (pkg-config --static), static library
#   sigterm        the Makefile build, run as a service: it deploys, takes
#                  a parameter change made with the installed planctl
#                  command, and stops cleanly on SIGTERM
# The first four run the controller's --scenario: create, update and
# delete of an instance whose File tasks write, rewrite and remove files.
#
# Needs the prefix that install_prefix.sh filled (the ctest fixture), and
# the environment described there plus PLANCTL_WORK (a scratch directory).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
LC_ALL=C
export LC_ALL

[ $# -eq 1 ] || fail "usage: sh controller.sh MODE"
mode=$1
src=$PLANCTL_SRC/tools/examples/controller
lib=$(in_prefix "$PLANCTL_LIBDIR")
planctl=$(in_prefix "$PLANCTL_BINDIR")/planctl
major=${PLANCTL_VERSION%%.*}
work=$PLANCTL_WORK/$mode
[ -f "$lib/pkgconfig/planctl.pc" ] || fail "planctl is not installed in $PLANCTL_PREFIX"
rm -rf "$work"
mkdir -p "$work"

# ---- build ----
case $mode in
cmake | cmake-static)
    static=OFF
    [ "$mode" = cmake-static ] && static=ON
    "$CMAKE" -S "$src" -B "$work/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_PREFIX_PATH="$PLANCTL_PREFIX" -DCMAKE_C_COMPILER="$CC" \
        -DCMAKE_C_FLAGS="$SAN_FLAGS -Werror" -DCMAKE_EXE_LINKER_FLAGS="$SAN_FLAGS" \
        -DCONTROLLER_STATIC=$static >"$work/configure.log" 2>&1 ||
        { cat "$work/configure.log"; fail "configuring the example failed"; }
    found=$(sed -n 's/^planctl_DIR:PATH=//p' "$work/build/CMakeCache.txt")
    [ "$(cd "$found" && pwd -P)" = "$(cd "$(in_prefix "$PLANCTL_CMAKEDIR")" && pwd -P)" ] ||
        fail "find_package found planctl in \"$found\", not in the prefix"
    "$CMAKE" --build "$work/build" >"$work/build.log" 2>&1 ||
        { cat "$work/build.log"; fail "building the example failed"; }
    bin=$work/build/controller
    ;;
make | make-static | sigterm)
    # As a controller author would: the example's files in a directory of
    # their own, and make.
    mkdir "$work/src"
    cp "$src"/*.c "$src"/*.h "$src/Makefile" "$src/site.json" "$work/src/"
    static=
    [ "$mode" = make-static ] && static=STATIC=1
    # shellcheck disable=SC2086
    PKG_CONFIG_PATH=$lib/pkgconfig make -C "$work/src" CC="$CC" \
        PKG_CONFIG="$PKG_CONFIG" CFLAGS="-O1 -g -Werror $SAN_FLAGS" \
        LDFLAGS="$SAN_FLAGS" $static >"$work/build.log" 2>&1 ||
        { cat "$work/build.log"; fail "make of the example failed"; }
    bin=$work/src/controller
    ;;
*)
    fail "unknown mode $mode"
    ;;
esac
[ -x "$bin" ] || fail "no controller binary at $bin"
case $mode in
*static)
    needs "$bin" libplanctl.so && fail "$mode: the controller loads libplanctl.so"
    ;;
*)
    needs "$bin" "libplanctl.so.$major" ||
        fail "$mode: the controller does not load libplanctl.so.$major"
    ;;
esac

db=$work/site.db
dir=$work/site

# ---- the scenario ----
if [ "$mode" != sigterm ]; then
    "$bin" --db "$db" --dir "$dir" --definition "$src/site.json" --scenario \
        >"$work/out" 2>&1
    rc=$?
    cat "$work/out"
    [ $rc -eq 0 ] || fail "$mode: the scenario exited $rc"
    grep -q '^controller: scenario passed$' "$work/out" ||
        fail "$mode: the scenario did not pass"
    grep -q '^controller: stopped cleanly$' "$work/out" ||
        fail "$mode: the controller did not stop cleanly"
    # Seen from outside, with the installed planctl: the log agrees with the
    # tables, the instance is gone, and so are its files.
    "$planctl" --db "$db" verify || fail "$mode: planctl verify failed"
    "$planctl" --db "$db" status site >/dev/null 2>&1
    rc=$?
    [ $rc -eq 4 ] || fail "$mode: instance site still there (status exit $rc)"
    [ -z "$(ls -A "$dir")" ] || fail "$mode: $dir is not empty: $(ls -A "$dir")"
    echo "controller.sh: $mode: scenario passed"
    exit 0
fi

# ---- sigterm: a service, driven from outside ----
# timeout(1) is only a safety net for a hung controller.
timeout -s KILL 120 "$bin" --db "$db" --dir "$dir" \
    --definition "$src/site.json" -p OWNER=ci >"$work/out" 2>&1 &
tpid=$!

# wait_for CONDITION WHAT: polls CONDITION (evaluated each time, hence
# the single quotes at the calls) for up to 60 s.
wait_for() {
    i=0
    while [ $i -lt 600 ]; do
        eval "$1" && return 0
        kill -0 $tpid 2>/dev/null || { cat "$work/out"; fail "the controller exited while waiting for $2"; }
        sleep 0.1
        i=$((i + 1))
    done
    cat "$work/out"
    fail "timed out waiting for $2"
}

# shellcheck disable=SC2016
wait_for 'grep -q "^controller: site: deploy run 1 COMPLETE$" "$work/out"' \
    "the deploy to complete"
pid=$(sed -n 's/^controller: running (pid \([0-9]*\)).*/\1/p' "$work/out")
[ -n "$pid" ] || fail "the controller did not say its pid"
[ "$(cat "$dir/index.html")" = "<h1>Hello</h1>" ] || fail "index.html: $(cat "$dir/index.html")"
[ "$(cat "$dir/about/index.html")" = "<p>Run by ci.</p>" ] ||
    fail "about/index.html: $(cat "$dir/about/index.html")"

# The planctl command changes a parameter; the embedded engine runs update.
"$planctl" --db "$db" set site -p TITLE=Changed || fail "planctl set failed"
# shellcheck disable=SC2016
wait_for 'grep -q "^controller: site: update run 2 COMPLETE$" "$work/out"' \
    "the update to complete"
[ "$(cat "$dir/index.html")" = "<h1>Changed</h1>" ] ||
    fail "after the update, index.html: $(cat "$dir/index.html")"

# The controller holds the engine lease: a second engine is refused.
"$planctl" --db "$db" run --until-idle >"$work/second.out" 2>&1
rc=$?
[ $rc -eq 3 ] || { cat "$work/second.out"; fail "a second engine exited $rc, expected 3"; }

kill -TERM "$pid" || fail "cannot signal the controller"
wait $tpid
rc=$?
cat "$work/out"
[ $rc -eq 0 ] || fail "after SIGTERM the controller exited $rc"
grep -q '^controller: SIGTERM: stopping' "$work/out" || fail "no SIGTERM message"
grep -q '^controller: engine stopped$' "$work/out" || fail "the engine did not stop"
grep -q '^controller: stopped cleanly$' "$work/out" || fail "not stopped cleanly"

# Stopped cleanly: the lease is released (an engine starts at once and
# finds nothing to do), the log agrees with the tables, the files stay.
"$planctl" --db "$db" run --until-idle || fail "an engine after the controller failed"
"$planctl" --db "$db" verify || fail "planctl verify failed"
"$planctl" --db "$db" history site --limit 1 -o json | tr -d ' \n' |
    grep -q '"plan":"update","status":"COMPLETE"' ||
    fail "the latest run after the stop is not update, COMPLETE"
[ "$(cat "$dir/index.html")" = "<h1>Changed</h1>" ] || fail "index.html changed after the stop"
echo "controller.sh: sigterm: served, updated from the CLI, stopped cleanly"
