# Runs in the peer VM (run.sh --share DIR prepends "#!/bin/bash" and "set -- ARGS"): NVMe/RDMA over real verbs on
# Soft-RoCE (rdma_rxe on eth0, 10.0.2.15), every JVM inside the guest over DiSNI (-Dnvmeof.rdma.provider=disni, so
# a silent fallback to the software RNIC cannot fake a pass). Four parts, each in its own subshell so a failure in
# one still lets the next run:
#   (a) our RDMA target daemon  <- the kernel host (nvme-rdma, nvme-cli discover/connect/list/id-ctrl, fio crc32c)
#   (b) our initiator (RdmaGuestCheck) -> the kernel's nvmet-rdma target (loop devices on tmpfs, 512 B and 4 KiB)
#   (c) our initiator (JVM 2) -> our target daemon (JVM 1), both over DiSNI on rxe0
#   (d) the kernel host -> a file-backed namespace of our target daemon: discard punches holes, later writes reach it
# Prints "PASS: <step>" per step, "FAIL: <why>" plus dmesg and the JVM logs on failure, "PART x OK|FAILED" per part
# and "ALL PASS" at the end. Exit status 0 only if every part passed.
#
# /share/cp.txt: the guest class path of the jars and class directories the IT copied into /share.
# args: [PARTS]   a subset of "abcd" (default abcd)
set -u
PARTS=${1:-abcd}
A=10.0.2.15
OUR_NQN=nqn.2026-01.io.nvmeof:rdma-interop
KERNEL_NQN=nqn.2026-01.io.nvmeof:kernel-rdma
REGION=$((16 << 20))       # what RdmaGuestCheck writes and verifies per namespace
# the class path is copied to tmpfs first: class loading through 9p under TCG costs tens of seconds per JVM
t=$(date +%s%N); mkdir -p /tmp/cp && cp -r /share/cp /share/d* /tmp/cp/ && CP=$(sed 's#/share/#/tmp/cp/#g' /share/cp.txt) \
  || { echo "FAIL: cannot copy the class path from /share"; exit 3; }
echo "INFO: class path copied to /tmp/cp in $(( ($(date +%s%N) - t) / 1000000 )) ms: $(du -sh /tmp/cp | cut -f1)"
JAVA=(java --add-exports java.base/sun.nio.ch=ALL-UNNAMED -Dnvmeof.rdma.provider=disni -XX:+UseSerialGC
      -XX:TieredStopAtLevel=1 -cp "$CP")
T0=$(date +%s%N)
el() { echo "$(( ($(date +%s%N) - T0) / 1000000 )) ms"; }
say() { echo "$*"; }
pass() { echo "PASS: $* ($(el))"; }
dump() {
  echo "===== dmesg (rdma/nvme/rxe)"; dmesg | grep -iE "nvme|nvmet|rdma|rxe|infiniband" | tail -60
  for f in /tmp/target-*.log; do [ -f "$f" ] && { echo "===== $f (tail)"; tail -40 "$f"; }; done
  echo "===== end of dump"
}
fail() { echo "FAIL: $* ($(el))"; dump; exit 1; }
# rxe0's packet counters: proof the traffic went through Soft-RoCE
counters() { local d=/sys/class/infiniband/rxe0/ports/1/hw_counters
  echo "sent=$(cat $d/sent_pkts 2>/dev/null || echo ?) rcvd=$(cat $d/rcvd_pkts 2>/dev/null || echo ?)"; }
sent_pkts() { cat /sys/class/infiniband/rxe0/ports/1/hw_counters/sent_pkts 2>/dev/null || echo 0; }

# The kernel log since a mark: fio's verify or our checks could pass across a silent error recovery (reconnect), so
# every part also requires that the nvme-rdma host and nvmet-rdma logged no timeout, reset, reconnect or error.
dmesg_mark() { dmesg | wc -l; }
dmesg_clean() { # MARK WHAT
  local bad; bad=$(dmesg | tail -n +$(( $1 + 1 )) | grep -iE "nvme|nvmet|rdma|rxe" \
      | grep -iE "timeout|timed out|reconnect|reset|recovery|error|fail|bogus|QP event|invalid|abort")
  [ -z "$bad" ] || { echo "$bad"; fail "$2: the kernel logged the lines above"; }
  pass "$2: kernel log clean (no timeout, reset, reconnect, error)"
}
ns_dev() { local b; b=$(ls /sys/block | grep -E "^nvme[0-9]+n$1\$" | head -1); [ -n "$b" ] && echo "/dev/$b"; }
ctrl_of() { local d; for d in /sys/class/nvme/nvme*; do [ "$(cat "$d/subsysnqn" 2>/dev/null)" = "$1" ] && { basename "$d"; return 0; }; done; return 1; }

# Our target daemon (JVM 1) on rdma://A:4420: NS1 256 MiB (4 KiB blocks), NS2 64 MiB (512 B blocks), or the
# --namespace flags given after LOGNAME.
start_target() { # LOGNAME [--namespace SPEC ...]
  local log=/tmp/target-$1.log started; started=$(date +%s); shift
  local ns=("$@"); [ ${#ns[@]} -gt 0 ] || ns=(--namespace size=256M --namespace size=64M,bs=512)
  "${JAVA[@]}" -Xmx384m io.nvmeof.target.daemon.TargetDaemon --nqn "$OUR_NQN" --listen "rdma://$A:4420" \
      "${ns[@]}" > "$log" 2>&1 &
  local pid=$!
  echo $pid > /tmp/target.pid
  for _ in $(seq 600); do
    grep -q "^ready" "$log" && break
    kill -0 $pid 2>/dev/null || { cat "$log"; fail "target daemon exited before ready"; }
    sleep 0.2
  done
  grep -q "^ready" "$log" || { cat "$log"; fail "target daemon not ready within 120 s"; }
  echo "INFO: target daemon ready $(( $(date +%s) - started )) s after its start"
  cat "$log"
  grep -q "listening on rdma://$A:4420" "$log" || fail "target daemon does not say it listens on rdma://$A:4420"
  # the DiSNI provider is in the process (our JNI library and the rxe userspace driver mapped), the soft RNIC is not
  grep -q libnvmeofrdma /proc/$pid/maps || fail "libnvmeofrdma.so is not mapped in the target daemon"
  grep -q librxe /proc/$pid/maps || fail "the rxe verbs provider (librxe) is not mapped in the target daemon"
  # (probing the soft RNIC's availability creates its key registry PID-reg; its memory regions are PID-mN)
  ! grep -qE "nvmeof-softrnic/$pid-m" /proc/$pid/maps || fail "the target daemon maps software RNIC memory regions"
  say "INFO: target pid $pid maps $(grep -oE '[^/]*(nvmeofrdma|librxe)[^ ]*' /proc/$pid/maps | sort -u | tr '\n' ' ')"
  pass "our target daemon ready on rdma://$A:4420 over DiSNI"
}
stop_target() { # LOGNAME
  local pid; pid=$(cat /tmp/target.pid 2>/dev/null) || return 0
  kill -TERM "$pid" 2>/dev/null || return 0
  for _ in $(seq 150); do kill -0 "$pid" 2>/dev/null || break; sleep 0.2; done
  if kill -0 "$pid" 2>/dev/null; then kill -KILL "$pid"; rm -f /tmp/target.pid; fail "target daemon did not stop within 30 s of SIGTERM"; fi
  wait "$pid" 2>/dev/null; local rc=$?
  rm -f /tmp/target.pid
  echo "INFO: target daemon exited rc=$rc; log tail:"; tail -5 "/tmp/target-$1.log"
  grep -q "^stopped" "/tmp/target-$1.log" || fail "target daemon did not print 'stopped'"
  # an orderly run logs no WARNING/SEVERE (the "... IOException: host ... disconnected" INFO lines are normal)
  if grep -E " (WARNING|SEVERE) |Exception in thread|^[[:space:]]+at " "/tmp/target-$1.log"; then
    fail "the target daemon logged warnings or errors (above)"; fi
  pass "our target daemon stopped cleanly"
}

run_fio() { # NAME DEV BS SIZE
  local bsopt="--bs=$3"; [[ $3 == */* ]] && bsopt="--bssplit=$3"
  timeout 200 fio --name="$1" --filename="$2" --rw=randrw $bsopt --size="$4" --ioengine=libaio --iodepth=16 --direct=1 \
      --verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 --randrepeat=0 \
      --runtime=150 --group_reporting --output="/tmp/fio-$1.txt" || { cat "/tmp/fio-$1.txt"; fail "fio $1 on $2"; }
  grep -E "^  (read|write):|err=" "/tmp/fio-$1.txt" || true
  grep -qE "err= *0" "/tmp/fio-$1.txt" || { cat "/tmp/fio-$1.txt"; fail "fio $1 reported errors"; }
  grep -qE "verify" "/tmp/fio-$1.txt" && grep -iE "verify.*(fail|bad)" "/tmp/fio-$1.txt" && fail "fio $1 verify failure"
  return 0
}

# ------------------------------------------------------------------------------------------------ setup
echo "uptime at job start: $(cut -d' ' -f1 /proc/uptime)s, host NQN $(cat /etc/nvme/hostnqn)"
modprobe -a ib_uverbs rdma_ucm rdma_rxe || { echo "FAIL: modprobe rdma_rxe"; exit 3; }
rdma link add rxe0 type rxe netdev eth0 || { echo "FAIL: rdma link add rxe0"; exit 3; }
rdma link show
ibv_devinfo -d rxe0 | grep -E "hca_id|transport|state|active_mtu|link_layer"
java -version 2>&1 | head -1
echo "INFO: class path: $CP" | cut -c1-300
echo "INFO: rxe0 counters at start: $(counters)"
pass "setup: rxe0 on eth0 ($A)"
FAILED=""

# ------------------------------------------------------------------------------------------------ (a)
part_a() {
  echo "======== (a) our RDMA target daemon <- the Linux kernel host (nvme-rdma)"
  local mark; mark=$(dmesg_mark)
  start_target a
  modprobe nvme-rdma || fail "modprobe nvme-rdma"
  pass "a: modprobe nvme-rdma"
  timeout 60 nvme discover -t rdma -a $A -s 4420 > /tmp/discover.txt 2>&1 || { cat /tmp/discover.txt; fail "nvme discover -t rdma"; }
  cat /tmp/discover.txt
  grep -qE "^trtype: +rdma" /tmp/discover.txt || fail "discovery records do not say trtype rdma"
  grep -qE "^subnqn: +$OUR_NQN\$" /tmp/discover.txt || fail "discovery log does not list $OUR_NQN"
  grep -qE "^subtype: +nvme subsystem" /tmp/discover.txt || fail "no NVM subsystem record"
  grep -qE "^rdma_qptype: +connected" /tmp/discover.txt || fail "no rdma_qptype connected"
  grep -qE "^rdma_cms: +rdma-cm" /tmp/discover.txt || fail "no rdma_cms rdma-cm"
  grep -qE "^traddr: +$A" /tmp/discover.txt || fail "no traddr $A"
  pass "a: nvme discover -t rdma: $(grep -c '^=====Discovery Log Entry' /tmp/discover.txt) records, trtype rdma"
  timeout 60 nvme connect -t rdma -a $A -s 4420 -n "$OUR_NQN" -i 2 || fail "nvme connect -t rdma"
  for _ in $(seq 300); do ns_dev 1 >/dev/null && ns_dev 2 >/dev/null && break; sleep 0.1; done
  ns_dev 1 >/dev/null && ns_dev 2 >/dev/null || fail "namespaces 1 and 2 did not appear within 30 s"
  local ctrl; ctrl=$(ctrl_of "$OUR_NQN") || fail "no controller for $OUR_NQN"
  local ns1 ns2; ns1=$(ns_dev 1); ns2=$(ns_dev 2)
  local c=/sys/class/nvme/$ctrl
  echo "INFO: ctrl $ctrl state=$(cat $c/state) transport=$(cat $c/transport) queue_count=$(cat $c/queue_count) sqsize=$(cat $c/sqsize) cntlid=$(cat $c/cntlid) address=$(cat $c/address)"
  [ "$(cat $c/transport)" = rdma ] || fail "controller transport is not rdma"
  [ "$(cat $c/state)" = live ] || fail "controller state is not live"
  [ "$(cat $c/queue_count)" -ge 3 ] || fail "fewer than 2 I/O queues"
  pass "a: nvme connect -t rdma -i 2: $ctrl, $ns1, $ns2"
  # the poll groups made an SRQ on rxe0 through libnvmeofrdma (DiSNI 2.1 has none), so every QP receives from it
  grep -E "poll group .*shared receive queue" /tmp/target-a.log
  grep -qE "poll group .*: a shared receive queue of [0-9]+ buffers" /tmp/target-a.log \
    || fail "the target's poll groups made no shared receive queue"
  grep -q "no shared receive queue" /tmp/target-a.log && fail "a poll group of the target has no shared receive queue"
  pass "a: the queues receive commands from their poll group's shared receive queue"
  nvme list
  nvme id-ctrl /dev/$ctrl > /tmp/id-ctrl.txt || fail "nvme id-ctrl"
  for f in mn fr cntlid kas mdts ioccsz iorcsz icdoff sgls msdbd maxcmd subnqn; do grep -E "^$f +:" /tmp/id-ctrl.txt; done
  grep -qE "^subnqn +: $OUR_NQN\$" /tmp/id-ctrl.txt || fail "id-ctrl subnqn"
  grep -qE "^ioccsz +: 260" /tmp/id-ctrl.txt || fail "id-ctrl ioccsz is not 260"
  grep -qE "^sgls +: (0x)?100005" /tmp/id-ctrl.txt || fail "id-ctrl sgls is not 0x100005"
  pass "a: nvme list / id-ctrl"
  [ "$(blockdev --getsize64 $ns1)" = $((256 << 20)) ] && [ "$(blockdev --getss $ns1)" = 4096 ] || fail "$ns1 is not 256 MiB / 4096"
  [ "$(blockdev --getsize64 $ns2)" = $((64 << 20)) ] && [ "$(blockdev --getss $ns2)" = 512 ] || fail "$ns2 is not 64 MiB / 512"
  pass "a: namespace sizes and block sizes"
  for bs in 4k 16k 128k; do
    run_fio "a-$bs" "$ns1" $bs 16M
    pass "a: fio randrw verify=crc32c bs=$bs 16 MiB on $ns1"
  done
  run_fio "a-512" "$ns2" "512/50:4k/50" 4M
  pass "a: fio randrw verify=crc32c bs 512/4k 4 MiB on $ns2"
  timeout 60 nvme disconnect -n "$OUR_NQN" | tee /tmp/disc.txt
  grep -q "disconnected 1 controller" /tmp/disc.txt || fail "nvme disconnect"
  for _ in $(seq 300); do ctrl_of "$OUR_NQN" >/dev/null || break; sleep 0.1; done
  ctrl_of "$OUR_NQN" >/dev/null && fail "controller still present 30 s after disconnect"
  pass "a: nvme disconnect"
  grep -E "connect|disconnect|controller" /tmp/target-a.log | head -12
  stop_target a
  dmesg | tail -n +$((mark + 1)) | grep -iE "nvme|nvmet|rdma"
  dmesg_clean "$mark" "a"
}

# ------------------------------------------------------------------------------------------------ (b)
part_b() {
  echo "======== (b) our initiator over DiSNI -> the kernel's nvmet-rdma target"
  local mark; mark=$(dmesg_mark)
  modprobe -a nvmet nvmet-rdma || fail "modprobe nvmet-rdma"
  local rd1 rd2
  rd1=$(nvmet-config ramdisk /dev/shm/nvmet-ns1.img 64M) || fail "ramdisk 1"
  truncate -s 32M /dev/shm/nvmet-ns2.img && rd2=$(losetup -b 4096 -f --show /dev/shm/nvmet-ns2.img) || fail "ramdisk 2"
  nvmet-config subsys "$KERNEL_NQN" "$rd1" "$rd2" || fail "nvmet subsys"
  nvmet-config port 1 rdma $A 4421 || fail "nvmet port rdma $A 4421"
  nvmet-config link 1 "$KERNEL_NQN" || fail "nvmet link"
  nvmet-config show
  pass "b: nvmet-rdma on $A:4421: $KERNEL_NQN ns1 $rd1 (64 MiB, 512 B) ns2 $rd2 (32 MiB, 4 KiB)"
  local s0; s0=$(sent_pkts)
  timeout 300 "${JAVA[@]}" -Xmx384m io.nvmeof.initiator.interop.RdmaGuestCheck b $A 4421 "$KERNEL_NQN" $REGION \
      > /tmp/check-b.log 2>&1
  local rc=$?
  cat /tmp/check-b.log
  [ $rc = 0 ] && grep -q "^ALL PASS b" /tmp/check-b.log || fail "b: RdmaGuestCheck rc=$rc"
  echo "INFO: rxe0 sent packets during (b): $(( $(sent_pkts) - s0 ))"
  # what the kernel target holds is what the Java host wrote
  local n f want got
  for n in 1 2; do
    f=/dev/shm/nvmet-ns$n.img
    want=$(grep -oE "ns$n sha256 0\+$REGION = [0-9a-f]+" /tmp/check-b.log | awk '{print $NF}')
    got=$(head -c $REGION $f | sha256sum | awk '{print $1}')
    echo "INFO: ns$n backing file sha256 $got, pattern $want"
    [ -n "$want" ] && [ "$want" = "$got" ] || fail "b: nvmet namespace $n backing file does not hold the pattern the Java host wrote"
  done
  pass "b: the nvmet backing files hold exactly the pattern (sha256 of the first $REGION bytes of both namespaces)"
  nvmet-config clear || fail "nvmet-config clear"
  losetup -d "$rd1" "$rd2"
  pass "b: nvmet cleared"
  dmesg | tail -n +$((mark + 1)) | grep -iE "nvme|nvmet|rdma"
  dmesg_clean "$mark" "b"
}

# ------------------------------------------------------------------------------------------------ (c)
part_c() {
  echo "======== (c) our initiator (JVM 2) -> our target daemon (JVM 1), both over DiSNI on rxe0"
  local mark; mark=$(dmesg_mark)
  start_target c
  local s0; s0=$(sent_pkts)
  timeout 300 "${JAVA[@]}" -Xmx384m io.nvmeof.initiator.interop.RdmaGuestCheck c $A 4420 "$OUR_NQN" $REGION \
      > /tmp/check-c.log 2>&1
  local rc=$?
  cat /tmp/check-c.log
  [ $rc = 0 ] && grep -q "^ALL PASS c" /tmp/check-c.log || fail "c: RdmaGuestCheck rc=$rc"
  local d=$(( $(sent_pkts) - s0 ))
  echo "INFO: rxe0 sent packets during (c): $d"
  [ "$d" -gt 1000 ] || fail "c: only $d packets went through rxe0"
  pass "c: traffic went through rxe0 ($d packets sent)"
  grep -E "connect|disconnect|controller" /tmp/target-c.log | head -12
  stop_target c
  dmesg_clean "$mark" "c"
}

# ------------------------------------------------------------------------------------------------ (d)
# A file-backed namespace over real verbs: its chunks are registered memory regions (pinned pages of the file's
# mapping). A discard punches holes, which takes those pages out of the file; data written afterwards must land in
# the file (new registrations on its new pages), not in the old pinned pages: checked in the file after a clean stop.
on_disk() { echo $(( $(stat -c '%b * %B' "$1") )); }
part_d() {
  echo "======== (d) a file namespace of our RDMA target daemon: discard punches holes, later writes reach the file"
  local mark; mark=$(dmesg_mark)
  local img=/tmp/ns-d.img M=$((1 << 20))
  rm -f $img
  start_target d --namespace "size=64M,file=$img"
  grep -q "deallocate keeps its blocks" /tmp/target-d.log && fail "d: the daemon cannot punch holes here"
  modprobe nvme-rdma || fail "modprobe nvme-rdma"
  timeout 60 nvme connect -t rdma -a $A -s 4420 -n "$OUR_NQN" -i 2 || fail "nvme connect -t rdma"
  for _ in $(seq 300); do ns_dev 1 >/dev/null && break; sleep 0.1; done
  local ns1; ns1=$(ns_dev 1) || fail "namespace 1 did not appear within 30 s"
  pass "d: nvme connect -t rdma: $ns1 in $img"
  head -c $((16 * M)) /dev/urandom > /tmp/d-a.bin
  dd if=/tmp/d-a.bin of=$ns1 bs=1M oflag=direct status=none || fail "d: write 16 MiB"
  nvme flush $ns1 || fail "d: flush"
  local before; before=$(on_disk $img)
  [ "$before" -ge $((16 * M)) ] || fail "d: 16 MiB written but $before bytes on disk"
  pass "d: 16 MiB written over RDMA, $before bytes on disk"
  blkdiscard -o 0 -l $((8 * M)) $ns1 || fail "d: blkdiscard"
  local punched; punched=$(on_disk $img)
  # reading the holes back must not allocate them again (registering a file's pages for RDMA would)
  dd if=$ns1 bs=1M count=8 iflag=direct status=none | cmp -n $((8 * M)) - /dev/zero || fail "d: discarded range is not zeros"
  local after; after=$(on_disk $img)
  [ "$punched" -le $((before - 8 * M + M)) ] && [ "$after" -le $((before - 8 * M + M)) ] \
      || fail "d: 8 MiB discarded but on disk $before -> $punched bytes, $after after reading the range"
  pass "d: blkdiscard 8 MiB reads zeros, on disk $before -> $punched bytes, $after after reading the range"
  head -c $((8 * M)) /dev/urandom > /tmp/d-b.bin
  dd if=/tmp/d-b.bin of=$ns1 bs=1M oflag=direct status=none || fail "d: write 8 MiB into the holes"
  { cat /tmp/d-b.bin; tail -c $((8 * M)) /tmp/d-a.bin; } > /tmp/d-want.bin
  dd if=$ns1 bs=1M count=16 iflag=direct status=none | cmp - /tmp/d-want.bin || fail "d: read back over RDMA differs"
  pass "d: 8 MiB written into the holes over RDMA read back"
  nvme flush $ns1 || fail "d: flush"
  timeout 60 nvme disconnect -n "$OUR_NQN" >/dev/null || fail "d: nvme disconnect"
  stop_target d
  head -c $((16 * M)) $img | cmp - /tmp/d-want.bin || fail "d: the file does not hold what was written after the discard"
  pass "d: the file holds what was written after the discard"
  dmesg_clean "$mark" "d"
}

for p in a b c d; do
  case "$PARTS" in *$p*) ;; *) continue;; esac
  ( part_$p ); rc=$?
  if [ $rc = 0 ]; then echo "PART $p OK ($(el))"; else
    echo "PART $p FAILED rc=$rc ($(el))"; FAILED="$FAILED $p"
    # leave a clean slate for the next part
    pid=$(cat /tmp/target.pid 2>/dev/null) && { kill -KILL "$pid" 2>/dev/null; rm -f /tmp/target.pid; }
    nvme disconnect-all >/dev/null 2>&1
    nvmet-config clear >/dev/null 2>&1
  fi
done
echo "INFO: rxe0 counters at end: $(counters)"
dmesg | grep -iE "rxe|rdma" | grep -viE "rdma_rxe: loaded" | tail -5
if [ -z "$FAILED" ]; then echo "ALL PASS ($(el))"; exit 0; fi
echo "FAILED PARTS:$FAILED"
exit 1
