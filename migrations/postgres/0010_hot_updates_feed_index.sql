-- 0010: room on each page of the tables whose rows an engine updates
-- (runs, phases, steps) for the rows' next versions.  A step's row is
-- updated twice, its phase's at its first step and its last, its run's
-- event count every pass; on full pages (the default fillfactor, 100) an update
-- writes the new version to another page and a new entry into every
-- index of the table, where one on the same page with no indexed column
-- changed is a heap-only (HOT) update: no index entry, and the old
-- version pruned on the page.  Measured on one engine, 1,000 instances
-- of 10 steps: steps' updates HOT 66% -> 93%, runs' 58% -> 75%, phases'
-- 44% -> 71%, the server's time a step some 8% lower.  Existing pages
-- keep their rows; the room is left on pages written from now on.  Not
-- attempts: closing a try sets finished_at, the predicate of
-- attempts_one_open, so that update is never HOT.
ALTER TABLE runs SET (fillfactor = 70);
ALTER TABLE phases SET (fillfactor = 70);
ALTER TABLE steps SET (fillfactor = 70);

-- The events an engine of a fleet follows (feed_events): those no engine
-- wrote (a user's or planctl's command, an embedder's change).  Each
-- engine read every event of the fleet since its last pass to find them,
-- the others' as well as its own; with two engines some 6% of the
-- server's time, and growing with the fleet.  Engines' events, nearly all
-- of them, add no entry here.
CREATE INDEX events_not_engine ON events (seq) WHERE actor <> 'engine';

UPDATE meta SET value = '10' WHERE key = 'schema_version';
