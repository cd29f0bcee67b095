#!/bin/sh
# perms.sh - databases planctl may not read or write.
#
#   - a file owned by another user, mode 0600: every command fails with one
#     line naming the file, the cause and the owner (exit 1), and nothing
#     is created or changed;
#   - a read-only file (0444) in a directory the user may write: reads
#     work, writes and the engine fail with one line saying planctl needs
#     write access (exit 1), and the file's content is unchanged.
# (A read-only file in a read-only directory is tests/cli/badinput_readonly.)
#
# As root the commands run as user 65534 through setpriv, since permissions
# do not stop root; as anyone else, the "other user's" file is the user's
# own with mode 0000, which the kernel refuses the same way.
#
# Usage: sh perms.sh PLANCTL_BINARY SOURCE_DIR
bin=$1
src=$2
. "$src/tests/hostile/lib.sh"

as_user=
if [ "$(id -u)" = 0 ]; then
    command -v setpriv >/dev/null 2>&1 || {
        echo "perms.sh: as root this test needs setpriv (util-linux)" >&2
        exit 1
    }
    as_user="setpriv --reuid=65534 --regid=65534 --clear-groups"
fi
# Everything the other user runs or reads sits in directories it can
# reach ($T is 0700).
chmod 0755 "$T"
mkdir "$T/bin" "$T/other" "$T/ro"
cp "$bin" "$T/bin/planctl"
cp "$src/tests/cli/fixtures/zk.json" "$T/zk.json"
chmod 0644 "$T/zk.json"
planctl apply -f "$T/zk.json" >/dev/null
planctl create zk --definition zookeeper >/dev/null
planctl run --until-idle >/dev/null 2>&1

run_as() { $as_user "$T/bin/planctl" "$@"; }

# Another user's database.
cp "$PLANCTL_DB" "$T/other/planctl.db"
before=$(cksum < "$T/other/planctl.db"; ls -A "$T/other")
if [ -n "$as_user" ]; then
    chmod 0600 "$T/other/planctl.db" # root's, read by 65534
else
    chmod 0000 "$T/other/planctl.db"
fi
chmod 0777 "$T/other" # writable: nothing stops planctl but the file
for cmd in "status zk" "history zk -o json" "instances" "verify" \
    "trigger zk backup" "apply -f $T/zk.json" "run --until-idle"; do
    # shellcheck disable=SC2086
    expect_exit 1 "another user's database: $cmd" \
        run_as --db "$T/other/planctl.db" $cmd
    grep -q "cannot read database .*Permission denied" "$T/err" ||
        fail "the message does not say why: $(cat "$T/err")"
done
chmod 0600 "$T/other/planctl.db" # readable again, to compare
after=$(cksum < "$T/other/planctl.db"; ls -A "$T/other")
[ "$after" = "$before" ] && ok "the file and its directory are unchanged" ||
    fail "changed: $after"

# A read-only file of the user's own, in a directory it may write.
cp "$PLANCTL_DB" "$T/ro/planctl.db"
[ -n "$as_user" ] && chown -R 65534:65534 "$T/ro"
chmod 0444 "$T/ro/planctl.db"
sum=$(cksum < "$T/ro/planctl.db")
for cmd in "status zk" "history zk" "instances" "events zk"; do
    # shellcheck disable=SC2086
    expect_exit 0 "read-only file: $cmd" run_as --db "$T/ro/planctl.db" $cmd
done
for cmd in "trigger zk backup" "set zk -p NODE_COUNT=5" \
    "create zk2 --definition zookeeper" "run --until-idle"; do
    # shellcheck disable=SC2086
    expect_exit 1 "read-only file: $cmd" run_as --db "$T/ro/planctl.db" $cmd
    grep -q "cannot write database .*planctl needs write access" "$T/err" ||
        fail "the message does not say what is needed: $(cat "$T/err")"
done
[ "$(cksum < "$T/ro/planctl.db")" = "$sum" ] &&
    ok "the read-only file is unchanged" || fail "the read-only file changed"

finish
