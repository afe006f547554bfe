#!/usr/bin/env bash
# perf/measure.sh: the NVMe/TCP fast-path figures of issue 4, measured on a QUIET machine, compared to the goals.
#
#   perf/measure.sh [OUTDIR]          # default OUTDIR: perf/build/measure-<date>
#
# It runs, in this order:
#   1. the loopback TCP floor: perf/tcp-floor/floor.sh poll and block (p50, p99, round trips/s);
#   2. bin/nvmeof-perf (initiator here, our target started by it in its own JVM), each --output-format json:
#        qd1  4k randread --hipri            (busy polling on both sides)    goal: p50 <= 2.0 x floor poll p50
#        qd1  4k randread                    (default: sleeping)             goal: p50 <= 1.3 x floor block p50
#        qd32 4k randread                                                    goal: >= 235K IOPS
#        qd8  128k read (sequential)                                         goal: >= 1.5 GB/s
#        qd32 4k randread, digests (header+data CRC32C)                     goal: >= 0.6 x without
#        qd8  128k read, digests                                            goal: >= 0.6 x without
#        qd32 4k randwrite                                                   (reported)
#      with GC logging on both JVMs (NVMEOF_JAVA_OPTS for this tool's JVM, NVMEOF_TARGET_JAVA_OPTS for the target JVM
#      it starts; both also get -Dio.netty.leakDetection.level=disabled from the launcher), and counts the young
#      collections whose time falls in each run's measured window                    goal: 0
#   3. prints a Markdown table (also written to OUTDIR/results.md).
#
# Knobs (environment): RUNTIME (s, default 10), RAMP (s, default 3), FLOOR_SECONDS (default 5), SETUP (default tcp),
# ENGINE_SETUP_IOURING=1 to add the qd1/qd32 runs with --setup tcp-io_uring, PERF (default bin/nvmeof-perf).
# Every run's JSON, stderr and GC logs stay in OUTDIR.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${1:-$ROOT/perf/build/measure-$(date +%Y%m%d-%H%M%S)}
RUNTIME=${RUNTIME:-10}
RAMP=${RAMP:-3}
FLOOR_SECONDS=${FLOOR_SECONDS:-5}
SETUP=${SETUP:-tcp}
PERF=${PERF:-$ROOT/bin/nvmeof-perf}
FLOOR=${FLOOR:-$ROOT/perf/tcp-floor/floor.sh}
mkdir -p "$OUT"
command -v python3 >/dev/null || { echo "measure.sh: python3 is needed to read the JSON" >&2; exit 1; }
echo "measure.sh: results in $OUT" >&2
echo "measure.sh: load average now: $(cut -d' ' -f1-3 /proc/loadavg) (run on a quiet machine)" >&2

# 1. floors
"$FLOOR" poll "$FLOOR_SECONDS" > "$OUT/floor-poll.txt"
"$FLOOR" block "$FLOOR_SECONDS" > "$OUT/floor-block.txt"
echo "measure.sh: floor poll: $(cat "$OUT/floor-poll.txt")  block: $(cat "$OUT/floor-block.txt")" >&2

# Build once, outside the measured runs.
"$PERF" --help > /dev/null

# 2. perf runs: NAME then nvmeof-perf arguments
run() {
  local name=$1; shift
  echo "measure.sh: $name: $*" >&2
  local gcdir="$OUT/gc-$name"
  mkdir -p "$gcdir"
  # %p: one log per JVM (this tool's and the target's). 'time' decorations give wall-clock times for the window.
  local gclog="-Xlog:gc:file=$gcdir/gc-%p.log:time,uptime,pid"
  NVMEOF_JAVA_OPTS="$gclog ${NVMEOF_JAVA_OPTS:-}" NVMEOF_TARGET_JAVA_OPTS="$gclog ${NVMEOF_TARGET_JAVA_OPTS:-}" \
    "$PERF" --runtime="$RUNTIME" --ramp_time="$RAMP" --output-format=json --output="$OUT/$name.json" "$@" \
    2> "$OUT/$name.stderr" || { echo "measure.sh: $name failed, see $OUT/$name.stderr" >&2; return 0; }
}
run qd1-4k-randread-hipri  --setup="$SETUP" --hipri --rw=randread --bs=4k --iodepth=1
run qd1-4k-randread        --setup="$SETUP"         --rw=randread --bs=4k --iodepth=1
run qd32-4k-randread       --setup="$SETUP"         --rw=randread --bs=4k --iodepth=32
run qd8-128k-read          --setup="$SETUP"         --rw=read     --bs=128k --iodepth=8
run qd32-4k-randread-dgst  --setup=tcp-digest       --rw=randread --bs=4k --iodepth=32
run qd8-128k-read-dgst     --setup=tcp-digest       --rw=read     --bs=128k --iodepth=8
run qd32-4k-randwrite      --setup="$SETUP"         --rw=randwrite --bs=4k --iodepth=32
if [ "${ENGINE_SETUP_IOURING:-0}" = 1 ]; then
  run qd1-4k-randread-hipri-io_uring --setup=tcp-io_uring --hipri --rw=randread --bs=4k --iodepth=1
  run qd32-4k-randread-io_uring      --setup=tcp-io_uring         --rw=randread --bs=4k --iodepth=32
fi

# 3. the table
RAMP="$RAMP" RUNTIME="$RUNTIME" python3 - "$OUT" <<'EOF' | tee "$OUT/results.md"
import json, os, re, sys, glob, datetime
out = sys.argv[1]

def floor(mode):
    try:
        p50, p99, rts = open(os.path.join(out, f"floor-{mode}.txt")).read().split()[:3]
        return float(p50), float(p99), float(rts)
    except Exception:
        return None

def load(name):
    try:
        return json.load(open(os.path.join(out, name + ".json")))
    except Exception:
        return None

def direction(j):
    job = j["jobs"][0]
    return job["write"] if job["write"]["total_ios"] > job["read"]["total_ios"] else job["read"]

def young_gcs(name, j):
    """Young collections (any JVM of the run) whose wall-clock time lies in the measured window."""
    # timestamp_ms is the run's START (fio's convention, Runner's startMillis); the window ends 20 ms + ramp +
    # runtime later (Runner: rampEnd = start + 20 ms + ramp, end = rampEnd + runtime) and lasts window_ns.
    t0_ms = j.get("timestamp_ms")
    window_ns = (j.get("nvmeof") or {}).get("window_ns")
    if t0_ms is None or window_ns is None:
        return "?"
    end_ms = t0_ms + 20 + (float(os.environ["RAMP"]) + float(os.environ["RUNTIME"])) * 1000
    start_ms = end_ms - window_ns / 1e6
    n = 0
    for f in glob.glob(os.path.join(out, f"gc-{name}", "gc-*.log")):
        for line in open(f, errors="replace"):
            if "Pause Young" not in line:
                continue
            m = re.match(r"\[(\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d+)([+-]\d{4})\]", line)
            if not m:
                continue
            t = datetime.datetime.strptime(m.group(1) + m.group(2), "%Y-%m-%dT%H:%M:%S.%f%z").timestamp() * 1000
            if start_ms <= t <= end_ms:
                n += 1
    return n

fp, fb = floor("poll"), floor("block")
rows = []
def row(name, what, metric, goal, ok):
    j = load(name)
    if j is None:
        rows.append((what, "failed / missing", goal, "—", "NO"))
        return None
    d = direction(j)
    val = metric(d, j)
    gcs = young_gcs(name, j)
    cpu = (j.get("nvmeof") or {}).get("cpu_us_per_io") or {}
    extra = f"; CPU µs/IO ini {cpu.get('initiator') if cpu.get('initiator') is None else round(cpu['initiator'], 1)}" \
            f" tgt {cpu.get('target') if cpu.get('target') is None else round(cpu['target'], 1)}"
    rows.append((what, val[0] + extra, goal, str(gcs), "yes" if ok(val[1]) and gcs == 0 else "NO"))
    return val[1]

p50 = lambda d, j: (f"p50 {d['clat_ns']['percentile']['50.000000']/1000:.1f} µs, p99 "
                    f"{d['clat_ns']['percentile']['99.000000']/1000:.1f} µs, {d['iops']/1000:.1f}K IOPS",
                    d['clat_ns']['percentile']['50.000000'] / 1000)
iops = lambda d, j: (f"{d['iops']/1000:.1f}K IOPS, p50 {d['clat_ns']['percentile']['50.000000']/1000:.1f} µs",
                     d['iops'])
bw = lambda d, j: (f"{d['bw_bytes']/1e9:.2f} GB/s", d['bw_bytes'])

print(f"Floor (loopback TCP ping-pong, 72 B out / 4120 B back): poll p50 {fp[0] if fp else '?'} µs, "
      f"block p50 {fb[0] if fb else '?'} µs\n")
print("| run | result | goal | young GCs in window | met |")
print("|---|---|---|---|---|")
row("qd1-4k-randread-hipri", "qd1 4k randread --hipri", p50,
    f"p50 ≤ 2.0 × {fp[0] if fp else '?'} µs", lambda v: fp is not None and v <= 2.0 * fp[0])
row("qd1-4k-randread", "qd1 4k randread (default)", p50,
    f"p50 ≤ 1.3 × {fb[0] if fb else '?'} µs", lambda v: fb is not None and v <= 1.3 * fb[0])
base_iops = row("qd32-4k-randread", "qd32 4k randread", iops, "≥ 235K IOPS", lambda v: v >= 235_000)
base_bw = row("qd8-128k-read", "qd8 128k read", bw, "≥ 1.5 GB/s", lambda v: v >= 1.5e9)
row("qd32-4k-randread-dgst", "qd32 4k randread, digests", iops,
    "≥ 0.6 × without", lambda v: base_iops is not None and v >= 0.6 * base_iops)
row("qd8-128k-read-dgst", "qd8 128k read, digests", bw,
    "≥ 0.6 × without", lambda v: base_bw is not None and v >= 0.6 * base_bw)
row("qd32-4k-randwrite", "qd32 4k randwrite", iops, "(reported)", lambda v: True)
for name, what, m in [("qd1-4k-randread-hipri-io_uring", "qd1 4k randread --hipri, io_uring", p50),
                      ("qd32-4k-randread-io_uring", "qd32 4k randread, io_uring", iops)]:
    if os.path.exists(os.path.join(out, name + ".json")):
        row(name, what, m, "(reported)", lambda v: True)
for r in rows:
    print("| " + " | ".join(r) + " |")
EOF
