#!/usr/bin/env bash
# tests/pg/fleet_room.sh - an engine whose runs end while other runs wait
# for an engine claims them then, not at its next heartbeat (issue 34,
# item 4).  Engines' own commits wake nobody, so nothing else tells it
# that it has room: the runs waited up to a third of the TTL, and at the
# end of a backlog an engine with --until-idle stopped and left them
# (found by planctl-bench pg --fleet: two engines took 5 s instead of 1
# in one round out of three).
#
# One engine, --capacity 2 and a TTL of 300 s (a heartbeat every 100 s),
# with --until-idle, on 6 runs of 3 quick steps: it holds 2 at a time and
# must complete all 6, claiming as room frees, within 60 s (it takes a
# second or two; --until-idle waits for runs nobody holds, so before the
# fix it finished only after a heartbeat, 100 s in: the bound is what
# fails it).  Then two engines of --capacity 2 on 12 runs, likewise.
. "$(dirname "$0")/lib.sh"

sleeper_backlog 0 1 6 r

rc=0
timeout 60 "$PLANCTL_BIN" run --until-idle --name only --capacity 2 \
    --lease-ttl 300s >"$tmp/only.out" 2>"$tmp/only.err" || rc=$?
[ "$rc" != 124 ] || fail "engine only had not claimed the runs left after 60 s"
[ "$rc" = 0 ] || fail "engine only exited $rc: $(tail -n 3 "$tmp/only.err")"
left=$(val "SELECT count(*) FROM runs WHERE status <> 'COMPLETE'")
[ "$left" = 0 ] || fail "engine only stopped with $left runs not complete"
check_finished
note "one engine of capacity 2 completed 6 runs, claiming as runs ended"

for i in $(seq 7 18); do pctl create "r$i" --definition sleeper >/dev/null; done
for n in a b; do
    timeout 60 "$PLANCTL_BIN" run --until-idle --name "$n" --capacity 2 \
        --lease-ttl 300s >"$tmp/$n.out" 2>"$tmp/$n.err" &
    eval "pid_$n=$!"
    bg_pids+=("$!")
done
for n in a b; do
    rc=0
    eval "wait \$pid_$n" || rc=$?
    [ "$rc" = 0 ] || fail "engine $n exited $rc: $(tail -n 3 "$tmp/$n.err")"
done
left=$(val "SELECT count(*) FROM runs WHERE status <> 'COMPLETE'")
[ "$left" = 0 ] || fail "engines stopped with $left runs not complete"
check_finished
note "two engines of capacity 2 completed 12 runs"
