#!/usr/bin/env bash
# Provision a Debian chroot with Debian's Blender (trixie: Blender 4.3.2, Python 3.13,
# numpy 2.x) for machines without a Blender binary.
#
#   tools/provision_blender_chroot.sh [DIR]        (default: build/blender-chroot)
#
# Idempotent: a complete chroot (marker file present, `blender --version` runs) is reused
# as is. The chroot is built in DIR.partial and renamed to DIR only once it works, so an
# interrupted run never leaves a DIR that looks complete; the next run starts the partial
# one again. Nothing stays mounted: every command inside the chroot goes through
# tools/chroot_run.sh. Needs Linux, root, and debootstrap (installed with apt-get if missing).
#
# Environment: BLENDER_CHROOT_SUITE (trixie), BLENDER_CHROOT_MIRROR (http://deb.debian.org/debian),
#              BLENDER_CHROOT_PACKAGES (blender python3-numpy xvfb xauth libgl1-mesa-dri)
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo=$(dirname "$here")
dir=${1:-$repo/build/blender-chroot}
suite=${BLENDER_CHROOT_SUITE:-trixie}
mirror=${BLENDER_CHROOT_MIRROR:-http://deb.debian.org/debian}
packages=${BLENDER_CHROOT_PACKAGES:-blender python3-numpy xvfb xauth libgl1-mesa-dri}
marker_name=.hierarchy-inspector-chroot
want="suite=$suite packages=$packages"

say() { echo "provision_blender_chroot: $*" >&2; }
die() { say "error: $*"; exit 1; }

dir=$(realpath -m -- "$dir")
partial=$dir.partial

# A chroot is complete when its marker says what we want and Blender starts in it.
complete() {
  [[ -f $1/$marker_name ]] && [[ $(head -n 1 "$1/$marker_name") == "$want" ]] &&
    "$here/chroot_run.sh" "$1" -- blender --version >/dev/null 2>&1
}

# Refuse to delete a directory that still has something mounted below it (e.g. /repo).
remove_tree() {
  local d=$1
  [[ -e $d ]] || return 0
  if awk -v r="$d" '$5 == r || index($5, r "/") == 1 { found = 1 } END { exit !found }' /proc/self/mountinfo; then
    die "'$d' still has file systems mounted below it (see: findmnt -R '$d'); unmount them first"
  fi
  rm -rf --one-file-system -- "$d"
}

if complete "$dir"; then
  say "reusing $dir ($("$here/chroot_run.sh" "$dir" -- blender --version 2>/dev/null | head -n 1))"
  exit 0
fi

# -- what this needs ---------------------------------------------------------------------
[[ $(uname -s) == Linux ]] || die "a Debian chroot needs Linux (this is $(uname -s)); install Blender >= 4.2 and set BLENDER=/path/to/blender"
[[ $(id -u) -eq 0 ]] || die "making a chroot needs root (you are $(id -un)); run as root, or install Blender >= 4.2 and set BLENDER=/path/to/blender"
for tool in chroot mount unshare; do
  command -v "$tool" >/dev/null 2>&1 || die "'$tool' was not found on PATH"
done
unshare --mount --propagation private true 2>/dev/null ||
  die "cannot make a private mount namespace (unshare --mount failed: a container without CAP_SYS_ADMIN?); install Blender >= 4.2 and set BLENDER=/path/to/blender"
if ! command -v debootstrap >/dev/null 2>&1; then
  command -v apt-get >/dev/null 2>&1 || die "debootstrap is not installed and there is no apt-get to install it; install debootstrap or set BLENDER=/path/to/blender"
  say "installing debootstrap with apt-get"
  apt-get update -qq || die "apt-get update failed"
  DEBIAN_FRONTEND=noninteractive apt-get install -y -qq debootstrap >/dev/null || die "apt-get install debootstrap failed"
fi
[[ -e /usr/share/debootstrap/scripts/$suite ]] || die "this debootstrap does not know the suite '$suite' (no /usr/share/debootstrap/scripts/$suite); upgrade debootstrap"

# -- build in DIR.partial ----------------------------------------------------------------
if [[ -e $dir ]]; then
  say "$dir is incomplete or out of date; rebuilding it"
  remove_tree "$dir"
fi
remove_tree "$partial"
mkdir -p "$(dirname "$partial")"

t0=$(date +%s)
say "debootstrap --variant=minbase $suite into $partial (from $mirror)"
# In a private mount namespace: what debootstrap mounts in the target goes away with it.
unshare --mount --propagation private -- debootstrap --variant=minbase "$suite" "$partial" "$mirror" >"$dir.debootstrap.log" 2>&1 ||
  die "debootstrap failed; see $dir.debootstrap.log (last lines: $(tail -n 3 "$dir.debootstrap.log" | tr '\n' ' '))"
t1=$(date +%s)
say "debootstrap took $((t1 - t0)) s"

say "apt-get install $packages"
# shellcheck disable=SC2086  # $packages is a list of words
"$here/chroot_run.sh" "$partial" -- env DEBIAN_FRONTEND=noninteractive \
  apt-get install -y -q --no-install-recommends $packages >"$dir.apt.log" 2>&1 ||
  die "apt-get install in the chroot failed; see $dir.apt.log (last lines: $(tail -n 3 "$dir.apt.log" | tr '\n' ' '))"
"$here/chroot_run.sh" "$partial" -- apt-get clean
t2=$(date +%s)
say "apt-get install took $((t2 - t1)) s"

mkdir -p "$partial/repo"                         # mount point for the repository
ln -sfn ../proc/self/mounts "$partial/etc/mtab"  # Blender lists mounted file systems from it

version=$("$here/chroot_run.sh" "$partial" -- blender --version 2>/dev/null | head -n 1) ||
  die "Blender does not start in the new chroot ($partial); see $dir.apt.log"
[[ $version =~ ^Blender\ ([0-9]+)\.([0-9]+) ]] || die "unexpected 'blender --version' output in the chroot: '$version'"
if (( BASH_REMATCH[1] < 4 || (BASH_REMATCH[1] == 4 && BASH_REMATCH[2] < 2) )); then
  die "the chroot's $version is older than 4.2 (suite '$suite')"
fi

printf '%s\n%s\n' "$want" "$version" >"$partial/$marker_name"
mv -T -- "$partial" "$dir"
say "ready: $dir ($version; $((t2 - t0)) s)"
