#!/bin/sh
# make_bundle.sh - remakes timeline.bundle.json, the frozen instance the
# history_svg case draws byte for byte.  Not run by the tests (the case
# only imports the result); run it by hand after a change to the bundle
# format, then run the case with UPDATE=1 and review the picture:
#
#     sh tests/cli/history_svg/make_bundle.sh build/planctl
#
# It runs timeline.json through the real engine: run 1 ends FATAL_ERROR
# (retries, a fatal message full of XML's special characters, a cancelled
# sibling, steps never started); run 2 retries it and the engine is
# killed 1.1 s in, leaving a step waiting for its next try and one
# running.  The export is then shifted in time so that run 2 started at
# 2026-11-21T14:03:04Z, one second before the cases' PLANCTL_NOW.  Needs
# jq.
set -eu

bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
here=$(cd "$(dirname "$0")" && pwd)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
cd "$tmp"
export PLANCTL_DB="$tmp/p.db"
unset PLANCTL_NOW

"$bin" apply -f "$here/timeline.json" >/dev/null
"$bin" create tl --definition timeline >/dev/null
"$bin" run --until-idle >/dev/null
"$bin" retry tl >/dev/null
"$bin" run >/dev/null 2>&1 &
pid=$!
sleep 1.1
kill -9 "$pid"
wait "$pid" || true
"$bin" export tl > raw.json

# Every time is a number under a key ending in "_at" (or "at"), in the
# rows and inside the events' data.
start=$(jq '.runs[] | select(.id == 2) | .started_at' raw.json)
jq --argjson d "$((1795269784000 - start))" '
    def shift: walk(if type == "object" then
        with_entries(if (.key | test("(^|_)at$")) and (.value | type) == "number"
                     then .value += $d else . end)
        else . end);
    shift
    | .exported_at = "2026-11-21T14:03:05.000Z"
    | .events |= map(if .data then .data |= (fromjson | shift | tojson)
                     else . end)' raw.json > "$here/timeline.bundle.json"
echo "wrote $here/timeline.bundle.json"
