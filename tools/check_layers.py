"""Check that the package's own imports point one way: ui, cli -> scene -> model -> core,
and that no module imports one that imports it (directly or through others).

Every ``import`` / ``from ... import`` in the package (relative or absolute, at any
depth, inside functions and ``TYPE_CHECKING`` blocks too) is resolved to the layer it
reaches; an import from a layer above its own is reported as ``file:line: <layer>
imports <layer> (module)``. The same imports, resolved to modules (``from . import x``
to the module ``x`` where it is one), make a graph whose cycles are reported as
``cycle: a -> b (a.py:line) -> a (b.py:line)``. Blender's own modules are checked by
ruff's banned-api rule (pyproject.toml). Exit code 1 when anything points the wrong way
or goes round. Run by ``make lint`` and by tests/test_layers.py.
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


def _sources(root: Path) -> list[Path]:
    return sorted([*root.glob("*.py"), *(root / "core").rglob("*.py"), *(root / "addon").rglob("*.py")])


def import_graph(root: Path = ROOT) -> dict[str, dict[str, str]]:
    """Module -> {module it imports: where (``file:line``, the first such import)}, for
    the package's own modules; ``from package import name`` counts as an import of the
    module ``package.name`` where that is one, else of ``package``."""
    paths = {module_name(p, root): p for p in _sources(root)}
    graph: dict[str, dict[str, str]] = {}
    for name, path in paths.items():
        package = name if path.name == "__init__.py" else name.rpartition(".")[0]
        edges: dict[str, str] = {}
        for node in ast.walk(ast.parse(path.read_text(encoding="utf-8"), str(path))):
            targets: list[str] = []
            if isinstance(node, ast.ImportFrom):
                base = package.split(".")[: len(package.split(".")) - node.level + 1] if node.level else []
                target = ".".join(base + ([node.module] if node.module else [])) if node.level else node.module or ""
                targets = [f"{target}.{a.name}" if f"{target}.{a.name}" in paths else target for a in node.names]
            elif isinstance(node, ast.Import):
                targets = [a.name for a in node.names]
            for target in targets:
                if target in paths and target != name:
                    edges.setdefault(target, f"{path.relative_to(root)}:{node.lineno}")
        graph[name] = edges
    return graph


def _reachable(graph: dict, start: str) -> set[str]:
    """The modules ``start`` imports, directly or through others (itself only if it
    goes round). Iterative, no recursion."""
    seen: set[str] = set()
    todo = list(graph[start])
    while todo:
        module = todo.pop()
        if module not in seen:
            seen.add(module)
            todo.extend(graph.get(module, ()))
    return seen


def _shortest_round(graph: dict, module: str, group: set[str]) -> list[str]:
    """``[module, ..., module]``: the shortest way from ``module`` back to it through
    ``group`` (breadth first), for the message."""
    came: dict[str, str] = {}
    frontier = [module]
    while module not in came:
        following = []
        for at in frontier:
            for nxt in sorted(graph[at]):
                if nxt in group and nxt not in came:
                    came[nxt] = at
                    following.append(nxt)
        frontier = following
    path = [module]
    while len(path) == 1 or path[-1] != module:
        path.append(came[path[-1]])
    return path[::-1]


def cycles(root: Path = ROOT) -> list[str]:
    """One line per group of modules that import each other (directly or through the
    others in the group): ``cycle: a -> b (where) -> ... -> a (where)``, empty when none."""
    graph = import_graph(root)
    reach = {module: _reachable(graph, module) for module in graph}
    out = []
    done: set[str] = set()
    for module in sorted(graph):
        if module in done or module not in reach[module]:
            continue
        group = {m for m in reach[module] if module in reach[m]}
        done |= group
        path = _shortest_round(graph, module, group)
        steps = [f"{b} ({graph[a][b]})" for a, b in zip(path, path[1:], strict=False)]
        out.append(f"cycle of {len(group)} modules: {path[0]} -> " + " -> ".join(steps))
    return out


def main() -> int:
    found = violations()
    for line in found:
        print(line)
    if found:
        print(f"{len(found)} import(s) point the wrong way (allowed: ui, cli -> scene -> model -> core)")
    rounds = cycles()
    for line in rounds:
        print(line)
    if rounds:
        print(f"{len(rounds)} import cycle(s): no module may import one that imports it")
    if found or rounds:
        return 1
    print("layers: every import points one way (ui, cli -> scene -> model -> core), and none goes round")
    return 0


if __name__ == "__main__":
    sys.exit(main())
