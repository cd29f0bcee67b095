#!/usr/bin/env bash
# tests/pg/cluster.sh - a throwaway PostgreSQL cluster for the tests.
#
#   cluster.sh start STATE   initdb and start a cluster in a new mktemp -d
#                            directory; write STATE/env (PGHOST, PGPORT,
#                            PGUSER, PLANCTL_PG_BIN, PLANCTL_PG_CLI_DB), which
#                            the tests source
#   cluster.sh stop STATE    stop the cluster STATE/env names, remove its
#                            directory and STATE/env (nothing to stop: exit 0)
#
# ctest runs `start` as the setup and `stop` as the cleanup of the fixture
# `pg_cluster` (tests/pg/CMakeLists.txt): one cluster per ctest run, stopped
# also when tests fail.  A `start` first stops a cluster an interrupted run
# left behind in STATE.
#
# The cluster listens on no TCP address, only on a Unix socket in its own
# directory; the port number only names the socket.  It runs with
# fsync=off: the tests are functional, not about durability.  initdb refuses
# to run as root (CI runs as root), so as root the cluster is made and run
# by `nobody`, in a directory given to it.
#
# The server's programs are found in PLANCTL_PG_BIN if set (only there),
# else in `pg_config --bindir`, else in the newest /usr/lib/postgresql/*/bin
# (Debian keeps initdb and pg_ctl off PATH).  None found: exit 77 (ctest's
# skip), unless CI=true, where PostgreSQL is required.
set -euo pipefail

say() { printf 'pg-cluster: %s\n' "$*" >&2; }

find_bin() {
    local d dirs
    if [ -n "${PLANCTL_PG_BIN:-}" ]; then
        dirs=$PLANCTL_PG_BIN
    else
        dirs="$(pg_config --bindir 2>/dev/null || true) $(ls -d \
            /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r)"
    fi
    for d in $dirs; do
        if [ -n "$d" ] && [ -x "$d/initdb" ] && [ -x "$d/pg_ctl" ]; then
            printf '%s\n' "$d"
            return 0
        fi
    done
    return 1
}

# Runs a command as the cluster's owner: ourselves, or nobody when root.
as_owner() {
    if [ "$(id -u)" -eq 0 ]; then
        runuser -u nobody -- "$@"
    else
        "$@"
    fi
}

cmd_stop() {
    local state=$1 env=$1/env
    [ -f "$env" ] || return 0
    local PLANCTL_PG_DIR='' PLANCTL_PG_BIN=''
    # shellcheck disable=SC1090
    . "$env"
    if [ -n "$PLANCTL_PG_DIR" ] && [ -d "$PLANCTL_PG_DIR/data" ]; then
        (cd "$PLANCTL_PG_DIR" &&
            as_owner "$PLANCTL_PG_BIN/pg_ctl" stop -D "$PLANCTL_PG_DIR/data" \
                -m immediate -w >/dev/null 2>&1) ||
            say "pg_ctl stop failed (server already gone?)"
    fi
    case $PLANCTL_PG_DIR in
    */planctl-pg.*) rm -rf "$PLANCTL_PG_DIR" ;;
    esac
    rm -f "$env"
    say "stopped and removed ${PLANCTL_PG_DIR:-?}"
}

cmd_start() {
    local state=$1 bin dir port
    mkdir -p "$state"
    cmd_stop "$state"
    if ! bin=$(find_bin); then
        if [ "${CI:-}" = true ]; then
            say "initdb not found, and CI=true requires PostgreSQL (install: postgresql)"
            exit 1
        fi
        say "initdb not found: skipping the PostgreSQL tests (install: postgresql)"
        exit 77
    fi
    # Short, so the socket path stays under the 107 bytes a Unix socket
    # name may have.
    dir=$(mktemp -d /tmp/planctl-pg.XXXXXX)
    mkdir "$dir/sock"
    if [ "$(id -u)" -eq 0 ]; then
        chown -R nobody "$dir"
    fi
    # The port names the socket file only; the directory is ours alone.
    port=$((20000 + RANDOM % 30000))
    cd "$dir"
    if ! as_owner "$bin/initdb" -D "$dir/data" -U planctl -A trust -E UTF8 \
        --no-locale --no-sync >"$dir/initdb.log" 2>&1; then
        cat "$dir/initdb.log" >&2
        rm -rf "$dir"
        say "initdb failed"
        exit 1
    fi
    cat >>"$dir/data/postgresql.conf" <<CONF
listen_addresses = ''
unix_socket_directories = '$dir/sock'
port = $port
fsync = off
synchronous_commit = off
full_page_writes = off
# The default 100 is near what the suite holds at once under the
# sanitizers (every CLI process, engine and unit test handle is a
# session): one open failed with EIO there, once.
max_connections = 300
CONF
    # Written before the start, so a failed start is still cleaned up.
    cat >"$state/env" <<ENV
PGHOST='$dir/sock'
PGPORT=$port
PGUSER=planctl
PGDATABASE=postgres
PLANCTL_PG_BIN='$bin'
PLANCTL_PG_DIR='$dir'
export PGHOST PGPORT PGUSER PGDATABASE PLANCTL_PG_BIN PLANCTL_PG_DIR
ENV
    if ! as_owner "$bin/pg_ctl" start -D "$dir/data" -l "$dir/server.log" \
        -w -t 60 >/dev/null; then
        cat "$dir/server.log" >&2 || true
        say "pg_ctl start failed"
        cmd_stop "$state"
        exit 1
    fi
    # The CLI cases' database (cli.pg.*) sorts text as most servers do, by
    # a locale that folds case and skips punctuation, so that a statement
    # that needs byte order and forgot COLLATE "C" shows: ICU's en-US
    # (PostgreSQL 15 and later), else libc's en_US.UTF-8, else (neither
    # there) the cluster's C.
    local how
    q() {
        "$bin/psql" -X -q -h "$dir/sock" -p "$port" -U planctl "$@" \
            >/dev/null 2>&1
    }
    for how in "LOCALE_PROVIDER icu ICU_LOCALE 'en-US' LOCALE 'C'" \
        "LC_COLLATE 'en_US.UTF-8' LC_CTYPE 'en_US.UTF-8'" ""; do
        if q -d postgres -c "CREATE DATABASE planctl_cli TEMPLATE template0 $how"; then
            break
        fi
    done
    if ! q -d planctl_cli -c "SELECT 1"; then
        say "could not create the database planctl_cli"
        cmd_stop "$state"
        exit 1
    fi
    echo "PLANCTL_PG_CLI_DB=planctl_cli; export PLANCTL_PG_CLI_DB" >>"$state/env"
    say "started $("$bin/postgres" --version) in $dir (socket port $port)," \
        "database planctl_cli: ${how:-C collation}"
}

case ${1:-} in
start) cmd_start "${2:?usage: cluster.sh start STATE}" ;;
stop) cmd_stop "${2:?usage: cluster.sh stop STATE}" ;;
*) printf 'usage: cluster.sh start|stop STATE\n' >&2; exit 2 ;;
esac
