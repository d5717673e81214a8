"""What Blender prints while it works, caught at the file-descriptor level (its C code
and its operators write to fds 1 and 2 directly, past ``sys.stdout``): so a failing
exporter's traceback becomes one line of ours instead of hundreds of lines of its own."""

from __future__ import annotations

import contextlib
import os
import sys
import tempfile
from collections.abc import Iterator

from ..model.errors import ExportError


class Captured:
    """The text written to stdout and stderr inside :func:`captured_output`."""

    text: str = ""

    def last_line(self, default: str = "") -> str:
        lines = [line.strip() for line in self.text.splitlines() if line.strip()]
        return lines[-1] if lines else default


@contextlib.contextmanager
def captured_output(echo: bool = True) -> Iterator[Captured]:
    """Send fds 1 and 2 to a temporary file for the block; the text is in the yielded
    :class:`Captured` afterwards (also when the block raises). With ``echo`` the text is
    then written to fd 1 after all, wherever it points: the terminal with ``--verbose``,
    the null device otherwise (see :mod:`..cli.console`), Blender's console in the UI."""
    captured = Captured()
    for stream in (sys.stdout, sys.stderr):
        with contextlib.suppress(Exception):
            stream.flush()
    saved = [os.dup(1), os.dup(2)]
    with tempfile.TemporaryFile(mode="w+b") as sink:
        try:
            os.dup2(sink.fileno(), 1)
            os.dup2(sink.fileno(), 2)
            yield captured
        finally:
            for stream in (sys.stdout, sys.stderr):
                with contextlib.suppress(Exception):
                    stream.flush()
            os.dup2(saved[0], 1)
            os.dup2(saved[1], 2)
            for fd in saved:
                os.close(fd)
            sink.seek(0)
            raw = sink.read()
            captured.text = raw.decode("utf-8", "replace")
            if echo and raw:
                with contextlib.suppress(OSError):
                    os.write(1, raw)


def run_exporter(label: str, operator, **options) -> None:
    """Run one of Blender's exporter operators (``bpy.ops.export_scene.gltf`` ...) with
    ``options``. What it prints is captured (and passed on, see :func:`captured_output`);
    when it fails (a hierarchy too deep for its recursion, values that overflow, an
    option it refuses) :class:`ExportError` says so in one line: the last line of its
    error, not its traceback."""
    with captured_output() as printed:
        try:
            operator(**options)
            return
        except Exception as exc:  # the exporter's own failure, whatever it is
            failure = exc
    lines = [ln.strip() for ln in str(failure).splitlines() if ln.strip() and not ln.startswith("Location:")]
    why = lines[-1] if lines else printed.last_line(type(failure).__name__)
    raise ExportError(f"Blender's {label} exporter failed: {why}")
