-- 0012: a run's claim goes when an engine of a fleet ends the run.
--
-- A claim was kept for every run ever claimed, so the claims table grew
-- with the history, and what reads it for the active runs read the
-- history too: the shares (fleet_share) and a claim from the first run
-- (fleet_claim) hash every claim: 21 ms and 16 ms with 4,000 active
-- runs and 100,000 ended ones, 1.5 ms and 2 ms without the ended ones'
-- claims.  And what reads an engine's claims (the runs it holds,
-- `planctl engines`) read every run it ever held.  Now the claims are those of the active runs: a
-- trigger deletes a run's claim when an engine's transaction (fenced by
-- fleet_fence, which says so in planctl.engine_writes) moves the run from
-- an active status to an ended one.  An ended run never becomes active
-- again (a retry is a new run), so nothing needs its claim after.
--
-- A run that a user's command ends keeps its claim: the engine that
-- holds it reads the change in its feed (feed_events_fleet) and logs and
-- counts it because it holds the run.  Those claims stay, as few as such
-- commands, until the run is deleted (gc, a deleted instance).
--
-- The ended runs' claims of an existing database go here, once.
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

DELETE FROM claims AS c USING runs AS r
WHERE r.id = c.run_id AND r.status IN ('COMPLETE', 'FATAL_ERROR', 'CANCELLED');

UPDATE meta SET value = '12' WHERE key = 'schema_version';
