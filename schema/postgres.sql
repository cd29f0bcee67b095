-- postgres.sql - the full current planctl schema for PostgreSQL, for
-- reading and for the drift test (tests/pg/schema_parity.sh builds one
-- database from migrations/postgres/ and one from this file and compares
-- them).  Keep it in step with every new PostgreSQL migration.
--
-- The same tables, columns, indexes, CHECKs and guards as schema/schema.sql
-- (the SQLite schema); src/store/README says how the two map.  The file
-- names no schema: whoever applies it creates the schema (default
-- `planctl`) and sets search_path to it first, in the same transaction:
--
--   psql -X -1 -v ON_ERROR_STOP=1 \
--        -c 'CREATE SCHEMA planctl' -c 'SET search_path = planctl' \
--        -f schema/postgres.sql
--
-- Functions keep the search_path they were created with, so the guards
-- read this schema's `transitions` whatever a session's search_path.
--
-- Times are bigint milliseconds since the Unix epoch, UTC.  JSON is kept as
-- text, byte for byte as planctl wrote it (a definition's body is its
-- canonical JSON, compared as written; jsonb would reorder it).
--
-- SQLSTATEs of the guards: PC001 an illegal status transition (INSERT or
-- UPDATE OF status on runs, phases, steps); PC002 a write to a read-only
-- table (transitions) or an UPDATE of the append-only events.

-- How planctl recognises its own schema, and its version: schema_version
-- is the same number as SQLite's PRAGMA user_version for the same tables.
CREATE TABLE meta (
    key   text PRIMARY KEY,
    value text NOT NULL
);
INSERT INTO meta (key, value) VALUES
    ('application', 'planctl'),
    ('schema_version', '12'),
    -- How many planctl write transactions that changed something have
    -- committed: the backend's change token (a writer moves it before its
    -- COMMIT and sends it as its NOTIFY payload).
    ('commits', '0'),
    -- The highest number of an event removed (events_removed below).
    ('events_removed', '0');

CREATE TABLE transitions (
    entity      text NOT NULL CHECK (entity IN ('run', 'phase', 'step')),
    from_status text, -- NULL: the row is being created
    to_status   text NOT NULL,
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

-- The table of legal transitions is itself read-only (after the rows
-- above); a later migration that must change it drops and recreates these
-- triggers.
CREATE FUNCTION refuse_write() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    RAISE EXCEPTION '%', TG_ARGV[0] USING ERRCODE = 'PC002';
END $$;
CREATE TRIGGER transitions_readonly_insert BEFORE INSERT ON transitions
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_write('transitions is read-only');
CREATE TRIGGER transitions_readonly_update BEFORE UPDATE ON transitions
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_write('transitions is read-only');
CREATE TRIGGER transitions_readonly_delete BEFORE DELETE ON transitions
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_write('transitions is read-only');
CREATE TRIGGER transitions_readonly_truncate BEFORE TRUNCATE ON transitions
    FOR EACH STATEMENT EXECUTE FUNCTION refuse_write('transitions is read-only');

-- A definition version as registered: body is its canonical JSON (sorted
-- keys, compact), so registering the same content twice is recognised.
CREATE TABLE definitions (
    id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name       text NOT NULL,
    version    text NOT NULL,
    body       text NOT NULL,
    created_at bigint NOT NULL,
    UNIQUE (name, version)
);

-- params holds the values set explicitly (a JSON object); last_applied the
-- snapshot of the last deploy, update or upgrade run that completed.
CREATE TABLE instances (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    name          text NOT NULL UNIQUE,
    definition_id bigint NOT NULL REFERENCES definitions (id),
    params        text NOT NULL,
    last_applied  text,
    deleting      integer NOT NULL DEFAULT 0 CHECK (deleting IN (0, 1)),
    created_at    bigint NOT NULL,
    updated_at    bigint NOT NULL
);

-- runs, phases and steps leave room on each page for their rows' next
-- versions (fillfactor, 0010): an update that changes no indexed column
-- then stays on its page and adds no index entry (HOT).

-- One execution of a plan.  Identity values are never reused, so a run id
-- in a bug report always means one run.  event_count counts the run's
-- events.
CREATE TABLE runs (
    id            bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    uid           text NOT NULL UNIQUE,
    instance_id   bigint NOT NULL REFERENCES instances (id) ON DELETE CASCADE,
    definition_id bigint NOT NULL REFERENCES definitions (id),
    plan          text NOT NULL,
    status        text NOT NULL,
    trigger       text NOT NULL CHECK (trigger IN ('create', 'set', 'upgrade',
                      'delete', 'manual', 'retry')),
    reason        text,
    retry_of      bigint REFERENCES runs (id) ON DELETE SET NULL,
    params        text NOT NULL,
    created_at    bigint NOT NULL,
    started_at    bigint,
    finished_at   bigint,
    deadline_at   bigint,
    message       text,
    event_count   bigint NOT NULL DEFAULT 0
) WITH (fillfactor = 70);

-- One active run per instance, enforced by the database itself.
CREATE UNIQUE INDEX runs_one_active ON runs (instance_id)
    WHERE status IN ('PENDING', 'IN_PROGRESS', 'PAUSED');
-- The newest run per (instance, plan), and history pages, are index seeks.
CREATE INDEX runs_by_plan ON runs (instance_id, plan, id);
CREATE INDEX runs_by_instance ON runs (instance_id, id);
-- The queue, first-in first-out, and the engine's set of open runs; the
-- open runs by number too, by which an engine of a fleet claims a backlog
-- from the last run it took, in order (0011: on PostgreSQL only, where
-- there are fleets).
CREATE INDEX runs_queued ON runs (instance_id, id) WHERE status = 'QUEUED';
CREATE INDEX runs_open ON runs (status)
    WHERE status IN ('PENDING', 'IN_PROGRESS', 'PAUSED');
CREATE INDEX runs_open_by_id ON runs (id)
    WHERE status IN ('PENDING', 'IN_PROGRESS', 'PAUSED');
CREATE INDEX runs_retry_of ON runs (retry_of) WHERE retry_of IS NOT NULL;

CREATE TABLE phases (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id      bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    idx         integer NOT NULL,
    name        text NOT NULL,
    strategy    text NOT NULL CHECK (strategy IN ('serial', 'parallel')),
    status      text NOT NULL,
    started_at  bigint,
    finished_at bigint,
    message     text,
    UNIQUE (run_id, idx)
) WITH (fillfactor = 70);

-- attempt counts the tries started so far; task_index is the task a retry
-- resumes at; deadline_at is the current try's timeout as an absolute time.
CREATE TABLE steps (
    id              bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    run_id          bigint NOT NULL REFERENCES runs (id) ON DELETE CASCADE,
    phase_id        bigint NOT NULL REFERENCES phases (id) ON DELETE CASCADE,
    idx             integer NOT NULL,
    name            text NOT NULL,
    status          text NOT NULL,
    attempt         integer NOT NULL DEFAULT 0,
    max_attempts    integer NOT NULL CHECK (max_attempts >= 1),
    task_index      integer NOT NULL DEFAULT 0,
    next_attempt_at bigint,
    deadline_at     bigint,
    started_at      bigint,
    finished_at     bigint,
    message         text,
    UNIQUE (phase_id, idx)
) WITH (fillfactor = 70);
CREATE INDEX steps_by_run ON steps (run_id);

-- One row per try of a step.  status is IN_PROGRESS while it runs, then
-- the status the step left IN_PROGRESS for.
CREATE TABLE attempts (
    id          bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
    step_id     bigint NOT NULL REFERENCES steps (id) ON DELETE CASCADE,
    number      integer NOT NULL CHECK (number >= 1),
    status      text NOT NULL,
    started_at  bigint NOT NULL,
    finished_at bigint,
    exit_code   integer,
    message     text,
    output      text,
    UNIQUE (step_id, number)
);
-- Never two tries of one step in flight.
CREATE UNIQUE INDEX attempts_one_open ON attempts (step_id)
    WHERE finished_at IS NULL;

-- Task outputs, JSON text.  attempt is a try's number, or 0: the step's
-- own, what later tasks of its run see.
CREATE TABLE task_outputs (
    step_id bigint NOT NULL REFERENCES steps (id) ON DELETE CASCADE,
    attempt integer NOT NULL CHECK (attempt >= 0),
    outputs text NOT NULL,
    PRIMARY KEY (step_id, attempt)
);

-- How many bytes of output a try wrote in all, of which attempts.output
-- keeps the last ones.
CREATE TABLE attempt_output_bytes (
    step_id bigint NOT NULL REFERENCES steps (id) ON DELETE CASCADE,
    attempt integer NOT NULL CHECK (attempt >= 1),
    bytes   bigint NOT NULL CHECK (bytes >= 0),
    PRIMARY KEY (step_id, attempt)
);

-- The append-only event log: one row per status change or admin action,
-- written in the same transaction as the change.  Its ids are plain
-- references, unlike SQLite's foreign keys (a check and a row lock for each
-- event inserted, 0009): an event goes with its run or its instance, by
-- the triggers runs_events_gone and instances_events_gone below, and
-- `planctl verify` checks that its run and instance exist.  data holds
-- JSON details.  seq is numbered by events_seq as rows are inserted (an
-- identity, after the mark below): never reused, but not commit order, and
-- a rollback leaves a hole.
CREATE TABLE events (
    seq         bigint GENERATED ALWAYS AS IDENTITY
                    (SEQUENCE NAME events_seq CACHE 1) PRIMARY KEY,
    at          bigint NOT NULL,
    instance_id bigint,
    run_id      bigint,
    phase_id    bigint,
    step_id     bigint,
    entity      text NOT NULL CHECK (entity IN ('run', 'phase', 'step',
                    'instance', 'engine')),
    from_status text,
    to_status   text,
    attempt     integer,
    message     text,
    actor       text NOT NULL,
    data        text
);
CREATE INDEX events_by_run ON events (run_id, seq);
CREATE INDEX events_by_instance ON events (instance_id, seq);
-- The events an engine of a fleet follows: those no engine wrote (0010).
CREATE INDEX events_not_engine ON events (seq) WHERE actor <> 'engine';

-- Rows may be added and deleted (gc, a deleted instance), never changed.
CREATE TRIGGER events_append_only BEFORE UPDATE ON events
    FOR EACH ROW EXECUTE FUNCTION refuse_write('events are append-only');

-- Event numbers that no writer waits for, and a horizon below which a
-- reader of the log by number skips nothing (migrations/postgres/0008
-- and src/store/README say why this is enough):
--   - before a transaction draws its first number it takes a shared
--     transaction-level advisory lock (events_mark_key(), the low 32 bits
--     of the sequence's next value then): its mark, below every number
--     it draws (a statement's BEFORE trigger, which fires before the
--     statement forms its first row and draws its number);
--   - events_horizon() reads the sequence's next value, then the lowest
--     mark of another session in pg_locks: every event below it has
--     committed, or never will, by the reader's next statement;
--   - a transaction that is no engine's (an engine's is fenced by its row
--     in engines, fleet_fence, which says so in planctl.engine_writes)
--     also takes, before its mark, a shared lock on a key of its own
--     (events_writers_key(), 0): while nobody holds it, every event below
--     the next value that is no engine's has committed, which is all an
--     engine of a fleet reads (events_horizon_fleet(): 0011).

CREATE FUNCTION events_mark_key() RETURNS integer LANGUAGE sql STABLE
SET search_path FROM CURRENT
RETURN hashtext('planctl events ' || current_schema());

CREATE FUNCTION events_writers_key() RETURNS integer LANGUAGE sql STABLE
SET search_path FROM CURRENT
RETURN hashtext('planctl event writers ' || current_schema());

CREATE FUNCTION events_mark() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    mark bigint;
BEGIN
    IF current_setting('planctl.events_marked', true) IS DISTINCT FROM
       current_schema() THEN
        IF current_setting('planctl.engine_writes', true) IS DISTINCT FROM
           current_schema() THEN
            PERFORM pg_advisory_xact_lock_shared(events_writers_key(), 0);
        END IF;
        SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END
          INTO mark FROM events_seq;
        PERFORM pg_advisory_xact_lock_shared(events_mark_key(),
                    ((mark & 4294967295) - 2147483648)::integer # -2147483648);
        PERFORM set_config('planctl.events_marked', current_schema(), true);
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER events_number BEFORE INSERT ON events
    FOR EACH STATEMENT EXECUTE FUNCTION events_mark();

-- An event goes with its run or its instance (foreign keys' cascades on
-- SQLite).
CREATE FUNCTION events_of_runs_gone() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    DELETE FROM events AS e USING gone AS g WHERE e.run_id = g.id;
    RETURN NULL;
END $$;
CREATE TRIGGER runs_events_gone AFTER DELETE ON runs
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION events_of_runs_gone();
CREATE FUNCTION events_of_instances_gone() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    DELETE FROM events AS e USING gone AS g WHERE e.instance_id = g.id;
    RETURN NULL;
END $$;
CREATE TRIGGER instances_events_gone AFTER DELETE ON instances
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION events_of_instances_gone();

-- The number below which every event has committed or never will, for
-- this session's next statement: the sequence's next value, then (read
-- after it) the lowest mark of another session's open transaction.  The
-- caller's own transaction does not hold it back: its own rows are
-- visible to it.  after, the caller's cursor (or NULL), allows a shortcut
-- that reads no pg_locks (a call that does costs some 100 us): when every
-- number between it and the next value has committed (a count in a later
-- snapshot finds them all), nothing below the next value is open.
CREATE FUNCTION events_horizon(after bigint) RETURNS bigint LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    head bigint;
    low bigint;
BEGIN
    SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END
      INTO head FROM events_seq;
    IF after >= 0 AND head - after <= 1024 AND
       (SELECT count(*) FROM events WHERE seq > after AND seq < head)
           = head - 1 - after THEN
        RETURN head;
    END IF;
    SELECT min(head - ((head - l.objid::bigint) & 4294967295)) INTO low
      FROM pg_locks AS l
     WHERE l.locktype = 'advisory' AND l.objsubid = 2
       AND l.classid::bigint = (events_mark_key()::bigint & 4294967295)
       AND l.database = (SELECT oid FROM pg_database
                          WHERE datname = current_database())
       AND l.pid IS DISTINCT FROM pg_backend_pid();
    RETURN least(head, low);
END $$;

-- The same for an engine of a fleet, which reads only the events no
-- engine wrote (feed_events_fleet): when no transaction but engines' is
-- writing events (nobody holds events_writers_key() shared), the
-- sequence's next value, read before.  The lock is tried, not waited for,
-- and let go at once: inside a block that fails on purpose, whose
-- subtransaction's rollback releases it.  Else events_horizon().
CREATE FUNCTION events_horizon_fleet(after bigint) RETURNS bigint
LANGUAGE plpgsql SET search_path FROM CURRENT AS $$
DECLARE
    head bigint;
    free boolean := false;
BEGIN
    SELECT CASE WHEN is_called THEN last_value + 1 ELSE last_value END
      INTO head FROM events_seq;
    BEGIN
        free := pg_try_advisory_xact_lock(events_writers_key(), 0);
        RAISE SQLSTATE 'PCH01';
    EXCEPTION WHEN SQLSTATE 'PCH01' THEN
        NULL;
    END;
    IF free THEN
        RETURN head;
    END IF;
    RETURN events_horizon(after);
END $$;

-- The highest number of an event removed (gc, an instance deleted with its
-- events), in meta.events_removed: with holes in the numbers, a reader
-- cannot count them to see that events after its last are gone (feed.c).
CREATE FUNCTION events_removed() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    UPDATE meta
       SET value = greatest(value::bigint, (SELECT max(seq) FROM gone))::text
     WHERE key = 'events_removed' AND EXISTS (SELECT 1 FROM gone);
    RETURN NULL;
END $$;
CREATE TRIGGER events_removed AFTER DELETE ON events
    REFERENCING OLD TABLE AS gone
    FOR EACH STATEMENT EXECUTE FUNCTION events_removed();

-- The engine lease: at most one engine per database.  token grows with
-- every acquisition and fences every engine write.
CREATE TABLE engine_lease (
    id           integer PRIMARY KEY CHECK (id = 1),
    owner        text NOT NULL,
    host         text NOT NULL,
    pid          integer NOT NULL,
    token        bigint NOT NULL,
    acquired_at  bigint NOT NULL,
    heartbeat_at bigint NOT NULL
);

-- The engines that share one database, and which engine holds each
-- active run with the run's claim token (migrations/postgres/0006; on
-- SQLite these tables stay empty).  Times are the database's clock.
CREATE TABLE engines (
    id           bigint GENERATED BY DEFAULT AS IDENTITY PRIMARY KEY,
    name         text NOT NULL,
    host         text NOT NULL,
    pid          integer NOT NULL,
    pid_start    bigint NOT NULL,
    started_at   bigint NOT NULL,
    heartbeat_at bigint NOT NULL,
    ttl_ms       bigint NOT NULL CHECK (ttl_ms > 0),
    capacity     integer NOT NULL CHECK (capacity >= 0)
);

CREATE TABLE claims (
    run_id    bigint PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    engine_id bigint REFERENCES engines (id) ON DELETE SET NULL,
    token     bigint NOT NULL CHECK (token >= 1)
);
CREATE INDEX claims_by_engine ON claims (engine_id)
    WHERE engine_id IS NOT NULL;

-- A run's claim goes when an engine ends the run (0012): the claims are
-- those of the active runs, and what reads them does not read the
-- history.  A run a user's command ends keeps its claim, so that its
-- holder, reading the change, logs it as its own (feed_events_fleet).
CREATE FUNCTION claims_of_ended_run() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    IF current_setting('planctl.engine_writes', true) = current_schema() THEN
        DELETE FROM claims WHERE run_id = NEW.id;
    END IF;
    RETURN NULL;
END $$;
CREATE TRIGGER runs_claim_gone AFTER UPDATE OF status ON runs
    FOR EACH ROW WHEN (OLD.status IN ('PENDING', 'IN_PROGRESS', 'PAUSED')
                       AND NEW.status IN ('COMPLETE', 'FATAL_ERROR',
                                          'CANCELLED'))
    EXECUTE FUNCTION claims_of_ended_run();

-- run_waits: why an active run waits, as the engine that holds it saw it
-- last (schema.sql).
CREATE TABLE run_waits (
    run_id      bigint PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    cause       text NOT NULL CHECK (cause IN ('executor', 'slot')),
    kind        text,
    concurrency integer CHECK (concurrency >= 1),
    since       bigint NOT NULL
);

-- Status guards: a new row must start in a status reachable from (new),
-- and every change must be a listed edge (UPDATE OF status: an UPDATE that
-- sets status, even to the same value, as in SQLite).  TG_ARGV[0] is the
-- entity.  Each trigger's WHEN lists the rows of transitions for its
-- entity, so that the function (a read of the table) runs only for a
-- change the list refuses, where it ran for every row (0009: some 7 us a
-- step's UPDATE); pg.transitions tries every pair against SQLite's.
CREATE FUNCTION guard_status() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    old_status text := CASE WHEN TG_OP = 'UPDATE' THEN OLD.status END;
BEGIN
    IF NOT EXISTS (SELECT 1 FROM transitions
                   WHERE entity = TG_ARGV[0]
                     AND from_status IS NOT DISTINCT FROM old_status
                     AND to_status = NEW.status) THEN
        RAISE EXCEPTION 'illegal % status transition: % -> %', TG_ARGV[0],
            coalesce(old_status, '(new)'), coalesce(NEW.status, 'NULL')
            USING ERRCODE = 'PC001';
    END IF;
    RETURN NEW;
END $$;
CREATE TRIGGER runs_status_insert BEFORE INSERT ON runs
    FOR EACH ROW WHEN (NEW.status IS NULL OR NEW.status NOT IN ('QUEUED', 'PENDING'))
    EXECUTE FUNCTION guard_status('run');
CREATE TRIGGER runs_status_update BEFORE UPDATE OF status ON runs
    FOR EACH ROW WHEN (NEW.status IS NULL OR (OLD.status, NEW.status) NOT IN (
        ('QUEUED', 'PENDING'),
        ('QUEUED', 'CANCELLED'),
        ('PENDING', 'IN_PROGRESS'),
        ('PENDING', 'CANCELLED'),
        ('IN_PROGRESS', 'PAUSED'),
        ('IN_PROGRESS', 'COMPLETE'),
        ('IN_PROGRESS', 'FATAL_ERROR'),
        ('IN_PROGRESS', 'CANCELLED'),
        ('PAUSED', 'IN_PROGRESS'),
        ('PAUSED', 'CANCELLED')))
    EXECUTE FUNCTION guard_status('run');
CREATE TRIGGER phases_status_insert BEFORE INSERT ON phases
    FOR EACH ROW WHEN (NEW.status IS NULL OR NEW.status NOT IN ('PENDING', 'COMPLETE'))
    EXECUTE FUNCTION guard_status('phase');
CREATE TRIGGER phases_status_update BEFORE UPDATE OF status ON phases
    FOR EACH ROW WHEN (NEW.status IS NULL OR (OLD.status, NEW.status) NOT IN (
        ('PENDING', 'IN_PROGRESS'),
        ('PENDING', 'CANCELLED'),
        ('IN_PROGRESS', 'COMPLETE'),
        ('IN_PROGRESS', 'FATAL_ERROR'),
        ('IN_PROGRESS', 'CANCELLED')))
    EXECUTE FUNCTION guard_status('phase');
CREATE TRIGGER steps_status_insert BEFORE INSERT ON steps
    FOR EACH ROW WHEN (NEW.status IS NULL OR NEW.status NOT IN ('PENDING', 'COMPLETE'))
    EXECUTE FUNCTION guard_status('step');
CREATE TRIGGER steps_status_update BEFORE UPDATE OF status ON steps
    FOR EACH ROW WHEN (NEW.status IS NULL OR (OLD.status, NEW.status) NOT IN (
        ('PENDING', 'IN_PROGRESS'),
        ('PENDING', 'CANCELLED'),
        ('IN_PROGRESS', 'COMPLETE'),
        ('IN_PROGRESS', 'ERROR'),
        ('IN_PROGRESS', 'FATAL_ERROR'),
        ('IN_PROGRESS', 'CANCELLED'),
        ('ERROR', 'IN_PROGRESS'),
        ('ERROR', 'FATAL_ERROR'),
        ('ERROR', 'CANCELLED')))
    EXECUTE FUNCTION guard_status('step');
