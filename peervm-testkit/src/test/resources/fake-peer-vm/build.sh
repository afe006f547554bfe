#!/bin/bash
# A stand-in for interop/peer-vm/build.sh in PeerVmWatchdogTest: "builds" the image into $PEERVM_CACHE (one flat
# image for every guest). --check: exit 0 if it is there, 1 if not. Records each call's arguments in builds.log.
HERE=$(cd "$(dirname "$0")" && pwd)
echo "$*" >> "$HERE/builds.log"
if [ "${3:-}" = --check ]; then echo "$PEERVM_CACHE"; [ -f "$PEERVM_CACHE/rootfs.ext4" ]; exit; fi
mkdir -p "$PEERVM_CACHE" && echo "fake image" > "$PEERVM_CACHE/rootfs.ext4" && echo "fake build.sh: image in $PEERVM_CACHE"
