-- postgres.sql - every statement the store prepares, by name, in
-- PostgreSQL's dialect, for the tables of schema/postgres.sql (found
-- through search_path), embedded in the build as pctl_queries_postgres
-- and prepared by the PostgreSQL backend (src/store/postgres/).
--
-- The same names, in the same order, as sqlite.sql, each with the same
-- parameters ($n where sqlite.sql has ?n; its anonymous ? are numbered
-- left to right) and the same result columns in the same order
-- (tests/pg/statements.sh checks names, order and counts, and prepares
-- every statement on a real server).  A comment says what a statement is
-- for where sqlite.sql's would not.
--
-- Parameters arrive as bigint or text and are prepared without types, so
-- a statement names a parameter's type (::bigint, ::text) wherever
-- PostgreSQL could not infer it or would infer another (a flag SQLite
-- reads as a truth value is bigint here, compared with 0).  What SQLite
-- returns as an integer truth value is cast ::int here, not left boolean.
-- A parameter a statement does not use (sqlite.sql leaves ?n out, and
-- the store binds it all the same) is named to no effect, "($n::bigint IS
-- NULL OR true)", since PostgreSQL cannot type a parameter it never sees.
--
-- A statement an engine's pass runs once a row may have a set form after
-- its text, on a line "-- many: TABLE KEYS": the same change for many
-- rows, its $n the array of the one-row statement's $n values (typed:
-- bigint[], integer[], text[]), which the backend sends once for the rows
-- a pass gathered (src/store/README, "Set forms").  Two rows whose TABLE
-- and first KEYS parameters are equal are never sent together; a form
-- with KEYS 0 (events) only appends.
--
-- Names are sorted COLLATE "C": byte order, as SQLite's BINARY sorts them,
-- whatever the database's collation (en_US and ICU collations fold case
-- and skip punctuation, which would list "B" after "ab").

-- name: run_set_status
UPDATE runs SET status = $3,
    started_at = CASE WHEN $3 = 'IN_PROGRESS' THEN coalesce(started_at, $4)
                 ELSE started_at END,
    finished_at = CASE WHEN $6::bigint <> 0 THEN $4 ELSE NULL END,
    message = $5,
    deadline_at = coalesce($8, deadline_at)
WHERE id = $1 AND status = $2 AND ($7::bigint IS NULL OR true);
-- many: runs 1
-- A run enters the active statuses (runs_one_active) only when promoted
-- from the queue, after a read (runs_next_queued, at the pass's end) that
-- sends the rows gathered before it: the run that left them is written
-- first.
UPDATE runs SET status = u.status,
    started_at = CASE WHEN u.status = 'IN_PROGRESS'
                      THEN coalesce(runs.started_at, u.at)
                      ELSE runs.started_at END,
    finished_at = CASE WHEN u.ends <> 0 THEN u.at ELSE NULL END,
    message = u.message,
    deadline_at = coalesce(u.deadline, runs.deadline_at)
FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::text[],
            $6::bigint[], $7::bigint[], $8::bigint[])
    AS u(id, was, status, at, message, ends, unused, deadline)
WHERE runs.id = u.id AND runs.status = u.was;

-- name: phase_set_status
UPDATE phases SET status = $3,
    started_at = CASE WHEN $3 = 'IN_PROGRESS' THEN coalesce(started_at, $4)
                 ELSE started_at END,
    finished_at = CASE WHEN $6::bigint <> 0 THEN $4 ELSE NULL END,
    message = $5
WHERE id = $1 AND status = $2;
-- many: phases 1
UPDATE phases SET status = u.status,
    started_at = CASE WHEN u.status = 'IN_PROGRESS'
                      THEN coalesce(phases.started_at, u.at)
                      ELSE phases.started_at END,
    finished_at = CASE WHEN u.ends <> 0 THEN u.at ELSE NULL END,
    message = u.message
FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::text[],
            $6::bigint[]) AS u(id, was, status, at, message, ends)
WHERE phases.id = u.id AND phases.status = u.was;

-- name: step_set_status
UPDATE steps SET status = $3,
    started_at = CASE WHEN $3 = 'IN_PROGRESS' THEN coalesce(started_at, $4)
                 ELSE started_at END,
    finished_at = CASE WHEN $6::bigint <> 0 THEN $4 ELSE NULL END,
    message = $5,
    attempt = attempt + $10,
    next_attempt_at = $7,
    deadline_at = $8,
    max_attempts = max_attempts + $9
WHERE id = $1 AND status = $2;
-- many: steps 1
UPDATE steps SET status = u.status,
    started_at = CASE WHEN u.status = 'IN_PROGRESS'
                      THEN coalesce(steps.started_at, u.at)
                      ELSE steps.started_at END,
    finished_at = CASE WHEN u.ends <> 0 THEN u.at ELSE NULL END,
    message = u.message,
    attempt = steps.attempt + u.more_tries,
    next_attempt_at = u.next_at,
    deadline_at = u.deadline,
    max_attempts = steps.max_attempts + u.more_max
FROM unnest($1::bigint[], $2::text[], $3::text[], $4::bigint[], $5::text[],
            $6::bigint[], $7::bigint[], $8::bigint[], $9::integer[],
            $10::integer[])
    AS u(id, was, status, at, message, ends, next_at, deadline, more_max,
         more_tries)
WHERE steps.id = u.id AND steps.status = u.was;

-- name: run_get_status
SELECT status FROM runs WHERE id = $1;

-- name: phase_get_status
SELECT status FROM phases WHERE id = $1;

-- name: step_get_status
SELECT status FROM steps WHERE id = $1;

-- What the gate reads back after a status change: run id, phase id,
-- attempt, next try, deadline.  A separate read, as on SQLite (where
-- RETURNING costs an ephemeral table per UPDATE), so the gate runs the same
-- statements on both; the NULLs are typed as the columns they stand for.
-- name: run_set_result
SELECT id, 0::bigint, 0, NULL::bigint, deadline_at, instance_id FROM runs
WHERE id = $1;

-- name: phase_set_result
SELECT ph.run_id, ph.id, 0, NULL::bigint, NULL::bigint, r.instance_id
FROM phases AS ph JOIN runs AS r ON r.id = ph.run_id WHERE ph.id = $1;

-- name: step_set_result
SELECT s.run_id, s.phase_id, s.attempt, s.next_attempt_at, s.deadline_at,
    r.instance_id
FROM steps AS s JOIN runs AS r ON r.id = s.run_id WHERE s.id = $1;

-- name: attempt_open
INSERT INTO attempts (step_id, number, status, started_at)
VALUES ($1, $2, 'IN_PROGRESS', $3);
-- many: attempts 1
INSERT INTO attempts (step_id, number, status, started_at)
SELECT u.step_id, u.number, 'IN_PROGRESS', u.at
FROM unnest($1::bigint[], $2::integer[], $3::bigint[])
    AS u(step_id, number, at);

-- name: attempt_close
UPDATE attempts SET status = $2, finished_at = $3, exit_code = $4,
    message = $5, output = $6
WHERE step_id = $1 AND finished_at IS NULL;
-- many: attempts 1
-- (Each step's open try found by its own probe of attempts_one_open, the
-- row then by its ctid.  Joined the plain way, the plan PostgreSQL keeps
-- for a table it has not analyzed yet (an engine's first minute) reads
-- the whole index and hashes it: every try closed since the last vacuum
-- left a dead entry there, so each close cost more than the last (a
-- backlog of 20,000 runs: the statement took 3.5 to 25 s of the server's
-- time, run to run).  A probe by key sees one step's entries.)
UPDATE attempts SET status = u.status, finished_at = u.at,
    exit_code = u.exit_code, message = u.message, output = u.output
FROM unnest($1::bigint[], $2::text[], $3::bigint[], $4::integer[], $5::text[],
            $6::text[]) AS u(step_id, status, at, exit_code, message, output),
    LATERAL (SELECT o.ctid AS at_row FROM attempts AS o
             WHERE o.step_id = u.step_id AND o.finished_at IS NULL
             LIMIT 1) AS o
WHERE attempts.ctid = o.at_row;

-- How many bytes of output try $2 of a step wrote in all (0005): written
-- with its output, only for a try that wrote some.
-- name: output_bytes_put
INSERT INTO attempt_output_bytes (step_id, attempt, bytes) VALUES ($1, $2, $3)
ON CONFLICT (step_id, attempt) DO UPDATE SET bytes = excluded.bytes;

-- The output of a try that still runs, so far (the engine, at most once a
-- second while its task writes some).
-- name: attempt_live_output
UPDATE attempts SET output = $3
WHERE step_id = $1 AND number = $2 AND finished_at IS NULL;

-- What the open try of a step stored of its output while it ran, and the
-- bytes it wrote: kept when one who does not have its output (recovery,
-- a timeout, cancel, a deadline) ends the try (gate.c).
-- name: attempt_kept_output
SELECT a.output, b.bytes FROM attempts AS a LEFT JOIN attempt_output_bytes AS b
    ON b.step_id = a.step_id AND b.attempt = a.number
WHERE a.step_id = $1 AND a.finished_at IS NULL;

-- The outputs of try $2 of a step (0004), or with $2 = 0 the step's own
-- (what the later tasks of its run see): written only when there are
-- some, so a try without outputs runs the statements it ran before
-- outputs existed.
-- name: outputs_put
INSERT INTO task_outputs (step_id, attempt, outputs) VALUES ($1, $2, $3)
ON CONFLICT (step_id, attempt) DO UPDATE SET outputs = excluded.outputs;

-- The outputs of the completed steps of a run, for a task about to start:
-- read only when the run has some (the engine keeps whether it has).
-- name: run_outputs
SELECT s.name, o.outputs FROM steps AS s JOIN phases AS ph ON ph.id = s.phase_id
JOIN task_outputs AS o ON o.step_id = s.id AND o.attempt = 0
WHERE s.run_id = $1
ORDER BY ph.idx, s.idx;

-- What an earlier try of a step recorded, for a retry that resumes at a
-- later task (or recovery closing a try its engine left).
-- name: attempt_outputs
SELECT outputs FROM task_outputs WHERE step_id = $1 AND attempt = $2;

-- name: event_insert_admin
INSERT INTO events (at, instance_id, entity, message, actor, data)
VALUES ($1, $2, $3, $4, $5, $6);

-- As in sqlite.sql (whose OR list of plans spares SQLite a temporary
-- b-tree; PostgreSQL plans an IN list and an OR alike).
-- name: instance_mark_applied
UPDATE instances SET last_applied = (SELECT params FROM runs WHERE id = $1),
    updated_at = $2
WHERE id = (SELECT instance_id FROM runs
            WHERE id = $1 AND (plan = 'deploy' OR plan = 'update'
                               OR plan = 'upgrade'));
-- many: instances 1
-- Keyed by the run: two runs of one instance never complete between two
-- reads (the second is promoted from the queue after a read, then read).
UPDATE instances SET last_applied = r.params, updated_at = u.at
FROM unnest($1::bigint[], $2::bigint[]) AS u(run_id, at)
JOIN runs AS r ON r.id = u.run_id
WHERE instances.id = r.instance_id
  AND (r.plan = 'deploy' OR r.plan = 'update' OR r.plan = 'upgrade');

-- name: instance_remove_after_cleanup
DELETE FROM instances
WHERE deleting = 1
  AND id = (SELECT instance_id FROM runs WHERE id = $1 AND plan = 'cleanup');

-- name: run_next_queued
SELECT q.id FROM runs AS r JOIN runs AS q ON q.instance_id = r.instance_id
WHERE r.id = $1 AND q.status = 'QUEUED'
  AND NOT EXISTS (SELECT 1 FROM runs AS a
                  WHERE a.instance_id = r.instance_id
                    AND (a.status = 'PENDING' OR a.status = 'IN_PROGRESS'
                         OR a.status = 'PAUSED'))
ORDER BY q.id LIMIT 1;

-- name: runs_next_queued
SELECT r.id, (SELECT q.id FROM runs AS q
              WHERE q.instance_id = r.instance_id AND q.status = 'QUEUED'
                AND NOT EXISTS (SELECT 1 FROM runs AS a
                                WHERE a.instance_id = r.instance_id
                                  AND (a.status = 'PENDING'
                                       OR a.status = 'IN_PROGRESS'
                                       OR a.status = 'PAUSED'))
              ORDER BY q.id LIMIT 1) AS next
FROM runs AS r
WHERE r.id IN (SELECT value::bigint
               FROM jsonb_array_elements_text($1::text::jsonb));

-- name: steps_open
SELECT id, status, started_at FROM steps
WHERE run_id = $1 AND status IN ('PENDING', 'IN_PROGRESS', 'ERROR')
ORDER BY id;

-- name: phases_open
SELECT id, status, started_at FROM phases
WHERE run_id = $1 AND status IN ('PENDING', 'IN_PROGRESS')
ORDER BY id;

-- name: run_active
SELECT id, plan, status, coalesce(started_at, created_at) FROM runs
WHERE instance_id = $1 AND (status = 'PENDING' OR status = 'IN_PROGRESS'
                            OR status = 'PAUSED');

-- name: run_first_queued
SELECT id FROM runs WHERE instance_id = $1 AND status = 'QUEUED'
ORDER BY id LIMIT 1;

-- A run's uid: 32 lowercase hex digits, as SQLite's
-- lower(hex(randomblob(16))) makes (gen_random_uuid is core since 13).
-- name: run_insert
INSERT INTO runs (uid, instance_id, definition_id, plan, status, trigger,
                  reason, retry_of, params, created_at)
VALUES (replace(gen_random_uuid()::text, '-', ''), $1, $2, $3, $4, $5, $6,
        $7, $8, $9)
RETURNING id, uid;

-- name: phase_insert
INSERT INTO phases (run_id, idx, name, strategy, status, started_at,
                    finished_at, message)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
RETURNING id;

-- name: step_insert
INSERT INTO steps (run_id, phase_id, idx, name, status, max_attempts,
                   started_at, finished_at, message)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)
RETURNING id;

-- A new run's phases and steps, none carried over, in one statement
-- (admit.c): $2 is the plan as JSON, [{idx, name, strategy, steps:
-- [{idx, name, max_attempts}]}].  Ids are drawn in plan order, as one
-- insert a row would.  A step's phase is inserted by the same statement;
-- its reference is checked at the statement's end, when the phase is
-- there.  Returns (phase idx, step idx or -1 for the phase, id).
-- name: run_rows_insert
WITH d AS (
    SELECT u.idx, u.name, u.strategy, u.steps
    FROM jsonb_to_recordset($2::text::jsonb)
        AS u(idx integer, name text, strategy text, steps jsonb)
), p AS (
    INSERT INTO phases (run_id, idx, name, strategy, status)
    SELECT $1, d.idx, d.name, d.strategy, 'PENDING' FROM d ORDER BY d.idx
    RETURNING id, idx
), s AS (
    INSERT INTO steps (run_id, phase_id, idx, name, status, max_attempts)
    SELECT $1, p.id, t.idx, t.name, 'PENDING', t.max_attempts
    FROM d JOIN p ON p.idx = d.idx,
        jsonb_to_recordset(d.steps)
            AS t(idx integer, name text, max_attempts integer)
    ORDER BY d.idx, t.idx
    RETURNING id, phase_id, idx
)
SELECT p.idx, -1, p.id FROM p
UNION ALL
SELECT p.idx, s.idx, s.id FROM s JOIN p ON p.id = s.phase_id;

-- A new instance with its run, the run's phases and steps, every event
-- of them and the commit's change counter, in one statement (admit.c,
-- pctl_admit_new): $1 name, $2 definition id, $3 explicit parameters,
-- $4 the moment, $5 the run's uid, $6 its parameter snapshot, $7 its
-- event count, $8 the plan's phases and steps (as run_rows_insert), $9
-- the events in order (n, entity, ph and st: the phase's and step's
-- places, to_status, message, actor, data).  A name taken inserts
-- nothing and returns no row.  The counter is one of 16 admission
-- counters, chosen by the session's process; the notification is the
-- token the statement's snapshot saw plus its own one (as
-- src/store/postgres/conn.c commit_parts).  The events' numbers follow
-- n (ORDER BY), as the one-by-one path numbers them.
-- name: instance_create
WITH i AS (
    INSERT INTO instances (name, definition_id, params, created_at,
                           updated_at)
    VALUES ($1, $2, $3, $4, $4)
    ON CONFLICT (name) DO NOTHING
    RETURNING id
), r AS (
    INSERT INTO runs (uid, instance_id, definition_id, plan, status,
                      trigger, params, created_at, event_count)
    SELECT $5, i.id, $2, 'deploy', 'PENDING', 'create', $6, $4, $7 FROM i
    RETURNING id, instance_id
), d AS (
    SELECT u.idx, u.name, u.strategy, u.steps
    FROM json_to_recordset($8::text::json)
        AS u(idx integer, name text, strategy text, steps json)
), p AS (
    INSERT INTO phases (run_id, idx, name, strategy, status)
    SELECT r.id, d.idx, d.name, d.strategy, 'PENDING' FROM r, d
    ORDER BY d.idx
    RETURNING id, idx
), s AS (
    INSERT INTO steps (run_id, phase_id, idx, name, status, max_attempts)
    SELECT r.id, p.id, t.idx, t.name, 'PENDING', t.max_attempts
    FROM r, d JOIN p ON p.idx = d.idx,
        json_to_recordset(d.steps)
            AS t(idx integer, name text, max_attempts integer)
    ORDER BY d.idx, t.idx
    RETURNING id, phase_id, idx
), e AS (
    INSERT INTO events (at, instance_id, run_id, phase_id, step_id, entity,
                        to_status, message, actor, data)
    SELECT $4, r.instance_id,
           CASE WHEN v.entity = 'instance' THEN NULL ELSE r.id END,
           p.id, s.id, v.entity, v.to_status, v.message, v.actor, v.data
    FROM r CROSS JOIN json_to_recordset($9::text::json)
            AS v(n integer, entity text, ph integer, st integer,
                 to_status text, message text, actor text, data text)
        LEFT JOIN p ON p.idx = v.ph
        LEFT JOIN s ON s.phase_id = p.id AND s.idx = v.st
    ORDER BY v.n
)
INSERT INTO meta (key, value)
SELECT 'commits.-' || (1 + pg_backend_pid() % 16), '1' FROM r
ON CONFLICT (key) DO UPDATE SET value = (meta.value::bigint + 1)::text
RETURNING (SELECT id FROM i), (SELECT id FROM r),
    pg_notify('planctl.' || current_schema(),
              ((SELECT value::bigint FROM meta WHERE key = 'commits')
               + (SELECT coalesce(sum(value::bigint), 0) FROM meta
                  WHERE starts_with(key, 'commits.')) + 1)::text);

-- name: phase_carry
SELECT started_at, finished_at FROM phases
WHERE run_id = $1 AND idx = $2 AND name = $3 AND status = 'COMPLETE';

-- name: step_carry
SELECT s.started_at, s.finished_at,
    (SELECT o.outputs FROM task_outputs AS o
     WHERE o.step_id = s.id AND o.attempt = 0)
FROM phases AS ph JOIN steps AS s ON s.phase_id = ph.id
WHERE ph.run_id = $1 AND ph.idx = $2 AND s.idx = $4 AND s.name = $3
  AND s.status = 'COMPLETE';

-- name: instance_by_name
SELECT id, definition_id, params, deleting FROM instances WHERE name = $1;

-- The same, the row locked until the transaction ends: an admission of a
-- run of an existing instance (trigger, retry, set, upgrade) beside the
-- engines, which lock it before they promote a queued run of it
-- (instance_lock, instances_lock_of_runs).
-- name: instance_by_name_locked
SELECT id, definition_id, params, deleting FROM instances WHERE name = $1
FOR NO KEY UPDATE;

-- name: instance_lock
SELECT id FROM instances WHERE id = $1 FOR NO KEY UPDATE;

-- The instances of the runs in $1 (a JSON array of ids), locked in id
-- order: before their queues are read for promotion (gate.c).
-- name: instances_lock_of_runs
SELECT id FROM instances
WHERE id IN (SELECT instance_id FROM runs
             WHERE id IN (SELECT value::bigint
                          FROM jsonb_array_elements_text($1::text::jsonb)))
ORDER BY id FOR NO KEY UPDATE;

-- name: instance_insert
INSERT INTO instances (name, definition_id, params, created_at, updated_at)
VALUES ($1, $2, $3, $4, $4)
ON CONFLICT (name) DO NOTHING
RETURNING id;

-- name: instance_update
UPDATE instances SET definition_id = $2, params = $3, updated_at = $4
WHERE id = $1;

-- name: instance_mark_deleting
UPDATE instances SET deleting = 1, updated_at = $2 WHERE id = $1;

-- name: instance_delete
DELETE FROM instances WHERE id = $1;

-- name: instance_list
SELECT i.name, d.name, d.version,
    coalesce((SELECT status FROM runs WHERE instance_id = i.id
                AND (status = 'PENDING' OR status = 'IN_PROGRESS'
                     OR status = 'PAUSED')),
             (SELECT status FROM runs WHERE instance_id = i.id
                AND status <> 'QUEUED' ORDER BY id DESC LIMIT 1),
             (SELECT status FROM runs WHERE instance_id = i.id
                ORDER BY id DESC LIMIT 1)),
    (SELECT id FROM runs WHERE instance_id = i.id
       AND (status = 'PENDING' OR status = 'IN_PROGRESS'
            OR status = 'PAUSED')),
    i.deleting, i.created_at
FROM instances AS i JOIN definitions AS d ON d.id = i.definition_id
ORDER BY i.name COLLATE "C";

-- name: instance_count
SELECT count(*) FROM instances AS i
WHERE $1::text IS NULL OR strpos(i.name, $1::text) > 0;

-- The page of instance_page sorted by name, without a status filter:
-- the page's rows are found by the name index first, and only they
-- are looked up further (instance_page computes every row).
-- name: instance_page_named
SELECT t.name, d.name, d.version,
    coalesce(r.status, CASE WHEN t.queued > 0 THEN 'QUEUED' END), r.id,
    r.plan, r.created_at, r.started_at, r.finished_at,
    (SELECT count(*) FROM steps WHERE run_id = r.id AND status = 'COMPLETE'),
    (SELECT count(*) FROM steps WHERE run_id = r.id),
    t.queued, t.deleting, t.created_at, NULL
FROM (SELECT p.name, p.deleting, p.created_at, p.definition_id,
          coalesce((SELECT id FROM runs WHERE instance_id = p.id
                      AND (status = 'PENDING' OR status = 'IN_PROGRESS'
                           OR status = 'PAUSED')),
                   (SELECT id FROM runs WHERE instance_id = p.id
                      AND status <> 'QUEUED' ORDER BY id DESC LIMIT 1)) AS rid,
          (SELECT count(*) FROM runs WHERE instance_id = p.id
             AND status = 'QUEUED') AS queued
      FROM (SELECT i.id, i.name, i.deleting, i.created_at, i.definition_id
            FROM instances AS i
            WHERE $1::text IS NULL OR strpos(i.name, $1::text) > 0
            ORDER BY i.name COLLATE "C"
            LIMIT $2::bigint OFFSET $3::bigint) AS p) AS t
JOIN definitions AS d ON d.id = t.definition_id
LEFT JOIN runs AS r ON r.id = t.rid
ORDER BY t.name COLLATE "C";

-- name: instance_page_named_desc
SELECT t.name, d.name, d.version,
    coalesce(r.status, CASE WHEN t.queued > 0 THEN 'QUEUED' END), r.id,
    r.plan, r.created_at, r.started_at, r.finished_at,
    (SELECT count(*) FROM steps WHERE run_id = r.id AND status = 'COMPLETE'),
    (SELECT count(*) FROM steps WHERE run_id = r.id),
    t.queued, t.deleting, t.created_at, NULL
FROM (SELECT p.name, p.deleting, p.created_at, p.definition_id,
          coalesce((SELECT id FROM runs WHERE instance_id = p.id
                      AND (status = 'PENDING' OR status = 'IN_PROGRESS'
                           OR status = 'PAUSED')),
                   (SELECT id FROM runs WHERE instance_id = p.id
                      AND status <> 'QUEUED' ORDER BY id DESC LIMIT 1)) AS rid,
          (SELECT count(*) FROM runs WHERE instance_id = p.id
             AND status = 'QUEUED') AS queued
      FROM (SELECT i.id, i.name, i.deleting, i.created_at, i.definition_id
            FROM instances AS i
            WHERE $1::text IS NULL OR strpos(i.name, $1::text) > 0
            ORDER BY i.name COLLATE "C" DESC
            LIMIT $2::bigint OFFSET $3::bigint) AS p) AS t
JOIN definitions AS d ON d.id = t.definition_id
LEFT JOIN runs AS r ON r.id = t.rid
ORDER BY t.name COLLATE "C" DESC;

-- name: instance_page
SELECT name, dname, dversion, st, rid, plan, rcreated, started_at,
    finished_at,
    (SELECT count(*) FROM steps WHERE run_id = rid AND status = 'COMPLETE'),
    (SELECT count(*) FROM steps WHERE run_id = rid),
    queued, deleting, created_at, n
FROM (SELECT u.*, count(*) OVER () AS n
      FROM (SELECT t.*, d.name AS dname, d.version AS dversion,
                coalesce(r.status, CASE WHEN t.queued > 0 THEN 'QUEUED'
                                        ELSE 'NEVER_RUN' END) AS st,
                r.plan, r.created_at AS rcreated, r.started_at, r.finished_at
            FROM
    (SELECT i.name, i.deleting, i.created_at, i.definition_id,
        coalesce((SELECT id FROM runs WHERE instance_id = i.id
                    AND (status = 'PENDING' OR status = 'IN_PROGRESS'
                         OR status = 'PAUSED')),
                 (SELECT id FROM runs WHERE instance_id = i.id
                    AND status <> 'QUEUED' ORDER BY id DESC LIMIT 1)) AS rid,
        (SELECT count(*) FROM runs WHERE instance_id = i.id
           AND status = 'QUEUED') AS queued
     FROM instances AS i
     WHERE $1::text IS NULL OR strpos(i.name, $1::text) > 0) AS t
            JOIN definitions AS d ON d.id = t.definition_id
            LEFT JOIN runs AS r ON r.id = t.rid) AS u
      WHERE $2::text IS NULL OR u.st = $2::text) AS v
ORDER BY
    CASE WHEN $3::text = 'status' AND $4::bigint = 0 THEN st END,
    CASE WHEN $3::text = 'status' AND $4::bigint = 1 THEN st END DESC,
    CASE WHEN $3::text = 'age' AND $4::bigint = 0
         THEN coalesce(rcreated, created_at) END,
    CASE WHEN $3::text = 'age' AND $4::bigint = 1
         THEN coalesce(rcreated, created_at) END DESC,
    CASE WHEN $3::text = 'name' AND $4::bigint = 1 THEN name COLLATE "C" END DESC,
    name COLLATE "C"
LIMIT $5::bigint OFFSET $6::bigint;

-- name: def_by_name_version
SELECT id, body FROM definitions WHERE name = $1 AND version = $2;

-- name: def_latest
SELECT id, body FROM definitions WHERE name = $1 ORDER BY id DESC LIMIT 1;

-- A create's read of its definition, which takes the schema's write lock
-- shared ('PLCW', hashtext(schema): src/store/postgres/conn.c) as the
-- first statement of its transaction: its BEGIN is sent ahead of it, and
-- no other statement takes the lock (instance_create moves the commit's
-- counter itself).  No row found, no lock: the create fails anyway.
-- name: def_latest_admit
SELECT id, body, pg_advisory_xact_lock_shared(1347175255,
                                              hashtext(current_schema()))
FROM definitions WHERE name = $1 ORDER BY id DESC LIMIT 1;

-- name: def_by_name_version_admit
SELECT id, body, pg_advisory_xact_lock_shared(1347175255,
                                              hashtext(current_schema()))
FROM definitions WHERE name = $1 AND version = $2;

-- name: def_by_id
SELECT body FROM definitions WHERE id = $1;

-- name: def_body
SELECT body FROM definitions WHERE name = $1 AND version = $2;

-- name: def_latest_body
SELECT body FROM definitions WHERE name = $1 ORDER BY id DESC LIMIT 1;

-- name: def_insert
INSERT INTO definitions (name, version, body, created_at)
VALUES ($1, $2, $3, $4);

-- name: def_list
SELECT id, created_at FROM definitions ORDER BY name COLLATE "C", id;

-- name: run_for_retry
SELECT id, definition_id, plan, params, status FROM runs
WHERE instance_id = $1 AND id = $2;

-- name: run_status_of_instance
SELECT status FROM runs WHERE instance_id = $1 AND id = $2;

-- A run's status, as it is now, its row locked until the transaction
-- ends: an engine's write of the run waits for it, and fails its
-- compare-and-set after (tx.c, PCTL_TX_RUN); a claim skips it.
-- name: run_lock
SELECT status FROM runs WHERE id = $1 FOR NO KEY UPDATE;

-- name: run_latest_for_retry
SELECT id, definition_id, plan, params, status FROM runs
WHERE instance_id = $1 ORDER BY id DESC LIMIT 1;

-- name: run_latest_of_plan
SELECT id, uid, plan, status, trigger, reason, retry_of, created_at,
    started_at, finished_at, message, deadline_at,
    (SELECT version FROM definitions WHERE id = runs.definition_id)
FROM runs WHERE instance_id = $1 AND plan = $2
ORDER BY id DESC LIMIT 1;

-- name: run_of_instance
SELECT id, uid, plan, status, trigger, reason, retry_of, created_at,
    started_at, finished_at, message, deadline_at,
    (SELECT version FROM definitions WHERE id = runs.definition_id)
FROM runs WHERE instance_id = $1 AND id = $2;

-- name: run_queued_ids
SELECT id FROM runs WHERE instance_id = $1 AND status = 'QUEUED' ORDER BY id;

-- name: history
SELECT id, uid, plan, status, trigger, reason, retry_of, created_at,
    started_at, finished_at, message, deadline_at,
    (SELECT version FROM definitions WHERE id = runs.definition_id)
FROM runs WHERE instance_id = $1 AND id < $2
ORDER BY id DESC LIMIT $3;

-- name: history_plan
SELECT id, uid, plan, status, trigger, reason, retry_of, created_at,
    started_at, finished_at, message, deadline_at,
    (SELECT version FROM definitions WHERE id = runs.definition_id)
FROM runs WHERE instance_id = $1 AND plan = $4 AND id < $2
ORDER BY id DESC LIMIT $3;

-- name: view_phases
SELECT id, name, strategy, status, started_at, finished_at, message
FROM phases WHERE run_id = $1 ORDER BY idx;

-- name: view_steps
SELECT ph.idx, s.name, s.status, s.attempt, s.max_attempts,
    s.next_attempt_at, s.started_at, s.finished_at, s.message, s.id,
    s.deadline_at,
    (SELECT o.outputs FROM task_outputs AS o
     WHERE o.step_id = s.id AND o.attempt = 0) AS outputs
FROM steps AS s JOIN phases AS ph ON ph.id = s.phase_id
WHERE s.run_id = $1
ORDER BY ph.idx, s.idx;

-- name: lease_get
SELECT host, pid, token, acquired_at, heartbeat_at FROM engine_lease
WHERE id = 1;

-- name: lease_put
INSERT INTO engine_lease (id, owner, host, pid, token, acquired_at,
                          heartbeat_at)
VALUES (1, $1, $2, $3, $4, $5, $5)
ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, host = excluded.host,
    pid = excluded.pid, token = excluded.token,
    acquired_at = excluded.acquired_at, heartbeat_at = excluded.heartbeat_at;

-- name: lease_token
SELECT token FROM engine_lease WHERE id = 1;

-- name: lease_beat
UPDATE engine_lease SET heartbeat_at = $2 WHERE id = 1 AND token = $1;

-- name: lease_drop
DELETE FROM engine_lease WHERE id = 1 AND token = $1;

-- The engine's active runs: those it holds ($1: its id in engines;
-- store/fleet.c), where SQLite's engine has all of them.
-- name: active_runs
SELECT r.id, r.instance_id, i.name, r.plan, r.status, r.definition_id,
    r.params, r.deadline_at, r.uid, r.event_count
FROM runs AS r JOIN instances AS i ON i.id = r.instance_id
JOIN claims AS c ON c.run_id = r.id AND c.engine_id = $1
WHERE r.status = 'PENDING' OR r.status = 'IN_PROGRESS'
   OR r.status = 'PAUSED';

-- name: active_phases
SELECT ph.run_id, ph.id, ph.idx, ph.name, ph.strategy, ph.status
FROM runs AS r JOIN claims AS c ON c.run_id = r.id AND c.engine_id = $1
JOIN phases AS ph ON ph.run_id = r.id
WHERE r.status = 'PENDING' OR r.status = 'IN_PROGRESS'
   OR r.status = 'PAUSED';

-- Each step names its phase by id: the phase's index comes from the
-- phases read just before (store/active.c), not from a lookup per step.
-- name: active_steps
SELECT s.run_id, s.phase_id, s.id, s.idx, s.name, s.status, s.attempt,
    s.max_attempts, s.next_attempt_at, s.deadline_at, s.task_index, s.message
FROM runs AS r JOIN claims AS c ON c.run_id = r.id AND c.engine_id = $1
JOIN steps AS s ON s.run_id = r.id
WHERE r.status = 'PENDING' OR r.status = 'IN_PROGRESS'
   OR r.status = 'PAUSED';

-- name: step_set_task
UPDATE steps SET task_index = $2 WHERE id = $1 AND status = 'IN_PROGRESS';

-- name: runs_open_any
SELECT (EXISTS (SELECT 1 FROM runs WHERE status = 'QUEUED')
        OR EXISTS (SELECT 1 FROM runs
                   WHERE status = 'PENDING' OR status = 'IN_PROGRESS'
                      OR status = 'PAUSED'))::int;

-- name: runs_open_counts
SELECT (SELECT count(*) FROM runs WHERE status = 'QUEUED'),
       (SELECT count(*) FROM runs
        WHERE (status = 'PENDING' OR status = 'IN_PROGRESS'
               OR status = 'PAUSED'));

-- The event log by number (events.c, feed.c): every event after the
-- reader's last ($1) and below the horizon ($3), which events_horizon gives
-- in a statement of its own before the read's snapshot: numbers are not
-- commit order here, and an open transaction's events are below numbers
-- that have committed (schema/postgres.sql, src/store/README).
-- name: events_horizon
SELECT events_horizon($1);

-- name: events_all
SELECT e.seq, e.at, i.name, e.run_id, ph.name, s.name, e.entity,
    e.from_status, e.to_status, e.attempt, e.message, e.actor, e.data,
    r.definition_id
FROM events AS e
LEFT JOIN instances AS i ON i.id = e.instance_id
LEFT JOIN runs AS r ON r.id = e.run_id
LEFT JOIN phases AS ph ON ph.id = e.phase_id
LEFT JOIN steps AS s ON s.id = e.step_id
WHERE e.seq > $1 AND e.seq < $3
ORDER BY e.seq LIMIT $2;

-- name: events_instance
SELECT e.seq, e.at, i.name, e.run_id, ph.name, s.name, e.entity,
    e.from_status, e.to_status, e.attempt, e.message, e.actor, e.data,
    r.definition_id
FROM events AS e
LEFT JOIN instances AS i ON i.id = e.instance_id
LEFT JOIN runs AS r ON r.id = e.run_id
LEFT JOIN phases AS ph ON ph.id = e.phase_id
LEFT JOIN steps AS s ON s.id = e.step_id
WHERE e.instance_id = $4 AND e.seq > $1 AND e.seq < $3
ORDER BY e.seq LIMIT $2;

-- name: events_run
SELECT e.seq, e.at, i.name, e.run_id, ph.name, s.name, e.entity,
    e.from_status, e.to_status, e.attempt, e.message, e.actor, e.data,
    r.definition_id
FROM events AS e
LEFT JOIN instances AS i ON i.id = e.instance_id
LEFT JOIN runs AS r ON r.id = e.run_id
LEFT JOIN phases AS ph ON ph.id = e.phase_id
LEFT JOIN steps AS s ON s.id = e.step_id
WHERE e.run_id = $4 AND e.seq > $1 AND e.seq < $3
ORDER BY e.seq LIMIT $2;

-- Where --tail starts: the seq before the last $2 events after $1 and below
-- the horizon $3 (no row when there are fewer), found backwards along the
-- same index.
-- name: events_all_tail
SELECT seq - 1 FROM events WHERE seq > $1 AND seq < $3
ORDER BY seq DESC LIMIT 1 OFFSET $2 - 1;

-- name: events_instance_tail
SELECT seq - 1 FROM events WHERE instance_id = $4 AND seq > $1 AND seq < $3
ORDER BY seq DESC LIMIT 1 OFFSET $2 - 1;

-- name: events_run_tail
SELECT seq - 1 FROM events WHERE run_id = $4 AND seq > $1 AND seq < $3
ORDER BY seq DESC LIMIT 1 OFFSET $2 - 1;

-- name: run_instance
SELECT instance_id FROM runs WHERE id = $1;

-- name: run_by_id
SELECT id, uid, plan, status, trigger, reason, retry_of, created_at,
    started_at, finished_at, message, deadline_at,
    (SELECT version FROM definitions WHERE id = runs.definition_id)
FROM runs WHERE id = $1;

-- The engine's clock re-anchored to a wall clock that jumped (ident.c's
-- neighbour, store/clockshift.c): the deadlines and retry times of active
-- runs move with it, so what was due in a minute is still due in a minute.
-- replay.c applies the same shift to the same rows.
-- name: clock_shift_runs
UPDATE runs SET deadline_at = deadline_at + $1
WHERE deadline_at IS NOT NULL
  AND (status = 'PENDING' OR status = 'IN_PROGRESS' OR status = 'PAUSED');

-- name: clock_shift_retries
UPDATE steps SET next_attempt_at = next_attempt_at + $1
WHERE status = 'ERROR' AND next_attempt_at IS NOT NULL
  AND run_id IN (SELECT id FROM runs WHERE status = 'PENDING'
                 OR status = 'IN_PROGRESS' OR status = 'PAUSED');

-- name: clock_shift_timeouts
UPDATE steps SET deadline_at = deadline_at + $1
WHERE status = 'IN_PROGRESS' AND deadline_at IS NOT NULL
  AND run_id IN (SELECT id FROM runs WHERE status = 'PENDING'
                 OR status = 'IN_PROGRESS' OR status = 'PAUSED');

-- name: clock_shift_instances
SELECT DISTINCT instance_id FROM runs
WHERE status = 'PENDING' OR status = 'IN_PROGRESS' OR status = 'PAUSED';

-- name: run_params
SELECT params FROM runs WHERE id = $1;

-- A try's outputs show once it has ended: those its earlier tasks
-- recorded while it runs (pctl_step_set_task) are in no event yet, and
-- status must say what replay says.  So does its output (written while
-- it runs too: `planctl logs` shows that).
-- name: view_attempts
SELECT a.number, a.status, a.started_at, a.finished_at, a.exit_code,
    a.message, CASE WHEN a.finished_at IS NOT NULL THEN a.output END,
    CASE WHEN a.finished_at IS NOT NULL THEN
        (SELECT o.outputs FROM task_outputs AS o
         WHERE o.step_id = a.step_id AND o.attempt = a.number) END AS outputs
FROM attempts AS a WHERE a.step_id = $1 ORDER BY a.number;

-- name: replay_all
SELECT seq, at, instance_id, run_id, phase_id, step_id, entity,
    from_status, to_status, attempt, message, data
FROM events WHERE seq <= $1 AND at <= $2 ORDER BY seq;

-- name: replay_instance
SELECT seq, at, instance_id, run_id, phase_id, step_id, entity,
    from_status, to_status, attempt, message, data
FROM events WHERE instance_id = $3 AND seq <= $1 AND at <= $2 ORDER BY seq;

-- name: instance_ids
SELECT id, name FROM instances ORDER BY name COLLATE "C";

-- name: run_ids
SELECT id FROM runs ORDER BY id;

-- ?1 NULL: no age limit (its type named, since IS NULL gives none).
-- name: gc_candidates
SELECT r.id, i.name, r.plan, r.status, r.finished_at, r.instance_id
FROM runs AS r JOIN instances AS i ON i.id = r.instance_id
WHERE r.status IN ('COMPLETE', 'FATAL_ERROR', 'CANCELLED')
  AND r.id > $3
  AND ($1::bigint IS NULL OR r.finished_at < $1::bigint)
  AND (SELECT count(*) FROM runs AS n
       WHERE n.instance_id = r.instance_id AND n.plan = r.plan
         AND n.id > r.id) >= $2
ORDER BY r.id LIMIT $4;

-- name: gc_delete_run
DELETE FROM runs
WHERE id = $1 AND status IN ('COMPLETE', 'FATAL_ERROR', 'CANCELLED');

-- Export and import of one instance (bundle.c, bundle_import.c).  Export
-- reads every column as stored; import inserts rows in the status their
-- creation event names and replays the status changes through the guards.

-- events.data and definitions.body are JSON text that planctl wrote (a
-- JSON object or NULL).  SQLite skips text that is not JSON
-- (json_valid); PostgreSQL 15 has no such test without a function
-- (IS JSON is 16), so these skip what is not an object and would fail on
-- a malformed one rather than pass over it.
-- name: bundle_instance
SELECT i.id, i.name, i.params, i.last_applied, i.deleting, i.created_at,
    i.updated_at, d.name, d.version
FROM instances AS i JOIN definitions AS d ON d.id = i.definition_id
WHERE i.id = $1;

-- name: bundle_definitions
SELECT id, name, version, body, created_at FROM definitions
WHERE id = (SELECT definition_id FROM instances WHERE id = $1)
   OR id IN (SELECT definition_id FROM runs WHERE instance_id = $1)
   OR (name, version) IN (
        SELECT data::jsonb #>> '{definition,name}',
               data::jsonb #>> '{definition,version}'
        FROM events WHERE instance_id = $1 AND data LIKE '{%')
ORDER BY id;

-- The names of a definition's parameters marked secret (SQLite's
-- json_extract gives JSON true as 1).  parameters is a JSON array; CASE,
-- unlike AND, tries its tests in order, so no cast meets a body that is
-- not an object.
-- name: def_secret_params
SELECT p.value ->> 'name'
FROM definitions AS d
CROSS JOIN LATERAL jsonb_array_elements(
    CASE WHEN d.body NOT LIKE '{%' THEN NULL
         WHEN jsonb_typeof(d.body::jsonb -> 'parameters') = 'array'
         THEN d.body::jsonb -> 'parameters' END) AS p(value)
WHERE d.id = $1
  AND p.value -> 'secret' IN ('true'::jsonb, '1'::jsonb);

-- name: bundle_runs
SELECT id, uid, instance_id, definition_id, plan, status, trigger, reason,
    retry_of, params, created_at, started_at, finished_at, deadline_at,
    message
FROM runs WHERE instance_id = $1 ORDER BY id;

-- name: bundle_phases
SELECT ph.id, ph.run_id, ph.idx, ph.name, ph.strategy, ph.status,
    ph.started_at, ph.finished_at, ph.message
FROM phases AS ph JOIN runs AS r ON r.id = ph.run_id
WHERE r.instance_id = $1 ORDER BY ph.id;

-- name: bundle_steps
SELECT s.id, s.run_id, s.phase_id, s.idx, s.name, s.status, s.attempt,
    s.max_attempts, s.task_index, s.next_attempt_at, s.deadline_at,
    s.started_at, s.finished_at, s.message,
    (SELECT o.outputs FROM task_outputs AS o
     WHERE o.step_id = s.id AND o.attempt = 0) AS outputs
FROM steps AS s JOIN runs AS r ON r.id = s.run_id
WHERE r.instance_id = $1 ORDER BY s.id;

-- name: bundle_attempts
SELECT a.id, a.step_id, a.number, a.status, a.started_at, a.finished_at,
    a.exit_code, a.message, a.output,
    (SELECT o.outputs FROM task_outputs AS o
     WHERE o.step_id = a.step_id AND o.attempt = a.number) AS outputs
    , (SELECT b.bytes FROM attempt_output_bytes AS b
     WHERE b.step_id = a.step_id AND b.attempt = a.number) AS output_bytes
FROM attempts AS a JOIN steps AS s ON s.id = a.step_id
JOIN runs AS r ON r.id = s.run_id
WHERE r.instance_id = $1 ORDER BY a.id;

-- name: bundle_events
SELECT seq, at, instance_id, run_id, phase_id, step_id, entity, from_status,
    to_status, attempt, message, actor, data
FROM events WHERE instance_id = $1 ORDER BY seq;

-- The same sections for one run of the instance ($2), as `gc --archive`
-- writes it: the run's rows and events, the instance's own events (which
-- replay reads for its definition over time; gc never removes them), and
-- the definitions all of these name.
-- name: archive_definitions
SELECT id, name, version, body, created_at FROM definitions
WHERE id = (SELECT definition_id FROM instances WHERE id = $1)
   OR id = (SELECT definition_id FROM runs WHERE id = $2)
   OR (name, version) IN (
        SELECT data::jsonb #>> '{definition,name}',
               data::jsonb #>> '{definition,version}'
        FROM events
        WHERE (run_id = $2 OR (run_id IS NULL AND instance_id = $1))
          AND data LIKE '{%')
ORDER BY id;

-- name: archive_runs
SELECT id, uid, instance_id, definition_id, plan, status, trigger, reason,
    retry_of, params, created_at, started_at, finished_at, deadline_at,
    message
FROM runs WHERE id = $2 AND instance_id = $1;

-- name: archive_phases
SELECT id, run_id, idx, name, strategy, status, started_at, finished_at,
    message
FROM phases WHERE run_id = $2 AND ($1::bigint IS NULL OR true) ORDER BY id;

-- name: archive_steps
SELECT id, run_id, phase_id, idx, name, status, attempt, max_attempts,
    task_index, next_attempt_at, deadline_at, started_at, finished_at,
    message,
    (SELECT o.outputs FROM task_outputs AS o
     WHERE o.step_id = steps.id AND o.attempt = 0) AS outputs
FROM steps WHERE run_id = $2 AND ($1::bigint IS NULL OR true) ORDER BY id;

-- name: archive_attempts
SELECT a.id, a.step_id, a.number, a.status, a.started_at, a.finished_at,
    a.exit_code, a.message, a.output,
    (SELECT o.outputs FROM task_outputs AS o
     WHERE o.step_id = a.step_id AND o.attempt = a.number) AS outputs
    , (SELECT b.bytes FROM attempt_output_bytes AS b
     WHERE b.step_id = a.step_id AND b.attempt = a.number) AS output_bytes
FROM attempts AS a JOIN steps AS s ON s.id = a.step_id
WHERE s.run_id = $2 AND ($1::bigint IS NULL OR true) ORDER BY a.id;

-- name: archive_events
SELECT seq, at, instance_id, run_id, phase_id, step_id, entity, from_status,
    to_status, attempt, message, actor, data
FROM events WHERE run_id = $2
UNION ALL
SELECT seq, at, instance_id, run_id, phase_id, step_id, entity, from_status,
    to_status, attempt, message, actor, data
FROM events WHERE run_id IS NULL AND instance_id = $1
ORDER BY seq;

-- name: bundle_def_find
SELECT id, body FROM definitions WHERE name = $1 AND version = $2;

-- name: bundle_def_insert
INSERT INTO definitions (name, version, body, created_at)
VALUES ($1, $2, $3, $4)
RETURNING id;

-- name: bundle_instance_insert
INSERT INTO instances (name, definition_id, params, last_applied, deleting,
                       created_at, updated_at)
VALUES ($1, $2, $3, $4, $5, $6, $7)
RETURNING id;

-- name: bundle_run_insert
INSERT INTO runs (uid, plan, trigger, reason, params, created_at, started_at,
                  finished_at, deadline_at, message, instance_id,
                  definition_id, status)
VALUES (CASE WHEN EXISTS (SELECT 1 FROM runs WHERE uid = $1)
             THEN replace(gen_random_uuid()::text, '-', '') ELSE $1 END,
        $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
RETURNING id, uid;

-- name: bundle_run_status
UPDATE runs SET status = $3 WHERE id = $1 AND status = $2;

-- name: bundle_run_retry_of
UPDATE runs SET retry_of = $2 WHERE id = $1;

-- name: bundle_phase_insert
INSERT INTO phases (idx, name, strategy, started_at, finished_at, message,
                    run_id, status)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8)
RETURNING id;

-- name: bundle_phase_status
UPDATE phases SET status = $3 WHERE id = $1 AND status = $2;

-- name: bundle_step_insert
INSERT INTO steps (idx, name, attempt, max_attempts, task_index,
                   next_attempt_at, deadline_at, started_at, finished_at,
                   message, run_id, phase_id, status)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12, $13)
RETURNING id;

-- name: bundle_step_status
UPDATE steps SET status = $3 WHERE id = $1 AND status = $2;

-- name: bundle_attempt_insert
INSERT INTO attempts (number, status, started_at, finished_at, exit_code,
                      message, output, step_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8);

-- name: bundle_event_insert
INSERT INTO events (at, entity, from_status, to_status, attempt, message,
                    actor, data, instance_id, run_id, phase_id, step_id)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12);

-- The first run whose event counter (0002) disagrees with its events.
-- name: verify_integrity
-- One row "ok", or rows naming what is wrong.  SQLite's file check has no
-- counterpart in core PostgreSQL (the server checks its own pages; amcheck
-- is an extension): the same shape, always "ok".
SELECT 'ok'::text;

-- name: verify_foreign_keys
-- No row, or a row per violation, with foreign_key_check's columns (table,
-- rowid, parent, foreign key).  PostgreSQL enforces its foreign keys
-- always; the events' ids are plain references (0009), checked here.
SELECT 'events'::text, e.seq, 'runs'::text, 0::bigint
FROM events AS e
WHERE e.run_id IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM runs AS r WHERE r.id = e.run_id)
UNION ALL
SELECT 'events'::text, e.seq, 'instances'::text, 1::bigint
FROM events AS e
WHERE e.instance_id IS NOT NULL
  AND NOT EXISTS (SELECT 1 FROM instances AS i WHERE i.id = e.instance_id);

-- name: verify_event_count
SELECT r.id, r.event_count, count(e.seq) AS n
FROM runs AS r LEFT JOIN events AS e ON e.run_id = r.id
GROUP BY r.id HAVING r.event_count <> count(e.seq)
ORDER BY r.id LIMIT 1;

-- An imported instance's runs count the events imported with them.
-- name: bundle_count_events
UPDATE runs SET event_count = (SELECT count(*) FROM events
                               WHERE events.run_id = runs.id)
WHERE instance_id = $1;

-- The engine's cache reads a run promoted from the queue alone, with the
-- columns of active_runs, active_phases and active_steps (store/active.c).

-- name: active_run_by_id
SELECT r.id, r.instance_id, i.name, r.plan, r.status, r.definition_id,
    r.params, r.deadline_at, r.uid, r.event_count
FROM runs AS r JOIN instances AS i ON i.id = r.instance_id
JOIN claims AS c ON c.run_id = r.id AND c.engine_id = $2
WHERE r.id = $1 AND (r.status = 'PENDING' OR r.status = 'IN_PROGRESS'
                     OR r.status = 'PAUSED');

-- name: active_phases_of_run
SELECT ph.run_id, ph.id, ph.idx, ph.name, ph.strategy, ph.status
FROM phases AS ph WHERE ph.run_id = $1
ORDER BY ph.idx;

-- name: active_steps_of_run
SELECT s.run_id, s.phase_id, s.id, s.idx, s.name, s.status, s.attempt,
    s.max_attempts, s.next_attempt_at, s.deadline_at, s.task_index, s.message
FROM steps AS s WHERE s.run_id = $1;

-- The same for the runs of $1 (a JSON array of run ids) the engine $2
-- holds and that are active, all at once (a claim, promotions).
-- name: active_runs_by_ids
SELECT r.id, r.instance_id, i.name, r.plan, r.status, r.definition_id,
    r.params, r.deadline_at, r.uid, r.event_count
FROM runs AS r JOIN instances AS i ON i.id = r.instance_id
JOIN claims AS c ON c.run_id = r.id AND c.engine_id = $2
WHERE r.id IN (SELECT value::bigint
               FROM jsonb_array_elements_text($1::text::jsonb))
  AND (r.status = 'PENDING' OR r.status = 'IN_PROGRESS'
       OR r.status = 'PAUSED');

-- name: active_phases_of_runs
SELECT ph.run_id, ph.id, ph.idx, ph.name, ph.strategy, ph.status
FROM phases AS ph JOIN runs AS r ON r.id = ph.run_id
JOIN claims AS c ON c.run_id = r.id AND c.engine_id = $2
WHERE r.id IN (SELECT value::bigint
               FROM jsonb_array_elements_text($1::text::jsonb))
  AND (r.status = 'PENDING' OR r.status = 'IN_PROGRESS'
       OR r.status = 'PAUSED');

-- name: active_steps_of_runs
SELECT s.run_id, s.phase_id, s.id, s.idx, s.name, s.status, s.attempt,
    s.max_attempts, s.next_attempt_at, s.deadline_at, s.task_index, s.message
FROM steps AS s JOIN runs AS r ON r.id = s.run_id
JOIN claims AS c ON c.run_id = r.id AND c.engine_id = $2
WHERE r.id IN (SELECT value::bigint
               FROM jsonb_array_elements_text($1::text::jsonb))
  AND (r.status = 'PENDING' OR r.status = 'IN_PROGRESS'
       OR r.status = 'PAUSED');

-- Names a mistyped one is compared with, for "did you mean" (hints.c).
-- name: hint_instance_names
SELECT name FROM instances ORDER BY name COLLATE "C";

-- name: hint_definition_names
-- GROUP BY, not DISTINCT, which may only sort by the column as selected.
SELECT name FROM definitions GROUP BY name ORDER BY name COLLATE "C";

-- name: hint_definition_versions
SELECT version FROM definitions WHERE name = $1 ORDER BY id;

-- name: hint_plan_has_runs
SELECT 1 FROM runs WHERE instance_id = $1 AND plan = $2 LIMIT 1;

-- Whether an attempt of this database ended stopped rather than by its
-- task: cancelled, or cut short by an engine stopping or a timeout.  1, 0,
-- or NULL when the run, step or attempt is not this database's (the
-- engine's first pass, engine/orphans.c).
-- name: attempt_stopped
SELECT max((a.status = 'CANCELLED'
             OR a.message LIKE 'interrupted: engine stopped%'
             OR a.message LIKE 'timed out after %')::int)
FROM runs AS r JOIN steps AS s ON s.run_id = r.id
JOIN attempts AS a ON a.step_id = s.id AND a.number = $4
WHERE r.id = $1 AND r.uid = $2 AND s.name = $3 AND a.finished_at IS NOT NULL;

-- Which of the tries in $1 (a JSON array of [run id, run uid, step name,
-- attempt]) are this database's and have ended: their places in it,
-- from 1 (the private output directory of such an attempt goes,
-- engine/outfile.c).  One statement for all of them.
-- name: attempts_ended
SELECT d.n FROM jsonb_array_elements($1::text::jsonb) WITH ORDINALITY AS d(t, n)
JOIN runs AS r ON r.id = (d.t->>0)::bigint AND r.uid = d.t->>1
JOIN steps AS s ON s.run_id = r.id AND s.name = d.t->>2
JOIN attempts AS a ON a.step_id = s.id AND a.number = (d.t->>3)::integer
WHERE a.finished_at IS NOT NULL;

-- The events of an engine pass, written before its commit (journal.c): one
-- row, or sixteen at once, with every column bound (instance_id too).
-- SQLite numbers sqlite.sql's anonymous ? left to right: the same $n.
-- name: event_insert_values
INSERT INTO events (at, instance_id, run_id, phase_id, step_id, entity,
                    from_status, to_status, attempt, message, actor, data)
VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12);
-- many: events 0
INSERT INTO events (at, instance_id, run_id, phase_id, step_id, entity,
                    from_status, to_status, attempt, message, actor, data)
SELECT u.at, u.instance_id, u.run_id, u.phase_id, u.step_id, u.entity,
       u.from_status, u.to_status, u.attempt, u.message, u.actor, u.data
FROM unnest($1::bigint[], $2::bigint[], $3::bigint[], $4::bigint[],
            $5::bigint[], $6::text[], $7::text[], $8::text[], $9::integer[],
            $10::text[], $11::text[], $12::text[]) WITH ORDINALITY
    AS u(at, instance_id, run_id, phase_id, step_id, entity, from_status,
         to_status, attempt, message, actor, data, n)
ORDER BY u.n;

-- name: event_insert_batch
INSERT INTO events (at, instance_id, run_id, phase_id, step_id, entity,
                    from_status, to_status, attempt, message, actor, data)
VALUES
    ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $12),
    ($13, $14, $15, $16, $17, $18, $19, $20, $21, $22, $23, $24),
    ($25, $26, $27, $28, $29, $30, $31, $32, $33, $34, $35, $36),
    ($37, $38, $39, $40, $41, $42, $43, $44, $45, $46, $47, $48),
    ($49, $50, $51, $52, $53, $54, $55, $56, $57, $58, $59, $60),
    ($61, $62, $63, $64, $65, $66, $67, $68, $69, $70, $71, $72),
    ($73, $74, $75, $76, $77, $78, $79, $80, $81, $82, $83, $84),
    ($85, $86, $87, $88, $89, $90, $91, $92, $93, $94, $95, $96),
    ($97, $98, $99, $100, $101, $102, $103, $104, $105, $106, $107, $108),
    ($109, $110, $111, $112, $113, $114, $115, $116, $117, $118, $119, $120),
    ($121, $122, $123, $124, $125, $126, $127, $128, $129, $130, $131, $132),
    ($133, $134, $135, $136, $137, $138, $139, $140, $141, $142, $143, $144),
    ($145, $146, $147, $148, $149, $150, $151, $152, $153, $154, $155, $156),
    ($157, $158, $159, $160, $161, $162, $163, $164, $165, $166, $167, $168),
    ($169, $170, $171, $172, $173, $174, $175, $176, $177, $178, $179, $180),
    ($181, $182, $183, $184, $185, $186, $187, $188, $189, $190, $191, $192);

-- name: run_event_count
SELECT event_count FROM runs WHERE id = $1;

-- name: run_set_event_count
UPDATE runs SET event_count = $2 WHERE id = $1;
-- many: runs 1
UPDATE runs SET event_count = u.count
FROM unnest($1::bigint[], $2::bigint[]) AS u(id, count)
WHERE runs.id = u.id;

-- The event log as a change feed (feed.c): where a reader stands, and
-- what has events after a given number, with how many, so that a gap
-- (events removed by gc or with their instance) shows.
-- feed_last: the last number below the horizon (events_horizon, the
-- reader's cursor $1 or -1): every event up to it has committed, or never
-- will.  It is also left in the transaction (planctl.feed_last, a local
-- setting) for a read of the events sent with it (feed_events_fleet with
-- $2 NULL), whose statement, and snapshot, come after it.
-- name: feed_last
SELECT set_config('planctl.feed_last', (events_horizon($1) - 1)::text,
                  true)::bigint;
-- The same for an engine of a fleet, which reads no engine's events
-- (feed_events_fleet): a horizon that does not wait for engines'
-- transactions (events_horizon_fleet).
-- name: feed_last_fleet
SELECT set_config('planctl.feed_last', (events_horizon_fleet($1) - 1)::text,
                  true)::bigint;

-- Where a pass moves its cursor after its own events (inside its
-- transaction): how many events after the cursor $1 are this
-- transaction's, the last of them, and the transaction's id (the xmin
-- of its rows).  When they are every number after the cursor up to it,
-- nothing of another writer's lies between; else the reader skips the
-- events of that id (feed.c).
-- name: feed_mark
SELECT count(*), coalesce(max(seq), $1),
       pg_current_xact_id_if_assigned()::xid::text::bigint FROM events
 WHERE seq > $1 AND xmin = pg_current_xact_id_if_assigned()::xid;

-- Whether events after $1 were removed (a rollback's hole is no removal).
-- name: feed_removed
SELECT (value::bigint > $1)::int FROM meta WHERE key = 'events_removed';

-- Every event after $1 up to $2, oldest first: whose it is (the runs and
-- instances to read again; how many there are shows a gap) and, for a
-- status change, the names a log line of it needs (the engine's log and
-- metrics of what others did).  Rows gone since (an instance deleted)
-- leave their names NULL; so do an engine's changes, which only name
-- their run to the reader (feed.c logs none of them).  The reader's own
-- transactions ($3, a JSON array of their ids, or NULL) are left out
-- (feed_mark); last in each row, the writer's transaction id.
-- name: feed_events
SELECT e.entity, e.from_status, e.to_status, e.run_id, e.attempt, e.actor,
       e.message, i.name, r.plan, ph.name, s.name, e.instance_id,
       e.xmin::text::bigint
  FROM events AS e
  LEFT JOIN instances AS i ON i.id = e.instance_id AND e.actor <> 'engine'
  LEFT JOIN runs AS r ON r.id = e.run_id AND e.actor <> 'engine'
  LEFT JOIN phases AS ph ON ph.id = e.phase_id AND e.actor <> 'engine'
  LEFT JOIN steps AS s ON s.id = e.step_id AND e.actor <> 'engine'
 WHERE e.seq > $1 AND e.seq <= $2
   AND e.xmin::text::bigint <> ALL (ARRAY(
       SELECT jsonb_array_elements_text(coalesce($3::text, '[]')::jsonb)
              ::bigint))
 ORDER BY e.seq;

-- The same for an engine of a fleet, but for every engine's events: the
-- others' runs are none of its business, and a run it holds another
-- engine wrote only before the run changed hands (every engine write is
-- fenced by the run's claim), which the claim that brought it read
-- after (fleet.c).  They come by the partial index events_not_engine
-- (0010): the server reads the users' changes, not every event of the
-- fleet.  $2 NULL: up to what feed_last left in the transaction (sent
-- ahead with it, feed.c).  Last, whether the reader ($4, its id) holds
-- the event's run (1) or not (0): it logs and counts only the changes of
-- runs it holds, so that a change is in one engine's log and metrics, the
-- holder's, not every engine's.
-- name: feed_events_fleet
SELECT e.entity, e.from_status, e.to_status, e.run_id, e.attempt, e.actor,
       e.message, i.name, r.plan, ph.name, s.name, e.instance_id,
       e.xmin::text::bigint,
       (SELECT count(*) FROM claims AS c
         WHERE c.run_id = e.run_id AND c.engine_id = $4::bigint)::int
  FROM events AS e
  LEFT JOIN instances AS i ON i.id = e.instance_id
  LEFT JOIN runs AS r ON r.id = e.run_id
  LEFT JOIN phases AS ph ON ph.id = e.phase_id
  LEFT JOIN steps AS s ON s.id = e.step_id
 WHERE e.seq > $1
   AND e.seq <= coalesce($2::bigint, nullif(current_setting(
                             'planctl.feed_last', true), '')::bigint)
   AND e.actor <> 'engine'
   AND e.xmin::text::bigint <> ALL (ARRAY(
       SELECT jsonb_array_elements_text(coalesce($3::text, '[]')::jsonb)
              ::bigint))
 ORDER BY e.seq;

-- `planctl logs`: the run asked for, or the instance's active run, else
-- its latest that started, else its latest.
-- name: logs_run
SELECT id, plan, status FROM runs WHERE instance_id = $1 AND id = $2;

-- name: logs_default_run
SELECT id, plan, status FROM runs WHERE instance_id = $1
ORDER BY status = 'PENDING' OR status = 'IN_PROGRESS' OR status = 'PAUSED'
    DESC, started_at IS NOT NULL DESC, id DESC
LIMIT 1;

-- name: logs_steps
SELECT ph.name, s.name, s.id, s.status
FROM steps AS s JOIN phases AS ph ON ph.id = s.phase_id
WHERE s.run_id = $1 ORDER BY ph.idx, s.idx;

-- name: logs_attempts
SELECT a.number, a.status, a.started_at, a.finished_at, a.exit_code,
    a.message, a.output, b.bytes
FROM attempts AS a LEFT JOIN attempt_output_bytes AS b
    ON b.step_id = a.step_id AND b.attempt = a.number
WHERE a.step_id = $1 ORDER BY a.number;

-- ---- engines that share the database (store/fleet.c) ----
-- Times are the database's clock, in milliseconds: never a host's.  On
-- SQLite one engine runs under engine_lease and these are not used.

-- name: fleet_join
INSERT INTO engines (name, host, pid, pid_start, started_at, heartbeat_at,
    ttl_ms, capacity)
VALUES ($1, $2, $3, $4, (extract(epoch FROM clock_timestamp()) * 1000)::bigint, (extract(epoch FROM clock_timestamp()) * 1000)::bigint, $5, $6)
RETURNING id;

-- name: fleet_beat
UPDATE engines SET heartbeat_at = (extract(epoch FROM clock_timestamp()) * 1000)::bigint WHERE id = $1
RETURNING heartbeat_at;

-- The fence of an engine's transaction: its row.  The transaction is an
-- engine's (planctl.engine_writes): its events take no writers' lock
-- (events_mark), and a fleet's readers do not wait for them
-- (events_horizon_fleet).
-- name: fleet_fence
SELECT id, set_config('planctl.engine_writes', current_schema(), true)
FROM engines WHERE id = $1;

-- The engines that may be dead: heartbeat older than their TTL, or on
-- this host (whose process fleet.c looks for).  The last column is now.
-- name: fleet_suspects
SELECT id, name, host, pid, pid_start, heartbeat_at, ttl_ms, n.now
FROM engines, (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now) AS n
WHERE id <> $1 AND (heartbeat_at < n.now - ttl_ms OR host = $2)
ORDER BY id;

-- Active runs an engine holds, by id.
-- name: fleet_held
SELECT r.id FROM claims AS c JOIN runs AS r ON r.id = c.run_id
WHERE c.engine_id = $1 AND r.status IN ('PENDING', 'IN_PROGRESS', 'PAUSED')
ORDER BY r.id;

-- Its runs go back to nobody (claims.engine_id ON DELETE SET NULL).
-- name: fleet_drop
DELETE FROM engines WHERE id = $1;

-- The same, only while its heartbeat is older than its TTL: a heartbeat
-- takes no write lock, and one may have come since the suspects were
-- read.  (Waiting for a heartbeat in progress, the row is read again.)
-- name: fleet_drop_stale
DELETE FROM engines
WHERE id = $1
  AND heartbeat_at < (extract(epoch FROM clock_timestamp()) * 1000)::bigint - ttl_ms;

-- Up to $2 active runs that nobody holds, oldest first, for engine $1.
-- Engines claim beside each other (their writes share the write lock):
-- a run another engine is claiming, its row locked until that engine
-- commits, is skipped rather than waited for, and a claim that lost the
-- race anyway (the other committed between this statement's snapshot
-- and its row lock) takes nothing, as the claim is made only while
-- nobody holds the run.
-- name: fleet_claim
INSERT INTO claims (run_id, engine_id, token)
SELECT r.id, $1, 1 FROM runs AS r LEFT JOIN claims AS x ON x.run_id = r.id
WHERE r.status IN ('PENDING', 'IN_PROGRESS', 'PAUSED') AND x.engine_id IS NULL
ORDER BY r.id LIMIT $2
FOR NO KEY UPDATE OF r SKIP LOCKED
ON CONFLICT (run_id) DO UPDATE SET engine_id = excluded.engine_id,
    token = claims.token + 1
WHERE claims.engine_id IS NULL
RETURNING run_id, token;

-- The same after run $3, for an engine going on with a backlog slice
-- after slice from the last run it claimed (engine/pass.c claim()).
-- fleet_claim hashes every active run with every claim and sorts them:
-- some 2 ms a claim with 4,000 active runs, 8-10 ms with 20,000.  This
-- walks the open runs in number order from $3 on (runs_open_by_id,
-- 0011) and stops at the slice: each run's claim is looked up by its own
-- probe (a subquery, not a join the planner could hash), so the plan,
-- kept or not, is an ordered scan that reads about the slice and
-- whatever others claimed between (test_tx test_claims_go_on_after).
-- From the first run the same walk would probe every held run one by one
-- (3.6 ms with 3,000 of 4,000 held, against fleet_claim's 1.9): a claim
-- from the first stays fleet_claim's.
-- name: fleet_claim_after
INSERT INTO claims (run_id, engine_id, token)
SELECT r.id, $1, 1 FROM runs AS r
WHERE r.status IN ('PENDING', 'IN_PROGRESS', 'PAUSED') AND r.id > $3
  AND (SELECT x.engine_id FROM claims AS x WHERE x.run_id = r.id) IS NULL
ORDER BY r.id LIMIT $2
FOR NO KEY UPDATE OF r SKIP LOCKED
ON CONFLICT (run_id) DO UPDATE SET engine_id = excluded.engine_id,
    token = claims.token + 1
WHERE claims.engine_id IS NULL
RETURNING run_id, token;

-- Run $2 held by engine $1 (promoted from the queue by the engine
-- that ended the run before it).
-- name: fleet_hold
INSERT INTO claims (run_id, engine_id, token) VALUES ($2, $1, 1)
ON CONFLICT (run_id) DO UPDATE SET engine_id = excluded.engine_id,
    token = claims.token + 1;

-- name: fleet_release
UPDATE claims SET engine_id = NULL WHERE run_id = $1 AND engine_id = $2;
-- many: claims 1
-- (An engine above its share gives back many runs at one step boundary:
-- one statement, not one a run.)
UPDATE claims SET engine_id = NULL
FROM unnest($1::bigint[], $2::bigint[]) AS u(run_id, engine_id)
WHERE claims.run_id = u.run_id AND claims.engine_id = u.engine_id;

-- For each engine's fair share: the capacity of each live engine (its
-- heartbeat younger than its TTL; engine $1, the one asking, always),
-- each row with the active runs (all of them, and those nobody holds).
-- name: fleet_share
SELECT e.capacity, s.wanting, s.unheld
FROM engines AS e,
    (SELECT (SELECT count(*) FROM runs
             WHERE status IN ('PENDING', 'IN_PROGRESS', 'PAUSED')) AS wanting,
        (SELECT count(*) FROM runs AS r LEFT JOIN claims AS c ON c.run_id = r.id
         WHERE r.status IN ('PENDING', 'IN_PROGRESS', 'PAUSED')
           AND c.engine_id IS NULL) AS unheld) AS s,
    (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now) AS n
WHERE e.id = $1 OR e.heartbeat_at > n.now - e.ttl_ms
ORDER BY e.id;

-- name: fleet_list
SELECT e.id, e.name, e.host, e.pid, e.started_at, e.heartbeat_at, e.ttl_ms,
    e.capacity, n.now,
    (SELECT count(*) FROM claims AS c JOIN runs AS r ON r.id = c.run_id
     WHERE c.engine_id = e.id AND r.status IN ('PENDING', 'IN_PROGRESS', 'PAUSED')),
    e.pid_start
FROM engines AS e, (SELECT (extract(epoch FROM clock_timestamp()) * 1000)::bigint AS now) AS n
ORDER BY e.id;

-- The engine that holds run $1.
-- name: run_holder
SELECT c.engine_id FROM claims AS c
WHERE c.run_id = $1 AND c.engine_id IS NOT NULL;

-- Why an active run waits (run_waits, 0007).
-- name: wait_put
INSERT INTO run_waits (run_id, cause, kind, concurrency, since)
VALUES ($1, $2, $3, $4, $5)
ON CONFLICT (run_id) DO UPDATE SET cause = excluded.cause,
    kind = excluded.kind, concurrency = excluded.concurrency,
    since = excluded.since;
-- many: run_waits 1
-- (A pass that claims a backlog records a wait for each run beyond its
-- concurrency: one statement, not one a run.)
INSERT INTO run_waits (run_id, cause, kind, concurrency, since)
SELECT u.run_id, u.cause, u.kind, u.concurrency, u.since
FROM unnest($1::bigint[], $2::text[], $3::text[], $4::integer[],
            $5::bigint[]) AS u(run_id, cause, kind, concurrency, since)
ON CONFLICT (run_id) DO UPDATE SET cause = excluded.cause,
    kind = excluded.kind, concurrency = excluded.concurrency,
    since = excluded.since;

-- name: wait_delete
DELETE FROM run_waits WHERE run_id = $1;
-- many: run_waits 1
DELETE FROM run_waits WHERE run_id = ANY ($1::bigint[]);

-- name: waits_delete_held
DELETE FROM run_waits
WHERE run_id IN (SELECT run_id FROM claims WHERE engine_id = $1);

-- name: wait_of_run
SELECT w.cause, w.kind, w.concurrency, w.since FROM run_waits AS w
JOIN runs AS r ON r.id = w.run_id
WHERE w.run_id = $1
  AND r.status IN ('PENDING', 'IN_PROGRESS', 'PAUSED');

-- Active run $1 that no engine holds while every engine holds as many
-- active runs as its capacity (none has room to claim it): one row, the
-- engines and their capacity together; no row otherwise (no engine at
-- all, or one with room, which claims it at its next pass).
-- name: wait_unheld
SELECT count(*), sum(e.capacity) FROM engines AS e
WHERE EXISTS (SELECT 1 FROM runs AS r WHERE r.id = $1
    AND r.status IN ('PENDING', 'IN_PROGRESS', 'PAUSED')
    AND NOT EXISTS (SELECT 1 FROM claims AS c
                    WHERE c.run_id = r.id AND c.engine_id IS NOT NULL))
HAVING count(*) > 0
   AND min(CASE WHEN e.capacity > 0 AND e.capacity <=
           (SELECT count(*) FROM claims AS c JOIN runs AS h ON h.id = c.run_id
            WHERE c.engine_id = e.id
              AND h.status IN ('PENDING', 'IN_PROGRESS', 'PAUSED'))
           THEN 1 ELSE 0 END) = 1;
