#!/usr/bin/env bash
# Run one command inside a chroot with /proc, /dev, /sys (and optionally a bind-mounted
# directory) mounted only for as long as the command runs.
#
#   tools/chroot_run.sh [--bind HOST_DIR:CHROOT_DIR] [--chdir DIR] ROOT -- COMMAND [ARGS...]
#
# The mounts are made in a private mount namespace (unshare --mount): the host never sees
# them, and they vanish with the command however it ends (Ctrl-C, kill -9, crash), so an
# interrupted run leaves nothing mounted and the chroot directory can always be deleted
# (with host-visible bind mounts, `rm -rf build` after a killed run would delete the
# repository through /repo and device nodes through /dev; hence no fallback without a
# namespace). Needs root and unshare (util-linux).
set -euo pipefail

die() { echo "chroot_run: error: $*" >&2; exit 2; }

binds=()
chdir=/
while [[ $# -gt 0 ]]; do
  case $1 in
    --bind) [[ $# -ge 2 && $2 == *:* ]] || die "--bind needs HOST_DIR:CHROOT_DIR"; binds+=("$2"); shift 2 ;;
    --chdir) [[ $# -ge 2 ]] || die "--chdir needs a directory"; chdir=$2; shift 2 ;;
    --) die "missing ROOT before --" ;;
    -*) die "unknown option $1" ;;
    *) break ;;
  esac
done
[[ $# -ge 3 && $2 == -- ]] || die "usage: $0 [--bind HOST:CHROOT] [--chdir DIR] ROOT -- COMMAND [ARGS...]"
root=$(realpath -e -- "$1") || die "chroot directory '$1' does not exist"
shift 2

[[ $(id -u) -eq 0 ]] || die "running a chroot needs root (you are $(id -un))"
for tool in chroot mount; do
  command -v "$tool" >/dev/null 2>&1 || die "'$tool' was not found on PATH"
done

# The mounts, as "kind source target" lines.
mount_plan() {
  echo "proc proc $root/proc"
  echo "rbind /dev $root/dev"
  echo "rbind /sys $root/sys"
  local b
  for b in "${binds[@]+"${binds[@]}"}"; do
    echo "bind $(realpath -e -- "${b%%:*}") $root${b#*:}"
  done
}

command -v unshare >/dev/null 2>&1 || die "'unshare' (util-linux) was not found on PATH"
unshare --mount --propagation private true 2>/dev/null ||
  die "cannot make a private mount namespace here (unshare --mount failed: a container without CAP_SYS_ADMIN?); the chroot needs one so that nothing stays mounted on the host"

# In a private mount namespace: mount, then exec chroot (the namespace dies with it).
# shellcheck disable=SC2016  # the inner script expands its own variables
exec unshare --mount --propagation private -- bash -euo pipefail -c '
    root=$1 plan=$2 chdir=$3; shift 3
    while read -r kind src dst; do
      mkdir -p "$dst"
      case $kind in
        proc)  mount -t proc proc "$dst" ;;
        rbind) mount --rbind "$src" "$dst" ;;
        bind)  mount --bind "$src" "$dst" ;;
      esac
    done <<<"$plan"
    exec chroot "$root" /bin/sh -c "cd \"\$0\" && exec \"\$@\"" "$chdir" "$@"
  ' chroot_run "$root" "$(mount_plan)" "$chdir" "$@"
