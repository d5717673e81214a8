"""``python -m hierarchy_inspector ...``: the command line (see ``--help``)."""

import sys

from .addon.cli import main

sys.exit(main(keep_quiet=True))
