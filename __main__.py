"""``python -m hierarchy_inspector ...``: the command line (see ``--help``).

Ctrl-C or SIGTERM while Python loads the package (numpy, then Blender's module) would
leave a traceback or worse: they wait, and ``main()`` stops at once if any came.

With Blender's module loaded, the process ends with ``os._exit`` once our outputs are
flushed and closed: bpy 4.2 from PyPI crashes (SIGSEGV) while Python shuts down after a
glTF export (plain ``bpy.ops.export_scene.gltf`` does it too), which would turn a
finished command's exit code into -11; Blender's own cleanup messages at exit go with it,
and so would its clean-up: the one part of it that outlives the process, Blender's
session folder (``$TMPDIR/blender_XXXXXX``), is removed here.
"""

import os
import signal
import sys

_interrupted: list[int] = []
for _signum in (signal.SIGINT, signal.SIGTERM):
    signal.signal(_signum, lambda signum, _frame: _interrupted.append(signum))

from .addon.cli import main  # noqa: E402
from .addon.cli.process import end_blender_session  # noqa: E402

code = main(interrupted=_interrupted, keep_quiet=True)
if "bpy" in sys.modules:
    sys.stdout.flush()
    sys.stderr.flush()
    end_blender_session()
    os._exit(code)
sys.exit(code)
