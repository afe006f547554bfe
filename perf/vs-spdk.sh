#!/usr/bin/env bash
# perf/vs-spdk.sh: the side-by-side table of issue 13, re-measured in one run with the same pinning.
#
#   perf/vs-spdk.sh [OUTDIR]                              # our cells only
#   SPDK_DIR=/path/to/built/spdk perf/vs-spdk.sh [OUTDIR]  # also SPDK's cells
#
# Targets run on core TARGET_CPU (1), initiators on core PERF_CPU (0), loopback, 1 GiB RAM namespace, 4 KiB blocks,
# digests off. Cells (rows): 4k randread QD1 (p50), 4k randread QD32 and QD128, 128k sequential read QD8, 4k randwrite
# QD32. Columns:
#   ours busy     our perf --hipri      -> our target --busy-poll
#   ours default  our perf              -> our target (spin 200 us, then sleep)
# and with SPDK_DIR (a tree where SPDK is already built: build/bin/nvmf_tgt, build/bin/spdk_nvme_perf, scripts/rpc.py;
# this repository never builds or ships SPDK):
#   SPDK->SPDK            spdk_nvme_perf -> nvmf_tgt (malloc bdev)
#   our perf->SPDK        our perf (busy and default) -> nvmf_tgt
#   SPDK perf->ours       spdk_nvme_perf -> our target (busy and default)
# Before the cells it measures the loopback TCP floor (perf/tcp-floor/floor.sh, poll and block) on the same two
# cores, and before reading from a target it writes the whole namespace once (SPDK's malloc bdev is real memory;
# ours reads unwritten blocks from one shared zero buffer).
#
# Every figure carries its p99 and p99.99 and the CPU per I/O of both processes (utime+stime from /proc/PID/stat,
# sampled inside the measured window, the same way for SPDK's processes and ours), and with SPDK_DIR a second table
# gives the ratios to SPDK->SPDK.
#
# Knobs: RUNTIME (5 s), RAMP (10 s), TARGET_CPU (1), PERF_CPU (0), PORT (4432, ours), SPDK_PORT (4420),
# SPDK_TGT_OPTS (extra nvmf_tgt options; "--no-huge -s 2048" when the host has no free hugepages),
# SPDK_PERF_OPTS (extra spdk_nvme_perf options; "--no-huge -s 512" without free hugepages),
# FILL_SECONDS (120: the most the fill may take), RUN_SLACK (120: a run still going this long after its ramp and
# runtime is stopped), CELLS (all; a space-separated subset of: qd1 qd32 qd128 read128k
# randwrite), MODES ("busy default").
# Prints a Markdown table (OUTDIR/results.md); every run's output stays in OUTDIR.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bin/lib.sh
. "$ROOT/bin/lib.sh"
OUT=${1:-$ROOT/perf/build/vs-spdk-$(date +%Y%m%d-%H%M%S)}
RUNTIME=${RUNTIME:-5}
RAMP=${RAMP:-10} # each cell starts a new initiator JVM: its JIT is still compiling seconds in (perf/README.md)
TARGET_CPU=${TARGET_CPU:-1}
PERF_CPU=${PERF_CPU:-0}
PORT=${PORT:-4432}
SPDK_PORT=${SPDK_PORT:-4420}
FILL_SECONDS=${FILL_SECONDS:-120}
CELLS=${CELLS:-qd1 qd32 qd128 read128k randwrite}
MODES=${MODES:-busy default}
OUR_NQN=nqn.2024-01.io.nvmeof:vs-spdk
SPDK_NQN=nqn.2016-06.io.spdk:cnode1
mkdir -p "$OUT"
command -v python3 >/dev/null || { echo "vs-spdk.sh: python3 is needed" >&2; exit 1; }
command -v taskset >/dev/null || { echo "vs-spdk.sh: taskset (util-linux) is needed" >&2; exit 1; }
# shellcheck source=perf/bench-lib.sh
. "$ROOT/perf/bench-lib.sh"
[ -z "${SPDK_DIR:-}" ] || require_spdk_tree vs-spdk.sh
cut -d' ' -f1-3 /proc/loadavg > "$OUT/load-start.txt"
echo "vs-spdk.sh: results in $OUT; load average $(cat "$OUT/load-start.txt")" >&2
"$ROOT/bin/nvmeof-perf" --help > /dev/null # builds on first use, outside the measured runs
JAR=$(ls "$ROOT"/perf/build/nvmeof-perf-*.jar | grep -v -- '-tests.jar' | head -1)

cell_args() { # CELL -> rw bs iodepth
  case $1 in
    qd1) echo "randread 4096 1" ;;
    qd32) echo "randread 4096 32" ;;
    qd128) echo "randread 4096 128" ;;
    read128k) echo "read 131072 8" ;;
    randwrite) echo "randwrite 4096 32" ;;
    *) echo "vs-spdk.sh: unknown cell $1" >&2; exit 2 ;;
  esac
}

# ---- the floor ----
taskset -c "$TARGET_CPU,$PERF_CPU" "$ROOT/perf/tcp-floor/floor.sh" poll 5 > "$OUT/floor-poll.txt"
taskset -c "$TARGET_CPU,$PERF_CPU" "$ROOT/perf/tcp-floor/floor.sh" block 5 > "$OUT/floor-block.txt"
echo "vs-spdk.sh: floor poll $(cat "$OUT/floor-poll.txt"), block $(cat "$OUT/floor-block.txt") (p50 us, p99 us, rt/s)" >&2

# ---- targets ----
trap stop_target EXIT

start_ours() { # MODE
  local flags=()
  [ "$1" = busy ] && flags=(--busy-poll)
  # shellcheck disable=SC2046
  taskset -c "$TARGET_CPU" java $(nvmeof_jvm_opts) -cp "$JAR:$ROOT/perf/build/lib/*" \
    io.nvmeof.target.daemon.TargetDaemon --listen "tcp://127.0.0.1:$PORT" --nqn "$OUR_NQN" \
    --namespace size=1g,bs=4096 --memory-budget 2g "${flags[@]}" > "$OUT/target-ours-$1.log" 2>&1 &
  TPID=$!
  wait_listening "$OUT/target-ours-$1.log" vs-spdk.sh
}

start_spdk() { start_spdk_target "$OUT/target-spdk.log" "$OUT/spdk.sock" vs-spdk.sh; }

# ---- CPU per I/O ----
# utime+stime (clock ticks) of a whole process, from /proc/PID/stat (fields 14 and 15, counted after the ") ").
proc_ticks() {
  local stat
  stat=$(cat "/proc/$1/stat" 2>/dev/null) || return 1
  stat=${stat##*) }
  # shellcheck disable=SC2086
  set -- $stat
  echo $((${12} + ${13}))
}

# Samples the CPU of the target (TPID) and of the initiator (PID) inside the measured window, with the same method
# for SPDK's processes and ours: the first sample STARTUP + RAMP + a tenth of RUNTIME after the initiator started
# (STARTUP: about the time the initiator takes to start and connect, 1 s for our JVM, 0.3 s for spdk_nvme_perf), the
# second 0.7 RUNTIME later, inside the window. Writes "target_cores initiator_cores" (CPU seconds per second over
# that sub-window) to OUTFILE; nothing if a process ended before the second sample.
cpu_probe() { # OUTFILE TIMEOUT_PID STARTUP (the initiator is the child of that timeout process)
  local t0 i0 t1 i1 a b c0 c1 ipid=
  for _ in 1 2 3 4 5 6 7 8 9 10; do
    ipid=$(pgrep -P "$2" | head -1) && break
    sleep 0.1
  done
  [ -n "$ipid" ] || return 0
  set -- "$1" "$ipid" "$3"
  a=$(awk -v s="$3" -v r="$RAMP" -v t="$RUNTIME" 'BEGIN { print s + r + t / 10 }')
  b=$(awk -v t="$RUNTIME" 'BEGIN { print t * 0.7 }')
  sleep "$a"
  c0=$(date +%s.%N)
  t0=$(proc_ticks "$TPID") && i0=$(proc_ticks "$2") || return 0
  sleep "$b"
  c1=$(date +%s.%N)
  t1=$(proc_ticks "$TPID") && i1=$(proc_ticks "$2") || return 0
  awk -v hz="$(getconf CLK_TCK)" -v dt="$(awk -v x="$c0" -v y="$c1" 'BEGIN { print y - x }')" \
    -v t="$((t1 - t0))" -v i="$((i1 - i0))" 'BEGIN { printf "%.4f %.4f\n", t / hz / dt, i / hz / dt }' > "$1"
}

# Runs an initiator command in the background with the CPU probe beside it and waits for both. A run that outlives
# its ramp and runtime by RUN_SLACK seconds (120; e.g. a controller lost and reconnecting) is stopped.
run_measured() { # NAME LOG STARTUP CMD...
  local name=$1 log=$2 startup=$3 ipid ppid rc=0
  shift 3
  timeout --kill-after=10 $((RAMP + RUNTIME + ${RUN_SLACK:-120})) "$@" > "$log" 2>&1 &
  ipid=$!
  cpu_probe "$OUT/$name.cpu" "$ipid" "$startup" &
  ppid=$!
  wait "$ipid" || rc=$?
  kill "$ppid" 2>/dev/null || true
  wait "$ppid" 2>/dev/null || true
  return "$rc"
}

# ---- initiators ----
ours_perf() { # NAME URI MODE CELL
  local rw bs qd hipri=()
  read -r rw bs qd <<< "$(cell_args "$4")"
  [ "$3" = busy ] && hipri=(--hipri)
  echo "vs-spdk.sh: $1" >&2
  run_measured "$1" "$OUT/$1.stderr" 1 taskset -c "$PERF_CPU" "$ROOT/bin/nvmeof-perf" --target "$2" "${hipri[@]}" \
    --rw="$rw" --bs="$bs" --iodepth="$qd" --runtime="$RUNTIME" --ramp_time="$RAMP" --percentile_list=50:99:99.99 \
    --output-format=json --output="$OUT/$1.json" || echo "vs-spdk.sh: $1 failed, see $OUT/$1.stderr" >&2
}

spdk_perf() { # NAME PORT NQN CELL
  local rw bs qd
  read -r rw bs qd <<< "$(cell_args "$4")"
  echo "vs-spdk.sh: $1" >&2
  # shellcheck disable=SC2086
  run_measured "$1" "$OUT/$1.txt" 0.3 taskset -c "$PERF_CPU" "$SPDK_DIR/build/bin/spdk_nvme_perf" \
    -c "$(printf '0x%x' $((1 << PERF_CPU)))" -q "$qd" -o "$bs" -w "$rw" -t "$RUNTIME" -a "$RAMP" -L \
    ${SPDK_PERF_OPTS:-} -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$2 subnqn:$3" \
    || echo "vs-spdk.sh: $1 failed, see $OUT/$1.txt" >&2
}

fill_ours() { # URI: write the whole namespace once (and read it back: --verify) so reads are of real memory
  taskset -c "$PERF_CPU" "$ROOT/bin/nvmeof-perf" --target "$1" --rw=write --bs=128k --iodepth=8 --size=1g \
    --verify=crc32c --runtime="$FILL_SECONDS" --ramp_time=0 --output-format=json --output="$OUT/fill.json" \
    2> "$OUT/fill.stderr" || true
  python3 -c "import json,sys; b=json.load(open(sys.argv[1]))['jobs'][0]['write']['io_bytes']; \
print('vs-spdk.sh: fill wrote %.2f GiB%s' % (b/2**30, '' if b >= 2**30 else ' (LESS than the namespace: raise FILL_SECONDS)'), file=sys.stderr)" \
    "$OUT/fill.json" || true
}

OUR_URI="nvme+tcp://127.0.0.1:$PORT/$OUR_NQN"
SPDK_URI="nvme+tcp://127.0.0.1:$SPDK_PORT/$SPDK_NQN"
for mode in $MODES; do
  start_ours "$mode"
  fill_ours "$OUR_URI"
  for cell in $CELLS; do
    ours_perf "ours-$mode-$cell" "$OUR_URI" "$mode" "$cell"
    [ -n "${SPDK_DIR:-}" ] && spdk_perf "spdkperf-ours$mode-$cell" "$PORT" "$OUR_NQN" "$cell"
  done
  stop_target
done
if [ -n "${SPDK_DIR:-}" ]; then
  start_spdk
  fill_ours "$SPDK_URI"
  for cell in $CELLS; do
    spdk_perf "spdk-spdk-$cell" "$SPDK_PORT" "$SPDK_NQN" "$cell"
    for mode in $MODES; do
      ours_perf "ours$mode-spdk-$cell" "$SPDK_URI" "$mode" "$cell"
    done
  done
  stop_target
fi

cut -d' ' -f1-3 /proc/loadavg > "$OUT/load-end.txt"

# ---- the table ----
CELLS="$CELLS" MODES="$MODES" python3 - "$OUT" <<'EOF' | tee "$OUT/results.md"
import json, os, re, sys
out = sys.argv[1]
cells = os.environ["CELLS"].split()
modes = os.environ["MODES"].split()
names = {"qd1": "4k randread QD1 p50", "qd32": "4k randread QD32 IOPS", "qd128": "4k randread QD128 IOPS",
         "read128k": "128k read QD8 IOPS", "randwrite": "4k randwrite QD32 IOPS"}

def cpu(name, r):
    # CPU per I/O (µs) of each side, from the /proc samples taken inside the window (cpu_probe)
    try:
        t, i = (float(x) for x in open(os.path.join(out, name + ".cpu")).read().split())
    except Exception:
        return r
    if r["iops"] and t > 0 and i > 0:  # 0: a process starved for the whole sub-window (or a failed run)
        r["cpu_t"], r["cpu_i"] = t * 1e6 / r["iops"], i * 1e6 / r["iops"]
    return r

def ours(name):
    try:
        j = json.load(open(os.path.join(out, name + ".json")))
    except Exception:
        return None
    job = j["jobs"][0]
    d = job["write"] if job["write"]["total_ios"] > job["read"]["total_ios"] else job["read"]
    p = d["clat_ns"]["percentile"]
    return cpu(name, {"iops": d["iops"], "p50": p.get("50.000000", 0) / 1e3, "p99": p.get("99.000000", 0) / 1e3,
                      "p9999": p.get("99.990000", 0) / 1e3})

def spdk(name):
    try:
        text = open(os.path.join(out, name + ".txt")).read()
    except Exception:
        return None
    m = re.search(r"^\s*Total\s*:\s*([\d.]+)", text, re.M)
    if not m:
        return None
    r = {"iops": float(m.group(1))}
    for key, pct in (("p50", "50.00000"), ("p99", "99.00000"), ("p9999", "99.99000")):
        pm = re.search(r"^\s*" + re.escape(pct) + r"%\s*:\s*([\d.]+)us", text, re.M)
        r[key] = float(pm.group(1)) if pm else 0
    return cpu(name, r)

def us(x):
    return f"{x:.1f} µs" if x < 100 else f"{x:.0f} µs" if x < 10000 else f"{x / 1e3:.1f} ms"

def fmt(cell, r):
    if r is None:
        return "—"
    if not r["iops"]:
        return "no I/O completed (see the run's log)"
    tail = f"p99 {us(r['p99'])}" + (f", p99.99 {us(r['p9999'])}" if r["p9999"] else "")
    text = f"**{r['p50']:.1f} µs** ({tail})" if cell == "qd1" else f"**{r['iops'] / 1e3:.1f}K** ({tail})"
    if "cpu_t" in r:
        text += f"; CPU/IO i {r['cpu_i']:.2f} t {r['cpu_t']:.2f} µs"
    return text

cols = []
spdk_run = os.path.exists(os.path.join(out, "target-spdk.log"))
if spdk_run:
    cols.append(("SPDK→SPDK", lambda c: spdk(f"spdk-spdk-{c}")))
    for m in modes:
        cols.append((f"our perf ({m})→SPDK", lambda c, m=m: ours(f"ours{m}-spdk-{c}")))
    for m in modes:
        cols.append((f"SPDK perf→ours ({m})", lambda c, m=m: spdk(f"spdkperf-ours{m}-{c}")))
for m in modes:
    cols.append((f"ours→ours {m}", lambda c, m=m: ours(f"ours-{m}-{c}")))

def floor(mode):
    try:
        return open(os.path.join(out, f"floor-{mode}.txt")).read().split()
    except Exception:
        return ["?", "?", "?"]
fp, fb = floor("poll"), floor("block")

def load(when):
    try:
        return open(os.path.join(out, f"load-{when}.txt")).read().strip()
    except Exception:
        return "?"
print(f"Load average (1, 5, 15 min) at the start {load('start')}, at the end {load('end')}; "
      f"{os.cpu_count()} CPUs.\n")
print(f"Floor (loopback TCP ping-pong, 4 KiB read exchange, same cores): poll p50 {fp[0]} µs p99 {fp[1]} µs "
      f"({fp[2]} rt/s), block p50 {fb[0]} µs p99 {fb[1]} µs ({fb[2]} rt/s)\n")
print("Each figure: IOPS (QD1: p50 completion latency) with p99 and p99.99, and the CPU per I/O of the initiator (i) "
      "and the target (t) process: utime+stime from /proc/PID/stat inside the window, divided by the I/Os.\n")
print("| 4 KiB unless noted | " + " | ".join(c[0] for c in cols) + " | floor |")
print("|---|" + "---|" * (len(cols) + 1))
for cell in cells:
    fl = f"poll p50 {fp[0]} µs, block p50 {fb[0]} µs" if cell == "qd1" else "—"
    print(f"| {names[cell]} | " + " | ".join(fmt(cell, f(cell)) for _, f in cols) + f" | {fl} |")
if spdk_run:
    print("\nRatios to SPDK→SPDK in the same run. Bold: IOPS ours/SPDK (higher is better), QD1 p50 ours/SPDK (lower "
          "is better); p99 ours/SPDK; CPU per I/O ours/SPDK, initiator (i) and target (t) (lower is better).\n")
    print("| cell | " + " | ".join(c[0] for c in cols[1:]) + " |")
    print("|---|" + "---|" * (len(cols) - 1))

    def ratio(a, b):
        return f"{a / b:.2f}" if a and b else "—"
    for cell in cells:
        base = cols[0][1](cell)
        row = []
        for _, f in cols[1:]:
            r = f(cell)
            if base is None or r is None:
                row.append("—")
                continue
            main = ratio(r["p50"], base["p50"]) if cell == "qd1" else ratio(r["iops"], base["iops"])
            text = f"**{main}** (p99 {ratio(r['p99'], base['p99'])}"
            if "cpu_t" in r and "cpu_t" in base:
                text += f"; CPU i {ratio(r['cpu_i'], base['cpu_i'])} t {ratio(r['cpu_t'], base['cpu_t'])}"
            row.append(text + ")")
        print(f"| {names[cell]} | " + " | ".join(row) + " |")
EOF
