# tests/pg/lib.sh - sourced by the PostgreSQL tests (tests/pg/*.sh).
#
# The environment (tests/pg/CMakeLists.txt): PLANCTL_PG_STATE, the
# directory where tests/pg/cluster.sh wrote `env`; PLANCTL_SOURCE_DIR;
# PLANCTL_BIN, the planctl built with the tests.  No cluster (initdb was
# not found): exit 77, ctest's skip, unless CI=true.
set -euo pipefail

name=$(basename "$0" .sh)
fail() { printf '%s: FAIL: %s\n' "$name" "$*" >&2; exit 1; }
note() { printf '%s: %s\n' "$name" "$*"; }

if [ ! -f "${PLANCTL_PG_STATE:?}/env" ]; then
    [ "${CI:-}" = true ] && fail "no PostgreSQL cluster (CI=true requires one)"
    note "no PostgreSQL cluster: skipped"
    exit 77
fi
# Only the cluster's parameters: nothing of the caller's PG* environment.
unset PGSERVICE PGSERVICEFILE PGPASSWORD PGPASSFILE PGOPTIONS PGSSLMODE \
    PGHOSTADDR PGTZ PGCLIENTENCODING PGCONNECT_TIMEOUT
export PGOPTIONS="-c client_min_messages=warning"
# shellcheck disable=SC1091
. "$PLANCTL_PG_STATE/env"
src=${PLANCTL_SOURCE_DIR:?}
psql_bin=$PLANCTL_PG_BIN/psql
[ -x "$psql_bin" ] || psql_bin=psql

tmp=$(mktemp -d)
db=t_$name
cleanup() {
    rm -rf "$tmp"
    "$psql_bin" -X -q -d postgres -c "DROP DATABASE IF EXISTS $db" \
        >/dev/null 2>&1 || true
}
trap cleanup EXIT

# psql on the test's database: unaligned, tuples only, stop at an error.
q() { "$psql_bin" -X -q -At -v ON_ERROR_STOP=1 -d "$db" "$@"; }

# A new, empty database for this test (the name of the test's own).
fresh_db() {
    db=${1:-t_$name}
    "$psql_bin" -X -q -v ON_ERROR_STOP=1 -d postgres \
        -c "DROP DATABASE IF EXISTS $db" -c "CREATE DATABASE $db" >/dev/null
}

# Applies SQL files to $db in one transaction, in a new schema planctl, as
# planctl will: schema/postgres.sql, or the migrations in order.
load_schema() {
    local args=() f
    for f in "$@"; do args+=(-f "$f"); done
    "$psql_bin" -X -q -1 -v ON_ERROR_STOP=1 -d "$db" \
        -c 'CREATE SCHEMA planctl' -c 'SET search_path = planctl' \
        "${args[@]}" >/dev/null
}

# A SQLite database made by the real planctl ($tmp/sqlite.db), for the
# tables and rows the PostgreSQL schema must agree with.
sqlite_db() {
    local f=$tmp/sqlite.db
    if [ ! -f "$f" ]; then
        PLANCTL_DB=$f "${PLANCTL_BIN:?}" apply \
            -f "$src/tools/examples/zookeeper.json" >/dev/null ||
            fail "planctl apply on a scratch SQLite database failed"
    fi
    printf '%s\n' "$f"
}

# ---- planctl itself on the cluster (the tests of the backend) ----

# The URI of schema ${1:-planctl} in the test's database.
pg_uri() {
    printf 'postgresql:///%s?host=%s&port=%s&user=planctl&schema=%s\n' \
        "$db" "$PGHOST" "$PGPORT" "${1:-planctl}"
}
# The real planctl on PLANCTL_DB (set by the test, usually to pg_uri).
pctl() { "${PLANCTL_BIN:?}" "$@"; }

# Background processes a test started: killed (-9) when it exits, before
# its database is dropped.
bg_pids=()
kill_bg() {
    local p
    for p in "${bg_pids[@]}"; do kill -9 "$p" 2>/dev/null || true; done
    for p in "${bg_pids[@]}"; do wait "$p" 2>/dev/null || true; done
}
cleanup_bg() {
    kill_bg
    cleanup
}
trap cleanup_bg EXIT

# wait_for SECONDS WHAT COMMAND...: runs COMMAND until it succeeds; fails
# the test naming WHAT after SECONDS.  The deadline is generous: it only
# bounds a hang, no assertion depends on it.
wait_for() {
    local deadline=$((SECONDS + $1)) what=$2
    shift 2
    until "$@"; do
        [ "$SECONDS" -lt "$deadline" ] || fail "timed out waiting for $what"
        sleep 0.05
    done
}

# One value from the test's database, schema planctl.
val() { q -c "SET search_path = planctl" -c "$*"; }

# Whether some try is in flight; with ENGINE_PID (and its stderr file
# ENGINE_ERR), fails at once if that engine exited instead.
open_tries() {
    if [ -n "${ENGINE_PID:-}" ] && ! kill -0 "$ENGINE_PID" 2>/dev/null; then
        fail "the engine exited: $(cat "${ENGINE_ERR:-/dev/null}")"
    fi
    [ "$(val 'SELECT count(*) FROM attempts WHERE finished_at IS NULL')" -gt 0 ]
}

# A definition whose steps are shell tasks sleeping $1 seconds (300 while
# the file $tmp/slow exists when they start): a parallel phase of two
# steps, then one step, each tried ${2:-3} times.  Each try
# holds an flock on a file of its step while it runs (its sleep too, which
# inherits the descriptor): a try that starts while another of its step
# still runs anywhere on this host cannot take it, and says so in
# $tmp/overlaps, which check_finished requires empty.
sleeper_def() {
    local attempts=${2:-3}
    local cmd="exec 9>$tmp/lock.\$PLANCTL_RUN_UID.\$PLANCTL_STEP; flock -n 9 || echo \$PLANCTL_RUN_UID \$PLANCTL_STEP \$PLANCTL_ATTEMPT >>$tmp/overlaps; if [ -e $tmp/slow ]; then sleep 300; else sleep $1; fi; echo done"
    cat >"$tmp/sleeper.json" <<DEF
{"name": "sleeper", "version": "$1-$attempts",
 "tasks": [{"name": "nap", "kind": "shell",
            "spec": {"command": "$cmd"}}],
 "plans": {"deploy": {"phases": [
   {"name": "p", "strategy": "parallel",
    "steps": [{"name": "a", "tasks": ["nap"], "retry": {"attempts": $attempts}},
              {"name": "b", "tasks": ["nap"], "retry": {"attempts": $attempts}}]},
   {"name": "q", "steps": [{"name": "c", "tasks": ["nap"],
                            "retry": {"attempts": $attempts}}]}]}}}
DEF
    pctl apply -f "$tmp/sleeper.json" >/dev/null || fail "apply sleeper"
}

# sleeper_backlog SECONDS ATTEMPTS N [PREFIX]: a fresh schema as
# $PLANCTL_DB with sleeper_def SECONDS ATTEMPTS and N instances of it,
# named PREFIX1..PREFIXN (default s).
sleeper_backlog() {
    local i
    fresh_db
    PLANCTL_DB=$(pg_uri)
    export PLANCTL_DB
    sleeper_def "$1" "$2"
    for i in $(seq 1 "$3"); do
        pctl create "${4:-s}$i" --definition sleeper >/dev/null
    done
}

# The backend of the test's own psql session that sleeps in pg_sleep(600)
# while it holds its locks (empty until it does).
holder_backend() {
    q -c "SELECT pid FROM pg_stat_activity WHERE datname = current_database()
          AND query LIKE '%pg_sleep(600)%' AND pid <> pg_backend_pid()"
}

# start_two_engines ARGS...: engines first and second, each `planctl run
# --name NAME ARGS...` with its output in $tmp/NAME.out and .err; their
# pids in pid_first and pid_second.
start_two_engines() {
    local n
    for n in first second; do
        "$PLANCTL_BIN" run --name "$n" "$@" >"$tmp/$n.out" 2>"$tmp/$n.err" &
        eval "pid_$n=$!"
        bg_pids+=("$!")
    done
}
# stop_engine PID NAME ERRFILE: engine NAME (process PID, its stderr in
# ERRFILE), still running, stopped as Ctrl-C stops one; it must exit 0.
stop_engine() {
    local rc=0
    kill -0 "$1" 2>/dev/null || fail "engine $2 exited: $(cat "$3")"
    kill -INT "$1"
    wait "$1" || rc=$?
    [ "$rc" = 0 ] || fail "engine $2 exit $rc: $(cat "$3")"
}
# stop_two_engines: engines first and second stopped by stop_engine.
stop_two_engines() {
    local n pid
    for n in first second; do
        eval "pid=\$pid_$n"
        stop_engine "$pid" "$n" "$tmp/$n.err"
    done
}

# Whether every run reached a terminal status.
all_done() {
    [ "$(val "SELECT count(*) FROM runs WHERE status NOT IN
              ('COMPLETE', 'FATAL_ERROR', 'CANCELLED')")" = 0 ]
}

# Whether engine $1 was declared dead for its heartbeat (an event).
declared_dead() {
    [ "$(val "SELECT count(*) FROM events WHERE entity = 'engine'
              AND message LIKE 'engine $1 declared dead (no heartbeat for %'")" = 1 ]
}

# continued_stops PID NAME ERRFILE: engine NAME (process PID), stopped
# with SIGSTOP and declared dead meanwhile, is continued; it must stop by
# itself with exit 3 (it lost its runs), its last line saying why.
continued_stops() {
    local pid=$1 name=$2 err=$3 rc=0 last
    kill -CONT "$pid"
    gone() { ! kill -0 "$pid" 2>/dev/null; }
    wait_for 60 "engine $name to stop" gone
    wait "$pid" || rc=$?
    [ "$rc" = 3 ] || fail "engine $name, declared dead, exited $rc, not 3"
    last=$(tail -n 1 "$err")
    case $last in
    "planctl: engine $name was declared dead on "*"; it stops") ;;
    "planctl: engine $name could not renew its heartbeat on "*) ;;
    *) fail "engine $name's last line: $last" ;;
    esac
}

# The checks every test of a running engine ends with: every run reached
# a terminal status (COMPLETE, or $1 when given), each step's tries are
# numbered 1..attempt without a gap, none is open, and verify is clean.
check_finished() {
    local want=${1:-COMPLETE} bad
    bad=$(val "SELECT id || ' ' || status FROM runs WHERE status <> '$want'")
    [ -z "$bad" ] || fail "runs not $want: $bad"
    bad=$(val "SELECT s.id FROM steps s LEFT JOIN attempts a
               ON a.step_id = s.id GROUP BY s.id, s.attempt
               HAVING count(a.id) <> s.attempt
                   OR coalesce(max(a.number), 0) <> s.attempt
                   OR count(a.id) <> count(a.finished_at)")
    [ -z "$bad" ] || fail "steps whose tries have gaps or stay open: $bad"
    pctl verify >"$tmp/verify.out" 2>&1 ||
        fail "verify: $(cat "$tmp/verify.out")"
    [ ! -s "$tmp/overlaps" ] ||
        fail "tries that ran beside another try of their step: $(cat "$tmp/overlaps")"
}

# A cluster of the test's own, for a test that stops or restarts the
# server (the shared one serves the other tests at the same time): its env
# replaces the shared one's, and it is stopped when the test exits.
# A cluster of the test's own, which it may crash: unlike the shared one
# it acknowledges a commit only once its WAL is written (synchronous_commit
# on; fsync stays off: the kernel keeps what a crashed server wrote), as
# planctl requires of a server that may crash (planctl-engine(7): an
# engine acts on its commits, starting tasks; a claim the server forgets
# after acknowledging it lets another engine start a try beside the first;
# one engine alone waits for its lost tries: pg.lost_start).
own_cluster() {
    bash "$src/tests/pg/cluster.sh" start "$tmp/cluster" 2>/dev/null ||
        fail "cannot start a cluster of the test's own"
    own_state=$tmp/cluster
    # shellcheck disable=SC1091
    . "$own_state/env"
    "$psql_bin" -X -q -d postgres -c "ALTER SYSTEM SET synchronous_commit = on" \
        -c "SELECT pg_reload_conf()" >/dev/null ||
        fail "cannot set synchronous_commit on the test's own cluster"
    fresh_db
}
own_state=
# In this order: the processes using the cluster, the cluster (its state
# is under $tmp), then $tmp and the rest.
cleanup_own() {
    kill_bg
    [ -z "$own_state" ] || bash "$src/tests/pg/cluster.sh" stop "$own_state" \
        2>/dev/null || true
    cleanup
}
trap cleanup_own EXIT

# pg_ctl on the test's own cluster, as its owner (nobody when root, as
# cluster.sh runs it).
own_pg_ctl() {
    local run=()
    [ "$(id -u)" -ne 0 ] || run=(runuser -u nobody --)
    (cd "$PLANCTL_PG_DIR" &&
        "${run[@]}" "$PLANCTL_PG_BIN/pg_ctl" -D "$PLANCTL_PG_DIR/data" \
            -l "$PLANCTL_PG_DIR/server.log" "$@" >/dev/null)
}
