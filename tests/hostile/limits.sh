#!/bin/sh
# limits.sh - oversized input is refused by the documented limits, with
# one line, and changes nothing.
#
#   - a definition of exactly 4 MiB validates and applies; one byte more is
#     refused by validate and apply (exit 2, "the limit is 4194304");
#   - so for a YAML definition (padded by a comment), refused before
#     libyaml reads it;
#   - a bundle whose definition is over 4 MiB is refused by import (exit 2)
#     and imports nothing;
#   - a bundle file over 64 MiB imports: import streams, and only one
#     value (a row) over 64 MiB is refused (exit 2), before it is held.
#
# Usage: sh limits.sh PLANCTL_BINARY SOURCE_DIR
bin=$1
src=$2
. "$src/tests/hostile/lib.sh"

limit=4194304

# A valid definition of exactly $1 bytes: padded with spaces, which JSON
# allows between tokens and no field limit counts.
definition() { # BYTES NAME
    body=$(printf '"name": "%s", "version": "1", "tasks": [{"name": "t", "kind": "Dummy"}], "plans": {"deploy": {"phases": [{"name": "p", "steps": [{"name": "s", "tasks": ["t"]}]}]}}}' "$2")
    printf '{'
    head -c $(($1 - 1 - ${#body})) /dev/zero | tr '\0' ' '
    printf '%s' "$body"
}

definition "$limit" atlimit > "$T/at.json"
definition $((limit + 1)) over > "$T/over.json"
[ "$(wc -c < "$T/at.json")" -eq "$limit" ] || fail "at.json is not $limit bytes"
[ "$(wc -c < "$T/over.json")" -eq $((limit + 1)) ] ||
    fail "over.json is not $((limit + 1)) bytes"

expect_exit 0 "validate a definition of exactly 4 MiB" \
    planctl validate -f "$T/at.json"
expect_exit 0 "apply a definition of exactly 4 MiB" planctl apply -f "$T/at.json"
before=$(db_state)
# validate lists its errors on standard output.
validate_over() { # FILE WHAT
    planctl validate -f "$1" > "$T/out" 2>&1
    rc=$?
    if [ "$rc" -eq 2 ] &&
        grep -q "\"$1\" is $((limit + 1)) bytes; a definition may have at most $limit" "$T/out"; then
        ok "validate $2 one byte over 4 MiB (exit 2): $(cat "$T/out")"
    else
        fail "validate $2 over 4 MiB: exit $rc: $(cat "$T/out")"
    fi
}
validate_over "$T/over.json" "a definition"
expect_exit 2 "apply a definition one byte over 4 MiB" \
    planctl apply -f "$T/over.json"
grep -q "over.json\" is $((limit + 1)) bytes; a definition may have at most $limit" "$T/err" ||
    fail "apply does not name the file and the limit: $(cat "$T/err")"
expect_exit 2 "the same from standard input" sh -c \
    "'$bin' apply -f - < '$T/over.json'"
[ "$(db_state)" = "$before" ] && ok "the refusals changed nothing" ||
    fail "a refused apply changed the database"

# The same in YAML: a comment pads it, the body is one flow mapping.
yaml_definition() { # BYTES NAME
    body=$(printf '\n{name: %s, version: "1", tasks: [{name: t, kind: Dummy}], plans: {deploy: {phases: [{name: p, steps: [{name: s, tasks: [t]}]}]}}}\n' "$2")
    printf '#'
    head -c $(($1 - 2 - ${#body})) /dev/zero | tr '\0' ' '
    printf '%s\n' "$body"
}
yaml_definition "$limit" yamlatlimit > "$T/at.yaml"
yaml_definition $((limit + 1)) yamlover > "$T/over.yaml"
[ "$(wc -c < "$T/at.yaml")" -eq "$limit" ] ||
    fail "at.yaml is $(wc -c < "$T/at.yaml") bytes, not $limit"
expect_exit 0 "validate a YAML definition of exactly 4 MiB" \
    planctl validate -f "$T/at.yaml"
validate_over "$T/over.yaml" "a YAML definition"
expect_exit 2 "apply a YAML definition one byte over 4 MiB" \
    planctl apply -f "$T/over.yaml"
[ "$(db_state)" = "$before" ] && ok "the YAML refusal changed nothing" ||
    fail "a refused YAML apply changed the database"

# A bundle carrying a definition over the limit: the bundle of a small
# instance with its definition's body (a JSON string holding the
# definition's text) grown past 4 MiB by spaces after its first "{".
definition 400 big > "$T/small.json"
planctl --db "$T/src.db" apply -f "$T/small.json" >/dev/null
planctl --db "$T/src.db" create b --definition big >/dev/null
planctl --db "$T/src.db" export b --out "$T/b.json" 2>/dev/null
awk -v n=$((limit + 10)) 'BEGIN { s = " "; while (length(s) < n) s = s s }
     { sub(/"body":"\{/, "\"body\":\"{" substr(s, 1, n)); print }' \
    "$T/b.json" > "$T/big.json"
[ "$(wc -c < "$T/big.json")" -gt "$limit" ] || fail "big.json is not over the limit"
expect_exit 2 "import a bundle whose definition is over 4 MiB" \
    planctl import "$T/big.json"
grep -q "the limit is $limit" "$T/err" ||
    fail "import does not name the limit: $(cat "$T/err")"
[ "$(db_state)" = "$before" ] && ok "the refused import changed nothing" ||
    fail "a refused import changed the database"

# One row over 64 MiB: refused before it is held, and nothing imported.
awk -v n=$((64 * 1024 * 1024)) 'BEGIN { s = "x"; while (length(s) < n) s = s s }
     { sub(/"message":null/, "\"message\":\"" substr(s, 1, n) "\""); print }' \
    "$T/b.json" > "$T/huge.json"
[ "$(wc -c < "$T/huge.json")" -gt $((64 * 1024 * 1024)) ] ||
    fail "huge.json is not over 64 MiB"
expect_exit 2 "import a bundle with a row over 64 MiB" \
    planctl import "$T/huge.json"
grep -q "a value longer than 64 MiB" "$T/err" ||
    fail "import does not name the cap: $(cat "$T/err")"
[ "$(db_state)" = "$before" ] && ok "the refused import changed nothing" ||
    fail "a refused import changed the database"
# A bundle file over 64 MiB whose rows are small: a real bundle followed
# by spaces (valid JSON whitespace) imports.
{ cat "$T/b.json"; head -c $((64 * 1024 * 1024)) /dev/zero | tr '\0' ' '; } \
    > "$T/huge.json"
expect_exit 0 "import a bundle file over 64 MiB" planctl import "$T/huge.json"
rm -f "$T/huge.json"
expect_exit 0 "verify" planctl verify

finish
