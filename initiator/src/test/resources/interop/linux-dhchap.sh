# linux-dhchap.sh - runs in the peer VM's linux-6.12 guest for LinuxDhchapIT (run.sh prepends "#!/bin/bash" and
# "set -- ARGS"). Two parts in one boot:
#  1. the kernel's NVMe/TCP host (nvme-tcp, nvme-cli 2.13, fio) against the Java target at 10.0.2.2:PORT with
#     DH-HMAC-CHAP: NQN_UNI asks for SHA-256 and the null group (unidirectional), NQN_BIDI for SHA-512 and ffdhe4096
#     (bidirectional); fio verify over each; a wrong key, no key and a wrong controller key refused. Also prints
#     "FACT ..." lines: nvme-cli's own gen-dhchap-key and check-dhchap-key outputs for the test's fixed inputs.
#  2. the kernel's nvmet-tcp on 0.0.0.0:4420 (forwarded to the host) with NVMET_NQN, only JAVA_HOSTNQN allowed, with
#     its DH-HMAC-CHAP keys, dhchap_hash hmac(sha384) and dhchap_dhgroup ffdhe3072, for our initiator. Prints
#     "PEERVM READY" and serves until the job's stop file appears.
# Part 1 prints "CHECK OK name: ..." or "CHECK FAIL name: ..." per check and "HOST CHECKS DONE".
# args: PORT NQN_UNI NQN_BIDI KEY CKEY WRONG SECRET32 SECRET48 SECRET64 NVMET_NQN JAVA_HOSTNQN NVMET_KEY NVMET_CKEY
#       FACT_NQN FACT_KEY NEW_KEY
# Re-authentication: after the unidirectional fio pass the script prints "REAUTH READY" and waits for the file
# /job/reauth (the test has given the target NEW_KEY by then), writes NEW_KEY to the controller's dhchap_secret in
# sysfs (the kernel then authenticates every queue again) and checks I/O still works.
set -u
PORT=$1 NQN_UNI=$2 NQN_BIDI=$3 KEY=$4 CKEY=$5 WRONG=$6 S32=$7 S48=$8 S64=$9
NVMET_NQN=${10} JAVA_HOSTNQN=${11} NVMET_KEY=${12} NVMET_CKEY=${13} FACT_NQN=${14} FACT_KEY=${15} NEW_KEY=${16}
HOSTNQN=$(cat /etc/nvme/hostnqn)
ok() { echo "CHECK OK $*"; }
bad() { echo "CHECK FAIL $*"; }
check() {
  local name=$1 out rc t0=$(date +%s%N); shift
  out=$("$@" 2>&1); rc=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  if [ $rc = 0 ]; then ok "$name: $(tail -1 <<< "$out") ($ms ms)"; else bad "$name: rc $rc: $(tail -6 <<< "$out" | tr '\n' ' ') ($ms ms)"; fi
}
refused() {
  local name=$1 out rc; shift
  out=$("$@" 2>&1); rc=$?
  if [ $rc != 0 ]; then ok "$name: refused (rc $rc: $(tail -1 <<< "$out"))"; else bad "$name: it connected: $out"; fi
}
connected() { grep -lxF "$1" /sys/class/nvme/nvme*/subsysnqn 2>/dev/null | head -1 | xargs -r dirname; }
disconnect() { nvme disconnect -n "$1" > /dev/null 2>&1; for _ in $(seq 100); do [ -z "$(connected "$1")" ] && return 0; sleep 0.1; done; return 1; }
connect() { local n=$1; shift; timeout 120 nvme connect -t tcp -a 10.0.2.2 -s "$PORT" -n "$n" "$@"; }
ns_of() { # NQN: the block device of namespace 1, once it is there
  local c; for _ in $(seq 100); do c=$(connected "$1"); [ -n "$c" ] && ls -d "$c"/nvme*n1 >/dev/null 2>&1 && break; sleep 0.1; done
  echo "/dev/$(basename "$(ls -d "$c"/nvme*n1 | head -1)")"
}
fio_verify() { # NAME DEV
  fio --name="$1" --filename="$2" --rw=randrw --bs=4k --size=16M --ioengine=libaio --iodepth=16 --direct=1 \
      --verify=crc32c --do_verify=1 --verify_fatal=1 --verify_state_save=0 --randrepeat=0 --runtime=120 \
      --output="/tmp/fio-$1.txt" && grep -qE "err= *0" "/tmp/fio-$1.txt" && grep -E "^  (read|write):" "/tmp/fio-$1.txt" | tr '\n' ' '
}

echo "uptime at job start: $(cut -d' ' -f1 /proc/uptime)s; kernel $(uname -r); $(nvme version | head -1); host $HOSTNQN"
modprobe -a nvme-tcp nvme-auth
# nvme-cli's own values for fixed inputs (the Java side compares them with its computation)
echo "FACT gen1 $(nvme gen-dhchap-key --secret="$S32" --hmac=1 --nqn="$FACT_NQN")"
echo "FACT gen2 $(nvme gen-dhchap-key --secret="$S48" --hmac=2 --nqn="$FACT_NQN")"
echo "FACT gen3 $(nvme gen-dhchap-key --secret="$S64" --hmac=3 --nqn="$FACT_NQN")"
echo "FACT gen0 $(nvme gen-dhchap-key --secret="$S32" --hmac=0)"
echo "FACT check $(nvme check-dhchap-key --key="$FACT_KEY" 2>&1)"
echo "FACT checkhost $(nvme check-dhchap-key --key="$KEY" 2>&1)"

dmesg -c > /dev/null
check uni-connect connect "$NQN_UNI" --dhchap-secret="$KEY"
DEV=$(ns_of "$NQN_UNI")
check uni-fio-verify fio_verify uni "$DEV"
check uni-kernel-log sh -c 'dmesg | grep -m1 "qid 0: authenticated with hash hmac(sha256) dhgroup null"'
echo "REAUTH READY at uptime $(cut -d' ' -f1 /proc/uptime)s"
for _ in $(seq 600); do [ -e /job/reauth ] && break; sleep 0.2; done
CTRL=$(connected "$NQN_UNI")
auths() { dmesg | grep -c "qid 0: authenticated with hash"; }
reauth() {
  local n0; n0=$(auths)
  echo -n "$NEW_KEY" > "$CTRL/dhchap_secret" || return 1
  for _ in $(seq 200); do [ "$(auths)" -gt "$n0" ] && break; sleep 0.1; done
  [ "$(auths)" -gt "$n0" ] && sleep 1 && echo "$(basename "$CTRL") re-authenticated ($(auths) admin queue authentications); state $(cat "$CTRL/state")"
}
check uni-reauth reauth
check uni-reauth-io sh -c "head -c 1M /dev/urandom > /tmp/a && dd if=/tmp/a of=$DEV bs=1M count=1 oflag=direct 2>/dev/null \
  && dd if=$DEV of=/tmp/b bs=1M count=1 iflag=direct 2>/dev/null && cmp /tmp/a /tmp/b && echo 1 MiB written and read back after re-authentication"
check uni-disconnect disconnect "$NQN_UNI"
check bidi-connect connect "$NQN_BIDI" --dhchap-secret="$KEY" --dhchap-ctrl-secret="$CKEY"
DEV=$(ns_of "$NQN_BIDI")
check bidi-fio-verify fio_verify bidi "$DEV"
check bidi-kernel-log sh -c 'dmesg | grep -m1 "qid 0: authenticated with hash hmac(sha512) dhgroup ffdhe4096" && dmesg | grep -m1 "qid 0: controller authenticated"'
check bidi-disconnect disconnect "$NQN_BIDI"
refused wrong-key-refused connect "$NQN_UNI" --dhchap-secret="$WRONG"
refused no-key-refused connect "$NQN_UNI"
refused wrong-ctrl-key-refused connect "$NQN_BIDI" --dhchap-secret="$KEY" --dhchap-ctrl-secret="$WRONG"
none_left() { [ -z "$(connected "$NQN_UNI")" ] && [ -z "$(connected "$NQN_BIDI")" ] && echo "no controller left"; }
check none-left none_left
echo "----- kernel log (host part)"
dmesg | grep -E "nvme" | tail -30
echo "HOST CHECKS DONE at uptime $(cut -d' ' -f1 /proc/uptime)s"

# ---- part 2: nvmet with DH-HMAC-CHAP for our initiator
set -e
modprobe -a nvmet nvmet-tcp
RD=$(nvmet-config ramdisk /dev/shm/ns.img 64M)
nvmet-config subsys "$NVMET_NQN" "$RD"
nvmet-config host "$NVMET_NQN" "$JAVA_HOSTNQN" "$NVMET_KEY" "$NVMET_CKEY"
echo -n "hmac(sha384)" > "/sys/kernel/config/nvmet/hosts/$JAVA_HOSTNQN/dhchap_hash"
echo -n "ffdhe3072" > "/sys/kernel/config/nvmet/hosts/$JAVA_HOSTNQN/dhchap_dhgroup"
echo "INFO nvmet host dhchap_hash=$(cat "/sys/kernel/config/nvmet/hosts/$JAVA_HOSTNQN/dhchap_hash") dhchap_dhgroup=$(cat "/sys/kernel/config/nvmet/hosts/$JAVA_HOSTNQN/dhchap_dhgroup")"
nvmet-config port 1 tcp 0.0.0.0 4420
nvmet-config link 1 "$NVMET_NQN"
set +e
dmesg -c > /dev/null
echo "PEERVM READY (nvmet-tcp with DH-HMAC-CHAP) at uptime $(cut -d' ' -f1 /proc/uptime)s"
end=$(( $(date +%s) + 900 ))
while [ ! -e /job/stop ] && [ "$(date +%s)" -lt "$end" ]; do sleep 0.5; done
echo "----- kernel log (nvmet part)"
dmesg | grep -E "nvme" | tail -40
echo "----- end"
