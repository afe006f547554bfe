# Checks linux-kernel-host.sh itself against the reference target, the kernel nvmet in the same VM:
# run.sh --share <this directory> nvmet-self-check.sh. If this passes and the Java target fails, the
# difference is the Java target's. Same namespace layout as LinuxKernelHostIT: 256 MiB / 4096 and
# 64 MiB / 512, plus a subsystem that allows only another host.
set -euo pipefail
NQN=nqn.2026-01.io.nvmeof:selfcheck RNQN=nqn.2026-01.io.nvmeof:selfcheck-restricted
modprobe -a nvmet nvmet-tcp loop
truncate -s 256M /dev/shm/ns1.img; truncate -s 64M /dev/shm/ns2.img; truncate -s 16M /dev/shm/ns3.img
L1=$(losetup -f --show --sector-size 4096 /dev/shm/ns1.img)
L2=$(losetup -f --show --sector-size 512 /dev/shm/ns2.img)
L3=$(losetup -f --show /dev/shm/ns3.img)
nvmet-config subsys "$NQN" "$L1" "$L2"
nvmet-config subsys "$RNQN" "$L3"
C=/sys/kernel/config/nvmet
echo 0 > "$C/subsystems/$RNQN/attr_allow_any_host"
mkdir "$C/hosts/nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-0000000000ff"
ln -s "$C/hosts/nqn.2014-08.org.nvmexpress:uuid:00000000-0000-4000-8000-0000000000ff" "$C/subsystems/$RNQN/allowed_hosts/"
nvmet-config port 1 tcp 127.0.0.1 4420
nvmet-config link 1 "$NQN"
nvmet-config link 1 "$RNQN"
bash /share/linux-kernel-host.sh 127.0.0.1 4420 "$NQN" "$RNQN" $((256 << 20)) 4096 $((64 << 20)) 512 16M
