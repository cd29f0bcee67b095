#!/usr/bin/env bash
# tests/pg/stopped_in_tx.sh - an engine stopped (SIGSTOP) while it is
# inside a transaction holds the schema's write lock (shared with the
# other engines' passes: pass_beside.sh), and with it every other planctl
# writer.  The server ends such an engine's session after a
# quarter of its TTL (idle_in_transaction_session_timeout, which planctl
# sets on its engines' sessions): the lock is free again, another engine
# and the CLI write, and the stopped engine, continued, stops with one
# line.  The engine is caught inside a transaction without luck: a psql
# session locks the engines' table against reads, the read of the
# engine's next pass that follows its BEGIN (its fence: its own row)
# waits there, the engine is stopped, the lock released; the server
# answers the read and the session is idle in a transaction its stopped
# client cannot end.  (A lock on a table the pass only writes no longer
# does: its writes go with its COMMIT, which the server then runs too.)
. "$(dirname "$0")/lib.sh"

sleeper_backlog 0.05 3 40

"$PLANCTL_BIN" run --name first --lease-ttl 8s >"$tmp/a.out" 2>"$tmp/a.err" &
a=$!
bg_pids+=("$a")
wait_for 60 "the engine to start a try" open_tries
backend=$(q -c "SELECT pid FROM pg_stat_activity WHERE datname = current_database()
                AND application_name = 'planctl'")
[ -n "$backend" ] || fail "no planctl session"
in_tx() {
    [ "$(q -c "SELECT state FROM pg_stat_activity WHERE pid = $backend")" = \
        "idle in transaction" ]
}
# The engine's session waits on a lock of the engines' table (its
# wait_event is 'relation' while a table lock keeps it).
waits_on_engines() {
    kill -0 "$a" 2>/dev/null || fail "the engine exited: $(cat "$tmp/a.err")"
    [ "$(q -c "SELECT wait_event FROM pg_stat_activity WHERE pid = $backend")" = \
        relation ]
}
"$psql_bin" -X -q -v ON_ERROR_STOP=1 -d "$db" \
    -c "BEGIN; LOCK TABLE planctl.engines IN ACCESS EXCLUSIVE MODE;
        SELECT pg_sleep(600); COMMIT" >/dev/null 2>&1 &
holder=$!
bg_pids+=("$holder")
wait_for 60 "the engines' table to be locked" eval '[ -n "$(holder_backend)" ]'
wait_for 60 "the engine to wait on the engines' table inside a write" \
    waits_on_engines
kill -STOP "$a"
q -c "SELECT pg_terminate_backend($(holder_backend))" >/dev/null
wait "$holder" 2>/dev/null || true
wait_for 60 "the stopped engine's session to be idle in a transaction" in_tx

# The server ends the session after 2 s (8s / 4); the lock is free.
ended() { [ -z "$(q -c "SELECT pid FROM pg_stat_activity WHERE pid = $backend")" ]; }
wait_for 60 "the server to end the stopped engine's session" ended
pctl trigger s1 deploy --queue >/dev/null || fail "a write after the session ended"

# Another engine goes on; the stopped one, continued, stops.
"$PLANCTL_BIN" run --name second --lease-ttl 8s >"$tmp/b.out" 2>"$tmp/b.err" &
b=$!
bg_pids+=("$b")
wait_for 60 "the second engine to declare the first dead" declared_dead first
continued_stops "$a" first "$tmp/a.err"
wait_for 120 "the second engine to complete the runs" all_done
stop_engine "$b" second "$tmp/b.err"
check_finished
note "ok: stopped inside a transaction; its session ended, the others went on"
