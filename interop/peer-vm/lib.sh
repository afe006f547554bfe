# lib.sh - sourced by build.sh and run.sh: which guest, its recipe, and where its image lives.
#
# An image is cached by content: $PEERVM_CACHE/<guest>-<hash>/ where <hash> is the sha256 of every file that
# goes into it (this file, build.sh, build-siw.sh, guest/*, guests/<guest>/*; names and contents, not
# timestamps). Change any of them and build.sh builds a new directory; run.sh always boots the one that
# matches the checkout, so two checkouts on different commits can share one cache.
PEERVM_HOME=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)
CACHE=${PEERVM_CACHE:-/var/cache/peer-vm}
DEFAULT_GUEST=linux-6.1

# guests: the recipes in this checkout
peervm_guests() { (cd "$PEERVM_HOME/guests" && for d in */recipe; do echo "${d%/recipe}"; done); }

# peervm_recipe NAME: checks the name and sources guests/NAME/recipe (SUITE, KERNEL_PKG, SIW, PACKAGES...)
peervm_recipe() {
  local g=$1
  if [[ ! $g =~ ^[A-Za-z0-9._-]+$ ]] || [ ! -f "$PEERVM_HOME/guests/$g/recipe" ]; then
    echo "peer-vm: no guest '$g' (recipes: $(peervm_guests | tr '\n' ' '))" >&2; return 2
  fi
  # shellcheck source=/dev/null
  source "$PEERVM_HOME/guests/$g/recipe"
  KVER=${KERNEL_PKG#linux-image-}; KVER=${KVER%-unsigned}   # the modules directory name, e.g. 6.1.0-56-amd64
}

# peervm_hash NAME: 16 hex digits over the files that make the guest's image (sorted, so stable)
peervm_hash() {
  (cd "$PEERVM_HOME" && for f in $(printf '%s\n' lib.sh build.sh build-siw.sh guest/* "guests/$1"/* | LC_ALL=C sort); do
     printf '== %s\n' "$f"; cat "$f"; done) | sha256sum | cut -c1-16
}

# peervm_image NAME: the image directory for the current recipe (it may not exist yet)
peervm_image() { echo "$CACHE/$1-$(peervm_hash "$1")"; }
