# perf/bench-lib.sh: what perf's benchmark scripts (vs-spdk.sh, tails.sh, digests.sh, scale.sh, first-write.sh,
# qd1-interleaved.sh) share: the target they measure, started, waited for and stopped the same way, and the check
# of a hand-built SPDK tree. Sourced, not run.
#
# The caller sets TARGET_CPU, and for SPDK's target SPDK_DIR, SPDK_NQN, SPDK_PORT and SPDK_TGT_OPTS (may be empty);
# for fill_namespace ROOT, PERF_CPU and FILL_SECONDS.
# TPID is the pid of the running target, empty when none.

TPID=

# require_spdk_tree WHO: exits 2 (saying so as WHO) unless SPDK_DIR names a tree where SPDK is already built; without
# free hugepages it defaults SPDK_TGT_OPTS and SPDK_PERF_OPTS to ordinary memory: nvmf_tgt holds the 1 GiB malloc
# bdev and its transport buffers, spdk_nvme_perf its I/O buffers.
require_spdk_tree() {
  local who=$1 f
  for f in build/bin/nvmf_tgt build/bin/spdk_nvme_perf scripts/rpc.py; do
    [ -e "${SPDK_DIR:-}/$f" ] || { echo "$who: ${SPDK_DIR:-(SPDK_DIR unset)}/$f is missing (SPDK_DIR must be a built SPDK tree)" >&2; exit 2; }
  done
  if [ "$(awk '/^HugePages_Free:/ {print $2}' /proc/meminfo)" = 0 ]; then
    SPDK_TGT_OPTS=${SPDK_TGT_OPTS---no-huge -s 2048}
    SPDK_PERF_OPTS=${SPDK_PERF_OPTS---no-huge -s 512}
    echo "$who: no free hugepages: SPDK_TGT_OPTS='$SPDK_TGT_OPTS' SPDK_PERF_OPTS='$SPDK_PERF_OPTS'" >&2
  fi
}

# Stops the running target, if any, and waits for it to exit.
stop_target() {
  if [ -n "$TPID" ]; then
    kill "$TPID" 2>/dev/null || true
    wait "$TPID" 2>/dev/null || true
    TPID=
  fi
}

# fill_namespace URI JSON WHO: writes the whole 1 GiB namespace once with our perf tool (128 KiB writes at queue depth 8,
# read back with --verify) so that reads are of real memory: SPDK's malloc bdev, and our target, hold real memory,
# but a block never written costs differently (our target reads it from one shared zero buffer; SPDK's memory not yet
# touched takes a page fault on this VM, see perf/README.md). Says as WHO how much it wrote.
fill_namespace() {
  local uri=$1 json=$2 who=$3
  taskset -c "$PERF_CPU" "$ROOT/bin/nvmeof-perf" --target "$uri" --rw=write --bs=128k --iodepth=8 --size=1g \
    --verify=crc32c --runtime="$FILL_SECONDS" --ramp_time=0 --output-format=json --output="$json" \
    2> "${json%.json}.stderr" || true
  python3 -c "import json,sys; b=json.load(open(sys.argv[1]))['jobs'][0]['write']['io_bytes']; \
print('%s: fill wrote %.2f GiB%s' % (sys.argv[2], b/2**30, '' if b >= 2**30 else ' (LESS than the namespace: raise FILL_SECONDS)'), file=sys.stderr)" \
    "$json" "$who" || true
}

# wait_listening LOG WHO: waits up to 60 s for our target daemon (TPID) to log "listening on" in LOG; if it exits or
# never listens, says so as WHO and exits 1. LOG must be new for each start: the daemon's "> LOG" may not have
# truncated an earlier start's log yet when this first reads it.
wait_listening() {
  local log=$1 who=$2
  for _ in $(seq 1 600); do
    grep -q "listening on" "$log" 2>/dev/null && return 0
    kill -0 "$TPID" 2>/dev/null || break
    sleep 0.1
  done
  echo "$who: our target did not start, see $log" >&2
  exit 1
}

# start_spdk_target LOG SOCK WHO: SPDK's nvmf_tgt on TARGET_CPU with its RPC socket at SOCK, set up through
# scripts/rpc.py: the TCP transport (queues of 256 entries, so that a QD128 queue gets its depth: SPDK's default of
# 128 entries holds 127 commands), one 1 GiB malloc bdev of 4 KiB blocks as the namespace of SPDK_NQN, any host,
# a listener on 127.0.0.1:SPDK_PORT. It runs without SPDK's core lock, so that another SPDK application on the same
# core neither stops it nor is stopped by it.
start_spdk_target() {
  local log=$1 sock=$2 who=$3 rpc=("$SPDK_DIR/scripts/rpc.py" -s "$2")
  # shellcheck disable=SC2086
  (exec "$SPDK_DIR/build/bin/nvmf_tgt" -m "$(printf '0x%x' $((1 << TARGET_CPU)))" -r "$sock" \
    --disable-cpumask-locks ${SPDK_TGT_OPTS:-} > "$log" 2>&1) &
  TPID=$!
  for _ in $(seq 1 300); do
    "${rpc[@]}" spdk_get_version > /dev/null 2>&1 && break
    kill -0 "$TPID" 2>/dev/null || { echo "$who: nvmf_tgt exited, see $log" >&2; exit 1; }
    sleep 0.2
  done
  "${rpc[@]}" nvmf_create_transport -t TCP -u 16384 -m 8 -c 8192 -q 256 > /dev/null
  "${rpc[@]}" bdev_malloc_create -b Malloc0 1024 4096 > /dev/null
  "${rpc[@]}" nvmf_create_subsystem "$SPDK_NQN" -a -s SPDK00000000000001 -d SPDK_Controller1 > /dev/null
  "${rpc[@]}" nvmf_subsystem_add_ns "$SPDK_NQN" Malloc0 > /dev/null
  "${rpc[@]}" nvmf_subsystem_add_listener "$SPDK_NQN" -t tcp -a 127.0.0.1 -s "$SPDK_PORT" > /dev/null
}
