"""What the command line shows: our output on the user's stdout and stderr, Blender's
own log lines nowhere unless ``--verbose``.

Blender writes its log (file reading, "Saved copy as", the glTF exporter's INFO lines,
"Not freed memory blocks" at exit) from C straight to file descriptors 1 and 2, and its
add-ons print from Python. :func:`start` therefore moves descriptors 1 and 2 to the null
device for the rest of the process and points ``sys.stdout`` / ``sys.stderr`` at copies
of the user's descriptors (made before the move); :func:`quiet` additionally points
``sys.stdout`` / ``sys.stderr`` at the null device around calls into Blender whose
add-ons print from Python. :func:`stop` puts everything back (for callers that run
:func:`~.main.main` in-process); the entry points leave the descriptors on the null
device so that Blender's exit messages stay quiet too.

Progress (:func:`progress`) goes to stderr only when stderr is a terminal; in pipes and
CI logs a command says one summary line instead (:func:`summary`).
"""

from __future__ import annotations

import contextlib
import io
import os
import sys
from collections.abc import Callable, Iterator

#: Exit codes (the module docstring of :mod:`.main` says when each is given).
EXIT_OK, EXIT_THRESHOLD, EXIT_INPUT, EXIT_BUG, EXIT_INTERRUPTED = 0, 1, 2, 3, 130

_state: dict = {}


def say(message: str) -> None:
    """One line on stderr, prefixed with the program's name."""
    print(f"hierarchy_inspector: {message}", file=sys.stderr, flush=True)


def _stream(fd: int) -> io.TextIOWrapper:
    return io.TextIOWrapper(os.fdopen(fd, "wb", buffering=0, closefd=False), line_buffering=True, errors="replace")


def active() -> bool:
    """True while Blender's output is redirected (between :func:`start` and :func:`stop`)."""
    return bool(_state)


def start(verbose: bool) -> None:
    """Send descriptors 1 and 2 to the null device unless ``verbose``; our own output
    keeps going to the user's stdout and stderr through ``sys.stdout`` / ``sys.stderr``."""
    if verbose or _state:
        return
    try:
        sys.stdout.flush()
        sys.stderr.flush()
        saved = os.dup(1), os.dup(2)
    except (OSError, ValueError, AttributeError):  # no real descriptors (embedded, captured): leave as is
        return
    null = os.open(os.devnull, os.O_WRONLY)
    os.dup2(null, 1)
    os.dup2(null, 2)
    os.close(null)
    _state.update(
        saved=saved,
        python=(sys.stdout, sys.stderr),
        user=(_stream(saved[0]), _stream(saved[1])),
        tty=os.isatty(saved[1]),
    )
    sys.stdout, sys.stderr = _state["user"]


def stop(restore_descriptors: bool = True) -> None:
    """Point ``sys.stdout`` / ``sys.stderr`` back at what they were; with
    ``restore_descriptors``, also descriptors 1 and 2 (else they stay on the null device
    and Blender's messages at exit stay quiet)."""
    if not _state:
        return
    for stream in _state["user"]:
        stream.flush()
    if restore_descriptors:
        sys.stdout, sys.stderr = _state["python"]
        os.dup2(_state["saved"][0], 1)
        os.dup2(_state["saved"][1], 2)
        for fd in _state["saved"]:
            os.close(fd)
        _state.clear()


@contextlib.contextmanager
def quiet() -> Iterator[None]:
    """Around calls into Blender: Python-level prints (its add-ons') go to the null
    device as well. Does nothing with ``--verbose``."""
    if not _state:
        yield
        return
    user = sys.stdout, sys.stderr
    with open(os.devnull, "w") as null:
        sys.stdout = sys.stderr = null
        try:
            yield
        finally:
            sys.stdout, sys.stderr = user


def stderr_is_terminal() -> bool:
    if _state:
        return _state["tty"]
    try:
        return sys.stderr.isatty()
    except (AttributeError, ValueError):
        return False


def user_stderr():
    """The user's stderr (also inside :func:`quiet`)."""
    return _state["user"][1] if _state else sys.stderr


def user_stdout():
    """The user's stdout (also inside :func:`quiet`)."""
    return _state["user"][0] if _state else sys.stdout


def progress(what: str) -> Callable[[float, str], None] | None:
    """``report(fraction, message)`` updating one line on a terminal's stderr, or None
    when stderr is not a terminal (pipes, CI logs)."""
    if not stderr_is_terminal():
        return None

    def report(fraction: float, message: str) -> None:
        err = user_stderr()
        end = "\n" if fraction >= 1.0 else ""
        err.write(f"\r\033[Khierarchy_inspector: {what} {int(100 * fraction):3d}% {message}{end}")
        err.flush()

    return report


def summary(message: str) -> None:
    """The one line a command says on stderr when it is done (also in pipes)."""
    print(f"hierarchy_inspector: {message}", file=user_stderr(), flush=True)


#: How many names a one-line list shows before "and N more": a stretching Rigify rig
#: gives 150 helpers, and a line of 150 names is not read (the files name every helper
#: after its node, and ``report --json`` lists every flagged node).
LISTED = 10


def listed(names, limit: int = LISTED, quote: bool = False) -> str:
    """``names`` joined with commas, the first ``limit`` of them and then "and N more"."""
    shown = [repr(n) if quote else str(n) for n in list(names)[:limit]]
    more = len(names) - len(shown)
    return ", ".join(shown) + (f" and {more} more" if more > 0 else "")
