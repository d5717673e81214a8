"""Outputs never replace an input, never collide, and are written whole or not at all
(issue 12, classes 1, 5 and 6, at the model layer: no Blender needed)."""

from __future__ import annotations

import json
import math
import os
import time

import pytest
from hierarchy_inspector.addon.model import outputs
from hierarchy_inspector.addon.model.errors import OutputError
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

names = st.text(st.sampled_from("abcxyz_-"), min_size=1, max_size=8)


def _spellings(tmp_path, target):
    """Ways to name the same file: absolute, relative with detours, through a symlinked
    folder, and a hard link."""
    link_dir = tmp_path / "via_link"
    if not link_dir.exists():
        link_dir.symlink_to(tmp_path, target_is_directory=True)
    hard = tmp_path / f"hard_{target.name}"
    if not hard.exists():
        os.link(target, hard)
    return [
        str(target),
        os.path.relpath(target),
        str(tmp_path / "." / "sub" / ".." / target.name),
        str(link_dir / target.name),
        str(hard),
    ]


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stem=names, which=st.integers(0, 4))
def test_an_input_is_refused_under_any_spelling(tmp_path, stem, which):
    (tmp_path / "sub").mkdir(exist_ok=True)
    scene = tmp_path / f"{stem}.blend"
    scene.write_bytes(b"BLENDER-v500 input")
    spelled = _spellings(tmp_path, scene)[which]
    with pytest.raises(OutputError, match="is the input file"):
        outputs.check_outputs({"--json": spelled}, {"SCENE.blend": str(scene)})
    assert scene.read_bytes() == b"BLENDER-v500 input"


@settings(max_examples=30, suppress_health_check=[HealthCheck.function_scoped_fixture])
@given(stem=names)
def test_two_outputs_may_not_be_one_file(tmp_path, stem):
    (tmp_path / "via").mkdir(exist_ok=True)
    a = tmp_path / f"{stem}.out"
    link = tmp_path / "alias"
    if not link.exists():
        link.symlink_to(tmp_path, target_is_directory=True)
    with pytest.raises(OutputError, match="same file as --json"):
        outputs.check_outputs({"--json": str(a), "--csv": str(link / a.name)})
    outputs.check_outputs({"--json": str(a), "--csv": str(tmp_path / f"{stem}.csv")})  # distinct: fine


def test_write_all_writes_every_file_or_none(tmp_path):
    def fails(tmp):
        with open(tmp, "w") as f:
            f.write("half")
        raise RuntimeError("the writer broke")

    (tmp_path / "b.csv").write_text("previous")
    with pytest.raises(RuntimeError):
        outputs.write_all({str(tmp_path / "a.json"): "{}", str(tmp_path / "b.csv"): fails})
    assert sorted(p.name for p in tmp_path.iterdir()) == ["b.csv"]
    assert (tmp_path / "b.csv").read_text() == "previous"
    outputs.write_all({str(tmp_path / "a.json"): "{}", str(tmp_path / "b.csv"): "new"})
    assert (tmp_path / "a.json").read_text() == "{}" and (tmp_path / "b.csv").read_text() == "new"


def test_os_errors_say_what_could_not_be_written_and_why(tmp_path):
    def disk_full(tmp):
        with open(tmp, "w") as f:
            f.write("x")
        raise OSError(28, "No space left on device")

    with pytest.raises(OutputError, match=r"cannot write '.*r\.json': No space left on device"):
        outputs.write_with(str(tmp_path / "r.json"), disk_full)
    with pytest.raises(OutputError, match=r"cannot write '.*second\.csv': No space left on device"):
        outputs.write_all({str(tmp_path / "first.json"): "x", str(tmp_path / "second.csv"): disk_full})
    assert list(tmp_path.iterdir()) == []


def test_stale_partials_of_a_killed_run_are_removed_fresh_ones_are_not(tmp_path):
    target = tmp_path / "fixed.blend"
    stale = [tmp_path / ".fixed.abc123.partial.blend", tmp_path / ".fixed.abc123.partial.blend@"]
    for path in stale:
        path.write_text("left by a killed run")
        old = outputs.STARTED - 60
        os.utime(path, (old, old))
    fresh = tmp_path / ".fixed.zzz999.partial.blend"
    fresh.write_text("another run, now")
    other = tmp_path / ".other.abc.partial.blend"
    other.write_text("not ours")
    os.utime(other, (outputs.STARTED - 60, outputs.STARTED - 60))
    outputs.write_text(str(target), "done")
    assert target.read_text() == "done"
    assert not any(p.exists() for p in stale)
    assert fresh.exists() and other.exists()
    assert time.time() >= outputs.STARTED


def test_paths_are_quoted_in_messages(tmp_path):
    weird = tmp_path / "no\nsuch" / "r.json"
    with pytest.raises(OutputError) as caught:
        outputs.check_writable(str(weird))
    assert "\n" not in str(caught.value) and "no\\nsuch" in str(caught.value)


def test_json_text_is_the_same_json_with_one_node_per_line():
    """A report-shaped document reads back to what ``json.dumps`` gives (NaN and
    infinity spelled as json spells them), one line per top-level key and per node."""
    nodes = [{"name": f"n{i}", "values": [[0.1 * i, -1e-300, 1e300]], "nested": {"a": [1, 2]}} for i in range(5)]
    document = {"schema": "x/1", "nodes": nodes, "empty": [], "summary": {"max": float("nan"), "inf": math.inf}}
    text = outputs.json_text(document)
    assert text.endswith("}\n")
    assert json.dumps(json.loads(text)) == json.dumps(document)
    lines = text.splitlines()
    assert len(lines) == 2 + 3 + 2 + len(nodes)  # braces, three plain keys, the list's opening and closing
    assert sum(line.lstrip().startswith('{"name": "n') for line in lines) == len(nodes)
