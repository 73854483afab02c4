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
