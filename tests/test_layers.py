"""Imports flow downward only (docs/architecture.md draws the same layers).

Every ``import``/``from`` of a ``secant`` module anywhere in a module (top level, inside
functions, under ``TYPE_CHECKING``) is checked: a module may import its own layer and the
layers below it, never one above. The generic engine does not import Harvey's policy.
"""

from __future__ import annotations

import ast
from pathlib import Path

PACKAGE = Path(__file__).resolve().parents[1] / "secant"

LAYERS: list[tuple[str, ...]] = [
    ("types", "errors", "files"),
    ("abi",),
    ("evm",),
    ("compile", "statetest", "symbolic"),
    ("chain",),
    ("targets",),
    ("engine",),
    ("learn",),
    ("oracles",),
    ("report",),
    ("campaign", "bench"),
    ("rerun",),
    ("cli",),
]
"""Bottom to top: the top-level modules and packages of ``secant`` in each layer."""

RANK = {name: rank for rank, names in enumerate(LAYERS) for name in names}


def module_name(path: Path) -> str:
    parts = path.relative_to(PACKAGE.parent).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


def imported(tree: ast.AST) -> list[str]:
    names = []
    for node in ast.walk(tree):
        if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
            names.append(node.module)
        elif isinstance(node, ast.Import):
            names.extend(alias.name for alias in node.names)
    return [name for name in names if name == "secant" or name.startswith("secant.")]


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 else None


def test_every_part_of_the_package_has_a_layer() -> None:
    parts = {path.stem if path.is_file() else path.name
             for path in PACKAGE.iterdir()
             if (path.suffix == ".py" and path.stem != "__init__")
             or (path.is_dir() and (path / "__init__.py").exists())}
    assert parts == set(RANK)


def test_no_import_runs_up_a_layer() -> None:
    upward = []
    for path in sorted(PACKAGE.rglob("*.py")):
        module = module_name(path)
        mine = layer_of(module)
        if mine is None:
            continue
        for target in imported(ast.parse(path.read_text())):
            theirs = layer_of(target)
            if theirs is not None and RANK[theirs] > RANK[mine]:
                upward.append(f"{module} imports {target}")
    assert upward == []


def test_the_generic_engine_does_not_import_a_policy() -> None:
    offenders = []
    for path in sorted((PACKAGE / "engine").rglob("*.py")):
        module = module_name(path)
        if module.startswith("secant.engine.harvey"):
            continue
        offenders += [f"{module} imports {target}"
                      for target in imported(ast.parse(path.read_text()))
                      if target.startswith("secant.engine.harvey")]
    assert offenders == []


def import_graph() -> dict[str, set[str]]:
    """Every module of the package and the modules of the package it imports (any import,
    ``TYPE_CHECKING`` ones included; ``from a import b`` counts ``a.b`` when it is one)."""
    modules = {module_name(path): path for path in PACKAGE.rglob("*.py")}
    graph: dict[str, set[str]] = {}
    for module, path in modules.items():
        targets: set[str] = set()
        for node in ast.walk(ast.parse(path.read_text())):
            if isinstance(node, ast.ImportFrom) and node.module and node.level == 0:
                targets.add(node.module)
                targets.update(f"{node.module}.{alias.name}" for alias in node.names)
            elif isinstance(node, ast.Import):
                targets.update(alias.name for alias in node.names)
        graph[module] = {t for t in targets if t in modules and t != module}
    return graph


def cycles(graph: dict[str, set[str]]) -> list[frozenset[str]]:
    """The strongly connected components of more than one module (Tarjan's algorithm)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[frozenset[str]] = []

    def visit(node: str) -> None:
        index[node] = low[node] = len(index)
        stack.append(node)
        for after in sorted(graph[node]):
            if after not in index:
                visit(after)
                low[node] = min(low[node], low[after])
            elif after in stack:
                low[node] = min(low[node], index[after])
        if low[node] == index[node]:
            component = []
            while True:
                top = stack.pop()
                component.append(top)
                if top == node:
                    break
            if len(component) > 1:
                found.append(frozenset(component))

    for node in sorted(graph):
        if node not in index:
            visit(node)
    return found


def test_no_import_cycle() -> None:
    assert cycles(import_graph()) == []
    # The check sees a cycle when there is one, a type-only import included.
    assert cycles({"a": {"b"}, "b": {"c"}, "c": {"a"}, "d": {"a"}}) == [
        frozenset({"a", "b", "c"})]
