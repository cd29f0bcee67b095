-- 0012: on PostgreSQL, a run's claim goes when an engine of a fleet ends
-- the run (see migrations/postgres/0012_claims_of_ended_runs.sql).
-- Nothing changes here: SQLite has no fleet, and its claims table stays
-- empty.  The version moves so that both backends keep one number for
-- the same tables.
SELECT 1;
