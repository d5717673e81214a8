"""Opening a .blend as Blender's current file and saving a copy, with clear errors.

Saving always goes through :func:`~..model.outputs.write_with`: Blender writes a
temporary file beside the target, which replaces the target only when complete.
"""

from __future__ import annotations

import os
import shutil

import bpy

from ..model.errors import OutputError, UsageError
from ..model.outputs import write_with
from .blender_output import captured_output

try:
    import resource  # Unix only: file size limits (ulimit -f)
except ImportError:  # Windows
    resource = None  # type: ignore[assignment]

#: Less free space than this (bytes) beside a save that failed: the disk is full.
_LOW_SPACE = 16 * 1024 * 1024

#: Plain .blend files start with "BLENDER"; compressed ones with zstd or gzip magic.
_BLEND_MAGIC = (b"BLENDER", b"\x28\xb5\x2f\xfd", b"\x1f\x8b")


def open_blend(path: str) -> None:
    """Load ``path`` as Blender's current file, or :class:`UsageError` saying why not."""
    if not os.path.exists(path):
        raise UsageError(f"{path!r}: no such file")
    if os.path.isdir(path):
        raise UsageError(f"{path!r}: is a folder, not a .blend file")
    with open(path, "rb") as f:
        head = f.read(12)
    if not head.startswith(_BLEND_MAGIC):
        raise UsageError(f"{path!r}: not a .blend file")
    try:
        bpy.ops.wm.open_mainfile(filepath=os.path.abspath(path), load_ui=False)
    except RuntimeError as exc:
        raise UsageError(f"{path!r}: Blender could not read it ({str(exc).strip().splitlines()[-1]})") from None


def _why_save_failed(path: str, failure: str, printed) -> str:
    """Blender blames "No such file or directory" for most failed saves (it reports the
    rename of its temporary file, not the write): look for the real cause first."""
    folder = os.path.dirname(os.path.abspath(path))
    if shutil.disk_usage(folder).free < _LOW_SPACE:
        return "no space left on the device"
    limit = resource.getrlimit(resource.RLIMIT_FSIZE)[0] if resource is not None else -1
    if resource is not None and limit != resource.RLIM_INFINITY:
        return f"the file would exceed this process's file size limit ({limit} bytes, ulimit -f)"
    said = (failure.strip().splitlines() or [printed.last_line("unknown error")])[-1]
    return f"{said} (Blender's words; the folder exists and is writable)"


def save_copy(path: str) -> None:
    """Save the current file as a copy at ``path`` (uncompressed), whole or not at all;
    the open file keeps its own path. :class:`OutputError` says why Blender could not
    (its own message says "No such file or directory" for a full disk, too)."""

    def save(tmp: str) -> None:
        with captured_output() as printed:
            try:
                bpy.ops.wm.save_as_mainfile(filepath=tmp, copy=True, compress=False)
                return
            except RuntimeError as exc:
                failure = str(exc)
        raise OutputError(f"Blender could not save {path!r}: {_why_save_failed(path, failure, printed)}")

    write_with(path, save)
