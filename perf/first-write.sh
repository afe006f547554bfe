#!/usr/bin/env bash
# perf/first-write.sh: first writes into unwritten namespace RAM against rewrites of the same blocks (issue 13).
#
#   perf/first-write.sh [ROUNDS]        # default 3 rounds; each round starts a fresh target
#
# Each round starts our target daemon (its own JVM, pinned to core TARGET_CPU) with a fresh RAM namespace of
# NS_SIZE, warms it up with WARM seconds of writes into its last GiB (first writes, then rewrites once it wraps), then
# runs bin/nvmeof-perf (pinned to core PERF_CPU) three more times, sequential writes of BS at IODEPTH:
#   before:  RUNTIME seconds over the warm-up's GiB (every write a rewrite);
#   first:   RUNTIME seconds from LBA 0 into memory never written (no ramp, so every write is a first write;
#            the run is void, and says so, if it wrapped around the namespace);
#   rewrite: RUNTIME seconds over the region the first run wrote (every write a rewrite).
# and prints MiB/s, p50/p99 of each and first / (mean of the two rewrite runs). The rewrites bracket the first writes
# because on a loaded machine the target's JIT may still be compiling its I/O path seconds into the run (measured:
# C2 at 60 % of the target's core during a first-write run after a 6 s warm-up at load 30-80, perf/README.md), which
# would favour whichever run comes last. TARGET_JAVA_OPTS go to the target's JVM, e.g.
# TARGET_JAVA_OPTS=-Dio.nvmeof.chunkPool=0 for the behaviour without the chunk pool (allocation on the queue thread).
# To compare settings in one run, ALTERNATE lists several TARGET_JAVA_OPTS separated by '|'; each round then runs
# every one of them in turn (a fresh target each), e.g. the pool's memory in huge page slabs against allocateDirect:
#   ALTERNATE='-Dio.nvmeof.chunkSlabs=off|-Dio.nvmeof.chunkSlabs=huge' perf/first-write.sh 5
# NS_OPTS are appended to the target's --namespace setting; in ALTERNATE, what follows a ';' in an entry is that entry's
# NS_OPTS, e.g. lazy allocation against a namespace preallocated at start (prealloc, as SPDK's malloc bdev):
#   ALTERNATE=';|;,prealloc' NS_SIZE=4g perf/first-write.sh 4
# Knobs: NS_SIZE (8g: whole GiB, written with the g), NS_OPTS (none), BS (128k), IODEPTH (8), RUNTIME (1), WARM (3), TARGET_CPU (1), PERF_CPU (0), PORT (4431).
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bin/lib.sh
. "$ROOT/bin/lib.sh"
ROUNDS=${1:-3}
NS_SIZE=${NS_SIZE:-8g}
BS=${BS:-128k}
IODEPTH=${IODEPTH:-8}
RUNTIME=${RUNTIME:-1}
WARM=${WARM:-3}
TARGET_CPU=${TARGET_CPU:-1}
PERF_CPU=${PERF_CPU:-0}
PORT=${PORT:-4431}
NQN=nqn.2024-01.io.nvmeof:first-write
OUT=$(mktemp -d "${TMPDIR:-/tmp}/first-write.XXXXXX")
"$ROOT/bin/nvmeof-perf" --help > /dev/null # builds on first use, outside the runs
JAR=$(ls "$ROOT"/perf/build/nvmeof-perf-*.jar | grep -v -- '-tests.jar' | head -1)
URI="nvme+tcp://127.0.0.1:$PORT/$NQN"
# shellcheck source=perf/bench-lib.sh
. "$ROOT/perf/bench-lib.sh"
trap stop_target EXIT

perf() { # NAME SIZE [OFFSET [SECONDS]]
  taskset -c "$PERF_CPU" "$ROOT/bin/nvmeof-perf" --target "$URI" --rw=write --bs="$BS" --iodepth="$IODEPTH" \
    --size="$2" --offset="${3:-0}" --runtime="${4:-$RUNTIME}" --ramp_time=0 --output-format=json --output="$OUT/$1.json" 2> "$OUT/$1.stderr"
}
field() { # JSON EXPR
  python3 -c "import json,sys; j=json.load(open(sys.argv[1])); w=j['jobs'][0]['write']; print($2)" "$1"
}

echo "first-write.sh: load average $(cut -d' ' -f1-3 /proc/loadavg); target JVM opts: ${ALTERNATE:-${TARGET_JAVA_OPTS:-(none)}}"
IFS='|' read -r -a SETTINGS <<< "${ALTERNATE:-${TARGET_JAVA_OPTS:-}}"
[ ${#SETTINGS[@]} -gt 0 ] || SETTINGS=("")
for round in $(seq 1 "$ROUNDS"); do
for SETTING in "${SETTINGS[@]}"; do
  TARGET_JAVA_OPTS=${SETTING%%;*}
  ns_opts=${NS_OPTS:-}
  [[ "$SETTING" == *";"* ]] && ns_opts=${SETTING#*;}
  # shellcheck disable=SC2046,SC2086
  taskset -c "$TARGET_CPU" java $(nvmeof_jvm_opts) ${TARGET_JAVA_OPTS:-} -cp "$JAR:$ROOT/perf/build/lib/*" \
    io.nvmeof.target.daemon.TargetDaemon --listen "tcp://127.0.0.1:$PORT" --nqn "$NQN" \
    --namespace "size=$NS_SIZE,bs=4096$ns_opts" --memory-budget "$NS_SIZE" > "$OUT/target.log" 2>&1 &
  TPID=$!
  rm -f "$OUT"/*.stderr "$OUT"/*.json
  for _ in $(seq 1 1200); do grep -q "listening on" "$OUT/target.log" 2>/dev/null && break; sleep 0.1; done
  ns_bytes=$(python3 -c "import sys; print(int(sys.argv[1].rstrip('g'))<<30)" "$NS_SIZE")
  label=$round
  [ ${#SETTINGS[@]} -gt 1 ] && label="$round [${SETTING:-no opts}]"
  # warm the target's code paths (first writes included) in the namespace's last GiB, rewrite it once measured, then
  # let the pool fill again
  # A run that fails (on a loaded machine the target may not even answer the connection in time) voids this round
  # only: it is reported, and the next one runs.
  if ! { perf warm $((1 << 30)) $((ns_bytes - (1 << 30))) "$WARM" && perf before $((1 << 30)) $((ns_bytes - (1 << 30))) &&
         sleep 1 && perf first $((ns_bytes - (1 << 30))); }; then
    echo "round $label: VOID, a perf run failed: $(cat "$OUT"/*.stderr | grep -v '^\(WARNING\|[A-Z][a-z][a-z] [0-9]\)' | tail -1)"
    stop_target
    continue
  fi
  written=$(field "$OUT/first.json" "w['io_bytes']")
  region=$(( written / (128 * 1024) * 128 * 1024 ))
  void=""
  [ "$written" -ge $((ns_bytes - (1 << 30))) ] && void=" (VOID: wrapped around the namespace, raise NS_SIZE)"
  if ! perf rewrite "$region"; then
    echo "round $label: VOID, the rewrite run failed: $(tail -1 "$OUT/rewrite.stderr")"
    stop_target
    continue
  fi
  python3 - "$OUT/before.json" "$OUT/first.json" "$OUT/rewrite.json" "$label" "$void" <<'EOF'
import json, sys
def load(p):
    w = json.load(open(p))["jobs"][0]["write"]
    return w["bw_bytes"] / 2**20, w["clat_ns"]["percentile"]["50.000000"] / 1e3, w["clat_ns"]["percentile"]["99.000000"] / 1e3
b, f, r = load(sys.argv[1]), load(sys.argv[2]), load(sys.argv[3])
def show(x):
    return f"{x[0]:.0f} MiB/s p50 {x[1]:.0f} us p99 {x[2]:.0f} us"
print(f"round {sys.argv[4]}: rewrite before {show(b)} | first {show(f)} | rewrite after {show(r)} | "
      f"first/rewrite {f[0]/((b[0]+r[0])/2):.2f} (before {f[0]/b[0]:.2f}, after {f[0]/r[0]:.2f}){sys.argv[5]}")
EOF
  stop_target
done
done
rm -rf "$OUT"
