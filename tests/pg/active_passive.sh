#!/usr/bin/env bash
# tests/pg/active_passive.sh - two engines on one PostgreSQL schema: the
# first holds every run (it claimed them all), the second joins and waits
# with nothing to do; the first killed with SIGKILL in the middle of its
# steps, the second sees at its next heartbeat that the first's process on
# this host is gone, declares it dead and claims its runs: the
# interrupted tries end ERROR and are retried, every run completes, the
# tries are numbered without gaps, none ran beside another of its step,
# and verify is clean.  Then the share: one engine holding six paused runs
# gives three back when a second joins, which claims them.
. "$(dirname "$0")/lib.sh"

fresh_db
PLANCTL_DB=$(pg_uri)
export PLANCTL_DB
sleeper_def 1
for i in 1 2 3 4; do pctl create "s$i" --definition sleeper >/dev/null; done

"$PLANCTL_BIN" run --name first --lease-ttl 3s >"$tmp/a.log" 2>&1 &
a=$!
bg_pids+=("$a")
wait_for 60 "the first engine to start a try" open_tries
held_by() { # held_by NAME: active runs engine NAME holds
    val "SELECT count(*) FROM claims c JOIN engines e ON e.id = c.engine_id
         JOIN runs r ON r.id = c.run_id
         WHERE e.name = '$1' AND r.status IN ('PENDING', 'IN_PROGRESS', 'PAUSED')"
}
[ "$(held_by first)" = 4 ] || fail "the first engine holds $(held_by first) runs, not 4"

# The second joins: nothing for it while the first lives.
"$PLANCTL_BIN" run --name second --lease-ttl 3s --until-idle \
    >"$tmp/b.out" 2>"$tmp/b.err" &
b=$!
bg_pids+=("$b")
joined() { [ "$(val "SELECT count(*) FROM engines WHERE name = 'second'")" = 1 ]; }
wait_for 60 "the second engine to join" joined
pctl engines >"$tmp/engines.out"
grep -q "^first .* yes *4 *no limit" "$tmp/engines.out" ||
    fail "engines: $(cat "$tmp/engines.out")"
grep -q "^second .* yes *0 *no limit" "$tmp/engines.out" ||
    fail "engines: $(cat "$tmp/engines.out")"
pctl status s1 | grep -q "^engine first (pid $a on .*) holds the run" ||
    fail "status does not name the holder: $(pctl status s1 | tail -n 1)"

# Killed where it stands, tries open.
open_tries || fail "no try open when the first engine was killed"
kill -9 "$a"
wait "$a" 2>/dev/null || true
killed_open=$(val "SELECT count(*) FROM attempts WHERE finished_at IS NULL")

rc=0
wait "$b" || rc=$?
[ "$rc" = 0 ] || fail "the second engine: exit $rc: $(cat "$tmp/b.err")"
check_finished
# What the killed engine left open ended ERROR and was tried again.
n=$(val "SELECT count(*) FROM attempts WHERE status = 'ERROR'")
[ "$n" -ge "$killed_open" ] ||
    fail "$killed_open tries were open at the kill, $n ended ERROR"
[ "$(val "SELECT count(*) FROM events WHERE entity = 'engine'
          AND message LIKE 'engine first declared dead (its process % on this host is gone); active runs %, %, %, % released'
          AND message NOT LIKE '%, %, %, %, %'")" = 1 ] ||
    fail "no event of the first engine declared dead: $(val "SELECT message FROM events WHERE entity = 'engine'")"

# The share.  Paused runs are quiescent: the first engine gives back what
# is above its share (half of six) at a heartbeat once the second joined.
"$PLANCTL_BIN" run --name third --lease-ttl 3s >"$tmp/c.log" 2>&1 &
c=$!
bg_pids+=("$c")
for i in 1 2 3 4 5 6; do pctl create "p$i" --definition sleeper >/dev/null; done
paused() {
    local i
    for i in 1 2 3 4 5 6; do
        pctl pause "p$i" >/dev/null 2>&1 || true
    done
    [ "$(val "SELECT count(*) FROM runs WHERE status = 'PAUSED'")" = 6 ] &&
        [ "$(val "SELECT count(*) FROM attempts WHERE finished_at IS NULL")" = 0 ]
}
wait_for 60 "six paused runs, no try running" paused
holds() { [ "$(held_by "$1")" = "$2" ]; }
holds third 6 || fail "the third engine holds $(held_by third), not 6"
"$PLANCTL_BIN" run --name fourth --lease-ttl 3s >"$tmp/d.log" 2>&1 &
d=$!
bg_pids+=("$d")
wait_for 60 "the fourth engine to get three of them" holds fourth 3
holds third 3 || fail "the third engine holds $(held_by third), not 3"
[ "$(val "SELECT count(*) FROM events WHERE entity = 'engine' AND
          message = 'engine third gave back 3 runs for other engines'")" = 1 ] ||
    fail "no event of the runs given back"
note "ok: the second engine took the first's 4 runs over after kill -9" \
    "($killed_open tries interrupted); 3 of 6 runs given to a new engine"
