#!/usr/bin/env bash
# tests/pg/fleet_share.sh - engines on one PostgreSQL schema share the
# work (issue 34): each holds its fair share, ceil(active runs / live
# engines), and an engine above its share plus one gives back runs between
# steps, never one with a try running.
#
# The tasks wait on gates the test holds (an exclusive flock on
# $tmp/gate.NAME; a task takes it shared), so that which steps end, and
# when, is the test's to say: nothing depends on timing, the deadlines
# only bound a hang.  Every try also holds an flock of its step while it
# runs (as sleeper_def's do): a try that starts beside another of its step
# says so in $tmp/overlaps.
#
# 1. Three engines started together on a backlog of 120 runs (each runs
#    8 tries at once): each comes to hold between 1/6 and
#    1/2 of them, although the first to join may claim all 120 alone and
#    no step has ended: it gives back the runs waiting for a slot.
# 2. Engines joining one that runs every try of a backlog of 30 runs at
#    once (--concurrency 64): it cannot give a run back in the middle of
#    a step.  Once the first steps end (their gate opened), it gives back
#    what is above its share at that step boundary: each of the three
#    comes to hold 1/6 to 1/2.
# 3. An engine joining a busy fleet: two engines hold 30 runs of a chain
#    of steps, every try running and waiting on its step's gate; a third
#    joins.  The gates open one by one: at the first step boundaries after
#    it joined, it gets its share (10), and none holds more than its share
#    plus one.
# 4. A boundary where an engine has fewer runs between steps than it must
#    give back: two engines capped at 15 hold 30 runs, each 4 of chain
#    "a" (gates a1, a2) and 11 of chain "b" (b1, b2); a third joins (its
#    share 10).  Gate a1 opens: each of the two can give back only its 4
#    (15 -> 11).  Gate b1 opens: each goes on down to its share, and the
#    third comes to hold 10.  (Shedding stopped at share plus one left
#    11/11/8 for good.)
# 5. An engine whose runs all ended asks for more: two engines with a
#    TTL of 10 minutes (no heartbeat, which counts the shares again, in
#    the test) hold 15 runs each, e1 15 runs of one step (gate a1), e2
#    15 runs of a chain (b1..b5).  a1 opens: e1's runs complete, e2 still
#    holds 15 (the share is 8 now).  The engines' passes wake nobody: e1
#    asks, e2 counts the shares again and gives back 7 at the first step
#    boundaries: each holds 7 or 8.
# 6. Two short engines do not wake each other for ever: three engines
#    (TTL 10 minutes) hold 10 runs each; e1's and e2's have one step
#    (gate a1), e3's a chain (c1, c2).  a1 opens: e1 and e2 hold none,
#    both ask, e3 holds 10 (the share is 4) with no run between steps.
#    An engine woken by another's ask does not ask in turn: over two
#    seconds the database sees a handful of transactions, not one pass
#    after another.  c1 opens: e3 gives back 6, and e1 and e2 claim them.
# Then every gate opens, every run completes, no try ran beside another
# of its step, and verify is clean.  FLEET_SHARE_PARTS (default
# "1 2 3 4 5 6") runs only some of the parts.
. "$(dirname "$0")/lib.sh"

# ---- gates ----
declare -A gate_pid
# Closes gate NAME: a process holds $tmp/gate.NAME exclusively (flock -o:
# the lock is flock's own, not its child's) until open_gate.
close_gate() {
    flock -o -x "$tmp/gate.$1" sleep 100000 &
    gate_pid[$1]=$!
    bg_pids+=("$!")
    held() { ! flock -n -s "$tmp/gate.$1" true; }
    wait_for 60 "gate $1 to close" held "$1"
}
# Ends the holder's sleep, so flock exits and the gate opens.
open_gate() {
    pkill -P "${gate_pid[$1]}" sleep 2>/dev/null || true
    wait "${gate_pid[$1]}" 2>/dev/null || true
}
open_all() {
    local g
    for g in "${!gate_pid[@]}"; do open_gate "$g"; done
}
cleanup_gates() {
    local g
    for g in "${!gate_pid[@]}"; do
        pkill -9 -P "${gate_pid[$g]}" sleep 2>/dev/null || true
    done
    cleanup_own
}
trap cleanup_gates EXIT

# The command of a task of step NAME behind gate GATE.
task() {
    printf '%s' "exec 9>$tmp/lock.\$PLANCTL_RUN_UID.\$PLANCTL_STEP; flock -n 9 || echo \$PLANCTL_RUN_UID \$PLANCTL_STEP \$PLANCTL_ATTEMPT >>$tmp/overlaps; flock -s $tmp/gate.$1 true; echo done"
}

# Definition "pair": a parallel phase of two steps behind gate p, then one
# step behind gate q.
pair_def() {
    cat >"$tmp/pair.json" <<DEF
{"name": "pair", "version": "1",
 "tasks": [{"name": "p", "kind": "shell", "spec": {"command": "$(task p)"}},
           {"name": "q", "kind": "shell", "spec": {"command": "$(task q)"}}],
 "plans": {"deploy": {"phases": [
   {"name": "first", "strategy": "parallel",
    "steps": [{"name": "a", "tasks": ["p"]}, {"name": "b", "tasks": ["p"]}]},
   {"name": "then", "steps": [{"name": "c", "tasks": ["q"]}]}]}}}
DEF
    pctl apply -f "$tmp/pair.json" >/dev/null || fail "apply pair"
}

# Definition "chain" (or $3): steps s1..s$1 (or $2 for s) one after
# another, step sK behind gate sK.
chain_def() {
    local k tasks='' steps='' s=${2:-s} def=${3:-chain}
    for ((k = 1; k <= $1; k++)); do
        tasks+="${tasks:+, }{\"name\": \"t$k\", \"kind\": \"shell\", \"spec\": {\"command\": \"$(task "$s$k")\"}}"
        steps+="${steps:+, }{\"name\": \"$s$k\", \"tasks\": [\"t$k\"]}"
    done
    cat >"$tmp/$def.json" <<DEF
{"name": "$def", "version": "1", "tasks": [$tasks],
 "plans": {"deploy": {"phases": [{"name": "all", "steps": [$steps]}]}}}
DEF
    pctl apply -f "$tmp/$def.json" >/dev/null || fail "apply $def"
}

# ---- engines ----
declare -A engine_pid
# start_engine NAME [FLAGS...]
start_engine() {
    local n=$1
    shift
    "$PLANCTL_BIN" run --name "$n" "$@" >"$tmp/$n.out" \
        2>"$tmp/$n.err" &
    engine_pid[$n]=$!
    bg_pids+=("$!")
}
# Fails at once if an engine exited.
engines_alive() {
    local n
    for n in "${!engine_pid[@]}"; do
        kill -0 "${engine_pid[$n]}" 2>/dev/null ||
            fail "engine $n exited: $(cat "$tmp/$n.err")"
    done
}
# stop_engines: SIGINT to each, waiting for each to exit 0.
stop_engines() {
    local n rc
    for n in "${!engine_pid[@]}"; do kill -INT "${engine_pid[$n]}"; done
    for n in "${!engine_pid[@]}"; do
        rc=0
        wait "${engine_pid[$n]}" || rc=$?
        [ "$rc" = 0 ] || fail "engine $n exited $rc: $(cat "$tmp/$n.err")"
    done
    engine_pid=()
}
# The active runs each engine holds, "name count" a line, by name.
holdings() {
    val "SELECT e.name || ' ' || count(r.id) FROM engines e
         LEFT JOIN claims c ON c.engine_id = e.id
         LEFT JOIN runs r ON r.id = c.run_id
             AND r.status IN ('PENDING', 'IN_PROGRESS', 'PAUSED')
         GROUP BY e.name ORDER BY e.name"
}
joined() { [ "$(val "SELECT count(*) FROM engines")" = "$1" ]; }
# Whether each of the $1 engines holds between $2 and $3 runs.
each_between() {
    engines_alive
    local n=0 name count
    while read -r name count; do
        [ -n "$name" ] || continue
        n=$((n + 1))
        [ "$count" -ge "$2" ] && [ "$count" -le "$3" ] || return 1
    done <<<"$(holdings)"
    [ "$n" = "$1" ]
}
# Whether tries of $1 steps are running (none finished the step yet: the
# gate holds them).
running() {
    engines_alive
    [ "$(val "SELECT count(*) FROM attempts WHERE finished_at IS NULL")" = "$1" ]
}
# Whether no try of step $1 is open and $2 tries of later steps run.
moved_past() {
    engines_alive
    [ "$(val "SELECT count(*) FROM attempts a JOIN steps s ON s.id = a.step_id
              WHERE s.name = '$1' AND a.finished_at IS NULL")" = 0 ] &&
        [ "$(val "SELECT count(*) FROM attempts
                  WHERE finished_at IS NULL")" = "$2" ]
}
# hold_until SECONDS WHAT COMMAND...: wait_for, failing with what each
# engine holds.
hold_until() {
    local deadline=$((SECONDS + $1)) what=$2
    shift 2
    until "$@"; do
        [ "$SECONDS" -lt "$deadline" ] ||
            fail "timed out waiting for $what; held: $(holdings | tr '\n' ' ')"
        sleep 0.05
    done
}
# A new database for part $1 (the one before dropped: its engines are
# gone).
next_db() {
    local old=$db
    fresh_db "t_${name}_$1"
    [ "$old" = "$db" ] || "$psql_bin" -X -q -d postgres \
        -c "DROP DATABASE IF EXISTS $old" >/dev/null 2>&1 || true
    PLANCTL_DB=$(pg_uri)
    export PLANCTL_DB
    rm -f "$tmp"/gate.* "$tmp"/lock.*
    gate_pid=()
}
finish() {
    open_all
    wait_for 300 "every run to complete" eval 'engines_alive; all_done'
    stop_engines
    check_finished
    note "$1: ok"
}

# create_split N FIRST REST: instances d1..d30, the first N of definition
# FIRST, the others of REST (oldest first: the engines started one after
# another claim them in that order).
create_split() {
    local i g
    for ((i = 1; i <= 30; i++)); do
        if ((i <= $1)); then g=$2; else g=$3; fi
        pctl create "d$i" --definition "$g" >/dev/null || fail "create d$i"
    done
}
# open_until_even PREFIX STEPS TRIES ENGINES LOW HIGH: opens the gates
# PREFIX1, PREFIX2, ... of a chain of STEPS steps one at a time, each
# time until every run moved past it (TRIES tries of later steps
# running), until each of the ENGINES engines holds LOW to HIGH runs;
# balanced is the step it took, 0 if none of the first STEPS - 1 did.
open_until_even() {
    local k
    balanced=0
    for ((k = 1; k < $2; k++)); do
        open_gate "$1$k"
        wait_for 120 "every run to move past step $1$k" moved_past "$1$k" "$3"
        if each_between "$4" "$5" "$6"; then
            balanced=$k
            return 0
        fi
    done
}
part() { [[ " ${FLEET_SHARE_PARTS:-1 2 3 4 5 6} " == *" $1 "* ]]; }

# ---- 1. started together, runs waiting for a slot ----
part1() {
    next_db 1
    close_gate p
    close_gate q
    pair_def
    for ((i = 1; i <= 120; i++)); do
        pctl create "w$i" --definition pair >/dev/null || fail "create w$i"
    done
    for n in e1 e2 e3; do start_engine "$n" --concurrency 8; done
    wait_for 60 "the three engines to join" joined 3
    hold_until 120 "each engine to hold 20-60 of the 120 runs" each_between 3 20 60
    note "1. started together, 8 tries each: $(holdings | tr '\n' ' ')"
    finish "1. started together"
}

# ---- 2. the first alone ran every run's first steps ----
part2() {
    next_db 2
    close_gate p
    close_gate q
    pair_def
    for ((i = 1; i <= 30; i++)); do
        pctl create "w$i" --definition pair >/dev/null || fail "create w$i"
    done
    start_engine e1 --concurrency 64
    wait_for 120 "e1 to run the 60 tries of the first steps" running 60
    start_engine e2 --concurrency 64
    start_engine e3 --concurrency 64
    wait_for 60 "the three engines to join" joined 3
    open_gate p
    hold_until 120 "each engine to hold 5-15 of the 30 runs once the first steps ended" \
        each_between 3 5 15
    note "2. joined a busy engine: $(holdings | tr '\n' ' ')"
    finish "2. joined a busy engine"
}

# ---- 3. joining a busy fleet, at step boundaries ----
part3() {
    local steps=6 balanced k i

    next_db 3
    for ((k = 1; k <= steps; k++)); do close_gate "s$k"; done
    chain_def "$steps"
    for ((i = 1; i <= 30; i++)); do
        pctl create "c$i" --definition chain >/dev/null || fail "create c$i"
    done
    start_engine e1 --concurrency 16
    start_engine e2 --concurrency 16
    wait_for 120 "two engines to run the 30 runs' first steps" running 30
    start_engine e3 --concurrency 16
    wait_for 60 "e3 to join" joined 3
    open_until_even s "$steps" 30 3 9 11
    [ "$balanced" -gt 0 ] ||
        fail "e3 did not get its share (10 of 30) at $((steps - 1)) step boundaries; held: $(holdings | tr '\n' ' ')"
    note "3. joined a busy fleet: balanced after step s$balanced: $(holdings | tr '\n' ' ')"
    finish "3. joined a busy fleet"
}

# ---- 4. fewer runs between steps than to give back ----
part4() {
    local i g
    next_db 4
    for g in a1 a2 b1 b2; do close_gate "$g"; done
    chain_def 2 a chaina
    chain_def 2 b chainb
    # Oldest first: e1 claims d1-d15, e2 d16-d30; 4 of each are chain a.
    for ((i = 1; i <= 30; i++)); do
        if ((i <= 4 || (i > 15 && i <= 19))); then g=chaina; else g=chainb; fi
        pctl create "d$i" --definition "$g" >/dev/null || fail "create d$i"
    done
    start_engine e1 --concurrency 16 --capacity 15 --lease-ttl 6s
    wait_for 120 "e1 to run 15 runs' first steps" running 15
    start_engine e2 --concurrency 16 --capacity 15 --lease-ttl 6s
    wait_for 120 "e2 to run the other 15" running 30
    [ "$(holdings | tr '\n' ' ')" = "e1 15 e2 15 " ] ||
        fail "not 15 each: $(holdings | tr '\n' ' ')"
    start_engine e3 --concurrency 16 --lease-ttl 6s
    wait_for 60 "e3 to join" joined 3
    # Each of e1 and e2 looks at the shares at a heartbeat (and when
    # woken): two of each after e3 joined, so that the pass after the
    # first has seen its share of 10 before any step ends.
    beats_after() {
        [ "$(val "SELECT count(*) FROM engines
                  WHERE name IN ('e1', 'e2') AND heartbeat_at > $1")" = 2 ]
    }
    local since
    since=$(val "SELECT started_at FROM engines WHERE name = 'e3'")
    wait_for 60 "a heartbeat of e1 and e2 after e3 joined" beats_after "$since"
    since=$(val "SELECT max(heartbeat_at) FROM engines
                 WHERE name IN ('e1', 'e2')")
    wait_for 60 "another heartbeat of e1 and e2" beats_after "$since"
    open_gate a1
    wait_for 120 "the chain a runs to move past a1" moved_past a1 30
    hold_until 120 "e3 to take the 8 runs given back" each_between 3 8 11
    open_gate b1
    wait_for 120 "the chain b runs to move past b1" moved_past b1 30
    hold_until 120 "each engine to hold 10 after the second boundary" \
        each_between 3 10 10
    note "4. fewer between steps than to give back: $(holdings | tr '\n' ' ')"
    finish "4. fewer between steps than to give back"
}

# ---- 5. an engine whose runs ended asks for more ----
part5() {
    local steps=5 balanced k

    next_db 5
    close_gate a1
    for ((k = 1; k <= steps; k++)); do close_gate "b$k"; done
    chain_def 1 a chaina
    chain_def "$steps" b chainb
    # e1 claims d1-d15 (chain a), e2 d16-d30 (chain b).
    create_split 15 chaina chainb
    start_engine e1 --concurrency 16 --capacity 15 --lease-ttl 600s
    wait_for 120 "e1 to run 15 runs' first steps" running 15
    start_engine e2 --concurrency 16 --capacity 15 --lease-ttl 600s
    wait_for 120 "e2 to run the other 15" running 30
    [ "$(holdings | tr '\n' ' ')" = "e1 15 e2 15 " ] ||
        fail "not 15 each: $(holdings | tr '\n' ' ')"
    open_gate a1
    wait_for 120 "e1's runs to complete" moved_past a1 15
    open_until_even b "$steps" 15 2 7 8
    [ "$balanced" -gt 0 ] ||
        fail "e1, its runs ended, got none of e2's at $((steps - 1)) step boundaries; held: $(holdings | tr '\n' ' ')"
    note "5. runs ended, asked for more: balanced after step b$balanced: $(holdings | tr '\n' ' ')"
    finish "5. runs ended, asked for more"
}

# ---- 6. two short engines, one above its share in the middle of steps ----
part6() {
    local g n0 n1

    next_db 6
    for g in a1 c1 c2; do close_gate "$g"; done
    chain_def 1 a chaina
    chain_def 2 c chainc
    # e1 claims d1-d10, e2 d11-d20 (chain a), e3 d21-d30.
    create_split 20 chaina chainc
    start_engine e1 --concurrency 16 --capacity 10 --lease-ttl 600s
    wait_for 120 "e1 to run 10 runs' first steps" running 10
    start_engine e2 --concurrency 16 --capacity 10 --lease-ttl 600s
    wait_for 120 "e2 to run 10 more" running 20
    start_engine e3 --concurrency 16 --lease-ttl 600s
    wait_for 120 "e3 to run the last 10" running 30
    [ "$(holdings | tr '\n' ' ')" = "e1 10 e2 10 e3 10 " ] ||
        fail "not 10 each: $(holdings | tr '\n' ' ')"
    open_gate a1
    wait_for 120 "e1's and e2's runs to complete" moved_past a1 10
    sleep 1
    n0=$(val "SELECT xact_commit FROM pg_stat_database
              WHERE datname = current_database()")
    sleep 2
    n1=$(val "SELECT xact_commit FROM pg_stat_database
              WHERE datname = current_database()")
    [ $((n1 - n0)) -lt 30 ] ||
        fail "$((n1 - n0)) transactions in 2 s with every run in a step: short engines wake each other"
    open_gate c1
    wait_for 120 "the chain c runs to move past c1" moved_past c1 10
    hold_until 120 "e1 and e2 to take what e3 gave back" each_between 3 2 4
    note "6. two short engines: $((n1 - n0)) transactions in 2 s; then $(holdings | tr '\n' ' ')"
    finish "6. two short engines"
}

for pt in 1 2 3 4 5 6; do
    if part "$pt"; then "part$pt"; fi
done
