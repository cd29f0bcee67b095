-- queries.sql - every statement the store prepares, by name.
--
-- Each statement follows its name line (two dashes, "name:", the name)
-- and runs to the next name line;
-- src/store/queries.h lists the names (a test checks both agree).  All
-- values are bound parameters.  Statements are prepared once per handle.

-- name: run_set_status
UPDATE runs SET status = ?3,
    started_at = CASE WHEN ?3 = 'IN_PROGRESS' THEN coalesce(started_at, ?4)
                 ELSE started_at END,
    finished_at = CASE WHEN ?6 THEN ?4 ELSE NULL END,
    message = ?5,
    deadline_at = coalesce(?8, deadline_at)
WHERE id = ?1 AND status = ?2;

-- name: phase_set_status
UPDATE phases SET status = ?3,
    started_at = CASE WHEN ?3 = 'IN_PROGRESS' THEN coalesce(started_at, ?4)
                 ELSE started_at END,
    finished_at = CASE WHEN ?6 THEN ?4 ELSE NULL END,
    message = ?5
WHERE id = ?1 AND status = ?2;

-- name: step_set_status
UPDATE steps SET status = ?3,
    started_at = CASE WHEN ?3 = 'IN_PROGRESS' THEN coalesce(started_at, ?4)
                 ELSE started_at END,
    finished_at = CASE WHEN ?6 THEN ?4 ELSE NULL END,
    message = ?5,
    attempt = attempt + ?10,
    next_attempt_at = ?7,
    deadline_at = ?8,
    max_attempts = max_attempts + ?9
WHERE id = ?1 AND status = ?2;

-- name: run_get_status
SELECT status FROM runs WHERE id = ?1;

-- name: phase_get_status
SELECT status FROM phases WHERE id = ?1;

-- name: step_get_status
SELECT status FROM steps WHERE id = ?1;

-- What the gate reads back after a status change: run id, phase id,
-- attempt, next try, deadline.  A separate read rather than RETURNING,
-- which costs an ephemeral table per UPDATE (about twice the read).
-- name: run_set_result
SELECT id, 0, 0, NULL, deadline_at, instance_id FROM runs WHERE id = ?1;

-- name: phase_set_result
SELECT ph.run_id, ph.id, 0, NULL, NULL, r.instance_id
FROM phases AS ph JOIN runs AS r ON r.id = ph.run_id WHERE ph.id = ?1;

-- name: step_set_result
SELECT s.run_id, s.phase_id, s.attempt, s.next_attempt_at, s.deadline_at,
    r.instance_id
FROM steps AS s JOIN runs AS r ON r.id = s.run_id WHERE s.id = ?1;

-- name: attempt_open
INSERT INTO attempts (step_id, number, status, started_at)
VALUES (?1, ?2, 'IN_PROGRESS', ?3);

-- name: attempt_close
UPDATE attempts SET status = ?2, finished_at = ?3, exit_code = ?4,
    message = ?5, output = ?6
WHERE step_id = ?1 AND finished_at IS NULL;

-- How many bytes of output try ?2 of a step wrote in all (0005): written
-- with its output, only for a try that wrote some.
-- name: output_bytes_put
INSERT INTO attempt_output_bytes (step_id, attempt, bytes) VALUES (?1, ?2, ?3)
ON CONFLICT (step_id, attempt) DO UPDATE SET bytes = excluded.bytes;

-- The output of a try that still runs, so far (the engine, at most once a
-- second while its task writes some).
-- name: attempt_live_output
UPDATE attempts SET output = ?3
WHERE step_id = ?1 AND number = ?2 AND finished_at IS NULL;

-- What the open try of a step stored of its output while it ran, and the
-- bytes it wrote: kept when one who does not have its output (recovery,
-- a timeout, cancel, a deadline) ends the try (gate.c).
-- name: attempt_kept_output
SELECT a.output, b.bytes FROM attempts AS a LEFT JOIN attempt_output_bytes AS b
    ON b.step_id = a.step_id AND b.attempt = a.number
WHERE a.step_id = ?1 AND a.finished_at IS NULL;

-- The outputs of try ?2 of a step (0004), or with ?2 = 0 the step's own
-- (what the later tasks of its run see): written only when there are
-- some, so a try without outputs runs the statements it ran before
-- outputs existed.
-- name: outputs_put
INSERT INTO task_outputs (step_id, attempt, outputs) VALUES (?1, ?2, ?3)
ON CONFLICT (step_id, attempt) DO UPDATE SET outputs = excluded.outputs;

-- The outputs of the completed steps of a run, for a task about to start:
-- read only when the run has some (the engine keeps whether it has).
-- name: run_outputs
SELECT s.name, o.outputs FROM steps AS s JOIN phases AS ph ON ph.id = s.phase_id
JOIN task_outputs AS o ON o.step_id = s.id AND o.attempt = 0
WHERE s.run_id = ?1
ORDER BY ph.idx, s.idx;

-- What an earlier try of a step recorded, for a retry that resumes at a
-- later task (or recovery closing a try its engine left).
-- name: attempt_outputs
SELECT outputs FROM task_outputs WHERE step_id = ?1 AND attempt = ?2;

-- name: event_insert_admin
INSERT INTO events (at, instance_id, entity, message, actor, data)
VALUES (?1, ?2, ?3, ?4, ?5, ?6);

-- The plans as an OR, not an IN list: SQLite fills a temporary b-tree with
-- a list of more than two constants each time it runs (migration 0003).
-- name: instance_mark_applied
UPDATE instances SET last_applied = (SELECT params FROM runs WHERE id = ?1),
    updated_at = ?2
WHERE id = (SELECT instance_id FROM runs
            WHERE id = ?1 AND (plan = 'deploy' OR plan = 'update'
                               OR plan = 'upgrade'));

-- name: instance_remove_after_cleanup
DELETE FROM instances
WHERE deleting = 1
  AND id = (SELECT instance_id FROM runs WHERE id = ?1 AND plan = 'cleanup');

-- name: run_next_queued
SELECT q.id FROM runs AS r JOIN runs AS q ON q.instance_id = r.instance_id
WHERE r.id = ?1 AND q.status = 'QUEUED'
  AND NOT EXISTS (SELECT 1 FROM runs AS a
                  WHERE a.instance_id = r.instance_id
                    AND (a.status = 'PENDING' OR a.status = 'IN_PROGRESS'
                         OR a.status = 'PAUSED'))
ORDER BY q.id LIMIT 1;

-- The queued run to promote behind each run of ?1 (a JSON array of run
-- ids), as run_next_queued: (run, queued run) rows, none for a run with
-- no queued run behind it.
-- name: runs_next_queued
SELECT r.id, (SELECT q.id FROM runs AS q
              WHERE q.instance_id = r.instance_id AND q.status = 'QUEUED'
                AND NOT EXISTS (SELECT 1 FROM runs AS a
                                WHERE a.instance_id = r.instance_id
                                  AND (a.status = 'PENDING'
                                       OR a.status = 'IN_PROGRESS'
                                       OR a.status = 'PAUSED'))
              ORDER BY q.id LIMIT 1) AS next
FROM runs AS r WHERE r.id IN (SELECT value FROM json_each(?1));

-- name: steps_open
SELECT id, status, started_at FROM steps
WHERE run_id = ?1 AND status IN ('PENDING', 'IN_PROGRESS', 'ERROR')
ORDER BY id;

-- name: phases_open
SELECT id, status, started_at FROM phases
WHERE run_id = ?1 AND status IN ('PENDING', 'IN_PROGRESS')
ORDER BY id;

-- name: run_active
SELECT id, plan, status, coalesce(started_at, created_at) FROM runs
WHERE instance_id = ?1 AND (status = 'PENDING' OR status = 'IN_PROGRESS'
                            OR status = 'PAUSED');

-- name: run_first_queued
SELECT id FROM runs WHERE instance_id = ?1 AND status = 'QUEUED'
ORDER BY id LIMIT 1;

-- name: run_insert
INSERT INTO runs (uid, instance_id, definition_id, plan, status, trigger,
                  reason, retry_of, params, created_at)
VALUES (lower(hex(randomblob(16))), ?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
RETURNING id, uid;

-- name: phase_insert
INSERT INTO phases (run_id, idx, name, strategy, status, started_at,
                    finished_at, message)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
RETURNING id;

-- name: step_insert
INSERT INTO steps (run_id, phase_id, idx, name, status, max_attempts,
                   started_at, finished_at, message)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)
RETURNING id;

-- Not used here: SQLite inserts a new run's rows one statement a row
-- (its backend's rows_at_once is 0; a statement costs no round trip in
-- the process).  Named so that both files name the same statements; it
-- inserts and returns nothing, so a caller that used it would fail on
-- the rows missing.
-- name: run_rows_insert
SELECT ?1, ?2, NULL WHERE 0;

-- Not used here either (the backend has no counted): a create
-- writes its rows one statement a row, its events as queued (journal.c).
-- name: instance_create
SELECT ?1, ?2, ?3 || ?4 || ?5 || ?6 || ?7 || ?8 || ?9 WHERE 0;

-- name: phase_carry
SELECT started_at, finished_at FROM phases
WHERE run_id = ?1 AND idx = ?2 AND name = ?3 AND status = 'COMPLETE';

-- name: step_carry
SELECT s.started_at, s.finished_at,
    (SELECT o.outputs FROM task_outputs AS o
     WHERE o.step_id = s.id AND o.attempt = 0)
FROM phases AS ph JOIN steps AS s ON s.phase_id = ph.id
WHERE ph.run_id = ?1 AND ph.idx = ?2 AND s.idx = ?4 AND s.name = ?3
  AND s.status = 'COMPLETE';

-- name: instance_by_name
SELECT id, definition_id, params, deleting FROM instances WHERE name = ?1;

-- The same (the transaction holds the file: no row to lock).
-- name: instance_by_name_locked
SELECT id, definition_id, params, deleting FROM instances WHERE name = ?1;

-- name: instance_lock
SELECT id FROM instances WHERE id = ?1;

-- name: instances_lock_of_runs
SELECT id FROM instances
WHERE id IN (SELECT instance_id FROM runs
             WHERE id IN (SELECT value FROM json_each(?1)))
ORDER BY id;

-- name: instance_insert
INSERT INTO instances (name, definition_id, params, created_at, updated_at)
VALUES (?1, ?2, ?3, ?4, ?4)
ON CONFLICT (name) DO NOTHING
RETURNING id;

-- name: instance_update
UPDATE instances SET definition_id = ?2, params = ?3, updated_at = ?4
WHERE id = ?1;

-- name: instance_mark_deleting
UPDATE instances SET deleting = 1, updated_at = ?2 WHERE id = ?1;

-- name: instance_delete
DELETE FROM instances WHERE id = ?1;

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
ORDER BY i.name;

-- name: instance_count
SELECT count(*) FROM instances AS i
WHERE ?1 IS NULL OR instr(i.name, ?1) > 0;

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
            WHERE ?1 IS NULL OR instr(i.name, ?1) > 0
            ORDER BY i.name
            LIMIT ?2 OFFSET ?3) AS p) AS t
JOIN definitions AS d ON d.id = t.definition_id
LEFT JOIN runs AS r ON r.id = t.rid
ORDER BY t.name;

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
            WHERE ?1 IS NULL OR instr(i.name, ?1) > 0
            ORDER BY i.name DESC
            LIMIT ?2 OFFSET ?3) AS p) AS t
JOIN definitions AS d ON d.id = t.definition_id
LEFT JOIN runs AS r ON r.id = t.rid
ORDER BY t.name DESC;

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
     WHERE ?1 IS NULL OR instr(i.name, ?1) > 0) AS t
            JOIN definitions AS d ON d.id = t.definition_id
            LEFT JOIN runs AS r ON r.id = t.rid) AS u
      WHERE ?2 IS NULL OR u.st = ?2) AS v
ORDER BY
    CASE WHEN ?3 = 'status' AND ?4 = 0 THEN st END,
    CASE WHEN ?3 = 'status' AND ?4 = 1 THEN st END DESC,
    CASE WHEN ?3 = 'age' AND ?4 = 0
         THEN coalesce(rcreated, created_at) END,
    CASE WHEN ?3 = 'age' AND ?4 = 1
         THEN coalesce(rcreated, created_at) END DESC,
    CASE WHEN ?3 = 'name' AND ?4 = 1 THEN name END DESC,
    name
LIMIT ?5 OFFSET ?6;

-- name: def_by_name_version
SELECT id, body FROM definitions WHERE name = ?1 AND version = ?2;

-- name: def_latest
SELECT id, body FROM definitions WHERE name = ?1 ORDER BY id DESC LIMIT 1;

-- A create's read of its definition (on PostgreSQL it takes the schema's
-- write lock; here the transaction holds the file's).
-- name: def_latest_admit
SELECT id, body, NULL FROM definitions WHERE name = ?1
ORDER BY id DESC LIMIT 1;

-- name: def_by_name_version_admit
SELECT id, body, NULL FROM definitions WHERE name = ?1 AND version = ?2;

-- name: def_by_id
SELECT body FROM definitions WHERE id = ?1;

-- name: def_body
SELECT body FROM definitions WHERE name = ?1 AND version = ?2;

-- name: def_latest_body
SELECT body FROM definitions WHERE name = ?1 ORDER BY id DESC LIMIT 1;

-- name: def_insert
INSERT INTO definitions (name, version, body, created_at)
VALUES (?1, ?2, ?3, ?4);

-- name: def_list
SELECT id, created_at FROM definitions ORDER BY name, id;

-- name: run_for_retry
SELECT id, definition_id, plan, params, status FROM runs
WHERE instance_id = ?1 AND id = ?2;

-- name: run_status_of_instance
SELECT status FROM runs WHERE instance_id = ?1 AND id = ?2;

-- A run's status, as it is now (the transaction holds the file).
-- name: run_lock
SELECT status FROM runs WHERE id = ?1;

-- name: run_latest_for_retry
SELECT id, definition_id, plan, params, status FROM runs
WHERE instance_id = ?1 ORDER BY id DESC LIMIT 1;

-- name: run_latest_of_plan
SELECT id, uid, plan, status, trigger, reason, retry_of, created_at,
    started_at, finished_at, message, deadline_at,
    (SELECT version FROM definitions WHERE id = runs.definition_id)
FROM runs WHERE instance_id = ?1 AND plan = ?2
ORDER BY id DESC LIMIT 1;

-- name: run_of_instance
SELECT id, uid, plan, status, trigger, reason, retry_of, created_at,
    started_at, finished_at, message, deadline_at,
    (SELECT version FROM definitions WHERE id = runs.definition_id)
FROM runs WHERE instance_id = ?1 AND id = ?2;

-- name: run_queued_ids
SELECT id FROM runs WHERE instance_id = ?1 AND status = 'QUEUED' ORDER BY id;

-- name: history
SELECT id, uid, plan, status, trigger, reason, retry_of, created_at,
    started_at, finished_at, message, deadline_at,
    (SELECT version FROM definitions WHERE id = runs.definition_id)
FROM runs WHERE instance_id = ?1 AND id < ?2
ORDER BY id DESC LIMIT ?3;

-- name: history_plan
SELECT id, uid, plan, status, trigger, reason, retry_of, created_at,
    started_at, finished_at, message, deadline_at,
    (SELECT version FROM definitions WHERE id = runs.definition_id)
FROM runs WHERE instance_id = ?1 AND plan = ?4 AND id < ?2
ORDER BY id DESC LIMIT ?3;

-- name: view_phases
SELECT id, name, strategy, status, started_at, finished_at, message
FROM phases WHERE run_id = ?1 ORDER BY idx;

-- name: view_steps
SELECT ph.idx, s.name, s.status, s.attempt, s.max_attempts,
    s.next_attempt_at, s.started_at, s.finished_at, s.message, s.id,
    s.deadline_at,
    (SELECT o.outputs FROM task_outputs AS o
     WHERE o.step_id = s.id AND o.attempt = 0) AS outputs
FROM steps AS s JOIN phases AS ph ON ph.id = s.phase_id
WHERE s.run_id = ?1
ORDER BY ph.idx, s.idx;

-- name: lease_get
SELECT host, pid, token, acquired_at, heartbeat_at FROM engine_lease
WHERE id = 1;

-- name: lease_put
INSERT INTO engine_lease (id, owner, host, pid, token, acquired_at,
                          heartbeat_at)
VALUES (1, ?1, ?2, ?3, ?4, ?5, ?5)
ON CONFLICT (id) DO UPDATE SET owner = excluded.owner, host = excluded.host,
    pid = excluded.pid, token = excluded.token,
    acquired_at = excluded.acquired_at, heartbeat_at = excluded.heartbeat_at;

-- name: lease_token
SELECT token FROM engine_lease WHERE id = 1;

-- name: lease_beat
UPDATE engine_lease SET heartbeat_at = ?2 WHERE id = 1 AND token = ?1;

-- name: lease_drop
DELETE FROM engine_lease WHERE id = 1 AND token = ?1;

-- The engine's active runs.  ?1 (?2 for active_run_by_id) is the engine's
-- id among several on PostgreSQL, which reads only the runs it holds; the
-- one engine of a SQLite database holds every run, and the test of ?1 is
-- always true (it keeps the parameters the same on both backends).
-- name: active_runs
SELECT r.id, r.instance_id, i.name, r.plan, r.status, r.definition_id,
    r.params, r.deadline_at, r.uid, r.event_count
FROM runs AS r JOIN instances AS i ON i.id = r.instance_id
WHERE (r.status = 'PENDING' OR r.status = 'IN_PROGRESS'
       OR r.status = 'PAUSED') AND (?1 IS NULL OR ?1 IS NOT NULL);

-- name: active_phases
SELECT ph.run_id, ph.id, ph.idx, ph.name, ph.strategy, ph.status
FROM runs AS r JOIN phases AS ph ON ph.run_id = r.id
WHERE (r.status = 'PENDING' OR r.status = 'IN_PROGRESS'
       OR r.status = 'PAUSED') AND (?1 IS NULL OR ?1 IS NOT NULL);

-- Each step names its phase by id: the phase's index comes from the
-- phases read just before (store/active.c), not from a lookup per step.
-- name: active_steps
SELECT s.run_id, s.phase_id, s.id, s.idx, s.name, s.status, s.attempt,
    s.max_attempts, s.next_attempt_at, s.deadline_at, s.task_index, s.message
FROM runs AS r JOIN steps AS s ON s.run_id = r.id
WHERE (r.status = 'PENDING' OR r.status = 'IN_PROGRESS'
       OR r.status = 'PAUSED') AND (?1 IS NULL OR ?1 IS NOT NULL);

-- name: step_set_task
UPDATE steps SET task_index = ?2 WHERE id = ?1 AND status = 'IN_PROGRESS';

-- name: runs_open_any
SELECT EXISTS (SELECT 1 FROM runs WHERE status = 'QUEUED')
    OR EXISTS (SELECT 1 FROM runs
               WHERE status = 'PENDING' OR status = 'IN_PROGRESS'
                  OR status = 'PAUSED');

-- name: runs_open_counts
SELECT (SELECT count(*) FROM runs WHERE status = 'QUEUED'),
       (SELECT count(*) FROM runs
        WHERE (status = 'PENDING' OR status = 'IN_PROGRESS'
               OR status = 'PAUSED'));

-- The event log by number (events.c, feed.c): every event after the
-- reader's last (?1) and below the horizon (?3), which events_horizon gives
-- before the read.  One writer at a time numbers the events in commit
-- order here, so nothing is held back: the horizon is the largest number.
-- name: events_horizon
SELECT 9223372036854775807 + 0 * ?1;

-- name: events_all
SELECT e.seq, e.at, i.name, e.run_id, ph.name, s.name, e.entity,
    e.from_status, e.to_status, e.attempt, e.message, e.actor, e.data,
    r.definition_id
FROM events AS e
LEFT JOIN instances AS i ON i.id = e.instance_id
LEFT JOIN runs AS r ON r.id = e.run_id
LEFT JOIN phases AS ph ON ph.id = e.phase_id
LEFT JOIN steps AS s ON s.id = e.step_id
WHERE e.seq > ?1 AND e.seq < ?3
ORDER BY e.seq LIMIT ?2;

-- name: events_instance
SELECT e.seq, e.at, i.name, e.run_id, ph.name, s.name, e.entity,
    e.from_status, e.to_status, e.attempt, e.message, e.actor, e.data,
    r.definition_id
FROM events AS e
LEFT JOIN instances AS i ON i.id = e.instance_id
LEFT JOIN runs AS r ON r.id = e.run_id
LEFT JOIN phases AS ph ON ph.id = e.phase_id
LEFT JOIN steps AS s ON s.id = e.step_id
WHERE e.instance_id = ?4 AND e.seq > ?1 AND e.seq < ?3
ORDER BY e.seq LIMIT ?2;

-- name: events_run
SELECT e.seq, e.at, i.name, e.run_id, ph.name, s.name, e.entity,
    e.from_status, e.to_status, e.attempt, e.message, e.actor, e.data,
    r.definition_id
FROM events AS e
LEFT JOIN instances AS i ON i.id = e.instance_id
LEFT JOIN runs AS r ON r.id = e.run_id
LEFT JOIN phases AS ph ON ph.id = e.phase_id
LEFT JOIN steps AS s ON s.id = e.step_id
WHERE e.run_id = ?4 AND e.seq > ?1 AND e.seq < ?3
ORDER BY e.seq LIMIT ?2;

-- Where --tail starts: the seq before the last ?2 events after ?1 and below
-- the horizon ?3 (no row when there are fewer), found backwards along the
-- same index.
-- name: events_all_tail
SELECT seq - 1 FROM events WHERE seq > ?1 AND seq < ?3
ORDER BY seq DESC LIMIT 1 OFFSET ?2 - 1;

-- name: events_instance_tail
SELECT seq - 1 FROM events WHERE instance_id = ?4 AND seq > ?1 AND seq < ?3
ORDER BY seq DESC LIMIT 1 OFFSET ?2 - 1;

-- name: events_run_tail
SELECT seq - 1 FROM events WHERE run_id = ?4 AND seq > ?1 AND seq < ?3
ORDER BY seq DESC LIMIT 1 OFFSET ?2 - 1;

-- name: run_instance
SELECT instance_id FROM runs WHERE id = ?1;

-- name: run_by_id
SELECT id, uid, plan, status, trigger, reason, retry_of, created_at,
    started_at, finished_at, message, deadline_at,
    (SELECT version FROM definitions WHERE id = runs.definition_id)
FROM runs WHERE id = ?1;

-- The engine's clock re-anchored to a wall clock that jumped (ident.c's
-- neighbour, store/clockshift.c): the deadlines and retry times of active
-- runs move with it, so what was due in a minute is still due in a minute.
-- replay.c applies the same shift to the same rows.
-- name: clock_shift_runs
UPDATE runs SET deadline_at = deadline_at + ?1
WHERE deadline_at IS NOT NULL
  AND (status = 'PENDING' OR status = 'IN_PROGRESS' OR status = 'PAUSED');

-- name: clock_shift_retries
UPDATE steps SET next_attempt_at = next_attempt_at + ?1
WHERE status = 'ERROR' AND next_attempt_at IS NOT NULL
  AND run_id IN (SELECT id FROM runs WHERE status = 'PENDING'
                 OR status = 'IN_PROGRESS' OR status = 'PAUSED');

-- name: clock_shift_timeouts
UPDATE steps SET deadline_at = deadline_at + ?1
WHERE status = 'IN_PROGRESS' AND deadline_at IS NOT NULL
  AND run_id IN (SELECT id FROM runs WHERE status = 'PENDING'
                 OR status = 'IN_PROGRESS' OR status = 'PAUSED');

-- name: clock_shift_instances
SELECT DISTINCT instance_id FROM runs
WHERE status = 'PENDING' OR status = 'IN_PROGRESS' OR status = 'PAUSED';

-- name: run_params
SELECT params FROM runs WHERE id = ?1;

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
FROM attempts AS a WHERE a.step_id = ?1 ORDER BY a.number;

-- name: replay_all
SELECT seq, at, instance_id, run_id, phase_id, step_id, entity,
    from_status, to_status, attempt, message, data
FROM events WHERE seq <= ?1 AND at <= ?2 ORDER BY seq;

-- name: replay_instance
SELECT seq, at, instance_id, run_id, phase_id, step_id, entity,
    from_status, to_status, attempt, message, data
FROM events WHERE instance_id = ?3 AND seq <= ?1 AND at <= ?2 ORDER BY seq;

-- name: instance_ids
SELECT id, name FROM instances ORDER BY name;

-- name: run_ids
SELECT id FROM runs ORDER BY id;

-- name: gc_candidates
SELECT r.id, i.name, r.plan, r.status, r.finished_at, r.instance_id
FROM runs AS r JOIN instances AS i ON i.id = r.instance_id
WHERE r.status IN ('COMPLETE', 'FATAL_ERROR', 'CANCELLED')
  AND r.id > ?3
  AND (?1 IS NULL OR r.finished_at < ?1)
  AND (SELECT count(*) FROM runs AS n
       WHERE n.instance_id = r.instance_id AND n.plan = r.plan
         AND n.id > r.id) >= ?2
ORDER BY r.id LIMIT ?4;

-- name: gc_delete_run
DELETE FROM runs
WHERE id = ?1 AND status IN ('COMPLETE', 'FATAL_ERROR', 'CANCELLED');

-- Export and import of one instance (bundle.c, bundle_import.c).  Export
-- reads every column as stored; import inserts rows in the status their
-- creation event names and replays the status changes through the guards.

-- name: bundle_instance
SELECT i.id, i.name, i.params, i.last_applied, i.deleting, i.created_at,
    i.updated_at, d.name, d.version
FROM instances AS i JOIN definitions AS d ON d.id = i.definition_id
WHERE i.id = ?1;

-- name: bundle_definitions
SELECT id, name, version, body, created_at FROM definitions
WHERE id = (SELECT definition_id FROM instances WHERE id = ?1)
   OR id IN (SELECT definition_id FROM runs WHERE instance_id = ?1)
   OR (name, version) IN (
        SELECT json_extract(data, '$.definition.name'),
               json_extract(data, '$.definition.version')
        FROM events WHERE instance_id = ?1 AND json_valid(data))
ORDER BY id;

-- name: def_secret_params
SELECT json_extract(p.value, '$.name')
FROM definitions d, json_each(d.body, '$.parameters') p
WHERE d.id = ?1 AND json_valid(d.body)
  AND json_extract(p.value, '$.secret') = 1;

-- name: bundle_runs
SELECT id, uid, instance_id, definition_id, plan, status, trigger, reason,
    retry_of, params, created_at, started_at, finished_at, deadline_at,
    message
FROM runs WHERE instance_id = ?1 ORDER BY id;

-- name: bundle_phases
SELECT ph.id, ph.run_id, ph.idx, ph.name, ph.strategy, ph.status,
    ph.started_at, ph.finished_at, ph.message
FROM phases AS ph JOIN runs AS r ON r.id = ph.run_id
WHERE r.instance_id = ?1 ORDER BY ph.id;

-- name: bundle_steps
SELECT s.id, s.run_id, s.phase_id, s.idx, s.name, s.status, s.attempt,
    s.max_attempts, s.task_index, s.next_attempt_at, s.deadline_at,
    s.started_at, s.finished_at, s.message,
    (SELECT o.outputs FROM task_outputs AS o
     WHERE o.step_id = s.id AND o.attempt = 0) AS outputs
FROM steps AS s JOIN runs AS r ON r.id = s.run_id
WHERE r.instance_id = ?1 ORDER BY s.id;

-- name: bundle_attempts
SELECT a.id, a.step_id, a.number, a.status, a.started_at, a.finished_at,
    a.exit_code, a.message, a.output,
    (SELECT o.outputs FROM task_outputs AS o
     WHERE o.step_id = a.step_id AND o.attempt = a.number) AS outputs
    , (SELECT b.bytes FROM attempt_output_bytes AS b
     WHERE b.step_id = a.step_id AND b.attempt = a.number) AS output_bytes
FROM attempts AS a JOIN steps AS s ON s.id = a.step_id
JOIN runs AS r ON r.id = s.run_id
WHERE r.instance_id = ?1 ORDER BY a.id;

-- name: bundle_events
SELECT seq, at, instance_id, run_id, phase_id, step_id, entity, from_status,
    to_status, attempt, message, actor, data
FROM events WHERE instance_id = ?1 ORDER BY seq;

-- The same sections for one run of the instance (?2), as `gc --archive`
-- writes it: the run's rows and events, the instance's own events (which
-- replay reads for its definition over time; gc never removes them), and
-- the definitions all of these name.
-- name: archive_definitions
SELECT id, name, version, body, created_at FROM definitions
WHERE id = (SELECT definition_id FROM instances WHERE id = ?1)
   OR id = (SELECT definition_id FROM runs WHERE id = ?2)
   OR (name, version) IN (
        SELECT json_extract(data, '$.definition.name'),
               json_extract(data, '$.definition.version')
        FROM events
        WHERE (run_id = ?2 OR (run_id IS NULL AND instance_id = ?1))
          AND json_valid(data))
ORDER BY id;

-- name: archive_runs
SELECT id, uid, instance_id, definition_id, plan, status, trigger, reason,
    retry_of, params, created_at, started_at, finished_at, deadline_at,
    message
FROM runs WHERE id = ?2 AND instance_id = ?1;

-- name: archive_phases
SELECT id, run_id, idx, name, strategy, status, started_at, finished_at,
    message
FROM phases WHERE run_id = ?2 ORDER BY id;

-- name: archive_steps
SELECT id, run_id, phase_id, idx, name, status, attempt, max_attempts,
    task_index, next_attempt_at, deadline_at, started_at, finished_at,
    message,
    (SELECT o.outputs FROM task_outputs AS o
     WHERE o.step_id = steps.id AND o.attempt = 0) AS outputs
FROM steps WHERE run_id = ?2 ORDER BY id;

-- name: archive_attempts
SELECT a.id, a.step_id, a.number, a.status, a.started_at, a.finished_at,
    a.exit_code, a.message, a.output,
    (SELECT o.outputs FROM task_outputs AS o
     WHERE o.step_id = a.step_id AND o.attempt = a.number) AS outputs
    , (SELECT b.bytes FROM attempt_output_bytes AS b
     WHERE b.step_id = a.step_id AND b.attempt = a.number) AS output_bytes
FROM attempts AS a JOIN steps AS s ON s.id = a.step_id
WHERE s.run_id = ?2 ORDER BY a.id;

-- name: archive_events
SELECT seq, at, instance_id, run_id, phase_id, step_id, entity, from_status,
    to_status, attempt, message, actor, data
FROM events WHERE run_id = ?2
UNION ALL
SELECT seq, at, instance_id, run_id, phase_id, step_id, entity, from_status,
    to_status, attempt, message, actor, data
FROM events WHERE run_id IS NULL AND instance_id = ?1
ORDER BY seq;

-- name: bundle_def_find
SELECT id, body FROM definitions WHERE name = ?1 AND version = ?2;

-- name: bundle_def_insert
INSERT INTO definitions (name, version, body, created_at)
VALUES (?1, ?2, ?3, ?4)
RETURNING id;

-- name: bundle_instance_insert
INSERT INTO instances (name, definition_id, params, last_applied, deleting,
                       created_at, updated_at)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
RETURNING id;

-- name: bundle_run_insert
INSERT INTO runs (uid, plan, trigger, reason, params, created_at, started_at,
                  finished_at, deadline_at, message, instance_id,
                  definition_id, status)
VALUES (CASE WHEN EXISTS (SELECT 1 FROM runs WHERE uid = ?1)
             THEN lower(hex(randomblob(16))) ELSE ?1 END,
        ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
RETURNING id, uid;

-- name: bundle_run_status
UPDATE runs SET status = ?3 WHERE id = ?1 AND status = ?2;

-- name: bundle_run_retry_of
UPDATE runs SET retry_of = ?2 WHERE id = ?1;

-- name: bundle_phase_insert
INSERT INTO phases (idx, name, strategy, started_at, finished_at, message,
                    run_id, status)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)
RETURNING id;

-- name: bundle_phase_status
UPDATE phases SET status = ?3 WHERE id = ?1 AND status = ?2;

-- name: bundle_step_insert
INSERT INTO steps (idx, name, attempt, max_attempts, task_index,
                   next_attempt_at, deadline_at, started_at, finished_at,
                   message, run_id, phase_id, status)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)
RETURNING id;

-- name: bundle_step_status
UPDATE steps SET status = ?3 WHERE id = ?1 AND status = ?2;

-- name: bundle_attempt_insert
INSERT INTO attempts (number, status, started_at, finished_at, exit_code,
                      message, output, step_id)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8);

-- name: bundle_event_insert
INSERT INTO events (at, entity, from_status, to_status, attempt, message,
                    actor, data, instance_id, run_id, phase_id, step_id)
VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12);

-- The first run whose event counter (0002) disagrees with its events.
-- name: verify_integrity
-- One row "ok", or rows naming what is wrong.
PRAGMA integrity_check;

-- name: verify_foreign_keys
-- No row, or a row per violation.
PRAGMA foreign_key_check;

-- name: verify_event_count
SELECT r.id, r.event_count, count(e.seq) AS n
FROM runs AS r LEFT JOIN events AS e ON e.run_id = r.id
GROUP BY r.id HAVING r.event_count != n
ORDER BY r.id LIMIT 1;

-- An imported instance's runs count the events imported with them.
-- name: bundle_count_events
UPDATE runs SET event_count = (SELECT count(*) FROM events
                               WHERE events.run_id = runs.id)
WHERE instance_id = ?1;

-- The engine's cache reads a run promoted from the queue alone, with the
-- columns of active_runs, active_phases and active_steps (store/active.c).

-- name: active_run_by_id
SELECT r.id, r.instance_id, i.name, r.plan, r.status, r.definition_id,
    r.params, r.deadline_at, r.uid, r.event_count
FROM runs AS r JOIN instances AS i ON i.id = r.instance_id
WHERE r.id = ?1 AND (r.status = 'PENDING' OR r.status = 'IN_PROGRESS'
                     OR r.status = 'PAUSED')
  AND (?2 IS NULL OR ?2 IS NOT NULL);

-- name: active_phases_of_run
SELECT ph.run_id, ph.id, ph.idx, ph.name, ph.strategy, ph.status
FROM phases AS ph WHERE ph.run_id = ?1
ORDER BY ph.idx;

-- name: active_steps_of_run
SELECT s.run_id, s.phase_id, s.id, s.idx, s.name, s.status, s.attempt,
    s.max_attempts, s.next_attempt_at, s.deadline_at, s.task_index, s.message
FROM steps AS s WHERE s.run_id = ?1;

-- The same for the runs of ?1 (a JSON array of run ids) that are active,
-- all at once (promotions; ?2, the engine holding them, is PostgreSQL's).
-- name: active_runs_by_ids
SELECT r.id, r.instance_id, i.name, r.plan, r.status, r.definition_id,
    r.params, r.deadline_at, r.uid, r.event_count
FROM runs AS r JOIN instances AS i ON i.id = r.instance_id
WHERE r.id IN (SELECT value FROM json_each(?1))
  AND (r.status = 'PENDING' OR r.status = 'IN_PROGRESS'
       OR r.status = 'PAUSED')
  AND (?2 IS NULL OR ?2 IS NOT NULL);

-- name: active_phases_of_runs
SELECT ph.run_id, ph.id, ph.idx, ph.name, ph.strategy, ph.status
FROM phases AS ph JOIN runs AS r ON r.id = ph.run_id
WHERE r.id IN (SELECT value FROM json_each(?1))
  AND (r.status = 'PENDING' OR r.status = 'IN_PROGRESS'
       OR r.status = 'PAUSED')
  AND (?2 IS NULL OR ?2 IS NOT NULL);

-- name: active_steps_of_runs
SELECT s.run_id, s.phase_id, s.id, s.idx, s.name, s.status, s.attempt,
    s.max_attempts, s.next_attempt_at, s.deadline_at, s.task_index, s.message
FROM steps AS s JOIN runs AS r ON r.id = s.run_id
WHERE r.id IN (SELECT value FROM json_each(?1))
  AND (r.status = 'PENDING' OR r.status = 'IN_PROGRESS'
       OR r.status = 'PAUSED')
  AND (?2 IS NULL OR ?2 IS NOT NULL);

-- Names a mistyped one is compared with, for "did you mean" (hints.c).
-- name: hint_instance_names
SELECT name FROM instances ORDER BY name;

-- name: hint_definition_names
SELECT DISTINCT name FROM definitions ORDER BY name;

-- name: hint_definition_versions
SELECT version FROM definitions WHERE name = ?1 ORDER BY id;

-- name: hint_plan_has_runs
SELECT 1 FROM runs WHERE instance_id = ?1 AND plan = ?2 LIMIT 1;

-- Whether an attempt of this database ended stopped rather than by its
-- task: cancelled, or cut short by an engine stopping or a timeout.  1, 0,
-- or NULL when the run, step or attempt is not this database's (the
-- engine's first pass, engine/orphans.c).
-- name: attempt_stopped
SELECT max(a.status = 'CANCELLED' OR a.message LIKE 'interrupted: engine stopped%'
    OR a.message LIKE 'timed out after %')
FROM runs AS r JOIN steps AS s ON s.run_id = r.id
JOIN attempts AS a ON a.step_id = s.id AND a.number = ?4
WHERE r.id = ?1 AND r.uid = ?2 AND s.name = ?3 AND a.finished_at IS NOT NULL;

-- Which of the tries in ?1 (a JSON array of [run id, run uid, step name,
-- attempt]) are this database's and have ended: their places in it,
-- from 1 (the private output directory of such an attempt goes,
-- engine/outfile.c).  One statement for all of them.
-- name: attempts_ended
SELECT d.key + 1 FROM json_each(?1) AS d
JOIN runs AS r ON r.id = json_extract(d.value, '$[0]')
    AND r.uid = json_extract(d.value, '$[1]')
JOIN steps AS s ON s.run_id = r.id AND s.name = json_extract(d.value, '$[2]')
JOIN attempts AS a ON a.step_id = s.id
    AND a.number = json_extract(d.value, '$[3]')
WHERE a.finished_at IS NOT NULL;

-- The events of an engine pass, written before its commit (journal.c): one
-- row, or sixteen at once, with every column bound (instance_id too).
-- name: event_insert_values
INSERT INTO events (at, instance_id, run_id, phase_id, step_id, entity,
                    from_status, to_status, attempt, message, actor, data)
VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- name: event_insert_batch
INSERT INTO events (at, instance_id, run_id, phase_id, step_id, entity,
                    from_status, to_status, attempt, message, actor, data)
VALUES
    (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
    (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
    (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
    (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
    (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
    (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
    (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
    (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
    (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
    (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
    (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
    (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
    (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
    (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
    (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?),
    (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?);

-- name: run_event_count
SELECT event_count FROM runs WHERE id = ?1;

-- name: run_set_event_count
UPDATE runs SET event_count = ?2 WHERE id = ?1;

-- The event log as a change feed (feed.c): where a reader stands (the
-- newest event; ?1, the reader's cursor, serves PostgreSQL's horizon), and
-- what has events after a given number, with how many, so that a gap
-- (events removed by gc or with their instance) shows.
-- name: feed_last
SELECT coalesce(max(seq), 0) + 0 * ?1 FROM events;
-- (No fleet here: the same.)
-- name: feed_last_fleet
SELECT coalesce(max(seq), 0) + 0 * ?1 FROM events;

-- Where a pass moves its cursor after its own events (inside its
-- transaction): how many events after the cursor ?1 are its own, and
-- the last of them.  Here, one writer at a time, every one is (and no
-- transaction id is told: NULL).
-- name: feed_mark
SELECT coalesce(max(seq), ?1) - ?1, coalesce(max(seq), ?1), NULL FROM events
 WHERE seq > ?1;

-- Whether events after ?1 were removed, or NULL: count the numbers (here
-- they have no hole but those of removed events).
-- name: feed_removed
SELECT CASE WHEN ?1 IS NULL THEN 0 END;

-- Every event after ?1 up to ?2, oldest first: whose it is (the runs and
-- instances to read again; how many there are shows a gap) and, for a
-- status change, the names a log line of it needs (the engine's log and
-- metrics of what others did).  Rows gone since (an instance deleted)
-- leave their names NULL; so is the writer's transaction id here, and
-- the reader's own transactions (?3) are PostgreSQL's.
-- name: feed_events
SELECT e.entity, e.from_status, e.to_status, e.run_id, e.attempt, e.actor,
       e.message, i.name, r.plan, ph.name, s.name, e.instance_id, NULL
  FROM events AS e
  LEFT JOIN instances AS i ON i.id = e.instance_id
  LEFT JOIN runs AS r ON r.id = e.run_id
  LEFT JOIN phases AS ph ON ph.id = e.phase_id
  LEFT JOIN steps AS s ON s.id = e.step_id
 WHERE e.seq > ?1 AND e.seq <= ?2 AND (?3 IS NULL OR 1)
 ORDER BY e.seq;

-- The same for an engine of a fleet, but for every engine's events, and
-- whether it holds the event's run (PostgreSQL's; SQLite has no fleet).
-- name: feed_events_fleet
SELECT e.entity, e.from_status, e.to_status, e.run_id, e.attempt, e.actor,
       e.message, i.name, r.plan, ph.name, s.name, e.instance_id, NULL, 1
  FROM events AS e
  LEFT JOIN instances AS i ON i.id = e.instance_id
  LEFT JOIN runs AS r ON r.id = e.run_id
  LEFT JOIN phases AS ph ON ph.id = e.phase_id
  LEFT JOIN steps AS s ON s.id = e.step_id
 WHERE e.seq > ?1 AND e.seq <= ?2 AND e.actor <> 'engine'
   AND (?3 IS NULL OR 1) AND (?4 IS NULL OR 1)
 ORDER BY e.seq;

-- `planctl logs`: the run asked for, or the instance's active run, else
-- its latest that started, else its latest.
-- name: logs_run
SELECT id, plan, status FROM runs WHERE instance_id = ?1 AND id = ?2;

-- name: logs_default_run
SELECT id, plan, status FROM runs WHERE instance_id = ?1
ORDER BY status = 'PENDING' OR status = 'IN_PROGRESS' OR status = 'PAUSED'
    DESC, started_at IS NOT NULL DESC, id DESC
LIMIT 1;

-- name: logs_steps
SELECT ph.name, s.name, s.id, s.status
FROM steps AS s JOIN phases AS ph ON ph.id = s.phase_id
WHERE s.run_id = ?1 ORDER BY ph.idx, s.idx;

-- name: logs_attempts
SELECT a.number, a.status, a.started_at, a.finished_at, a.exit_code,
    a.message, a.output, b.bytes
FROM attempts AS a LEFT JOIN attempt_output_bytes AS b
    ON b.step_id = a.step_id AND b.attempt = a.number
WHERE a.step_id = ?1 ORDER BY a.number;

-- ---- engines that share the database (store/fleet.c) ----
-- Times are the database's clock, in milliseconds: never a host's.  On
-- SQLite one engine runs under engine_lease and these are not used.

-- name: fleet_join
INSERT INTO engines (name, host, pid, pid_start, started_at, heartbeat_at,
    ttl_ms, capacity)
VALUES (?1, ?2, ?3, ?4, CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER), ?5, ?6)
RETURNING id;

-- name: fleet_beat
UPDATE engines SET heartbeat_at = CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) WHERE id = ?1
RETURNING heartbeat_at;

-- (The second column marks an engine's transaction on PostgreSQL.)
-- name: fleet_fence
SELECT id, NULL FROM engines WHERE id = ?1;

-- The engines that may be dead: heartbeat older than their TTL, or on
-- this host (whose process fleet.c looks for).  The last column is now.
-- name: fleet_suspects
SELECT id, name, host, pid, pid_start, heartbeat_at, ttl_ms, n.now
FROM engines, (SELECT CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) AS now) AS n
WHERE id <> ?1 AND (heartbeat_at < n.now - ttl_ms OR host = ?2)
ORDER BY id;

-- Active runs an engine holds, by id.
-- name: fleet_held
SELECT r.id FROM claims AS c JOIN runs AS r ON r.id = c.run_id
WHERE c.engine_id = ?1 AND r.status IN ('PENDING', 'IN_PROGRESS', 'PAUSED')
ORDER BY r.id;

-- Its runs go back to nobody (claims.engine_id ON DELETE SET NULL).
-- name: fleet_drop
DELETE FROM engines WHERE id = ?1;

-- The same, only while its heartbeat is older than its TTL.
-- name: fleet_drop_stale
DELETE FROM engines
WHERE id = ?1
  AND heartbeat_at < CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) - ttl_ms;

-- Up to ?2 active runs that nobody holds, oldest first, for engine ?1.
-- Claims are written under the write lock as every write is, so two
-- engines never claim one run: no row lock is needed to tell them apart.
-- name: fleet_claim
INSERT INTO claims (run_id, engine_id, token)
SELECT r.id, ?1, 1 FROM runs AS r LEFT JOIN claims AS x ON x.run_id = r.id
WHERE r.status IN ('PENDING', 'IN_PROGRESS', 'PAUSED') AND x.engine_id IS NULL
ORDER BY r.id LIMIT ?2
ON CONFLICT (run_id) DO UPDATE SET engine_id = excluded.engine_id,
    token = claims.token + 1
RETURNING run_id, token;

-- name: fleet_claim_after
INSERT INTO claims (run_id, engine_id, token)
SELECT r.id, ?1, 1 FROM runs AS r
WHERE r.status IN ('PENDING', 'IN_PROGRESS', 'PAUSED') AND r.id > ?3
  AND (SELECT x.engine_id FROM claims AS x WHERE x.run_id = r.id) IS NULL
ORDER BY r.id LIMIT ?2
ON CONFLICT (run_id) DO UPDATE SET engine_id = excluded.engine_id,
    token = claims.token + 1
RETURNING run_id, token;

-- Run ?2 held by engine ?1 (promoted from the queue by the engine
-- that ended the run before it).
-- name: fleet_hold
INSERT INTO claims (run_id, engine_id, token) VALUES (?2, ?1, 1)
ON CONFLICT (run_id) DO UPDATE SET engine_id = excluded.engine_id,
    token = claims.token + 1;

-- name: fleet_release
UPDATE claims SET engine_id = NULL WHERE run_id = ?1 AND engine_id = ?2;

-- For each engine's fair share: the capacity of each live engine (its
-- heartbeat younger than its TTL; engine ?1, the one asking, always),
-- each row with the active runs (all of them, and those nobody holds).
-- name: fleet_share
SELECT e.capacity, s.wanting, s.unheld
FROM engines AS e,
    (SELECT (SELECT count(*) FROM runs
             WHERE status IN ('PENDING', 'IN_PROGRESS', 'PAUSED')) AS wanting,
        (SELECT count(*) FROM runs AS r LEFT JOIN claims AS c ON c.run_id = r.id
         WHERE r.status IN ('PENDING', 'IN_PROGRESS', 'PAUSED')
           AND c.engine_id IS NULL) AS unheld) AS s,
    (SELECT CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) AS now) AS n
WHERE e.id = ?1 OR e.heartbeat_at > n.now - e.ttl_ms
ORDER BY e.id;

-- name: fleet_list
SELECT e.id, e.name, e.host, e.pid, e.started_at, e.heartbeat_at, e.ttl_ms,
    e.capacity, n.now,
    (SELECT count(*) FROM claims AS c JOIN runs AS r ON r.id = c.run_id
     WHERE c.engine_id = e.id AND r.status IN ('PENDING', 'IN_PROGRESS', 'PAUSED')),
    e.pid_start
FROM engines AS e, (SELECT CAST((julianday('now') - 2440587.5) * 86400000 AS INTEGER) AS now) AS n
ORDER BY e.id;

-- The engine that holds run ?1.
-- name: run_holder
SELECT c.engine_id FROM claims AS c
WHERE c.run_id = ?1 AND c.engine_id IS NOT NULL;

-- Why an active run waits (run_waits, 0007): set when the engine that
-- holds it sees it start waiting or wait for something else, removed
-- when it stops, read by status.  The engine writes only changes.
-- name: wait_put
INSERT INTO run_waits (run_id, cause, kind, concurrency, since)
VALUES (?1, ?2, ?3, ?4, ?5)
ON CONFLICT (run_id) DO UPDATE SET cause = excluded.cause,
    kind = excluded.kind, concurrency = excluded.concurrency,
    since = excluded.since;

-- name: wait_delete
DELETE FROM run_waits WHERE run_id = ?1;

-- What an engine that starts (or reads its runs anew) knows nothing of:
-- every row, where one engine runs (SQLite; ?1 unused), else those of the
-- runs engine ?1 holds.
-- name: waits_delete_held
DELETE FROM run_waits WHERE ?1 IS NULL OR ?1 IS NOT NULL;

-- name: wait_of_run
SELECT w.cause, w.kind, w.concurrency, w.since FROM run_waits AS w
JOIN runs AS r ON r.id = w.run_id
WHERE w.run_id = ?1
  AND (r.status = 'PENDING' OR r.status = 'IN_PROGRESS'
       OR r.status = 'PAUSED');

-- As PostgreSQL's (waits.c); on SQLite, where one engine runs and
-- `engines` stays empty, never a row.
-- name: wait_unheld
SELECT count(*), sum(e.capacity) FROM engines AS e
WHERE EXISTS (SELECT 1 FROM runs AS r WHERE r.id = ?1
    AND (r.status = 'PENDING' OR r.status = 'IN_PROGRESS'
         OR r.status = 'PAUSED')
    AND NOT EXISTS (SELECT 1 FROM claims AS c
                    WHERE c.run_id = r.id AND c.engine_id IS NOT NULL))
HAVING count(*) > 0
   AND min(CASE WHEN e.capacity > 0 AND e.capacity <=
           (SELECT count(*) FROM claims AS c JOIN runs AS h ON h.id = c.run_id
            WHERE c.engine_id = e.id
              AND (h.status = 'PENDING' OR h.status = 'IN_PROGRESS'
                   OR h.status = 'PAUSED'))
           THEN 1 ELSE 0 END) = 1;
