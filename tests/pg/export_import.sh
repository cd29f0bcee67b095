#!/usr/bin/env bash
# tests/pg/export_import.sh - the migration path between backends: the
# README's job run on a SQLite file, the instance exported, imported into
# a PostgreSQL schema, exported from there and imported into a new SQLite
# file.  status, history and events (tables and JSON) answer the same on
# all three (events renumbered by the first import aside), the bundles
# from PostgreSQL and from the second SQLite file agree, and verify is
# clean on each.
. "$(dirname "$0")/lib.sh"

fresh_db
pg=$(pg_uri)
a=$tmp/a.db
b=$tmp/b.db
on() { local d=$1; shift; PLANCTL_DB=$d "$PLANCTL_BIN" "$@"; }

on "$a" apply -f "$src/tools/examples/zookeeper.json" >/dev/null
on "$a" create zk --definition zookeeper -p NODE_COUNT=3 >/dev/null
on "$a" trigger zk backup --queue >/dev/null
on "$a" run --until-idle >/dev/null 2>&1 || fail "engine on SQLite"

on "$a" export zk --out "$tmp/1.json" 2>/dev/null || fail "export from SQLite"
on "$pg" import "$tmp/1.json" >/dev/null || fail "import into PostgreSQL"
on "$pg" export zk --out "$tmp/2.json" 2>/dev/null || fail "export from PostgreSQL"
on "$b" import "$tmp/2.json" >/dev/null || fail "import into SQLite"
on "$b" export zk --out "$tmp/3.json" 2>/dev/null || fail "export from SQLite again"

# Views at one fixed time, so that ages read the same.
export PLANCTL_NOW=2030-01-01T00:00:00Z
views() {
    on "$1" status zk
    on "$1" status zk -o json
    on "$1" history zk
    on "$1" history zk -o json
    on "$1" events zk
    on "$1" events zk -o jsonl
}
views "$a" >"$tmp/a.views" || fail "views on SQLite"
views "$pg" >"$tmp/pg.views" || fail "views on PostgreSQL"
views "$b" >"$tmp/b.views" || fail "views on the second SQLite"
# An import numbers the instance's events anew from 1 (the first
# database's log also held the engine's own, between them): the same
# events in the same order, their seq aside.
noseq() { sed -e 's/^[0-9][0-9]*  *\([0-9]\{4\}-\)/\1/' -e 's/"seq":[0-9]*,//' "$1"; }
diff -u <(noseq "$tmp/a.views") <(noseq "$tmp/pg.views") >&2 ||
    fail "SQLite and PostgreSQL answer differently"
diff -u "$tmp/pg.views" "$tmp/b.views" >&2 ||
    fail "PostgreSQL and the second SQLite answer differently"
# The bundles, their time of export aside.
noat() { sed 's/"exported_at":"[^"]*"//' "$1"; }
[ "$(noat "$tmp/2.json")" = "$(noat "$tmp/3.json")" ] ||
    fail "the bundles from PostgreSQL and from SQLite differ"
for d in "$a" "$pg" "$b"; do
    on "$d" verify >"$tmp/v.out" 2>&1 || fail "verify $d: $(cat "$tmp/v.out")"
done
note "ok: SQLite -> PostgreSQL -> SQLite, the same answers"
