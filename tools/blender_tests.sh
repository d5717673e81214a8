#!/usr/bin/env bash
# Runs pytest inside Blender (tests/blender_runner.py), one Blender process per test folder
# given as arguments; every folder runs, and the script fails if any folder failed.
# Environment: BLENDER_SH (tools/blender.sh), BLENDER_USER_RESOURCES and
# HIERARCHY_INSPECTOR_MODULE as the Makefile sets them.
#
# A folder whose Blender dies of a signal (a crash inside Blender, not a failed test) runs
# once more, and the crash is printed. Debian's Blender 4.3.2, built for Python 3.13, which
# 4.3 was not made for, dies now and then with SIGSEGV in pure-Python lines of its own
# exporters or in read_factory_settings (heap damage found later, not where it happens):
# measured on this machine, in 1 of 4 runs of model + scene + ui in one process at the
# commit before this round (a515ec4), 2 to 4 of 5 since; no crash in 6 runs of one folder
# per process. Disabling the FBX exporter's threads and calling mode_set through bpy.ops
# did not change it. A test that fails (exit 1) is never run again.
set -u
blender_sh=${BLENDER_SH:-tools/blender.sh}
failed=()
run() {
  "$blender_sh" --background --factory-startup --offline-mode --python-exit-code 1 \
    --python tests/blender_runner.py -- "$1"
}
for path in "$@"; do
  echo "test-blender: $path"
  run "$path"
  rc=$?
  if (( rc >= 128 )); then
    echo "test-blender: Blender died of signal $(( rc - 128 )) in $path (a crash inside Blender, see above); running $path once more" >&2
    run "$path"
    rc=$?
  fi
  (( rc == 0 )) || failed+=("$path (exit $rc)")
done
if (( ${#failed[@]} )); then
  echo "test-blender: FAILED in ${failed[*]}" >&2
  exit 1
fi
