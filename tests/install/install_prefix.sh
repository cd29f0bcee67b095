#!/bin/sh
# install_prefix.sh - `cmake --install` into a fresh prefix, then checks
# what landed there: the libraries (SONAME and links), the header, the
# binary with its man pages (planctl(1), (3), (5) and both (7)), bash
# completion and the JSON Schemas of the documents, the CMake package, and
# planctl.pc (pkg-config for shared and static linking), building a small
# program against the installed header and library both ways.
#
# Environment (set by tests/install/CMakeLists.txt): PLANCTL_BUILD,
# PLANCTL_PREFIX, PLANCTL_SRC, PLANCTL_VERSION, PLANCTL_LIBDIR,
# PLANCTL_INCLUDEDIR, PLANCTL_BINDIR, PLANCTL_MANDIR, PLANCTL_DATADIR,
# PLANCTL_CMAKEDIR (relative to the prefix or absolute), CMAKE, CC,
# PKG_CONFIG, OBJDUMP, SAN_FLAGS (the sanitizer flags planctl was built
# with, for linking against it).
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
LC_ALL=C
export LC_ALL

prefix=$PLANCTL_PREFIX
rm -rf "$prefix" "$prefix.work"
mkdir -p "$prefix.work"
work=$prefix.work
"$CMAKE" --install "$PLANCTL_BUILD" --prefix "$prefix" >"$work/install.log" 2>&1 ||
    { cat "$work/install.log"; fail "cmake --install failed"; }

lib=$(in_prefix "$PLANCTL_LIBDIR")
inc=$(in_prefix "$PLANCTL_INCLUDEDIR")
bin=$(in_prefix "$PLANCTL_BINDIR")
man=$(in_prefix "$PLANCTL_MANDIR")
data=$(in_prefix "$PLANCTL_DATADIR")
cmakedir=$(in_prefix "$PLANCTL_CMAKEDIR")
major=${PLANCTL_VERSION%%.*}

for f in "$bin/planctl" "$inc/planctl.h" "$lib/libplanctl.a" \
    "$lib/libplanctl.so.$PLANCTL_VERSION" "$lib/pkgconfig/planctl.pc" \
    "$cmakedir/planctlConfig.cmake" "$cmakedir/planctlConfigVersion.cmake" \
    "$cmakedir/planctlTargets.cmake" "$man/man1/planctl.1" \
    "$man/man5/planctl-definition.5" "$man/man7/planctl-json.7" \
    "$man/man3/planctl.3" "$man/man7/planctl-engine.7" \
    "$data/bash-completion/completions/planctl" \
    "$data/zsh/site-functions/_planctl" \
    "$data/fish/vendor_completions.d/planctl.fish"; do
    [ -f "$f" ] || fail "not installed: $f"
done

# The shared library: libplanctl.so -> .so.MAJOR -> .so.VERSION, SONAME
# libplanctl.so.MAJOR.
[ "$(readlink "$lib/libplanctl.so")" = "libplanctl.so.$major" ] ||
    fail "$lib/libplanctl.so does not point to libplanctl.so.$major"
[ "$(readlink "$lib/libplanctl.so.$major")" = "libplanctl.so.$PLANCTL_VERSION" ] ||
    fail "$lib/libplanctl.so.$major does not point to libplanctl.so.$PLANCTL_VERSION"
soname=$("$OBJDUMP" -p "$lib/libplanctl.so.$PLANCTL_VERSION" |
    awk '$1 == "SONAME" { print $2 }')
[ "$soname" = "libplanctl.so.$major" ] ||
    fail "SONAME is \"$soname\", expected libplanctl.so.$major"

cmp -s "$PLANCTL_SRC/src/planctl.h" "$inc/planctl.h" ||
    fail "the installed planctl.h differs from src/planctl.h"
out=$("$bin/planctl" --version) || fail "installed planctl --version failed"
[ "$out" = "planctl $PLANCTL_VERSION" ] ||
    fail "installed planctl --version says \"$out\""
grep -q '^\.TH PLANCTL 1' "$man/man1/planctl.1" ||
    fail "the man page has no .TH PLANCTL 1 header"
grep -q '^\.TH PLANCTL-DEFINITION 5' "$man/man5/planctl-definition.5" ||
    fail "planctl-definition.5 has no .TH PLANCTL-DEFINITION 5 header"
grep -q '^\.TH PLANCTL-JSON 7' "$man/man7/planctl-json.7" ||
    fail "planctl-json.7 has no .TH PLANCTL-JSON 7 header"
grep -q '^\.TH PLANCTL 3' "$man/man3/planctl.3" ||
    fail "planctl.3 has no .TH PLANCTL 3 header"
grep -q '^\.TH PLANCTL-ENGINE 7' "$man/man7/planctl-engine.7" ||
    fail "planctl-engine.7 has no .TH PLANCTL-ENGINE 7 header"
# Each section holds planctl's pages and nothing else of it.
for d in man1 man3 man5 man7; do
    echo "$d: $(ls "$man/$d" | tr '\n' ' ')"
done
[ "$(ls "$man/man3")" = "planctl.3" ] || fail "man3 holds $(ls "$man/man3")"
[ "$(ls "$man/man7" | tr '\n' ' ')" = "planctl-engine.7 planctl-json.7 " ] ||
    fail "man7 holds $(ls "$man/man7" | tr '\n' ' ')"
grep -q 'complete .*planctl' "$data/bash-completion/completions/planctl" ||
    fail "the bash completion does not register with complete"
if command -v bash >/dev/null; then
    bash -n "$data/bash-completion/completions/planctl" ||
        fail "the bash completion is not valid bash"
fi
if command -v zsh >/dev/null; then
    zsh -n "$data/zsh/site-functions/_planctl" ||
        fail "the zsh completion is not valid zsh"
fi
if command -v fish >/dev/null; then
    fish --no-execute "$data/fish/vendor_completions.d/planctl.fish" ||
        fail "the fish completion is not valid fish"
fi
# The JSON Schemas of the documents (planctl-json(7)): as the installed
# planctl writes them, one a document.
"$bin/planctl" __schema "$work/schema" || fail "installed planctl __schema failed"
[ -f "$data/planctl/schema/status.json" ] ||
    fail "not installed: $data/planctl/schema/status.json"
diff -r "$work/schema" "$data/planctl/schema" >/dev/null ||
    fail "$data/planctl/schema differs from what planctl __schema writes"

# pkg-config.
PKG_CONFIG_PATH=$lib/pkgconfig
export PKG_CONFIG_PATH
v=$("$PKG_CONFIG" --modversion planctl) || fail "pkg-config cannot read planctl.pc"
[ "$v" = "$PLANCTL_VERSION" ] || fail "planctl.pc has version $v"
cflags=$("$PKG_CONFIG" --cflags planctl)
libs=$("$PKG_CONFIG" --libs planctl)
static=$("$PKG_CONFIG" --static --libs planctl)
public=$("$PKG_CONFIG" --print-requires planctl)
private=$("$PKG_CONFIG" --print-requires-private planctl)
echo "pkg-config --cflags: $cflags"
echo "pkg-config --libs: $libs"
echo "pkg-config --static --libs: $static"
has "$cflags" "-I$inc" || fail "--cflags lacks -I$inc"
{ has "$libs" "-L$lib" && has "$libs" -lplanctl; } || fail "--libs lacks -L$lib -lplanctl"
# libuv is part of the interface (the embedder runs its loop with
# uv_run), so plain --libs has it; SQLite and jansson are --static only.
has "$libs" -luv || fail "--libs lacks -luv, which an embedder calling uv_run needs"
for l in -lsqlite3 -ljansson; do
    has "$libs" "$l" && fail "--libs has $l, which belongs to --static only"
done
for l in -lsqlite3 -luv -ljansson -lm -lpthread; do
    has "$static" "$l" || fail "--static --libs lacks $l"
done
echo "$public" | grep -q "^libuv" || fail "Requires lacks libuv"
for m in sqlite3 jansson; do
    echo "$public" | grep -q "^$m" && fail "Requires has $m, which belongs to Requires.private"
    echo "$private" | grep -q "^$m" || fail "Requires.private lacks $m"
done

# A program against the installed package: shared (with the rpath) and
# static, each checking the version macros against the library and the
# build's project version.
# shellcheck disable=SC2086
"$CC" $SAN_FLAGS -std=c11 -Wall -Wextra -Werror $cflags -o "$work/v-shared" \
    "$here/version.c" $libs -Wl,-rpath,"$lib" ||
    fail "cannot build against the shared library with pkg-config"
needs "$work/v-shared" "libplanctl.so.$major" ||
    fail "v-shared does not load libplanctl.so.$major"
"$work/v-shared" "$PLANCTL_VERSION" || fail "version check (shared) failed"
static_libs=$(echo "$static" | sed 's/-lplanctl\b/-l:libplanctl.a/')
# shellcheck disable=SC2086
"$CC" $SAN_FLAGS -std=c11 -Wall -Wextra -Werror $cflags -o "$work/v-static" \
    "$here/version.c" $static_libs ||
    fail "cannot build against the static library with pkg-config --static"
needs "$work/v-static" "libplanctl.so" &&
    fail "v-static loads libplanctl.so; it should be linked statically"
"$work/v-static" "$PLANCTL_VERSION" || fail "version check (static) failed"
echo "install_prefix: installed into $prefix and checked"
