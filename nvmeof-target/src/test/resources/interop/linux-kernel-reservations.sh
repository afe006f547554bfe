# Runs in the peer VM (run.sh prepends "#!/bin/bash" and "set -- ARGS"): NVMe reservations driven by the Linux
# kernel host (nvme-tcp + nvme-cli) against a target at ADDR:PORT, normally the Java target on the host's 127.0.0.1
# (10.0.2.2 in the guest). The guest connects twice to NQN, as two hosts (different --hostnqn and --hostid), with
# native multipath off so each connection gives its own block device of namespace 1; then registers, acquires,
# reports, preempts, releases and clears with nvme resv-*, and checks with dd that I/O from the host the reservation
# excludes fails and succeeds after the release. Once without and once with header and data digests.
# Prints "PASS: <step>" per step, "FAIL: <why>" and the kernel log on failure, and "ALL PASS" at the end.
#
# args: ADDR PORT NQN
set -euxo pipefail
ADDR=$1 PORT=$2 NQN=$3
HNQN_A=nqn.2014-08.org.nvmexpress:uuid:5eed0000-0000-4000-8000-0000000000a1
HID_A=5eed0000-0000-4000-8000-0000000000a1
HNQN_B=nqn.2014-08.org.nvmexpress:uuid:5eed0000-0000-4000-8000-0000000000b2
HID_B=5eed0000-0000-4000-8000-0000000000b2
KEY_A=1111 KEY_B=2222

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

ctrl_of_host() { local d; for d in /sys/class/nvme/nvme*; do
  [ "$(cat "$d/subsysnqn" 2>/dev/null)" = "$NQN" ] && [ "$(cat "$d/hostnqn" 2>/dev/null)" = "$1" ] && { basename "$d"; return 0; }
done; return 1; }
dev_of_host() { local c b; c=$(ctrl_of_host "$1") || return 1
  b=$(ls "/sys/class/nvme/$c" | grep -E '^nvme[0-9]+n1$' | head -1); [ -n "$b" ] && echo "/dev/$b"; }
wait_dev() { for _ in $(seq 300); do dev_of_host "$1" >/dev/null && return 0; sleep 0.1; done; fail "no namespace 1 for $1 within 30 s"; }
can_write() { dd if=/dev/urandom of="$1" bs=4096 seek=100 count=1 oflag=direct status=none 2>/tmp/dd.err; }
can_read() { dd if="$1" of=/dev/null bs=4096 skip=100 count=1 iflag=direct status=none 2>/tmp/dd.err; }
must_write() { can_write "$1" || { cat /tmp/dd.err; fail "$2: write on $1 failed"; }; }
must_not_write() { if can_write "$1"; then fail "$2: write on $1 succeeded"; fi; cat /tmp/dd.err; }
must_read() { can_read "$1" || { cat /tmp/dd.err; fail "$2: read on $1 failed"; }; }
must_not_read() { if can_read "$1"; then fail "$2: read on $1 succeeded"; fi; cat /tmp/dd.err; }
report() { nvme resv-report "$1" --eds | tee /tmp/report.txt; }
report_has() { grep -qE "^$1 *: *$2\$" /tmp/report.txt || fail "report: $1 is not $2"; }

echo "uptime at job start: $(cut -d' ' -f1 /proc/uptime)s"
# Native multipath would join both connections (same subsystem) into one block device: turn it off.
if [ -e /sys/module/nvme_core ]; then modprobe -r nvme-tcp nvme-fabrics nvme nvme-core || true; fi
modprobe nvme-core multipath=N
[ "$(cat /sys/module/nvme_core/parameters/multipath)" = N ] || fail "nvme_core multipath is still on"
modprobe nvme-tcp
nvme version || true
for c in resv-register resv-acquire resv-release resv-report; do nvme "$c" --help 2>&1 | sed -n '1,30p' || true; done
pass "modprobe nvme-core multipath=N, nvme-tcp ($(elapsed))"

# nvme-cli 2.3 (libnvme) refuses a second connect to the same address and subsystem as "already connected" whatever
# the host NQN (even with --duplicate-connect); the kernel tells the two apart by host NQN and Host ID. So connect
# through the kernel's own interface, /dev/nvme-fabrics, as nvme-cli does underneath.
kconnect() { # HOSTNQN HOSTID [extra options, e.g. hdr_digest,data_digest]
  local opts="transport=tcp,traddr=$ADDR,trsvcid=$PORT,nqn=$NQN,hostnqn=$1,hostid=$2,nr_io_queues=1${3:+,$3}"
  local line
  exec 3<>/dev/nvme-fabrics
  echo "$opts" >&3
  read -r line <&3 || true
  exec 3>&-
  echo "INFO: connected $1: $line"
}

scenario() { # LABEL [extra connect options]
  local label=$1; shift
  kconnect "$HNQN_A" "$HID_A" "$@"
  kconnect "$HNQN_B" "$HID_B" "$@"
  wait_dev "$HNQN_A"; wait_dev "$HNQN_B"
  local DA DB; DA=$(dev_of_host "$HNQN_A"); DB=$(dev_of_host "$HNQN_B")
  [ "$DA" != "$DB" ] || fail "both hosts got the same block device $DA"
  nvme list
  pass "$label: two hosts connected: A $DA, B $DB ($(elapsed))"

  nvme id-ctrl "$DA" | grep -iE "^oncs" | tee /tmp/oncs.txt
  (( $(awk '{print $3}' /tmp/oncs.txt) & 0x20 )) || fail "ONCS has no Reservations bit"
  nvme id-ns "$DA" | grep -iE "^(nmic|rescap)" | tee /tmp/rescap.txt
  grep -qiE "^rescap *: *0xfe" /tmp/rescap.txt || fail "RESCAP is not 0xfe"
  pass "$label: ONCS bit 5, RESCAP 0xfe"

  nvme resv-register "$DA" --nrkey=$KEY_A --rrega=0
  nvme resv-register "$DB" --nrkey=$KEY_B --rrega=0
  report "$DA"; report_has regctl 2; report_has rtype 0
  pass "$label: nvme resv-register (both hosts)"

  nvme resv-acquire "$DA" --crkey=$KEY_A --rtype=1 --racqa=0
  report "$DB"; report_has rtype 1
  pass "$label: nvme resv-acquire Write Exclusive by A"
  must_write "$DA" "holder"; must_read "$DB" "Write Exclusive, other host"
  must_not_write "$DB" "Write Exclusive, other host"
  pass "$label: write from B refused while A holds Write Exclusive"
  if nvme resv-acquire "$DB" --crkey=$KEY_B --rtype=1 --racqa=0; then fail "B acquired a reservation A holds"; fi
  pass "$label: acquire by B refused"

  nvme resv-release "$DA" --crkey=$KEY_A --rtype=1 --rrela=0
  report "$DB"; report_has rtype 0
  must_write "$DB" "after release"
  pass "$label: nvme resv-release; B writes again"

  nvme resv-acquire "$DA" --crkey=$KEY_A --rtype=2 --racqa=0
  must_not_read "$DB" "Exclusive Access, other host"; must_read "$DA" "Exclusive Access, holder"
  pass "$label: read from B refused while A holds Exclusive Access"

  nvme resv-acquire "$DB" --crkey=$KEY_B --prkey=$KEY_A --rtype=1 --racqa=1
  report "$DA"; report_has rtype 1; report_has regctl 1
  must_not_write "$DA" "A preempted"; must_write "$DB" "B, the new holder"
  pass "$label: nvme resv-acquire preempt by B; A unregistered"

  nvme resv-release "$DB" --crkey=$KEY_B --rrela=1
  report "$DA"; report_has regctl 0; report_has rtype 0
  must_write "$DA" "after clear"
  pass "$label: nvme resv-release clear"

  nvme disconnect -n "$NQN"
  for _ in $(seq 300); do ctrl_of_host "$HNQN_A" >/dev/null || ctrl_of_host "$HNQN_B" >/dev/null || break; sleep 0.1; done
  pass "$label: disconnect ($(elapsed))"
}

scenario "plain"
scenario "digests" "hdr_digest,data_digest"
echo "ALL PASS ($(elapsed))"
