#!/usr/bin/env bash
# Runs pytest inside Blender (tests/blender_runner.py), one Blender process per test folder
# given as arguments; every folder runs, and the script fails if any folder failed.
# Environment: BLENDER_SH (tools/blender.sh), BLENDER_USER_RESOURCES and
# HIERARCHY_INSPECTOR_MODULE as the Makefile sets them.
#
# A folder whose Blender dies of a signal (a crash inside Blender, not a failed test) runs
# once more, and the crash is printed; a test that fails (exit 1) is never run again.
# Blender 4.2-4.5 processes that generated a Rigify rig crash now and then later, in their
# own exporters or in read_factory_settings (SIGSEGV or SIGABRT, heap damage found later):
# model + scene + ui in one Blender 4.3.2 died in 2 to 4 of 5 runs, 1 of 4 at the commit
# before this round. The rigger's scene is now built in a Blender of its own
# (tests/blender_fixtures.py), and each folder runs in its own process: scene + ui passed.
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
