#!/usr/bin/env bash
# perf/scale.sh: the "Scale" goal of issue 13 measured: one target, CONTROLLERS x QUEUES I/O queues (64 x 4 = 256
# connections by default), over NVMe/TCP and NVMe/RDMA, on this machine's cores.
#
#   perf/scale.sh [OUTDIR]
#
# For each transport in TRANSPORTS ("tcp rdma"; rdma runs over the software RNIC unless the machine has an RDMA
# device, and is then labelled EMULATED) it starts our target (bin/nvmeof-target's daemon, a 1 GiB RAM namespace,
# default mode: spin 200 us then sleep; MODE=busy adds --busy-poll, which spins by design) pinned to core TARGET_CPU
# (1), with -XX:NativeMemoryTracking=summary, and runs our perf pinned to core PERF_CPU (0), one JVM holding every
# queue: `--controllers CONTROLLERS --nr_io_queues QUEUES --idle_seconds ...` then 4k randread at QD1 on every queue.
# It measures:
#   (a) idle CPU: the target process's utime+stime (/proc/PID/stat, 10 ms ticks) over IDLE seconds with every queue
#       connected and no I/O, as % of one core; also the perf tool's own figure (the target's log page 0xC0, ns) and
#       the target's busiest threads over that window (OUTDIR/<transport>-idle-threads.txt);
#   (b) memory: the target's RSS, Java heap in use (after a full GC) and NMT committed outside the heap and the JIT's
#       arenas, before anything
#       connects and with every queue connected (idle), and the difference per I/O queue (admin queues included in
#       the difference: CONTROLLERS more connections);
#   (c) aggregate 4k randread IOPS over all queues at QD IODEPTH (1) with p50/p99 (RUNTIME s after RAMP s).
# Prints a Markdown table (OUTDIR/results.md); every output stays in OUTDIR.
#
# Knobs: CONTROLLERS (64), QUEUES (4), IDLE (20 s measured; the idle phase is IDLE+10 s), RUNTIME (10), RAMP (3),
# TARGET_CPU (1), PERF_CPU (0), PORT (a free one), TRANSPORTS ("tcp rdma"), MODE (default | busy), TARGET_CP (the target's
# class path, default this tree's perf/build: point it at another tree's perf/build to measure that target; the
# software RNIC's two ends must come from the same tree, so PERF_CP may put that tree's transport-rdma jar first),
# TARGET_JAVA_OPTS (extra JVM options for the target), IODEPTH (1: the depth of the I/O phase; the host sizes each
# queue to it, IODEPTH+1 entries, which is what a target without a shared receive queue keeps receive buffers for),
# ADDR (127.0.0.1: the address the target listens on; the peer
# VM's Soft-RoCE runs use 10.0.2.15, see perf/scale-softroce.sh). Without jcmd (a JRE only) the heap and NMT columns
# say "?" and RSS stays.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bin/lib.sh
. "$ROOT/bin/lib.sh"
OUT=${1:-$ROOT/perf/build/scale-$(date +%Y%m%d-%H%M%S)}
CONTROLLERS=${CONTROLLERS:-64}
QUEUES=${QUEUES:-4}
IDLE=${IDLE:-20}
RUNTIME=${RUNTIME:-10}
RAMP=${RAMP:-3}
TARGET_CPU=${TARGET_CPU:-1}
PERF_CPU=${PERF_CPU:-0}
PORT=${PORT:-$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')}
TRANSPORTS=${TRANSPORTS:-tcp rdma}
MODE=${MODE:-default}
ADDR=${ADDR:-127.0.0.1}
IODEPTH=${IODEPTH:-1}
NQN=nqn.2024-01.io.nvmeof:scale
mkdir -p "$OUT"
HAVE_JCMD=1
command -v jcmd >/dev/null || { HAVE_JCMD=; echo "scale.sh: no jcmd here: heap and NMT not measured, RSS only" >&2; }
for c in python3 taskset; do
  command -v $c >/dev/null || { echo "scale.sh: $c is needed" >&2; exit 1; }
done
JAR=$(ls "$ROOT"/perf/build/nvmeof-perf-*.jar 2>/dev/null | grep -v -- '-tests.jar' | head -1 || true)
if [ -z "$JAR" ] || [ ! -d "$ROOT/perf/build/lib" ]; then
  echo "scale.sh: building perf (mvn package, no tests)..." >&2
  (cd "$ROOT" && mvn -B -q -pl perf -am package -DskipTests -Dmaven.test.skip=true -Dspotless.check.skip=true) >&2
  JAR=$(ls "$ROOT"/perf/build/nvmeof-perf-*.jar | grep -v -- '-tests.jar' | head -1)
fi
PERF_CP=${PERF_CP:-$JAR:$ROOT/perf/build/lib/*}
TARGET_CP=${TARGET_CP:-$PERF_CP}
HZ=$(getconf CLK_TCK)
echo "scale.sh: results in $OUT; $CONTROLLERS controllers x $QUEUES I/O queues; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2

# shellcheck source=perf/bench-lib.sh
. "$ROOT/perf/bench-lib.sh"
PPID_PERF=
stop_all() {
  if [ -n "$PPID_PERF" ]; then
    kill "$PPID_PERF" 2>/dev/null || true
    wait "$PPID_PERF" 2>/dev/null || true
  fi
  stop_target
}
trap stop_all EXIT

cpu_ticks() { # PID -> utime+stime in clock ticks
  awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "/proc/$1/stat"
}
rss_kib() { awk '/^VmRSS:/ {print $2}' "/proc/$1/status"; }
threads() { awk '/^Threads:/ {print $2}' "/proc/$1/status"; }
thread_ticks() { # PID -> "tid ticks name" per thread
  for t in /proc/"$1"/task/*; do
    [ -r "$t/stat" ] || continue
    echo "$(basename "$t") $(awk '{ sub(/^.*\) /, ""); print $12 + $13 }' "$t/stat" 2>/dev/null || echo 0) $(cat "$t/comm" 2>/dev/null || echo ?)"
  done
}
# heap in use after a full GC (KiB) and NMT committed total (KiB)
heap_kib() {
  [ -n "$HAVE_JCMD" ] || return 0
  jcmd "$1" GC.run > /dev/null 2>&1 || true
  jcmd "$1" GC.heap_info 2>/dev/null | awk '/garbage-first heap/ { for (i = 1; i <= NF; i++) if ($i == "used") { v = $(i+1); sub(/K,?/, "", v); print v; exit } }'
}
# NMT committed KiB outside the Java heap (measured by heap_kib) and the JIT compilers' scratch arenas (Arena Chunk,
# which grow and shrink with compilation, not with queues); the summary goes into FILE
nmt() { # PID FILE
  [ -n "$HAVE_JCMD" ] || return 0
  jcmd "$1" VM.native_memory summary > "$2" 2>&1 || true
  awk '
    function committed(line,   v) { v = line; sub(/.*committed=/, "", v); sub(/KB.*/, "", v); return v + 0 }
    /^Total:/ { total = committed($0) }
    /- +Java Heap / { heap = committed($0) }
    /- +Arena Chunk / { arena = committed($0) }
    END { print total - heap - arena }' "$2"
}

ROWS=()
for tr in $TRANSPORTS; do
  flags=()
  [ "$MODE" = busy ] && flags=(--busy-poll)
  rm -f "$OUT/$tr-target.log" # wait_listening must not find the line of an earlier start
  # shellcheck disable=SC2046,SC2086
  taskset -c "$TARGET_CPU" java $(nvmeof_jvm_opts) -XX:NativeMemoryTracking=summary ${TARGET_JAVA_OPTS:-} -cp "$TARGET_CP" \
    io.nvmeof.target.daemon.TargetDaemon --listen "$tr://$ADDR:$PORT" --nqn "$NQN" --no-rpc \
    --namespace size=1g,bs=4096 "${flags[@]}" > "$OUT/$tr-target.log" 2>&1 &
  TPID=$!
  wait_listening "$OUT/$tr-target.log" scale.sh
  sleep 2
  heap0=$(heap_kib "$TPID")
  nmt0=$(nmt "$TPID" "$OUT/$tr-nmt-before.txt")
  rss0=$(rss_kib "$TPID")
  thr0=$(threads "$TPID")

  # shellcheck disable=SC2046,SC2086
  taskset -c "$PERF_CPU" java $(nvmeof_jvm_opts) ${NVMEOF_JAVA_OPTS:-} -cp "$PERF_CP" io.nvmeof.perf.PerfCli \
    --target "nvme+$tr://$ADDR:$PORT/$NQN" --setup "$tr$([ "$MODE" = busy ] && echo -hipri)" \
    --controllers "$CONTROLLERS" --nr_io_queues "$QUEUES" --idle_seconds $((IDLE + 10)) \
    --rw randread --bs 4k --iodepth "$IODEPTH" --runtime "$RUNTIME" --ramp_time "$RAMP" --group_reporting \
    --output-format json --output "$OUT/$tr-perf.json" 2> "$OUT/$tr-perf.err" &
  PPID_PERF=$!
  cs=$(cpu_ticks "$TPID")
  ts=$(date +%s.%N)
  maxthr=0
  failed=
  for _ in $(seq 1 3000); do
    grep -q "nvmeof-perf: idle:" "$OUT/$tr-perf.err" 2>/dev/null && break
    n=$(threads "$TPID" 2>/dev/null || echo 0)
    [ "$n" -gt "$maxthr" ] && maxthr=$n
    if ! kill -0 "$PPID_PERF" 2>/dev/null; then failed=1; break; fi
    sleep 0.1
  done
  if [ -n "$failed" ]; then
    # not all queues came up (e.g. a target with a thread per queue on too few cores): record what happened
    ce=$(cpu_ticks "$TPID")
    te=$(date +%s.%N)
    wait "$PPID_PERF" 2>/dev/null || true
    PPID_PERF=
    reason=$(grep "^nvmeof-perf:" "$OUT/$tr-perf.err" | tail -1 | tr '|' '/')
    reconnects=$(grep -c "LIVE -> RECONNECTING" "$OUT/$tr-perf.err" || true)
    echo "scale.sh: perf over $tr ended before its idle phase: $reason (see $OUT/$tr-perf.err)" >&2
    stop_target
    ROWS+=("$tr|FAILED|$cs|$ce|$ts|$te|$maxthr|$reconnects|$reason")
    continue
  fi
  sleep 2 # let the last connections settle
  thread_ticks "$TPID" > "$OUT/$tr-threads-0.txt"
  c0=$(cpu_ticks "$TPID")
  t0=$(date +%s.%N)
  sleep "$IDLE"
  c1=$(cpu_ticks "$TPID")
  t1=$(date +%s.%N)
  thread_ticks "$TPID" > "$OUT/$tr-threads-1.txt"
  thr1=$(threads "$TPID")
  heap1=$(heap_kib "$TPID")
  nmt1=$(nmt "$TPID" "$OUT/$tr-nmt-idle.txt")
  rss1=$(rss_kib "$TPID")
  ss -tn state established "( sport = :$PORT )" 2>/dev/null | tail -n +2 | wc -l > "$OUT/$tr-tcp-connections.txt" || true
  wait "$PPID_PERF" || echo "scale.sh: perf over $tr failed (exit $?), see $OUT/$tr-perf.err" >&2
  PPID_PERF=
  rss2=$(rss_kib "$TPID")
  stop_target
  python3 - "$OUT/$tr-threads-0.txt" "$OUT/$tr-threads-1.txt" "$HZ" "$t0" "$t1" > "$OUT/$tr-idle-threads.txt" <<'EOF'
import sys
a = {l.split()[0]: (int(l.split()[1]), l.split(None, 2)[2].strip() if len(l.split()) > 2 else "?") for l in open(sys.argv[1]) if l.strip()}
b = {l.split()[0]: (int(l.split()[1]), l.split(None, 2)[2].strip() if len(l.split()) > 2 else "?") for l in open(sys.argv[2]) if l.strip()}
hz, win = int(sys.argv[3]), float(sys.argv[5]) - float(sys.argv[4])
d = sorted(((b[t][0] - a.get(t, (0,))[0], b[t][1]) for t in b), reverse=True)
print(f"target threads' CPU over the idle window ({win:.1f} s), % of one core:")
for ticks, name in d[:12]:
    print(f"  {100.0 * ticks / hz / win:6.2f} %  {name}")
EOF
  ROWS+=("$tr|$c0|$c1|$t0|$t1|$rss0|$rss1|$rss2|$heap0|$heap1|$nmt0|$nmt1|$thr0|$thr1")
done

IODEPTH="$IODEPTH" python3 - "$OUT" "$HZ" "$CONTROLLERS" "$QUEUES" "$MODE" "${ROWS[@]}" > "$OUT/results.md" <<'EOF'
import json, sys, os, platform
out, hz, ctrls, queues, mode = sys.argv[1], int(sys.argv[2]), int(sys.argv[3]), int(sys.argv[4]), sys.argv[5]
n = ctrls * queues
print(f"Scale: one target, {ctrls} controllers x {queues} I/O queues = {n} I/O queues (+{ctrls} admin queues), "
      f"target mode {mode}, I/O depth {os.environ.get('IODEPTH', '1')}; "
      f"load average at the end {open('/proc/loadavg').read().split()[:3]}")
print()
print("| transport | idle CPU, target (% of a core): /proc / log page | idle CPU, initiator | target threads | "
      "RSS before → idle (MiB) | per I/O queue: RSS / heap after GC / NMT non-heap (KiB, upper bounds: one-off costs included) | 4k randread over all queues: IOPS, p50, p99 | queues with I/O |")
print("|---|---|---|---|---|---|---|---|")
for row in sys.argv[6:]:
    if row.split("|")[1] == "FAILED":
        tr, _, c0, c1, t0, t1, maxthr, reconnects, reason = row.split("|")
        cpu = 100.0 * (int(c1) - int(c0)) / hz / max(0.001, float(t1) - float(t0))
        print(f"| {tr} | not all queues came up: {reason}; {reconnects} controller(s) lost a queue while connecting; "
              f"target CPU {cpu:.0f}% of a core over {float(t1) - float(t0):.0f} s of connecting | | up to {maxthr} | | | | |")
        continue
    tr, c0, c1, t0, t1, rss0, rss1, rss2, heap0, heap1, nmt0, nmt1, thr0, thr1 = row.split("|")
    win = float(t1) - float(t0)
    cpu = 100.0 * (int(c1) - int(c0)) / hz / win
    try:
        j = json.load(open(os.path.join(out, tr + "-perf.json")))
        nv = j["nvmeof"]
        job = j["jobs"][0]["read"]
        pct = job["clat_ns"]["percentile"]
        iops = f"{job['iops'] / 1000:.1f}K, {pct['50.000000'] / 1000:.1f} µs, {pct['99.000000'] / 1000:.1f} µs"
        idle = nv.get("idle", {})
        lp = idle.get("target_pct_of_core")
        ini = idle.get("initiator_pct_of_core")
        qwio = f"{nv['queues']['io_queues_with_io']}/{nv['queues']['io_queues']}"
        label = tr + (" (EMULATED)" if nv.get("emulated") else "")
    except Exception as e:  # perf failed: say so in the row
        iops, lp, ini, qwio, label = f"failed ({e.__class__.__name__})", None, None, "?", tr
    def f(v):
        return "?" if v in (None, "") else f"{float(v):.2f}"
    def per(a, b):
        try:
            return f"{(int(b) - int(a)) / n:.1f}"
        except ValueError:
            return "?"
    print(f"| {label} | {cpu:.2f} / {f(lp)} | {f(ini)} | {thr0} → {thr1} | {int(rss0) / 1024:.0f} → {int(rss1) / 1024:.0f} "
          f"(after I/O {int(rss2) / 1024:.0f}) | {per(rss0, rss1)} / {per(heap0, heap1)} / {per(nmt0, nmt1)} | {iops} | {qwio} |")
EOF
cat "$OUT/results.md"
for tr in $TRANSPORTS; do [ -f "$OUT/$tr-idle-threads.txt" ] && cat "$OUT/$tr-idle-threads.txt"; done
exit 0
