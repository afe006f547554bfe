#!/usr/bin/env bash
# perf/scale-softroce.sh: perf/scale.sh over real verbs: NVMe/RDMA through DiSNI on Soft-RoCE (rdma_rxe on eth0) in
# the peer VM (interop/peer-vm, guest linux-6.1), target and perf tool both inside the guest, once per SRQ setting.
#
#   perf/scale-softroce.sh [OUTDIR]
#
# Soft-RoCE is RDMA done in software by the guest's kernel, and the VM is emulated (TCG, no KVM here), so CPU and IOPS
# figures from it say nothing about hardware or about this machine: compare them only with each other. Memory per
# queue (RSS) is what this is for: the poll groups' shared receive queue (SRQS "true") against receive buffers per
# queue (-Dnvmeof.rdma.srq=false). The guest has a JRE only (no jcmd), so heap and NMT columns say "?".
#
# Knobs: CONTROLLERS (64), QUEUES (4), IODEPTH (31: queues of 32 entries; 64 x 4 queues of 128 entries, the Linux host's default, need more CQ entries than rxe's 32767 on one poll group), IDLE
# (20), RUNTIME (10), RAMP (3), SRQS ("true false": one scale.sh run
# each, a fresh target each), TARGET_OPTS (more JVM options for the target, e.g. -Dnvmeof.rdma.pollGroups=2),
# VM_TIMEOUT (3600 s), VM_MEM (10240 MiB: the perf tool ran out of memory in 4 GiB at depth 31). Results: OUTDIR/srq-<setting>/results.md and
# the guest's console output in OUTDIR/vm-output.log.
set -euo pipefail
ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
OUT=${1:-$ROOT/perf/build/scale-softroce-$(date +%Y%m%d-%H%M%S)}
SRQS=${SRQS:-true false}
VM=${PEERVM_DIR:-$ROOT/interop/peer-vm}
[ -x "$VM/run.sh" ] || { echo "scale-softroce.sh: no peer VM at $VM (set PEERVM_DIR)" >&2; exit 1; }
JAR=$(ls "$ROOT"/perf/build/nvmeof-perf-*.jar 2>/dev/null | grep -v -- '-tests.jar' | head -1 || true)
if [ -z "$JAR" ] || [ ! -d "$ROOT/perf/build/lib" ]; then
  echo "scale-softroce.sh: building perf (mvn package, no tests)..." >&2
  (cd "$ROOT" && mvn -B -q -pl perf -am package -DskipTests -Dmaven.test.skip=true -Dspotless.check.skip=true) >&2
  JAR=$(ls "$ROOT"/perf/build/nvmeof-perf-*.jar | grep -v -- '-tests.jar' | head -1)
fi
unzip -Z1 "$(ls "$ROOT"/perf/build/lib/transport-rdma-*.jar | head -1)" native/linux-x86_64/libnvmeofrdma.so >/dev/null 2>&1 \
  || { echo "scale-softroce.sh: transport-rdma was built without libnvmeofrdma.so (no rdma-core headers)" >&2; exit 1; }
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
"$VM/build.sh" >&2

# The share: a tree shaped like this repository's (scale.sh finds bin/lib.sh, perf/bench-lib.sh and perf/build from
# its own place), the guest script, and where results go.
SHARE=$(mktemp -d)
trap 'rm -rf "$SHARE"' EXIT
mkdir -p "$SHARE/root/bin" "$SHARE/root/perf/build" "$SHARE/out"
cp "$ROOT/bin/lib.sh" "$SHARE/root/bin/"
cp "$ROOT/perf/scale.sh" "$ROOT/perf/bench-lib.sh" "$SHARE/root/perf/"
cp "$JAR" "$SHARE/root/perf/build/"
cp -r "$ROOT/perf/build/lib" "$SHARE/root/perf/build/"
cat > "$SHARE/guest.sh" <<EOF
set -u
# class loading through 9p is slow in the emulated guest: run from tmpfs
cp -r /share/root /tmp/root || exit 3
modprobe -a ib_uverbs rdma_ucm rdma_rxe || exit 3
rdma link add rxe0 type rxe netdev eth0 || exit 3
rdma link show
A=\$(ip -4 -o addr show eth0 | awk '{print \$4}' | cut -d/ -f1)
rc=0
for srq in $SRQS; do
  echo "==== scale.sh over DiSNI on rxe0 (\$A), -Dnvmeof.rdma.srq=\$srq"
  O=/share/out/srq-\$srq
  mkdir -p "\$O"
  ADDR=\$A TRANSPORTS=rdma CONTROLLERS=${CONTROLLERS:-64} QUEUES=${QUEUES:-4} IODEPTH=${IODEPTH:-31} IDLE=${IDLE:-20} RUNTIME=${RUNTIME:-10} \\
    RAMP=${RAMP:-3} NVMEOF_JAVA_OPTS="-Dnvmeof.rdma.provider=disni" \\
    TARGET_JAVA_OPTS="-Dnvmeof.rdma.provider=disni -Dnvmeof.rdma.srq=\$srq ${TARGET_OPTS:-}" \\
    bash /tmp/root/perf/scale.sh "\$O" || rc=1
  grep -h "shared receive queue" "\$O"/rdma-target.log | head -2
done
cat /sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts
exit \$rc
EOF
echo "scale-softroce.sh: booting the peer VM (results in $OUT)" >&2
set +e
"$VM/run.sh" --share "$SHARE" --timeout "${VM_TIMEOUT:-3600}" --mem "${VM_MEM:-10240}" "$SHARE/guest.sh" \
  2>&1 | tee "$OUT/vm-output.log"
rc=${PIPESTATUS[0]}
set -e
cp -r "$SHARE/out/." "$OUT/"
for srq in $SRQS; do
  [ -f "$OUT/srq-$srq/results.md" ] && { echo "-- -Dnvmeof.rdma.srq=$srq"; cat "$OUT/srq-$srq/results.md"; }
done
exit "$rc"
