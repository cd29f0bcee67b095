-- 0009: on PostgreSQL, events numbered by a column default and without
-- foreign keys, for a cheaper insert (see
-- migrations/postgres/0009_events_lighter.sql).  Nothing changes here:
-- SQLite's foreign keys and AUTOINCREMENT stay.  The version moves so that
-- both backends keep one number for the same tables.
SELECT 1;
