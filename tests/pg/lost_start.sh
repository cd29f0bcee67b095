#!/usr/bin/env bash
# tests/pg/lost_start.sh - commits the server lost while the tries they
# started run on.
#
# A server that acknowledges commits before they are durable
# (synchronous_commit = off) and then crashes can lose the commits that
# started a step, claimed its run or promoted it, while the engine's task
# for that try runs on.  The engine learns of it only by reading its runs
# anew (its session made again), and finds the step not started, or its
# run not held, with a job of its own still running.  It cancels that job;
# it must not start the step again until the job has exited: never two
# tries of one step at once (the flock below).
#
# The lost commits are made by hand, with triggers off:
#  1. the step's start undone (its row, its try, its event, its run's event
#     count): the run is still the engine's;
#  2. the same and the run's claim: the engine claims it again;
#  3. every commit since a copy of the tables was taken (the engine
#     stopped, its sessions terminated, the tables put back): a run that
#     ended and the queued run promoted behind it and started.  The first
#     run's step, found running with no task, is tried again; once it
#     ends, the queued run is promoted again while the lost try still
#     exits.
# Each try waits for a file of its run ($tmp/go.UID) and takes SIGTERM
# slowly (its trap sleeps 4 s holding the flock), so a try started beside
# it cannot take the lock.
. "$(dirname "$0")/lib.sh"

fresh_db
PLANCTL_DB=$(pg_uri)
export PLANCTL_DB

cmd="exec 9>$tmp/lock.\$PLANCTL_RUN_UID; flock -n 9 || echo \$PLANCTL_RUN_UID \$PLANCTL_ATTEMPT >>$tmp/overlaps; touch $tmp/up.\$PLANCTL_RUN_UID.\$PLANCTL_ATTEMPT; trap 'sleep 4; exit 1' TERM; until [ -e $tmp/go.\$PLANCTL_RUN_UID ]; do sleep 0.1; done; echo \$PLANCTL_RUN_UID \$PLANCTL_ATTEMPT >>$tmp/done"
cat >"$tmp/def.json" <<DEF
{"name": "lost", "version": "1",
 "tasks": [{"name": "nap", "kind": "shell", "spec": {"command": "$cmd"}}],
 "plans": {"deploy": {"phases": [
   {"name": "p", "steps": [{"name": "a", "tasks": ["nap"],
                            "retry": {"attempts": 3, "backoff": "10ms"}}]}]}}}
DEF
pctl apply -f "$tmp/def.json" >/dev/null || fail "apply"

planctl_sessions() {
    q -c "SELECT string_agg(pid::text, ' ' ORDER BY pid) FROM pg_stat_activity
          WHERE datname = current_database()
          AND application_name = 'planctl'"
}
terminate_planctl() {
    q -c "SELECT pg_terminate_backend(pid) FROM pg_stat_activity
          WHERE datname = current_database()
          AND application_name = 'planctl'" >/dev/null
}
# The uid of instance $1's run number $2 (1 by default), oldest first.
run_uid() {
    val "SELECT r.uid FROM runs r JOIN instances i ON i.id = r.instance_id
         WHERE i.name = '$1' ORDER BY r.id OFFSET ${2:-1} - 1 LIMIT 1"
}
# Whether run uid $1 has a try open whose shell runs (failing at once if
# the engine exited).
try_running() {
    local n
    kill -0 "$ENGINE_PID" 2>/dev/null ||
        fail "the engine exited: $(cat "$ENGINE_ERR")"
    n=$(val "SELECT a.number FROM attempts a JOIN steps s ON s.id = a.step_id
             JOIN runs r ON r.id = s.run_id
             WHERE r.uid = '$1' AND a.finished_at IS NULL")
    [ -n "$n" ] && [ -e "$tmp/up.$1.$n" ]
}
finish() { touch "$tmp/go.$1"; }
no_overlap() {
    [ ! -s "$tmp/overlaps" ] ||
        fail "a try started beside a lost one: $(cat "$tmp/overlaps")"
}

# undo_start [CLAIM]: the running step's start undone as a lost commit
# would leave it (with CLAIM, the run's claim too: no engine holds it).
undo_start() {
    q <<SQL >/dev/null || fail "undoing the step's start"
SET search_path = planctl;
SET session_replication_role = replica;
BEGIN;
DELETE FROM events WHERE entity = 'step' AND to_status = 'IN_PROGRESS'
    AND seq = (SELECT max(seq) FROM events WHERE entity = 'step');
UPDATE runs SET event_count = event_count - 1 WHERE status = 'IN_PROGRESS';
DELETE FROM attempts WHERE finished_at IS NULL;
UPDATE steps SET status = 'PENDING', attempt = attempt - 1,
    started_at = NULL, deadline_at = NULL, message = NULL
WHERE status = 'IN_PROGRESS';
${1:+UPDATE claims SET engine_id = NULL;}
COMMIT;
SQL
}

# A copy of every table of schema planctl, as one snapshot saw them.
copy_tables() {
    q <<'SQL' >/dev/null || fail "copying the tables"
BEGIN ISOLATION LEVEL REPEATABLE READ;
DROP SCHEMA IF EXISTS saved CASCADE;
CREATE SCHEMA saved;
DO $$
DECLARE t text;
BEGIN
    FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = 'planctl' LOOP
        EXECUTE format('CREATE TABLE saved.%I AS TABLE planctl.%I', t, t);
    END LOOP;
END $$;
COMMIT;
SQL
}
# Every commit since copy_tables lost, as a crash would lose them: engine
# $1 stopped, planctl's sessions terminated (its pass rolled back), the
# tables put back, the engine continued.
lose_commits() {
    kill -STOP "$1"
    terminate_planctl
    q <<'SQL' >/dev/null || fail "putting the tables back"
SET session_replication_role = replica;
BEGIN;
DO $$
DECLARE t text;
BEGIN
    FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = 'planctl' LOOP
        EXECUTE format('DELETE FROM planctl.%I', t);
        EXECUTE format('INSERT INTO planctl.%I OVERRIDING SYSTEM VALUE '
                       'SELECT * FROM saved.%I', t, t);
    END LOOP;
END $$;
COMMIT;
SQL
    kill -CONT "$1"
}

ENGINE_ERR=$tmp/e.err
# A TTL of 60 s: the engine stopped while the tables are put back, its
# session ended and its heartbeat row put back in time, stays one of the
# engines however slow the machine (with the default TTL, an ASan build
# under load once stopped itself there, heartbeat late).
"$PLANCTL_BIN" run --lease-ttl 60s >"$tmp/e.out" 2>"$ENGINE_ERR" &
ENGINE_PID=$!
bg_pids+=("$ENGINE_PID")

# round N [CLAIM]: instance lN's try started, its start lost while it
# runs; the engine's sessions end, so it reads its runs anew.  With CLAIM
# an admission wakes it at once to claim again.
round() {
    local uid old
    pctl create "l$1" --definition lost >/dev/null || fail "create l$1"
    uid=$(run_uid "l$1")
    wait_for 60 "the try of l$1" try_running "$uid"
    undo_start "${2:-}"
    old=$(planctl_sessions)
    terminate_planctl
    if [ -n "${2:-}" ]; then
        again() { local p; p=$(planctl_sessions); [ -n "$p" ] && [ "$p" != "$old" ]; }
        wait_for 60 "the engine to connect again" again
        pctl create "w$1" --definition lost >/dev/null || fail "create w$1"
        finish "$(run_uid "w$1")"
    fi
    wait_for 60 "the step of l$1 to start again" try_running "$uid"
    finish "$uid"
    wait_for 60 "the run of l$1 to complete" all_done
    no_overlap
}
round 1
round 2 claim

# 3. A run ends and the run queued behind it starts; both commits lost.
pctl create l3 --definition lost >/dev/null || fail "create l3"
first=$(run_uid l3)
wait_for 60 "the try of l3's first run" try_running "$first"
pctl trigger l3 deploy --queue >/dev/null || fail "trigger l3"
queued() { [ "$(val "SELECT count(*) FROM runs WHERE status = 'QUEUED'")" = 1 ]; }
wait_for 60 "l3's second run to queue" queued
copy_tables
second=$(run_uid l3 2)
finish "$first"
wait_for 60 "the try of l3's second run" try_running "$second"
lose_commits "$ENGINE_PID"
# The first run's step is tried again (its file is there: at once), its
# run ends, the second is promoted again: its step starts only once the
# lost try has exited.
wait_for 60 "the second run's step to start again" try_running "$second"
finish "$second"
wait_for 60 "l3's runs to complete" all_done
no_overlap

stop_engine "$ENGINE_PID" planctl "$ENGINE_ERR"
check_finished
n=$(wc -l <"$tmp/done")
[ "$n" = 6 ] || fail "tries done: $(cat "$tmp/done")"
note "ok: each lost try exited before its step started again"
