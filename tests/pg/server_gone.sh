#!/usr/bin/env bash
# tests/pg/server_gone.sh - the server stops under an engine that is
# running tasks, and the engine is asked to stop (SIGINT): it stops
# instead of backing off for ever (its last pass cannot commit), exits
# with the error (exit 1) and one line on stderr saying the server is
# gone.  Started again, a new engine recovers what the first left open and
# completes every run.  Its own cluster: it stops the server.
. "$(dirname "$0")/lib.sh"

own_cluster
PLANCTL_DB=$(pg_uri)
export PLANCTL_DB
sleeper_def 1
for i in 1 2; do pctl create "s$i" --definition sleeper >/dev/null; done

"$PLANCTL_BIN" run --grace 0s --log-format json --log-level warn >"$tmp/a.out" 2>"$tmp/a.err" &
a=$!
bg_pids+=("$a")
ENGINE_PID=$a ENGINE_ERR=$tmp/a.err
wait_for 60 "the engine to start a try" open_tries

own_pg_ctl stop -m immediate -w
# Let the engine meet the missing server before the stop (its tasks end
# and their outcomes cannot be committed): it backs off, retrying.
pass_failed() { grep -q '"msg":"pass failed, backing off"' "$tmp/a.err"; }
wait_for 60 "a failed pass" pass_failed
kill -INT "$a"
gone() { ! kill -0 "$a" 2>/dev/null; }
wait_for 60 "the engine to exit after SIGINT with the server down" gone
rc=0
wait "$a" || rc=$?
grep -q '"msg":"stopped without committing its last pass"' "$tmp/a.err" ||
    fail "no log record of the stop: $(cat "$tmp/a.err")"
[ "$rc" = 1 ] || fail "engine exit $rc, expected 1: $(cat "$tmp/a.err")"
last=$(tail -n 1 "$tmp/a.err")
case $last in
"planctl: lost the connection to PostgreSQL at "*"is the server running?") ;;
*) fail "last line does not say what failed: $last" ;;
esac

own_pg_ctl start -w -t 60
pctl run --until-idle >"$tmp/b.out" 2>"$tmp/b.err" ||
    fail "engine after the restart: $(cat "$tmp/b.err")"
check_finished
note "ok: stopped with the server gone (exit 1: $last)"
