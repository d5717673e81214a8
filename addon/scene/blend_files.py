"""Opening a .blend as Blender's current file and saving a copy, with clear errors.

Saving always goes through :func:`~..model.outputs.write_with`: Blender writes a
temporary file beside the target, which replaces the target only when complete.
"""

from __future__ import annotations

import os

import bpy

from ..model.errors import UsageError
from ..model.outputs import write_with

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


def save_copy(path: str) -> None:
    """Save the current file as a copy at ``path`` (uncompressed), whole or not at all;
    the open file keeps its own path."""
    write_with(path, lambda tmp: bpy.ops.wm.save_as_mainfile(filepath=tmp, copy=True, compress=False))
