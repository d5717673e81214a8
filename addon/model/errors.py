"""One error model for everything above the core.

:class:`InspectorError` means "the user's input or scene cannot be handled as asked":
operators turn it into ``self.report({'ERROR'}, ...)`` and ``{'CANCELLED'}``, the command
line into one line on stderr and exit code 2. Its message names objects and bones, never
node indices. Anything else that escapes is a bug (exit code 3 on the command line).
The core raises :class:`~...core.InputError` (a ``ValueError`` naming arguments and
indices); the scene layer translates those into :class:`SceneDataError` with names.
"""

from __future__ import annotations


class InspectorError(Exception):
    """The user's input or scene cannot be handled as asked; nothing was changed or written."""


class UsageError(InspectorError):
    """A command-line argument or option that cannot be used (a bad value, a missing file)."""


class OutputError(InspectorError):
    """An output path that cannot be written (a folder, missing, unwritable, or an input)."""


class SceneDataError(InspectorError):
    """Values in the scene that no transform can be computed from (NaN, infinity),
    named by object or bone and property."""


class ExportError(InspectorError):
    """The scene cannot be exported as asked; nothing was changed or written."""


class FixError(InspectorError):
    """The scene cannot be fixed (helpers, bake) as asked; nothing was changed."""


class GltfError(InspectorError):
    """A file that is not valid glTF 2.0 (or not one this package understands)."""
