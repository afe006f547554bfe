# Runs in the peer VM (run.sh prepends "#!/bin/bash" and "set -- ARGS"): the Linux kernel host discards blocks of a
# file-backed namespace of the Java target (blkdiscard: Dataset Management deallocate; fallocate --punch-hole on the
# device: Write Zeroes with DEAC, which the host sets since DLFEAT says deallocated blocks read as zeroes;
# blkdiscard -z: Write Zeroes without DEAC) and reads zeroes back; the Java side watches the backing file's size on
# disk (st_blocks) shrink by what was deallocated.
#
# Protocol with the Java side (it reads output.log live): "WRITTEN" once the data is on the target (it then measures
# the file), and it answers by adding namespace 2, which this script waits for before it discards; "DISCARDED" when
# the discards are done and verified.
#
# args: ADDR PORT NQN
set -euxo pipefail
ADDR=$1 PORT=$2 NQN=$3

dump() {
  set +x
  echo "===== nvme list-subsys"; nvme list-subsys 2>&1 || true
  echo "===== dmesg (nvme)"; dmesg | grep -iE "nvme|nvmf" | tail -60 || true
}
fail() { set +x; echo "FAIL: $*"; dump; exit 1; }
trap 'rc=$?; set +x; echo "FAIL: command failed (rc=$rc) at line $LINENO: $BASH_COMMAND"; dump; exit $rc' ERR
pass() { { set +x; } 2>/dev/null; echo "PASS: $*"; set -x; }
say() { { set +x; } 2>/dev/null; echo "$*"; set -x; }
wait_for() { # SECONDS COMMAND...: until COMMAND succeeds
  local n=$(( $1 * 20 )); shift
  for _ in $(seq "$n"); do "$@" && return 0; sleep 0.05; done
  return 1
}
zeros() { # DEV OFFSET_BYTES LENGTH_BYTES: the range reads back as zeros (O_DIRECT, bypassing the page cache)
  dd if="$1" bs=1M skip=$(( $2 >> 20 )) count=$(( $3 >> 20 )) iflag=direct status=none | cmp -n "$3" - /dev/zero
}

modprobe nvme-tcp
nvme connect -t tcp -a "$ADDR" -s "$PORT" -n "$NQN"
wait_for 30 test -n "$(ls /sys/class/nvme-subsystem/*/ | grep -E '^nvme[0-9]+n1$' || true)" || fail "no namespace 1"
DEV1=$(ls /sys/class/nvme-subsystem/*/ | grep -E '^nvme[0-9]+n1$' | head -1)
BASE=${DEV1%n1}
NS1=/dev/$DEV1
DLFEAT=$(nvme id-ns "$NS1" -o json | sed -n 's/.*"dlfeat" *: *\([0-9]*\).*/\1/p')
[ "$DLFEAT" = 9 ] || fail "DLFEAT is '$DLFEAT', not 9 (deallocated blocks read zero, Write Zeroes DEAC)"
DMAX=$(cat "/sys/block/$DEV1/queue/discard_max_bytes")
[ "$DMAX" -gt 0 ] || fail "no discard support on $NS1"
pass "connected: $NS1 ($(blockdev --getsize64 "$NS1") bytes), DLFEAT $DLFEAT, discard_max_bytes $DMAX"

# 48 MiB of random data, flushed to the target
dd if=/dev/urandom of="$NS1" bs=1M count=48 oflag=direct status=none
nvme flush "$NS1"
if zeros "$NS1" 0 $((48 << 20)) 2>/dev/null; then fail "random data reads back as zeros"; fi
pass "48 MiB written"

say "WRITTEN"
wait_for 120 test -b "/dev/${BASE}n2" || fail "the Java side did not answer (namespace 2)"

blkdiscard -o 0 -l $((32 << 20)) "$NS1"
zeros "$NS1" 0 $((32 << 20)) || fail "the discarded 32 MiB do not read back as zeros"
pass "blkdiscard 32 MiB reads back as zeros"
# fallocate --punch-hole on a block device is a zeroout that may unmap: Write Zeroes with DEAC (DLFEAT bit 3) from
# hosts that use DEAC (Linux 6.12 does, 6.1 does not and writes zeroes)
fallocate --punch-hole --keep-size -o $((32 << 20)) -l $((8 << 20)) "$NS1"
zeros "$NS1" $((32 << 20)) $((8 << 20)) || fail "the punched 8 MiB do not read back as zeros"
pass "fallocate --punch-hole (Write Zeroes, DEAC on newer kernels) 8 MiB reads back as zeros"
# blkdiscard -z (BLKZEROOUT) asks for no unmapping: Write Zeroes without DEAC, the zeroes are written
blkdiscard -z -o $((40 << 20)) -l $((4 << 20)) "$NS1"
zeros "$NS1" $((40 << 20)) $((4 << 20)) || fail "the zeroed 4 MiB do not read back as zeros"
pass "blkdiscard -z (Write Zeroes, no DEAC) 4 MiB reads back as zeros"
if zeros "$NS1" $((44 << 20)) $((4 << 20)) 2>/dev/null; then fail "the last 4 MiB written were lost"; fi
pass "the 4 MiB not discarded are still there"
nvme flush "$NS1"
say "DISCARDED"

nvme disconnect -n "$NQN"
say "ALL PASS"
