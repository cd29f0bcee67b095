#!/bin/sh
# check_header.sh - planctl.h stands alone under strict flags.
#
# Usage: sh check_header.sh HEADER CC [CC...] [-- CXX [CXX...]]
#
# For each C compiler, in C99 and C11: the header compiled alone, and a
# file that includes it twice (the include guard) and initialises every
# options struct with its _INIT macro (-Wmissing-field-initializers, part
# of -Wextra, catches a macro that fell behind its struct).  For each C++
# compiler, the same file as C++11.  And the header includes only standard
# headers: libuv, jansson and SQLite stay out of the ABI.
set -u
LC_ALL=C
export LC_ALL

fail() {
    echo "check_header: $*" >&2
    exit 1
}

[ $# -ge 2 ] || fail "usage: sh check_header.sh HEADER CC [CC...] [-- CXX...]"
header=$1
shift
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT
mkdir "$tmp/inc"
cp "$header" "$tmp/inc/planctl.h"

strict="-Wall -Wextra -Wpedantic -Werror -Wshadow -Wstrict-prototypes
        -Wmissing-prototypes -Wformat=2 -Wvla -Wundef -Wcast-qual
        -Wconversion -Wsign-conversion -Wredundant-decls -Wc++-compat"
strict_cxx="-Wall -Wextra -Wpedantic -Werror -Wshadow -Wundef -Wcast-qual
            -Wconversion -Wsign-conversion -Wredundant-decls
            -Wold-style-cast -Wzero-as-null-pointer-constant"

# Only standard headers.
grep -E '^[[:space:]]*#[[:space:]]*include' "$header" |
    grep -v -E '<(stddef|stdint|stdbool|stdarg)\.h>' >"$tmp/includes" &&
    fail "planctl.h includes more than standard headers: $(cat "$tmp/includes")"

# Every options struct with its _INIT macro.
inits=$(grep -o -E '^#define PLANCTL_[A-Z_]+_OPTIONS_INIT' "$header" |
    sed 's/^#define //')
[ -n "$inits" ] || fail "no PLANCTL_*_OPTIONS_INIT macro in $header"
{
    echo '#include <planctl.h>'
    echo '#include <planctl.h> /* twice: the include guard */'
    echo 'int planctl_header_check(void);'
    echo 'int planctl_header_check(void)'
    echo '{'
    n=0
    for m in $inits; do
        t=$(echo "${m%_INIT}" | tr '[:upper:]' '[:lower:]')
        echo "    $t o$n = $m;"
        echo "    (void)o$n;"
        n=$((n + 1))
    done
    echo '    return PLANCTL_VERSION_MAJOR * 1000000 + PLANCTL_VERSION_MINOR * 1000'
    echo '           + PLANCTL_VERSION_PATCH == PLANCTL_VERSION_NUMBER;'
    echo '}'
} >"$tmp/use.c"
cp "$tmp/use.c" "$tmp/use.cpp"

lang=c
count=0
for compiler in "$@"; do
    if [ "$compiler" = -- ]; then
        lang=c++
        continue
    fi
    if [ $lang = c ]; then
        for std in c99 c11; do
            # shellcheck disable=SC2086
            "$compiler" -std=$std $strict -fsyntax-only -x c \
                "$tmp/inc/planctl.h" ||
                fail "$compiler -std=$std: the header alone does not compile"
            # shellcheck disable=SC2086
            "$compiler" -std=$std $strict -I"$tmp/inc" -fsyntax-only \
                "$tmp/use.c" ||
                fail "$compiler -std=$std: a file using the header does not compile"
            count=$((count + 1))
        done
    else
        # shellcheck disable=SC2086
        "$compiler" -std=c++11 $strict_cxx -I"$tmp/inc" -fsyntax-only \
            "$tmp/use.cpp" ||
            fail "$compiler -std=c++11: a file using the header does not compile"
        count=$((count + 1))
    fi
done
[ $count -gt 0 ] || fail "no compiler given"
echo "check_header: planctl.h compiles alone and in use, $count configurations," \
    "$(echo "$inits" | wc -w) options macros"
