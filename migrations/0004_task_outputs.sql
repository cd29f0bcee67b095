-- 0004: task outputs (KUDO's Pipe tasks), JSON text: {"KEY": "value",
-- "SECRET_KEY": {"secret": "value"}}.  attempt is a try's number: what its
-- tasks wrote, whatever its outcome (those of its earlier tasks while it
-- runs); or 0: the step's own, what later tasks of its run see (those of
-- the try that completed it, or carried over by a retry).  Also in the
-- event that ends the try (or carries the step over), so replay and
-- verify see them.  A table of its own rather than columns of steps and
-- attempts: every UPDATE of those rows rewrites all their columns, and a
-- column more cost every step 1.1% more instructions, outputs or not.
CREATE TABLE task_outputs (
    step_id INTEGER NOT NULL REFERENCES steps (id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL CHECK (attempt >= 0),
    outputs TEXT NOT NULL,
    PRIMARY KEY (step_id, attempt)
) WITHOUT ROWID;
