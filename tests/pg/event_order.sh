#!/usr/bin/env bash
# tests/pg/event_order.sh - the event log as writers commit it.
#  1. A transaction of another client (psql) inserts an event and stays
#     open, holding a lower number while later ones commit: writers of
#     events no longer wait for each other, so planctl's writers and the
#     engine go on beside it.  No follower (`events --follow -o jsonl`,
#     `events -o json`) goes past the open number while it is open; once
#     it commits, the follower prints every event in seq order, none
#     skipped, the late-committed one included, and the engine's feed has
#     not skipped it either (its cursor stays behind the open number).
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
"$PLANCTL_BIN" run --name e1 >"$tmp/e.out" 2>"$tmp/e.err" &
ENGINE_PID=$! ENGINE_ERR=$tmp/e.err
bg_pids+=("$ENGINE_PID")

# The open transaction: psql reads its script from a FIFO kept open.
mkfifo "$tmp/psql.in"
"$psql_bin" -X -q -At -v ON_ERROR_STOP=1 -d "$db" <"$tmp/psql.in" \
    >"$tmp/psql.out" 2>&1 &
p=$!
bg_pids+=("$p")
exec 3>"$tmp/psql.in"
echo "BEGIN; INSERT INTO planctl.events (at, instance_id, entity, message, actor)
      SELECT 0, id, 'instance', 'late', 'test' FROM planctl.instances
       WHERE name = 's1';
      SELECT 'late=' || seq FROM planctl.events
       WHERE message = 'late' AND actor = 'test';" >&3
got_late() { grep -q '^late=' "$tmp/psql.out"; }
wait_for 60 "psql to insert its event" got_late
late=$(sed -n 's/^late=//p' "$tmp/psql.out")

# Writers do not wait behind it: each trigger returns, and the engine runs
# both instances' runs to their end, numbering events after the open one.
for i in 1 2 3; do
    timeout 60 "$PLANCTL_BIN" trigger s2 deploy --queue >/dev/null \
        2>"$tmp/w$i.err" || fail "a writer failed or waited: $(cat "$tmp/w$i.err")"
done
wait_for 120 "the engine to complete the runs beside the open transaction" all_done
[ "$(val "SELECT count(*) FROM events WHERE seq > $late")" -gt 10 ] ||
    fail "no events numbered after the open one"
# Held back below the open number: the follower and a reader of a page.
max_printed() { sed 's/^{"seq":\([0-9]*\),.*/\1/' "$tmp/f.out" | sort -n | tail -n 1; }
[ "$(max_printed)" -lt "$late" ] ||
    fail "the follower went past the open event $late: $(max_printed)"
pctl events -o json --since $((late - 1)) >"$tmp/page.json"
grep -Eq '"last_seq": *'$((late - 1))'([^0-9]|$)' "$tmp/page.json" ||
    fail "events -o json went past the open event: $(cat "$tmp/page.json")"
echo "COMMIT;" >&3
exec 3>&-
wait "$p" || fail "psql: $(cat "$tmp/psql.out")"
# A planctl write after it: the followers are woken by commits.
pctl trigger s1 deploy >/dev/null || fail "trigger s1"
wait_for 120 "the engine to complete the last run" all_done

want=$(val "SELECT seq FROM events ORDER BY seq" | tr '\n' ' ')
n=$(val "SELECT count(*) FROM events")
wait_for 60 "the follower to print every event" has_lines "$n"
got=$(sed 's/^{"seq":\([0-9]*\),.*/\1/' "$tmp/f.out" | tr '\n' ' ')
[ "$got" = "$want" ] || fail "follower saw [$got], the log holds [$want]"
grep -q '"message":"late"' "$tmp/f.out" || fail "the late event was skipped"
kill "$f"
stop_engine "$ENGINE_PID" planctl "$tmp/e.err"
ENGINE_PID=

# 2. Concurrent admissions, with a run of s2 active (no engine runs it).
pctl trigger s2 deploy >/dev/null || fail "trigger s2"
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
