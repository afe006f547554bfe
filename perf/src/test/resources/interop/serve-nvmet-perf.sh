# serve-nvmet-perf.sh NS_SIZE MAX_SEC - the kernel's nvmet-tcp target for CompareNvmetIT (bin/nvmeof-perf on the host,
# through run.sh --fwd HOSTPORT:4420): subsystem nqn.2014-08.org.nvmexpress:peervm-perf (allow_any_host) on tcp
# 0.0.0.0:4420 with one namespace, a NS_SIZE tmpfs file through a loop device with 4096-byte sectors (it keeps data,
# so --verify checks something). Prints "PEERVM READY" once listening; when the host creates the file stop in the
# job dir (or MAX_SEC pass) prints the kernel log since READY.
set -euo pipefail
NS=${1:-128M}; MAX=${2:-900}
NQN=nqn.2014-08.org.nvmexpress:peervm-perf
modprobe -a nvmet nvmet-tcp loop
truncate -s "$NS" /dev/shm/ns1.img
DEV=$(losetup -f --show --sector-size 4096 /dev/shm/ns1.img)
nvmet-config subsys "$NQN" "$DEV"
nvmet-config port 1 tcp 0.0.0.0 4420
nvmet-config link 1 "$NQN"
nvmet-config show
dmesg -c > /dev/null || true
echo "PEERVM READY (tcp, $NQN, nsid 1 = $DEV $NS) at uptime $(cut -d' ' -f1 /proc/uptime)s"
end=$(( $(date +%s) + MAX ))
while [ ! -e /job/stop ] && [ "$(date +%s)" -lt "$end" ]; do sleep 0.5; done
echo "stopping at uptime $(cut -d' ' -f1 /proc/uptime)s"
echo "----- kernel log (since READY)"
dmesg
echo "----- end of kernel log"
