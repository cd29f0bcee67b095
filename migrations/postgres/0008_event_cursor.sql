-- 0008: events many writers append to at once, read by a cursor that no
-- late commit can skip.
--
-- Until 0007 an event's number came from meta.event_seq under the
-- schema's write lock, so numbers were commit order: a row every writer
-- of events locked until it committed.  Now:
--   - seq comes from the sequence event_numbers: unique, never reused,
--     taken at insert (not commit) and not given back by a rollback, so
--     the numbers may commit out of order and leave holes;
--   - tx is the event's place in commit order as readers page the log:
--     the transaction id of its writer (pg_current_xact_id()), or the tx
--     of the run's event before it when that is larger, so that a run's
--     events (whose writers take turns on the run) keep seq order under
--     (tx, seq).  An incremental reader reads only events whose tx is
--     below the horizon of its snapshot (the oldest transaction still
--     running but its own: every other one below it has ended), ordered
--     by (tx, seq), and goes on
--     after the last it read: no event can appear behind that cursor
--     (src/store/README, "The event log as a change feed").
-- Events written before this migration keep tx 0: they come first, in
-- seq order, as before.
ALTER TABLE events ADD COLUMN tx xid8 NOT NULL DEFAULT '0';
ALTER TABLE events ALTER COLUMN tx DROP DEFAULT;
CREATE INDEX events_by_tx ON events (tx, seq);

CREATE SEQUENCE event_numbers;
SELECT setval('event_numbers',
              greatest((SELECT value::bigint FROM meta
                        WHERE key = 'event_seq'),
                       (SELECT coalesce(max(seq), 0) FROM events)) + 1,
              false);

DROP TRIGGER events_serialize ON events;
DROP TRIGGER events_numbered ON events;
DROP FUNCTION events_serialize();
DROP FUNCTION events_numbered();
DELETE FROM meta WHERE key = 'event_seq';

CREATE OR REPLACE FUNCTION events_number() RETURNS trigger LANGUAGE plpgsql
SET search_path FROM CURRENT AS $$
BEGIN
    NEW.seq := nextval('event_numbers');
    NEW.tx := greatest(pg_current_xact_id(),
                       (SELECT e.tx FROM events AS e
                        WHERE e.run_id = NEW.run_id
                        ORDER BY e.seq DESC LIMIT 1));
    RETURN NEW;
END $$;

UPDATE meta SET value = '8' WHERE key = 'schema_version';
