#!/usr/bin/env bash
# tests/pg/active_passive.sh - one engine per PostgreSQL schema: a second
# `planctl run` is refused (exit 3, one line naming the holder) while the
# first lives; the first killed with SIGKILL in the middle of its steps,
# the server ends its session and so frees its advisory lock, and the
# second takes over at once: the interrupted tries end ERROR and are
# retried, every run completes, the tries are numbered without gaps, and
# verify is clean.
. "$(dirname "$0")/lib.sh"

fresh_db
PLANCTL_DB=$(pg_uri)
export PLANCTL_DB
sleeper_def 1
for i in 1 2 3 4; do pctl create "s$i" --definition sleeper >/dev/null; done

"$PLANCTL_BIN" run >"$tmp/a.log" 2>&1 &
a=$!
bg_pids+=("$a")
wait_for 60 "the first engine to start a try" open_tries

# The passive one: refused while the first lives, whatever it is doing.
rc=0
pctl run --until-idle >"$tmp/b.out" 2>"$tmp/b.err" || rc=$?
[ "$rc" = 3 ] || fail "second engine: exit $rc, expected 3: $(cat "$tmp/b.err")"
[ "$(wc -l <"$tmp/b.err")" = 1 ] || fail "refusal not one line: $(cat "$tmp/b.err")"
grep -q "an engine is already running on .*(pid $a on host" "$tmp/b.err" ||
    fail "refusal does not name the holder: $(cat "$tmp/b.err")"

# Killed where it stands, tries open.
open_tries || fail "no try open when the first engine was killed"
kill -9 "$a"
wait "$a" 2>/dev/null || true
killed_open=$(val "SELECT count(*) FROM attempts WHERE finished_at IS NULL")

# Taken over at once: the server dropped the session and its lock.  Should
# the server notice the closed socket a moment late, the refusal is exit 3
# and the engine is started again.
start=$SECONDS
while :; do
    rc=0
    pctl run --until-idle >"$tmp/b.out" 2>"$tmp/b.err" || rc=$?
    [ "$rc" = 3 ] && [ $((SECONDS - start)) -lt 60 ] && continue
    break
done
[ "$rc" = 0 ] || fail "taking over: exit $rc: $(cat "$tmp/b.err")"

check_finished
# What the killed engine left open ended ERROR and was tried again.
n=$(val "SELECT count(*) FROM attempts WHERE status = 'ERROR'")
[ "$n" -ge "$killed_open" ] ||
    fail "$killed_open tries were open at the kill, $n ended ERROR"
[ "$(val "SELECT count(*) FROM events WHERE entity = 'engine'
          AND message = 'engine started, lease taken over'")" -ge 1 ] ||
    fail "no takeover event"
note "ok: refused while alive, taken over after kill -9 ($killed_open tries interrupted)"
