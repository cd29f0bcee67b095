-- 0006: the engines that share one database, and which of them holds each
-- active run.  Used on PostgreSQL, where several engines advance the
-- active runs together (src/store/fleet.c); on SQLite exactly one engine
-- runs per database, under engine_lease, and these tables stay empty:
-- they are here so that both backends have the same tables.
--
-- engines: one row per engine that has joined and not been declared
-- dead.  Times are the database's clock (milliseconds), never a host's,
-- so that a host whose clock is off cannot make a live engine look dead.
-- pid_start is the process's start time (clock ticks after boot, from
-- /proc/PID/stat): a pid the system gave again to another process does
-- not pass for the engine.  capacity 0: no limit.
CREATE TABLE engines (
    id           INTEGER PRIMARY KEY,
    name         TEXT NOT NULL,
    host         TEXT NOT NULL,
    pid          INTEGER NOT NULL,
    pid_start    INTEGER NOT NULL,
    started_at   INTEGER NOT NULL,
    heartbeat_at INTEGER NOT NULL,
    ttl_ms       INTEGER NOT NULL CHECK (ttl_ms > 0),
    capacity     INTEGER NOT NULL CHECK (capacity >= 0)
);

-- claims: the engine that holds a run (NULL: nobody; any engine may claim
-- it), and the run's claim token, which grows by one at every claim: the
-- fencing token of the run.  The row of a run stays when it is released
-- or its engine is declared dead (ON DELETE SET NULL), so the token goes
-- on growing.
CREATE TABLE claims (
    run_id    INTEGER PRIMARY KEY REFERENCES runs (id) ON DELETE CASCADE,
    engine_id INTEGER REFERENCES engines (id) ON DELETE SET NULL,
    token     INTEGER NOT NULL CHECK (token >= 1)
);
CREATE INDEX claims_by_engine ON claims (engine_id)
    WHERE engine_id IS NOT NULL;
