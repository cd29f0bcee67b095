-- 0008: event numbers that no writer waits for.  Until 0007 the events'
-- triggers numbered them from meta.event_seq under the schema's write
-- lock, so numbers were commit order and every writer of events waited
-- for the one before it.  Now a sequence numbers them as they are
-- inserted: writers no longer wait for each other, and a number may
-- commit after a larger one (an open transaction holds a lower number
-- while later ones commit) and a rollback leaves a hole.
--
-- What lets readers still follow the log by number, skipping nothing:
-- before a transaction draws its first number it takes a shared
-- transaction-level advisory lock keyed by the sequence's next value
-- then (its mark: every number it draws is at least that).  A reader
-- first calls events_horizon(cursor): the sequence's next value, read before
-- pg_locks, and the lowest mark any other session holds.  Every event
-- below the horizon has committed, or never will: it is seen by the
-- reader's next statement (a snapshot taken after the horizon), so a
-- reader reads seq > its cursor AND seq < horizon, in seq order, and its
-- cursor stays a number (src/store/README has the proof).
CREATE SEQUENCE events_seq AS bigint CACHE 1 OWNED BY events.seq;
SELECT setval('events_seq', greatest(n, 1), n > 0)
  FROM (SELECT greatest((SELECT value::bigint FROM meta
                          WHERE key = 'event_seq'),
                        (SELECT coalesce(max(seq), 0) FROM events)) AS n) AS x;
-- Events removed before now may be after a reader's last: it reads
-- everything again once.  (Read before event_seq goes.)
INSERT INTO meta (key, value)
SELECT 'events_removed',
       greatest((SELECT value::bigint FROM meta WHERE key = 'event_seq'),
                (SELECT coalesce(max(seq), 0) FROM events))::text;
DELETE FROM meta WHERE key = 'event_seq';

DROP TRIGGER events_serialize ON events;
DROP TRIGGER events_number ON events;
DROP TRIGGER events_numbered ON events;
DROP FUNCTION events_serialize();
DROP FUNCTION events_number();
DROP FUNCTION events_numbered();

-- The mark's advisory lock: key1 names this schema's event marks, key2
-- is the mark's low 32 bits (the horizon puts the high bits back: a mark
-- is never 2^32 numbers behind the sequence).
CREATE FUNCTION events_mark_key() RETURNS integer LANGUAGE sql STABLE
SET search_path FROM CURRENT
RETURN hashtext('planctl events ' || current_schema());

CREATE FUNCTION events_number() RETURNS trigger LANGUAGE plpgsql
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
    NEW.seq := nextval('events_seq');
    RETURN NEW;
END $$;
CREATE TRIGGER events_number BEFORE INSERT ON events
    FOR EACH ROW EXECUTE FUNCTION events_number();

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

UPDATE meta SET value = '8' WHERE key = 'schema_version';
