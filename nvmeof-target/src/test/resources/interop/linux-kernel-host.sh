# Runs in the peer VM (run.sh prepends "#!/bin/bash" and "set -- ARGS"): the Linux kernel NVMe/TCP host
# (nvme-tcp + nvme-cli + fio) against a target at ADDR:PORT, normally the Java target on the host's
# 127.0.0.1 (10.0.2.2 in the guest). Prints "PASS: <step>" per step, "FAIL: <why>" and the kernel log on
# failure, and "ALL PASS" at the end. Exit status 0 only if every step passed.
#
# args: ADDR PORT NQN RESTRICTED_NQN NS1_BYTES NS1_BLOCK NS2_BYTES NS2_BLOCK [FIO_SIZE [JAVA_MARKER]]
#   NQN            allow_any_host subsystem with namespaces 1 and 2 (sizes/block sizes as given)
#   RESTRICTED_NQN subsystem whose allowed hosts do not include this VM's host NQN
#   JAVA_MARKER    if given: namespace 2 LBA 200 must hold this text (written by the Java side), NUL padded
# Markers for the caller: "INFO: discovery-lists-restricted=yes|no", "INFO: ctrl ..." lines, and a
# 4 KiB block written at LBA 50000 of namespace 1 (beyond the fio ranges) that starts with "NVMEOF-JAVA-INTEROP-GUEST".
set -euxo pipefail
ADDR=$1 PORT=$2 NQN=$3 RNQN=$4 NS1_BYTES=$5 NS1_BS=$6 NS2_BYTES=$7 NS2_BS=$8 FIO_SIZE=${9:-16M} JAVA_MARKER=${10:-}
HOSTNQN=$(cat /etc/nvme/hostnqn)

dump() {
  set +x
  echo "===== nvme list-subsys"; nvme list-subsys 2>&1 || true
  echo "===== dmesg (nvme)"; dmesg | grep -iE "nvme|nvmf" | tail -80 || true
  echo "===== end of dmesg"
}
fail() { set +x; echo "FAIL: $*"; dump; exit 1; }
trap 'rc=$?; set +x; echo "FAIL: command failed (rc=$rc) at line $LINENO: $BASH_COMMAND"; dump; exit $rc' ERR
pass() { { set +x; } 2>/dev/null; echo "PASS: $*"; set -x; }
t0=$(date +%s%N)
elapsed() { echo "$(( ($(date +%s%N) - t0) / 1000000 )) ms"; }

# Namespaces of NQN as block devices (native multipath names them nvme<subsys>n<nsid>; none exist before).
# (/sys/block also lists the hidden per-path nodes nvme<subsys>c<ctrl>n<nsid>; skip those.)
ns_dev() { local b; b=$(ls /sys/block | grep -E "^nvme[0-9]+n$1\$" | head -1); [ -n "$b" ] && echo "/dev/$b"; }
ctrl_of() { local d; for d in /sys/class/nvme/nvme*; do [ "$(cat "$d/subsysnqn" 2>/dev/null)" = "$1" ] && { basename "$d"; return 0; }; done; return 1; }
wait_namespaces() {
  for _ in $(seq 300); do ns_dev 1 >/dev/null && ns_dev 2 >/dev/null && return 0; sleep 0.1; done
  fail "namespaces 1 and 2 did not appear within 30 s"
}
wait_gone() {
  for _ in $(seq 300); do ls /sys/block | grep -qE '^nvme' || { ctrl_of "$NQN" >/dev/null || return 0; }; sleep 0.1; done
  fail "controller/namespaces still present 30 s after disconnect"
}
zeros() { # DEV OFFSET_BYTES LENGTH_BYTES: the range reads back as zeros (O_DIRECT, bypassing the page cache)
  dd if="$1" bs=4096 skip=$(( $2 / 4096 )) count=$(( $3 / 4096 )) iflag=direct status=none | cmp -n "$3" - /dev/zero
}
fill_random() { # DEV OFFSET_BYTES LENGTH_BYTES
  dd if=/dev/urandom of="$1" bs=4096 seek=$(( $2 / 4096 )) count=$(( $3 / 4096 )) oflag=direct status=none
  if zeros "$1" "$2" "$3" 2>/dev/null; then fail "random data reads back as zeros on $1"; fi
}
run_fio() { # NAME DEV BS-or-BSSPLIT SIZE
  local bsopt="--bs=$3"; [[ $3 == */* ]] && bsopt="--bssplit=$3"
  fio --name="$1" --filename="$2" --rw=randrw $bsopt --size="$4" --ioengine=libaio --iodepth=16 --direct=1 \
      --verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 --randrepeat=0 \
      --runtime=180 --group_reporting --output="/tmp/fio-$1.txt" || { cat "/tmp/fio-$1.txt"; fail "fio $1 on $2"; }
  grep -E "^  (read|write):|err=" "/tmp/fio-$1.txt" || true
  grep -qE "err= *0" "/tmp/fio-$1.txt" || { cat "/tmp/fio-$1.txt"; fail "fio $1 reported errors"; }
}

echo "uptime at job start: $(cut -d' ' -f1 /proc/uptime)s, host NQN $HOSTNQN"
modprobe nvme-tcp
pass "modprobe nvme-tcp ($(elapsed))"

# ---- discovery
nvme discover -t tcp -a "$ADDR" -s "$PORT" | tee /tmp/discover.txt
grep -qE "^subnqn: +$NQN\$" /tmp/discover.txt || fail "discovery log does not list $NQN"
grep -qE "^subtype: +nvme subsystem" /tmp/discover.txt || fail "no NVM subsystem record (SUBTYPE 2)"
grep -qE "^trsvcid: +$PORT\$" /tmp/discover.txt || fail "no record with trsvcid $PORT"
if grep -qE "^subnqn: +$RNQN\$" /tmp/discover.txt; then echo "INFO: discovery-lists-restricted=yes"; else echo "INFO: discovery-lists-restricted=no"; fi
echo "INFO: discovery-records=$(grep -c '^=====Discovery Log Entry' /tmp/discover.txt)"
pass "nvme discover ($(elapsed))"

# ---- connect (2 I/O queues)
nvme connect -t tcp -a "$ADDR" -s "$PORT" -n "$NQN" -i 2
wait_namespaces
CTRL=$(ctrl_of "$NQN") || fail "no controller for $NQN in /sys/class/nvme"
NS1=$(ns_dev 1) NS2=$(ns_dev 2)
echo "INFO: ctrl $CTRL state=$(cat /sys/class/nvme/$CTRL/state) transport=$(cat /sys/class/nvme/$CTRL/transport) queue_count=$(cat /sys/class/nvme/$CTRL/queue_count) cntlid=$(cat /sys/class/nvme/$CTRL/cntlid)"
[ "$(cat /sys/class/nvme/$CTRL/state)" = live ] || fail "controller state is not live"
[ "$(cat /sys/class/nvme/$CTRL/queue_count)" -ge 3 ] || fail "fewer than 2 I/O queues (queue_count includes the admin queue)"
pass "nvme connect -i 2: $CTRL, $NS1, $NS2 ($(elapsed))"

nvme list
nvme id-ctrl "/dev/$CTRL" | tee /tmp/id-ctrl.txt
grep -qE "^subnqn +: $NQN\$" /tmp/id-ctrl.txt || fail "id-ctrl subnqn is not $NQN"
for f in cntlid kas ioccsz iorcsz icdoff sgls oncs vwc mdts ver nn maxcmd cmic; do grep -E "^$f +:" /tmp/id-ctrl.txt || true; done
pass "nvme id-ctrl ($(elapsed))"
nvme id-ns "$NS1" | tee /tmp/id-ns1.txt
nvme id-ns "$NS2" | tee /tmp/id-ns2.txt
grep -E "^(nsze|ncap|nuse|nlbaf|flbas|dlfeat|nguid|eui64) " /tmp/id-ns1.txt /tmp/id-ns2.txt || true
[ "$(blockdev --getsize64 "$NS1")" = "$NS1_BYTES" ] || fail "$NS1 is $(blockdev --getsize64 "$NS1") bytes, expected $NS1_BYTES"
[ "$(blockdev --getss "$NS1")" = "$NS1_BS" ] || fail "$NS1 block size $(blockdev --getss "$NS1"), expected $NS1_BS"
[ "$(blockdev --getsize64 "$NS2")" = "$NS2_BYTES" ] || fail "$NS2 is $(blockdev --getsize64 "$NS2") bytes, expected $NS2_BYTES"
[ "$(blockdev --getss "$NS2")" = "$NS2_BS" ] || fail "$NS2 block size $(blockdev --getss "$NS2"), expected $NS2_BS"
pass "nvme id-ns, sizes and block sizes ($(elapsed))"

# ---- data written by the Java side before the VM started (namespace 2, byte offset 102400)
if [ -n "${JAVA_MARKER:-}" ]; then
  got=$(dd if="$NS2" bs=512 skip=200 count=1 iflag=direct status=none | tr -d '\0')
  [ "$got" = "$JAVA_MARKER" ] || fail "namespace 2 LBA 200 holds '$got', expected '$JAVA_MARKER'"
  pass "read back the block the Java host wrote"
fi

# ---- fio with crc32c verification: 4k (in-capsule), 16k (in-capsule limit), 128k (R2T/H2CData)
for bs in 4k 16k 128k; do
  run_fio "ns1-$bs" "$NS1" "$bs" "$FIO_SIZE"
  pass "fio randrw verify bs=$bs on $NS1 ($(elapsed))"
done
run_fio "ns2-512" "$NS2" "512/50:4k/50" 4M
pass "fio randrw verify bs 512/4k on $NS2 ($(elapsed))"

# ---- discard (DSM deallocate) reads back as zeros
DMAX=$(cat "/sys/block/$(basename "$NS1")/queue/discard_max_bytes")
[ "$DMAX" -gt 0 ] || fail "no discard support on $NS1 (discard_max_bytes=0: ONCS bit 2 not set?)"
fill_random "$NS1" $((8 << 20)) $((1 << 20))
blkdiscard -o $((8 << 20)) -l $((1 << 20)) "$NS1"
zeros "$NS1" $((8 << 20)) $((1 << 20)) || fail "discarded range does not read back as zeros"
pass "blkdiscard 1 MiB reads back as zeros ($(elapsed))"

# ---- Write Zeroes
fill_random "$NS1" $((12 << 20)) $((1 << 20))
SLBA=$(( (12 << 20) / NS1_BS )) NLB0=$(( (1 << 20) / NS1_BS - 1 ))
nvme write-zeroes "$NS1" --start-block=$SLBA --block-count=$NLB0
zeros "$NS1" $((12 << 20)) $((1 << 20)) || fail "write-zeroes range does not read back as zeros"
pass "nvme write-zeroes 1 MiB reads back as zeros ($(elapsed))"

# ---- a block for the Java side to read after the VM is gone
{ printf 'NVMEOF-JAVA-INTEROP-GUEST'; head -c 4071 /dev/zero; } | dd of="$NS1" bs=4096 seek=50000 oflag=direct status=none
pass "marker block written"

nvme disconnect -n "$NQN" | tee /tmp/disc.txt
grep -q "disconnected 1 controller" /tmp/disc.txt || fail "nvme disconnect did not disconnect 1 controller"
wait_gone
pass "nvme disconnect ($(elapsed))"

# ---- again with header and data digests
nvme connect -t tcp -a "$ADDR" -s "$PORT" -n "$NQN" -i 2 --hdr-digest --data-digest
wait_namespaces
CTRL=$(ctrl_of "$NQN") NS1=$(ns_dev 1)
echo "INFO: digest ctrl $CTRL queue_count=$(cat /sys/class/nvme/$CTRL/queue_count) cntlid=$(cat /sys/class/nvme/$CTRL/cntlid)"
pass "nvme connect --hdr-digest --data-digest ($(elapsed))"
run_fio "digest" "$NS1" "4k/50:128k/50" "$FIO_SIZE"
pass "fio randrw verify bs 4k/128k with digests ($(elapsed))"
nvme disconnect -n "$NQN" | grep -q "disconnected 1 controller" || fail "disconnect after the digest run"
wait_gone
pass "nvme disconnect (digests) ($(elapsed))"

# ---- a subsystem that does not allow this host
if nvme connect -t tcp -a "$ADDR" -s "$PORT" -n "$RNQN" > /tmp/restricted.txt 2>&1; then
  cat /tmp/restricted.txt; fail "connect to $RNQN succeeded although $HOSTNQN is not allowed"
fi
cat /tmp/restricted.txt
sleep 0.5
if ls /sys/block | grep -qE '^nvme'; then fail "a namespace appeared after the refused connect"; fi
if ctrl_of "$RNQN" >/dev/null; then fail "a controller for $RNQN exists after the refused connect"; fi
dmesg | grep -iE "not allowed|invalid host|Connect" | tail -5 || true
pass "connect to $RNQN refused ($(elapsed))"

trap - ERR
set +x
echo "===== dmesg (nvme), for the record"; dmesg | grep -iE "nvme|nvmf" | tail -60 || true
echo "ALL PASS ($(elapsed))"
