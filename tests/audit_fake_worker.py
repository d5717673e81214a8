"""A worker for the audit tests that misbehaves on purpose, by file name, speaking the
``audit-worker`` protocol (one task per line on stdin, one reply per line on stdout):
``hang`` sleeps past any timeout, ``crash`` dies of SIGSEGV (as a crashing Blender
does), anything else is audited by the real ``audit-file`` (the command line of
tests/cli_runner.py) and answered with its exit code. Every file is logged to
``$AUDIT_FAKE_LOG`` (one line per file), and this worker's process id to
``$AUDIT_FAKE_PIDS`` when set, so tests can see what was run and by whom."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import time

from cli_runner import cli_prefix

options = sys.argv[2:]  # after "audit-worker": the thresholds, --allow-missing-libraries
if os.environ.get("AUDIT_FAKE_PIDS"):
    with open(os.environ["AUDIT_FAKE_PIDS"], "a") as pids:
        pids.write(f"{os.getpid()}\n")
while line := sys.stdin.readline():
    task = json.loads(line)
    name = os.path.basename(task["path"])
    with open(os.environ["AUDIT_FAKE_LOG"], "a") as log:
        log.write(name + "\n")
    if "hang" in name:
        time.sleep(600)
    if "crash" in name:
        os.kill(os.getpid(), signal.SIGSEGV)
    args = ["audit-file", task["path"], "--result", task["result"], *options]
    if task.get("picture"):
        args += ["--picture", task["picture"]]
    done = subprocess.run([*cli_prefix(), *args], capture_output=True, text=True)
    said = [ln.removeprefix("hierarchy_inspector: ") for ln in done.stderr.splitlines() if ln.strip()]
    said = [ln for ln in said if not ln.startswith("audit-file:")]
    reply = {"index": task["index"], "code": done.returncode, "message": (said or [""])[-1]}
    sys.stdout.write(json.dumps(reply) + "\n")
    sys.stdout.flush()
