"""Writing files whole or not at all, never over an input (Blender-free; any writer,
Blender's save included).

- :func:`check_outputs`: every output path is writable, none is an input file (the same
  file by identity: device and inode, whatever the spelling, symlinks and hard links
  included) and no two outputs are the same file.
- :func:`write_with` / :func:`write_text`: the writer produces a temporary file beside
  the target (``.<stem>.<random>.partial<ext>``), which replaces the target in one
  rename only when complete; on any error or interruption it is removed.
- :func:`write_all`: several files, all or none: every temporary file is written first,
  and only then are they renamed into place.
- Temporary files of this naming pattern left beside a target by an earlier run that was
  killed (and Blender's ``@`` files of them) are removed when they are older than this
  process.
- OS errors (a full disk, a read-only folder) become :class:`OutputError` saying what
  could not be written and why.
- A stop asked for while a writer could not be interrupted (:func:`request_stop`: the
  command line defers Ctrl-C and SIGTERM during Blender's save and exports) is acted on
  before the rename: the finished temporary file is removed and nothing is replaced, so
  an interrupted run (exit 130) publishes nothing after the signal.
"""

from __future__ import annotations

import contextlib
import glob
import json
import os
import tempfile
import time
from collections.abc import Callable, Iterator, Mapping

from .errors import OutputError

#: When this process started (seconds since the epoch): older temporary files are stale.
STARTED = time.time()
_PARTIAL = ".partial"


def json_text(document: Mapping) -> str:
    """``document`` (a report, an accumulated-TRS document) as JSON text: one line per
    top-level key, and one line per element of a top-level list (a report's nodes, one
    node per line). Each line comes from json's C encoder: ``indent`` makes json fall
    back to its pure-Python encoder, which took 3.7 s (12 s under a profiler) for the
    97 MB of a 709-bone rig's per-frame dynamics over 120 frames, against 1.1 s (55 MB)
    this way. The same JSON values as ``json.dumps(document)``."""
    lines = []
    for key, value in document.items():
        name = json.dumps(key)
        if isinstance(value, list) and value:
            items = ",\n  ".join(json.dumps(item) for item in value)
            lines.append(f" {name}: [\n  {items}\n ]")
        else:
            lines.append(f" {name}: {json.dumps(value)}")
    return "{\n" + ",\n".join(lines) + "\n}\n"


def _identity(path: str) -> tuple:
    """What makes two spellings the same file: (device, inode) of the file when it
    exists, else of its folder plus its name. Taken of the path this module writes to
    (:func:`os.path.abspath`: ``nosuchdir/../x.blend`` is ``x.blend``), not of the path
    as typed (which may not exist)."""
    path = os.path.abspath(path)
    with contextlib.suppress(OSError):
        st = os.stat(path)
        return ("file", st.st_dev, st.st_ino)
    folder, name = os.path.split(os.path.abspath(path))
    with contextlib.suppress(OSError):
        st = os.stat(folder)
        return ("new", st.st_dev, st.st_ino, name)
    return ("path", os.path.realpath(path))


def check_writable(path: str) -> str:
    """Absolute ``path`` whose folder exists and is writable; else :class:`OutputError`."""
    path = os.path.abspath(path)
    folder = os.path.dirname(path)
    if os.path.isdir(path):
        raise OutputError(f"{path!r} is a folder, not a file")
    if not os.path.isdir(folder):
        raise OutputError(f"cannot write {path!r}: folder {folder!r} does not exist")
    if not os.access(folder, os.W_OK):
        raise OutputError(f"cannot write {path!r}: folder {folder!r} is not writable")
    return path


def check_folder(path: str) -> str:
    """Absolute ``path`` of an output folder that exists or can be made (its parent
    exists and is writable); else :class:`OutputError`. Nothing is created here."""
    path = os.path.abspath(path)
    if os.path.exists(path) and not os.path.isdir(path):
        raise OutputError(f"{path!r} is a file, not a folder")
    if not os.path.isdir(path):
        check_writable(path)  # the folder it would be made in
    elif not os.access(path, os.W_OK):
        raise OutputError(f"cannot write in {path!r}: the folder is not writable")
    return path


def make_folder(path: str) -> str:
    """Create the output folder ``path`` (checked by :func:`check_folder`) if needed."""
    path = check_folder(path)
    try:
        os.makedirs(path, exist_ok=True)
    except OSError as exc:
        raise OutputError(f"cannot make the folder {path!r}: {_describe(exc)}") from None
    return path


def check_outputs(outputs: Mapping[str, str | None], inputs: Mapping[str, str] | None = None) -> None:
    """Refuse, before anything is read or written, outputs that cannot be written, that
    are an input (by identity) or that are the same file as another output.

    ``outputs`` maps what names each output (``"--json"``) to its path (None: not asked
    for); ``inputs`` maps what names each input to its path.
    """
    seen: dict[tuple, str] = {_identity(path): what for what, path in (inputs or {}).items()}
    inputs_ids = set(seen)
    for what, path in outputs.items():
        if not path:
            continue
        check_writable(path)
        key = _identity(path)
        if key in inputs_ids:
            raise OutputError(f"{what} {path!r} is the input file {seen[key]}: refusing to replace it")
        if key in seen:
            raise OutputError(f"{what} {path!r} is the same file as {seen[key]}: give each output its own path")
        seen[key] = f"{what} {path!r}"


def remove_stale_partials(path: str) -> list[str]:
    """Remove this module's temporary files for ``path`` (and Blender's ``@`` files of
    them) older than this process: what a killed run left behind. Returns them."""
    folder, name = os.path.split(os.path.abspath(path))
    stem, ext = os.path.splitext(name)
    pattern = os.path.join(glob.escape(folder), f".{glob.escape(stem)}.*{_PARTIAL}{glob.escape(ext)}")
    removed = []
    for stale in glob.glob(pattern) + glob.glob(pattern + "@"):
        with contextlib.suppress(OSError):
            if os.lstat(stale).st_mtime < STARTED:
                os.remove(stale)
                removed.append(stale)
    return removed


_stop_requested: list[bool] = []


def request_stop() -> None:
    """A stop (Ctrl-C, SIGTERM) came while it could not be acted on: the next rename of
    a finished temporary file raises :class:`KeyboardInterrupt` instead."""
    _stop_requested.append(True)


def clear_stop() -> None:
    """Forget a stop request (it was acted on, or a new run begins)."""
    _stop_requested.clear()


def _publish(tmp: str, path: str) -> None:
    """Rename the finished ``tmp`` onto ``path``, unless a stop was requested."""
    if _stop_requested:
        raise KeyboardInterrupt
    os.replace(tmp, os.path.abspath(path))


def _describe(exc: OSError) -> str:
    return exc.strerror or type(exc).__name__


def _remove(tmp: str) -> None:
    for leftover in (tmp, tmp + "@"):
        with contextlib.suppress(OSError):
            os.remove(leftover)


@contextlib.contextmanager
def _temporary_beside(path: str) -> Iterator[str]:
    """A fresh temporary path beside ``path`` (stale ones removed first). On any error
    or interruption inside the block it is removed (with Blender's ``@`` file of it),
    and an ``OSError`` becomes :class:`OutputError` naming ``path``."""
    path = check_writable(path)
    remove_stale_partials(path)
    stem, ext = os.path.splitext(os.path.basename(path))
    try:
        fd, tmp = tempfile.mkstemp(prefix=f".{stem}.", suffix=f"{_PARTIAL}{ext}", dir=os.path.dirname(path))
        os.close(fd)
        # Hand the writer a name that does not exist yet: Blender keeps a ".blend1"
        # backup of any file it overwrites, which would be left behind.
        os.remove(tmp)
    except OSError as exc:
        raise OutputError(f"cannot write {path!r}: {_describe(exc)}") from None
    try:
        yield tmp
    except OSError as exc:
        _remove(tmp)
        raise OutputError(f"cannot write {path!r}: {_describe(exc)}") from None
    except BaseException:
        _remove(tmp)
        raise


@contextlib.contextmanager
def atomic_path(path: str) -> Iterator[str]:
    """Yield a temporary path beside ``path``; on success it replaces ``path`` in one
    step, on any error (or interruption) it is removed and ``path`` is left as it was."""
    with _temporary_beside(path) as tmp:
        yield tmp
        _publish(tmp, path)


def write_text(path: str, text: str) -> None:
    with atomic_path(path) as tmp, open(tmp, "w", encoding="utf-8", newline="") as f:
        f.write(text)


def write_with(path: str, writer: Callable[[str], None]) -> None:
    """Let ``writer(tmp_path)`` produce the file; publish it only if it succeeds."""
    with atomic_path(path) as tmp:
        writer(tmp)


def write_all(files: Mapping[str, str | Callable[[str], None]]) -> None:
    """Write several files, all or none: ``files`` maps each path to its text or to a
    writer ``writer(tmp_path)``. Every file is written to its temporary path first; only
    when all succeeded are they renamed into place (renames within one folder do not
    fail for want of space)."""
    with contextlib.ExitStack() as stack:
        temps = [(path, stack.enter_context(_temporary_beside(path))) for path in files]
        for path, tmp in temps:
            content = files[path]
            try:
                if callable(content):
                    content(tmp)
                else:
                    with open(tmp, "w", encoding="utf-8", newline="") as f:
                        f.write(content)
            except OSError as exc:
                raise OutputError(f"cannot write {path!r}: {_describe(exc)}") from None
        if _stop_requested:
            raise KeyboardInterrupt
        for path, tmp in temps:
            os.replace(tmp, os.path.abspath(path))
