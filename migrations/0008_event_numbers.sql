-- 0008: on PostgreSQL, event numbers that no writer waits for (see
-- migrations/postgres/0008_event_numbers.sql).  Nothing changes here:
-- SQLite has one writer at a time, and AUTOINCREMENT numbers the events
-- in commit order.  The version moves so that both backends keep one
-- number for the same tables.
SELECT 1;
