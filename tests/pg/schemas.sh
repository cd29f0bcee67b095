#!/usr/bin/env bash
# tests/pg/schemas.sh - which schemas planctl takes: its own (created on
# first use, any name it accepts, a reserved word included, several side by
# side in one database, each with its own engine lock), and which it
# refuses untouched: tables that are not planctl's (ENOTDB), a meta of
# something else, a newer schema version (ETOONEW); a read of a schema that
# is not there creates nothing.
. "$(dirname "$0")/lib.sh"

fresh_db
zk=$src/tools/examples/zookeeper.json
schema_dump() { q -c "SELECT string_agg(table_name, ',' ORDER BY table_name)
                      FROM information_schema.tables
                      WHERE table_schema = '$1'"; }

# A reserved word and an ordinary name, side by side.
for s in select ops_2; do
    PLANCTL_DB=$(pg_uri "$s") pctl apply -f "$zk" >/dev/null ||
        fail "apply into schema $s"
    PLANCTL_DB=$(pg_uri "$s") pctl create zk --definition zookeeper \
        >/dev/null || fail "create in schema $s"
done
[ "$(q -c 'SELECT count(*) FROM "select".instances')" = 1 ] ||
    fail "schema select has not its instance"
# Each schema has its own engine: one running in each at once.
PLANCTL_DB=$(pg_uri select) "$PLANCTL_BIN" run --until-idle >"$tmp/e1" 2>&1 &
p1=$!
PLANCTL_DB=$(pg_uri ops_2) "$PLANCTL_BIN" run --until-idle >"$tmp/e2" 2>&1 &
p2=$!
bg_pids+=("$p1" "$p2")
wait "$p1" || fail "engine on schema select: $(cat "$tmp/e1")"
wait "$p2" || fail "engine on schema ops_2: $(cat "$tmp/e2")"

# Reading a schema that is not there creates nothing.
rc=0
PLANCTL_DB=$(pg_uri nothing_here) pctl status zk >"$tmp/o" 2>&1 || rc=$?
[ "$rc" = 4 ] || fail "status on a missing schema: exit $rc: $(cat "$tmp/o")"
[ "$(q -c "SELECT count(*) FROM pg_namespace WHERE nspname = 'nothing_here'")" = 0 ] ||
    fail "a read created the schema"

# Tables that are not planctl's: refused, untouched.
q -c "CREATE SCHEMA app; CREATE TABLE app.users (id int); INSERT INTO app.users VALUES (1)"
before=$(schema_dump app)
rc=0
PLANCTL_DB=$(pg_uri app) pctl apply -f "$zk" >"$tmp/o" 2>&1 || rc=$?
[ "$rc" = 1 ] || fail "apply into a foreign schema: exit $rc: $(cat "$tmp/o")"
grep -q "holds tables that are not planctl's" "$tmp/o" ||
    fail "foreign schema message: $(cat "$tmp/o")"
[ "$(schema_dump app)" = "$before" ] || fail "the foreign schema was changed"

# A meta table of something else.
q -c "CREATE SCHEMA other; CREATE TABLE other.meta (key text, value text);
      INSERT INTO other.meta VALUES ('application', 'billing')"
rc=0
PLANCTL_DB=$(pg_uri other) pctl apply -f "$zk" >"$tmp/o" 2>&1 || rc=$?
[ "$rc" = 1 ] && grep -q "meta table that is not planctl's" "$tmp/o" ||
    fail "other meta: exit $rc: $(cat "$tmp/o")"
[ "$(schema_dump other)" = meta ] || fail "the other schema was changed"

# A newer planctl's schema.
q -c "UPDATE ops_2.meta SET value = '999' WHERE key = 'schema_version'"
rc=0
PLANCTL_DB=$(pg_uri ops_2) pctl status zk >"$tmp/o" 2>&1 || rc=$?
grep -q "has schema version 999 but this planctl supports up to" "$tmp/o" ||
    fail "newer schema: exit $rc: $(cat "$tmp/o")"
[ "$(q -c "SELECT value FROM ops_2.meta WHERE key = 'schema_version'")" = 999 ] ||
    fail "the newer schema was changed"
note "ok"
