# linux-6.12-guest.sh - runs in the peer VM's linux-6.12 guest for Linux612GuestIT: proves the guest has what the
# NVMe security work builds on. The kernel is 6.12; NVMe in-band authentication (DH-HMAC-CHAP) works between the
# kernel's nvmet-tcp and nvme-tcp in the guest (right key connects and does I/O, wrong or no key is refused,
# bidirectional works); what NVMe/TCP TLS needs is there (tlshd, nvme-cli's --tls, nvmet's addr_tsas tls1.3).
# Prints "CHECK OK name: detail" or "CHECK FAIL name: detail" per check, then "CHECKS DONE". Everything stays
# inside the guest (127.0.0.1); exit status 0 unless the script itself breaks.
set -u
C=/sys/kernel/config/nvmet
HOSTNQN=$(cat /etc/nvme/hostnqn)
SUB=nqn.2014-08.org.nvmexpress:peervm-auth
ok() { echo "CHECK OK $*"; }
bad() { echo "CHECK FAIL $*"; }
# check NAME CMD...: OK with the command's last output line, FAIL with its last lines; prints the time it took
check() {
  local name=$1 out rc t0=$(date +%s%N); shift
  out=$("$@" 2>&1); rc=$?
  local ms=$(( ($(date +%s%N) - t0) / 1000000 ))
  if [ $rc = 0 ]; then ok "$name: $(tail -1 <<< "$out") ($ms ms)"; else bad "$name: rc $rc: $(tail -4 <<< "$out" | tr '\n' ' ') ($ms ms)"; fi
}
# refused NAME CMD...: the command must fail (a connect that the target has to reject)
refused() {
  local name=$1 out rc; shift
  out=$("$@" 2>&1); rc=$?
  if [ $rc != 0 ]; then ok "$name: refused (rc $rc: $(tail -1 <<< "$out"))"; else bad "$name: it connected: $out"; fi
}
connected() { grep -lxF "$SUB" /sys/class/nvme/nvme*/subsysnqn 2>/dev/null | head -1 | xargs -r dirname; }
disconnect() { nvme disconnect -n "$SUB" > /dev/null 2>&1; for _ in $(seq 50); do [ -z "$(connected)" ] && return 0; sleep 0.1; done; return 1; }
connect() { timeout 60 nvme connect -t tcp -a 127.0.0.1 -s 4420 -n "$SUB" "$@"; }

echo "uptime at job start: $(cut -d' ' -f1 /proc/uptime)s; kernel $(uname -r); nvme-cli: $(nvme version | head -1)"
check kernel-6.12 grep -E '^6\.12\.' /proc/sys/kernel/osrelease
check modules modprobe -a nvmet nvmet-tcp nvme-tcp nvme-auth

# nvmet: a host entry has DH-HMAC-CHAP attributes only with CONFIG_NVME_TARGET_AUTH
RD=$(nvmet-config ramdisk /dev/shm/ns.img 64M)
nvmet-config subsys "$SUB" "$RD"
nvmet-config host "$SUB" "$HOSTNQN"
check nvmet-dhchap-key-attr ls "$C/hosts/$HOSTNQN/dhchap_key" "$C/hosts/$HOSTNQN/dhchap_ctrl_key" "$C/hosts/$HOSTNQN/dhchap_hash"

# TLS: tlshd does the handshake for the kernel; nvme-cli must know --tls; nvmet takes tls1.3 on a tcp port
check tlshd sh -c 'command -v tlshd && tlshd --help 2>&1 | head -1; command -v tlshd'
check nvme-cli-tls sh -c 'nvme connect --help 2>&1 | grep -E -- "--tls \]"'
check nvmet-tcp-tls-port sh -c "mkdir $C/ports/9 && echo tcp > $C/ports/9/addr_trtype && echo ipv4 > $C/ports/9/addr_adrfam \
  && echo tls1.3 > $C/ports/9/addr_tsas && echo addr_tsas=\$(cat $C/ports/9/addr_tsas) addr_treq=\$(cat $C/ports/9/addr_treq)"
rmdir "$C/ports/9" 2>/dev/null
check nvme-tls-keyring sh -c 'grep -E "keyring +\.nvme" /proc/keys'

# DH-HMAC-CHAP between the kernel's nvmet-tcp and nvme-tcp: secrets from nvme-cli, transformed with SHA-256 (hmac 1)
KEY=$(nvme gen-dhchap-key --hmac=1 --nqn="$HOSTNQN")
WRONG=$(nvme gen-dhchap-key --hmac=1 --nqn="$HOSTNQN")
CKEY=$(nvme gen-dhchap-key --hmac=1 --nqn="$SUB")
echo "host key ${KEY:0:14}... (nvme gen-dhchap-key)"
check gen-dhchap-key sh -c "echo '$KEY' | grep -E '^DHHC-1:01:.+:$' && [ '$KEY' != '$WRONG' ]"
nvmet-config host "$SUB" "$HOSTNQN" "$KEY"
nvmet-config port 1 tcp 127.0.0.1 4420
nvmet-config link 1 "$SUB"
check auth-connect connect --dhchap-secret="$KEY"
for _ in $(seq 50); do [ -n "$(connected)" ] && ls "$(connected)"/nvme*n1 >/dev/null 2>&1 && break; sleep 0.1; done
CTRL=$(connected)
check auth-state sh -c "cat $CTRL/state | grep -x live"
NS=/dev/$(basename "$(ls -d "$CTRL"/nvme*n1 2>/dev/null | head -1)")
# the kernel says how the host authenticated (the target's side: "creating nvm controller ... with DH-HMAC-CHAP")
check auth-kernel-log sh -c 'dmesg | grep -m1 "with DH-HMAC-CHAP" && dmesg | grep -m1 "qid 0: authenticated with hash"'
check auth-io sh -c "head -c 1M /dev/urandom > /tmp/a && dd if=/tmp/a of=$NS bs=1M count=1 oflag=direct 2>/dev/null \
  && dd if=$NS of=/tmp/b bs=1M count=1 iflag=direct 2>/dev/null && cmp /tmp/a /tmp/b && echo 1 MiB written and read back on $NS"
check auth-disconnect disconnect
refused auth-wrong-key-refused connect --dhchap-secret="$WRONG"
none_left() { [ -z "$(connected)" ] && echo "no controller of $SUB"; }
check no-controller-left none_left
refused auth-no-key-refused connect
disconnect
# bidirectional: the controller proves its key too
nvmet-config host "$SUB" "$HOSTNQN" "$KEY" "$CKEY"
check auth-bidirectional connect --dhchap-secret="$KEY" --dhchap-ctrl-secret="$CKEY"
check auth-bidirectional-kernel-log sh -c 'dmesg | grep -m1 "qid 0: controller authenticated"'
check auth-bidirectional-disconnect disconnect
echo "----- kernel log"
dmesg | grep -E "nvme|nvmet" | tail -20
echo "CHECKS DONE at uptime $(cut -d' ' -f1 /proc/uptime)s"
