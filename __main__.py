"""``python -m hierarchy_inspector ...``: the command line (see ``--help``)."""

import signal
import sys

# Ctrl-C or SIGTERM while Python loads the package (numpy, then Blender's module) would
# leave a traceback or worse: they wait, and main() stops at once if any came.
_interrupted: list[int] = []
for _signum in (signal.SIGINT, signal.SIGTERM):
    signal.signal(_signum, lambda signum, _frame: _interrupted.append(signum))

from .addon.cli import main  # noqa: E402

sys.exit(main(interrupted=_interrupted))
