#!/bin/sh
# readme_snippet.sh - the embedding snippet of README.md ("## Embedding
# in C") built against the installed planctl as the README says, and
# run.  The snippet calls libuv itself (uv_default_loop, uv_run) with
# nothing but planctl on the link line: libuv is part of planctl's
# interface (the embedder passes its loop), so planctl.pc and
# planctl::planctl must bring it along (issue 21).
#
# Usage: sh readme_snippet.sh MODE, MODE one of
#   pkgconfig  cc app.c $(pkg-config --cflags --libs planctl), run with
#              LD_LIBRARY_PATH; then linked again with
#              -Wl,-rpath,$(pkg-config --variable=libdir planctl), run
#              without it
#   cmake      the README's CMakeLists.txt (find_package(planctl) and
#              target_link_libraries(app PRIVATE planctl::planctl)), run
#              as built (CMake's build rpath)
#
# The snippet and the CMakeLists.txt are read from README.md, so they
# cannot drift from it: the snippet's lines before the one reading
# `/* In main(): */` are file scope, the rest is the body of main();
# readme_snippet.c (my_file_executor, json and len, which the README
# leaves to its reader) goes first.  Each run must apply
# the definition, create instance zk, run its deploy to COMPLETE (as the
# installed planctl command then sees it) and exit 0.
#
# Environment as for install_prefix.sh, plus PLANCTL_WORK.
set -u
here=$(cd "$(dirname "$0")" && pwd)
. "$here/lib.sh"
LC_ALL=C
export LC_ALL
unset LD_LIBRARY_PATH

[ $# -eq 1 ] || fail "usage: sh readme_snippet.sh MODE"
mode=$1
lib=$(in_prefix "$PLANCTL_LIBDIR")
planctl=$(in_prefix "$PLANCTL_BINDIR")/planctl
major=${PLANCTL_VERSION%%.*}
work=$PLANCTL_WORK/readme_snippet_$mode
[ -f "$lib/pkgconfig/planctl.pc" ] || fail "planctl is not installed in $PLANCTL_PREFIX"
rm -rf "$work"
mkdir -p "$work"

# readme_block LANG: the first ```LANG block of "## Embedding in C",
# each line prefixed with its line number in README.md and a tab.
readme_block() {
    awk -v fence="\`\`\`$1" '
        /^## / { section = ($0 == "## Embedding in C"); next }
        section && !done && !inside && $0 == fence { inside = 1; next }
        inside && $0 == "```" { inside = 0; done = 1; next }
        inside { print NR "\t" $0 }
    ' "$PLANCTL_SRC/README.md"
}

# app.c: readme_snippet.c, then the snippet with its statements in main(),
# with #line directives so that a compiler's message names README.md's
# line.
readme_block c >"$work/snippet"
[ -s "$work/snippet" ] || fail "README.md has no C snippet under \"## Embedding in C\""
marker='/* In main(): */'
at=$(awk -F '\t' -v m="$marker" '$2 == m { print $1; exit }' "$work/snippet")
[ -n "$at" ] || fail "the README's snippet has no line \"$marker\""
{
    cat "$here/readme_snippet.c"
    awk -F '\t' -v at="$at" '
        NR == 1 { printf "#line %d \"README.md\"\n", $1 }
        $1 == at { printf "int main(void)\n{\n#line %d \"README.md\"\n", at + 1; next }
        { sub(/^[0-9]+\t/, ""); print }
        END { printf "    return 0;\n}\n" }
    ' "$work/snippet"
} >"$work/app.c"

# run NAME BINARY [VAR=VALUE...]: runs the program in a directory of its
# own (the snippet opens planctl.db in the current one), with the given
# environment, and checks what it did.
run() {
    name=$1
    binary=$2
    shift 2
    needs "$binary" "libplanctl.so.$major" ||
        fail "$name does not load libplanctl.so.$major"
    needs "$binary" libuv ||
        fail "$name does not load libuv, though it calls uv_run"
    dir=$work/run-$name
    mkdir "$dir"
    (cd "$dir" && env "$@" "$binary") >"$dir/out" 2>&1
    rc=$?
    cat "$dir/out"
    [ $rc -eq 0 ] || fail "$name exited $rc"
    grep -q '^my_file_executor: zk deploy/config/config ' "$dir/out" ||
        fail "$name: the File executor did not run the deploy's step"
    "$planctl" --db "$dir/planctl.db" verify >/dev/null ||
        fail "$name: planctl verify failed"
    "$planctl" --db "$dir/planctl.db" history zk --limit 1 -o json |
        tr -d ' \n' | grep -q '"plan":"deploy","status":"COMPLETE"' ||
        fail "$name: the deploy run of zk is not COMPLETE"
    echo "readme_snippet.sh: $name ran the deploy of zk to COMPLETE"
}

case $mode in
pkgconfig)
    PKG_CONFIG_PATH=$lib/pkgconfig
    export PKG_CONFIG_PATH
    pc=$("$PKG_CONFIG" --cflags --libs planctl) || fail "pkg-config --cflags --libs planctl failed"
    libdir=$("$PKG_CONFIG" --variable=libdir planctl) || fail "no libdir in planctl.pc"
    # shellcheck disable=SC2086
    "$CC" $SAN_FLAGS -Wall -Wextra -Werror -o "$work/app" "$work/app.c" $pc \
        >"$work/build.log" 2>&1 ||
        { cat "$work/build.log"; fail "cc app.c \$(pkg-config --cflags --libs planctl) failed"; }
    run ld-library-path "$work/app" LD_LIBRARY_PATH="$libdir"
    # shellcheck disable=SC2086
    "$CC" $SAN_FLAGS -Wall -Wextra -Werror -o "$work/app-rpath" "$work/app.c" \
        $pc -Wl,-rpath,"$libdir" >"$work/build-rpath.log" 2>&1 ||
        { cat "$work/build-rpath.log"; fail "cc app.c with -Wl,-rpath failed"; }
    run rpath "$work/app-rpath"
    ;;
cmake)
    mkdir "$work/src"
    cp "$work/app.c" "$work/src/app.c"
    readme_block cmake | cut -f 2- >"$work/src/CMakeLists.txt"
    grep -q 'planctl::planctl' "$work/src/CMakeLists.txt" ||
        fail "README.md has no CMakeLists.txt linking planctl::planctl"
    "$CMAKE" -S "$work/src" -B "$work/build" -DCMAKE_BUILD_TYPE=RelWithDebInfo \
        -DCMAKE_PREFIX_PATH="$PLANCTL_PREFIX" -DCMAKE_C_COMPILER="$CC" \
        -DCMAKE_C_FLAGS="$SAN_FLAGS -Wall -Wextra -Werror" \
        -DCMAKE_EXE_LINKER_FLAGS="$SAN_FLAGS" >"$work/configure.log" 2>&1 ||
        { cat "$work/configure.log"; fail "configuring the CMake project failed"; }
    "$CMAKE" --build "$work/build" >"$work/build.log" 2>&1 ||
        { cat "$work/build.log"; fail "building the CMake project failed"; }
    run cmake "$work/build/app"
    ;;
*)
    fail "unknown mode $mode"
    ;;
esac
