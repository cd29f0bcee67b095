#!/bin/sh
# dev_advice.sh - every command `tools/dev main` advises at its end works:
# the demo's own steps on a fresh database, then each command of the
# advice (FILE the example definition; `planctl run` with --until-idle so
# that it ends, `planctl serve` only asked for its help).  Usage:
# dev_advice.sh SOURCE_DIR PLANCTL
set -eu
src=$1 planctl=$2
dir=$(mktemp -d)
trap 'rm -rf "$dir"' EXIT
export PLANCTL_DB="$dir/demo.db"
def="$src/tools/examples/zookeeper.json"
cd "$src"
"$planctl" apply -f "$def" >/dev/null
"$planctl" create zk --definition zookeeper -p NODE_COUNT=3 >/dev/null
"$planctl" run --until-idle >/dev/null 2>&1
# The advice: the text of the heredoc after "To explore it:".
advice=$(sed -n '/^The demo database is kept/,/^EOF$/p' tools/dev |
    grep -o "planctl [^#']*" | sed 's/ *$//' | grep -v '^planctl serve$')
[ -n "$advice" ] || { echo "no advice found in tools/dev"; exit 1; }
echo "$advice" | while IFS= read -r line; do
    cmd=$(echo "$line" | sed "s|FILE|$def|; s|^planctl run\$|planctl run --until-idle|; s|run.svg|$dir/run.svg|")
    # shellcheck disable=SC2086
    if (cd "$dir" && "$planctl" ${cmd#planctl } >/dev/null 2>"$dir/err"); then
        echo "ok: $line"
    else
        echo "FAILED: $line: $(cat "$dir/err")"
        echo fail >"$dir/failed"
    fi
done
"$planctl" serve --help >/dev/null
[ ! -e "$dir/failed" ]
