-- 0005: how many bytes of output each try wrote in all, of which
-- attempts.output keeps the last ones (the engine's --output-size).  What
-- lets `planctl logs --follow` print only what is new when the stored
-- window slides, and say how much it never saw.  Written with the output,
-- both while the try runs (at most once a second) and when it ends, and
-- only for a try that wrote some: a table of its own, as task_outputs
-- (0004), so that attempts rows, rewritten whole by every UPDATE, are no
-- wider for it.
CREATE TABLE attempt_output_bytes (
    step_id INTEGER NOT NULL REFERENCES steps (id) ON DELETE CASCADE,
    attempt INTEGER NOT NULL CHECK (attempt >= 1),
    bytes   INTEGER NOT NULL CHECK (bytes >= 0),
    PRIMARY KEY (step_id, attempt)
) WITHOUT ROWID;
