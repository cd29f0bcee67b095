#!/bin/sh
# check_exports.sh - the export list of libplanctl.
#
# Usage: sh check_exports.sh CC NM SHARED_LIB STATIC_LIB HEADER
#
# The shared library exports exactly the functions planctl.h declares with
# PLANCTL_API, every one named planctl_* (everything else is hidden by
# -fvisibility=hidden); the static library, which cannot hide anything,
# defines no global symbol outside planctl_* and pctl_* (the internal
# prefix), so it cannot collide with an embedder's names.
set -u
LC_ALL=C
export LC_ALL

fail() {
    echo "check_exports: $*" >&2
    exit 1
}

[ $# -eq 5 ] || fail "usage: sh check_exports.sh CC NM SHARED STATIC HEADER"
cc=$1 nm=$2 so=$3 a=$4 header=$5
tmp=$(mktemp -d) || exit 1
trap 'rm -rf "$tmp"' EXIT

# Defined dynamic symbols (functions and data alike).
"$nm" -D --defined-only "$so" >"$tmp/nm" || fail "nm -D failed on $so"
awk 'NF >= 3 { print $3 }' "$tmp/nm" | sort -u >"$tmp/exported"
[ -s "$tmp/exported" ] || fail "$so exports no symbol at all"
if grep -v '^planctl_' "$tmp/exported" >"$tmp/bad"; then
    echo "check_exports: $so exports symbols outside planctl_*:" >&2
    sed 's/^/    /' "$tmp/bad" >&2
    exit 1
fi

# Declared: preprocess the header as the library's build does, where
# PLANCTL_API is the visibility attribute, and take the name before the
# parameter list of each declaration that carries it.
"$cc" -E -P -DPLANCTL_BUILDING -x c "$header" >"$tmp/pp" ||
    fail "cannot preprocess $header"
tr '\n' ' ' <"$tmp/pp" | sed 's/;/;\n/g' |
    grep 'visibility *( *"default" *)' |
    sed 's/.*__attribute__ *( *( *visibility *( *"default" *) *) *)//; s/(.*//' |
    awk '{ n = $NF; gsub(/\*/, "", n); print n }' | sort -u >"$tmp/declared"
[ -s "$tmp/declared" ] || fail "found no PLANCTL_API declaration in $header"

comm -23 "$tmp/exported" "$tmp/declared" >"$tmp/undeclared"
comm -13 "$tmp/exported" "$tmp/declared" >"$tmp/missing"
if [ -s "$tmp/undeclared" ] || [ -s "$tmp/missing" ]; then
    [ -s "$tmp/undeclared" ] &&
        { echo "exported but not declared in planctl.h:"; sed 's/^/    /' "$tmp/undeclared"; } >&2
    [ -s "$tmp/missing" ] &&
        { echo "declared in planctl.h but not exported:"; sed 's/^/    /' "$tmp/missing"; } >&2
    exit 1
fi

# The static archive: global definitions (upper-case nm types; "u" is a
# GNU unique global), sanitizer instrumentation aside.
"$nm" -g --defined-only "$a" 2>/dev/null >"$tmp/nma" || fail "nm failed on $a"
awk 'NF == 3 && $2 ~ /^[A-Zu]$/ { print $3 }' "$tmp/nma" |
    grep -v -E '^(planctl_|pctl_)' |
    grep -v -E '^(__asan|__odr_asan|__ubsan|__sancov|___asan)' |
    sort -u >"$tmp/abad"
if [ -s "$tmp/abad" ]; then
    echo "check_exports: $a defines globals outside planctl_*/pctl_*:" >&2
    sed 's/^/    /' "$tmp/abad" >&2
    exit 1
fi

echo "check_exports: $(wc -l <"$tmp/exported") symbols exported, all" \
    "planctl_* and all declared in planctl.h; the static library's globals" \
    "are all planctl_* or pctl_*"
