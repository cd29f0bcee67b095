#!/bin/sh
# run_static.sh - a fully static Go binary: the example controller
# (src/go/examples/controller) linked with -extldflags -static against a
# libplanctl.a built without the PostgreSQL backend (Debian ships libpq.a
# but not the static archives of libpq's own dependencies, so a static
# binary with PostgreSQL cannot be linked there), libuv, SQLite and
# jansson's archives.  It must be a static executable, and run a
# reconcile pass.
#
# Usage: sh run_static.sh SOURCE_DIR WORK_DIR [LIBPLANCTL_A]
#   LIBPLANCTL_A: a libplanctl.a built without PostgreSQL; without it,
#   one is built in WORK_DIR/lib (cmake, target planctl_static).
set -u
src=$1 work=$2 lib=${3:-}

if ! command -v go >/dev/null 2>&1; then
    if [ "${CI:-}" = true ]; then
        echo "run_static: no go on the PATH (CI=true: required)" >&2
        exit 1
    fi
    echo "run_static: no go on the PATH: skipped (apt-get install golang-go)" >&2
    exit 77
fi
fail() { echo "run_static: FAIL: $*" >&2; exit 1; }
mkdir -p "$work" || exit 1

if [ -z "$lib" ]; then
    cmake -S "$src" -B "$work/lib" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DPLANCTL_TESTS=OFF -DPLANCTL_WITH_POSTGRES=OFF >"$work/cmake.log" 2>&1 &&
        cmake --build "$work/lib" --target planctl_static >>"$work/cmake.log" 2>&1 ||
        { tail -20 "$work/cmake.log" >&2; fail "libplanctl.a without PostgreSQL does not build"; }
    lib=$work/lib/libplanctl.a
fi
[ -f "$lib" ] || fail "no $lib"

# The archives, each where the linker finds it by -l: libuv's is
# libuv_a.a on Debian (libuv.a elsewhere).
arch=$work/archives
rm -rf "$arch" && mkdir -p "$arch/pc" || exit 1
cp "$lib" "$arch/libplanctl.a"
multi=$(gcc -print-multiarch 2>/dev/null)
for d in "/usr/lib/$multi" /usr/lib /usr/local/lib; do
    for f in libuv_a.a libuv.a; do
        if [ -f "$d/$f" ] && [ ! -e "$arch/libuv.a" ]; then
            ln -s "$d/$f" "$arch/libuv.a"
        fi
    done
done
[ -e "$arch/libuv.a" ] || fail "no static libuv (libuv_a.a or libuv.a; apt-get install libuv1-dev)"
cat >"$arch/pc/planctl.pc" <<PC
Name: planctl
Description: libplanctl.a without PostgreSQL, for a static binary
Version: 0.1.0
Libs: -L$arch -Wl,--start-group -lplanctl -luv -lsqlite3 -ljansson -lm -lpthread -ldl -Wl,--end-group
Cflags: -I$src/src
PC

# A build cache of its own: Go does not key its cache on pkg-config's
# --libs, so a package built before against the shared library would
# bring its link flags along.
export GOCACHE="$work/cache" GOPATH="$work/gopath" GOFLAGS=-mod=mod \
    GOPROXY=off GOTOOLCHAIN=local CGO_ENABLED=1 PKG_CONFIG_PATH="$arch/pc"
(cd "$src/src/go" && go build -ldflags '-linkmode external -extldflags -static' \
    -o "$work/controller" ./examples/controller) >"$work/build.log" 2>&1 ||
    { cat "$work/build.log" >&2; fail "the static build failed"; }
case $(file -b "$work/controller" 2>/dev/null || echo unknown) in
*"statically linked"* | *"static-pie linked"*) ;;
unknown)
    ldd "$work/controller" 2>&1 | grep -q "not a dynamic executable" ||
        fail "not a static executable: $(ldd "$work/controller" 2>&1)"
    ;;
*) fail "not a static executable: $(file -b "$work/controller")" ;;
esac

rm -rf "$work/run" && mkdir -p "$work/run/sites" && cd "$work/run" || exit 1
echo '{"title": "Static"}' >sites/s.json
"$work/controller" -once -sites sites -out www -db c.db >out 2>&1 ||
    fail "the static controller failed: $(cat out)"
grep -q "s: deploy COMPLETE" out || fail "the pass did not complete: $(cat out)"
[ "$(cat www/s/index.html)" = "<h1>Static</h1>" ] || fail "index.html: $(cat www/s/index.html)"
echo "run_static: a static binary ($(wc -c <"$work/controller") bytes) ran a reconcile pass"
