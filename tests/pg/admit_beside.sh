#!/usr/bin/env bash
# tests/pg/admit_beside.sh - creates commit beside each other and beside
# the engines' passes (an admission takes the schema's write lock shared:
# it writes only rows it inserts).  Four processes create 30 instances
# each while two engines run, two of them the same names at once: each
# name is created once (the other create says it exists, exit 3), every
# run completes, the change token counted every create (the engines were
# woken: nothing waits for a heartbeat), and verify is clean.
. "$(dirname "$0")/lib.sh"

sleeper_backlog 0.05 3 0
start_two_engines --lease-ttl 60s
# creator PREFIX LOG: 30 creates, one line per outcome in LOG.
creator() {
    local i rc
    for i in $(seq 1 30); do
        rc=0
        "$PLANCTL_BIN" create "$1$i" --definition sleeper >/dev/null \
            2>>"$2.err" || rc=$?
        echo "$1$i $rc" >>"$2"
    done
}
creator a "$tmp/c1" &
c1=$!
creator b "$tmp/c2" &
c2=$!
creator s "$tmp/c3" &
c3=$!
creator s "$tmp/c4" &
c4=$!
bg_pids+=("$c1" "$c2" "$c3" "$c4")
for p in "$c1" "$c2" "$c3" "$c4"; do wait "$p" || fail "a creator failed"; done

# a and b: every create succeeded.
[ "$(grep -c ' 0$' "$tmp/c1" "$tmp/c2" | awk -F: '{ n += $2 } END { print n }')" = 60 ] ||
    fail "creates failed: $(cat "$tmp/c1.err" "$tmp/c2.err" 2>/dev/null)"
# s: each name once; the other create of it exit 3, "already exists".
for i in $(seq 1 30); do
    got=$(grep -h "^s$i " "$tmp/c3" "$tmp/c4" | awk '{ print $2 }' | sort | tr '\n' ' ')
    [ "$got" = "0 3 " ] || fail "s$i: creates exited $got"
done
[ "$(grep -c "already exists" "$tmp/c3.err" "$tmp/c4.err" |
     awk -F: '{ n += $2 } END { print n }')" = 30 ] ||
    fail "a taken name not said: $(cat "$tmp/c3.err" "$tmp/c4.err")"
[ "$(val "SELECT count(*) FROM instances")" = 90 ] ||
    fail "$(val "SELECT count(*) FROM instances") instances, not 90"
wait_for 120 "the engines to complete every run" all_done
stop_two_engines
check_finished
note "ok: 90 instances created by four processes beside two engines, 30 names refused once each"
