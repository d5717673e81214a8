"""Running a command: the one place where outcomes become exit codes (the codes and
``say`` are in :mod:`.console`, the parser in :mod:`.arguments`).

Exit codes: 0 ran and nothing exceeded a threshold; 1 a threshold was exceeded
(``--fail-on-shear``); 2 the input or scene cannot be handled as asked
(:class:`~..model.errors.InspectorError`: one line on stderr, no traceback, nothing
written, the input never replaced); 3 an internal error (a bug: one line, the traceback
with ``HIERARCHY_INSPECTOR_DEBUG=1``); 130 interrupted (Ctrl-C, SIGTERM): no output is
published after the signal. A signal during Blender's save or an export is acted on when
Blender returns (it cannot be stopped half-way), before the finished file would replace
its target: that file is removed. Outputs published before the signal stay (``demo``
and ``audit`` write several in turn; an audit's ``audit.jsonl`` keeps every file done,
for ``--resume``).
"""

from __future__ import annotations

import os
import signal
import sys
import time
import traceback

from ..model.errors import InspectorError
from ..model.outputs import clear_stop
from . import console
from .arguments import build_parser, joined_values
from .console import EXIT_BUG, EXIT_INPUT, EXIT_INTERRUPTED, say
from .process import main_thread, require_bpy, restore, signals_deferred, terminate


def _run(command: str, args) -> int:
    if command == "demo":
        from .demo import cmd_demo

        return cmd_demo(args)
    if command == "audit":
        from .audit import cmd_audit  # the parent process needs no bpy: workers open the files

        return cmd_audit(args)
    with signals_deferred():
        require_bpy()
        from . import commands  # imports the scene layer, hence bpy
    if command in ("audit-file", "audit-worker"):
        from .audit_worker import cmd_audit_file, cmd_audit_worker

        return cmd_audit_worker(args) if command == "audit-worker" else cmd_audit_file(args)

    return {"report": commands.cmd_report, "export": commands.cmd_export, "fix": commands.cmd_fix}[command](args)


def main(argv: list[str] | None = None, interrupted: list[int] | None = None, *, keep_quiet: bool = False) -> int:
    """Run one command; returns the exit code (see the module docstring).

    ``interrupted``: signals that arrived while the package loaded (``__main__`` defers
    them); any makes the run stop at once with exit code 130. Blender's own output is
    silenced unless ``--verbose`` (:mod:`.console`); with ``keep_quiet`` (the process
    entry points) it stays silenced after the command, so that Blender's messages at
    exit do not reach the user either.
    """
    if not main_thread():
        return _main(argv, keep_quiet)
    previous = {signal.SIGTERM: signal.signal(signal.SIGTERM, terminate)}
    previous[signal.SIGINT] = signal.signal(signal.SIGINT, signal.default_int_handler)
    try:
        return EXIT_INTERRUPTED if interrupted else _main(argv, keep_quiet)
    finally:
        restore(previous)


def _main(argv: list[str] | None, keep_quiet: bool) -> int:
    started = time.perf_counter()
    clear_stop()
    try:
        try:
            args = build_parser().parse_args(joined_values(sys.argv[1:] if argv is None else list(argv)))
        except SystemExit as exc:  # --help / --version printed and asked to stop
            return int(exc.code or 0) and EXIT_INPUT
        console.start(getattr(args, "verbose", False))
        try:
            code = _run(args.command, args)
        finally:
            console.stop(restore_descriptors=not keep_quiet)
    except InspectorError as exc:
        say(str(exc))
        return EXIT_INPUT
    except KeyboardInterrupt:  # Ctrl-C or SIGTERM: temporary files are gone already
        return EXIT_INTERRUPTED
    except MemoryError:  # what the estimates before a range did not foresee
        say("not enough memory for this run (MemoryError): give a shorter range, or fewer objects")
        return EXIT_INPUT
    except Exception as exc:  # a bug, not the user's input: never mistaken for exit code 1
        if os.environ.get("HIERARCHY_INSPECTOR_DEBUG"):
            traceback.print_exc()
        say(f"internal error: {type(exc).__name__}: {exc}")
        return EXIT_BUG
    done = getattr(args, "summary", None)
    console.summary(f"{args.command}: {done + ', ' if done else ''}{time.perf_counter() - started:.1f} s")
    return code
