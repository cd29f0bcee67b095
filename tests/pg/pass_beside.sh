#!/usr/bin/env bash
# tests/pg/pass_beside.sh - one engine stuck inside its pass holds back
# its own runs, not the other engines': engines' passes share the
# schema's write lock, so another engine's runs go on to the end while the
# stuck engine's session sits idle in its transaction.  (Before, a pass
# took the lock alone and the other engine waited until the server ended
# the stuck session, a quarter of the TTL later.)  A create made then
# does not wait for it either, and engine first runs it.  The engine is caught
# inside its pass without luck: a psql session locks the rows of its
# runs' steps, its next pass waits there, the engine is stopped, the
# rows are let go; the server finishes the statement and the session is
# idle in a transaction its stopped client cannot end.  A cancel of a run
# whose rows the stuck pass changed waits for them and is refused (exit
# 3, one line); a pause, a resume and a cancel of a run engine first
# holds, a trigger, a retry and a delete commit beside it.  Continued, the engine
# goes on, and every run completes.
. "$(dirname "$0")/lib.sh"

sleeper_backlog 1 3 24

# A TTL of 120 s: the server ends a session idle in a transaction after
# 30 s, and nobody declares the stopped engine dead meanwhile.  Each
# engine holds 12 runs at most: both hold runs until the last rounds.
start_two_engines --lease-ttl 120s --capacity 12
both_hold() {
    [ "$(val "SELECT count(DISTINCT c.engine_id) FROM claims c
              JOIN runs r ON r.id = c.run_id
              WHERE r.status IN ('PENDING', 'IN_PROGRESS')")" = 2 ]
}
wait_for 60 "both engines to hold runs" both_hold
second=$(val "SELECT id FROM engines WHERE name = 'second'")
[ -n "$second" ] || fail "engine second has no row"

# The steps of the runs second holds, locked by another session.
"$psql_bin" -X -q -v ON_ERROR_STOP=1 -d "$db" \
    -c "BEGIN; SELECT id FROM planctl.steps
        WHERE run_id IN (SELECT run_id FROM planctl.claims
                         WHERE engine_id = $second) FOR UPDATE;
        SELECT pg_sleep(600); COMMIT" >/dev/null 2>&1 &
holder=$!
bg_pids+=("$holder")
wait_for 60 "the steps to be locked" eval '[ -n "$(holder_backend)" ]'
hb=$(holder_backend)
# The session of engine second waits on them, inside its pass.
waiter() {
    kill -0 "$pid_second" 2>/dev/null ||
        fail "engine second exited: $(cat "$tmp/second.err")"
    q -c "SELECT pid FROM pg_stat_activity
          WHERE $hb = ANY (pg_blocking_pids(pid))"
}
wait_for 60 "engine second's pass to wait on its steps" eval '[ -n "$(waiter)" ]'
backend=$(waiter)
kill -STOP "$pid_second"
q -c "SELECT pg_terminate_backend($hb)" >/dev/null
wait "$holder" 2>/dev/null || true
in_tx() {
    [ "$(q -c "SELECT state FROM pg_stat_activity WHERE pid = $backend")" = \
        "idle in transaction" ]
}
wait_for 60 "the stopped engine's session to be idle in its pass" in_tx

# A cancel of a run whose rows the stuck pass changed waits for them, and
# is refused after the busy timeout, in one line, exit 3, changing
# nothing.  Those runs are the ones whose steps are locked (SKIP LOCKED
# leaves them out).
stuck_run=$(val "SELECT min(run_id) FROM steps
                 WHERE run_id IN (SELECT run_id FROM claims
                                  WHERE engine_id = $second)
                   AND id NOT IN (SELECT id FROM steps FOR UPDATE SKIP LOCKED)")
[ -n "$stuck_run" ] || fail "no run whose steps the stuck pass locked"
stuck_name=$(val "SELECT i.name FROM runs r JOIN instances i
                  ON i.id = r.instance_id WHERE r.id = $stuck_run")
events=$(val "SELECT count(*) FROM events WHERE run_id = $stuck_run")
rc=0
pctl cancel "$stuck_name" --run "$stuck_run" >"$tmp/held.out" \
    2>"$tmp/held.err" || rc=$?
[ "$rc" = 3 ] ||
    fail "cancel of a run the stuck pass changed: exit $rc: $(cat "$tmp/held.err")"
[ "$(wc -l <"$tmp/held.err")" = 1 ] || fail "not one line: $(cat "$tmp/held.err")"
grep -q "try again" "$tmp/held.err" || fail "message: $(cat "$tmp/held.err")"
[ "$(val "SELECT count(*) FROM events WHERE run_id = $stuck_run")" = \
    "$events" ] || fail "the refused cancel wrote events"
in_tx || fail "the stuck session ended before the refused cancel was done"

# Every run second does not hold completes while it is stuck.
others_done() {
    in_tx || fail "the stuck session ended before engine first finished" \
        "its runs: $(val "SELECT count(*) FROM runs WHERE status IN
                          ('PENDING', 'IN_PROGRESS')") active"
    kill -0 "$pid_first" 2>/dev/null ||
        fail "engine first exited: $(cat "$tmp/first.err")"
    [ "$(val "SELECT count(*) FROM runs r
              LEFT JOIN claims c ON c.run_id = r.id
              WHERE r.status NOT IN ('COMPLETE', 'FATAL_ERROR', 'CANCELLED')
                AND c.engine_id IS DISTINCT FROM $second")" = 0 ]
}
wait_for 60 "engine first to complete its runs" others_done
in_tx || fail "the stuck session ended"
done_first=$(val "SELECT count(*) FROM runs WHERE status = 'COMPLETE'")
[ "$done_first" -gt 0 ] || fail "no run completed beside the stuck pass"
# A create does not wait for the stuck pass either (an admission writes
# only rows of its own), and engine first runs it to the end.
pctl create late --definition sleeper >"$tmp/late.out" 2>&1 ||
    fail "create beside the stuck pass: $(cat "$tmp/late.out")"
in_tx || fail "the stuck session ended before the create was done"
wait_for 60 "engine first to complete the new run" others_done

# Nor do a pause, a resume and a cancel of a run it does not hold (each
# under its run's row lock): made while engine first runs the run.
pctl create late2 --definition sleeper >/dev/null ||
    fail "create late2 beside the stuck pass"
late2_is() {
    [ "$(val "SELECT r.status FROM runs r JOIN instances i
              ON i.id = r.instance_id WHERE i.name = 'late2'")" = "$1" ]
}
wait_for 60 "engine first to start late2" late2_is IN_PROGRESS
for verb in pause resume; do
    pctl "$verb" late2 >"$tmp/$verb.out" 2>&1 ||
        fail "$verb beside the stuck pass: $(cat "$tmp/$verb.out")"
done
pctl cancel late2 --reason beside >"$tmp/cancel.out" 2>&1 ||
    fail "cancel beside the stuck pass: $(cat "$tmp/cancel.out")"
late2_is CANCELLED || fail "late2 not cancelled"
in_tx || fail "the stuck session ended before the cancel was done"
# A trigger and a retry (each under its instance's row lock) admit runs
# beside it too, and engine first runs them to the end.
pctl trigger late deploy >"$tmp/trigger.out" 2>&1 ||
    fail "trigger beside the stuck pass: $(cat "$tmp/trigger.out")"
pctl retry late2 >"$tmp/retry.out" 2>&1 ||
    fail "retry beside the stuck pass: $(cat "$tmp/retry.out")"
in_tx || fail "the stuck session ended before the trigger and retry"
wait_for 60 "engine first to complete the triggered and retried runs" \
    others_done
# A delete of an instance with no active run (under its row lock too)
# removes it beside the stuck pass.
pctl delete late2 >"$tmp/delete.out" 2>&1 ||
    fail "delete beside the stuck pass: $(cat "$tmp/delete.out")"
[ "$(val "SELECT count(*) FROM instances WHERE name = 'late2'")" = 0 ] ||
    fail "late2 not deleted"
in_tx || fail "the stuck session ended before the delete was done"

# Continued, engine second goes on (its session may have been ended
# meanwhile: it makes it again), and every run completes.
kill -CONT "$pid_second"
wait_for 120 "the engines to complete every run" all_done
stop_two_engines
check_finished
note "ok: $done_first runs completed beside an engine stuck inside its pass"
