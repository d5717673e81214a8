"""Class 6 of issue 12: Ctrl-C and SIGTERM end a run quietly with exit 130 and leave no
temporary file; a run killed outright (SIGKILL, no chance to clean up) may leave one,
which the next run writing there removes. At no point is the input changed, and an
output is either absent, the previous one, or complete."""

from __future__ import annotations

import hashlib
import json
import os
import random
import signal
import time
from pathlib import Path

import blend_factory
import pytest
from cli_runner import run_cli, start_cli


def _digest(path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _whole_json(path) -> bool:
    try:
        json.loads(path.read_text())
    except ValueError:
        return False
    return True


def _wait_for_blender(proc, seconds: float) -> None:
    """Let the run get ``seconds`` past its start (imports and file reading included)."""
    end = time.monotonic() + seconds
    while time.monotonic() < end and proc.poll() is None:
        time.sleep(0.02)


def _blender_start_up() -> float:
    """Seconds a Blender binary (``blender -b -c``) takes before our code can handle a
    signal, with a margin for a machine busier than at measuring; 0 for ``python -m``,
    whose whole start-up (numpy, bpy) is ours to handle."""
    if not os.environ.get("HIERARCHY_INSPECTOR_CLI"):
        return 0.0
    start = time.monotonic()
    assert run_cli("--help").returncode == 0
    return 2.0 * (time.monotonic() - start)


@pytest.fixture(scope="module")
def big_blend(tmp_path_factory):
    """A 20,000-object file, how long a whole ``report`` of it takes and how much of
    that is a Blender binary's own start-up (seconds)."""
    folder = tmp_path_factory.mktemp("big")
    blend = Path(blend_factory.many_objects(folder / "big.blend"))
    start = time.monotonic()
    assert run_cli("report", blend, "--json", folder / "r.json", "--csv", folder / "r.csv").returncode == 0
    seconds = time.monotonic() - start
    start_up = _blender_start_up()
    assert start_up < 0.5 * seconds, (
        f"Blender starts in {start_up:.1f} s of a {seconds:.1f} s run: too little to interrupt"
    )
    return blend, seconds, start_up


@pytest.mark.parametrize(
    "signum, when", [(signal.SIGINT, 0.05), (signal.SIGINT, 0.15), (signal.SIGINT, 0.7), (signal.SIGTERM, 0.7)]
)
def test_interrupted_run_exits_130_quietly_and_leaves_nothing(big_blend, tmp_path, signum, when):
    """Interrupted while Python loads numpy and Blender (0.05, 0.15 of a run), and
    while it works (0.7). A Blender binary (``blender -b -c``) starts itself before our
    code runs: a Ctrl-C then is Blender's to handle (it dies of the signal), so there the
    fractions count from the end of Blender's start-up, and the first case is skipped."""
    if when < 0.1 and os.environ.get("HIERARCHY_INSPECTOR_CLI"):
        pytest.skip("a Blender binary handles a Ctrl-C during its own start-up")
    source, seconds, start_up = big_blend
    blend = tmp_path / "in.blend"
    blend.write_bytes(source.read_bytes())
    before = _digest(blend)
    # On a loaded machine one run can take half the time of the one measured: a run that
    # ends before the signal, or whose signal comes after both outputs were written whole
    # (its work is done), proves nothing either way; then the signal comes earlier. A
    # run that has printed its summary is past our code, in the interpreter's or
    # Blender's own exit: a signal there ends the process as they handle it (a Blender
    # binary dies of it), after the work was done.
    interrupted = False
    for attempt in range(4):
        proc = start_cli("report", blend, "--json", tmp_path / "r.json", "--csv", tmp_path / "r.csv")
        _wait_for_blender(proc, start_up + when * (seconds - start_up) / 2**attempt)
        if proc.poll() is None:
            proc.send_signal(signum)
            _out, err = proc.communicate(timeout=120)
            written = (tmp_path / "r.json").exists() and (tmp_path / "r.csv").exists()
            finished = written and _whole_json(tmp_path / "r.json")
            past_our_code = "hierarchy_inspector: report:" in err
            too_late = proc.returncode == 0 or (finished and (proc.returncode == 130 or past_our_code))
            if not too_late:
                interrupted = True
                break
        proc.wait(timeout=120)
        for output in ("r.json", "r.csv"):
            (tmp_path / output).unlink(missing_ok=True)
    assert interrupted, "every run ended before its signal: the scene is too small to interrupt"
    assert proc.returncode == 130, err
    assert "Traceback" not in err
    assert all("%" in line for line in err.strip().splitlines()), err  # at most progress lines
    assert _digest(blend) == before
    assert sorted(p.name for p in tmp_path.iterdir()) == ["in.blend"]


def test_killed_at_random_points_input_intact_outputs_whole_and_temps_cleaned(demo_dir, tmp_path):
    """Fault injection: SIGKILL at random moments of runs that write a .blend and two
    report files; afterwards the input is intact, each output is absent or complete,
    and one more run leaves no temporary file behind."""
    blend = tmp_path / "in.blend"
    blend.write_bytes((demo_dir / "demo.blend").read_bytes())
    before = _digest(blend)
    out = tmp_path / "out"
    out.mkdir()
    rng = random.Random(20261123)
    reference = run_cli("report", blend, "--json", tmp_path / "ref.json")
    assert reference.returncode == 0
    expected = json.loads((tmp_path / "ref.json").read_text())
    for _round in range(6):
        if rng.random() < 0.5:
            args = ("fix", blend, "--method", "bake", "--out", out / "fixed.blend")
        else:
            args = ("report", blend, "--json", out / "r.json", "--csv", out / "r.csv")
        proc = start_cli(*args)
        _wait_for_blender(proc, rng.uniform(0.5, 4.0))
        proc.kill()
        proc.communicate(timeout=60)
        assert _digest(blend) == before
        if (out / "r.json").exists():
            assert json.loads((out / "r.json").read_text())["nodes"] == expected["nodes"]
            assert (out / "r.csv").exists()  # written together or not at all
        if (out / "fixed.blend").exists():
            assert (out / "fixed.blend").read_bytes()[:7] == b"BLENDER"
    # One more complete run of each cleans whatever the killed runs left beside its outputs.
    time.sleep(1.1)  # temporaries must be older than the run that removes them
    assert run_cli("fix", blend, "--method", "bake", "--out", out / "fixed.blend").returncode == 0
    assert run_cli("report", blend, "--json", out / "r.json", "--csv", out / "r.csv").returncode == 0
    assert sorted(p.name for p in out.iterdir()) == ["fixed.blend", "r.csv", "r.json"]
    assert _digest(blend) == before


_DRIVER = r"""
import os, signal, sys
from hierarchy_inspector.addon.cli import commands, export_frames_cmd
from hierarchy_inspector.addon.cli.main import main

marker = os.environ["DRIVER_MARKER"]


def signalled(real):
    def call(*args, **kwargs):
        os.kill(os.getpid(), signal.SIGINT)  # arrives while Blender's save / export defers it
        try:
            return real(*args, **kwargs)
        finally:  # the signal is held while Blender writes: it never cuts the writer short
            open(marker, "w").close()

    return call


commands.save_copy = signalled(commands.save_copy)
export_frames_cmd.write_fbx = signalled(export_frames_cmd.write_fbx)
export_frames_cmd.write_gltf_frames = signalled(export_frames_cmd.write_gltf_frames)
code = main(sys.argv[1:])
sys.stdout.flush()
sys.stderr.flush()
os._exit(code)  # as __main__ does: bpy 4.2 crashes while Python shuts down after a glTF export
"""


@pytest.mark.writes_invalid_gltf  # the "earlier output" in out.glb's place is a few bytes of text
@pytest.mark.parametrize(
    "args, out",
    [
        (["fix", "--method", "bake", "--out"], "fixed.blend"),
        (["export", "--target", "fbx", "--out"], "out.fbx"),
        (["export", "--target", "gltf", "--out"], "out.glb"),
    ],
)
def test_a_signal_during_a_save_or_export_publishes_nothing(demo_dir, tmp_path, args, out):
    """Issue 24 item 17: a Ctrl-C during Blender's save or export is held until Blender
    returns; the finished file then replaced its target and the run said 130. Now exit
    130 means nothing was published after the signal: the finished temporary file is
    removed, an earlier output at that path stays as it was."""
    import subprocess
    import sys

    if os.environ.get("HIERARCHY_INSPECTOR_CLI"):
        pytest.skip("drives the package's main() in a Python process of its own")
    if "ufbx" in out:
        pytest.importorskip("ufbx")
    target = tmp_path / out
    target.write_bytes(b"an earlier output")
    marker = tmp_path / "writer.finished"
    result = subprocess.run(
        [sys.executable, "-c", _DRIVER, args[0], str(demo_dir / "demo.blend"), *args[1:], str(target)],
        capture_output=True,
        text=True,
        timeout=300,
        env={**os.environ, "DRIVER_MARKER": str(marker)},
    )
    assert result.returncode == 130, result.stderr
    assert marker.exists()  # the signal came while the writer ran, and it finished
    assert target.read_bytes() == b"an earlier output"
    assert sorted(p.name for p in tmp_path.iterdir()) == sorted([out, marker.name])
