#!/usr/bin/env bash
# tests/pg/backend_killed.sh - pg_terminate_backend() on planctl's
# sessions.
#  1. The engine's session is terminated while it runs tasks: it connects
#     again, takes its advisory lock again, and completes every run.
#  2. Its session is terminated while the engine is stopped (SIGSTOP), so
#     that a second engine can take the free lock and the lease: the first,
#     continued, is fenced off by the lease's token and stops with one line;
#     the second completes the runs.  Never two engines writing.
#  3. A follower (`events --follow`) whose session is terminated goes on
#     and still sees what is committed after; a command that cannot reach
#     the server says so in one line.
. "$(dirname "$0")/lib.sh"

fresh_db
PLANCTL_DB=$(pg_uri)
export PLANCTL_DB
sleeper_def 0.3
lock_sql="SELECT l.pid FROM pg_locks l JOIN pg_database d ON d.oid = l.database
          WHERE d.datname = current_database() AND l.locktype = 'advisory'
          AND l.classid = 1347175237 AND l.granted"
engine_pid() { q -c "$lock_sql"; }
terminate() { q -c "SELECT pg_terminate_backend($1)" >/dev/null; }
all_done() {
    [ "$(val "SELECT count(*) FROM runs WHERE status NOT IN
              ('COMPLETE', 'FATAL_ERROR', 'CANCELLED')")" = 0 ]
}

# 1. Terminated under a running engine.
for i in 1 2 3; do pctl create "s$i" --definition sleeper >/dev/null; done
"$PLANCTL_BIN" run >"$tmp/a.out" 2>"$tmp/a.err" &
a=$!
bg_pids+=("$a")
wait_for 60 "the engine to start a try" open_tries
old=$(engine_pid)
[ -n "$old" ] || fail "no session holds the engine lock"
terminate "$old"
relocked() { local p; p=$(engine_pid); [ -n "$p" ] && [ "$p" != "$old" ]; }
wait_for 60 "the engine to take its lock again in a new session" relocked
wait_for 60 "the runs to complete after the reconnection" all_done
kill -0 "$a" 2>/dev/null || fail "engine exited: $(cat "$tmp/a.err")"
kill -INT "$a"
rc=0
wait "$a" || rc=$?
[ "$rc" = 0 ] || fail "engine exit $rc: $(cat "$tmp/a.err")"
check_finished

# 2. A second engine in the gap: the first is fenced off.
for i in 4 5; do pctl create "s$i" --definition sleeper >/dev/null; done
"$PLANCTL_BIN" run >"$tmp/a.out" 2>"$tmp/a.err" &
a=$!
bg_pids+=("$a")
wait_for 60 "the engine to start a try" open_tries
kill -STOP "$a"
terminate "$(engine_pid)"
unlocked() { [ -z "$(engine_pid)" ]; }
wait_for 60 "the lock to be free" unlocked
"$PLANCTL_BIN" run >"$tmp/b.out" 2>"$tmp/b.err" &
b=$!
bg_pids+=("$b")
taken() {
    [ "$(val "SELECT count(*) FROM events WHERE entity = 'engine'
              AND message = 'engine started, lease taken over'")" -ge 1 ]
}
wait_for 60 "the second engine to take the lease over" taken
kill -CONT "$a"
gone() { ! kill -0 "$a" 2>/dev/null; }
wait_for 60 "the first engine to stop, fenced off" gone
rc=0
wait "$a" || rc=$?
[ "$rc" != 0 ] || fail "the fenced engine exited 0"
last=$(tail -n 1 "$tmp/a.err")
case $last in
"planctl: this engine lost its lock on "*"another engine holds it now") ;;
*) fail "fenced engine's last line: $last" ;;
esac
wait_for 60 "the second engine to complete the runs" all_done
kill -0 "$b" 2>/dev/null || fail "second engine exited: $(cat "$tmp/b.err")"
kill -INT "$b"
rc=0
wait "$b" || rc=$?
[ "$rc" = 0 ] || fail "second engine exit $rc: $(cat "$tmp/b.err")"
check_finished

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
note "ok: reconnected, fenced off in the gap, follower went on"
