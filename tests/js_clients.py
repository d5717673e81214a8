"""Real glTF clients from npm, run under node: three.js (``tests/js/three_read.mjs``) and
the Khronos glTF validator (``tests/js/validate.mjs``). Their versions are pinned in
``tests/js/package.json`` and ``package-lock.json``; ``make test`` installs them with
``npm ci`` (``tests/js/node_modules``).

Nothing here composes, samples or skins a file itself: the numbers are three.js's own
(GLTFLoader, AnimationMixer, SkinnedMesh) and the validator's own."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import tempfile
from pathlib import Path
from typing import NamedTuple

import numpy as np

JS = Path(__file__).resolve().parent / "js"
MODULES = JS / "node_modules"


def missing() -> str | None:
    """Why the clients cannot run here (None when they can)."""
    if shutil.which("node") is None:
        return "node is not installed (Debian/Ubuntu: apt-get install nodejs npm); make test needs it"
    for package in ("three", "gltf-validator"):
        if not (MODULES / package / "package.json").is_file():
            return f"{MODULES / package} is missing: run 'make test' (it runs 'npm ci' in tests/js)"
    return None


def _node(script: str, stdin: str, timeout: float = 600) -> str:
    why = missing()
    if why is not None:
        raise RuntimeError(why)
    result = subprocess.run(
        ["node", str(JS / script)], input=stdin, capture_output=True, text=True, cwd=JS, timeout=timeout
    )
    if result.returncode != 0:
        raise RuntimeError(f"node {script} failed (exit {result.returncode}):\n{result.stderr[-3000:]}")
    return result.stdout


class Validation(NamedTuple):
    path: str
    errors: int
    warnings: int
    infos: int
    hints: int
    messages: list  #: every error, "CODE pointer: message"
    codes: dict  #: issue code -> how many (errors, warnings, infos, hints)


def validate(paths) -> list[Validation]:
    """The Khronos glTF validator's report of each file (one node process for all)."""
    paths = [str(Path(p).resolve()) for p in paths]
    if not paths:
        return []
    lines = _node("validate.mjs", json.dumps(paths)).splitlines()
    return [Validation(**json.loads(line)) for line in lines if line.strip()]


class Skin(NamedTuple):
    node: int  #: the glTF node of the skinned mesh
    mesh: int
    primitive: int
    rest: np.ndarray  #: (V, 3) the primitive's POSITION attribute (mesh space, glTF axes)
    placed: np.ndarray  #: (T, V, 3) three.js's skinned vertices in world space (glTF axes)


class ThreeRead(NamedTuple):
    worlds: np.ndarray  #: (T, nodes, 4, 4) each glTF node's matrixWorld (NaN: not in the scene)
    skins: list  #: [Skin] every skinned primitive
    clips: list  #: the animation clips played


def three_read(path, times, animation: int | None = None) -> ThreeRead:
    """The file as three.js shows it at ``times (T,)`` seconds (every clip played, or
    only ``animation``): node world matrices and skinned vertices."""
    times = [float(t) for t in times]
    with tempfile.TemporaryDirectory() as folder:
        out = os.path.join(folder, "read.f64")
        request = {"path": str(Path(path).resolve()), "times": times, "out": out, "animation": animation}
        header = json.loads(_node("three_read.mjs", json.dumps(request)))
        values = np.fromfile(out, dtype="<f8")
    t, n = len(times), header["nodes"]
    worlds = values[: t * n * 16].reshape(t, n, 4, 4).transpose(0, 1, 3, 2)  # column-major -> rows
    at = t * n * 16
    skins = []
    for s in header["skins"]:
        v = s["count"]
        block = values[at : at + v * 3 * (1 + t)].reshape(1 + t, v, 3)
        skins.append(Skin(s["node"], s["mesh"], s["primitive"], block[0], block[1:]))
        at += v * 3 * (1 + t)
    return ThreeRead(worlds, skins, header["clips"])
