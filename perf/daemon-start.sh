#!/usr/bin/env bash
# Time from starting the target daemon to its "listening on" and "ready" log lines, with one 1 TiB namespace: in RAM,
# in a file it creates, and in that file reopened. Runs the daemon as bin/nvmeof-target does, from the jars the build
# left in nvmeof-target/build (build them first: mvn -B -q -pl nvmeof-target -am package -DskipTests).
#   perf/daemon-start.sh [ROUNDS] [DIR for the 1 TiB sparse file]
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bin/lib.sh
. "$ROOT/bin/lib.sh"
rounds=${1:-3}
dir=${2:-$(mktemp -d)}
mkdir -p "$dir"
jar=$(ls "$ROOT"/nvmeof-target/build/nvmeof-target-*.jar | head -1)
log=$(mktemp)
trap 'rm -f "$log"' EXIT

# one_run NAMESPACE_SPEC: prints "listening_ms ready_ms"
one_run() {
  local t0 pid listening="" ready=""
  : >"$log" # emptied before the daemon starts, so no line of the previous run is read
  t0=$(date +%s%N)
  # shellcheck disable=SC2046
  java $(nvmeof_jvm_opts) -cp "$jar:$ROOT/nvmeof-target/build/lib/*" io.nvmeof.target.daemon.TargetDaemon \
    --listen tcp://127.0.0.1:0 --namespace "$1" --rpc-socket "$dir/rpc.sock" >>"$log" 2>&1 &
  pid=$!
  while kill -0 "$pid" 2>/dev/null; do
    if [ -z "$listening" ] && grep -q 'listening on' "$log"; then listening=$(( ($(date +%s%N) - t0) / 1000000 )); fi
    if [ -z "$ready" ] && grep -q 'ready' "$log"; then ready=$(( ($(date +%s%N) - t0) / 1000000 )); break; fi
    sleep 0.005
  done
  kill "$pid" 2>/dev/null || true
  wait "$pid" 2>/dev/null || true
  [ -n "$ready" ] || { echo "the daemon did not get ready:" >&2; cat "$log" >&2; exit 1; }
  echo "$listening $ready"
}

for r in $(seq "$rounds"); do
  rm -f "$dir/ns-1t.img"
  ram=$(one_run size=1T)
  created=$(one_run "size=1T,file=$dir/ns-1t.img")
  reopened=$(one_run "size=1T,file=$dir/ns-1t.img")
  echo "round $r (ms to listening, ready): RAM $ram; file created $created; file reopened $reopened"
done
echo "file on disk after the runs: $(du -k "$dir/ns-1t.img" | cut -f1) KiB for $(stat -c %s "$dir/ns-1t.img") bytes"
