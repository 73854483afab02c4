"""Compile Solidity files: choose a compiler, build standard JSON, cache, parse the output."""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path
from typing import Any

from secant.compile.artifacts import Compilation, from_standard_json
from secant.compile.cache import OutputCache, content_key
from secant.compile.semver import Version, format_version
from secant.compile.solc import SolcManager
from secant.compile.sources import (
    Remapping,
    SourceSet,
    collect_sources,
    find_project_root,
    project_remappings,
)

CONTRACT_OUTPUTS = (
    "abi",
    "evm.bytecode.object",
    "evm.bytecode.sourceMap",
    "evm.bytecode.linkReferences",
    "evm.deployedBytecode.object",
    "evm.deployedBytecode.sourceMap",
    "evm.deployedBytecode.linkReferences",
    "evm.deployedBytecode.immutableReferences",
    "evm.methodIdentifiers",
    "storageLayout",
)
"""Per-contract standard-JSON outputs requested (versions ignore the ones they lack)."""


@dataclass(frozen=True)
class CompileOptions:
    """How to compile: compiler choice, optimizer, EVM version, import resolution, caching."""

    solc_version: str | None = None
    optimize: bool = False
    optimize_runs: int = 200
    evm_version: str | None = None
    via_ir: bool = False
    remappings: tuple[str, ...] = ()
    include_paths: tuple[Path, ...] = ()
    base_path: Path | None = None
    use_cache: bool = True
    allow_install: bool = True


def solc_settings(version: Version, options: CompileOptions) -> dict[str, Any]:
    """Return the standard-JSON ``settings`` for ``version`` (remappings come from sources)."""
    settings: dict[str, Any] = {
        "optimizer": {"enabled": options.optimize, "runs": options.optimize_runs},
        "outputSelection": {"*": {"*": list(CONTRACT_OUTPUTS), "": ["ast"]}},
    }
    if options.evm_version:
        settings["evmVersion"] = options.evm_version
    if options.via_ir and version >= (0, 8, 13):
        settings["viaIR"] = True
    return settings


def gather(files: list[Path], options: CompileOptions) -> SourceSet:
    """Read ``files`` and their imports with the options' remappings and include paths."""
    extra = tuple(r for r in (Remapping.parse(t) for t in options.remappings) if r is not None)
    remappings = None
    if extra:
        root = options.base_path or files[0].resolve().parent
        remappings = extra + project_remappings(find_project_root(root))
    return collect_sources(files, options.base_path, remappings, options.include_paths)


def compile_sources(sources: SourceSet, manager: SolcManager,
                    options: CompileOptions) -> Compilation:
    """Compile a gathered source set with the version its pragmas (or options) call for."""
    pragma, where = sources.pragma()
    kind, version = manager.select(pragma, options.solc_version, where)
    std_input = sources.standard_input(solc_settings(version, options))
    cache = OutputCache(enabled=options.use_cache)
    key = content_key("solc", kind, format_version(version), std_input)
    output = cache.get(key)
    compiler = manager.get(kind, version)
    label = f"solc {format_version(version)}" + (" (native)" if kind == "native" else "")
    if output is None:
        output = compiler.compile(std_input, sources.search_roots())
        failed = any(e.get("severity") == "error" for e in output.get("errors", []) or [])
        if not failed:
            cache.put(key, output)
    contents = {name: unit.content for name, unit in sources.units.items()}
    paths = {name: unit.path for name, unit in sources.units.items()}
    for name in output.get("sources") or {}:
        if name not in paths:
            located = _find(name, sources)
            if located is not None:
                paths[name] = located
    return from_standard_json(output, contents, paths, sources.roots, label)


def _find(name: str, sources: SourceSet) -> Path | None:
    for root in sources.search_roots():
        path = Path(root) / name
        if path.is_file():
            return path
    return None


def compile_files(files: list[Path], options: CompileOptions | None = None,
                  manager: SolcManager | None = None) -> list[Compilation]:
    """Compile each file (with its imports) separately, sharing one compiler per version."""
    options = options or CompileOptions()
    own = manager is None
    active = manager or SolcManager(allow_install=options.allow_install)
    try:
        return [compile_sources(gather([f], options), active, options) for f in files]
    finally:
        if own:
            active.close()
