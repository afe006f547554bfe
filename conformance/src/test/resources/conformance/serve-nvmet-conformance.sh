# serve-nvmet-conformance.sh NQN SIZE MAX_SEC - nvmet-tcp for NvmetDifferentialIT: subsystem NQN (allow_any_host)
# with namespace 1 = a SIZE tmpfs file via loop (512-byte logical blocks, keeps data) on tcp 0.0.0.0:4420 (the host
# reaches it through run.sh --fwd). Prints "INFO ..." geometry lines and "PEERVM READY"; stops when the host creates
# the file stop in the job dir (or MAX_SEC pass), then prints the nvmet kernel log.
set -euo pipefail
NQN=$1; SIZE=$2; MAX=${3:-1500}
modprobe -a nvmet nvmet-tcp loop
RD=$(nvmet-config ramdisk /dev/shm/ns1.img "$SIZE")
nvmet-config subsys "$NQN" "$RD"
nvmet-config port 1 tcp 0.0.0.0 4420
nvmet-config link 1 "$NQN"
q=/sys/block/${RD#/dev/}/queue
echo "INFO ns1 bytes=$(( $(cat /sys/block/${RD#/dev/}/size) * 512 )) lbs=$(cat $q/logical_block_size) kernel=$(uname -r)"
echo "PEERVM READY at uptime $(cut -d' ' -f1 /proc/uptime)s"
end=$(( $(date +%s) + MAX ))
while [ ! -e /job/stop ] && [ "$(date +%s)" -lt "$end" ]; do sleep 0.5; done
echo "stopping; kernel log:"; dmesg | tail -60
