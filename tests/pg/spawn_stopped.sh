#!/usr/bin/env bash
# tests/pg/spawn_stopped.sh - an engine stopped (SIGSTOP) in the instant
# after it started a task's process and before it told its keeper of it.
# stopspawn.so (LD_PRELOAD, STOPSPAWN_LIB) stops the first engine right
# after its first posix_spawn() returns.  It stays stopped until its
# heartbeat is older than its TTL, then is continued: the try's process
# must never run its task, neither while the engine is stopped (its
# keeper, not yet told of it, could not kill it) nor once it goes on (it
# is past its time then).  The first stops by itself with one line; a
# second engine declares it dead, retries the step and completes the run;
# no try ran beside another.
. "$(dirname "$0")/lib.sh"

lib=${STOPSPAWN_LIB:?}
fresh_db
PLANCTL_DB=$(pg_uri)
export PLANCTL_DB
# Each start of the task is noted; the task holds its step's flock while
# it sleeps, and notes any try it finds holding it.
cmd="echo \$PLANCTL_STEP \$PLANCTL_ATTEMPT >>$tmp/starts; exec 9>$tmp/lock.\$PLANCTL_STEP; flock -n 9 || echo \$PLANCTL_STEP \$PLANCTL_ATTEMPT >>$tmp/overlaps; sleep 1"
cat >"$tmp/one.json" <<DEF
{"name": "one", "version": "1",
 "tasks": [{"name": "nap", "kind": "shell", "spec": {"command": "$cmd"}}],
 "plans": {"deploy": {"phases": [{"name": "p", "steps": [
   {"name": "a", "tasks": ["nap"], "retry": {"attempts": 3}}]}]}}}
DEF
pctl apply -f "$tmp/one.json" >/dev/null || fail "apply"
pctl create s1 --definition one >/dev/null || fail "create"

mkdir "$tmp/ss"
STOPSPAWN_DIR=$tmp/ss LD_PRELOAD=$lib \
    ASAN_OPTIONS=${ASAN_OPTIONS:-}${ASAN_OPTIONS:+:}verify_asan_link_order=0 \
    "$PLANCTL_BIN" run --name first --lease-ttl 3s \
    >"$tmp/a.out" 2>"$tmp/a.err" &
a=$!
bg_pids+=("$a")
is_stopped() {
    kill -0 "$a" 2>/dev/null || fail "the first engine exited: $(cat "$tmp/a.err")"
    [ -s "$tmp/ss/stopped" ] && [ "$(awk '{print $3}' "/proc/$a/stat")" = T ]
}
wait_for 60 "the first engine to stop after its first spawn" is_stopped
child=$(cat "$tmp/ss/stopped")
# Past its TTL by the server's clock, so past the time its keeper allows
# by its own (2/3 of the TTL after its last renewal, which came first).
late() {
    [ "$(val "SELECT count(*) FROM engines WHERE name = 'first' AND
              (extract(epoch FROM clock_timestamp()) * 1000)::bigint
              - heartbeat_at > ttl_ms")" = 1 ]
}
wait_for 60 "the first engine's heartbeat to be older than its TTL" late
continued_stops "$a" first "$tmp/a.err"

# The second spawns the libuv way: its start gate is passed that way.
PLANCTL_SHELL_SPAWN=libuv \
    "$PLANCTL_BIN" run --name second --lease-ttl 3s >"$tmp/b.out" 2>"$tmp/b.err" &
b=$!
bg_pids+=("$b")
wait_for 60 "the second engine to declare the first dead" declared_dead first
wait_for 120 "the second engine to complete the run" all_done
# Nothing of the first try lives on: neither its process nor its group.
gone() { ! kill -0 "$child" 2>/dev/null && ! kill -0 -- "-$child" 2>/dev/null; }
wait_for 60 "the first try's process to end" gone
stop_engine "$b" second "$tmp/b.err"
check_finished
starts=$(tr '\n' ' ' <"$tmp/starts")
[ "$starts" = "a 2 " ] || fail "the task's starts were: $starts (only try 2 may start)"
note "ok: the try started in the instant before the stop never ran; try 2 did"
