-- 0002: every run counts its events.  The store raises a warning event
-- when a run's count reaches a threshold and the engine ends a run that
-- reaches the hard limit (DESIGN §10's safety net), without counting rows
-- each time.  Existing runs are counted once here.
ALTER TABLE runs ADD COLUMN event_count INTEGER NOT NULL DEFAULT 0;
UPDATE runs SET event_count = (SELECT count(*) FROM events
                               WHERE events.run_id = runs.id);
