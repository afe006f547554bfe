# nvmet-multipath-ana.sh SIZE MAX_SEC - the kernel's nvmet-tcp serving ONE subsystem on TWO ports with ANA, for
# LinuxNvmetMultipathIT (our initiator's multipath on the host, through run.sh --fwd H1:4420 --fwd H2:4421):
#   subsystem nqn.2014-08.org.nvmexpress:peervm-mpath (allow_any_host), nsid 1 = SIZE tmpfs file via loop (keeps
#   data), ANA group 1; port 1 tcp 0.0.0.0:4420 (group 1 optimized), port 2 tcp 0.0.0.0:4421 (non-optimized).
# Prints "PEERVM READY" once listening. Then runs the commands the host test leaves in the job dir as cmd.1, cmd.2,
# ... (one line each, executed in order, "DONE N ..." printed after each):
#   ana PORT STATE   echo STATE > ports/PORT/ana_groups/1/ana_state (optimized, non-optimized, inaccessible,
#                    persistent-loss, change): nvmet sends the ANA change notice to that port's controllers
#   down PORT        unlink the subsystem from PORT: nvmet deletes that port's controllers and, with no subsystem
#                    left, disables the port (its listener closes)
#   up PORT          link it again (the port listens again)
# until the host creates the file stop (or MAX_SEC pass); then prints the kernel log.
set -euo pipefail
SIZE=${1:-64M}; MAX=${2:-900}
NQN=nqn.2014-08.org.nvmexpress:peervm-mpath
C=/sys/kernel/config/nvmet
modprobe -a nvmet nvmet-tcp loop
RD=$(nvmet-config ramdisk /dev/shm/mpath.img "$SIZE")
nvmet-config subsys "$NQN" "$RD"
nvmet-config port 1 tcp 0.0.0.0 4420
nvmet-config port 2 tcp 0.0.0.0 4421
nvmet-config link 1 "$NQN"
nvmet-config link 2 "$NQN"
echo non-optimized > $C/ports/2/ana_groups/1/ana_state
for p in 1 2; do echo "INFO port $p group 1 $(cat $C/ports/$p/ana_groups/1/ana_state)"; done
echo "INFO ns 1 uuid=$(cat $C/subsystems/$NQN/namespaces/1/device_uuid 2>/dev/null || echo ?)" \
     "ana_grpid=$(cat $C/subsystems/$NQN/namespaces/1/ana_grpid 2>/dev/null || echo ?)"
dmesg -c > /dev/null || true
echo "PEERVM READY (tcp, $NQN, ports 4420 and 4421) at uptime $(cut -d' ' -f1 /proc/uptime)s"
end=$(( $(date +%s) + MAX ))
n=1
while [ ! -e /job/stop ] && [ "$(date +%s)" -lt "$end" ]; do
  if [ -e "/job/cmd.$n" ]; then
    read -r verb port arg < "/job/cmd.$n" || true
    rc=0
    case "$verb" in
      ana) echo "$arg" > "$C/ports/$port/ana_groups/1/ana_state" || rc=$?;;
      down) rm "$C/ports/$port/subsystems/$NQN" || rc=$?;;
      up) ln -s "$C/subsystems/$NQN" "$C/ports/$port/subsystems/$NQN" || rc=$?;;
      *) rc=99;;
    esac
    echo "DONE $n $verb $port ${arg:-} rc=$rc at uptime $(cut -d' ' -f1 /proc/uptime)s"
    n=$((n + 1))
    continue
  fi
  sleep 0.05
done
echo "stopping at uptime $(cut -d' ' -f1 /proc/uptime)s"
echo "----- kernel log (since READY)"
dmesg
echo "----- end of kernel log"
