"""The Khronos glTF validator (npm ``gltf-validator``, under node) as the test session
uses it (tests/gltf_validation.py: every glTF the tests wrote, validated at the end of
the session, any error fails it): it sees broken files, passes the exports, and the
session's check fails a session that wrote a broken file."""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
from pathlib import Path

import js_clients
import pytest

bpy = pytest.importorskip("bpy")

from hierarchy_inspector.addon.model.frames import FrameRange  # noqa: E402
from hierarchy_inspector.addon.scene.exports import gltf_animated  # noqa: E402
from hierarchy_inspector.addon.scene.exports import scenes as export_scenes  # noqa: E402

TESTS = Path(__file__).resolve().parents[1]


@pytest.fixture(autouse=True, scope="module")
def _node_available():
    why = js_clients.missing()
    if why is not None:
        pytest.fail(f"the glTF validator cannot run: {why}", pytrace=False)


def _glb(doc: dict, binary: bytes) -> bytes:
    text = json.dumps(doc).encode()
    text += b" " * (-len(text) % 4)
    binary += b"\0" * (-len(binary) % 4)
    chunks = struct.pack("<II", len(text), 0x4E4F534A) + text + struct.pack("<II", len(binary), 0x004E4942) + binary
    return struct.pack("<III", 0x46546C67, 2, 12 + len(chunks)) + chunks


def _split(data: bytes) -> tuple[dict, bytes]:
    length = struct.unpack_from("<I", data, 12)[0]
    doc = json.loads(data[20 : 20 + length])
    return doc, data[20 + length + 8 :]


@pytest.fixture(scope="module")
def exact_export(tmp_path_factory) -> Path:
    bpy.ops.wm.read_factory_settings(use_empty=True)
    scene = bpy.context.scene
    export_scenes.sheared_objects(scene)
    export_scenes.inherit_scale_rig(scene)
    out = tmp_path_factory.mktemp("validator") / "exact.glb"
    gltf_animated.write_gltf_frames(scene, str(out), FrameRange(1, 25, 1), half_frames=False)
    return out


def test_an_exact_export_has_no_errors(exact_export):
    (report,) = js_clients.validate([exact_export])
    assert report.errors == 0, report.messages


@pytest.mark.writes_invalid_gltf
def test_the_validator_sees_what_a_file_breaks(exact_export, tmp_path):
    """The same export with a helper's rotation not a unit quaternion, a sampler's times
    not increasing and a skin's joint out of range: each is an error the validator names."""
    doc, binary = _split(exact_export.read_bytes())
    node = next(n for n in doc["nodes"] if n["name"].endswith("(shear helper)") and "rotation" in n)
    node["rotation"] = [0.0, 0.0, 0.6, 0.6]
    broken = tmp_path / "broken.glb"
    broken.write_bytes(_glb(doc, binary))
    doc, binary = _split(exact_export.read_bytes())
    doc["skins"][0]["joints"][0] = len(doc["nodes"]) + 5
    unlinked = tmp_path / "unlinked.glb"
    unlinked.write_bytes(_glb(doc, binary))
    reports = js_clients.validate([broken, unlinked])
    assert [r.errors > 0 for r in reports] == [True, True]
    assert any("ROTATION_NON_UNIT" in m for m in reports[0].messages), reports[0].messages
    assert any("UNRESOLVED_REFERENCE" in m for m in reports[1].messages), reports[1].messages


def _inner_session(folder: Path, body: str) -> subprocess.CompletedProcess:
    folder.mkdir()
    (folder / "test_inner.py").write_text(body)
    return subprocess.run(
        [sys.executable, "-m", "pytest", "-p", "gltf_validation", "-p", "no:cacheprovider", "-o", "addopts="]
        + [f"--basetemp={folder / 'tmp'}", f"--rootdir={folder}", str(folder / "test_inner.py")],
        cwd=folder,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONPATH": str(TESTS)},
    )


@pytest.mark.writes_invalid_gltf
def test_a_session_that_writes_a_broken_gltf_fails(exact_export, tmp_path):
    """A session whose tests all pass but wrote an invalid glTF exits 1 and names it;
    the same file from a test marked ``writes_invalid_gltf`` passes, and so does a valid one."""
    write = (
        "import pathlib, pytest\n"
        "{mark}def test_writes(tmp_path):\n"
        "    (tmp_path / 'out.glb').write_bytes(pathlib.Path({source!r}).read_bytes(){cut})\n"
    )
    truncated = write.format(mark="", source=str(exact_export), cut="[:-40]")
    result = _inner_session(tmp_path / "a", truncated)
    assert result.returncode == 1, result.stdout + result.stderr
    assert "1 passed" in result.stdout and "out.glb" in result.stdout and "errors:" in result.stdout
    marked = write.format(mark="@pytest.mark.writes_invalid_gltf\n", source=str(exact_export), cut="[:-40]")
    result = _inner_session(tmp_path / "b", marked)
    assert result.returncode == 0, result.stdout + result.stderr
    result = _inner_session(tmp_path / "c", write.format(mark="", source=str(exact_export), cut=""))
    assert result.returncode == 0, result.stdout + result.stderr
    assert "gltf-validator: 1 glTF files the tests wrote: 0 errors" in result.stdout
