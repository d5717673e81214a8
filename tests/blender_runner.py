"""Run the test suite inside a real Blender, against the INSTALLED extension.

    blender --background --factory-startup --python-exit-code 1 \\
        --python tests/blender_runner.py -- [pytest args]       (default: tests/core tests/model tests/scene tests/ui)

``make test-blender`` installs the built zip first (``blender --command extension
install-file -r user_default --enable``) into an isolated ``BLENDER_USER_RESOURCES``, then
runs this. Here, in Blender's own Python:

1. pytest & co. come from ``build/blender-pylib/pyX.Y`` (made by tools/blender_pylib.py;
   override with ``HIERARCHY_INSPECTOR_PYLIB``), put first on ``sys.path``. numpy is Blender's.
2. The installed extension (``HIERARCHY_INSPECTOR_MODULE``, default
   ``bl_ext.user_default.hierarchy_inspector``) is enabled through Blender's ``addon_utils``
   if it is not already, and must come from the extension repository, not the source tree.
3. ``import hierarchy_inspector[.x.y]`` is aliased to that module: the very same module
   objects, so classes registered by Blender and classes the tests see are identical.
4. ``HIERARCHY_INSPECTOR_MODULE`` is set to the installed module's name, so add-on test
   fixtures know the add-on is already registered by Blender.
5. ``HIERARCHY_INSPECTOR_CLI`` (the command-line tests' command prefix, see
   tests/cli_runner.py), unless already set, becomes this Blender's installed command:
   ``[blender, --background, --offline-mode, --python-use-system-env, --command,
   hierarchy_inspector]``: without --factory-startup, so that it reads the (isolated) user
   preferences in which ``install-file --enable`` enabled the extension, and with the
   test packages on ``PYTHONPATH``, as the host CLI has them in its venv (matplotlib for
   the demo's pictures).
6. pytest runs from the repository root; its exit code becomes Blender's exit code.
"""

from __future__ import annotations

import importlib
import importlib.abc
import importlib.machinery
import importlib.util
import json
import os
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ALIAS = "hierarchy_inspector"
DEFAULT_MODULE = f"bl_ext.user_default.{ALIAS}"
DEFAULT_TESTS = ["tests/core", "tests/model", "tests/scene", "tests/ui"]


def fail(message: str, code: int = 3) -> None:
    print(f"blender_runner: error: {message}", file=sys.stderr, flush=True)
    sys.exit(code)


class AliasFinder(importlib.abc.MetaPathFinder):
    """Resolve ``alias`` and ``alias.<sub>`` to the already-importable ``target`` package.

    The loader puts the real module into ``sys.modules[alias...]`` (the "module replaced
    itself in sys.modules" case importlib supports), so nothing is executed twice and the
    real modules' ``__name__``, ``__spec__`` and ``__package__`` stay untouched.
    """

    def __init__(self, alias: str, target: str) -> None:
        self.alias = alias
        self.target = target

    def real_name(self, fullname: str) -> str | None:
        if fullname == self.alias or fullname.startswith(self.alias + "."):
            return self.target + fullname[len(self.alias) :]
        return None

    def find_spec(self, fullname, path=None, target=None):
        real = self.real_name(fullname)
        if real is None or importlib.util.find_spec(real) is None:
            return None
        return importlib.machinery.ModuleSpec(fullname, AliasLoader(real))


class AliasLoader(importlib.abc.Loader):
    def __init__(self, real: str) -> None:
        self.real = real

    def create_module(self, spec):
        return None  # a throw-away placeholder, replaced in exec_module

    def exec_module(self, module) -> None:
        sys.modules[module.__name__] = importlib.import_module(self.real)


class FlushBlenderOutput:
    """pytest plugin: Blender prints through C stdio, block-buffered when piped, so its
    lines ("Read blend: ...") would escape pytest's capture and come out after pytest's
    summary. Flush C stdio after each test (inside the capture) and before the summary."""

    def __init__(self) -> None:
        try:
            import ctypes

            self._fflush = ctypes.CDLL(None).fflush
        except (OSError, AttributeError):  # not a POSIX libc: output order is only cosmetic
            self._fflush = None

    def flush(self) -> None:
        if self._fflush is not None:
            self._fflush(None)

    def pytest_runtest_teardown(self, item) -> None:
        self.flush()

    def pytest_terminal_summary(self) -> None:
        self.flush()


def pytest_args() -> list[str]:
    argv = sys.argv[sys.argv.index("--") + 1 :] if "--" in sys.argv else []
    return argv or DEFAULT_TESTS


def add_pylib() -> Path:
    version = "{}.{}".format(*sys.version_info[:2])
    pylib = Path(os.environ.get("HIERARCHY_INSPECTOR_PYLIB") or REPO / "build" / "blender-pylib" / f"py{version}")
    if not pylib.is_dir():
        fail(
            f"no test packages for Blender's Python {version} at {pylib}; "
            f"make them with: python tools/blender_pylib.py (or run make test-blender)"
        )
    sys.path.insert(0, str(pylib))
    try:
        import pytest  # noqa: F401
    except ImportError as exc:
        fail(f"pytest cannot be imported from {pylib}: {exc}")
    return pylib


def enable_extension(module_name: str):
    """Enable the installed extension through Blender (if not already); return its module."""
    import addon_utils
    import bpy

    if not addon_utils.check(module_name)[1]:
        errors: list[BaseException] = []
        addon_utils.enable(module_name, default_set=True, handle_error=errors.append)
        if errors or not addon_utils.check(module_name)[1]:
            import traceback

            details = "".join(traceback.format_exception(errors[0])) if errors else "(no exception)"
            fail(f"Blender could not enable the extension {module_name}:\n{details}")
    module = sys.modules[module_name]

    repo_module = module_name.split(".")[1] if module_name.startswith("bl_ext.") else None
    repos = {r.module: r for r in bpy.context.preferences.extensions.repos}
    if repo_module is not None and repo_module in repos:
        repo_dir = Path(repos[repo_module].directory).resolve()
        module_file = Path(module.__file__).resolve()
        if not module_file.is_relative_to(repo_dir):
            fail(f"{module_name} was loaded from {module_file}, outside its extension repository {repo_dir}")
    return module


def main() -> None:
    args = pytest_args()
    pylib = add_pylib()
    import pytest

    module_name = os.environ.get("HIERARCHY_INSPECTOR_MODULE") or DEFAULT_MODULE
    module = enable_extension(module_name)
    stale = [name for name in sys.modules if name == ALIAS or name.startswith(ALIAS + ".")]
    if stale:
        fail(f"{stale[0]} was imported before the alias was installed (from {sys.modules[stale[0]]!r})")
    sys.meta_path.insert(0, AliasFinder(ALIAS, module_name))
    for name in (ALIAS, f"{ALIAS}.core"):  # the alias must give the very same module objects
        real = module_name + name[len(ALIAS) :]
        if importlib.import_module(name) is not importlib.import_module(real):
            fail(f"import {name} did not give the installed module {real}")
    os.environ["HIERARCHY_INSPECTOR_MODULE"] = module_name

    import bpy

    if not os.environ.get("HIERARCHY_INSPECTOR_CLI"):
        cli = [bpy.app.binary_path, "--background", "--offline-mode", "--python-use-system-env", "--command", ALIAS]
        os.environ["HIERARCHY_INSPECTOR_CLI"] = json.dumps(cli)
        os.environ["PYTHONPATH"] = os.pathsep.join(filter(None, [str(pylib), os.environ.get("PYTHONPATH")]))

    print(
        f"blender_runner: Blender {bpy.app.version_string}, Python {sys.version.split()[0]}, "
        f"numpy {importlib.import_module('numpy').__version__}, pytest {pytest.__version__}; "
        f"{ALIAS} -> {module_name} ({Path(module.__file__).parent}); "
        f"command line: {' '.join(json.loads(os.environ['HIERARCHY_INSPECTOR_CLI']))}",
        flush=True,
    )
    os.chdir(REPO)
    code = pytest.main(["-o", "cache_dir=build/blender-pytest-cache", *args], plugins=[FlushBlenderOutput()])
    sys.stdout.flush()
    sys.stderr.flush()
    sys.exit(int(code))


if __name__ == "__main__":
    main()
