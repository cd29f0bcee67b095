#!/usr/bin/env bash
# tests/pg/takeover_output.sh - what a takeover keeps and removes: one
# engine runs a shell task that printed output and wrote a secret to its
# $PLANCTL_OUTPUT; a second engine waits beside it.  The first killed with
# SIGKILL, the second declares it dead and takes the run over: the
# interrupted try keeps the output the first stored while it ran (its
# message quoting the last line), and the task's private directory is
# gone from $TMPDIR, a look-alike of another database beside it kept.
. "$(dirname "$0")/lib.sh"

fresh_db
PLANCTL_DB=$(pg_uri)
TMPDIR=$tmp/tmpdir
export PLANCTL_DB TMPDIR
mkdir "$TMPDIR"
cat >"$tmp/t.json" <<'DEF'
{"name": "t", "version": "1",
 "tasks": [{"name": "talk", "kind": "shell",
   "spec": {"command": "echo '::secret::TOKEN=s3cret' >> \"$PLANCTL_OUTPUT\"; echo begins; echo 'last words'; [ $PLANCTL_ATTEMPT = 1 ] || exit 0; exec sleep 300"}}],
 "plans": {"deploy": {"phases": [{"name": "p", "steps": [{"name": "s", "tasks": ["talk"]}]}]}}}
DEF
pctl apply -f "$tmp/t.json" >/dev/null || fail "apply"
pctl create i --definition t >/dev/null || fail "create"

"$PLANCTL_BIN" run --name first --lease-ttl 3s >"$tmp/a.log" 2>&1 &
a=$!
bg_pids+=("$a")
stored() {
    [ "$(val "SELECT count(*) FROM attempts WHERE finished_at IS NULL
              AND output LIKE '%last words%'")" = 1 ]
}
wait_for 60 "the first engine to store the try's output" stored
dir=$(ls -d "$TMPDIR"/planctl-out-*)
grep -q 's3cret' "$dir/output" || fail "no secret in $dir/output"
other=$TMPDIR/planctl-out-1.0123456789abcdef0123456789abcdef.1.s.Other1
mkdir -m 700 "$other"
echo keep >"$other/output"

"$PLANCTL_BIN" run --name second --lease-ttl 3s --until-idle \
    >"$tmp/b.out" 2>"$tmp/b.err" &
b=$!
bg_pids+=("$b")
joined() { [ "$(val "SELECT count(*) FROM engines WHERE name = 'second'")" = 1 ]; }
wait_for 60 "the second engine to join" joined
kill -9 "$a"
wait "$a" 2>/dev/null || true
rc=0
wait "$b" || rc=$?
[ "$rc" = 0 ] || fail "the second engine: exit $rc: $(cat "$tmp/b.err")"

[ "$(val "SELECT status FROM runs")" = COMPLETE ] || fail "the run did not complete"
got=$(val "SELECT status || '|' || message || '|' || output FROM attempts WHERE number = 1")
want=$'ERROR|interrupted: engine stopped: last words|begins\nlast words'
[ "$got" = "$want" ] || fail "the interrupted try: $got"
[ ! -e "$dir" ] || fail "$dir is left: $(ls -la "$dir")"
[ "$(cat "$other/output")" = keep ] || fail "$other was touched"
note "ok: the taken-over try kept its output; its directory went, the look-alike stayed"
