-- 0011: a horizon an engine of a fleet reads without pg_locks, and the
-- open runs by number for its claims.
--
-- An engine of a fleet reads only the events no engine wrote (0010,
-- feed_events_fleet), below the horizon: events_horizon(), whose read of
-- pg_locks (the lowest mark of an open transaction) it needed at nearly
-- every pass, as another engine's pass was always writing.  That read
-- takes every partition of the server's lock table and copies it:
-- 170-230 us a pass with two engines, 3-4.5% of the server's time, and a
-- pause for every other session that takes a lock meanwhile.
--
-- Now a transaction that is no engine's takes, before it draws its first
-- number, a shared lock on a key of its own, events_writers_key(); an
-- engine's is fenced by its row in engines (fleet_fence), which says so
-- in the transaction's setting planctl.engine_writes, and takes none.
-- events_horizon_fleet() reads the sequence's next value, then tries that
-- key exclusively: taken, no transaction but engines' was writing events,
-- so every event below the value that is no engine's has committed, and
-- the value is the horizon.  The lock is let go at once (it is taken in a
-- block that then fails on purpose: its subtransaction's rollback releases
-- it): a writer waits for it a few microseconds at most.  Not taken: the
-- horizon is events_horizon()'s, as before.
--
-- What an engine writes that is no engine's change (a run promoted from
-- the queue, a note on a run's event count) concerns a run it holds; the
-- other engines of the fleet follow only the runs they hold, so none of
-- them needs such an event (src/store/README, "The event log as a feed").
CREATE FUNCTION events_writers_key() RETURNS integer LANGUAGE sql STABLE
SET search_path FROM CURRENT
RETURN hashtext('planctl event writers ' || current_schema());

CREATE OR REPLACE FUNCTION events_mark() RETURNS trigger LANGUAGE plpgsql
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

-- The open runs by number: an engine claiming a backlog slice after
-- slice goes on from the last run it took (fleet_claim_after: an ordered
-- scan of this index from that run, each run's claim probed), where
-- fleet_claim hashes every active run with every claim and sorts them,
-- some 2 ms a claim with 4,000 active runs and 8-10 ms with 20,000.
-- runs_open, keyed by status, cannot give them in order, and a kept plan
-- over the primary key turned to a bitmap and a sort of every open run
-- once the table held a history of ended runs.  (Keying runs_open by id
-- instead made SQLite scan every phase and step for the engine's open
-- runs.)  On PostgreSQL only: SQLite has no fleet, and there the index
-- cost each run write (tests/pg/schema_parity.sh leaves it out).
CREATE INDEX runs_open_by_id ON runs (id)
    WHERE status IN ('PENDING', 'IN_PROGRESS', 'PAUSED');

UPDATE meta SET value = '11' WHERE key = 'schema_version';
