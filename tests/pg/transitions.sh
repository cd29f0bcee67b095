#!/usr/bin/env bash
# tests/pg/transitions.sh - the PostgreSQL guards agree exactly with
# SQLite's.  The transitions table holds the same rows as that of a SQLite
# database the real planctl made; then, for run, phase and step, every
# (from, to) over all statuses any entity has (and one no entity has),
# from (new) by INSERT and from each status by UPDATE OF status: a
# transition SQLite lists is accepted, any other is refused with SQLSTATE
# PC001 and a one-line message naming it.
. "$(dirname "$0")/lib.sh"

fresh_db
load_schema "$src/schema/postgres.sql"
sq=$(sqlite_db)

rows="SELECT entity, coalesce(from_status, ''), to_status FROM transitions"
sqlite3 -separator '|' "$sq" "$rows" | LC_ALL=C sort >"$tmp/sqlite.rows"
q -F '|' -c "SET search_path = planctl" -c "$rows" | LC_ALL=C sort \
    >"$tmp/pg.rows"
[ -s "$tmp/sqlite.rows" ] || fail "no transitions read from SQLite"
diff -u "$tmp/sqlite.rows" "$tmp/pg.rows" ||
    fail "the transitions tables differ (- SQLite, + PostgreSQL)"
note "transitions: $(wc -l <"$tmp/pg.rows") rows, the same as SQLite's"

# Every status of any entity, and one of none.
statuses=$(sqlite3 "$sq" "SELECT from_status FROM transitions
    WHERE from_status IS NOT NULL UNION SELECT to_status FROM transitions")
statuses="$statuses NOT_A_STATUS"

: >"$tmp/cases.csv"
: >"$tmp/expected"
for e in run phase step; do
    for f in '' $statuses; do
        for t in $statuses; do
            printf '%s,%s,%s\n' "$e" "$f" "$t" >>"$tmp/cases.csv"
            if grep -qxF "$e|$f|$t" "$tmp/sqlite.rows"; then
                printf '%s|%s|%s|ok\n' "$e" "$f" "$t"
            else
                printf '%s|%s|%s|PC001\n' "$e" "$f" "$t"
            fi >>"$tmp/expected"
        done
    done
done

# Each case in a subtransaction rolled back after it.  The row a case
# updates is put in its from status with the triggers off
# (session_replication_role = replica; the cluster's user is a
# superuser), as some statuses cannot be reached by legal steps alone.
q -F '|' >"$tmp/results.raw" <<SQL
SET search_path = planctl;
CREATE TEMP TABLE cases (entity text, from_status text, to_status text);
\copy cases FROM '$tmp/cases.csv' WITH (FORMAT csv, NULL '')
CREATE TEMP TABLE results (entity text, from_status text, to_status text,
                           result text, message text);
INSERT INTO definitions (name, version, body, created_at)
    VALUES ('d', '1', '{}', 0);
-- Instance 1 holds the run and phase the phase and step cases belong to;
-- the run cases create runs of instance 2, which has none.
INSERT INTO instances (name, definition_id, params, created_at, updated_at)
    VALUES ('fixture', 1, '{}', 0, 0), ('runs', 1, '{}', 0, 0);
INSERT INTO runs (uid, instance_id, definition_id, plan, status, trigger,
                  params, created_at)
    VALUES ('u0', 1, 1, 'deploy', 'PENDING', 'create', '{}', 0);
INSERT INTO phases (run_id, idx, name, strategy, status)
    VALUES (1, 0, 'p', 'serial', 'PENDING');
DO \$\$
DECLARE
    c record;
    res text;
    msg text;
    tbl text;
    ins text;
    rid bigint;
BEGIN
    FOR c IN SELECT * FROM cases LOOP
        CASE c.entity
        WHEN 'run' THEN
            tbl := 'runs';
            ins := '(uid, instance_id, definition_id, plan, status, trigger,'
                   ' params, created_at)'
                   ' VALUES (''u1'', 2, 1, ''deploy'', \$1, ''manual'', ''{}'', 0)';
        WHEN 'phase' THEN
            tbl := 'phases';
            ins := '(run_id, idx, name, strategy, status)'
                   ' VALUES (1, 1, ''q'', ''serial'', \$1)';
        ELSE
            tbl := 'steps';
            ins := '(run_id, phase_id, idx, name, status, max_attempts)'
                   ' VALUES (1, 1, 0, ''s'', \$1, 1)';
        END CASE;
        BEGIN
            IF c.from_status IS NULL THEN
                BEGIN
                    EXECUTE format('INSERT INTO %I %s', tbl, ins)
                        USING c.to_status;
                    res := 'ok'; msg := '';
                EXCEPTION WHEN OTHERS THEN
                    res := SQLSTATE; msg := SQLERRM;
                END;
            ELSE
                PERFORM set_config('session_replication_role', 'replica', true);
                EXECUTE format('INSERT INTO %I %s RETURNING id', tbl, ins)
                    INTO rid USING c.from_status;
                PERFORM set_config('session_replication_role', 'origin', true);
                BEGIN
                    EXECUTE format('UPDATE %I SET status = \$1 WHERE id = \$2',
                                   tbl) USING c.to_status, rid;
                    res := 'ok'; msg := '';
                EXCEPTION WHEN OTHERS THEN
                    res := SQLSTATE; msg := SQLERRM;
                END;
            END IF;
            RAISE EXCEPTION 'undo' USING ERRCODE = 'PCZZZ';
        EXCEPTION WHEN SQLSTATE 'PCZZZ' THEN
            NULL;
        END;
        INSERT INTO results VALUES (c.entity, c.from_status, c.to_status,
                                    res, msg);
    END LOOP;
END \$\$;
SELECT entity, coalesce(from_status, ''), to_status, result FROM results;
-- A refusal's message: one line naming the transition.
SELECT 'BADMSG', entity, coalesce(from_status, ''), to_status, message
FROM results
WHERE result = 'PC001'
  AND message IS DISTINCT FROM format('illegal %s status transition: %s -> %s',
        entity, coalesce(from_status, '(new)'), to_status);
SQL

grep '^BADMSG' "$tmp/results.raw" && fail "refusals with the wrong message"
LC_ALL=C sort "$tmp/results.raw" >"$tmp/results"
LC_ALL=C sort "$tmp/expected" >"$tmp/expected.sorted"
n=$(wc -l <"$tmp/expected.sorted")
[ "$n" -ge 200 ] || fail "only $n cases"
diff -u "$tmp/expected.sorted" "$tmp/results" ||
    fail "the guards differ from SQLite's transitions (- expected, + PostgreSQL)"
note "$n (entity, from, to) cases: $(grep -c '|ok$' "$tmp/results") accepted," \
    "$(grep -c '|PC001$' "$tmp/results") refused with PC001, as SQLite's table says"
