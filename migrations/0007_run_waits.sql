-- 0007: why an active run waits, as the engine that holds it saw it last:
-- for an engine with an executor of a task kind (cause 'executor', the
-- kind in kind), or for a free slot of the engine's concurrency (cause
-- 'slot', the engine's limit in concurrency).  One row per waiting run,
-- written only when the engine's view of it changes (it starts or stops
-- waiting), never at every pass, and read by `planctl status` and the web
-- page from any process.  A table of its own, as task_outputs (0004):
-- runs rows stay as they were, and a run that never waits costs nothing.
-- A row outlives its run's end only until the engine forgets it; readers
-- show it for an active run only.
CREATE TABLE run_waits (
    run_id      INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    cause       TEXT NOT NULL CHECK (cause = 'executor' OR cause = 'slot'),
    kind        TEXT,
    concurrency INTEGER CHECK (concurrency >= 1),
    since       INTEGER NOT NULL
);
