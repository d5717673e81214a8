"""A pytest plugin (``tests/conftest.py`` loads it): every glTF file the session's tests
wrote, anywhere under pytest's temporary folder (exports by the package, by Blender's
exporter, by the command line in its own process), goes through the Khronos glTF
validator at the end of the session (one node process, ``tests/js/validate.mjs``).
Any error fails the session and names the file and the errors.

Tests that write broken files on purpose are marked ``writes_invalid_gltf``: their
``tmp_path`` is left out. Without node or ``tests/js/node_modules`` (a Blender binary's
chroot in ``make test-blender``) the validation says so and does not run; ``make test``
installs them, and tests/clients fails without them."""

from __future__ import annotations

import os

import js_clients
import pytest

#: The tmp_path of every test marked ``writes_invalid_gltf`` (its files are broken on purpose).
_INVALID_ON_PURPOSE: list = []


def pytest_configure(config):
    config.addinivalue_line(
        "markers", "writes_invalid_gltf: the test writes broken glTF files on purpose (not validated)"
    )


def pytest_runtest_teardown(item):
    if item.get_closest_marker("writes_invalid_gltf") is not None and "tmp_path" in getattr(item, "funcargs", {}):
        _INVALID_ON_PURPOSE.append(item.funcargs["tmp_path"])


def session_files(session) -> list:
    """The .glb / .gltf files under the session's temporary folder, but those of tests
    marked ``writes_invalid_gltf``."""
    factory = getattr(session.config, "_tmp_path_factory", None)
    if factory is None:
        return []
    base = factory.getbasetemp()
    skip = tuple(str(p) + os.sep for p in _INVALID_ON_PURPOSE)
    return sorted(p for p in base.rglob("*") if p.suffix.lower() in (".glb", ".gltf") and not str(p).startswith(skip))


@pytest.hookimpl(tryfirst=True)  # before the terminal summary, which shows the exit status
def pytest_sessionfinish(session, exitstatus):
    files = session_files(session)
    if not files:
        return
    why = js_clients.missing()
    if why is not None:
        session.config._gltf_validation = [f"not run on the {len(files)} glTF files the tests wrote: {why}"]
        return
    reports = js_clients.validate(files)
    bad = [r for r in reports if r.errors]
    lines = [
        f"{len(reports)} glTF files the tests wrote: {sum(r.errors for r in reports)} errors, "
        f"{sum(r.warnings for r in reports)} warnings, {sum(r.infos for r in reports)} infos"
    ]
    lines += [f"{r.path}: {r.errors} errors: " + "; ".join(r.messages[:5]) for r in bad]
    session.config._gltf_validation = lines
    if bad and session.exitstatus == 0:
        session.exitstatus = 1


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    for line in getattr(config, "_gltf_validation", []):
        terminalreporter.write_line(f"gltf-validator: {line}", red=": 0 errors" not in line and "not run" not in line)
