-- 0008: nothing changes on SQLite.  PostgreSQL's migration of the same
-- number gives its events a cursor that no late commit can skip (their
-- numbers come from a sequence there, in insert order, not commit order);
-- on SQLite one writer at a time commits, so an event's number is its
-- commit order and stays the cursor.  The number is taken so that both
-- backends' schema_version name the same tables.
SELECT 1;
