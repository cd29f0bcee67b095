-- 0011: on PostgreSQL, a horizon of the event log that an engine of a
-- fleet reads without pg_locks, and the open runs by number for its
-- claims (see migrations/postgres/0011_fleet_horizon_claims.sql).
-- Nothing changes here: SQLite has one writer at a time and no fleet,
-- and the index would cost each of its run writes.  The version moves so
-- that both backends keep one number for the same tables.
SELECT 1;
