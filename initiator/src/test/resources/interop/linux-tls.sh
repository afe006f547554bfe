# linux-tls.sh PORT_A SECRET_A WRONG_A HOST_A SUB_A SECRET_B HOST_B SUB_B MAX_SEC SECRET_384 HOST_A384 HOST_B384 - NVMe/TCP TLS 1.3 between the
# Linux 6.12 guest and our code, for LinuxTlsIT. tlshd does the kernel's handshakes, with the .nvme keyring linked.
# A) the kernel host against our target on the host (10.0.2.2:PORT_A, TLS required): nvme-cli 2.13 puts the TLS PSK
#    for HOST_A/SUB_A (configured PSK SECRET_A, SHA-256, identity v0) into the keyring; nvme connect --tls; fio verify;
#    then the same identity with the key WRONG_A must be refused. Prints "CHECK OK|FAIL name: ...".
# B) the kernel's nvmet-tcp with a TLS 1.3 port (addr_tsas tls1.3, addr_treq required) on 4420 for our initiator
#    (through run.sh --fwd), subsystem SUB_B, the TLS PSKs of HOST_B (SECRET_B, SHA-256) under identities v0 and v1.
#    Prints "PEERVM READY", then waits for the stop file (or MAX_SEC), then tlshd's log and the kernel log.
set -u
PORT_A=$1; SECRET_A=$2; WRONG_A=$3; HOST_A=$4; SUB_A=$5; SECRET_B=$6; HOST_B=$7; SUB_B=$8; MAX=${9:-900}
S384=${10}; HOST_A384=${11}; HOST_B384=${12}
C=/sys/kernel/config/nvmet
ok() { echo "CHECK OK $*"; }
bad() { echo "CHECK FAIL $*"; }
check() {
  local name=$1 out rc; shift
  out=$("$@" 2>&1); rc=$?
  if [ $rc = 0 ]; then ok "$name: $(tail -1 <<< "$out")"; else bad "$name: rc $rc: $(tail -6 <<< "$out" | tr '\n' ' ')"; fi
}
refused() {
  local name=$1 out rc; shift
  out=$("$@" 2>&1); rc=$?
  if [ $rc != 0 ]; then ok "$name: refused (rc $rc: $(tail -1 <<< "$out"))"; else bad "$name: it connected: $out"; fi
}
connected() { grep -lxF "$SUB_A" /sys/class/nvme/nvme*/subsysnqn 2>/dev/null | head -1 | xargs -r dirname; }

echo "kernel $(uname -r); $(nvme version | tr '\n' ' ')"
modprobe -a nvmet nvmet-tcp nvme-tcp loop
cat > /etc/tlshd.conf <<CONF
[debug]
loglevel=2
tls=0
nl=0
[authenticate]
keyrings=.nvme
[authenticate.client]
[authenticate.server]
CONF
tlshd -s > /tmp/tlshd.log 2>&1 &
sleep 1
check tlshd-running pgrep -x tlshd

# ---- A: the kernel host against our target
check a-gen-tls-key nvme gen-tls-key --hostnqn="$HOST_A" --subsysnqn="$SUB_A" --secret="$SECRET_A" --hmac=1 --identity=0 --insert
grep psk /proc/keys | sed 's/^/INFO key /'
check a-connect timeout 120 nvme connect -t tcp -a 10.0.2.2 -s "$PORT_A" -n "$SUB_A" --hostnqn="$HOST_A" --tls
for _ in $(seq 100); do [ -n "$(connected)" ] && ls "$(connected)"/nvme*n1 > /dev/null 2>&1 && break; sleep 0.1; done
CTRL=$(connected)
NS=/dev/$(basename "$(ls -d "$CTRL"/nvme*n1 2>/dev/null | head -1)")
echo "INFO controller $CTRL namespace $NS"
check a-state sh -c "cat $CTRL/state | grep -x live"
check a-tls-kernel-log sh -c 'dmesg | grep -i -m2 "tls"; true'
check a-fio-verify fio --name=tls --filename="$NS" --direct=1 --rw=randrw --bs=4k --bsrange=4k-128k --iodepth=8 \
  --ioengine=libaio --size=16M --verify=crc32c --do_verify=1 --verify_fatal=1 --output-format=terse
check a-dd sh -c "head -c 4M /dev/urandom > /tmp/a && dd if=/tmp/a of=$NS bs=1M count=4 oflag=direct 2>/dev/null \
  && dd if=$NS of=/tmp/b bs=1M count=4 iflag=direct 2>/dev/null && cmp /tmp/a /tmp/b && echo 4 MiB written and read back"
check a-disconnect sh -c "nvme disconnect -n $SUB_A && for i in \$(seq 50); do [ -z \"\$(grep -lxF $SUB_A /sys/class/nvme/nvme*/subsysnqn 2>/dev/null)\" ] && exit 0; sleep 0.1; done; exit 1"
# discovery over TLS: the discovery NQN's own TLS PSK; the log entry says TLS 1.3 required
DISC=nqn.2014-08.org.nvmexpress.discovery
check a-gen-tls-key-discovery nvme gen-tls-key --hostnqn="$HOST_A" --subsysnqn="$DISC" --secret="$SECRET_A" --hmac=1 --identity=0 --insert
DOUT=$(timeout 120 nvme discover -t tcp -a 10.0.2.2 -s "$PORT_A" --hostnqn="$HOST_A" --tls 2>&1); echo "$DOUT" | sed 's/^/INFO discover /'
check a-discover-tls sh -c "echo '$DOUT' | grep -q 'subnqn: *$SUB_A' && echo '$DOUT' | grep -i 'sectype: *tls13' | head -1 && echo '$DOUT' | grep -i 'treq: *required' | head -1"
# the same identity with another key: the handshake must fail
check a-gen-wrong-key nvme gen-tls-key --hostnqn="$HOST_A" --subsysnqn="$SUB_A" --secret="$WRONG_A" --hmac=1 --identity=0 --insert
refused a-wrong-key-refused timeout 120 nvme connect -t tcp -a 10.0.2.2 -s "$PORT_A" -n "$SUB_A" --hostnqn="$HOST_A" --tls
check a-no-controller-left sh -c "[ -z \"\$(grep -lxF $SUB_A /sys/class/nvme/nvme*/subsysnqn 2>/dev/null)\" ] && echo none"
# a SHA-384 ("R02") key: tlshd binds it to SHA-256, our target follows the binder
check a384-gen-tls-key nvme gen-tls-key --hostnqn="$HOST_A384" --subsysnqn="$SUB_A" --secret="$S384" --hmac=2 --identity=0 --insert
check a384-connect timeout 120 nvme connect -t tcp -a 10.0.2.2 -s "$PORT_A" -n "$SUB_A" --hostnqn="$HOST_A384" --tls
for _ in $(seq 100); do [ -n "$(connected)" ] && ls "$(connected)"/nvme*n1 > /dev/null 2>&1 && break; sleep 0.1; done
NS=/dev/$(basename "$(ls -d "$(connected)"/nvme*n1 2>/dev/null | head -1)")
check a384-dd sh -c "head -c 4M /dev/urandom > /tmp/a && dd if=/tmp/a of=$NS bs=1M count=4 oflag=direct 2>/dev/null \
  && dd if=$NS of=/tmp/b bs=1M count=4 iflag=direct 2>/dev/null && cmp /tmp/a /tmp/b && echo 4 MiB written and read back over an R02 key"
check a384-disconnect nvme disconnect -n "$SUB_A"

# ---- B: nvmet-tcp with a TLS port for our initiator
RD=$(nvmet-config ramdisk /dev/shm/nsb.img 64M)
nvmet-config subsys "$SUB_B" "$RD"
P=$C/ports/1
mkdir "$P"
echo tcp > "$P/addr_trtype"; echo ipv4 > "$P/addr_adrfam"; echo 0.0.0.0 > "$P/addr_traddr"; echo 4420 > "$P/addr_trsvcid"
echo tls1.3 > "$P/addr_tsas"; echo required > "$P/addr_treq"
ln -s "$C/subsystems/$SUB_B" "$P/subsystems/$SUB_B"
echo "INFO port addr_tsas=$(cat $P/addr_tsas) addr_treq=$(cat $P/addr_treq)"
check b-gen-tls-key-v0 nvme gen-tls-key --hostnqn="$HOST_B" --subsysnqn="$SUB_B" --secret="$SECRET_B" --hmac=1 --identity=0 --insert
check b-gen-tls-key-v1 nvme gen-tls-key --hostnqn="$HOST_B" --subsysnqn="$SUB_B" --secret="$SECRET_B" --hmac=1 --identity=1 --insert
check b384-gen-tls-key nvme gen-tls-key --hostnqn="$HOST_B384" --subsysnqn="$SUB_B" --secret="$S384" --hmac=2 --identity=0 --insert
grep psk /proc/keys | grep "$SUB_B" | sed 's/^/INFO key /'
dmesg -c > /dev/null
echo "PEERVM READY (nvmet-tcp tls1.3 on 4420) at uptime $(cut -d' ' -f1 /proc/uptime)s"
end=$(( $(date +%s) + MAX ))
while [ ! -e /job/stop ] && [ "$(date +%s)" -lt "$end" ]; do sleep 0.5; done
if [ -e /job/md5-request ]; then
  read -r LEN < /job/md5-request
  echo "INFO md5 nsb $LEN $(dd if="$RD" bs=1M count=$((LEN / 1048576)) status=none | md5sum | cut -d' ' -f1)"
fi
echo "----- tlshd log"
tail -40 /tmp/tlshd.log
echo "----- kernel log (since READY)"
dmesg
echo "----- end"
