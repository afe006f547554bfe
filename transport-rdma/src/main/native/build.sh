#!/usr/bin/env bash
# Builds libnvmeofrdma.so (the DiSNI provider's JNI library) into OUTDIR. Called by the Maven build (profile
# native-rdma) when the rdma-core headers are installed; skips with a message when one of them is missing.
#   build.sh OUTDIR [JAVA_HOME]
set -euo pipefail
out=${1:?usage: build.sh OUTDIR [JAVA_HOME]}
jhome=${2:-${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v javac || command -v java)")")")}}
here=$(cd "$(dirname "$0")" && pwd)
for h in /usr/include/infiniband/verbs.h /usr/include/rdma/rdma_cma.h; do
  if [ ! -f "$h" ]; then
    echo "[native-rdma] $h missing: libnvmeofrdma.so not built (install libibverbs-dev and librdmacm-dev)"
    exit 0
  fi
done
if [ ! -f "$jhome/include/jni.h" ]; then
  echo "[native-rdma] no jni.h under $jhome/include: libnvmeofrdma.so not built (needs a JDK)" >&2
  exit 0
fi
command -v "${CC:-gcc}" >/dev/null || { echo "[native-rdma] no C compiler (${CC:-gcc}): libnvmeofrdma.so not built" >&2; exit 0; }
mkdir -p "$out"
src="$here/nvmeofrdma.c"
lib="$out/libnvmeofrdma.so"
if [ -f "$lib" ] && [ "$lib" -nt "$src" ] && [ "$lib" -nt "$0" ]; then exit 0; fi
"${CC:-gcc}" -O2 -g -Wall -Wextra -Wno-unused-parameter -Werror -fPIC -shared \
  -I"$jhome/include" -I"$jhome/include/linux" -o "$lib" "$src" -lrdmacm -libverbs
echo "[native-rdma] built $lib"
