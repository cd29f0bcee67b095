#!/usr/bin/env bash
# tests/pg/upgrade.sh - a schema at version 7 (events numbered under the
# write lock from meta.event_seq), with events written and one removed,
# opened by this planctl: migration 0008 moves it to a sequence that
# never gives a number again (not the removed one either), records the
# removal for readers (meta.events_removed), and the log reads on; 0009
# drops the events' foreign keys: an instance deleted still takes its
# events, and verify finds an event whose run is not there; 0010 leaves
# room on the pages of runs, phases and steps (fillfactor 70); 0011 adds
# the horizon an engine of a fleet reads (events_horizon_fleet); 0012
# removes the claims of ended runs.
. "$(dirname "$0")/lib.sh"

fresh_db
load_schema "$src/migrations/postgres/0001_init.sql" \
    "$src/migrations/postgres/0006_engines.sql" \
    "$src/migrations/postgres/0007_run_waits.sql"
[ "$(val "SELECT value FROM meta WHERE key = 'schema_version'")" = 7 ] ||
    fail "the migrations up to 0007 did not make version 7"
q -c "SET search_path = planctl" \
    -c "INSERT INTO events (at, entity, message, actor) VALUES
        (0, 'engine', 'a', 'test'), (0, 'engine', 'b', 'test'),
        (0, 'engine', 'c', 'test')" \
    -c "DELETE FROM events WHERE message = 'c'" >/dev/null
# An ended run and an active one, each with its claim (triggers off: the
# rows as any version made them).
q -c "SET search_path = planctl" -c "SET session_replication_role = replica" \
    -c "INSERT INTO definitions (name, version, body, created_at)
        VALUES ('old', '1', '{}', 0)" \
    -c "INSERT INTO instances (name, definition_id, params, created_at,
                               updated_at)
        SELECT 'old', id, '{}', 0, 0 FROM definitions WHERE name = 'old'" \
    -c "INSERT INTO runs (uid, instance_id, definition_id, plan, status,
                          trigger, params, created_at)
        SELECT 'old-' || s, i.id, i.definition_id, 'deploy', s, 'create',
               '{}', 0
        FROM instances AS i, unnest(ARRAY['COMPLETE', 'IN_PROGRESS']) AS s
        WHERE i.name = 'old'" \
    -c "INSERT INTO claims (run_id, engine_id, token) SELECT id, NULL, 1 FROM runs" \
    >/dev/null
PLANCTL_DB=$(pg_uri)
export PLANCTL_DB
pctl apply -f "$src/tools/examples/zookeeper.json" >"$tmp/apply.out" 2>&1 ||
    fail "apply on a version 7 schema: $(cat "$tmp/apply.out")"
[ "$(val "SELECT value FROM meta WHERE key = 'schema_version'")" = 12 ] ||
    fail "not migrated to version 12"
claimed=$(val "SELECT string_agg(r.status, ',') FROM claims AS c
               JOIN runs AS r ON r.id = c.run_id")
[ "$claimed" = IN_PROGRESS ] ||
    fail "0012 left the claims of the runs [$claimed], not the active one's"
q -c "DELETE FROM planctl.instances WHERE name = 'old'" \
    -c "DELETE FROM planctl.definitions WHERE name = 'old'" >/dev/null
[ "$(val "SELECT planctl.events_horizon_fleet(-1) =
             planctl.events_horizon(-1)")" = t ] ||
    fail "0011's events_horizon_fleet differs from events_horizon when idle"
ff=$(val "SELECT string_agg(relname || ' ' || coalesce(array_to_string(
              reloptions, ','), '-'), ' ' ORDER BY relname)
            FROM pg_class WHERE relnamespace = 'planctl'::regnamespace
             AND relname IN ('runs', 'phases', 'steps', 'attempts')")
[ "$ff" = "attempts - phases fillfactor=70 runs fillfactor=70 steps fillfactor=70" ] ||
    fail "0010's fillfactors: $ff"
[ "$(val "SELECT value FROM meta WHERE key = 'events_removed'")" = 3 ] ||
    fail "events_removed is not 3: $(val "SELECT * FROM meta")"
[ "$(val "SELECT count(*) FROM meta WHERE key = 'event_seq'")" = 0 ] ||
    fail "meta.event_seq stayed"
pctl create zk --definition zookeeper >/dev/null 2>"$tmp/create.err" ||
    fail "create: $(cat "$tmp/create.err")"
first=$(val "SELECT min(seq) FROM events WHERE message IS DISTINCT FROM 'a'
             AND message IS DISTINCT FROM 'b'")
[ "$first" -gt 3 ] || fail "a number was given again: $first"
pctl events -o jsonl >"$tmp/events.out" || fail "events"
got=$(sed 's/^{"seq":\([0-9]*\),.*/\1/' "$tmp/events.out" | tr '\n' ' ')
want=$(val "SELECT seq FROM events ORDER BY seq" | tr '\n' ' ')
[ "$got" = "$want" ] || fail "events printed [$got], the log holds [$want]"
pctl verify >"$tmp/verify.out" 2>&1 || fail "verify: $(cat "$tmp/verify.out")"

# 0009: the events go with their instance, as the cascade did.
pctl create zk2 --definition zookeeper >/dev/null || fail "create zk2"
inst=$(val "SELECT id FROM instances WHERE name = 'zk2'")
[ "$(val "SELECT count(*) FROM events WHERE instance_id = $inst")" -gt 0 ] ||
    fail "zk2 has no events"
q -c "SET search_path = planctl" -c "DELETE FROM instances WHERE id = $inst" \
    >/dev/null || fail "deleting zk2"
[ "$(val "SELECT count(*) FROM events WHERE instance_id = $inst")" = 0 ] ||
    fail "zk2's events stayed after it went"
pctl verify >"$tmp/verify.out" 2>&1 || fail "verify: $(cat "$tmp/verify.out")"
# An event whose run is not there: verify names it, exit 1.
seq=$(val "INSERT INTO events (at, entity, actor, run_id, instance_id)
           VALUES (0, 'run', 'test', 999999,
                   (SELECT id FROM instances WHERE name = 'zk'))
           RETURNING seq")
rc=0
pctl verify >"$tmp/verify.out" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "verify with an orphan event: exit $rc"
grep -qx "planctl: foreign key check: events row $seq refers to a runs row that is not there" \
    "$tmp/verify.out" || fail "verify said: $(cat "$tmp/verify.out")"
note "ok: version 7 migrated; numbers go on after the largest ever given;" \
    "events go with their instance and verify checks their references"
