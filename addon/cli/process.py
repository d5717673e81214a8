"""The process around a command: SIGINT and SIGTERM deferred while Blender loads a file,
saves or exports (:func:`signals_deferred`), SIGTERM turned into Ctrl-C
(:func:`terminate`), Blender's module required where a command needs it
(:func:`require_bpy`), and Blender's session folder removed at the end
(:func:`end_blender_session`)."""

from __future__ import annotations

import contextlib
import os
import shutil
import signal
import sys
import threading
from collections.abc import Iterator

from ..model.errors import UsageError
from ..model.outputs import request_stop

STOP_SIGNALS = (signal.SIGINT, signal.SIGTERM)


def end_blender_session() -> None:
    """Remove Blender's session folder (``bpy.app.tempdir``, ``$TMPDIR/blender_XXXXXX``,
    made when the module loaded), as Blender does when it exits normally: a process that
    ends with ``os._exit`` (``__main__``, the audit's workers) skips that."""
    bpy = sys.modules.get("bpy")
    folder = getattr(getattr(bpy, "app", None), "tempdir", "") if bpy else ""
    if folder and os.path.basename(os.path.normpath(folder)).startswith("blender_"):
        shutil.rmtree(folder, ignore_errors=True)


def require_bpy() -> None:
    """:class:`UsageError` when Blender's Python module is not importable."""
    try:
        import bpy  # noqa: F401
    except ImportError:
        raise UsageError(
            "Blender's Python module is not available: pip install bpy==5.0.1 (Python 3.11), "
            "or run blender -b -c hierarchy_inspector ..."
        ) from None


@contextlib.contextmanager
def signals_deferred() -> Iterator[None]:
    """SIGINT and SIGTERM wait until the block ends: loading Blender's module must not be
    interrupted half-way (it crashes, or fails with a misleading ImportError); after the
    block the run stops as if they had come then."""
    if not main_thread():
        yield
        return
    pending: list[int] = []

    def defer(signum, _frame) -> None:
        pending.append(signum)
        request_stop()  # a file finished meanwhile is not published (model.outputs)

    previous = {s: signal.signal(s, defer) for s in STOP_SIGNALS}
    try:
        yield
    finally:
        restore(previous)
    if pending:
        raise KeyboardInterrupt


def restore(previous: dict) -> None:
    """Put signal handlers back; one installed outside Python (Blender's own, reported
    as None) becomes Python's default: Ctrl-C raises KeyboardInterrupt, SIGTERM ends."""
    for s, handler in previous.items():
        if handler is None:
            handler = signal.default_int_handler if s == signal.SIGINT else signal.SIG_DFL
        signal.signal(s, handler)


def terminate(signum, _frame) -> None:
    """SIGTERM (a batch system cancelling the job) ends the run like Ctrl-C: temporary
    files are removed on the way out and the exit code is 130."""
    raise KeyboardInterrupt


def main_thread() -> bool:
    return threading.current_thread() is threading.main_thread()
