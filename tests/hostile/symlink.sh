#!/bin/sh
# symlink.sh - a database reached through a symbolic link.
#
# What planctl does (planctl-engine(7), "Symbolic links"): it follows the
# link to the real file, like SQLite, which puts -wal and -shm beside the
# real file; the engine's lock (<database>-engine) goes there too, so two
# engines that name one database by different paths contend for one lock
# and the second is refused (exit 3).  A link to a file that does not
# exist is refused with exit 2 and its target is never created; a link
# loop is an I/O error (exit 1).  Each refusal is one line.
#
# Usage: sh symlink.sh PLANCTL_BINARY SOURCE_DIR
bin=$1
src=$2
. "$src/tests/hostile/lib.sh"

mkdir "$T/real" "$T/links"
ln -s ../real/planctl.db "$T/links/planctl.db"
ln -s real "$T/dirlink"
cp "$src/tests/cli/fixtures/zk.json" "$T/zk.json"
real=$T/real/planctl.db
link=$T/links/planctl.db

expect_exit 0 "apply through the real path" \
    planctl --db "$real" apply -f "$T/zk.json"
expect_exit 0 "create through the link" \
    planctl --db "$link" create zk --definition zookeeper
expect_exit 0 "an engine through the link" \
    planctl --db "$link" run --until-idle
expect_exit 0 "status through the link" planctl --db "$link" status zk
expect_exit 0 "verify through a linked directory" \
    planctl --db "$T/dirlink/planctl.db" verify
[ "$(ls -A "$T/links")" = "planctl.db" ] &&
    ok "nothing was created beside the link" ||
    fail "files beside the link: $(ls -A "$T/links")"
[ -e "$T/real/planctl.db-engine" ] &&
    ok "the engine lock is beside the real file" ||
    fail "no engine lock beside the real file: $(ls -A "$T/real")"

# Two engines, one through the link, one through the real path: the
# second is refused while the first runs.
planctl --db "$link" trigger zk backup >/dev/null 2>&1
# The binary itself in the background (not the function), so $! is its
# pid; SIGTERM, as an asynchronous command ignores SIGINT.
"$bin" --db "$link" run > "$T/engine.out" 2>&1 &
engine=$!
i=0
until grep -q "engine running" "$T/engine.out" 2>/dev/null; do
    i=$((i + 1))
    if [ "$i" -gt 300 ]; then
        fail "the first engine did not start: $(cat "$T/engine.out")"
        break
    fi
    sleep 0.1
done
for path in "$real" "$T/dirlink/planctl.db" "$link"; do
    expect_exit 3 "a second engine through $path is refused" \
        planctl --db "$path" run --until-idle
    grep -q "an engine is already running" "$T/err" ||
        fail "the refusal does not name the running engine: $(cat "$T/err")"
done
kill -TERM "$engine"
wait "$engine"
grep -q "lost its lease" "$T/engine.out" &&
    fail "the first engine lost its lease: $(cat "$T/engine.out")"
expect_exit 0 "after it stopped, an engine through the real path runs" \
    planctl --db "$real" run --until-idle
expect_exit 0 "verify" planctl --db "$real" verify

# A link to nothing: refused, target not created, for writes and reads.
ln -s ../real/missing.db "$T/links/dangling.db"
expect_exit 2 "apply through a dangling link" \
    planctl --db "$T/links/dangling.db" apply -f "$T/zk.json"
grep -q "symbolic link" "$T/err" ||
    fail "the refusal does not say it is a link: $(cat "$T/err")"
expect_exit 2 "status through a dangling link" \
    planctl --db "$T/links/dangling.db" status zk
[ -e "$T/real/missing.db" ] && fail "the link's target was created"
[ -e "$T/real/missing.db" ] || ok "the link's target was not created"

# A link loop.
ln -s loop.db "$T/links/loop.db"
expect_exit 1 "a link loop" planctl --db "$T/links/loop.db" apply -f "$T/zk.json"

finish
