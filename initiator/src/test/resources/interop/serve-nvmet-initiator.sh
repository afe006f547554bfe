# serve-nvmet-initiator.sh NS2_SIZE NS3_SIZE MAX_SEC - the kernel's nvmet-tcp target for LinuxNvmetIT (our
# initiator on the host, through run.sh --fwd HOSTPORT:4420). Modelled on peer-vm/tests/serve-nvmet.sh.
#   subsystem nqn.2014-08.org.nvmexpress:peervm (allow_any_host) on tcp 0.0.0.0:4420:
#     nsid 1 = null_blk 4 GiB, 512-byte blocks (keeps no data)
#     nsid 2 = NS2_SIZE tmpfs file via loop, 512-byte sectors (keeps data)
#     nsid 3 = NS3_SIZE tmpfs file via loop, 4096-byte sectors (keeps data)
# Prints "PEERVM READY" once listening, "INFO ..." lines the test may read, and the kernel log when the host creates
# the file stop in the job dir (or MAX_SEC pass). Exit status 0 unless the setup failed.
set -euo pipefail
NS2=${1:-64M}; NS3=${2:-16M}; MAX=${3:-900}
NQN=nqn.2014-08.org.nvmexpress:peervm
modprobe -a nvmet nvmet-tcp loop
nvmet-config nullb 1 4
RD2=$(nvmet-config ramdisk /dev/shm/ns2.img "$NS2")
truncate -s "$NS3" /dev/shm/ns3.img
RD3=$(losetup -f --show --sector-size 4096 /dev/shm/ns3.img)
nvmet-config subsys "$NQN" /dev/nullb0 "$RD2" "$RD3"
nvmet-config port 1 tcp 0.0.0.0 4420
nvmet-config link 1 "$NQN"
nvmet-config show
for d in nullb0 "${RD2#/dev/}" "${RD3#/dev/}"; do
  q=/sys/block/$d/queue
  echo "INFO $d size=$(( $(cat /sys/block/$d/size) * 512 )) lbs=$(cat $q/logical_block_size)" \
       "discard_max=$(cat $q/discard_max_bytes) write_zeroes_max=$(cat $q/write_zeroes_max_bytes)" \
       "write_cache=$(cat $q/write_cache 2>/dev/null || echo ?)"
done
P=/sys/kernel/config/nvmet/ports/1
for a in param_inline_data_size param_max_queue_size param_pi_enable; do
  [ -e "$P/$a" ] && echo "INFO port $a=$(cat "$P/$a")"
done
S=/sys/kernel/config/nvmet/subsystems/$NQN
for a in attr_model attr_serial attr_version attr_qid_max attr_cntlid_min attr_cntlid_max; do
  [ -e "$S/$a" ] && echo "INFO subsys $a=$(cat "$S/$a")"
done
dmesg -c > /dev/null || true   # from here on the kernel log shows only what the test caused
echo "PEERVM READY (tcp, $NQN) at uptime $(cut -d' ' -f1 /proc/uptime)s"
end=$(( $(date +%s) + MAX ))
while [ ! -e /job/stop ] && [ "$(date +%s)" -lt "$end" ]; do sleep 0.5; done
echo "stopping at uptime $(cut -d' ' -f1 /proc/uptime)s"
# Whether the data the host wrote last is really in the backing file: md5 of the first 4 MiB of namespace 2 (the
# test compares it with its own model when the host left a marker file naming what it expects).
if [ -e /job/md5-request ]; then
  read -r OFF LEN < /job/md5-request
  echo "INFO md5 ns2 $OFF $LEN $(dd if="$RD2" bs=512 skip=$((OFF / 512)) count=$((LEN / 512)) status=none | md5sum | cut -d' ' -f1)"
fi
echo "----- kernel log (since READY)"
dmesg
echo "----- end of kernel log"
