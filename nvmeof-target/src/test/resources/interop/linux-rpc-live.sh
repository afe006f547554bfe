# Runs in the peer VM (run.sh prepends "#!/bin/bash" and "set -- ARGS"): the Linux kernel host connected to one
# subsystem of the Java target sees namespaces added, resized and removed over JSON-RPC without reconnecting, and
# `nvme discover` shows a listener added at run time.
#
# Protocol with the Java side (it reads output.log live): the script prints "READY <step>" and waits for the change;
# the Java side makes it over RPC when it reads the line. Times are from the READY line to the change seen here, so
# they include the Java side's delay in reading the log.
#
# args: ADDR PORT NQN NEWPORT
set -euxo pipefail
ADDR=$1 PORT=$2 NQN=$3 NEWPORT=$4

dump() {
  set +x
  echo "===== nvme list-subsys"; nvme list-subsys 2>&1 || true
  echo "===== dmesg (nvme)"; dmesg | grep -iE "nvme|nvmf" | tail -80 || true
}
fail() { set +x; echo "FAIL: $*"; dump; exit 1; }
trap 'rc=$?; set +x; echo "FAIL: command failed (rc=$rc) at line $LINENO: $BASH_COMMAND"; dump; exit $rc' ERR
pass() { { set +x; } 2>/dev/null; echo "PASS: $*"; set -x; }
say() { { set +x; } 2>/dev/null; echo "$*"; set -x; }
ms() { echo $(( $(date +%s%N) / 1000000 )); }
wait_for() { # SECONDS COMMAND...: until COMMAND succeeds
  local n=$(( $1 * 20 )); shift
  for _ in $(seq "$n"); do "$@" && return 0; sleep 0.05; done
  return 1
}

modprobe nvme-tcp
nvme connect -t tcp -a "$ADDR" -s "$PORT" -n "$NQN"
wait_for 30 test -n "$(ls /sys/class/nvme-subsystem/*/ | grep -E '^nvme[0-9]+n1$' || true)" || fail "no namespace 1"
DEV1=$(ls /sys/class/nvme-subsystem/*/ | grep -E '^nvme[0-9]+n1$' | head -1)
BASE=${DEV1%n1}
CTRL=$(ls /sys/class/nvme-subsystem/*/ | grep -E '^nvme[0-9]+$' | head -1)
pass "connected: /dev/$DEV1 ($(blockdev --getsize64 /dev/$DEV1) bytes), controller $CTRL"

has_ns2() { test -b "/dev/${BASE}n2"; }
size_is() { test "$(blockdev --getsize64 /dev/$DEV1)" = "$1"; }

say "READY ADD"; t=$(ms)
wait_for 60 has_ns2 || fail "namespace 2 did not appear"
say "ADDED $(( $(ms) - t )) ms"
pass "namespace 2 hot-added: /dev/${BASE}n2, $(blockdev --getsize64 /dev/${BASE}n2) bytes"

say "READY RESIZE"; t=$(ms)
wait_for 60 size_is $((128 * 1024 * 1024)) || fail "namespace 1 is $(blockdev --getsize64 /dev/$DEV1) bytes, not 128 MiB"
say "RESIZED $(( $(ms) - t )) ms"
pass "namespace 1 resized to $(blockdev --getsize64 /dev/$DEV1) bytes"

say "READY REMOVE"; t=$(ms)
wait_for 60 bash -c "! test -b /dev/${BASE}n2" || fail "namespace 2 is still there"
say "REMOVED $(( $(ms) - t )) ms"
pass "namespace 2 removed"

test -e "/sys/class/nvme/$CTRL" || fail "controller $CTRL is gone"
[ "$(cat /sys/class/nvme/$CTRL/state)" = live ] || fail "controller $CTRL is $(cat /sys/class/nvme/$CTRL/state)"
pass "still the same controller $CTRL, live (no reconnect)"

say "READY LISTENER"
discovered() { nvme discover -t tcp -a "$ADDR" -s "$PORT" | grep -qE "trsvcid: *$NEWPORT\b"; }
wait_for 30 discovered || { nvme discover -t tcp -a "$ADDR" -s "$PORT" || true; fail "no listener on $NEWPORT in the discovery log"; }
pass "nvme discover lists the listener added at run time (port $NEWPORT)"

nvme disconnect -n "$NQN"
say "ALL PASS"
