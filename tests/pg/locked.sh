#!/usr/bin/env bash
# tests/pg/locked.sh - a writer that holds planctl's write lock longer than
# the busy timeout (5 s by default): a planctl write waits for it, then
# gives up with one line naming the database, exit 3 as a busy SQLite
# database, and writes nothing; once the lock is free it succeeds.
. "$(dirname "$0")/lib.sh"

fresh_db
PLANCTL_DB=$(pg_uri)
export PLANCTL_DB
pctl apply -f "$src/tools/examples/zookeeper.json" >/dev/null
pctl create zk --definition zookeeper >/dev/null
events=$(val "SELECT count(*) FROM events")

# Another session takes the schema's write lock, as a planctl writer does,
# and keeps its transaction open.
q -c "BEGIN" -c "SELECT pg_advisory_xact_lock(1347175255, hashtext('planctl'))" \
    -c "SELECT pg_sleep(60)" >/dev/null 2>&1 &
holder=$!
bg_pids+=("$holder")
# The write lock of this test's database only: the cluster is shared with
# other tests running at the same time, whose sessions are not ours to end.
ours="locktype = 'advisory' AND classid = 1347175255 AND granted
      AND database = (SELECT oid FROM pg_database
                      WHERE datname = current_database())"
held() {
    [ "$(q -c "SELECT count(*) FROM pg_locks WHERE $ours")" = 1 ]
}
wait_for 60 "the other session to hold the write lock" held

rc=0
pctl trigger zk backup --queue >"$tmp/out" 2>"$tmp/err" || rc=$?
[ "$rc" = 3 ] || fail "trigger behind the lock: exit $rc: $(cat "$tmp/err")"
[ "$(wc -l <"$tmp/err")" = 1 ] || fail "not one line: $(cat "$tmp/err")"
grep -q "is locked by another planctl writer for longer than the busy timeout; try again" \
    "$tmp/err" || fail "message: $(cat "$tmp/err")"
[ "$(val "SELECT count(*) FROM events")" = "$events" ] ||
    fail "the refused trigger wrote events"

# Its session ended (a killed psql would leave its backend sleeping).
q -c "SELECT pg_terminate_backend(pid) FROM pg_locks WHERE $ours" >/dev/null
free() { ! held; }
wait_for 60 "the write lock to be free" free
pctl trigger zk backup --queue >/dev/null || fail "trigger once the lock is free"
note "ok"
