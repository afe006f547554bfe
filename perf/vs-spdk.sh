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
# sampled inside the measured window, the same way for SPDK's processes and ours) and, when there were any, the TCP
# segments the machine retransmitted during the run; with SPDK_DIR a second table gives the ratios to SPDK->SPDK. The
# tables name the machine's TCP congestion control, which on loopback changes the 128 KiB cells (perf/README.md).
#
# Rounds: this VM's loopback moves between a fast and a slow phase within minutes (perf/README.md), so a ratio taken
# between two blocks run minutes apart measures the phase as much as the code. The whole set runs ROUNDS times (2),
# every round against fresh targets and with the floor measured again, in alternating order (odd rounds: our targets,
# then SPDK's; even rounds: SPDK's, then ours in reverse mode order). Each round's ratios are taken against SPDK->SPDK
# of the same round, and the last table gives them round by round with their median (perf/vs-spdk-table.py).
# ORDER=cells narrows that further: every target is started and filled once, all of them stay up, and each is paused
# (SIGSTOP) while another one is measured, so a round runs cell by cell and all the columns of a cell within about two
# minutes (odd rounds in the order of the table, even rounds reversed). A paused process takes no CPU; the one
# measured is resumed (SIGCONT) before its run and has the target core to itself, as in the default ORDER=blocks
# (each round: a target at a time, each with every cell, fresh targets each round).
#
# Knobs: RUNTIME (5 s), RAMP (10 s), TARGET_CPU (1), PERF_CPU (0), PORT (4432: ours in busy mode, PORT+1 in
# default mode), SPDK_PORT (4420), ORDER (blocks or cells, above),
# SPDK_TGT_OPTS (extra nvmf_tgt options; "--no-huge -s 2048" when the host has no free hugepages),
# SPDK_PERF_OPTS (extra spdk_nvme_perf options; "--no-huge -s 512" without free hugepages),
# FILL_SECONDS (120: the most the fill may take), RUN_SLACK (120: a run still going this long after its ramp and
# runtime is stopped), CELLS (all; a space-separated subset of: qd1 qd32 qd128 read128k
# randwrite), MODES ("busy default"), ROUNDS (2), SQFLOW ("on", the default: our perf's URIs as a user writes them, and
# our target sends a CapsuleResp after every read's C2HData; "off": they carry disable_sqflow=1, so our target answers a
# read with its C2HData alone, as SPDK's nvmf_tgt up to v26.05 does to every host, and the ours->ours cells exchange as
# many PDUs per read as SPDK->SPDK), PREALLOC ("on", the default: our target's namespace is preallocated, as SPDK's
# malloc bdev always is, in 2 MiB slabs with huge pages where the native helper loads; "off": lazy, 128 KiB chunks
# as blocks are first written, the tables of perf/README.md before 2026-11-27 16:40 UTC).
# Prints Markdown tables (OUTDIR/results.md); every run's output stays in OUTDIR/rN, one directory per round.
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
ROUNDS=${ROUNDS:-2}
ORDER=${ORDER:-blocks}
OUR_NQN=nqn.2024-01.io.nvmeof:vs-spdk
SPDK_NQN=nqn.2016-06.io.spdk:cnode1
command -v python3 >/dev/null || { echo "vs-spdk.sh: python3 is needed" >&2; exit 1; }
command -v taskset >/dev/null || { echo "vs-spdk.sh: taskset (util-linux) is needed" >&2; exit 1; }
# shellcheck source=perf/bench-lib.sh
. "$ROOT/perf/bench-lib.sh"
[ -z "${SPDK_DIR:-}" ] || require_spdk_tree vs-spdk.sh
[[ "$ROUNDS" =~ ^[1-9][0-9]*$ ]] || { echo "vs-spdk.sh: ROUNDS must be a positive integer, not '$ROUNDS'" >&2; exit 2; }
case "$ORDER" in
  blocks | cells) ;;
  *) echo "vs-spdk.sh: ORDER must be blocks or cells, not '$ORDER'" >&2; exit 2 ;;
esac
SQFLOW=${SQFLOW:-on}
case "$SQFLOW" in
  off) QUERY="?disable_sqflow=1" ;;
  on) QUERY="" ;;
  *) echo "vs-spdk.sh: SQFLOW must be on or off, not '$SQFLOW'" >&2; exit 2 ;;
esac
PREALLOC=${PREALLOC:-on}
case "$PREALLOC" in
  on) NS_OPTS=",prealloc" ;;
  off) NS_OPTS="" ;;
  *) echo "vs-spdk.sh: PREALLOC must be on or off, not '$PREALLOC'" >&2; exit 2 ;;
esac
mkdir -p "$OUT"
CC=$(cat /proc/sys/net/ipv4/tcp_congestion_control 2>/dev/null || echo unknown)
echo "vs-spdk.sh: results in $OUT; order $ORDER; SQ flow control of our perf's queues $SQFLOW; our namespace preallocated $PREALLOC; TCP congestion control $CC; load average $(cut -d' ' -f1-3 /proc/loadavg)" >&2
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
measure_floor() {
  taskset -c "$TARGET_CPU,$PERF_CPU" "$ROOT/perf/tcp-floor/floor.sh" poll 5 > "$RD/floor-poll.txt"
  taskset -c "$TARGET_CPU,$PERF_CPU" "$ROOT/perf/tcp-floor/floor.sh" block 5 > "$RD/floor-block.txt"
  echo "vs-spdk.sh: floor poll $(cat "$RD/floor-poll.txt"), block $(cat "$RD/floor-block.txt") (p50 us, p99 us, rt/s)" >&2
}

# ---- targets ----
our_port() { [ "$1" = busy ] && echo "$PORT" || echo $((PORT + 1)); } # MODE -> the port of our target in MODE

start_ours() { # MODE (no JSON-RPC: it is not used, and two of our targets may be up at once)
  local flags=()
  [ "$1" = busy ] && flags=(--busy-poll)
  # shellcheck disable=SC2046
  taskset -c "$TARGET_CPU" java $(nvmeof_jvm_opts) -cp "$JAR:$ROOT/perf/build/lib/*" \
    io.nvmeof.target.daemon.TargetDaemon --listen "tcp://127.0.0.1:$(our_port "$1")" --nqn "$OUR_NQN" --no-rpc \
    --namespace "size=1g,bs=4096$NS_OPTS" --memory-budget 2g "${flags[@]}" > "$RD/target-ours-$1.log" 2>&1 &
  TPID=$!
  wait_listening "$RD/target-ours-$1.log" vs-spdk.sh
}

start_spdk() { start_spdk_target "$RD/target-spdk.log" "$RD/spdk.sock" vs-spdk.sh; }

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

# TCP segments this machine has retransmitted so far (RetransSegs of /proc/net/snmp), or nothing if it cannot be read.
tcp_retrans() {
  awk '$1 == "Tcp:" { if (!n) { for (i = 2; i <= NF; i++) if ($i == "RetransSegs") c = i; n = 1 } else if (c) print $c }' \
    /proc/net/snmp 2>/dev/null || true
}

# Runs an initiator command in the background with the CPU probe beside it and waits for both. A run that outlives
# its ramp and runtime by RUN_SLACK seconds (120; e.g. a controller lost and reconnecting) is stopped. RD/NAME.retrans
# gets the TCP segments the machine retransmitted during the run (ramp included; loopback: spurious retransmissions
# after reordering, which BBR's pacing provokes: perf/README.md, "128 KiB reads through SPDK's target lose to BBR's
# pacing").
run_measured() { # NAME LOG STARTUP CMD...
  local name=$1 log=$2 startup=$3 ipid ppid rc=0 r0 r1
  shift 3
  r0=$(tcp_retrans)
  timeout --kill-after=10 $((RAMP + RUNTIME + ${RUN_SLACK:-120})) "$@" > "$log" 2>&1 &
  ipid=$!
  cpu_probe "$RD/$name.cpu" "$ipid" "$startup" &
  ppid=$!
  wait "$ipid" || rc=$?
  kill "$ppid" 2>/dev/null || true
  wait "$ppid" 2>/dev/null || true
  r1=$(tcp_retrans)
  [ -z "$r0" ] || [ -z "$r1" ] || echo $((r1 - r0)) > "$RD/$name.retrans"
  return "$rc"
}

# ---- initiators ----
ours_perf() { # NAME URI MODE CELL
  local rw bs qd hipri=()
  read -r rw bs qd <<< "$(cell_args "$4")"
  [ "$3" = busy ] && hipri=(--hipri)
  echo "vs-spdk.sh: $1" >&2
  run_measured "$1" "$RD/$1.stderr" 1 taskset -c "$PERF_CPU" "$ROOT/bin/nvmeof-perf" --target "$2" "${hipri[@]}" \
    --rw="$rw" --bs="$bs" --iodepth="$qd" --runtime="$RUNTIME" --ramp_time="$RAMP" --percentile_list=50:99:99.99 \
    --output-format=json --output="$RD/$1.json" || echo "vs-spdk.sh: $1 failed, see $RD/$1.stderr" >&2
}

spdk_perf() { # NAME PORT NQN CELL
  local rw bs qd
  read -r rw bs qd <<< "$(cell_args "$4")"
  echo "vs-spdk.sh: $1" >&2
  # shellcheck disable=SC2086
  run_measured "$1" "$RD/$1.txt" 0.3 taskset -c "$PERF_CPU" "$SPDK_DIR/build/bin/spdk_nvme_perf" \
    -c "$(printf '0x%x' $((1 << PERF_CPU)))" -q "$qd" -o "$bs" -w "$rw" -t "$RUNTIME" -a "$RAMP" -L \
    ${SPDK_PERF_OPTS:-} -r "trtype:TCP adrfam:IPv4 traddr:127.0.0.1 trsvcid:$2 subnqn:$3" \
    || echo "vs-spdk.sh: $1 failed, see $RD/$1.txt" >&2
}

fill_target() { fill_namespace "$1" "$RD/$2.json" vs-spdk.sh; } # URI NAME: ours or SPDK's, its output in RD/NAME.json

our_uri() { echo "nvme+tcp://127.0.0.1:$(our_port "$1")/$OUR_NQN$QUERY"; } # MODE
SPDK_URI="nvme+tcp://127.0.0.1:$SPDK_PORT/$SPDK_NQN$QUERY"

# Runs column NAME of CELL; MODE is our side's mode (perf, or target for SPDK's perf), empty for SPDK->SPDK.
run_column() { # NAME CELL MODE
  case $1 in
    spdk-spdk) spdk_perf "$1-$2" "$SPDK_PORT" "$SPDK_NQN" "$2" ;;
    spdkperf-ours*) spdk_perf "$1-$2" "$(our_port "$3")" "$OUR_NQN" "$2" ;;
    ours-*) ours_perf "$1-$2" "$(our_uri "$3")" "$3" "$2" ;;
    ours*-spdk) ours_perf "$1-$2" "$SPDK_URI" "$3" "$2" ;;
  esac
}

# ---- ORDER=blocks: one target at a time, every cell against it ----
ours_block() { # MODE: our target in MODE, our perf and (with SPDK_DIR) SPDK's perf against it
  start_ours "$1"
  fill_target "$(our_uri "$1")" fill
  for cell in $CELLS; do
    run_column "ours-$1" "$cell" "$1"
    [ -z "${SPDK_DIR:-}" ] || run_column "spdkperf-ours$1" "$cell" "$1"
  done
  stop_target
}
spdk_block() { # SPDK's target: SPDK's perf and ours (each mode) against it
  start_spdk
  fill_target "$SPDK_URI" fill
  for cell in $CELLS; do
    run_column spdk-spdk "$cell" ""
    for mode in $MODES; do run_column "ours$mode-spdk" "$cell" "$mode"; done
  done
  stop_target
}

# ---- ORDER=cells: every target up at once, all but the measured one paused ----
declare -A TARGET_PIDS=() # ours-MODE, spdk -> pid of that target

start_all() { # each target started, filled and paused in turn; their logs and fills in OUT/targets
  local mode
  RD=$OUT/targets
  rm -rf "$RD"
  mkdir -p "$RD"
  for mode in $MODES; do
    start_ours "$mode"
    TARGET_PIDS[ours-$mode]=$TPID
    fill_target "$(our_uri "$mode")" "fill-ours-$mode"
    kill -STOP "$TPID"
  done
  if [ -n "${SPDK_DIR:-}" ]; then
    start_spdk
    TARGET_PIDS[spdk]=$TPID
    fill_target "$SPDK_URI" fill-spdk
    kill -STOP "$TPID"
  fi
  TPID=
}

pause_all() {
  local k
  for k in "${!TARGET_PIDS[@]}"; do kill -STOP "${TARGET_PIDS[$k]}" 2>/dev/null || true; done
}

use_target() { # KEY: pauses every other target and resumes that one (TPID: the target the CPU probe samples)
  pause_all
  TPID=${TARGET_PIDS[$1]}
  kill -0 "$TPID" 2>/dev/null || { echo "vs-spdk.sh: the $1 target exited, see $OUT/targets" >&2; exit 1; }
  kill -CONT "$TPID"
}

stop_all() { # every target, paused or not: a paused one handles SIGTERM once it is resumed
  local k
  for k in "${!TARGET_PIDS[@]}"; do
    kill "${TARGET_PIDS[$k]}" 2>/dev/null || true
    kill -CONT "${TARGET_PIDS[$k]}" 2>/dev/null || true
    wait "${TARGET_PIDS[$k]}" 2>/dev/null || true
    unset "TARGET_PIDS[$k]"
  done
  TPID=
}
trap 'stop_all; stop_target' EXIT # stop_all first: TPID may be a paused target

cells_round() { # REVERSE (0 or 1): every cell, its columns in the order of the table or reversed
  local cell runs mode i key name
  for cell in $CELLS; do
    runs=()
    if [ -n "${SPDK_DIR:-}" ]; then
      runs+=("spdk spdk-spdk")
      for mode in $MODES; do runs+=("spdk ours$mode-spdk $mode"); done
      for mode in $MODES; do runs+=("ours-$mode spdkperf-ours$mode $mode"); done
    fi
    for mode in $MODES; do runs+=("ours-$mode ours-$mode $mode"); done
    for i in "${!runs[@]}"; do
      [ "$1" = 1 ] && i=$((${#runs[@]} - 1 - i))
      read -r key name mode <<< "${runs[$i]}"
      use_target "$key"
      run_column "$name" "$cell" "$mode"
    done
  done
  pause_all
}

REVERSED_MODES=$(echo "$MODES" | tr ' ' '\n' | tac | tr '\n' ' ')
[ "$ORDER" = blocks ] || start_all
DIRS=()
for round in $(seq "$ROUNDS"); do
  RD=$OUT/r$round
  # A round's directory starts empty: an earlier run's target log would satisfy wait_listening before this target
  # listens, and an earlier run's figures would stand in for a cell that failed.
  rm -rf "$RD"
  mkdir -p "$RD"
  DIRS+=("$RD")
  cut -d' ' -f1-3 /proc/loadavg > "$RD/load-start.txt"
  echo "vs-spdk.sh: round $round of $ROUNDS, load average $(cat "$RD/load-start.txt")" >&2
  measure_floor # no target running (ORDER=cells: all paused)
  if [ "$ORDER" = cells ]; then
    # the tables look for SPDK's target log to know that SPDK's columns ran
    [ -z "${SPDK_DIR:-}" ] || ln -s ../targets/target-spdk.log "$RD/target-spdk.log"
    cells_round $((1 - round % 2))
  elif [ $((round % 2)) = 1 ]; then
    for mode in $MODES; do ours_block "$mode"; done
    [ -z "${SPDK_DIR:-}" ] || spdk_block
  else
    [ -z "${SPDK_DIR:-}" ] || spdk_block
    for mode in $REVERSED_MODES; do ours_block "$mode"; done
  fi
  cut -d' ' -f1-3 /proc/loadavg > "$RD/load-end.txt"
done

# ---- the tables ----
{
  echo "Our perf's queues: SQ flow control $SQFLOW (SQFLOW; off: disable_sqflow=1, reads answered by C2HData alone)."
  echo "Our target's namespace: preallocated $PREALLOC (PREALLOC; on: all its memory at start, huge-page slabs, as SPDK's malloc bdev)."
  echo "TCP congestion control: $CC (net.ipv4.tcp_congestion_control, the default of every new socket; neither SPDK nor we choose another)."
  echo
  for i in "${!DIRS[@]}"; do
    echo "### Round $((i + 1))"
    echo
    CELLS="$CELLS" MODES="$MODES" python3 "$ROOT/perf/vs-spdk-table.py" round "${DIRS[$i]}"
    echo
  done
  if [ -n "${SPDK_DIR:-}" ]; then
    echo "### All rounds"
    echo
    CELLS="$CELLS" MODES="$MODES" python3 "$ROOT/perf/vs-spdk-table.py" summary "${DIRS[@]}"
  fi
} | tee "$OUT/results.md"
