# Runs in the peer VM (run.sh prepends "#!/bin/bash" and "set -- ARGS"): the Linux kernel's native NVMe multipath
# against ONE subsystem of the Java target reached through TWO listeners (ports PORT1, PORT2 on ADDR, normally the
# host's 127.0.0.1 = 10.0.2.2). Per round (plain, then header+data digests): connect both paths, check one
# multipath block device with two paths (ANA optimized / non-optimized), run fio randwrite + crc32c verify in a
# loop on the multipath device while the Java side flips the ANA states four times, and disconnect.
#
# Protocol with the Java side (it reads output.log live): the script prints "FLIP <round> <k>"; the Java side sets
# the states of phase k (odd k: PORT1 inaccessible, PORT2 optimized; even k: PORT1 optimized, PORT2 non-optimized);
# the script waits until the kernel shows them in /sys/block/<path>/ana_state (the ANA change notice made it re-read
# the ANA log), prints "PHASE <round> <k> START", lets fio run 5 s, prints "PHASE <round> <k> END". The Java side
# counts the commands each path carried between START and END.
#
# args: ADDR PORT1 PORT2 NQN [FIO_SIZE]
set -euxo pipefail
ADDR=$1 P1=$2 P2=$3 NQN=$4 FIO_SIZE=${5:-8M}

dump() {
  set +x
  echo "===== nvme list-subsys"; nvme list-subsys 2>&1 || true
  echo "===== dmesg (nvme)"; dmesg | grep -iE "nvme|nvmf" | tail -80 || true
  echo "===== end of dmesg"
}
fail() { set +x; echo "FAIL: $*"; dump; exit 1; }
trap 'rc=$?; set +x; echo "FAIL: command failed (rc=$rc) at line $LINENO: $BASH_COMMAND"; dump; exit $rc' ERR
pass() { { set +x; } 2>/dev/null; echo "PASS: $*"; set -x; }
say() { { set +x; } 2>/dev/null; echo "$*"; set -x; }
t0=$(date +%s%N)
elapsed() { echo "$(( ($(date +%s%N) - t0) / 1000000 )) ms"; }

# The multipath device of namespace 1 (nvme<subsys>n1) and the hidden per-path nodes (nvme<subsys>c<ctrl>n1).
heads() { ls /sys/block | grep -E '^nvme[0-9]+n1$' || true; }
paths() { ls /sys/block | grep -E '^nvme[0-9]+c[0-9]+n1$' || true; }
# The per-path node whose controller is connected to trsvcid $1.
path_of() {
  local p c
  for p in $(paths); do
    c=$(echo "$p" | sed -E 's/^nvme[0-9]+c([0-9]+)n1$/\1/')
    grep -q "trsvcid=$1\b" "/sys/class/nvme/nvme$c/address" 2>/dev/null && { echo "$p"; return 0; }
  done
  return 1
}
wait_state() { # PATH STATE: wait up to 60 s for /sys/block/PATH/ana_state = STATE
  local s=
  for _ in $(seq 600); do
    s=$(cat "/sys/block/$1/ana_state" 2>/dev/null || true)
    [ "$s" = "$2" ] && return 0
    sleep 0.1
  done
  fail "$1 ana_state is '$s', not $2, after 60 s"
}
io_count() { awk '{print $1 + $5}' "/sys/block/$1/stat"; } # reads + writes completed on that path node

modprobe nvme-tcp
[ "$(cat /sys/module/nvme_core/parameters/multipath)" = Y ] || fail "nvme_core multipath is not Y"
pass "native multipath enabled (nvme_core.multipath=Y), $(uname -r) ($(elapsed))"

round() { # NAME CONNECT-OPTIONS...
  local name=$1; shift
  nvme connect -t tcp -a "$ADDR" -s "$P1" -n "$NQN" "$@"
  nvme connect -t tcp -a "$ADDR" -s "$P2" -n "$NQN" "$@"
  for _ in $(seq 300); do [ "$(paths | wc -l)" = 2 ] && [ "$(heads | wc -l)" = 1 ] && break; sleep 0.1; done
  [ "$(heads | wc -l)" = 1 ] || fail "$name: expected one multipath device, /sys/block has: $(ls /sys/block)"
  [ "$(paths | wc -l)" = 2 ] || fail "$name: expected two paths, /sys/block has: $(ls /sys/block)"
  local head dev path1 path2
  head=$(heads); dev=/dev/$head
  path1=$(path_of "$P1") || fail "$name: no path through port $P1"
  path2=$(path_of "$P2") || fail "$name: no path through port $P2"
  wait_state "$path1" optimized
  wait_state "$path2" non-optimized
  nvme list-subsys "$dev" | tee /tmp/list-subsys.txt
  grep -q "trsvcid=$P1" /tmp/list-subsys.txt || fail "$name: list-subsys does not show port $P1"
  grep -q "trsvcid=$P2" /tmp/list-subsys.txt || fail "$name: list-subsys does not show port $P2"
  grep -qE "trsvcid=$P1.* optimized" /tmp/list-subsys.txt || fail "$name: list-subsys: port $P1 not optimized"
  grep -qE "trsvcid=$P2.* non-optimized" /tmp/list-subsys.txt || fail "$name: list-subsys: port $P2 not non-optimized"
  say "INFO: $name: $dev paths $path1 (port $P1) $path2 (port $P2), ana_grpid $(cat /sys/block/$path1/ana_grpid)"
  pass "$name: one multipath device with two paths, optimized + non-optimized ($(elapsed))"

  # fio randwrite then verify (crc32c), over and over, on the multipath device, until told to stop.
  rm -f /tmp/fio-stop /tmp/fio-failed /tmp/fio-runs
  (
    set +e +x
    i=0
    while [ ! -f /tmp/fio-stop ]; do
      i=$((i + 1))
      if ! fio --name="mp-$name-$i" --filename="$dev" --rw=randwrite --bs=4k --size="$FIO_SIZE" \
          --ioengine=libaio --iodepth=16 --direct=1 --verify=crc32c --do_verify=1 --verify_fatal=1 \
          --verify_state_save=0 --randrepeat=0 --output="/tmp/fio-$name-$i.txt"; then
        echo "fio run $i exited non-zero" > /tmp/fio-failed; cat "/tmp/fio-$name-$i.txt"; break
      fi
      grep -qE "err= *0" "/tmp/fio-$name-$i.txt" || { echo "fio run $i err" > /tmp/fio-failed; cat "/tmp/fio-$name-$i.txt"; break; }
      echo "$i" > /tmp/fio-runs
    done
  ) &
  local fio_pid=$! k want1 want2 s1 s2
  sleep 2
  for k in 1 2 3 4; do
    if [ $((k % 2)) = 1 ]; then want1=inaccessible want2=optimized; else want1=optimized want2=non-optimized; fi
    say "FLIP $name $k"
    wait_state "$path1" "$want1"
    wait_state "$path2" "$want2"
    s1=$(io_count "$path1"); s2=$(io_count "$path2")
    say "PHASE $name $k START"
    sleep 5
    say "PHASE $name $k END"
    say "INFO: $name phase $k (port $P1 $want1, port $P2 $want2): the guest's path counters moved by" \
        "$(( $(io_count "$path1") - s1 )) / $(( $(io_count "$path2") - s2 ))"
    [ ! -f /tmp/fio-failed ] || fail "$name: $(cat /tmp/fio-failed)"
  done
  touch /tmp/fio-stop
  wait "$fio_pid" || true
  [ ! -f /tmp/fio-failed ] || fail "$name: $(cat /tmp/fio-failed)"
  [ -s /tmp/fio-runs ] || fail "$name: no fio run completed"
  grep -hE "^  (read|write):" /tmp/fio-"$name"-*.txt | tail -4 || true
  pass "$name: fio randwrite + verify crc32c passed in $(cat /tmp/fio-runs) runs across 4 ANA flips ($(elapsed))"
  nvme disconnect -n "$NQN"
  for _ in $(seq 300); do [ -z "$(heads)" ] && [ -z "$(paths)" ] && break; sleep 0.1; done
  [ -z "$(heads)$(paths)" ] || fail "$name: devices still present after disconnect"
  pass "$name: disconnect ($(elapsed))"
}

round plain
round digests --hdr-digest --data-digest
echo "ALL PASS"
