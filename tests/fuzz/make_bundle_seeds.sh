#!/bin/sh
# make_bundle_seeds.sh - writes real bundles for the bundle fuzzer's seed
# corpus: a workload run through the real CLI and engine (retries, a fatal
# step, a cancelled run, a retry of a failed run, a queued run, parameter
# changes, an upgrade, a shell step with output, a pause, task outputs
# plain and secret), each instance exported; the one with task outputs
# also with --include-secrets.
#
# Usage: sh tests/fuzz/make_bundle_seeds.sh PLANCTL_BINARY OUT_DIR
#
# The seeds in corpus/bundle/ were made with it; run it again when the
# bundle format changes, then minimise (tools/dev fuzz bundle does).
set -eu

if [ $# -ne 2 ]; then
    echo "usage: sh make_bundle_seeds.sh PLANCTL_BINARY OUT_DIR" >&2
    exit 2
fi
bin=$(cd "$(dirname "$1")" && pwd)/$(basename "$1")
mkdir -p "$2"
out=$(cd "$2" && pwd)
work=$(mktemp -d "${TMPDIR:-/tmp}/bundle-seeds.XXXXXX")
trap 'rm -rf "$work"' EXIT
cd "$work"
export PLANCTL_DB="$work/seeds.db"
pc() { "$bin" "$@"; }

cat > v1.json <<'EOF'
{"name": "svc", "version": "1",
 "parameters": [
   {"name": "SIZE", "default": "3", "trigger": "update"},
   {"name": "TAG", "required": false, "trigger": "backup"},
   {"name": "FAIL", "default": "0"}],
 "tasks": [
   {"name": "ok", "kind": "Dummy", "spec": {}},
   {"name": "flaky", "kind": "Dummy", "spec": {"failTimes": 2}},
   {"name": "fatal", "kind": "Dummy", "spec": {"wantErr": true, "fatal": true}},
   {"name": "slow", "kind": "Dummy", "spec": {"sleep": "2s"}},
   {"name": "say", "kind": "shell",
    "spec": {"command": "echo \"size $PLANCTL_PARAM_SIZE\"; test \"$PLANCTL_PARAM_FAIL\" = 0",
             "fatal_exit_codes": [1]}}],
 "plans": {
   "deploy": {"phases": [
     {"name": "a", "strategy": "parallel", "steps": [
       {"name": "s1", "tasks": ["ok", "say"]},
       {"name": "s2", "tasks": ["flaky"],
        "retry": {"attempts": 4, "backoff": "10ms", "max_backoff": "20ms"}}]},
     {"name": "b", "steps": [{"name": "s3", "tasks": ["ok"]}]}]},
   "update": {"phases": [{"name": "u", "steps": [
     {"name": "roll", "tasks": ["ok"]}]}]},
   "backup": {"phases": [{"name": "k", "steps": [
     {"name": "dump", "tasks": ["slow"]}]}]},
   "break": {"phases": [{"name": "x", "steps": [
     {"name": "good", "tasks": ["ok"]},
     {"name": "bad", "tasks": ["fatal"]},
     {"name": "never", "tasks": ["ok"]}]}]}}}
EOF
sed -e 's/"version": "1"/"version": "2"/' \
    -e 's/"update": {/"upgrade": {"phases": [{"name": "g", "steps": [{"name": "up", "tasks": ["ok"]}]}]}, "update": {/' \
    v1.json > v2.json

pc apply -f v1.json >/dev/null
pc apply -f v2.json >/dev/null

# ok: deploy with retries and shell output, then an update and an upgrade.
pc create ok --definition svc@1 -p SIZE=5 >/dev/null
pc run --until-idle >/dev/null
pc set ok -p SIZE=7 >/dev/null
pc run --until-idle >/dev/null
pc upgrade ok --version 2 >/dev/null
pc run --until-idle >/dev/null

# failed: the shell step's exit 1 is fatal; then retried with the value
# fixed, keeping what completed.
pc create failed --definition svc@1 -p FAIL=1 >/dev/null
pc run --until-idle >/dev/null
pc retry failed >/dev/null
pc run --until-idle >/dev/null || true
pc trigger failed break >/dev/null
pc run --until-idle >/dev/null

# cancelled: a slow backup cancelled while it runs, a queued run behind it.
pc create cancelled --definition svc@1 >/dev/null
pc run --until-idle >/dev/null
pc trigger cancelled backup >/dev/null
pc trigger cancelled update --queue >/dev/null
pc run --until-idle >/dev/null &
engine=$!
sleep 1
pc cancel cancelled --reason "maintenance window" >/dev/null
wait "$engine" || true

# paused: a run cancelled before any engine saw it, retried; then a slow
# backup paused while it runs, resumed, finished.
pc create paused --definition svc@2 -p TAG=nightly >/dev/null
pc cancel paused >/dev/null
pc retry paused >/dev/null
pc run --until-idle >/dev/null
pc trigger paused backup >/dev/null
pc run --until-idle >/dev/null &
engine=$!
sleep 1
pc pause paused >/dev/null
sleep 2
pc resume paused >/dev/null
wait "$engine"

# outputs: one step writes a plain, a multi-line and a secret output, a
# later step of two tasks reads one and writes its own.
cat > outputs.json <<'EOF'
{"name": "certs", "version": "1",
 "tasks": [
   {"name": "gen", "kind": "shell",
    "spec": {"command": "printf 'CERT=abc\\nPEM<<END\\nl1\\nl2\\nEND\\n::secret::PASS=hunter2\\n' > \"$PLANCTL_OUTPUT\""}},
   {"name": "use", "kind": "shell",
    "spec": {"command": "echo \"U=$PLANCTL_OUTPUT_GEN_CERT_CERT\" > \"$PLANCTL_OUTPUT\""}},
   {"name": "ok", "kind": "Dummy", "spec": {}}],
 "plans": {"deploy": {"phases": [{"name": "p", "steps": [
   {"name": "gen-cert", "tasks": ["gen"]},
   {"name": "use", "tasks": ["use", "ok"]}]}]}}}
EOF
pc apply -f outputs.json >/dev/null
pc create outputs --definition certs >/dev/null
pc run --until-idle >/dev/null

for i in ok failed cancelled paused outputs; do
    pc export "$i" --out "$out/$i.json" 2>/dev/null
done
pc export outputs --include-secrets --out "$out/outputs-secret.json" 2>/dev/null
ls "$out"
