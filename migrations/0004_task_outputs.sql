-- 0004: task outputs (KUDO's Pipe tasks).  An attempt keeps the outputs
-- its tasks wrote (JSON text: {"KEY": "value", "SECRET_KEY": {"secret":
-- "value"}}, NULL when none), whatever its outcome; a step keeps the
-- outputs later tasks of its run see: those of the attempt that completed
-- it, or those carried over by a retry.  Both are also in the event that
-- ends the attempt (or carries the step over), so replay and verify see
-- them.  Existing rows have none.
ALTER TABLE attempts ADD COLUMN outputs TEXT;
ALTER TABLE steps ADD COLUMN outputs TEXT;
