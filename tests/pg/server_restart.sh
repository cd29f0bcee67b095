#!/usr/bin/env bash
# tests/pg/server_restart.sh - `pg_ctl restart -m fast` under an engine
# running tasks: its session ends with the server; it connects again,
# takes its lock again, and completes every run, the tries numbered
# without gaps.  Its own cluster: it restarts the server.
. "$(dirname "$0")/lib.sh"

own_cluster
PLANCTL_DB=$(pg_uri)
export PLANCTL_DB
sleeper_def 0.5
for i in 1 2 3; do pctl create "s$i" --definition sleeper >/dev/null; done
"$PLANCTL_BIN" run >"$tmp/a.out" 2>"$tmp/a.err" &
a=$!
bg_pids+=("$a")
ENGINE_PID=$a ENGINE_ERR=$tmp/a.err
wait_for 60 "the engine to start a try" open_tries
own_pg_ctl restart -m fast -w -t 60
alive_and_done() {
    kill -0 "$a" 2>/dev/null || fail "the engine exited: $(cat "$tmp/a.err")"
    all_done
}
wait_for 60 "the runs to complete after the restart" alive_and_done
stop_engine "$a" planctl "$tmp/a.err"
# Nothing on stderr but its start and stop lines (no server notice).
if grep -qv "^planctl: \(engine running\|interrupt\)" "$tmp/a.err"; then
    fail "engine stderr: $(cat "$tmp/a.err")"
fi
check_finished
note "ok: the engine went on across a server restart"
