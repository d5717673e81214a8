"""A Python process of its own for a reader that must not share Blender's process (ufbx,
whose bindings crash beside Blender's own ufbx; usd-core, whose ``pxr`` must never meet
Blender's): started at once, so that its start-up (Python, numpy, the reader) overlaps
the caller's work; one request sent as a JSON line on its stdin; the answer saved by the
process into a temporary folder of this run's (removed after, and by a later run when
this one is killed: :mod:`..system.scratch`). :class:`Spares` keeps one started for the
next export of a Blender session.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from typing import Generic, TypeVar

from ..system import scratch


def python_interpreter() -> str:
    """This Python, or ``python3`` where this process is Blender's binary (not an
    interpreter a script can be handed to)."""
    python = sys.executable
    if os.path.basename(python).lower().startswith("blender"):
        python = shutil.which("python3") or python
    return python


class ReaderProcess:
    """The process (``argv``: its arguments after the interpreter) and its folder
    (``kind``: the folder's name prefix); :attr:`_out` is where the process saves its
    answer; subclasses send with :meth:`_send` and wait with :meth:`_finish`."""

    def __init__(self, kind: str, argv: list[str]):
        self._folder = tempfile.TemporaryDirectory(prefix=scratch.prefix(kind))
        self._out = os.path.join(self._folder.name, "read.npz")
        self._path = ""
        env = dict(os.environ, PYTHONPATH=os.pathsep.join(p for p in sys.path if p))  # the same packages
        self._proc = subprocess.Popen(
            [python_interpreter(), *argv],
            stdin=subprocess.PIPE,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
        )

    def _send(self, path: str, message: dict) -> None:
        """The request for the file ``path``, one JSON line."""
        self._path = path
        assert self._proc.stdin is not None
        self._proc.stdin.write(json.dumps(message) + "\n")
        self._proc.stdin.flush()

    def _finish(self, timeout: float) -> str:
        """Wait up to ``timeout`` seconds for the process to end (killed when the wait
        fails or is interrupted); its stderr."""
        try:
            _stdout, stderr = self._proc.communicate(timeout=timeout)
        except BaseException:
            self._proc.kill()
            self._proc.wait()
            raise
        return stderr

    def waiting(self) -> bool:
        """True while the process runs and nothing has been requested."""
        return not self._path and self._proc.poll() is None

    def close(self) -> None:
        """End the process if it still runs; its pipes and folder go."""
        if self._proc.poll() is None:
            self._proc.kill()
            self._proc.wait()
        for stream in (self._proc.stdin, self._proc.stdout, self._proc.stderr):
            if stream is not None:
                stream.close()
        self._folder.cleanup()


P = TypeVar("P", bound=ReaderProcess)


class Spares(Generic[P]):
    """At most one process started ahead for the next export (``make`` starts one;
    ``available`` says whether its reader is installed)."""

    def __init__(self, make: Callable[[], P], available: Callable[[], bool]):
        self._make, self._available = make, available
        self._spare: list[P] = []

    def take(self) -> P:
        """The spare process if it still waits, else a new one."""
        while self._spare:
            process = self._spare.pop()
            if process.waiting():
                return process
            process.close()
        return self._make()

    def prepare(self) -> None:
        """Start one now, so that its start-up is not part of the next export (it ends
        by itself with this process)."""
        if not self._spare and self._available():
            self._spare.append(self._make())
