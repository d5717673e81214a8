"""Check that the package's own imports point one way: ui, cli -> scene -> model -> core.

Every ``import`` / ``from ... import`` in the package (relative or absolute, at any
depth, inside functions too) is resolved to the layer it reaches; an import from a layer
above its own is reported as ``file:line: <layer> imports <layer> (module)``. Blender's
own modules are checked by ruff's banned-api rule (pyproject.toml). Exit code 1 when
anything points the wrong way. Run by ``make lint`` and by tests/test_layers.py.
"""

from __future__ import annotations

import ast
import sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
PACKAGE = "hierarchy_inspector"
#: What each layer may import (itself included).
ALLOWED = {
    "core": {"core"},
    "model": {"model", "core"},
    "scene": {"scene", "model", "core"},
    "ui": {"ui", "scene", "model", "core"},
    "cli": {"cli", "scene", "model", "core"},
    "root": {"root", "ui", "cli", "scene", "model", "core"},
}


def layer_of(module: str) -> str:
    """``hierarchy_inspector.addon.scene.reading`` -> ``scene``; the package itself -> ``root``."""
    parts = module.split(".")[1:]
    if parts[:1] == ["core"]:
        return "core"
    if parts[:1] == ["addon"] and len(parts) > 1 and parts[1] in ALLOWED:
        return parts[1]
    return "root"


def module_name(path: Path, root: Path = ROOT) -> str:
    rel = path.relative_to(root).with_suffix("")
    parts = [PACKAGE, *rel.parts]
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported_modules(path: Path, root: Path = ROOT):
    """``(line, absolute module)`` for every import of the package in ``path``."""
    name = module_name(path, root)
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
        if isinstance(node, ast.ImportFrom):
            if node.level:
                base = package.split(".")
                base = base[: len(base) - node.level + 1]
                target = ".".join(base + ([node.module] if node.module else []))
            else:
                target = node.module or ""
            if target.startswith(PACKAGE):
                # "from .. import core" imports a module, not a name: count it as such.
                yield node.lineno, target if node.module else f"{target}.{node.names[0].name}"
        elif isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.startswith(PACKAGE):
                    yield node.lineno, alias.name


def violations(root: Path = ROOT) -> list[str]:
    out = []
    files = [*root.glob("*.py"), *(root / "core").rglob("*.py"), *(root / "addon").rglob("*.py")]
    for path in sorted(files):
        own = layer_of(module_name(path, root))
        for line, target in imported_modules(path, root):
            reached = layer_of(target)
            if reached not in ALLOWED[own]:
                out.append(f"{path.relative_to(root)}:{line}: {own} imports {reached} ({target})")
    return out


def main() -> int:
    found = violations()
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} import(s) point the wrong way (allowed: ui, cli -> scene -> model -> core)")
        return 1
    print("layers: every import points one way (ui, cli -> scene -> model -> core)")
    return 0


if __name__ == "__main__":
    sys.exit(main())
