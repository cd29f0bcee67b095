-- schema.sql - the full current planctl schema, for reading and for the drift
-- test (tests/unit/test_schema.c builds a database from migrations/ and
-- checks it equals this file).  Keep it in step with every new migration.
--
-- Times are integer milliseconds since the Unix epoch, UTC.  Statuses are
-- the exact strings of DESIGN §3.  The `transitions` table lists every legal
-- (entity, from, to); triggers refuse any other status change, so even a
-- hand-written UPDATE cannot corrupt a run.

-- 'PLCT': how planctl recognises its own databases.
PRAGMA application_id = 1347175252;

CREATE TABLE transitions (
    entity      TEXT NOT NULL CHECK (entity IN ('run', 'phase', 'step')),
    from_status TEXT, -- NULL: the row is being created
    to_status   TEXT NOT NULL,
    UNIQUE (entity, from_status, to_status)
);

INSERT INTO transitions (entity, from_status, to_status) VALUES
    ('run', NULL, 'QUEUED'),
    ('run', NULL, 'PENDING'),
    ('run', 'QUEUED', 'PENDING'),
    ('run', 'QUEUED', 'CANCELLED'),
    ('run', 'PENDING', 'IN_PROGRESS'),
    ('run', 'PENDING', 'CANCELLED'),
    ('run', 'IN_PROGRESS', 'PAUSED'),
    ('run', 'IN_PROGRESS', 'COMPLETE'),
    ('run', 'IN_PROGRESS', 'FATAL_ERROR'),
    ('run', 'IN_PROGRESS', 'CANCELLED'),
    ('run', 'PAUSED', 'IN_PROGRESS'),
    ('run', 'PAUSED', 'CANCELLED'),
    ('phase', NULL, 'PENDING'),
    ('phase', NULL, 'COMPLETE'),
    ('phase', 'PENDING', 'IN_PROGRESS'),
    ('phase', 'PENDING', 'CANCELLED'),
    ('phase', 'IN_PROGRESS', 'COMPLETE'),
    ('phase', 'IN_PROGRESS', 'FATAL_ERROR'),
    ('phase', 'IN_PROGRESS', 'CANCELLED'),
    ('step', NULL, 'PENDING'),
    ('step', NULL, 'COMPLETE'),
    ('step', 'PENDING', 'IN_PROGRESS'),
    ('step', 'PENDING', 'CANCELLED'),
    ('step', 'IN_PROGRESS', 'COMPLETE'),
    ('step', 'IN_PROGRESS', 'ERROR'),
    ('step', 'IN_PROGRESS', 'FATAL_ERROR'),
    ('step', 'IN_PROGRESS', 'CANCELLED'),
    ('step', 'ERROR', 'IN_PROGRESS'),
    ('step', 'ERROR', 'FATAL_ERROR'),
    ('step', 'ERROR', 'CANCELLED');

-- The table of legal transitions is itself read-only; a later migration
-- that must change it drops and recreates these triggers.
CREATE TRIGGER transitions_readonly_insert BEFORE INSERT ON transitions
BEGIN
    SELECT RAISE(ABORT, 'transitions is read-only');
END;
CREATE TRIGGER transitions_readonly_update BEFORE UPDATE ON transitions
BEGIN
    SELECT RAISE(ABORT, 'transitions is read-only');
END;
CREATE TRIGGER transitions_readonly_delete BEFORE DELETE ON transitions
BEGIN
    SELECT RAISE(ABORT, 'transitions is read-only');
END;

-- A definition version as registered: body is its canonical JSON (sorted
-- keys, compact), so registering the same content twice is recognised.
CREATE TABLE definitions (
    id         INTEGER PRIMARY KEY,
    name       TEXT NOT NULL,
    version    TEXT NOT NULL,
    body       TEXT NOT NULL,
    created_at INTEGER NOT NULL,
    UNIQUE (name, version)
);

-- params holds the values set explicitly (a JSON object of values of each
-- parameter's type; strings for values stored before parameters had types);
-- last_applied the snapshot of the last deploy, update or upgrade run that
-- completed (KUDO's lastAppliedInstanceSpec).
CREATE TABLE instances (
    id            INTEGER PRIMARY KEY,
    name          TEXT NOT NULL UNIQUE,
    definition_id INTEGER NOT NULL REFERENCES definitions (id),
    params        TEXT NOT NULL,
    last_applied  TEXT,
    deleting      INTEGER NOT NULL DEFAULT 0 CHECK (deleting IN (0, 1)),
    created_at    INTEGER NOT NULL,
    updated_at    INTEGER NOT NULL
);

-- One execution of a plan.  AUTOINCREMENT: run ids are never reused, even
-- after gc, so a run id in a bug report always means one run.
-- event_count (0002) counts the run's events, so the warning threshold and
-- the hard limit on events per run read a column instead of counting rows.
CREATE TABLE runs (
    id            INTEGER PRIMARY KEY AUTOINCREMENT,
    uid           TEXT NOT NULL UNIQUE,
    instance_id   INTEGER NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
    definition_id INTEGER NOT NULL REFERENCES definitions (id),
    plan          TEXT NOT NULL,
    status        TEXT NOT NULL,
    trigger       TEXT NOT NULL CHECK (trigger IN ('create', 'set', 'upgrade',
                      'delete', 'manual', 'retry')),
    reason        TEXT,
    retry_of      INTEGER REFERENCES runs (id) ON DELETE SET NULL,
    params        TEXT NOT NULL,
    created_at    INTEGER NOT NULL,
    started_at    INTEGER,
    finished_at   INTEGER,
    deadline_at   INTEGER,
    message       TEXT,
    event_count   INTEGER NOT NULL DEFAULT 0
);

-- One active run per instance, enforced by the store itself.  The active
-- states are an OR rather than an IN list here and in the events CHECK
-- (0003): SQLite checks an IN list of more than two constants by building
-- a temporary b-tree each time, on every status change of a run.
CREATE UNIQUE INDEX runs_one_active ON runs (instance_id)
    WHERE status = 'PENDING' OR status = 'IN_PROGRESS' OR status = 'PAUSED';
-- The newest run per (instance, plan), and history pages, are index seeks.
CREATE INDEX runs_by_plan ON runs (instance_id, plan, id);
CREATE INDEX runs_by_instance ON runs (instance_id, id);
-- The queue, first-in first-out, and the engine's set of open runs.
CREATE INDEX runs_queued ON runs (instance_id, id) WHERE status = 'QUEUED';
CREATE INDEX runs_open ON runs (status)
    WHERE status = 'PENDING' OR status = 'IN_PROGRESS' OR status = 'PAUSED';
CREATE INDEX runs_retry_of ON runs (retry_of) WHERE retry_of IS NOT NULL;

CREATE TABLE phases (
    id          INTEGER PRIMARY KEY,
    run_id      INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx         INTEGER NOT NULL,
    name        TEXT NOT NULL,
    strategy    TEXT NOT NULL CHECK (strategy IN ('serial', 'parallel')),
    status      TEXT NOT NULL,
    started_at  INTEGER,
    finished_at INTEGER,
    message     TEXT,
    UNIQUE (run_id, idx)
);

-- attempt counts the tries started so far; task_index is the task a retry
-- resumes at; deadline_at is the current try's timeout as an absolute time,
-- so it survives a restart.
CREATE TABLE steps (
    id              INTEGER PRIMARY KEY,
    run_id          INTEGER NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    phase_id        INTEGER NOT NULL REFERENCES phases (id) ON DELETE CASCADE,
    idx             INTEGER NOT NULL,
    name            TEXT NOT NULL,
    status          TEXT NOT NULL,
    attempt         INTEGER NOT NULL DEFAULT 0,
    max_attempts    INTEGER NOT NULL CHECK (max_attempts >= 1),
    task_index      INTEGER NOT NULL DEFAULT 0,
    next_attempt_at INTEGER,
    deadline_at     INTEGER,
    started_at      INTEGER,
    finished_at     INTEGER,
    message         TEXT,
    UNIQUE (phase_id, idx)
);
CREATE INDEX steps_by_run ON steps (run_id);

-- One row per try of a step.  status is IN_PROGRESS while it runs, then
-- the status the step left IN_PROGRESS for.
CREATE TABLE attempts (
    id          INTEGER PRIMARY KEY,
    step_id     INTEGER NOT NULL REFERENCES steps (id) ON DELETE CASCADE,
    number      INTEGER NOT NULL CHECK (number >= 1),
    status      TEXT NOT NULL,
    started_at  INTEGER NOT NULL,
    finished_at INTEGER,
    exit_code   INTEGER,
    message     TEXT,
    output      TEXT,
    UNIQUE (step_id, number)
);
-- Never two tries of one step in flight.
CREATE UNIQUE INDEX attempts_one_open ON attempts (step_id)
    WHERE finished_at IS NULL;

-- Task outputs (0004; KUDO's Pipe tasks), JSON text: {"KEY": "value",
-- "SECRET_KEY": {"secret": "value"}}.  attempt is a try's number: what its
-- tasks wrote, whatever its outcome (those of its earlier tasks while it
-- runs); or 0: the step's own, what later tasks of its run see (those of
-- the try that completed it, or carried over by a retry).  Kept apart
-- from steps and attempts so that their rows, rewritten whole by every
-- UPDATE, are no wider for outputs.
CREATE TABLE task_outputs (
    step_id INTEGER NOT NULL REFERENCES steps (id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL CHECK (attempt >= 0),
    outputs TEXT NOT NULL,
    PRIMARY KEY (step_id, attempt)
) WITHOUT ROWID;

-- How many bytes of output a try wrote in all (0005), of which
-- attempts.output keeps the last ones: written with the output, while the
-- try runs and when it ends, only for a try that wrote some.  A table of
-- its own, as task_outputs, so attempts rows are no wider for it.
CREATE TABLE attempt_output_bytes (
    step_id INTEGER NOT NULL REFERENCES steps (id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL CHECK (attempt >= 1),
    bytes   INTEGER NOT NULL CHECK (bytes >= 0),
    PRIMARY KEY (step_id, attempt)
) WITHOUT ROWID;

-- The append-only event log: one row per status change or admin action,
-- written in the same transaction as the change.  phase_id and step_id are
-- plain references: phases and steps only ever go away with their run,
-- which takes its events with it.  data holds JSON details (for a run's
-- creation: its definition, parameter snapshot and layout).
CREATE TABLE events (
    seq         INTEGER PRIMARY KEY AUTOINCREMENT,
    at          INTEGER NOT NULL,
    instance_id INTEGER REFERENCES instances (id) ON DELETE CASCADE,
    run_id      INTEGER REFERENCES runs (id) ON DELETE CASCADE,
    phase_id    INTEGER,
    step_id     INTEGER,
    entity      TEXT NOT NULL CHECK (entity = 'run' OR entity = 'phase'
                    OR entity = 'step' OR entity = 'instance'
                    OR entity = 'engine'),
    from_status TEXT,
    to_status   TEXT,
    attempt     INTEGER,
    message     TEXT,
    actor       TEXT NOT NULL,
    data        TEXT
);
CREATE INDEX events_by_run ON events (run_id, seq);
CREATE INDEX events_by_instance ON events (instance_id, seq);
-- The events no engine wrote, which an engine of a fleet follows
-- (PostgreSQL's; kept here with the same tables and indexes, 0010).
CREATE INDEX events_not_engine ON events (seq) WHERE actor <> 'engine';

CREATE TRIGGER events_append_only BEFORE UPDATE ON events
BEGIN
    SELECT RAISE(ABORT, 'events are append-only');
END;

-- The engine lease: at most one engine per database.  token grows with
-- every acquisition and fences every engine write.
CREATE TABLE engine_lease (
    id           INTEGER PRIMARY KEY CHECK (id = 1),
    owner        TEXT NOT NULL,
    host         TEXT NOT NULL,
    pid          INTEGER NOT NULL,
    token        INTEGER NOT NULL,
    acquired_at  INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL
);

-- The engines that share one database (PostgreSQL; on SQLite one engine
-- runs under engine_lease and these stay empty), and which engine holds
-- each active run with the run's claim token (migrations/0006).
CREATE TABLE engines (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL,
    host         TEXT NOT NULL,
    pid          INTEGER NOT NULL,
    pid_start    INTEGER NOT NULL,
    started_at   INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL,
    ttl_ms       INTEGER NOT NULL CHECK (ttl_ms > 0),
    capacity     INTEGER NOT NULL CHECK (capacity >= 0)
);

-- claims: the engine that holds a run (NULL: nobody; any engine may claim
-- it), and the run's claim token, which grows by one at every claim: the
-- fencing token of the run.  The row of a run stays when it is released
-- or its engine is declared dead (ON DELETE SET NULL), so the token goes
-- on growing.
CREATE TABLE claims (
    run_id    INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    engine_id INTEGER REFERENCES engines (id) ON DELETE SET NULL,
    token     INTEGER NOT NULL CHECK (token >= 1)
);
CREATE INDEX claims_by_engine ON claims (engine_id)
    WHERE engine_id IS NOT NULL;

-- run_waits: why an active run waits, as the engine that holds it saw it
-- last: for an engine with an executor of a task kind (cause 'executor',
-- the kind in kind), or for a free slot of the engine's concurrency
-- (cause 'slot', the limit in concurrency).  Written only when the
-- engine's view of the run changes; shown for active runs only.
CREATE TABLE run_waits (
    run_id      INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    cause       TEXT NOT NULL CHECK (cause = 'executor' OR cause = 'slot'),
    kind        TEXT,
    concurrency INTEGER CHECK (concurrency >= 1),
    since       INTEGER NOT NULL
);

-- Status guards: a new row must start in a status reachable from (new),
-- and every change must be a listed edge.
CREATE TRIGGER runs_status_insert BEFORE INSERT ON runs
WHEN NOT EXISTS (SELECT 1 FROM transitions WHERE entity = 'run'
                 AND from_status IS NULL AND to_status = NEW.status)
BEGIN
    SELECT RAISE(ABORT, 'illegal run status transition');
END;
CREATE TRIGGER runs_status_update BEFORE UPDATE OF status ON runs
WHEN NOT EXISTS (SELECT 1 FROM transitions WHERE entity = 'run'
                 AND from_status = OLD.status AND to_status = NEW.status)
BEGIN
    SELECT RAISE(ABORT, 'illegal run status transition');
END;
CREATE TRIGGER phases_status_insert BEFORE INSERT ON phases
WHEN NOT EXISTS (SELECT 1 FROM transitions WHERE entity = 'phase'
                 AND from_status IS NULL AND to_status = NEW.status)
BEGIN
    SELECT RAISE(ABORT, 'illegal phase status transition');
END;
CREATE TRIGGER phases_status_update BEFORE UPDATE OF status ON phases
WHEN NOT EXISTS (SELECT 1 FROM transitions WHERE entity = 'phase'
                 AND from_status = OLD.status AND to_status = NEW.status)
BEGIN
    SELECT RAISE(ABORT, 'illegal phase status transition');
END;
CREATE TRIGGER steps_status_insert BEFORE INSERT ON steps
WHEN NOT EXISTS (SELECT 1 FROM transitions WHERE entity = 'step'
                 AND from_status IS NULL AND to_status = NEW.status)
BEGIN
    SELECT RAISE(ABORT, 'illegal step status transition');
END;
CREATE TRIGGER steps_status_update BEFORE UPDATE OF status ON steps
WHEN NOT EXISTS (SELECT 1 FROM transitions WHERE entity = 'step'
                 AND from_status = OLD.status AND to_status = NEW.status)
BEGIN
    SELECT RAISE(ABORT, 'illegal step status transition');
END;
