#!/usr/bin/env bash
# perf/tails.sh: where the p99.99 of a deep cell comes from. Runs one cell (4k randread QD32 by default) of our perf
# against our target, pinned as perf/vs-spdk.sh pins them (target core TARGET_CPU, initiator core PERF_CPU), traces
# the scheduler for TRACE_SECONDS inside the measured window (perf record -a, sched_switch/sched_waking), and prints
# for the I/O threads of both JVMs: how long they were runnable but off their CPU (the distribution and the longest
# stalls) and who ran on that CPU instead (threads of both JVMs named by their Java names).
#
#   perf/tails.sh [OUTDIR]                                        # ours, traced
#   SPDK_DIR=/path/to/built/spdk ROUNDS=2 perf/tails.sh [OUTDIR]   # ours and SPDK->SPDK alternated, first round traced
#   VARIANTS="plain idle" ROUNDS=3 TRACE=0 perf/tails.sh           # p99.99 only, variants alternated
#
# Variants (VARIANTS, applied to both JVMs once the queue is connected, and again before the trace):
#   plain   as vs-spdk.sh: each JVM, all its threads, on its own core
#   float   only the I/O threads stay on their core; every other thread of both JVMs may run on both cores
#   fifo    as plain, and the I/O threads SCHED_FIFO priority 1 (chrt): no CFS thread can preempt them; the kernel
#           still gives CFS threads 5% of each second (sched_rt_runtime_us) if they have been starved
#   idle    as plain, and every other thread of both JVMs SCHED_IDLE (chrt -i): they run when the I/O thread sleeps
#           or blocks (at a safepoint, for example) and otherwise get a tiny share
#   spdk    SPDK->SPDK instead of ours (SPDK_DIR: a built tree; nvmf_tgt + spdk_nvme_perf as perf/vs-spdk.sh runs
#           them, no fill), traced the same way: its reactor and its perf's polling thread are the watched threads
# fifo starves every other thread of the core, the JVMs' own included (measured: our perf's window shrank from 10 to
# 3 s), and on a 2-core machine where both cores hold a busy poller, the whole machine: not for shared machines.
# Knobs: MODE (busy: --hipri/--busy-poll; default), RW (randread), BS (4096), QD (32), RUNTIME (10), RAMP (10),
# TRACE (1: trace one run per variant, the first round; 0: never), TRACE_SECONDS (5), ROUNDS (1), TARGET_CPU (1),
# PERF_CPU (0), PORT (4452), FLOOR (1: also the C ping-pong's p99.99 on the same two cores, pinned the same way),
# KEEP_TRACE (0: the perf.data of a traced run is deleted once summarised).
# Every run's output stays in OUTDIR; the summary is OUTDIR/summary.md.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
# shellcheck source=bin/lib.sh
. "$ROOT/bin/lib.sh"
OUT=${1:-$ROOT/perf/build/tails-$(date +%Y%m%d-%H%M%S)}
MODE=${MODE:-busy}
RW=${RW:-randread}
BS=${BS:-4096}
QD=${QD:-32}
RUNTIME=${RUNTIME:-10}
RAMP=${RAMP:-10}
TRACE=${TRACE:-1}
TRACE_SECONDS=${TRACE_SECONDS:-5}
ROUNDS=${ROUNDS:-1}
VARIANTS=${VARIANTS:-plain${SPDK_DIR:+ spdk}}
TARGET_CPU=${TARGET_CPU:-1}
PERF_CPU=${PERF_CPU:-0}
PORT=${PORT:-4452}
FLOOR=${FLOOR:-1}
KEEP_TRACE=${KEEP_TRACE:-0}
SPDK_PORT=${SPDK_PORT:-4462}
SPDK_NQN=nqn.2016-06.io.spdk:tails
NQN=nqn.2024-01.io.nvmeof:tails
URI="nvme+tcp://127.0.0.1:$PORT/$NQN"
mkdir -p "$OUT"
for tool in python3 taskset chrt jcmd ss; do
  command -v $tool >/dev/null || { echo "tails.sh: $tool is needed" >&2; exit 1; }
done
if [ "$FLOOR" = 1 ] && ! command -v cc >/dev/null; then
  echo "tails.sh: a C compiler (cc) is needed for FLOOR=1" >&2
  exit 1
fi
if [ "$TRACE" = 1 ] && ! command -v perf >/dev/null; then
  echo "tails.sh: perf (linux-tools) is needed for TRACE=1" >&2
  exit 1
fi
# shellcheck source=perf/bench-lib.sh
. "$ROOT/perf/bench-lib.sh"
case " $VARIANTS " in *" spdk "*) require_spdk_tree tails.sh ;; esac
SPDK_TGT_OPTS=${SPDK_TGT_OPTS:-}
SPDK_PERF_OPTS=${SPDK_PERF_OPTS:-}
[ "$TRACE_SECONDS" -lt "$RUNTIME" ] || { echo "tails.sh: TRACE_SECONDS must be less than RUNTIME" >&2; exit 2; }
"$ROOT/bin/nvmeof-perf" --help > /dev/null # builds on first use, outside the measured runs
JAR=$(ls "$ROOT"/perf/build/nvmeof-perf-*.jar | grep -v -- '-tests.jar' | head -1)
conditions() { echo "$(date -u +%H:%M:%S) UTC, load average $(cut -d' ' -f1-3 /proc/loadavg)"; }
echo "tails.sh: results in $OUT; $(conditions)" | tee "$OUT/conditions.txt" >&2

TPID= PPID_=
stop_all() {
  for p in $PPID_ $TPID; do
    kill "$p" 2>/dev/null || true
  done
  for p in $PPID_ $TPID; do
    for _ in $(seq 1 50); do kill -0 "$p" 2>/dev/null || break; sleep 0.1; done
    kill -9 "$p" 2>/dev/null || true
    wait "$p" 2>/dev/null || true
  done
  TPID= PPID_=
}
trap stop_all EXIT

io_tids() { # PID PREFIX: the tids of PID's threads whose name starts with PREFIX (Linux keeps 15 characters)
  local t
  for t in /proc/"$1"/task/*; do
    case "$(cat "$t/comm" 2>/dev/null)" in "$2"*) echo "${t##*/}" ;; esac
  done
}
other_tids() { # PID PREFIX
  local t
  for t in /proc/"$1"/task/*; do
    case "$(cat "$t/comm" 2>/dev/null)" in "$2"*) ;; *) echo "${t##*/}" ;; esac
  done
}
apply_variant() { # VARIANT: applies it to both JVMs' threads; prints the I/O threads' ids (target's, initiator's)
  local v=$1 t
  local tio pio
  tio=$(io_tids "$TPID" nvme-tcp-io-) pio=$(io_tids "$PPID_" nvme-tcp-host-)
  case $v in
    plain) ;;
    float)
      for t in $(other_tids "$TPID" nvme-tcp-io-) $(other_tids "$PPID_" nvme-tcp-host-); do
        taskset -p -c "$TARGET_CPU,$PERF_CPU" "$t" > /dev/null 2>&1 || true
      done ;;
    fifo)
      for t in $tio $pio; do chrt -f -p 1 "$t"; done ;;
    idle)
      for t in $(other_tids "$TPID" nvme-tcp-io-) $(other_tids "$PPID_" nvme-tcp-host-); do
        chrt -i -p 0 "$t" 2>/dev/null || true
      done ;;
    *) echo "tails.sh: unknown variant $v" >&2; exit 2 ;;
  esac
  echo "$(echo $tio) $(echo $pio)"
}
names() { # write "TID side:java-name" for both JVMs (jcmd Thread.print gives the nid of every Java and VM thread)
  local side pid
  for side in target:$TPID initiator:$PPID_; do
    pid=${side#*:}
    timeout 20 jcmd "$pid" Thread.print 2>/dev/null | python3 -c '
import re, sys
side = sys.argv[1]
for line in sys.stdin:
    m = re.match(r"^\"(.*?)\".*\bnid=(0x[0-9a-f]+|\d+)", line)
    if m:
        nid = m.group(2)
        print(int(nid, 16) if nid.startswith("0x") else int(nid), side + ":" + m.group(1))
' "${side%%:*}" || true
    for t in /proc/"$pid"/task/*; do echo "${t##*/} ${side%%:*}:$(cat "$t/comm" 2>/dev/null)"; done
  done | awk '!seen[$1]++' || true
}

# Every JIT compilation of our JVMs is logged with the wall-clock time in ms (one line each, written by the compiler
# thread), so that the summary can count the compilations inside the trace window.
jit_log() { echo "-Xlog:jit+compilation=debug:file=$1:timemillis"; }

start_ours() { # NAME: our target on TARGET_CPU, our perf on PERF_CPU; returns once both I/O threads exist
  local name=$1 flags=() hipri=()
  [ "$MODE" = busy ] && flags=(--busy-poll) hipri=(--hipri)
  rm -f "$OUT/$name-target.log" # wait_listening must not find the line of an earlier start
  # shellcheck disable=SC2046
  (exec taskset -c "$TARGET_CPU" java $(nvmeof_jvm_opts) "$(jit_log "$OUT/$name-target-jit.log")" \
    -cp "$JAR:$ROOT/perf/build/lib/*" \
    io.nvmeof.target.daemon.TargetDaemon --listen "tcp://127.0.0.1:$PORT" --nqn "$NQN" \
    --namespace size=1g,bs=4096 --memory-budget 2g --rpc-socket "$OUT/rpc.sock" "${flags[@]}" \
    > "$OUT/$name-target.log" 2>&1) &
  TPID=$!
  wait_listening "$OUT/$name-target.log" tails.sh
  (NVMEOF_JAVA_OPTS="${NVMEOF_JAVA_OPTS:-} $(jit_log "$OUT/$name-initiator-jit.log")" \
    exec taskset -c "$PERF_CPU" "$ROOT/bin/nvmeof-perf" --target "$URI" "${hipri[@]}" --rw="$RW" --bs="$BS" \
    --iodepth="$QD" --runtime="$RUNTIME" --ramp_time="$RAMP" --percentile_list=50:99:99.9:99.99 \
    --output-format=json --output="$OUT/$name.json" 2> "$OUT/$name.stderr") &
  PPID_=$!
  local t0=$SECONDS
  until [ -n "$(io_tids "$PPID_" nvme-tcp-host-)" ] && [ -n "$(io_tids "$TPID" nvme-tcp-io-)" ]; do
    kill -0 "$PPID_" 2>/dev/null || { echo "tails.sh: perf failed, see $OUT/$name.stderr" >&2; exit 1; }
    [ $((SECONDS - t0)) -lt 60 ] || { echo "tails.sh: no I/O threads after 60 s" >&2; exit 1; }
    sleep 0.2
  done
}

# NAME: nvmf_tgt (malloc bdev) on TARGET_CPU, spdk_nvme_perf on PERF_CPU, as perf/vs-spdk.sh runs them; without
# SPDK's core lock, so that another SPDK application on the same core neither stops this one nor is stopped by it
start_spdk() {
  local name=$1
  start_spdk_target "$OUT/$name-target.log" "$OUT/spdk.sock" tails.sh
  # shellcheck disable=SC2086
  (exec taskset -c "$PERF_CPU" "$SPDK_DIR/build/bin/spdk_nvme_perf" -c "$(printf '0x%x' $((1 << PERF_CPU)))" \
    -q "$QD" -o "$BS" -w "$RW" -t "$RUNTIME" -a "$RAMP" -L $SPDK_PERF_OPTS \
    -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$SPDK_PORT subnqn:$SPDK_NQN" > "$OUT/$name.txt" 2>&1) &
  PPID_=$!
  local t0=$SECONDS
  # its output is block-buffered (nothing until it exits): wait for its connections instead (admin and I/O queue)
  until [ "$(ss -Htn state established "( dport = :$SPDK_PORT )" 2>/dev/null | wc -l)" -ge 2 ]; do
    kill -0 "$PPID_" 2>/dev/null || { echo "tails.sh: spdk_nvme_perf failed, see $OUT/$name.txt" >&2; exit 1; }
    [ $((SECONDS - t0)) -lt 60 ] || { echo "tails.sh: spdk_nvme_perf did not start in 60 s" >&2; exit 1; }
    sleep 0.2
  done
}

busiest_tid() { # PID: the thread that has used the most CPU (SPDK's reactor or perf's polling thread)
  local t best= most=-1 stat n
  for t in /proc/"$1"/task/*; do
    stat=$(cat "$t/stat" 2>/dev/null) || continue
    stat=${stat##*) }
    # shellcheck disable=SC2086
    set -- $stat
    n=$((${12} + ${13}))
    [ "$n" -gt "$most" ] && most=$n best=${t##*/}
  done
  echo "$best"
}

run_cell() { # NAME VARIANT TRACED(0/1)
  local name=$1 v=$2 traced=$3 tids
  if [ "$v" = spdk ]; then start_spdk "$name"; else start_ours "$name"; fi
  local t_conn=$SECONDS
  [ "$v" = spdk ] || apply_variant "$v" > /dev/null
  sleep $((RAMP > 2 ? RAMP - 2 : 0))
  if [ "$v" = spdk ]; then
    tids="$(busiest_tid "$TPID") $(busiest_tid "$PPID_")"
  else
    tids=$(apply_variant "$v") # again: threads started during the ramp (compiler threads are added on demand)
  fi
  echo "$tids" > "$OUT/$name-io-tids.txt"
  for t in $tids; do
    printf '%s %s %s\n' "$t" "$(cat /proc/*/task/"$t"/comm 2>/dev/null | head -1)" "$(chrt -p "$t" | head -1 | sed 's/.*: //')"
  done > "$OUT/$name-io-threads.txt"
  # thread names now, in the ramp: jcmd stops the JVM at a safepoint, which must not fall in the measured window
  if [ "$traced" = 1 ]; then
    if [ "$v" = spdk ]; then
      for t in /proc/"$TPID"/task/*; do echo "${t##*/} nvmf_tgt:$(cat "$t/comm" 2>/dev/null)"; done
      for t in /proc/"$PPID_"/task/*; do echo "${t##*/} spdk_nvme_perf:$(cat "$t/comm" 2>/dev/null)"; done
    else
      names
    fi > "$OUT/$name-names.txt"
  fi
  # the measured window starts about RAMP s after the connection (JVM start-up before it is not counted)
  local wait_s=$((t_conn + RAMP + 1 - SECONDS))
  [ $wait_s -gt 0 ] && sleep $wait_s
  if [ "$traced" = 1 ]; then
    head -1 /proc/stat > "$OUT/$name-stat-before.txt"
    date +%s%3N > "$OUT/$name-trace-times.txt"
    perf record -q -m 1024 -e sched:sched_switch -e sched:sched_waking -e sched:sched_migrate_task -a \
      -o "$OUT/$name-sched.data" -- sleep "$TRACE_SECONDS" 2> "$OUT/$name-perf-record.log" || true
    head -1 /proc/stat > "$OUT/$name-stat-after.txt"
    date +%s%3N >> "$OUT/$name-trace-times.txt"
    # threads started since the names were taken (compiler threads come and go): their Linux names
    for side in target:$TPID initiator:$PPID_; do
      for t in /proc/"${side#*:}"/task/*; do echo "${t##*/} ${side%%:*}:$(cat "$t/comm" 2>/dev/null)"; done
    done >> "$OUT/$name-names.txt"
  fi
  wait "$PPID_" || echo "tails.sh: $name: perf failed, see $OUT/$name.stderr" >&2
  PPID_=
  stop_all
  if [ "$traced" = 1 ]; then
    perf script -i "$OUT/$name-sched.data" -F tid,cpu,time,event,trace 2> /dev/null \
      | python3 "$ROOT/perf/sched-stalls.py" --tids "$(echo $tids | tr ' ' ,)" --names "$OUT/$name-names.txt" \
      > "$OUT/$name-stalls.md"
    [ "$KEEP_TRACE" = 1 ] || rm -f "$OUT/$name-sched.data" # tens of MB a run; the summary stays
  fi
}

summary_line() { # NAME VARIANT: one Markdown row from the perf JSON and, if traced, the stall table
  python3 - "$OUT" "$1" "$2" "$QD" "$RUNTIME" "$TRACE_SECONDS" <<'EOF'
import json, os, re, sys
out, name, variant, qd, runtime, trace_s = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), float(sys.argv[5]), float(sys.argv[6])
if variant == "spdk":
    # spdk_nvme_perf -L: "Total : IOPS MiB/s avg min max" (µs) and "99.99000% : 123.456us" lines
    try:
        text = open(os.path.join(out, name + ".txt")).read()
        tot = re.search(r"^\s*Total\s*:\s*([\d.]+)\s+[\d.]+\s+[\d.]+\s+[\d.]+\s+([\d.]+)", text, re.M)
        iops, mx = float(tot.group(1)), float(tot.group(2))
    except Exception:
        print(f"| {name} | {variant} | failed |"); sys.exit()
    def pc(k):
        m = re.search(r"^\s*" + re.escape(k) + r"%\s*:\s*([\d.]+)us", text, re.M)
        return float(m.group(1)) if m else 0
    total_ios = iops * runtime
    row = [name, variant + " (SPDK→SPDK)", f"{iops/1e3:.1f}K", f"{pc('50.00000'):.0f}", f"{pc('99.00000'):.0f}",
           f"{pc('99.90000'):.0f}", f"{pc('99.99000'):.0f}", f"{mx:.0f}"]
else:
    try:
        job = json.load(open(os.path.join(out, name + ".json")))["jobs"][0]
    except Exception:
        print(f"| {name} | {variant} | failed |"); sys.exit()
    d = job["write"] if job["write"]["total_ios"] > job["read"]["total_ios"] else job["read"]
    p = d["clat_ns"]["percentile"]
    pc = lambda k: p.get(k, 0) / 1e3
    total_ios = d["total_ios"]
    row = [name, variant, f"{d['iops']/1e3:.1f}K", f"{pc('50.000000'):.0f}", f"{pc('99.000000'):.0f}",
           f"{pc('99.900000'):.0f}", f"{pc('99.990000'):.0f}", f"{d['clat_ns']['max']/1e3:.0f}"]
stalls = os.path.join(out, name + "-stalls.md")
if os.path.exists(stalls):
    # stalls of >= 1 ms of any I/O thread in the trace, scaled to the measured window, x QD I/Os each, against
    # the 0.01 % of I/Os that are above p99.99
    n = 0
    mx = 0
    for line in open(stalls):
        cols = [c.strip() for c in line.strip().strip("|").split("|")]
        # threads that ran under 1 % of the trace (the admin queue's loop) hold no I/O: their stalls delay none
        if len(cols) == 12 and cols[1].replace(".", "").isdigit() and float(cols[1]) >= 1:
            n += sum(int(c) for c in cols[6:10])
            mx = max(mx, float(cols[10]))
    delayed = n * runtime / trace_s * qd
    row += [str(n), f"{mx:.0f}", f"{delayed:.0f} vs {total_ios * 1e-4:.0f}"]
else:
    row += ["—", "—", "—"]
# JIT compilations (all tiers / tier 4 = C2) of each JVM inside the trace window
jit = []
try:
    t0, t1 = (int(l) for l in open(os.path.join(out, name + "-trace-times.txt")))
    for side in ("target", "initiator"):
        n = n4 = 0
        for line in open(os.path.join(out, f"{name}-{side}-jit.log")):
            m = re.match(r"\[(\d+)ms\]\s+\d+\s+(?:\S\s+)*?([0-4])\s", line)
            if m and "made not entrant" not in line and t0 <= int(m.group(1)) <= t1:
                n += 1
                n4 += m.group(2) == "4"
        jit.append(f"{side[0]} {n}/{n4}")
except Exception:
    pass
row.append(", ".join(jit) if jit else "—")
print("| " + " | ".join(row) + " |")
EOF
}

damon() { # the kernel's DAMON monitors, if any: each wakes every sample interval and works for ms in one stretch
  local k
  for k in /sys/kernel/mm/damon/admin/kdamonds/[0-9]*; do
    [ "$(cat "$k/state" 2>/dev/null)" = on ] || continue
    echo "kdamond pid $(cat "$k/pid"): $(cat "$k"/contexts/0/operations 2>/dev/null) monitoring, sample interval" \
      "$(cat "$k"/contexts/0/monitoring_attrs/intervals/sample_us 2>/dev/null) µs," \
      "regions $(cat "$k"/contexts/0/monitoring_attrs/nr_regions/min 2>/dev/null)-$(cat "$k"/contexts/0/monitoring_attrs/nr_regions/max 2>/dev/null)"
  done
}
{
  echo "# tails.sh: $MODE $RW bs=$BS QD$QD, RUNTIME $RUNTIME s, RAMP $RAMP s, target core $TARGET_CPU, initiator core $PERF_CPU"
  echo
  echo "Start: $(conditions). Kernel $(uname -r), $(grep -c ^processor /proc/cpuinfo) CPUs. $(damon)"
  echo
} > "$OUT/summary.md"
if [ "$FLOOR" = 1 ]; then
  cc -O2 -o "$OUT/pingpong" "$ROOT/perf/tcp-floor/pingpong.c"
  (exec taskset -c "$TARGET_CPU" "$OUT/pingpong" server 11191 72 4120 poll) &
  FPID=$!
  sleep 0.3
  floor=$(taskset -c "$PERF_CPU" "$OUT/pingpong" client 11191 72 4120 poll "$RUNTIME")
  kill $FPID 2>/dev/null || true
  wait $FPID 2>/dev/null || true
  echo "C ping-pong floor (poll, QD1, server core $TARGET_CPU, client core $PERF_CPU, $RUNTIME s): p50/p99/rt-per-s/p99.99/max = $floor µs" \
    | tee -a "$OUT/summary.md" >&2
  echo >> "$OUT/summary.md"
fi
rows=()
for r in $(seq 1 "$ROUNDS"); do
  for v in $VARIANTS; do
    name=$v-r$r
    traced=0
    [ "$TRACE" = 1 ] && [ "$r" = 1 ] && traced=1
    echo "tails.sh: $name (traced $traced), $(conditions)" >&2
    run_cell "$name" "$v" "$traced"
    rows+=("$(summary_line "$name" "$v")")
    echo "${rows[-1]}" >&2
  done
done
{
  echo "| run | variant | IOPS | p50 µs | p99 µs | p99.9 µs | p99.99 µs | max µs | stalls ≥1 ms in trace | max stall µs | I/Os delayed by them (est.) vs 0.01 % of I/Os | JIT compiles in trace, target (t) / initiator (i): all/C2 |"
  echo "|---|---|---|---|---|---|---|---|---|---|---|---|"
  printf '%s\n' "${rows[@]}"
  echo
  echo "End: $(conditions)"
  for f in "$OUT"/*-stalls.md; do
    [ -e "$f" ] || continue
    echo
    echo "## $(basename "$f" -stalls.md)"
    echo
    cat "$f"
  done
} >> "$OUT/summary.md"
cat "$OUT/summary.md"
