-- 0009: events and status changes cost the server less (an engine's pass
-- inserts two or three events a completed step and changes as many
-- statuses, and the server's CPU bounds a fleet on a small machine).
--
-- - The numbering: the mark (0008) is taken by a statement-level trigger,
--   once a statement, and the number is an identity column's (the same
--   sequence, events_seq, where it was), where a row-level trigger ran
--   PL/pgSQL for each row.  A statement's BEFORE trigger fires before its
--   first row is formed, so the mark is still taken before the
--   transaction's first number is drawn; and as with the trigger, no
--   writer chooses a number (GENERATED ALWAYS).
-- - The foreign keys of instance_id and run_id: each checked its row
--   (and locked it) for every event inserted.  Events go with their run
--   or instance as before, by statement-level triggers on runs and
--   instances.  An event of a run that is not there cannot be inserted in
--   practice: the engine writes a run's events with the run's own row
--   changes, which find it gone, and `planctl verify` checks that every
--   event's run and instance exist.
ALTER TABLE events DROP CONSTRAINT events_instance_id_fkey;
ALTER TABLE events DROP CONSTRAINT events_run_id_fkey;

DROP TRIGGER events_number ON events;
DROP FUNCTION events_number();
DO $$
DECLARE
    n bigint;
    called boolean;
BEGIN
    SELECT last_value, is_called INTO n, called FROM events_seq;
    DROP SEQUENCE events_seq;
    ALTER TABLE events ALTER COLUMN seq ADD GENERATED ALWAYS AS IDENTITY
        (SEQUENCE NAME events_seq CACHE 1);
    PERFORM setval('events_seq', n, called);
END $$;

CREATE FUNCTION events_mark() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
DECLARE
    mark bigint;
BEGIN
    IF current_setting('planctl.events_marked', true) IS DISTINCT FROM
       current_schema() THEN
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

-- What the foreign keys' cascades did.
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

-- The status guards (0001) ran their function, a read of transitions, for
-- every row written; now a WHEN listing the table's rows runs it only for
-- a change the list refuses (the function still says why).
DROP TRIGGER runs_status_insert ON runs;
DROP TRIGGER runs_status_update ON runs;
DROP TRIGGER phases_status_insert ON phases;
DROP TRIGGER phases_status_update ON phases;
DROP TRIGGER steps_status_insert ON steps;
DROP TRIGGER steps_status_update ON steps;
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

UPDATE meta SET value = '9' WHERE key = 'schema_version';
