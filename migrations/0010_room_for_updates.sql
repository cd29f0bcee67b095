-- 0010: on PostgreSQL, room on each page of runs, phases, steps and
-- attempts for the rows' next versions (fillfactor; see
-- migrations/postgres/0010_room_for_updates.sql).  Nothing changes here:
-- SQLite has no fillfactor.  The version moves so that both backends keep
-- one number for the same tables.
SELECT 1;
