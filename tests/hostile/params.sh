#!/bin/sh
# params.sh - hostile parameter values reach a shell task only as
# environment values, byte for byte, and change nothing else.
#
# Values: command substitutions ($(...) and `...`) that would create a
# file, SQL, quotes that would end a pasted string, a glob, printf and
# shell expansions, newlines (one trailing), control characters and an
# escape sequence, multibyte UTF-8, the empty string, a value that looks
# like a flag, and 100 KB (near the kernel's 128 KiB limit for one
# environment string).  The shell task writes each PLANCTL_PARAM_* to a
# file; each must equal the value given, no marker file may appear, the
# run completes, and verify passes.  Invalid UTF-8 is refused (exit 2,
# one line) and changes nothing.
#
# Usage: sh params.sh PLANCTL_BINARY SOURCE_DIR
bin=$1
src=$2
. "$src/tests/hostile/lib.sh"

v1="\$(touch $T/pwned-1)"
v2="\`touch $T/pwned-2\`"
v3="'; DROP TABLE runs; --"
v4=$(printf 'line one\nline two\nX')
v4=${v4%X}
v5="\"; touch $T/pwned-3; echo \""
v6='${IFS}$PATH %s%n%x \ * ?'
v7=$(printf '%s' "\$(touch $T/pwned-4)"; head -c 100000 /dev/zero | tr '\0' 'x')
v8=$(printf 'tab\there\rcr\033[2Jesc\007bell')
v9=$(printf 'caf\303\251 \342\202\254 \360\237\230\200')
v10=
v11="--db=$T/evil.db"
names="V1 V2 V3 V4 V5 V6 V7 V8 V9 V10 V11"

# The task: one printf per parameter, each value read from the
# environment, never pasted into the command.
cmd=
params=
for n in $names; do
    cmd="$cmd printf '%s' \\\"\$PLANCTL_PARAM_$n\\\" > $T/got.$n;"
    params="$params${params:+,}{\"name\": \"$n\"}"
done
cat > "$T/hostile.json" <<JSON
{"name": "hostile", "version": "1",
 "parameters": [$params],
 "tasks": [{"name": "dump", "kind": "shell", "spec": {"command": "$cmd"}}],
 "plans": {"deploy": {"phases": [{"name": "p", "steps": [
   {"name": "s", "tasks": ["dump"], "retry": {"attempts": 1}}]}]},
   "update": {"phases": [{"name": "p", "steps": [
   {"name": "s", "tasks": ["dump"], "retry": {"attempts": 1}}]}]}}}
JSON

expect_exit 0 "apply the definition" planctl apply -f "$T/hostile.json"
expect_exit 0 "create with hostile values" planctl create h \
    --definition hostile -p "V1=$v1" -p "V2=$v2" -p "V3=$v3" -p "V4=$v4" \
    -p "V5=$v5" -p "V6=$v6" -p "V7=$v7" -p "V8=$v8" -p "V9=$v9" \
    -p "V10=$v10" -p "V11=$v11"
expect_exit 0 "the engine runs the plan" planctl run --until-idle

check_values() { # WHAT
    for n in $names; do
        eval "v=\$v$(echo "$n" | tr -d V)"
        printf '%s' "$v" > "$T/want.$n"
        if [ ! -f "$T/got.$n" ]; then
            fail "$1: the task wrote no $n"
        elif cmp -s "$T/want.$n" "$T/got.$n"; then
            ok "$1: $n arrived byte for byte ($(wc -c < "$T/want.$n") bytes)"
        else
            fail "$1: $n differs: $(od -c "$T/got.$n" | head -3)"
        fi
    done
}
check_values "deploy"

nothing_else() { # WHAT
    for m in "$T"/pwned-* "$T/evil.db"; do
        [ -e "$m" ] && fail "$1: $m exists: a value was executed"
    done
    expect_exit 0 "$1: verify" planctl verify
    runs=$(planctl history h -o json | grep -c '"status": "COMPLETE"')
    [ "$runs" = "$2" ] && ok "$1: $2 run(s), all COMPLETE" ||
        fail "$1: $runs COMPLETE run(s), expected $2"
}
nothing_else "deploy" 1

# The same values again through set (the update plan): unchanged values
# change nothing; new hostile values arrive the same way.
rm -f "$T"/got.*
v3="$v3 \$(touch $T/pwned-5)"
v4="$v4$v8"
expect_exit 0 "set with hostile values" planctl set h -p "V3=$v3" -p "V4=$v4"
expect_exit 0 "the engine runs the update" planctl run --until-idle
check_values "update"
nothing_else "update" 2

# Views show the instance whatever its values hold.
for view in "status h" "history h" "events h" "instances" "status h -o json" \
    "events h -o jsonl"; do
    # shellcheck disable=SC2086
    expect_exit 0 "planctl $view" planctl $view
done

# Invalid UTF-8 cannot be stored as text: refused, naming the parameter,
# and nothing changes.
before=$(db_state)
bad=$(printf 'ok\377\376')
expect_exit 2 "create with invalid UTF-8" planctl create h2 \
    --definition hostile -p "V1=$bad"
grep -q 'parameter "V1" has a value that is not valid UTF-8' "$T/err" ||
    fail "the refusal does not name V1: $(cat "$T/err")"
expect_exit 2 "set with invalid UTF-8" planctl set h -p "V9=$(printf '\303')"
[ "$(db_state)" = "$before" ] && ok "refusals changed nothing" ||
    fail "a refused command changed the database"

finish
