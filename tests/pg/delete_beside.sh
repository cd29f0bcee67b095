#!/usr/bin/env bash
# tests/pg/delete_beside.sh - deletes made while engines are mid-pass: a
# delete takes its instance's row lock, not the schema's lock alone, so
# it may commit while a pass is stopping the tasks of a run the delete
# removes (cancelled just before).  Two engines run a backlog of
# sleepers; each instance in turn is cancelled and at once deleted
# (--force: no cleanup plan), some while their tasks run, some queued
# behind nothing, some not yet started.  Neither engine may stop or say
# anything but its runs; every delete succeeds (or is refused in one
# line, exit 3, when a pass holds the row past the busy timeout), every
# instance left completes, `verify` is clean, and no task is left
# running.
. "$(dirname "$0")/lib.sh"

sleeper_backlog 1 1 40
start_two_engines --lease-ttl 6s --capacity 8

started() {
    [ "$(val "SELECT count(*) FROM attempts")" -gt 4 ]
}
wait_for 60 "the engines to start tasks" started
deleted=0 running=0
for i in $(seq 1 40 | awk 'NR % 2 == 1'); do
    for pid in "$pid_first" "$pid_second"; do
        kill -0 "$pid" 2>/dev/null ||
            fail "an engine exited: $(cat "$tmp/first.err" "$tmp/second.err")"
    done
    st=$(val "SELECT r.status FROM runs r JOIN instances i
              ON i.id = r.instance_id WHERE i.name = 's$i'")
    pctl cancel "s$i" --reason gone >/dev/null 2>"$tmp/cancel.err" || true
    rc=0
    pctl delete "s$i" --force >"$tmp/delete.out" 2>"$tmp/delete.err" || rc=$?
    case $rc in
    0)
        deleted=$((deleted + 1))
        [ "$st" != IN_PROGRESS ] || running=$((running + 1)) ;;
    3 | 4)
        [ "$(wc -l <"$tmp/delete.err")" = 1 ] ||
            fail "delete s$i: not one line: $(cat "$tmp/delete.err")" ;;
    *) fail "delete s$i: exit $rc: $(cat "$tmp/delete.err")" ;;
    esac
done
[ "$deleted" -gt 10 ] || fail "only $deleted of 20 deletes made"
[ "$running" -gt 2 ] || fail "only $running deletes of runs in progress"
wait_for 120 "the engines to complete the rest" all_done
stop_two_engines
for n in first second; do
    bad=$(grep -v '^planctl: engine running on \|^planctl: interrupt: ' \
        "$tmp/$n.err" || true)
    [ -z "$bad" ] || fail "engine $n said: $bad"
done
[ "$(val "SELECT count(*) FROM instances")" = $((40 - deleted)) ] ||
    fail "$(val "SELECT count(*) FROM instances") instances left, $deleted deleted"
check_finished_any() {
    bad=$(val "SELECT id FROM attempts WHERE finished_at IS NULL")
    [ -z "$bad" ] || fail "tries left open: $bad"
    pctl verify >"$tmp/verify.out" 2>&1 || fail "verify: $(cat "$tmp/verify.out")"
    [ ! -s "$tmp/overlaps" ] || fail "tries overlapped: $(cat "$tmp/overlaps")"
}
check_finished_any
! pgrep -f "$tmp/lock" >/dev/null || fail "tasks left running"
note "ok: $deleted instances deleted beside two engines' passes," \
    "$running of them running tasks when cancelled"
