#!/usr/bin/env bash
# tests/pg/guards.sh - the PostgreSQL schema's other guards: transitions
# read-only (PC002), events append-only (PC002), one active run per
# instance (the partial unique index), one open try per step, the CHECKs,
# an UPDATE that leaves status alone is not a transition, and deleting an
# instance removes its runs, phases, steps, tries and events.
. "$(dirname "$0")/lib.sh"

fresh_db
load_schema "$src/schema/postgres.sql"

# expect SQLSTATE SQL...: the statement fails with SQLSTATE (or succeeds:
# ok), and leaves nothing behind when it fails.
expect() {
    local want=$1 got
    shift
    got=$(q -c "SET search_path = planctl" -c "\\set VERBOSITY sqlstate" \
        -c "$*" 2>&1 >/dev/null) || true
    got=${got#ERROR:  }
    [ -n "$got" ] || got=ok
    [ "$got" = "$want" ] || fail "$* -> $got, expected $want"
}
sql() { q -c "SET search_path = planctl" -c "$*" >/dev/null; }
val() { q -c "SET search_path = planctl" -c "$*"; }

sql "INSERT INTO definitions (name, version, body, created_at)
     VALUES ('d', '1', '{}', 0);
     INSERT INTO instances (name, definition_id, params, created_at, updated_at)
     VALUES ('a', 1, '{}', 0, 0), ('b', 1, '{}', 0, 0)"
run() { # run UID INSTANCE STATUS
    printf "INSERT INTO runs (uid, instance_id, definition_id, plan, status,
        trigger, params, created_at)
        VALUES ('%s', %s, 1, 'deploy', '%s', 'manual', '{}', 0)" "$1" "$2" "$3"
}

# transitions is read-only, even to its owner, a superuser.
expect PC002 "INSERT INTO transitions VALUES ('run', 'COMPLETE', 'PENDING')"
expect PC002 "UPDATE transitions SET to_status = 'COMPLETE'"
expect PC002 "DELETE FROM transitions"
expect PC002 "TRUNCATE transitions"
[ "$(val 'SELECT count(*) FROM transitions')" = 30 ] ||
    fail "transitions changed"
msg=$(q -c "DELETE FROM planctl.transitions" 2>&1) && fail "DELETE accepted"
case $msg in *"transitions is read-only"*) ;; *) fail "message: $msg" ;; esac

# One active run per instance: PENDING, IN_PROGRESS and PAUSED are active;
# QUEUED runs wait beside one.
sql "$(run r1 1 PENDING)"
expect 23505 "$(run r2 1 PENDING)"
sql "$(run r2 1 QUEUED)"
sql "$(run r3 1 QUEUED)"
sql "$(run r4 2 PENDING)" # another instance
sql "UPDATE runs SET status = 'IN_PROGRESS' WHERE uid = 'r1'"
expect 23505 "UPDATE runs SET status = 'PENDING' WHERE uid = 'r2'"
sql "UPDATE runs SET status = 'PAUSED' WHERE uid = 'r1'"
expect 23505 "UPDATE runs SET status = 'PENDING' WHERE uid = 'r2'"
sql "UPDATE runs SET status = 'CANCELLED' WHERE uid = 'r1'"
sql "UPDATE runs SET status = 'PENDING' WHERE uid = 'r2'"
expect 23505 "UPDATE runs SET status = 'PENDING' WHERE uid = 'r3'"
# The guard before the index: an illegal edge is PC001 even when it would
# also make a second active run.
expect PC001 "UPDATE runs SET status = 'IN_PROGRESS' WHERE uid = 'r3'"
[ "$(val "SELECT count(*) FROM runs WHERE instance_id = 1 AND status IN
      ('PENDING', 'IN_PROGRESS', 'PAUSED')")" = 1 ] ||
    fail "not one active run"

# An UPDATE that does not set status is no transition, whatever the status.
sql "UPDATE runs SET message = 'm', event_count = event_count + 1"
# Setting status to the same value is one, as in SQLite (not listed).
expect PC001 "UPDATE runs SET status = status WHERE uid = 'r2'"

# The CHECKs.
expect 23514 "$(run r9 2 QUEUED | sed "s/'manual'/'bogus'/")"
expect 23514 "UPDATE instances SET deleting = 2 WHERE name = 'a'"
expect 23514 "INSERT INTO engine_lease VALUES (2, 'o', 'h', 1, 1, 0, 0)"
sql "INSERT INTO engine_lease VALUES (1, 'o', 'h', 1, 1, 0, 0)"

# A phase, a step with one open try, outputs and events of the run r2.
r2=$(val "SELECT id FROM runs WHERE uid = 'r2'")
sql "INSERT INTO phases (run_id, idx, name, strategy, status)
     VALUES ($r2, 0, 'p', 'serial', 'PENDING')"
p=$(val "SELECT id FROM phases WHERE run_id = $r2")
expect 23514 "INSERT INTO phases (run_id, idx, name, strategy, status)
     VALUES ($r2, 1, 'q', 'sideways', 'PENDING')"
expect 23514 "INSERT INTO steps (run_id, phase_id, idx, name, status,
     max_attempts) VALUES ($r2, $p, 0, 's', 'PENDING', 0)"
sql "INSERT INTO steps (run_id, phase_id, idx, name, status, max_attempts)
     VALUES ($r2, $p, 0, 's', 'PENDING', 3)"
s=$(val "SELECT id FROM steps WHERE run_id = $r2")
sql "INSERT INTO attempts (step_id, number, status, started_at)
     VALUES ($s, 1, 'IN_PROGRESS', 0)"
expect 23505 "INSERT INTO attempts (step_id, number, status, started_at)
     VALUES ($s, 2, 'IN_PROGRESS', 0)"
expect 23514 "INSERT INTO attempts (step_id, number, status, started_at)
     VALUES ($s, 0, 'IN_PROGRESS', 0)"
sql "INSERT INTO task_outputs VALUES ($s, 0, '{}');
     INSERT INTO attempt_output_bytes VALUES ($s, 1, 10)"
expect 23514 "INSERT INTO attempt_output_bytes VALUES ($s, 2, -1)"

# events: appended, and deleted (gc), never changed.
ev="INSERT INTO events (at, instance_id, run_id, entity, actor)
    VALUES (0, 1, $r2, 'run', 'test')"
sql "$ev"
sql "$ev"
expect 23514 "INSERT INTO events (at, entity, actor) VALUES (0, 'planet', 't')"
expect PC002 "UPDATE events SET message = 'rewritten'"
expect PC002 "UPDATE events SET at = 1 WHERE seq = (SELECT min(seq) FROM events)"
sql "DELETE FROM events WHERE seq = (SELECT min(seq) FROM events)"
[ "$(val 'SELECT count(*) FROM events')" = 1 ] || fail "events count"

# A retry of r2 in instance b: deleting r2's instance sets its retry_of
# to NULL; the instance's runs, phases, steps, tries, outputs and events go.
sql "$(run r5 2 QUEUED | sed "s/'manual', '{}'/'retry', '{}'/")"
sql "UPDATE runs SET retry_of = $r2 WHERE uid = 'r5'"
sql "DELETE FROM instances WHERE name = 'a'"
left=$(val "SELECT (SELECT count(*) FROM runs WHERE instance_id = 1)
    + (SELECT count(*) FROM phases) + (SELECT count(*) FROM steps)
    + (SELECT count(*) FROM attempts) + (SELECT count(*) FROM task_outputs)
    + (SELECT count(*) FROM attempt_output_bytes)
    + (SELECT count(*) FROM events)")
[ "$left" = 0 ] || fail "$left rows of the deleted instance left"
[ "$(val "SELECT count(*) FROM runs WHERE instance_id = 2")" = 2 ] ||
    fail "the other instance's runs went too"
[ -z "$(val "SELECT retry_of FROM runs WHERE uid = 'r5'")" ] ||
    fail "retry_of not set to NULL"
[ "$(val 'SELECT count(*) FROM definitions')" = 1 ] ||
    fail "the definition went with the instance"
# A definition an instance uses cannot go.
expect 23503 "DELETE FROM definitions"
note "transitions read-only, events append-only, one active run, one open try, CHECKs, cascades: as SQLite"
