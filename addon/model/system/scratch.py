"""Scratch folders in the temporary folder that a killed run does not leave for good.

A folder is named ``hierarchy_<kind>_<pid>_<random>``: the process that made it removes
it when done; one killed (``kill -9``, a power cut) cannot, and the next run that makes
a folder of the same kind removes those whose process is gone (POSIX; on Windows,
where there is no harmless liveness probe, they are left).
"""

from __future__ import annotations

import contextlib
import glob
import os
import re
import shutil
import tempfile

_NAME = re.compile(r"hierarchy_([a-z]+)_(\d+)_[^/\\]*$")


def _alive(pid: int) -> bool:
    """Whether process ``pid`` exists (POSIX; True when it cannot be told)."""
    if os.name != "posix":
        return True
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except OSError:  # another user's process: it exists
        return True
    return True


def remove_stale(kind: str, folder: str | None = None) -> list[str]:
    """Remove the ``kind`` scratch folders in ``folder`` (default: the temporary
    folder) whose process has ended; returns them."""
    folder = tempfile.gettempdir() if folder is None else folder
    removed = []
    for path in glob.glob(os.path.join(glob.escape(folder), f"hierarchy_{kind}_*")):
        match = _NAME.search(path)
        if match is None or match.group(1) != kind or int(match.group(2)) == os.getpid():
            continue
        if not _alive(int(match.group(2))):
            with contextlib.suppress(OSError):
                shutil.rmtree(path)
                removed.append(path)
    return removed


def prefix(kind: str) -> str:
    """The name prefix of this process's ``kind`` scratch folders (``kind``: lowercase
    letters), for :func:`tempfile.mkdtemp` or :class:`tempfile.TemporaryDirectory`;
    stale folders of that kind are removed first (:func:`remove_stale`)."""
    if not kind.isalpha() or not kind.islower():
        raise ValueError(f"kind: expected lowercase letters, got {kind!r}")
    remove_stale(kind)
    return f"hierarchy_{kind}_{os.getpid()}_"


def make(kind: str) -> str:
    """A new scratch folder of ``kind`` (see :func:`prefix`); the caller removes it."""
    return tempfile.mkdtemp(prefix=prefix(kind))
