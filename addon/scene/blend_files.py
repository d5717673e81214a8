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
    try:
        with open(path, "rb") as f:
            head = f.read(12)
    except OSError as exc:  # permission denied, a dangling or looping symlink, an I/O error
        raise UsageError(f"{path!r}: cannot read it ({exc.strerror or type(exc).__name__})") from None
    if not head.startswith(_BLEND_MAGIC):
        raise UsageError(f"{path!r}: not a .blend file")
    try:
        bpy.ops.wm.open_mainfile(filepath=os.path.abspath(path), load_ui=False)
    except RuntimeError as exc:
        raise UsageError(f"{path!r}: Blender could not read it ({str(exc).strip().splitlines()[-1]})") from None


def files_read(blend: str | None = None, label: str = "SCENE.blend") -> dict[str, str]:
    """Every file the open scene reads, named for a message -> its path: ``blend``
    itself (default the open file, none when it was never saved) named ``label``, the
    libraries it links (nested ones included) and the images, fonts, sounds, movie
    clips, volumes and caches its data-blocks load (:func:`bpy.utils.blend_paths`;
    packed files are inside the .blend). An output may be none of them
    (:func:`~..model.outputs.check_outputs`)."""
    blend = bpy.data.filepath if blend is None else blend
    inputs = {label: blend} if blend else {}
    libraries = {_library_path(lib): lib.filepath for lib in bpy.data.libraries}
    for path in bpy.utils.blend_paths(absolute=True, packed=False, local=False):
        path = os.path.normpath(path)
        if path in libraries:
            inputs[f"library {libraries[path]!r} (linked by the scene)"] = path
        else:
            inputs[f"{path!r} (read by the scene)"] = path
    return inputs


def _library_path(library) -> str:
    """A library's file as an absolute path (relative ones are relative to the file
    that links them: the open file, or the library above)."""
    return os.path.normpath(bpy.path.abspath(library.filepath, library=library.parent))


def missing_libraries() -> list[str]:
    """The libraries the open file links that Blender could not load (their data-blocks
    are empty placeholders), as the file spells them (``//lib.blend``); data-blocks
    missing from libraries that were found count as their library."""
    if not bpy.data.libraries:
        return []
    missing = {lib.filepath for lib in bpy.data.libraries if lib.is_missing}
    for collection in (bpy.data.objects, bpy.data.collections, bpy.data.armatures, bpy.data.actions):
        missing.update(i.library.filepath for i in collection if i.library is not None and i.is_missing)
    return sorted(missing)


def check_libraries(allow_missing: bool) -> list[str]:
    """:class:`UsageError` naming the libraries the open file cannot load (what they
    link would be missing from every result: a report with nothing over the thresholds,
    an empty export); with ``allow_missing`` their names are returned instead."""
    missing = missing_libraries()
    if missing and not allow_missing:
        names = ", ".join(repr(m) for m in missing)
        raise UsageError(
            f"{bpy.data.filepath!r} links {len(missing)} library file(s) Blender cannot load: {names} "
            "(what they hold would be left out; restore them, or pass --allow-missing-libraries)"
        )
    return missing


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
