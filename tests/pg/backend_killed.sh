#!/usr/bin/env bash
# tests/pg/backend_killed.sh - pg_terminate_backend() on planctl's
# sessions, and an engine stopped past its TTL.
#  1. The engine's session is terminated while it runs tasks: it connects
#     again and completes every run (it is still one of the engines).
#  2. An engine is stopped (SIGSTOP) while its tries run longer than its
#     TTL, and its session is terminated.  Its keeper kills its tries at
#     2/3 of the TTL; a second engine declares it dead once its heartbeat
#     is older than the TTL and retries them: no try ever ran beside
#     another of its step (the flock of sleeper_def).  The first,
#     continued, stops with one line and writes nothing; the second
#     completes the runs.
#  3. A follower (`events --follow`) whose session is terminated goes on
#     and still sees what is committed after; a command that cannot reach
#     the server says so in one line.
. "$(dirname "$0")/lib.sh"

fresh_db
PLANCTL_DB=$(pg_uri)
export PLANCTL_DB
# planctl's sessions on the test's database (psql's are named psql).
planctl_pids() {
    q -c "SELECT pid FROM pg_stat_activity WHERE datname = current_database()
          AND application_name = 'planctl' ORDER BY pid"
}
terminate() { q -c "SELECT pg_terminate_backend($1)" >/dev/null; }

# 1. Terminated under a running engine.
sleeper_def 0.3
for i in 1 2 3; do pctl create "s$i" --definition sleeper >/dev/null; done
"$PLANCTL_BIN" run >"$tmp/a.out" 2>"$tmp/a.err" &
a=$!
bg_pids+=("$a")
wait_for 60 "the engine to start a try" open_tries
old=$(planctl_pids)
[ -n "$old" ] || fail "no planctl session"
terminate "$old"
again() { local p; p=$(planctl_pids); [ -n "$p" ] && [ "$p" != "$old" ]; }
wait_for 60 "the engine to connect again" again
wait_for 60 "the runs to complete after the reconnection" all_done
stop_engine "$a" planctl "$tmp/a.err"
check_finished

# 2. Stopped past its TTL, its session gone: taken over, its tries killed.
sleeper_def 0.3 4
touch "$tmp/slow"
for i in 4 5; do pctl create "s$i" --definition sleeper >/dev/null; done
"$PLANCTL_BIN" run --name first --lease-ttl 3s >"$tmp/a.out" 2>"$tmp/a.err" &
a=$!
bg_pids+=("$a")
wait_for 60 "the engine to start a try" open_tries
kill -STOP "$a"
rm "$tmp/slow"
terminate "$(planctl_pids)"
# Its tries would sleep 300 s: its keeper kills them at 2/3 of its TTL
# after its last heartbeat, before anyone may take its runs (on the same
# host the next engine would also find them by their marker and kill
# them: engine/orphans.c; the keeper is what covers other hosts).
tries_gone() {
    local f
    for f in "$tmp"/lock.*; do flock -n "$f" true || return 1; done
}
wait_for 60 "the stopped engine's keeper to kill its tries" tries_gone
"$PLANCTL_BIN" run --name second --lease-ttl 3s >"$tmp/b.out" 2>"$tmp/b.err" &
b=$!
bg_pids+=("$b")
wait_for 60 "the second engine to declare the first dead" declared_dead first
# The retries start while the first is still stopped.
retried() {
    [ "$(val "SELECT count(*) FROM attempts WHERE number = 2")" -ge 1 ]
}
wait_for 60 "the second engine to start a retry" retried
continued_stops "$a" first "$tmp/a.err"
wait_for 120 "the second engine to complete the runs" all_done
stop_engine "$b" second "$tmp/b.err"
check_finished
interrupted=$(val "SELECT count(*) FROM attempts
                   WHERE message = 'interrupted: engine stopped'")
[ "$interrupted" -ge 1 ] || fail "no try of the first engine was interrupted"

# 3. A follower's session terminated: it goes on.
"$PLANCTL_BIN" events --follow -o jsonl >"$tmp/f.out" 2>"$tmp/f.err" &
f=$!
bg_pids+=("$f")
following() {
    [ -n "$(q -c "SELECT pid FROM pg_stat_activity
                  WHERE datname = current_database()
                  AND application_name = 'planctl'")" ]
}
wait_for 60 "the follower's session" following
terminate "$(q -c "SELECT pid FROM pg_stat_activity
                   WHERE datname = current_database()
                   AND application_name = 'planctl'")"
pctl trigger s1 deploy >/dev/null
seen() { grep -q '"to":"QUEUED"\|"to":"PENDING"' "$tmp/f.out"; }
wait_for 60 "the follower to see the trigger after its session ended" seen
kill -0 "$f" 2>/dev/null || fail "follower exited: $(cat "$tmp/f.err")"
kill "$f"

# No server there: one line naming it.
rc=0
PLANCTL_DB="postgresql:///$db?host=$tmp&port=1&user=planctl" \
    "$PLANCTL_BIN" status s1 >"$tmp/n.out" 2>"$tmp/n.err" || rc=$?
[ "$rc" = 1 ] || fail "no server: exit $rc"
[ "$(wc -l <"$tmp/n.err")" = 1 ] || fail "no server: $(cat "$tmp/n.err")"
grep -q "^planctl: cannot connect to PostgreSQL at postgresql:///$db" \
    "$tmp/n.err" || fail "no server: $(cat "$tmp/n.err")"
note "ok: reconnected; stopped past its TTL, its $interrupted tries killed and taken over; follower went on"
