#!/usr/bin/env bash
# tests/pg/fleet_feed.sh - engines sharing a schema read each other's
# events, not their own again, and each logs and counts only its own
# changes.  Two engines run 200 runs of ten Dummy steps between them;
# their passes commit among each other's event numbers, so a pass's
# cursor often cannot move past its own events at its commit.  Before,
# the next pass read them back as another writer's: it read each of its
# own runs again (one round trip each, about one a step) and logged and
# counted its changes a second time, and every engine logged and counted
# the other engines' changes too.  Checked once every run is complete:
#
# - planctl_cache_runs_reread_total is 0 on both engines (nobody else
#   wrote to the runs they hold);
# - the runs ended COMPLETE that the two engines count add up to 200,
#   and their logs say "run ended" once for each run, with no actor (an
#   engine's own change), never twice in one log.
. "$(dirname "$0")/lib.sh"

runs=200
fresh_db
PLANCTL_DB=$(pg_uri)
export PLANCTL_DB
steps=
for i in $(seq 0 9); do
    steps="$steps${steps:+,}{\"name\": \"s$i\", \"tasks\": [\"noop\"]}"
done
cat >"$tmp/seq.json" <<DEF
{"name": "seq", "version": "1",
 "tasks": [{"name": "noop", "kind": "Dummy"}],
 "plans": {"deploy": {"phases": [{"name": "main", "steps": [$steps]}]}}}
DEF
pctl apply -f "$tmp/seq.json" >/dev/null || fail "apply seq"
for i in $(seq 1 "$runs"); do
    pctl create "i$i" --definition seq >/dev/null || fail "create i$i"
done

for n in a b; do
    "$PLANCTL_BIN" run --name "$n" --metrics-addr 127.0.0.1:0 --log-format json \
        --log-level info >/dev/null 2>"$tmp/$n.err" &
    eval "pid_$n=$!"
    bg_pids+=("$!")
done
all_complete() {
    [ "$(val "SELECT count(*) FROM runs WHERE status = 'COMPLETE'")" = "$runs" ]
}
wait_for 120 "every run to complete" all_complete

# metrics ENGINE: its /metrics, over bash's /dev/tcp.
metrics() {
    local port
    port=$(sed -n 's/.*metrics listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' \
        "$tmp/$1.err" | head -n 1)
    [ -n "$port" ] || fail "engine $1 printed no metrics address"
    exec 3<>"/dev/tcp/127.0.0.1/$port"
    printf 'GET /metrics HTTP/1.0\r\nHost: localhost\r\n\r\n' >&3
    cat <&3
    exec 3<&-
}
# counter TEXT NAME: the value of the sample NAME (with its labels) in TEXT.
counter() {
    printf '%s\n' "$1" | awk -v k="$2" '$1 == k { print $2 }'
}
ended=0
for n in a b; do
    m=$(metrics "$n")
    reread=$(counter "$m" planctl_cache_runs_reread_total)
    [ "$reread" = 0 ] ||
        fail "engine $n read ${reread:-?} of its runs again, with no other writer"
    c=$(counter "$m" 'planctl_transitions_total{entity="run",to="COMPLETE"}')
    note "engine $n counts ${c:-0} runs COMPLETE"
    ended=$((ended + ${c:-0}))
done
[ "$ended" = "$runs" ] ||
    fail "the engines count $ended runs COMPLETE between them, not $runs"

kill -TERM "$pid_a" "$pid_b"
wait "$pid_a" || fail "engine a exited $?"
wait "$pid_b" || fail "engine b exited $?"
python3 - "$tmp/a.err" "$tmp/b.err" "$runs" <<'EOF' || fail "the engines' logs"
import collections, json, sys
*logs, runs = sys.argv[1:]
ended = collections.Counter()
bad = []
for path in logs:
    seen = collections.Counter()
    for line in open(path):
        if not line.startswith("{"):
            continue
        r = json.loads(line)
        if "run" not in r:
            continue
        key = (r["run"], r["msg"], r.get("status"), r.get("actor"))
        seen[key] += 1
        if r.get("actor") == "engine":
            bad.append(f"{path}: another engine's change logged: {line.strip()}")
        if r["msg"] == "run ended" and "actor" not in r:
            ended[r["run"]] += 1
    bad += [f"{path}: logged {n} times: {k}" for k, n in seen.items() if n > 1]
if len(ended) != int(runs) or any(n != 1 for n in ended.values()):
    bad.append(f"{len(ended)} runs logged as ended, not {runs} once each")
for b in bad[:10]:
    print(b, file=sys.stderr)
sys.exit(1 if bad else 0)
EOF
note "ok: no run read again, each run's end logged and counted once"
