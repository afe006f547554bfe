# Guest script (peer VM, run.sh --share DIR): Soft-RoCE rxe0 on eth0, then DisniVerbsCheck over the DiSNI provider.
# /share/cp holds the class path: transport-rdma jar (with libnvmeofrdma.so), test classes, nvmeof-core, DiSNI, slf4j.
set -u
A=$(ip -4 -o addr show eth0 | awk '{print $4}' | cut -d/ -f1)
echo "== rxe0 on eth0 ($A)"
modprobe -a ib_uverbs rdma_ucm rdma_rxe || exit 3
rdma link add rxe0 type rxe netdev eth0 || exit 3
rdma link show
ibv_devices
# rxe uses the IPv4 RoCEv2 GID; rdma_cm picks it from the address
ibv_devinfo -d rxe0 -v | grep -E "GID\[|max_qp_rd_atom|max_qp_init_rd_atom" | head -6
echo "== DisniVerbsCheck"
java -version 2>&1 | head -1
# -Xint: no JIT. The guest runs under QEMU's multi-threaded TCG, which can translate an instruction that HotSpot is
# patching on another vCPU (the jump it writes over a compiled method's entry when C2 replaces C1's code): the JVM then
# dies with SIGSEGV in C1 code of whatever method was being replaced (AbstractStringBuilder.append,
# DirectByteBuffer.get, ...). A plain Java program with no RDMA in it crashes the same way in this VM; the check takes
# as long interpreted (about 9 s).
timeout 300 java -Xint --add-exports java.base/sun.nio.ch=ALL-UNNAMED -XX:ErrorFile=/tmp/hs_err_%p.log \
  -cp "/share/cp/*:/share/test-classes" io.nvmeof.transport.rdma.disni.DisniVerbsCheck "$A"
rc=$?
echo "== DisniVerbsCheck rc=$rc"
# a JVM that died on a signal (rc 134: SIGABRT after a fatal error) left its error report: the summary and the stack
for f in /tmp/hs_err_*.log; do
  [ -f "$f" ] || continue
  echo "== $f"
  grep -E "^# |^(C|J|j|V|v)  " "$f" | head -40
done
dmesg | grep -iE "rxe|rdma" | tail -5
exit $rc
