#!/usr/bin/env bash
# tests/pg/statements.sh - src/store/sql/postgres.sql against sqlite.sql
# and a real server: the same statement names in the same order, each
# once; every PostgreSQL statement PREPAREs (without parameter types, as
# the backend will prepare them) on a database with schema/postgres.sql;
# each has as many parameters as its SQLite text (?n, or its anonymous ?
# counted), all of them bigint, integer or text (the store binds integers
# and text only); and as many result columns as SQLite gives it (the
# ResultRow of its EXPLAIN on a database the real planctl made; none for a
# statement that returns no rows).  PostgreSQL's columns are psql's \gdesc
# of an EXECUTE, which describes without running (result_types of
# pg_prepared_statements is 16 and later).  Types of result columns are
# not compared.
. "$(dirname "$0")/lib.sh"

sqlite_sql=$src/src/store/sql/sqlite.sql
pg_sql=$src/src/store/sql/postgres.sql

# Splits a statement file into $2/NNN.name files: the text after each
# name line up to the next, without its comment lines; a statement's set
# form (after a line "-- many: TABLE KEYS") goes to $2.many/NNN.name, its
# table and key count to $2.many/NNN.name.line.
split_sql() {
    mkdir -p "$2" "$2.many"
    awk -v dir="$2" '
        /^-- name: / { n++; name = $3; f = sprintf("%s/%03d.%s", dir, n, $3); next }
        /^-- many: / { f = sprintf("%s.many/%03d.%s", dir, n, name)
                       print $3, $4 > (f ".line"); next }
        /^--/ || f == "" { next }
        { print > f }' "$1"
}
names() { grep '^-- name: ' "$1" | awk '{ print $3 }'; }

names "$sqlite_sql" >"$tmp/sqlite.names"
names "$pg_sql" >"$tmp/pg.names"
[ -s "$tmp/sqlite.names" ] || fail "no statement names in sqlite.sql"
for d in sqlite pg; do
    dups=$(sort "$tmp/$d.names" | uniq -d)
    [ -z "$dups" ] || fail "a name given more than once in the $d text: $dups"
done
diff -u "$tmp/sqlite.names" "$tmp/pg.names" ||
    fail "postgres.sql's names differ from sqlite.sql's, or their order (- sqlite.sql, + postgres.sql)"
total=$(wc -l <"$tmp/pg.names")
note "$total statement names, the same and in the same order in both"

split_sql "$sqlite_sql" "$tmp/s"
split_sql "$pg_sql" "$tmp/p"
fresh_db
load_schema "$src/schema/postgres.sql"
sq=$(sqlite_db)

# Parameters of a SQLite text: the largest ?n, else the number of ?.
sqlite_params() {
    if grep -q '?[0-9]' "$1"; then
        grep -o '?[0-9]*' "$1" | tr -d '?' | sort -n | tail -1
    else
        { grep -o '?' "$1" || true; } | wc -l | tr -d ' '
    fi
}
# Result columns of a SQLite text: ResultRow's p2 in its EXPLAIN.
sqlite_columns() {
    sqlite3 "$sq" "EXPLAIN $(cat "$1")" |
        awk '$2 == "ResultRow" && $4 > n { n = $4 } END { print n + 0 }'
}

# Prepares the text of file $1 as s, and prints its parameter count and
# types, then \gdesc's lines of its result columns.
prepare() {
    local text
    text=$(sed '$ s/;[[:space:]]*$//' "$1")
    q -F '|' -f - 2>&1 <<EOF
SET search_path = planctl;
PREPARE s AS $text;
SELECT coalesce(array_length(parameter_types, 1), 0) AS n,
       coalesce(array_to_string(parameter_types, ','), '') AS types,
       'EXECUTE s' || CASE WHEN cardinality(parameter_types) > 0
           THEN '(' || array_to_string(array_fill('NULL'::text,
               ARRAY[cardinality(parameter_types)]), ', ') || ')'
           ELSE '' END AS exec
FROM pg_prepared_statements WHERE name = 's' \gset
\echo :n|:types
:exec \gdesc
EOF
}

bad=0
for f in "$tmp"/p/*; do
    base=$(basename "$f")
    stmt=${base#*.}
    # Prepared, then described without running it (\gdesc of an EXECUTE
    # with every parameter NULL).
    if ! out=$(prepare "$f"); then
        printf '%s: FAIL: %s does not prepare: %s\n' "$name" "$stmt" \
            "$(printf '%s' "$out" | grep -m1 ERROR)" >&2
        bad=$((bad + 1))
        continue
    fi
    IFS='|' read -r pg_params pg_types <<<"$(printf '%s\n' "$out" | head -1)"
    pg_cols=$(printf '%s\n' "$out" | sed 1d | grep -c '|' || true)
    s_params=$(sqlite_params "$tmp/s/$base")
    if ! s_cols=$(sqlite_columns "$tmp/s/$base" 2>&1); then
        printf '%s: FAIL: %s: SQLite cannot EXPLAIN it: %s\n' "$name" \
            "$stmt" "$s_cols" >&2
        bad=$((bad + 1))
        continue
    fi
    if [ "$pg_params" != "$s_params" ]; then
        printf '%s: FAIL: %s has %s parameters on PostgreSQL, %s on SQLite\n' \
            "$name" "$stmt" "$pg_params" "$s_params" >&2
        bad=$((bad + 1))
    fi
    if [ "$pg_cols" != "$s_cols" ]; then
        printf '%s: FAIL: %s has %s result columns on PostgreSQL, %s on SQLite\n' \
            "$name" "$stmt" "$pg_cols" "$s_cols" >&2
        bad=$((bad + 1))
    fi
    other=$(printf '%s\n' "${pg_types//,/$'\n'}" |
        grep -v -x -e '' -e bigint -e integer -e text || true)
    if [ -n "$other" ]; then
        printf '%s: FAIL: %s has a parameter of type %s (not bigint, integer or text): %s\n' \
            "$name" "$stmt" "${other//$'\n'/ }" "$pg_types" >&2
        bad=$((bad + 1))
    fi
done

# Each set form: it prepares, each of its parameters is the array of the
# one-row statement's (as many, of bigint[], integer[] or text[]), it
# returns no rows, and its line names a table of the schema and a count of
# key parameters the statement has.
many=0
for f in "$tmp"/p.many/*; do
    case $f in *.line | *'*') continue ;; esac
    base=$(basename "$f")
    stmt=${base#*.}
    many=$((many + 1))
    read -r table keys <"$f.line"
    if ! out=$(prepare "$f"); then
        printf '%s: FAIL: the set form of %s does not prepare: %s\n' "$name" \
            "$stmt" "$(printf '%s' "$out" | grep -m1 ERROR)" >&2
        bad=$((bad + 1))
        continue
    fi
    IFS='|' read -r m_params m_types <<<"$(printf '%s\n' "$out" | head -1)"
    m_cols=$(printf '%s\n' "$out" | sed 1d | grep -c '|' || true)
    one=$(prepare "$tmp/p/$base" | sed -n '1s/|.*//p')
    other=$(printf '%s\n' "${m_types//,/$'\n'}" |
        grep -v -x -e 'bigint\[\]' -e 'integer\[\]' -e 'text\[\]' || true)
    if [ "$m_params" != "$one" ] || [ -n "$other" ] || [ "$m_cols" != 0 ]; then
        printf '%s: FAIL: the set form of %s has parameters %s (the statement has %s; arrays of bigint, integer or text wanted) and %s result columns (none wanted)\n' \
            "$name" "$stmt" "$m_types" "$one" "$m_cols" >&2
        bad=$((bad + 1))
    fi
    if [ "$(q -tA -c "SELECT to_regclass('planctl.$table') IS NOT NULL")" != t ] ||
        ! [ "$keys" -ge 0 ] 2>/dev/null || [ "$keys" -gt "$one" ]; then
        printf '%s: FAIL: the set form of %s names table "%s" and %s keys: a table of the schema and at most %s wanted\n' \
            "$name" "$stmt" "$table" "$keys" "$one" >&2
        bad=$((bad + 1))
    fi
done
[ "$many" -gt 0 ] || fail "no set form found in postgres.sql"
[ "$bad" -eq 0 ] || fail "$bad problem(s) among $total statements"
note "all $total statements prepare on PostgreSQL with SQLite's parameter" \
    "and result column counts; $many set forms with theirs"
