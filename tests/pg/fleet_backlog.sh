#!/usr/bin/env bash
# tests/pg/fleet_backlog.sh - an engine claiming a backlog a slice a pass
# serves its loop between the passes: the tasks that reported are applied
# and the heartbeat is renewed while it claims (issue 34, item 5: load is
# not death).
#
# A pass that claims a full slice asks for another at once.  It did so
# with a zero-delay timer, which libuv before 1.48 (Debian 12 has 1.44)
# runs again in the same turn of the loop when started from a timer's
# callback: the passes of a backlog ran back to back, never polling, so
# no task's report was applied and no heartbeat renewed until the whole
# backlog was claimed (found with 4,000 runs on one engine: 0.7 s of
# claims, no step completed, and with a 1 s TTL the engine stopped
# itself, "could not renew its heartbeat").
#
# Deterministic, not timed: one engine, --concurrency 16 (a slice of 16
# runs a pass), 80 runs of two quick steps.  The first pass claims 16 runs
# and starts their first steps; Dummy steps report at once.  Served
# between passes, those reports are applied by the second pass, before
# the last runs are claimed: some step completes before the last run
# starts.  Back to back, every run started before any step completed.
# And the shares are counted once for the backlog, not at every slice:
# counting reads every active run, and with 20,000 runs and three engines
# it had become the fleet's costliest statement (asked for at nearly
# every pass); a slice claimed whole goes on with the shares it counted
# (a heartbeat or a notification counts them again).  Nor is every active
# run read at every slice to find the next: a claim from the first run
# hashes them all with their claims, where one going on after the last
# run it took reads about its slice.
. "$(dirname "$0")/lib.sh"

fresh_db
PLANCTL_DB=$(pg_uri)
export PLANCTL_DB
cat >"$tmp/two.json" <<'DEF'
{"name": "two", "version": "1",
 "tasks": [{"name": "quick", "kind": "Dummy"}],
 "plans": {"deploy": {"phases": [{"name": "p", "steps": [
   {"name": "a", "tasks": ["quick"]}, {"name": "b", "tasks": ["quick"]}]}]}}}
DEF
pctl apply -f "$tmp/two.json" >/dev/null || fail "apply two"
for i in $(seq 1 80); do pctl create "b$i" --definition two >/dev/null; done

# Every statement of this database logged, to count the looks at the
# shares (each reads every active run).
q -c "ALTER DATABASE $db SET log_statement = 'all'"
log=$PLANCTL_PG_DIR/server.log
log_from=$(($(wc -c <"$log") + 1))
rc=0
timeout 60 "$PLANCTL_BIN" run --until-idle --name only --concurrency 16 \
    >"$tmp/only.out" 2>"$tmp/only.err" || rc=$?
[ "$rc" = 0 ] || fail "engine only exited $rc: $(tail -n 3 "$tmp/only.err")"
check_finished
# The engine ended every run: no claim is left (they go with the runs).
[ "$(val "SELECT count(*) FROM claims")" = 0 ] ||
    fail "claims of ended runs stayed: $(val "SELECT count(*) FROM claims")"
first_done=$(val "SELECT min(seq) FROM events WHERE entity = 'step'
                  AND to_status = 'COMPLETE'")
last_start=$(val "SELECT max(seq) FROM events WHERE entity = 'run'
                  AND to_status = 'IN_PROGRESS'")
[ "$first_done" -lt "$last_start" ] ||
    fail "no step completed before the last run started (first step" \
        "complete at event $first_done, last run started at event" \
        "$last_start): the claiming passes ran back to back"
note "80 runs claimed 16 a pass; a step completed (event $first_done)" \
    "before the last run started (event $last_start)"
looks=$(tail -c +"$log_from" "$log" | grep -c 'SELECT e.capacity, s.wanting' || true)
[ "$looks" -le 2 ] ||
    fail "the engine counted the shares $looks times for one backlog" \
        "claimed 16 a pass (a slice claimed whole goes on with them)"
note "the shares were counted $looks time(s)"
from_first=$(tail -c +"$log_from" "$log" |
    grep -c 'LEFT JOIN claims AS x ON x.run_id = r.id' || true)
after=$(tail -c +"$log_from" "$log" | grep -c 'AND r.id > \$3' || true)
[ "$from_first" -le 2 ] && [ "$after" -ge 3 ] ||
    fail "the engine claimed $from_first time(s) from the first run and" \
        "$after time(s) after the last it took, for one backlog claimed 16" \
        "a pass (it goes on after the last)"
note "claims: $from_first from the first run, $after after the last taken"
