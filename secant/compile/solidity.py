"""Compile Solidity files: choose a compiler, build standard JSON, cache, parse the output."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, fields, replace
from pathlib import Path
from typing import Any

from secant.compile.artifacts import Compilation, from_standard_json
from secant.compile.cache import OutputCache, content_key
from secant.compile.config import CompilerSettings
from secant.compile.errors import CompilationFailed, CompilerUnavailable
from secant.compile.evm_versions import evm_version_for
from secant.compile.remappings import Remapping, merge_remappings
from secant.compile.semver import Version, VersionRange, format_version
from secant.compile.solc import SolcManager
from secant.compile.sources import (
    NO_PRAGMA,
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


DEFAULT_RUNS = 200
"""Optimizer runs when neither the command line nor the project says (solc's default)."""


@dataclass(frozen=True)
class CompileOptions:
    """How to compile: compiler choice, optimizer, EVM version, import resolution, caching.

    None means "not chosen": a project's own setting (``foundry.toml``, Hardhat config)
    applies, else the default (newest version the pragmas allow, optimizer off at
    :data:`DEFAULT_RUNS` runs, no via-IR, the compiler's default EVM version).
    ``remappings`` (``[context:]prefix=target``) take precedence over the project's.
    """

    solc_version: str | None = None
    optimize: bool | None = None
    optimize_runs: int | None = None
    evm_version: str | None = None
    via_ir: bool | None = None
    remappings: tuple[str, ...] = ()
    include_paths: tuple[Path, ...] = ()
    base_path: Path | None = None
    use_cache: bool = True
    allow_install: bool = True

    def with_settings(self, settings: CompilerSettings) -> CompileOptions:
        """These options with ``settings`` filling in what they leave unchosen (None)."""
        filled = {f.name: getattr(settings, f.name) for f in fields(settings)
                  if getattr(self, f.name) is None and getattr(settings, f.name) is not None}
        return replace(self, **filled) if filled else self

    @property
    def chooses_compiler_settings(self) -> bool:
        """Whether a compiler setting or remapping was chosen here (not left to the project)."""
        return any(getattr(self, f.name) is not None for f in fields(CompilerSettings)) or \
            bool(self.remappings or self.include_paths)

    def parsed_remappings(self) -> tuple[Remapping, ...]:
        """``remappings`` parsed (malformed entries are skipped)."""
        return tuple(r for r in (Remapping.parse(t) for t in self.remappings) if r is not None)


def solc_settings(version: Version, options: CompileOptions) -> dict[str, Any]:
    """Return the standard-JSON ``settings`` for ``version`` (remappings come from sources).

    An EVM version newer than ``version`` knows is lowered to the newest it does know.
    """
    runs = DEFAULT_RUNS if options.optimize_runs is None else options.optimize_runs
    settings: dict[str, Any] = {
        "optimizer": {"enabled": bool(options.optimize), "runs": runs},
        "outputSelection": {"*": {"*": list(CONTRACT_OUTPUTS), "": ["ast"]}},
    }
    evm = evm_version_for(options.evm_version, version) if options.evm_version else None
    if evm:
        settings["evmVersion"] = evm
    if options.via_ir and version >= (0, 8, 13):
        settings["viaIR"] = True
    return settings


def gather(files: list[Path], options: CompileOptions) -> SourceSet:
    """Read ``files`` and their imports with the options' remappings and include paths.

    The options' remappings come before the project's (found from the first file).
    """
    extra = options.parsed_remappings()
    remappings = None
    if extra:
        root = options.base_path or files[0].resolve().parent
        remappings = merge_remappings(extra, project_remappings(find_project_root(root)))
    return collect_sources(files, options.base_path, remappings, options.include_paths)


def compile_sources(sources: SourceSet, manager: SolcManager, options: CompileOptions,
                    roots: Sequence[str] | None = None, origin: str = "solc",
                    what: str | None = None,
                    announce: Callable[[str], None] | None = None) -> Compilation:
    """Compile a gathered source set with the version its pragmas (or options) call for.

    ``roots`` (default: the set's roots) are the units whose contracts are the input's own;
    ``what`` names the input in error messages (default: the roots). ``announce`` is told
    the compiler chosen (e.g. ``solc 0.8.28``) before it runs (or the cache answers).
    """
    pragma, where = sources.pragma()
    try:
        return _compile_with(sources, manager, options, pragma, where, roots, origin, what,
                             announce)
    except CompilationFailed as newest:
        if where != NO_PRAGMA or options.solc_version is not None:
            raise
        # Sources that state no version were written for some compiler: old code (before
        # 0.4.10 pragmas were rare) does not parse with today's. The newest release of
        # each older line is tried in turn, newest first, and the note says which worked.
        for line in OLDER_LINES:
            try:
                compiled = _compile_with(sources, manager, options, VersionRange.parse(line),
                                         where, roots, origin, what, announce)
            except (CompilationFailed, CompilerUnavailable):
                continue  # this line refuses the code too, or cannot be installed here
            manager.notes.append(f"{what or ', '.join(sources.roots)} states no solidity "
                                 f"version and does not compile with the newest solc; "
                                 f"compiled with {compiled.compiler} (pass --solc-version "
                                 "to choose)")
            return compiled
        raise newest


OLDER_LINES = ("^0.7.0", "^0.6.0", "^0.5.0", "^0.4.0")
"""The release lines tried, newest first, for sources without a pragma that the newest
compiler refuses."""


def _compile_with(sources: SourceSet, manager: SolcManager, options: CompileOptions,
                  pragma: VersionRange, where: str, roots: Sequence[str] | None,
                  origin: str, what: str | None,
                  announce: Callable[[str], None] | None) -> Compilation:
    """``compile_sources`` with the compiler the ``pragma`` range (or options) calls for."""
    kind, version = manager.select(pragma, options.solc_version, where)
    std_input = sources.standard_input(solc_settings(version, options))
    cache = OutputCache(enabled=options.use_cache)
    key = content_key("solc", kind, format_version(version), std_input)
    output = cache.get(key)
    compiler = manager.get(kind, version)
    label = f"solc {format_version(version)}" + (" (native)" if kind == "native" else "")
    if announce is not None:
        announce(label)
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
    chosen = sources.roots if roots is None else list(roots)
    return from_standard_json(output, contents, paths, chosen, label, origin, what)


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
