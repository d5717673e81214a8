"""Writing files whole or not at all (Blender-free; any writer, Blender's save included)."""

from __future__ import annotations

import contextlib
import os
import tempfile
from collections.abc import Callable, Iterator

from .errors import OutputError


def check_writable(path: str) -> str:
    """Absolute ``path`` whose folder exists and is writable; else :class:`OutputError`."""
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    if os.path.isdir(path):
        raise OutputError(f"{path} is a folder, not a file")
    if not os.path.isdir(folder):
        raise OutputError(f"cannot write {path}: folder {folder} does not exist")
    if not os.access(folder, os.W_OK):
        raise OutputError(f"cannot write {path}: folder {folder} is not writable")
    return path


@contextlib.contextmanager
def atomic_path(path: str) -> Iterator[str]:
    """Yield a temporary path beside ``path``; on success it replaces ``path`` in one
    step, on any error it is removed and ``path`` is left as it was."""
    path = check_writable(path)
    stem, ext = os.path.splitext(os.path.basename(path))
    fd, tmp = tempfile.mkstemp(prefix=f".{stem}.", suffix=f".partial{ext}", dir=os.path.dirname(path))
    os.close(fd)
    # Hand the writer a name that does not exist yet: Blender keeps a ".blend1" backup
    # of any file it overwrites, which would be left behind.
    os.remove(tmp)
    try:
        yield tmp
        os.replace(tmp, path)
    except BaseException:
        with contextlib.suppress(OSError):
            os.remove(tmp)
        raise


def write_text(path: str, text: str) -> None:
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def write_with(path: str, writer: Callable[[str], None]) -> None:
    """Let ``writer(tmp_path)`` produce the file; publish it only if it succeeds."""
    with atomic_path(path) as tmp:
        writer(tmp)
