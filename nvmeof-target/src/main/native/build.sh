#!/usr/bin/env bash
# Builds libnvmeoffile.so (fallocate hole punching for file-backed namespaces, FileHoles; 2 MiB slabs with transparent
# huge pages for RAM namespaces, SlabMemory; memmove of write data into namespace memory, BlockCopy) into OUTDIR.
# Called by the Maven build (profile native-file); skips with a message when there is no C compiler or no jni.h, and the target
# then keeps file namespaces' blocks on deallocate and allocates RAM chunks one by one (it says so in its log).
#   build.sh OUTDIR [JAVA_HOME]
set -euo pipefail
out=${1:?usage: build.sh OUTDIR [JAVA_HOME]}
jhome=${2:-${JAVA_HOME:-$(dirname "$(dirname "$(readlink -f "$(command -v javac || command -v java)")")")}}
here=$(cd "$(dirname "$0")" && pwd)
if [ ! -f "$jhome/include/jni.h" ]; then
  echo "[native-file] no jni.h under $jhome/include: libnvmeoffile.so not built (needs a JDK)" >&2
  exit 0
fi
command -v "${CC:-gcc}" >/dev/null || { echo "[native-file] no C compiler (${CC:-gcc}): libnvmeoffile.so not built" >&2; exit 0; }
mkdir -p "$out"
srcs=("$here/nvmeoffile.c" "$here/nvmeofslab.c" "$here/nvmeofcopy.c")
lib="$out/libnvmeoffile.so"
fresh=1
for f in "${srcs[@]}" "$0"; do [ -f "$lib" ] && [ "$lib" -nt "$f" ] || fresh=0; done
[ "$fresh" = 1 ] && exit 0
"${CC:-gcc}" -O2 -g -Wall -Wextra -Wno-unused-parameter -Werror -fPIC -shared \
  -I"$jhome/include" -I"$jhome/include/linux" -o "$lib" "${srcs[@]}"
echo "[native-file] built $lib"
