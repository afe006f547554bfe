#!/usr/bin/env bash
# perf/digests.sh: NVMe/TCP header+data digests (CRC32C) on against off, measured in one run with the same pinning as
# perf/vs-spdk.sh, alternating on and off so that both see the same machine load.
#
#   perf/digests.sh [OUTDIR]
#
# One target of ours per mode on core TARGET_CPU (1), our perf on core PERF_CPU (0), loopback, 1 GiB RAM namespace,
# 4 KiB blocks, written once before reading. For each mode and cell, ROUNDS (3) rounds of: digests off, digests on
# (`digest=header,data` in the initiator's URI; our target accepts what the host asks for). The ratio of a round is
# on/off of that round; the table gives the median IOPS of each side, the median of the per-round ratios, and CPU per
# I/O (µs, initiator / target) of each side.
#
# Knobs: RUNTIME (5 s), RAMP (10 s), ROUNDS (3), TARGET_CPU (1), PERF_CPU (0), PORT (4433), FILL_SECONDS (120),
# CELLS (a space-separated subset of qd32 randwrite read128k qd1; default "qd32 randwrite read128k"),
# MODES ("busy default"), REPORT_ONLY (set: only re-print the table of OUTDIR). Prints a Markdown table (OUTDIR/results.md); every run's JSON stays in OUTDIR.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bin/lib.sh
. "$ROOT/bin/lib.sh"
OUT=${1:-$ROOT/perf/build/digests-$(date +%Y%m%d-%H%M%S)}
RUNTIME=${RUNTIME:-5}
RAMP=${RAMP:-10} # each run starts a new initiator JVM: its JIT is still compiling seconds in
ROUNDS=${ROUNDS:-3}
TARGET_CPU=${TARGET_CPU:-1}
PERF_CPU=${PERF_CPU:-0}
PORT=${PORT:-4433}
FILL_SECONDS=${FILL_SECONDS:-120}
CELLS=${CELLS:-qd32 randwrite read128k}
MODES=${MODES:-busy default}
NQN=nqn.2024-01.io.nvmeof:digests
mkdir -p "$OUT"
command -v python3 >/dev/null || { echo "digests.sh: python3 is needed" >&2; exit 1; }
command -v taskset >/dev/null || { echo "digests.sh: taskset (util-linux) is needed" >&2; exit 1; }
echo "digests.sh: results in $OUT; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
if [ -z "${REPORT_ONLY:-}" ]; then
  "$ROOT/bin/nvmeof-perf" --help > /dev/null # builds on first use, outside the measured runs
  JAR=$(ls "$ROOT"/perf/build/nvmeof-perf-*.jar | grep -v -- '-tests.jar' | head -1)
fi

cell_args() { # CELL -> rw bs iodepth
  case $1 in
    qd1) echo "randread 4096 1" ;;
    qd32) echo "randread 4096 32" ;;
    randwrite) echo "randwrite 4096 32" ;;
    read128k) echo "read 131072 8" ;;
    *) echo "digests.sh: unknown cell $1" >&2; exit 2 ;;
  esac
}

# shellcheck source=perf/bench-lib.sh
. "$ROOT/perf/bench-lib.sh"
trap stop_target EXIT

start_target() { # MODE
  local flags=()
  [ "$1" = busy ] && flags=(--busy-poll)
  rm -f "$OUT/target-$1.log" # wait_listening must not find the line of an earlier start
  # shellcheck disable=SC2046
  taskset -c "$TARGET_CPU" java $(nvmeof_jvm_opts) ${TARGET_JAVA_OPTS:-} -cp "$JAR:$ROOT/perf/build/lib/*" \
    io.nvmeof.target.daemon.TargetDaemon --listen "tcp://127.0.0.1:$PORT" --nqn "$NQN" \
    --namespace size=1g,bs=4096 --memory-budget 2g "${flags[@]}" > "$OUT/target-$1.log" 2>&1 &
  TPID=$!
  wait_listening "$OUT/target-$1.log" digests.sh
}

URI="nvme+tcp://127.0.0.1:$PORT/$NQN"
run() { # NAME URI MODE CELL
  local rw bs qd hipri=()
  read -r rw bs qd <<< "$(cell_args "$4")"
  [ "$3" = busy ] && hipri=(--hipri)
  echo "digests.sh: $1 (load $(cut -d' ' -f1 /proc/loadavg))" >&2
  taskset -c "$PERF_CPU" "$ROOT/bin/nvmeof-perf" --target "$2" "${hipri[@]}" --rw="$rw" --bs="$bs" --iodepth="$qd" \
    --runtime="$RUNTIME" --ramp_time="$RAMP" --percentile_list=50:99 --output-format=json \
    --output="$OUT/$1.json" 2> "$OUT/$1.stderr" || echo "digests.sh: $1 failed, see $OUT/$1.stderr" >&2
}

for mode in $MODES; do
  [ -n "${REPORT_ONLY:-}" ] && break
  start_target "$mode"
  # --verify: write every block once (then read it back), so reads are of real memory, not the shared zero buffer
  taskset -c "$PERF_CPU" "$ROOT/bin/nvmeof-perf" --target "$URI" --rw=write --bs=128k --iodepth=8 --size=1g \
    --verify=crc32c --runtime="$FILL_SECONDS" --ramp_time=0 --output-format=json --output="$OUT/fill-$mode.json" \
    2> "$OUT/fill-$mode.stderr" || true
  for cell in $CELLS; do
    for round in $(seq 1 "$ROUNDS"); do
      run "$mode-$cell-off-$round" "$URI" "$mode" "$cell"
      run "$mode-$cell-on-$round" "$URI?digest=header,data" "$mode" "$cell"
    done
  done
  stop_target
done

CELLS="$CELLS" MODES="$MODES" ROUNDS="$ROUNDS" python3 - "$OUT" <<'EOF' | tee "$OUT/results.md"
import json, os, statistics, sys
out = sys.argv[1]
names = {"qd1": "4k randread QD1", "qd32": "4k randread QD32", "randwrite": "4k randwrite QD32",
         "read128k": "128k read QD8"}

def load(name):
    try:
        j = json.load(open(os.path.join(out, name + ".json")))
    except Exception:
        return None
    job = j["jobs"][0]
    d = job["write"] if job["write"]["total_ios"] > job["read"]["total_ios"] else job["read"]
    cpu = j["nvmeof"]["cpu_us_per_io"]
    return {"iops": d["iops"], "p99": d["clat_ns"]["percentile"].get("99.000000", 0) / 1e3,
            "ini": cpu.get("initiator"), "tgt": cpu.get("target")}

def med(xs):
    xs = [x for x in xs if x is not None]
    return statistics.median(xs) if xs else None

def f(x, fmt):
    return "—" if x is None else format(x, fmt)

print("| mode | cell | off IOPS (median) | on IOPS (median) | on/off per round | median ratio "
      "| CPU µs/IO off ini/tgt | CPU µs/IO on ini/tgt |")
print("|---|---|---|---|---|---|---|---|")
for mode in os.environ["MODES"].split():
    for cell in os.environ["CELLS"].split():
        offs, ons, ratios = [], [], []
        for r in range(1, int(os.environ["ROUNDS"]) + 1):
            a, b = load(f"{mode}-{cell}-off-{r}"), load(f"{mode}-{cell}-on-{r}")
            offs.append(a)
            ons.append(b)
            ratios.append(b["iops"] / a["iops"] if a and b and a["iops"] else None)
        def m(rs, k):
            return med([x[k] for x in rs if x])
        print(f"| {mode} | {names[cell]} | {f(m(offs, 'iops') and m(offs, 'iops') / 1e3, '.1f')}K "
              f"| {f(m(ons, 'iops') and m(ons, 'iops') / 1e3, '.1f')}K "
              f"| {' '.join(f(x, '.2f') for x in ratios)} | {f(med(ratios), '.2f')} "
              f"| {f(m(offs, 'ini'), '.2f')} / {f(m(offs, 'tgt'), '.2f')} "
              f"| {f(m(ons, 'ini'), '.2f')} / {f(m(ons, 'tgt'), '.2f')} |")
EOF
