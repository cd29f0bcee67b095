-- 0010: an index of the events no engine wrote, which an engine of a
-- fleet follows on PostgreSQL (see
-- migrations/postgres/0010_hot_updates_feed_index.sql); here, where there
-- is no fleet, for the same indexes on both backends: the engine's
-- events add no entry to it.  PostgreSQL also leaves room on the pages
-- of runs, phases and steps (fillfactor), which SQLite has not.
CREATE INDEX events_not_engine ON events (seq) WHERE actor <> 'engine';
