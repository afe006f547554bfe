# Shared by the bin/ launchers: build on first use, JVM options. Sourced, not run.

# nvmeof_ensure_built MODULE: (re)builds MODULE and what it depends on when its jar is missing or any pom.xml or
# source file is newer than it. Build output goes to stderr so that stdout stays the tool's own.
nvmeof_ensure_built() {
  local module=$1 jar stale=0
  jar=$(ls "$ROOT/$module"/build/*.jar 2>/dev/null | grep -v -- '-tests.jar' | head -1 || true)
  if [ -z "$jar" ] || [ ! -d "$ROOT/$module/build/lib" ]; then
    stale=1
  elif [ -n "$(find "$ROOT" -path "$ROOT/.git" -prune -o \( -name pom.xml -o -path '*/src/main/*' \) -type f -newer "$jar" -print -quit)" ]; then
    stale=1
  fi
  if [ $stale = 1 ]; then
    command -v mvn >/dev/null || { echo "nvmeof: Maven (mvn) is needed to build nvmeof-java: apt-get install maven" >&2; exit 1; }
    echo "nvmeof: building nvmeof-java ($module and its dependencies; first use takes a minute)..." >&2
    (cd "$ROOT" && mvn -B -q -DskipTests -Dmaven.test.skip=true -Dspotless.check.skip=true install -pl "$module" -am) >&2 \
      || { echo "nvmeof: build failed" >&2; exit 1; }
  fi
}

# JVM options: namespace RAM is off-heap (direct memory), so allow up to the machine's memory; the heap stays small.
# DiSNI (the NVMe/RDMA verbs provider on real RNICs) needs sun.nio.ch exported. Netty's leak detector is off: even
# its default sampling costs work (and garbage) on the I/O path; the tests keep it paranoid (root pom test.jvm.args).
nvmeof_jvm_opts() {
  local kib
  kib=$(awk '/^MemTotal:/ {print $2}' /proc/meminfo 2>/dev/null || echo 4194304)
  echo "-Xms256m -Xmx1g -XX:MaxDirectMemorySize=${kib}k -XX:+UseG1GC --add-exports java.base/sun.nio.ch=ALL-UNNAMED $(nvmeof_netty_opts)"
}

# Netty options for every launcher, also those with their own heap settings. recycler.chunkSize: an event loop recycles
# a burst of objects (PDU header buffers, outbound entries: ~100 at queue depth 32) on its own thread; past chunkSize
# (default 32) they overflow into an MPSC chunked queue that allocates a new chunk on every resize, which JFR showed
# as the target I/O thread's top allocation at QD32 (young GCs in the measured window; none with 256).
# allocator.maxCachedBufferCapacity: a socket read's buffer grows to 64 KiB under load (Netty's adaptive guess), and
# the pooled allocator's per-thread cache keeps only buffers up to 32 KiB by default, so every larger read buffer was
# taken from and given back to its arena under the arena's lock (async-profiler, our perf at 128 KiB reads). With
# 64 KiB the read buffers come from the event loop's own cache (transport-tcp/README.md, "Socket reads").
nvmeof_netty_opts() {
  echo "-Dio.netty.leakDetection.level=disabled -Dio.netty.recycler.chunkSize=256 -Dio.netty.allocator.maxCachedBufferCapacity=65536"
}
