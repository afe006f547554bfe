#!/bin/bash
# A stand-in for interop/peer-vm/run.sh in PeerVmWatchdogTest: no VM, no QEMU. Takes run.sh's options, wipes --out, and per
# attempt (line N of the file "boots" next to it: ok, stall or die; ok when missing) either "boots" at once (writes
# peer-init's "boot done" line to console.log and runs SCRIPT on this host with the job dir as cwd, output.log live),
# "stalls" (a console line, then a sleep standing in for QEMU until killed or --timeout), or "dies" (exit 125 at once).
# Records each attempt's --guest, PEERVM_APPEND and PEERVM_CACHE in "attempts.log" and the fake QEMU's pid in qemu-N.pid.
HERE=$(cd "$(dirname "$0")" && pwd)
OUT= TIMEOUT=600 GUEST=linux-6.1
while [ $# -gt 0 ]; do
  case "$1" in
    --guest) GUEST=$2; shift 2;;
    --out) OUT=$2; shift 2;;
    --timeout) TIMEOUT=$2; shift 2;;
    --share|--fwd|--mem|--smp|--accel) shift 2;;
    --no-fwd|--isolated|-v) shift;;
    *) break;;
  esac
done
[ -f "$PEERVM_CACHE/rootfs.ext4" ] || { echo "run.sh: no image in $PEERVM_CACHE; run build.sh first" >&2; exit 125; }
rm -rf "$OUT"; mkdir -p "$OUT"
n=$(( $(cat "$HERE/attempts.log" 2>/dev/null | wc -l) + 1 ))
echo "attempt $n guest=$GUEST PEERVM_APPEND=${PEERVM_APPEND:-} PEERVM_CACHE=$PEERVM_CACHE" >> "$HERE/attempts.log"
echo "qemu-system-x86_64: fake QEMU of attempt $n" > "$OUT/qemu.log"
case "$(sed -n "${n}p" "$HERE/boots" 2>/dev/null)" in
  stall)
    echo "[    0.512345] fake kernel of attempt $n: stalled here" > "$OUT/console.log"
    sleep "$TIMEOUT" & echo $! > "$HERE/qemu-$n.pid"; wait $!
    echo "run.sh: TIMEOUT after ${TIMEOUT}s" >&2; echo "run.sh: rc=124 wall=1.0s" >&2; exit 124;;
  die)
    echo "run.sh: VM ended without a result (qemu rc=1); console tail + qemu messages:" >&2
    cat "$OUT/qemu.log" >&2; echo "run.sh: rc=125 wall=0.1s" >&2; exit 125;;
esac
echo "peer-init[0.42s]: boot done" > "$OUT/console.log"
SCRIPT=$1; shift
(cd "$OUT" && exec bash "$SCRIPT" "$@") > "$OUT/output.log" 2>&1 < /dev/null
rc=$?
echo "$rc" > "$OUT/rc"
cat "$OUT/output.log"
echo "run.sh: rc=$rc wall=0.1s" >&2
exit "$rc"
