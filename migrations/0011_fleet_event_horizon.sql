-- 0011: on PostgreSQL, a horizon of the event log that an engine of a
-- fleet reads without pg_locks (see
-- migrations/postgres/0011_fleet_event_horizon.sql).  Nothing changes
-- here: SQLite has one writer at a time and no fleet.  The version moves
-- so that both backends keep one number for the same tables.
SELECT 1;
