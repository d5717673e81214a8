"""A worker for the audit tests that misbehaves on purpose, by file name: ``hang`` sleeps
past any timeout, ``crash`` dies of SIGSEGV (as a crashing Blender does), anything else
runs the real ``audit-file`` (the command line of tests/cli_runner.py). Every call is
logged to ``$AUDIT_FAKE_LOG`` (one line per file), so tests can see what was run."""

from __future__ import annotations

import os
import signal
import subprocess
import sys
import time

from cli_runner import cli_prefix

args = sys.argv[1:]
blend = args[1]
with open(os.environ["AUDIT_FAKE_LOG"], "a") as log:
    log.write(os.path.basename(blend) + "\n")
name = os.path.basename(blend)
if "hang" in name:
    time.sleep(600)
if "crash" in name:
    os.kill(os.getpid(), signal.SIGSEGV)
sys.exit(subprocess.run([*cli_prefix(), *args]).returncode)
