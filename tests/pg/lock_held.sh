#!/usr/bin/env bash
# tests/pg/lock_held.sh - another session holds planctl's write lock for
# twice the engines' TTL (a long import, a CLI writer suspended with
# Ctrl-Z, a backend stopped inside its transaction): two engines wait
# for it, and neither stops.  Their heartbeats take no write lock, so
# they go on while the lock is held; their passes wait a twelfth of the
# TTL at most, so the heartbeat is never late behind one.  Once the lock
# is free, every run completes.  (Before, every engine of the fleet
# missed its heartbeat and stopped with exit 3.)
. "$(dirname "$0")/lib.sh"

sleeper_backlog 0.05 3 20

start_two_engines --lease-ttl 6s
wait_for 60 "the engines to start tries" open_tries
beats() { val "SELECT sum(heartbeat_at) FROM engines"; }
before=$(beats)

# Another session takes the schema's write lock, as a planctl writer does,
# and keeps it for 12 s, twice the TTL.
q -c "BEGIN" -c "SELECT pg_advisory_xact_lock(1347175255, hashtext('planctl'))" \
    -c "SELECT pg_sleep(12)" -c "COMMIT" >/dev/null ||
    fail "the other session could not hold the lock"
for n in first second; do
    eval "pid=\$pid_$n"
    kill -0 "$pid" 2>/dev/null ||
        fail "engine $n stopped while the lock was held: $(tail -n 3 "$tmp/$n.err")"
done
[ "$(beats)" -gt "$before" ] || fail "no heartbeat while the lock was held"
[ "$(val "SELECT count(*) FROM events WHERE entity = 'engine'
          AND message LIKE '%declared dead%'")" = 0 ] ||
    fail "an engine was declared dead: $(val "SELECT message FROM events
          WHERE message LIKE '%declared dead%'")"

wait_for 120 "the engines to complete the runs" all_done
stop_two_engines
for n in first second; do
    ! grep -q "could not renew its heartbeat" "$tmp/$n.err" ||
        fail "engine $n was late: $(cat "$tmp/$n.err")"
done
check_finished

# Declaring an engine dead races its heartbeat, which no longer waits for
# the write lock: the DELETE of a stale engine (fleet_drop_stale, as the
# store prepares it) that waits for a heartbeat in progress reads the row
# again and leaves it.  Engine 'ghost' is 10 s stale; its heartbeat
# updates its row and then waits (on advisory lock 42, which a third
# session holds) before it commits; the DELETE waits on the row; the
# third session ends, the heartbeat commits, the DELETE deletes nothing.
q -c "INSERT INTO planctl.engines (name, host, pid, pid_start, started_at,
          heartbeat_at, ttl_ms, capacity)
      VALUES ('ghost', 'elsewhere', 1, 1, 0,
              (extract(epoch FROM clock_timestamp()) * 1000)::bigint - 10000,
              3000, 8)" || fail "insert ghost"
ghost=$(val "SELECT id FROM engines WHERE name = 'ghost'")
drop_stale=$(awk '/^-- name: fleet_drop_stale/ { on = 1; next }
                  on && /^$/ { exit } on' "$src/src/store/sql/postgres.sql")
[ -n "$drop_stale" ] || fail "no fleet_drop_stale in postgres.sql"
session_of() {
    q -c "SELECT pid FROM pg_stat_activity WHERE query LIKE '%$1%'
          AND pid <> pg_backend_pid()"
}
q -c "SELECT pg_advisory_lock(42)" -c "SELECT pg_sleep(600) /* gate */" \
    >/dev/null 2>&1 &
bg_pids+=("$!")
wait_for 60 "the gate to close" eval '[ -n "$(session_of "/* gate */")" ]'
q -c "BEGIN" -c "UPDATE planctl.engines SET heartbeat_at =
                 (extract(epoch FROM clock_timestamp()) * 1000)::bigint
                 WHERE id = $ghost" \
    -c "SELECT pg_advisory_lock(42) /* beat */" -c "COMMIT" >/dev/null &
beater=$!
bg_pids+=("$beater")
lock_waits() {
    [ "$(q -c "SELECT wait_event_type FROM pg_stat_activity
               WHERE pid = '$(session_of "$1")'")" = Lock ]
}
wait_for 60 "the heartbeat to hold its row" lock_waits "/* beat */"
q -c "SET search_path = planctl" -c "PREPARE d(bigint) AS $drop_stale" \
    -c "EXECUTE d($ghost) /* drop */" >"$tmp/drop.out" &
dropper=$!
bg_pids+=("$dropper")
wait_for 60 "the DELETE to wait for the heartbeat" lock_waits "/* drop */"
q -c "SELECT pg_terminate_backend($(session_of "/* gate */"))" >/dev/null
wait "$beater" || fail "the heartbeat did not commit"
wait "$dropper" || fail "the DELETE failed: $(cat "$tmp/drop.out")"
[ "$(val "SELECT count(*) FROM engines WHERE id = $ghost")" = 1 ] ||
    fail "a stale engine whose heartbeat came meanwhile was deleted"
note "ok: a write lock held for 2x the TTL stopped no engine"
