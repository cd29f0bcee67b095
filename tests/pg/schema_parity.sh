#!/usr/bin/env bash
# tests/pg/schema_parity.sh - the PostgreSQL migrations produce exactly
# schema/postgres.sql (pg_dump of the two, schema and rows), and that
# schema has what a SQLite database the real planctl made has: the same
# tables with the same columns in the same order and nullability, the same
# indexes (unique, partial), the same triggers (and one for TRUNCATE,
# which SQLite has not), and the same schema version.
. "$(dirname "$0")/lib.sh"

pg_dump_bin=$PLANCTL_PG_BIN/pg_dump
[ -x "$pg_dump_bin" ] || pg_dump_bin=pg_dump

# Schema and rows of the schema planctl, without the comments (pg_dump's
# header names its version and the database) and the random key of
# \restrict (pg_dump since 15.14).
# meta's rows are compared in key order (a migration's UPDATE moves a
# row to the end of the table's pages).
dump() {
    "$pg_dump_bin" --no-owner --no-privileges -n planctl \
        --exclude-table-data=planctl.meta -d "$1" |
        grep -v -e '^--' -e '^$' -e '^\\restrict ' -e '^\\unrestrict '
    "$psql_bin" -X -q -At -d "$1" \
        -c "SELECT key, value FROM planctl.meta ORDER BY key"
}

fresh_db t_parity_schema
load_schema "$src/schema/postgres.sql"
fresh_db t_parity_migrations
migrations=("$src"/migrations/postgres/[0-9][0-9][0-9][0-9]_*.sql)
[ -f "${migrations[0]}" ] || fail "no migrations in migrations/postgres"
load_schema "${migrations[@]}"
dump t_parity_schema >"$tmp/schema.dump"
dump t_parity_migrations >"$tmp/migrations.dump"
"$psql_bin" -X -q -d postgres -c 'DROP DATABASE t_parity_schema' >/dev/null
grep -q 'CREATE TABLE planctl.runs' "$tmp/schema.dump" ||
    fail "pg_dump shows no table runs"
diff -u "$tmp/schema.dump" "$tmp/migrations.dump" ||
    fail "migrations/postgres differ from schema/postgres.sql (- schema, + migrations)"
note "${#migrations[@]} migration(s) produce schema/postgres.sql" \
    "($(grep -c '^CREATE' "$tmp/schema.dump") CREATE statements)"

db=t_parity_migrations
sq=$(sqlite_db)
compare() { # compare WHAT SQLITE-QUERY PG-QUERY
    sqlite3 -separator '|' "$sq" "$2" | LC_ALL=C sort >"$tmp/sqlite.$1"
    q -F '|' -c "$3" | LC_ALL=C sort >"$tmp/pg.$1"
    [ -s "$tmp/sqlite.$1" ] || fail "no $1 read from SQLite"
    diff -u "$tmp/sqlite.$1" "$tmp/pg.$1" ||
        fail "$1 differ from SQLite's (- SQLite, + PostgreSQL)"
    note "$1: $(wc -l <"$tmp/pg.$1"), the same as SQLite's"
}

# Columns; an INTEGER PRIMARY KEY is NOT NULL in effect.
compare columns \
    "SELECT m.name, c.cid, c.name, (c.\"notnull\" OR c.pk > 0)
     FROM sqlite_master m, pragma_table_info(m.name) c
     WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'" \
    "SELECT table_name, ordinal_position - 1, column_name,
            (is_nullable = 'NO')::int
     FROM information_schema.columns
     WHERE table_schema = 'planctl' AND table_name <> 'meta'"

# Indexes of CREATE INDEX (not those of UNIQUE or PRIMARY KEY), but
# runs_open_by_id (0011), which only an engine of a fleet reads
# (fleet_claim_after): SQLite has no fleet, and the index would cost each
# of its run writes (instructions_per_step 1.4% above its record).
compare indexes \
    "SELECT m.name, i.name, i.\"unique\", i.partial
     FROM sqlite_master m, pragma_index_list(m.name) i
     WHERE m.type = 'table' AND i.origin = 'c'" \
    "SELECT t.relname, c.relname, x.indisunique::int,
            (x.indpred IS NOT NULL)::int
     FROM pg_index x JOIN pg_class c ON c.oid = x.indexrelid
     JOIN pg_class t ON t.oid = x.indrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'planctl' AND c.relname <> 'runs_open_by_id'
       AND NOT EXISTS (SELECT 1 FROM pg_constraint k
                       WHERE k.conindid = x.indexrelid)"

# UNIQUE constraints and primary keys, by their columns (a rowid
# table's INTEGER PRIMARY KEY has no index of its own).
compare keys \
    "SELECT m.name, group_concat(ic.name, ',')
     FROM sqlite_master m, pragma_index_list(m.name) i,
          pragma_index_info(i.name) ic
     WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%'
       AND i.origin IN ('u', 'pk')
     GROUP BY m.name, i.name
     UNION ALL
     SELECT m.name, c.name FROM sqlite_master m, pragma_table_info(m.name) c
     WHERE m.type = 'table' AND m.name NOT LIKE 'sqlite_%' AND c.pk = 1
       AND NOT EXISTS (SELECT 1 FROM pragma_index_list(m.name)
                       WHERE origin = 'pk')" \
    "SELECT t.relname, string_agg(a.attname, ',' ORDER BY k.ord)
     FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
     CROSS JOIN LATERAL unnest(c.conkey) WITH ORDINALITY AS k(attnum, ord)
     JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = k.attnum
     WHERE n.nspname = 'planctl' AND c.contype IN ('u', 'p')
       AND t.relname <> 'meta'
     GROUP BY t.relname, c.oid"

# Foreign keys: column, referenced table, what a delete does.  But the
# events': plain references on PostgreSQL (a check and a row lock for each
# event inserted: migrations/postgres/0009), their cascades done by the
# triggers runs_events_gone and instances_events_gone.
compare foreign_keys \
    "SELECT m.name, f.\"from\", f.\"table\", f.on_delete
     FROM sqlite_master m, pragma_foreign_key_list(m.name) f
     WHERE m.type = 'table' AND m.name <> 'events'" \
    "SELECT t.relname, a.attname, r.relname,
            CASE c.confdeltype WHEN 'c' THEN 'CASCADE' WHEN 'n' THEN 'SET NULL'
                 ELSE 'NO ACTION' END
     FROM pg_constraint c JOIN pg_class t ON t.oid = c.conrelid
     JOIN pg_class r ON r.oid = c.confrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
     JOIN pg_attribute a ON a.attrelid = t.oid AND a.attnum = c.conkey[1]
     WHERE n.nspname = 'planctl' AND c.contype = 'f'"

# Triggers: SQLite's, one for TRUNCATE, which SQLite has not, the events'
# numbering with its mark and what tells a removal (SQLite numbers them
# itself, one writer at a time), the events' cascades (above), and the
# claims of runs an engine of a fleet ends (SQLite has no fleet).
compare triggers \
    "SELECT tbl_name, name FROM sqlite_master WHERE type = 'trigger'
     UNION ALL SELECT 'transitions', 'transitions_readonly_truncate'
     UNION ALL SELECT 'events', 'events_number'
     UNION ALL SELECT 'events', 'events_removed'
     UNION ALL SELECT 'runs', 'runs_events_gone'
     UNION ALL SELECT 'instances', 'instances_events_gone'
     UNION ALL SELECT 'runs', 'runs_claim_gone'" \
    "SELECT c.relname, t.tgname FROM pg_trigger t
     JOIN pg_class c ON c.oid = t.tgrelid
     JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'planctl' AND NOT t.tgisinternal"

# CHECK constraints, counted per table.
compare checks \
    "SELECT m.name, (length(m.sql) - length(replace(m.sql, 'CHECK', ''))) / 5
     FROM sqlite_master m
     WHERE m.type = 'table' AND m.sql LIKE '%CHECK%'" \
    "SELECT t.relname, count(*) FROM pg_constraint c
     JOIN pg_class t ON t.oid = c.conrelid
     JOIN pg_namespace n ON n.oid = t.relnamespace
     WHERE n.nspname = 'planctl' AND c.contype = 'c'
     GROUP BY t.relname"

# The schema version means the same tables on both.
v_sqlite=$(sqlite3 "$sq" 'PRAGMA user_version')
v_pg=$(q -c "SELECT value FROM planctl.meta WHERE key = 'schema_version'")
app=$(q -c "SELECT value FROM planctl.meta WHERE key = 'application'")
[ "$app" = planctl ] || fail "meta.application is '$app', not planctl"
[ "$v_sqlite" = "$v_pg" ] ||
    fail "schema version $v_pg on PostgreSQL, $v_sqlite on SQLite"
note "schema version $v_pg on both"
