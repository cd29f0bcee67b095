#!/usr/bin/env bash
# tests/pg/event_order.sh - the event log as writers commit it.
#  1. A transaction of another client (psql) inserts an event and stays
#     open: the events' trigger takes the schema's write lock, so planctl
#     writers wait behind it; once it commits they go on.  A follower
#     (`events --follow -o jsonl`) sees every event in seq order, none
#     skipped, the late-committed one included.
#  2. Many `planctl trigger` at once on one instance: with a run active,
#     every one without --queue is refused (exit 3) and every one with
#     --queue is queued; on an idle instance exactly one is admitted, the
#     others refused (exit 3), and one run is active.
. "$(dirname "$0")/lib.sh"

fresh_db
PLANCTL_DB=$(pg_uri)
export PLANCTL_DB
sleeper_def 0.1
pctl create s1 --definition sleeper >/dev/null
pctl create s2 --definition sleeper >/dev/null

"$PLANCTL_BIN" events --follow -o jsonl >"$tmp/f.out" 2>"$tmp/f.err" &
f=$!
bg_pids+=("$f")
n0=$(val "SELECT count(*) FROM events")
has_lines() { [ "$(wc -l <"$tmp/f.out")" -ge "$1" ]; }
wait_for 60 "the follower to print the events so far" has_lines "$n0"

# The open transaction: psql reads its script from a FIFO kept open.
mkfifo "$tmp/psql.in"
"$psql_bin" -X -q -v ON_ERROR_STOP=1 -d "$db" <"$tmp/psql.in" \
    >"$tmp/psql.out" 2>&1 &
p=$!
bg_pids+=("$p")
exec 3>"$tmp/psql.in"
echo "BEGIN; INSERT INTO planctl.events (at, entity, message, actor)
      VALUES (0, 'engine', 'late', 'test');" >&3
# The write lock of this test's database only: other tests share the cluster.
write_lock="locktype = 'advisory' AND classid = 1347175255
            AND database = (SELECT oid FROM pg_database
                            WHERE datname = current_database())"
lock_waiters() {
    [ "$(q -c "SELECT count(*) FROM pg_locks WHERE $write_lock
               AND NOT granted")" -ge "$1" ]
}
holding() {
    [ "$(q -c "SELECT count(*) FROM pg_locks WHERE $write_lock
               AND granted")" -ge 1 ]
}
wait_for 60 "psql to hold the write lock" holding
# Writers behind it: a trigger each on both instances (queued).
pids=()
for i in 1 2 3; do
    pctl trigger s1 deploy --queue >/dev/null 2>"$tmp/w$i.err" &
    pids+=($!)
done
wait_for 60 "the writers to wait for the lock" lock_waiters 3
echo "COMMIT;" >&3
exec 3>&-
for w in "${pids[@]}"; do wait "$w" || fail "a writer failed: $(cat "$tmp"/w*.err)"; done
wait "$p" || fail "psql: $(cat "$tmp/psql.out")"

want=$(val "SELECT seq FROM events ORDER BY seq" | tr '\n' ' ')
n=$(val "SELECT count(*) FROM events")
wait_for 60 "the follower to print every event" has_lines "$n"
got=$(sed 's/^{"seq":\([0-9]*\),.*/\1/' "$tmp/f.out" | tr '\n' ' ')
[ "$got" = "$want" ] || fail "follower saw [$got], the log holds [$want]"
grep -q '"message":"late"' "$tmp/f.out" || fail "the late event was skipped"
kill "$f"

# 2. Concurrent admissions.
pids=()
for i in $(seq 1 8); do
    pctl trigger s2 deploy >"$tmp/t$i.out" 2>&1 &
    pids+=($!)
done
for i in $(seq 1 8); do
    pctl trigger s2 deploy --queue >"$tmp/q$i.out" 2>&1 &
    pids+=($!)
done
refused=0 ok=0
for w in "${pids[@]}"; do
    rc=0
    wait "$w" || rc=$?
    case $rc in 0) ok=$((ok + 1)) ;; 3) refused=$((refused + 1)) ;;
    *) fail "trigger exit $rc: $(cat "$tmp"/[tq]*.out)" ;; esac
done
[ "$ok" = 8 ] && [ "$refused" = 8 ] ||
    fail "with a run active: $ok admitted or queued, $refused refused"
[ "$(val "SELECT count(*) FROM runs r JOIN instances i ON i.id = r.instance_id
          WHERE i.name = 's2' AND r.status = 'QUEUED'")" = 8 ] ||
    fail "not 8 queued runs"

# An idle instance: its runs done first.
pctl run --until-idle >/dev/null 2>&1 || fail "engine"
pids=()
for i in $(seq 1 8); do
    pctl trigger s2 deploy >"$tmp/t$i.out" 2>&1 &
    pids+=($!)
done
refused=0 ok=0
for w in "${pids[@]}"; do
    rc=0
    wait "$w" || rc=$?
    case $rc in 0) ok=$((ok + 1)) ;; 3) refused=$((refused + 1)) ;;
    *) fail "trigger exit $rc: $(cat "$tmp"/t*.out)" ;; esac
done
[ "$ok" = 1 ] && [ "$refused" = 7 ] ||
    fail "on an idle instance: $ok admitted, $refused refused"
[ "$(val "SELECT count(*) FROM runs WHERE status IN
          ('PENDING', 'IN_PROGRESS', 'PAUSED', 'QUEUED')")" = 1 ] ||
    fail "not exactly one active run"
pctl run --until-idle >/dev/null 2>&1 || fail "engine"
check_finished
note "ok: the follower saw every event in order; admissions one at a time"
