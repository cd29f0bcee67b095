#!/bin/sh
# run_case.sh - runs one planctl CLI test case and compares its output.
#
# Usage (ctest does this for every tests/cli/<case>/ holding a file "cmd"):
#     sh run_case.sh PLANCTL_BINARY CASE_DIR SOURCE_DIR
#
# The case's "cmd" script runs in a fresh temporary directory with
#     PLANCTL_DB=$tmp/planctl.db NO_COLOR=1 TZ=UTC LC_ALL=C
#     PLANCTL_NOW=2026-11-21T14:03:05Z SRC=SOURCE_DIR
# and the binary's directory first in PATH, so it calls plain `planctl`.
# Its stdout and stderr, merged, must equal CASE_DIR/expected; the temporary
# directory's path is shown as $TMP there.  cmd prints exit codes itself
# where they matter (`planctl status zz; echo "exit=$?"`).
#
# Environment:
#     UPDATE=1      rewrite CASE_DIR/expected with the actual output instead
#                   of comparing (then review the diff by eye before
#                   committing it).
#     CLI_WRAPPER   a command to run planctl under, e.g.
#                   CLI_WRAPPER="valgrind -q --leak-check=full
#                   --errors-for-leak-kinds=all --error-exitcode=99"; its
#                   complaints show up as differences.
#     PLANCTL_TEST_BACKEND=postgres
#                   runs the case on PostgreSQL (ctest's cli.pg.<case>):
#                   PLANCTL_PG_STATE names the directory where
#                   tests/pg/cluster.sh wrote the cluster's `env`.  The
#                   case gets a schema of its own, dropped at the end, and
#                   PLANCTL_DB is a URI naming it; in the output that URI
#                   reads as $TMP/planctl.db, what the SQLite run shows, so
#                   one `expected` serves both (a case where the backends
#                   rightly differ keeps the PostgreSQL output in
#                   `expected.pg`).  A case whose file
#                   `backends` has no line `postgres` is SQLite-only (about
#                   files, or otherwise not about a PostgreSQL database):
#                   no cli.pg.<case> is made for it, and here it is refused.
#                   No cluster: exit 77 (ctest's skip), unless CI=true.

set -u

if [ $# -ne 3 ]; then
    echo "usage: sh run_case.sh PLANCTL_BINARY CASE_DIR SOURCE_DIR" >&2
    exit 2
fi

abspath() {
    (cd "$(dirname "$1")" && printf '%s/%s\n' "$(pwd)" "$(basename "$1")")
}

bin=$(abspath "$1") || exit 1
case_dir=$(cd "$2" && pwd) || exit 1
src=$(cd "$3" && pwd) || exit 1

if [ ! -x "$bin" ]; then
    echo "run_case.sh: $bin is not an executable" >&2
    exit 1
fi

backend=${PLANCTL_TEST_BACKEND:-sqlite}
case $backend in
sqlite) ;;
postgres)
    if [ -f "$case_dir/backends" ] &&
        ! grep -qx 'postgres' "$case_dir/backends"; then
        echo "run_case.sh: $case_dir is SQLite-only (see its file backends)" >&2
        exit 1
    fi
    if [ ! -f "${PLANCTL_PG_STATE:?names the state directory of tests/pg/cluster.sh}/env" ]; then
        if [ "${CI:-}" = true ]; then
            echo "run_case.sh: no PostgreSQL cluster in $PLANCTL_PG_STATE (CI=true requires one)" >&2
            exit 1
        fi
        echo "run_case.sh: no PostgreSQL cluster in $PLANCTL_PG_STATE: skipped"
        exit 77
    fi
    # Only the cluster's parameters reach psql and planctl: none of the
    # caller's PG* variables (PGOPTIONS, PGSERVICE, PGPASSWORD, ...).
    for v in $(env | sed -n 's/^\(PG[A-Za-z0-9_]*\)=.*/\1/p'); do
        unset "$v"
    done
    # shellcheck disable=SC1091
    . "$PLANCTL_PG_STATE/env"
    # The database cluster.sh made for the cases, with a collation that is
    # not C (older state files: the default database).
    PGDATABASE=${PLANCTL_PG_CLI_DB:-$PGDATABASE}
    export PGDATABASE
    psql_bin=$PLANCTL_PG_BIN/psql
    [ -x "$psql_bin" ] || psql_bin=psql
    # A schema of its own per run: cases run in parallel in one database.
    rnd=$(od -An -N4 -tu4 /dev/urandom | tr -d ' ')
    pg_schema=c_$$_$rnd
    pg_uri="postgresql:///$PGDATABASE?host=$PGHOST&port=$PGPORT&user=$PGUSER&schema=$pg_schema"
    ;;
*)
    echo "run_case.sh: PLANCTL_TEST_BACKEND is sqlite or postgres, not $backend" >&2
    exit 2
    ;;
esac

root=$(mktemp -d "${TMPDIR:-/tmp}/planctl-cli.XXXXXX") || exit 1
cleanup() {
    cd / || exit 1 # out of the directory removed
    rm -rf "$root"
    if [ "$backend" = postgres ]; then
        # A process the case left behind (an engine on its way out) may
        # hold the schema's locks a moment longer: the drop waits for it.
        "$psql_bin" -X -q -d "$PGDATABASE" \
            -c "SET client_min_messages = warning" \
            -c "SET lock_timeout = '20s'" \
            -c "DROP SCHEMA IF EXISTS $pg_schema CASCADE" >/dev/null ||
            echo "run_case.sh: could not drop schema $pg_schema" >&2
    fi
}
trap cleanup EXIT
trap 'exit 130' INT TERM
tmp=$root/work
mkdir "$tmp" "$root/bin" || exit 1

# With a wrapper, a small planctl script in a directory of its own comes
# first in PATH; it stays out of the case's working directory.
if [ -n "${CLI_WRAPPER:-}" ]; then
    cat > "$root/bin/planctl" <<WRAP
#!/bin/sh
exec $CLI_WRAPPER "$bin" "\$@"
WRAP
    chmod +x "$root/bin/planctl"
    # The binary's directory still follows, for the test tools built
    # beside it (xmlcheck).
    PATH=$root/bin:$(dirname "$bin"):$PATH
else
    PATH=$(dirname "$bin"):$PATH
fi

if [ "$backend" = postgres ]; then
    PLANCTL_DB=$pg_uri
else
    PLANCTL_DB=$tmp/planctl.db
fi
NO_COLOR=1
TZ=UTC
LC_ALL=C
PLANCTL_NOW=2026-11-21T14:03:05Z
SRC=$src
export PATH PLANCTL_DB NO_COLOR TZ LC_ALL PLANCTL_NOW SRC
# For the cases' helpers that look at the database itself
# (tests/cli/fixtures/db_snapshot.sh).
PLANCTL_TEST_BACKEND=$backend
export PLANCTL_TEST_BACKEND
if [ "$backend" = postgres ]; then
    PLANCTL_TEST_PG_SCHEMA=$pg_schema
    export PLANCTL_TEST_PG_SCHEMA PLANCTL_PG_BIN
fi
unset COLUMNS

cd "$tmp" || exit 1
sh "$case_dir/cmd" > "$root/raw" 2>&1 < /dev/null
# A run on PostgreSQL that made the SQLite file would have tested SQLite.
if [ "$backend" = postgres ] && [ -e "$tmp/planctl.db" ]; then
    echo "run_case.sh: \$TMP/planctl.db was made in a run on PostgreSQL:" \
        "something in the case did not use PLANCTL_DB" >> "$root/raw"
fi
# Paths under the temporary directory differ on every run.  Under
# libfaketime (the cli.ahead1y/behind1y cases), its own complaints about
# the semaphore it shares between a process and its children are dropped:
# seen once in hundreds of runs ("sem_open failed ... created locally:
# false"), they say nothing of planctl, and every process still reads the
# faked time from FAKETIME.
if [ -n "${FAKETIME:-}" ]; then
    grep -v '^libfaketime: ' "$root/raw" > "$root/raw.kept"
    mv "$root/raw.kept" "$root/raw"
fi
# On PostgreSQL, the URI reads as the SQLite run's database path.
if [ "$backend" = postgres ]; then
    uri_re=$(printf '%s\n' "$pg_uri" | sed 's/[][\\.*^$|]/\\&/g')
    sed "s|$uri_re|\$TMP/planctl.db|g; s|$tmp|\$TMP|g" "$root/raw" > "$root/actual"
else
    sed "s|$tmp|\$TMP|g" "$root/raw" > "$root/actual"
fi

# Where the backends rightly differ (what verify can check), a case keeps
# the PostgreSQL run's output beside the SQLite one, in expected.pg.
expected=$case_dir/expected
if [ "$backend" = postgres ] && [ -f "$case_dir/expected.pg" ]; then
    expected=$case_dir/expected.pg
fi

if [ "${UPDATE:-}" = 1 ]; then
    if [ "$backend" = postgres ] && [ "$expected" = "$case_dir/expected" ]; then
        # One expected file for both backends: the SQLite run writes it.
        echo "run_case.sh: UPDATE=1 is for the SQLite run only" >&2
        exit 1
    fi
    cp "$root/actual" "$expected" || exit 1
    echo "updated $expected"
    exit 0
fi

if [ ! -f "$expected" ]; then
    echo "run_case.sh: $expected is missing; run with UPDATE=1" >&2
    cat "$root/actual"
    exit 1
fi
diff -u "$expected" "$root/actual"
