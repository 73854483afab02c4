"""Hardhat build artifacts: build-info files and per-contract artifacts.

secant compiles Hardhat projects from source itself (:mod:`secant.compile.project`); these
artifacts are read instead when their build-info holds the sources as they are now.

``artifacts/build-info/*.json`` hold solc's full standard-JSON input and output (Hardhat 3
keeps the output in a sibling ``<id>.output.json``); without build-info the
per-contract ``artifacts/**/<Name>.json`` files give ABI and code only (no source maps).
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

from secant.compile.artifacts import (
    Bytecode,
    Compilation,
    CompiledContract,
    abi_of,
    from_standard_json,
)
from secant.compile.config import HARDHAT_CONFIGS as _CONFIGS
from secant.compile.errors import InputError


def artifacts_dir(path: Path) -> Path | None:
    """Return the Hardhat artifacts directory of a project root or of the directory itself."""
    if (path / "build-info").is_dir() and path.name == "artifacts":
        return path
    has_config = any((path / c).is_file() for c in _CONFIGS)
    if (path / "artifacts").is_dir() and (has_config or (path / "artifacts/build-info").is_dir()):
        return path / "artifacts"
    return None


def is_hardhat_project(path: Path) -> bool:
    """Whether ``path`` is a Hardhat project (config file or artifacts with build-info)."""
    return path.is_dir() and (artifacts_dir(path) is not None or
                              any((path / c).is_file() for c in _CONFIGS))


def _load(path: Path) -> Any:
    try:
        return json.loads(path.read_text(encoding="utf-8"))
    except (OSError, ValueError) as exc:
        raise InputError(f"cannot read {path}: {exc}",
                         "delete artifacts/ and run 'npx hardhat compile' again") from None


def _project_root(artifacts: Path) -> Path:
    return artifacts.parent if artifacts.name == "artifacts" else artifacts


def _from_build_info(path: Path, root: Path) -> Compilation | None:
    data = _load(path)
    output = data.get("output")
    if output is None:
        sibling = path.with_name(path.name.removesuffix(".json") + ".output.json")
        if sibling.is_file():
            output = _load(sibling).get("output")
    if not isinstance(output, dict) or not isinstance(data.get("input"), dict):
        return None
    inputs = data["input"].get("sources") or {}
    contents = {name: str(item.get("content", "")) for name, item in inputs.items()}
    paths = {name: root / name for name in inputs}
    roots = [name for name in sorted(inputs)
             if not name.startswith(("@", "npm/", "hardhat/")) and (root / name).is_file()]
    version = str(data.get("solcLongVersion") or data.get("solcVersion") or "")
    label = f"solc {version} (hardhat build-info)" if version else "hardhat build-info"
    return from_standard_json(output, contents, paths, roots or sorted(inputs), label, "hardhat")


def _from_artifacts(artifacts: Path) -> Compilation:
    contracts = []
    for path in sorted(artifacts.rglob("*.json")):
        if path.name.endswith(".dbg.json") or "build-info" in path.parts:
            continue
        data = _load(path)
        if not isinstance(data, dict) or "abi" not in data or "bytecode" not in data:
            continue
        contracts.append(CompiledContract(
            name=str(data.get("contractName", path.stem)),
            source=str(data.get("sourceName", "")), abi=abi_of(data["abi"], path),
            creation=Bytecode.from_json(data.get("bytecode"), "", data.get("linkReferences")),
            runtime=Bytecode.from_json(data.get("deployedBytecode"), "",
                                       data.get("deployedLinkReferences")),
        ))
    roots = tuple(sorted({c.source for c in contracts if not c.source.startswith("@")}))
    return Compilation(contracts, {}, roots, "hardhat artifacts", "hardhat")


def load_hardhat(path: Path) -> list[Compilation]:
    """One :class:`Compilation` per build-info file (or one from bare artifacts)."""
    artifacts = artifacts_dir(path.resolve())
    if artifacts is None:
        raise InputError(f"no Hardhat artifacts under {path}",
                         "run 'npx hardhat compile' in the project first")
    root = _project_root(artifacts)
    results = [c for info in sorted((artifacts / "build-info").glob("*.json"))
               if not info.name.endswith(".output.json")
               for c in [_from_build_info(info, root)] if c is not None]
    return results or [_from_artifacts(artifacts)]
