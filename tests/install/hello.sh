#!/bin/sh
# hello.sh - tools/examples/hello/hello.c, the smallest whole embedder,
# built against the installed planctl exactly as its first lines say
# (cc hello.c -o hello $(pkg-config --cflags --libs planctl)) and run in an
# empty directory: both steps greeted, the deploy COMPLETE as the installed
# planctl command sees it, verify clean.
#
# Environment as for install_prefix.sh, plus PLANCTL_WORK.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
LC_ALL=C
export LC_ALL

lib=$(in_prefix "$PLANCTL_LIBDIR")
planctl=$(in_prefix "$PLANCTL_BINDIR")/planctl
work=$PLANCTL_WORK/hello
[ -f "$lib/pkgconfig/planctl.pc" ] || fail "planctl is not installed in $PLANCTL_PREFIX"
rm -rf "$work"
mkdir -p "$work"

src=$PLANCTL_SRC/tools/examples/hello/hello.c
build=$(sed -n 's/^ \*   \(cc hello.c .*\)$/\1/p' "$src")
[ -n "$build" ] || fail "hello.c no longer says how to build it"
cp "$src" "$work/"
PKG_CONFIG_PATH=$lib/pkgconfig
export PKG_CONFIG_PATH
libdir=$("$PKG_CONFIG" --variable=libdir planctl) || fail "no libdir in planctl.pc"
# The line of hello.c, with the compiler and flags of this build.
pc=$("$PKG_CONFIG" --cflags --libs planctl) || fail "pkg-config failed"
# shellcheck disable=SC2086
(cd "$work" && "$CC" $SAN_FLAGS -Wall -Wextra -Werror hello.c -o hello $pc) \
    >"$work/build.log" 2>&1 ||
    { cat "$work/build.log"; fail "$build failed"; }
(cd "$work" && LD_LIBRARY_PATH=$libdir ./hello) >"$work/out" 2>&1 ||
    { cat "$work/out"; fail "hello exited non-zero"; }
cat "$work/out"
for step in first second; do
    grep -q "^world: $step says {\"words\": *\"hello\"}$" "$work/out" ||
        fail "hello: step $step did not greet"
done
"$planctl" --db "$work/hello.db" verify >/dev/null || fail "hello: verify failed"
"$planctl" --db "$work/hello.db" history world -o json | tr -d ' \n' |
    grep -q '"plan":"deploy","status":"COMPLETE"' ||
    fail "hello: the deploy run of world is not COMPLETE"
echo "hello.sh: hello.c built as it says and ran its plan to COMPLETE"
