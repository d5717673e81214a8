"""The layering is enforced: imports point ui, cli -> scene -> model -> core, no module
imports one that imports it, and the Blender-free layers import no Blender module
(ruff's banned-api does that in make lint; here the same is checked without ruff, so
plain pytest fails on it too)."""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tools"))

import check_layers  # noqa: E402

BLENDER_MODULES = {"bpy", "mathutils", "gpu", "gpu_extras", "bmesh", "bpy_extras", "addon_utils"}


def test_imports_point_one_way():
    assert check_layers.violations() == []


def test_the_checker_sees_a_wrong_way_import(tmp_path):
    (tmp_path / "addon" / "model").mkdir(parents=True)
    (tmp_path / "core").mkdir()
    (tmp_path / "addon" / "model" / "bad.py").write_text("from ..scene import live\n")
    (tmp_path / "core" / "worse.py").write_text("def f():\n    from ..addon.model import nodes\n")
    assert sorted(v.split(":")[0] for v in check_layers.violations(tmp_path)) == ["addon/model/bad.py", "core/worse.py"]


def test_no_module_imports_one_that_imports_it():
    assert check_layers.cycles() == []


def test_the_checker_sees_every_kind_of_cycle(tmp_path):
    """Direct (a <-> b, one import inside a function), through a third module and a
    ``from package import module`` (c -> d -> e -> c), and one behind
    ``TYPE_CHECKING``; a function-level import of a module that does not import back
    is no cycle."""
    core = tmp_path / "core"
    (core / "sub").mkdir(parents=True)
    (core / "__init__.py").write_text("")
    (core / "a.py").write_text("from .b import f\n")
    (core / "b.py").write_text("def f():\n    from .a import g\n")
    (core / "c.py").write_text("from . import d\n")
    (core / "d.py").write_text("from .sub import e\n")
    (core / "sub" / "__init__.py").write_text("")
    (core / "sub" / "e.py").write_text("from .. import c\n")
    (core / "f.py").write_text("from typing import TYPE_CHECKING\nif TYPE_CHECKING:\n    from .g import G\n")
    (core / "g.py").write_text("from .f import F\n")
    (core / "h.py").write_text("def late():\n    from .a import f\n")
    found = check_layers.cycles(tmp_path)
    assert [line.split(":")[0] for line in found] == ["cycle of 2 modules"] * 1 + ["cycle of 3 modules"] + [
        "cycle of 2 modules"
    ]
    assert "hierarchy_inspector.core.a -> hierarchy_inspector.core.b (core/a.py:1)" in found[0]
    assert found[0].endswith("-> hierarchy_inspector.core.a (core/b.py:2)")
    assert "core/sub/e.py:1" in found[1] and "core.h" not in "".join(found)
    assert "core/f.py:3" in found[2]


def test_blender_free_layers_import_no_blender_module():
    found = []
    for folder in ("core", "addon/model"):
        for path in (ROOT / folder).rglob("*.py"):
            for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"))):
                names = [a.name for a in node.names] if isinstance(node, ast.Import) else []
                if isinstance(node, ast.ImportFrom) and not node.level:
                    names = [node.module or ""]
                found += [f"{path.relative_to(ROOT)}: {n}" for n in names if n.split(".")[0] in BLENDER_MODULES]
    assert found == []


def test_no_module_over_500_lines_and_no_folder_over_15_modules():
    sources = [p for folder in ("core", "addon") for p in (ROOT / folder).rglob("*.py")]
    long = [f"{p.relative_to(ROOT)} ({n})" for p in sources if (n := len(p.read_text().splitlines())) > 500]
    assert long == []
    crowded = {
        str(d.relative_to(ROOT)): n for d in {p.parent for p in sources} if (n := len(list(d.glob("*.py")))) > 15
    }
    assert crowded == {}


def test_every_package_folder_is_listed_for_installs():
    """pyproject.toml lists the packages by hand (the repository root is the package):
    a folder missing from the list would be missing from a non-editable install."""
    import tomllib

    listed = set(tomllib.loads((ROOT / "pyproject.toml").read_text())["tool"]["setuptools"]["packages"])
    folders = {
        ".".join(("hierarchy_inspector", *p.parent.relative_to(ROOT).parts))
        for folder in ("core", "addon")
        for p in (ROOT / folder).rglob("__init__.py")
    }
    assert folders | {"hierarchy_inspector"} == listed
