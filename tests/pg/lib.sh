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
