#!/bin/sh
# round_trip.sh - the largest instance a definition allows, exported and
# imported again, in bounded memory.
#
# Usage (ctest runs it): sh round_trip.sh PLANCTL PEAKRSS LIMIT_MIB
#
# One run of a plan of 100 phases x 1,000 steps (the most a definition
# may have) exports to a bundle of more than 100 MB.  The export must
# take under LIMIT_MIB of memory at its peak.  The import must take no
# more than `planctl apply` of the same definition, plus LIMIT_MIB: what
# it holds is the definition, decoded as apply decodes it, and one row
# at a time, never the bundle.  Both ends through a file and through a
# pipe; afterwards status, history and verify answer the same.  A single
# row over 64 MiB is refused with exit 2.  LIMIT_MIB 0 checks no memory
# (a run by hand under a sanitizer).
set -eu

planctl=$1
peakrss=$2
limit=$3

dir=$(mktemp -d "${TMPDIR:-/tmp}/planctl-large.XXXXXX")
trap 'rm -rf "$dir"' EXIT
trap 'exit 130' INT TERM
cd "$dir"
export PLANCTL_DB="$dir/a.db" NO_COLOR=1 TZ=UTC LC_ALL=C
unset PLANCTL_NOW

awk 'BEGIN {
    printf "{\"name\": \"big\", \"version\": \"1\", \"tasks\": [{\"name\": \"t\", \"kind\": \"Dummy\", \"spec\": {}}], \"plans\": {\"deploy\": {\"phases\": ["
    for (p = 0; p < 100; p++) {
        printf "%s{\"name\": \"p%d\", \"strategy\": \"parallel\", \"steps\": [", (p ? ", " : ""), p
        for (i = 0; i < 1000; i++)
            printf "%s{\"name\": \"s%d\", \"tasks\": [\"t\"]}", (i ? ", " : ""), i
        printf "]}"
    }
    printf "]}}}\n" }' > big.json

# The baseline: what decoding this definition takes.
"$peakrss" report "$planctl" apply -f big.json > /dev/null 2> apply.rss
base=$(sed -n 's/^peakrss: .* took \([0-9]*\) MiB$/\1/p' apply.rss)
if [ -z "$base" ]; then
    cat apply.rss
    echo "FAIL: no peak measured for apply"
    exit 1
fi
import_limit=0
[ "$limit" -gt 0 ] && import_limit=$((base + limit))

"$planctl" create big --definition big > /dev/null
"$planctl" run --until-idle --durability normal

"$peakrss" "$limit" "$planctl" export big --out big.bundle
size=$(wc -c < big.bundle)
if [ "$size" -le $((64 * 1024 * 1024)) ]; then
    echo "FAIL: the bundle has $size bytes, not more than 64 MiB"
    exit 1
fi
"$peakrss" "$import_limit" "$planctl" --db b.db import big.bundle

same() {
    for view in status history; do
        "$planctl" "$view" big -o json > "a.$view"
        "$planctl" --db "$1" "$view" "$2" -o json |
            sed "s/\"instance\": \"$2\"/\"instance\": \"big\"/" > "b.$view"
        cmp "a.$view" "b.$view"
    done
    "$planctl" --db "$1" verify > /dev/null
}
same b.db big

# Through a pipe: nothing needs the whole bundle, or a file to seek in.
"$peakrss" "$limit" "$planctl" export big |
    "$peakrss" "$import_limit" "$planctl" --db c.db import - > /dev/null
same c.db big

# One row over 64 MiB: refused, exit 2, nothing imported.
{
    printf '{"format":"planctl-bundle","version":1,"runs":[{"id":1,"x":"'
    head -c 67108864 /dev/zero | tr '\0' a
    printf '"}]}'
} > huge.json
rc=0
"$planctl" --db b.db import huge.json --as other 2> huge.err || rc=$?
if [ "$rc" -ne 2 ] || ! grep -q "longer than 64 MiB" huge.err; then
    cat huge.err
    echo "FAIL: a row over 64 MiB gave exit $rc"
    exit 1
fi
echo "ok: a bundle of $size bytes; apply took $base MiB"
