#!/bin/bash
# A stand-in for peer-vm/build.sh in PeerVmWatchdogTest: "builds" the image into $PEERVM_CACHE.
mkdir -p "$PEERVM_CACHE" && echo "fake image" > "$PEERVM_CACHE/rootfs.ext4" && echo "fake build.sh: image in $PEERVM_CACHE"
