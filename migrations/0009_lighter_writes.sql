-- 0009: on PostgreSQL, events numbered once a statement and without
-- foreign keys, and status guards that run their function only for a
-- refused change (see migrations/postgres/0009_lighter_writes.sql).
-- Nothing changes here: SQLite's foreign keys, AUTOINCREMENT and guards
-- stay.  The version moves so that both backends keep one number for the
-- same tables.
SELECT 1;
