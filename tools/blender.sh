#!/usr/bin/env bash
# Run a real Blender >= 4.2, whichever this machine has:
#   1. $BLENDER (must be >= 4.2; no fallback when it is set),
#   2. `blender` on PATH, if >= 4.2,
#   3. Debian's Blender in the chroot made by tools/provision_blender_chroot.sh
#      ($BLENDER_CHROOT, default build/blender-chroot).
#
#   tools/blender.sh BLENDER_ARGS...   run Blender with these arguments
#   tools/blender.sh --xvfb BLENDER_ARGS...
#                                      the same in a virtual X display (xvfb-run; screen
#                                      $BLENDER_XVFB_SCREEN, default 1600x1000x24) with Mesa's
#                                      software OpenGL: a real window on a machine without one.
#                                      Needs xvfb-run (the chroot has it; on the host: xvfb, xauth)
#   tools/blender.sh --ensure          make sure one exists (provisions the chroot if needed), say which
#   tools/blender.sh --which           say which one would run; fail if none
#
# In the chroot the repository is bind-mounted at /repo and Blender runs in the directory
# matching the current one: relative paths work unchanged, absolute paths into the
# repository (in arguments and in BLENDER_*, HIERARCHY_INSPECTOR_* variables) are mapped to
# /repo/...; paths outside the repository are not visible there. The chroot's environment is
# a clean one plus BLENDER_*, HIERARCHY_INSPECTOR_*, HYPOTHESIS_*, PYTEST_ADDOPTS, CI, DISPLAY.
set -euo pipefail

here=$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd -P)
repo=$(dirname "$here")
chroot_dir=$(realpath -m -- "${BLENDER_CHROOT:-$repo/build/blender-chroot}")
marker=$chroot_dir/.hierarchy-inspector-chroot

say() { echo "blender.sh: $*" >&2; }
die() { say "error: $*"; exit 2; }

# "Blender 4.3.2" -> succeeds when >= 4.2
version_ok() {
  [[ $1 =~ ^Blender\ ([0-9]+)\.([0-9]+) ]] || return 1
  (( BASH_REMATCH[1] > 4 || (BASH_REMATCH[1] == 4 && BASH_REMATCH[2] >= 2) ))
}

host_version() { "$1" --factory-startup --version 2>/dev/null | grep -m 1 '^Blender ' || true; }

# Sets: mode=host|chroot|none, exe (host), version, why (when none)
select_blender() {
  local v
  if [[ -n ${BLENDER:-} ]]; then
    command -v "$BLENDER" >/dev/null 2>&1 || die "BLENDER=$BLENDER is not an executable"
    v=$(host_version "$BLENDER")
    version_ok "$v" || die "BLENDER=$BLENDER reports '${v:-no version}'; Hierarchy Inspector needs Blender >= 4.2"
    mode=host exe=$(command -v "$BLENDER") version=$v
    return
  fi
  why="no \$BLENDER"
  if command -v blender >/dev/null 2>&1; then
    v=$(host_version blender)
    if version_ok "$v"; then
      mode=host exe=$(command -v blender) version=$v
      return
    fi
    why="$why; 'blender' on PATH is '${v:-unknown}', older than 4.2"
  else
    why="$why; no 'blender' on PATH"
  fi
  if [[ -f $marker ]]; then
    mode=chroot version=$(sed -n 2p "$marker")
    return
  fi
  mode=none
  why="$why; no chroot at $chroot_dir"
}

describe() {
  case $mode in
    host) echo "$version at $exe" ;;
    chroot) echo "$version in the chroot $chroot_dir (Debian package)" ;;
  esac
}

map_path() {  # host path -> chroot path, for paths inside the repository
  local p=$1
  if [[ $p == "$repo" ]]; then echo /repo
  elif [[ $p == "$repo"/* ]]; then echo "/repo/${p#"$repo"/}"
  elif [[ $p == --*=* ]]; then echo "${p%%=*}=$(map_path "${p#*=}")"
  else echo "$p"
  fi
}

case ${1:-} in
  --which)
    select_blender
    [[ $mode != none ]] || die "no Blender >= 4.2 found ($why). Set BLENDER=/path/to/blender or run tools/provision_blender_chroot.sh"
    describe
    exit 0
    ;;
  --ensure)
    select_blender
    if [[ $mode != host ]]; then
      # Also when the chroot exists: the script checks it is complete and up to date (~1 s).
      [[ $mode == chroot ]] || say "$why: provisioning Debian's Blender in a chroot"
      "$here/provision_blender_chroot.sh" "$chroot_dir" ||
        die "could not provision a Blender chroot (see above). Set BLENDER=/path/to/blender (>= 4.2) instead"
      select_blender
    fi
    [[ $mode != none ]] || die "no Blender >= 4.2 available ($why)"
    say "using $(describe)"
    exit 0
    ;;
esac

# A display number free both in the /tmp the X server will use (lock files) and in the network
# namespace (X's abstract sockets, which a chroot shares with the host): xvfb-run -a checks only
# lock files, so next to a host X server on :99 its Xvfb in the chroot would fail to start.
free_display() {
  local root=$1 n
  for ((n = 99; n < 500; n++)); do
    [[ -e $root/tmp/.X$n-lock || -e $root/tmp/.X11-unix/X$n ]] && continue
    grep -q "@/tmp/.X11-unix/X$n\$" /proc/net/unix 2>/dev/null && continue
    echo "$n"
    return
  done
  die "no free X display number between 99 and 499"
}

use_xvfb=false
if [[ ${1:-} == --xvfb ]]; then
  use_xvfb=true
  shift
fi

select_blender
xvfb=()
if $use_xvfb; then
  display=$(free_display "$([[ $mode == chroot ]] && echo "$chroot_dir")")
  # No WAYLAND_DISPLAY: Blender would prefer a Wayland desktop to the virtual X display.
  # LIBGL_ALWAYS_SOFTWARE: Mesa's llvmpipe even if a GPU driver is around.
  xvfb=(env -u WAYLAND_DISPLAY LIBGL_ALWAYS_SOFTWARE=1 xvfb-run -n "$display" -s "-screen 0 ${BLENDER_XVFB_SCREEN:-1600x1000x24}")
fi
case $mode in
  host)
    if [[ ${#xvfb[@]} -gt 0 ]] && ! command -v xvfb-run >/dev/null 2>&1; then
      die "--xvfb needs xvfb-run on this machine for $(describe) (Debian/Ubuntu: apt-get install xvfb xauth)"
    fi
    exec ${xvfb[@]+"${xvfb[@]}"} "$exe" "$@"
    ;;
  none)
    die "no Blender >= 4.2 found ($why). Set BLENDER=/path/to/blender, or run: tools/blender.sh --ensure"
    ;;
esac

# -- chroot -----------------------------------------------------------------------------
cwd=$(pwd -P)
if [[ $cwd == "$repo" || $cwd == "$repo"/* ]]; then
  inner_cwd=$(map_path "$cwd")
else
  say "note: $cwd is outside the repository; running in /repo (only repository paths are visible in the chroot)"
  inner_cwd=/repo
fi

args=()
for a in "$@"; do args+=("$(map_path "$a")"); done

envs=(PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin HOME=/root LANG=C.UTF-8 "TERM=${TERM:-dumb}")
while IFS='=' read -r -d '' name value; do
  case $name in
    BLENDER_CHROOT) ;;
    BLENDER_* | HIERARCHY_INSPECTOR_* | HYPOTHESIS_* | PYTEST_ADDOPTS | CI | DISPLAY | XAUTHORITY)
      envs+=("$name=$(map_path "$value")") ;;
  esac
done < <(env -0)

exec "$here/chroot_run.sh" --bind "$repo:/repo" --chdir "$inner_cwd" "$chroot_dir" -- \
  env -i "${envs[@]}" ${xvfb[@]+"${xvfb[@]}"} blender "${args[@]+"${args[@]}"}"
