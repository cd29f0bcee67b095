#!/usr/bin/env bash
# tests/pg/fleet.sh - several engines on one PostgreSQL schema, under fire.
#
# Three engines (each restarted by a loop of its own whenever it exits,
# each running 8 steps at most) share FLEET_INSTANCES instances (default
# 200; tries of 1 s) with a short TTL (FLEET_TTL, default 2s).  For
# FLEET_SECONDS (default 40) a chaos loop kills engines with SIGKILL at
# random moments, stops one with SIGSTOP for
# longer than its TTL and continues it, terminates planctl's sessions from
# the server, and, as a fourth process, cancels, pauses, resumes, retries
# and triggers, and deletes (an instance whose run ended: then created
# again under its name).  Then the engines are stopped, the paused runs resumed,
# and one engine finishes what is left.  Afterwards: every run terminal,
# every step's tries numbered without gaps and none open, no try ever ran
# beside another try of its step (the flock of sleeper_def), no task
# process left, no command crashed, and verify clean (every run's events
# agree with its rows and tries).  The figures go to stdout; the long
# version is tools/fleetloop.
#
# With FLEET_SERVER_FAULTS=1 (pg.fleet_server, tools/fleetloop), on a
# cluster of the test's own, the server fails too, at fixed moments of
# the chaos: restarted with -m immediate, its postmaster stopped for 8 s,
# one engine's backend stopped for 10 s inside a transaction, every
# planctl session terminated at once, and restarted with -m immediate
# again.
. "$(dirname "$0")/lib.sh"

instances=${FLEET_INSTANCES:-200}
seconds=${FLEET_SECONDS:-40}
ttl=${FLEET_TTL:-2s}
server=${FLEET_SERVER_FAULTS:-0}
engines=3

if [ "$server" = 1 ]; then
    own_cluster
    # A failure while a server process is stopped must not leave it so.
    trap 'pkill -CONT postgres 2>/dev/null || true; cleanup_own' EXIT
else
    fresh_db
fi
PLANCTL_DB=$(pg_uri)
export PLANCTL_DB
sleeper_def 1 100
for ((i = 1; i <= instances; i++)); do
    pctl create "i$i" --definition sleeper >/dev/null || fail "create i$i"
done

# Engine slot k: planctl run again and again until $tmp/stop exists; its
# current pid in $tmp/pid.k.
slot() {
    local k=$1 p
    while [ ! -e "$tmp/stop" ]; do
        "$PLANCTL_BIN" run --name "e$k" --lease-ttl "$ttl" --concurrency 8 \
            >>"$tmp/e$k.out" 2>>"$tmp/e$k.err" &
        p=$!
        echo "$p" >"$tmp/pid.$k"
        wait "$p" || true
        echo "$p" >>"$tmp/exited.$k"
        # Not a busy loop while the server is down.
        sleep 0.2
    done
}
for ((k = 1; k <= engines; k++)); do
    slot "$k" 2>/dev/null & # not bash's word on each killed engine
    bg_pids+=("$!")
done
started() { [ -s "$tmp/pid.1" ] && [ -s "$tmp/pid.2" ] && [ -s "$tmp/pid.3" ]; }
wait_for 60 "the engines to start" started

kills=0 stops=0 terms=0 admin=0

# The server's own faults, one every sixth of the chaos; each done is a
# line of $tmp/server.
server_faults() {
    local gap=$((seconds / 6)) pid i
    [ "$gap" -ge 1 ] || gap=1
    sleep "$gap"
    own_pg_ctl restart -m immediate -w -t 60 && echo restart >>"$tmp/server"
    sleep "$gap"
    pid=$(head -n 1 "$PLANCTL_PG_DIR/data/postmaster.pid")
    kill -STOP "$pid" && sleep 8 && kill -CONT "$pid" &&
        echo "postmaster stopped" >>"$tmp/server"
    sleep "$gap"
    # An engine's backend inside a transaction (its pass): looked for a
    # while, since passes are short, and again when the one found is gone
    # or going (its session terminated by the loop below: a process that
    # has exited takes the signal, as a zombie, and is not stopped).
    for ((i = 0; i < 200; i++)); do
        pid=$(q -c "SELECT pid FROM pg_stat_activity
                    WHERE datname = current_database()
                      AND application_name = 'planctl'
                      AND xact_start IS NOT NULL AND pid <> pg_backend_pid()
                    LIMIT 1" 2>/dev/null || true)
        if [ -n "$pid" ] && kill -STOP "$pid" 2>/dev/null; then
            if [ "$(awk '{ print $3 }' "/proc/$pid/stat" 2>/dev/null)" = T ]; then
                sleep 10
                kill -CONT "$pid" 2>/dev/null || true
                echo "backend stopped in a transaction" >>"$tmp/server"
                break
            fi
            kill -CONT "$pid" 2>/dev/null || true
        fi
        sleep 0.05
    done
    sleep "$gap"
    q -c "SELECT count(pg_terminate_backend(pid)) FROM pg_stat_activity
          WHERE datname = current_database()
            AND application_name = 'planctl'" >/dev/null 2>&1 &&
        echo "sessions terminated" >>"$tmp/server"
    sleep "$gap"
    own_pg_ctl restart -m immediate -w -t 60 && echo restart >>"$tmp/server"
}
if [ "$server" = 1 ]; then
    server_faults &
    bg_pids+=("$!")
fi
# Any exit of a command above 5 (the documented codes: 0-5) is a crash.
admin_op() {
    local name=i$((RANDOM % instances + 1)) rc=0
    case $((RANDOM % 6)) in
    0) pctl cancel "$name" >/dev/null 2>&1 || rc=$? ;;
    1) pctl pause "$name" >/dev/null 2>&1 || rc=$? ;;
    2) pctl resume "$name" >/dev/null 2>&1 || rc=$? ;;
    3) pctl retry "$name" >/dev/null 2>&1 || rc=$? ;;
    4) pctl trigger "$name" deploy --queue >/dev/null 2>&1 || rc=$? ;;
    5)
        # Refused while a run is active (the usual case): exit 3.
        pctl delete "$name" --force >/dev/null 2>&1 || rc=$?
        if [ "$rc" = 0 ]; then
            echo "$name" >>"$tmp/deleted"
            pctl create "$name" --definition sleeper >/dev/null 2>&1 || rc=$?
        fi
        ;;
    esac
    [ "$rc" -le 5 ] || fail "an admin command on $name exited $rc"
}
end=$((SECONDS + seconds))
while [ "$SECONDS" -lt "$end" ]; do
    k=$((RANDOM % engines + 1))
    p=$(cat "$tmp/pid.$k")
    case $((RANDOM % 10)) in
    0 | 1 | 2)
        kill -9 "$p" 2>/dev/null && kills=$((kills + 1))
        ;;
    3)
        # Stopped past its TTL, then continued: declared dead meanwhile,
        # it must stop by itself (and its slot starts it again).
        if kill -STOP "$p" 2>/dev/null; then
            stops=$((stops + 1))
            (sleep "$(( ${ttl%s} + 1 ))"; kill -CONT "$p" 2>/dev/null) &
        fi
        ;;
    4)
        pid=$(q -c "SELECT pid FROM pg_stat_activity
                    WHERE datname = current_database()
                    AND application_name = 'planctl'
                    ORDER BY random() LIMIT 1" 2>/dev/null || true)
        [ -n "$pid" ] && terminate_ok=$(q -c "SELECT pg_terminate_backend($pid)") &&
            [ "$terminate_ok" = t ] && terms=$((terms + 1))
        ;;
    *)
        admin_op
        admin=$((admin + 1))
        ;;
    esac
    sleep "0.$((RANDOM % 9 + 1))"
done

# The end: the server's faults done, the engines stop (a stopped one is
# continued first), the paused runs go on, and one engine finishes what
# is left.
if [ "$server" = 1 ]; then
    faults_done() { [ "$(wc -l <"$tmp/server" 2>/dev/null || echo 0)" -ge 5 ]; }
    wait_for 120 "the server's five faults" faults_done
fi
touch "$tmp/stop"
for ((k = 1; k <= engines; k++)); do
    p=$(cat "$tmp/pid.$k")
    kill -CONT "$p" 2>/dev/null || true
    kill -INT "$p" 2>/dev/null || true
done
kill_bg
bg_pids=()
for inst in $(val "SELECT i.name FROM instances i JOIN runs r
                   ON r.instance_id = i.id WHERE r.status = 'PAUSED'"); do
    pctl resume "$inst" >/dev/null || fail "resume $inst"
done
rc=0
timeout 600 "$PLANCTL_BIN" run --name last --until-idle >"$tmp/last.out" \
    2>"$tmp/last.err" || rc=$?
[ "$rc" = 0 ] || fail "the last engine: exit $rc: $(cat "$tmp/last.err")"

bad=$(val "SELECT id || ' ' || status FROM runs
           WHERE status NOT IN ('COMPLETE', 'CANCELLED', 'FATAL_ERROR')")
[ -z "$bad" ] || fail "runs not terminal: $bad"
bad=$(val "SELECT s.id FROM steps s LEFT JOIN attempts a
           ON a.step_id = s.id GROUP BY s.id, s.attempt
           HAVING count(a.id) <> s.attempt
               OR coalesce(max(a.number), 0) <> s.attempt
               OR count(a.id) <> count(a.finished_at)")
[ -z "$bad" ] || fail "steps whose tries have gaps or stay open: $bad"
pctl verify >"$tmp/verify.out" 2>&1 || fail "verify: $(cat "$tmp/verify.out")"
[ ! -s "$tmp/overlaps" ] ||
    fail "tries that ran beside another try of their step: $(cat "$tmp/overlaps")"
# No task left running (each names the test's directory in its command).
sleep 0.5
left=$(pgrep -f "$tmp/lock" || true)
[ -z "$left" ] || fail "task processes left: $(ps -o pid,args -p "$left" | tail -n +2)"

exits=$(cat "$tmp"/exited.* 2>/dev/null | wc -l)
dead=$(val "SELECT count(*) FROM events WHERE entity = 'engine'
            AND message LIKE '% declared dead %'")
interrupted=$(val "SELECT count(*) FROM attempts
                   WHERE message = 'interrupted: engine stopped'")
tries=$(val "SELECT count(*) FROM attempts")
runs=$(val "SELECT status || ' ' || count(*) FROM runs GROUP BY status
            ORDER BY status" | tr '\n' ',')
[ "$server" != 1 ] ||
    note "server faults: $(tr '\n' ',' <"$tmp/server" | sed 's/,$//')"
note "ok: $instances instances, ${seconds}s: $kills kills, $stops stops" \
    "past the TTL, $terms sessions terminated, $admin admin commands" \
    "($(wc -l <"$tmp/deleted" 2>/dev/null || echo 0) deletes);" \
    "$exits engine exits, $dead declared dead, $interrupted tries" \
    "interrupted of $tries; runs: ${runs%,}"
