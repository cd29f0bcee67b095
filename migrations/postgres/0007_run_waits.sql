-- 0007: why an active run waits, as the engine that holds it saw it last
-- (the same table as SQLite's 0007): for an engine with an executor of a
-- task kind, or for a free slot of the engine's concurrency.
CREATE TABLE run_waits (
    run_id      bigint PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    cause       text NOT NULL CHECK (cause IN ('executor', 'slot')),
    kind        text,
    concurrency integer CHECK (concurrency >= 1),
    since       bigint NOT NULL
);

UPDATE meta SET value = '7' WHERE key = 'schema_version';
